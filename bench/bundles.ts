/**
 * Section 5: each Lambda bundled as lib/constructs/hookledger-function.ts has CDK bundle it (esbuild,
 * ESM, minified, keep names, node22 target, createRequire banner, linked source map without sources
 * content, AWS SDK inside), its size, and the median module load time over fresh `node` processes run
 * with the Lambda's NODE_OPTIONS (--enable-source-maps) and dummy environment values, timed in the
 * child around `await import(bundle)`. An empty handler bundled the same way is the baseline.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { type BuildOptions, build } from 'esbuild';
import { workerEntry } from '../core/config/consumers';
import type { HookledgerConfig } from '../core/config/schema';
import { PROJECT_ROOT as ROOT } from '../core/paths';
import { median } from './stats';

export const BUNDLE_DIR = path.join(ROOT, 'bench', 'bundles');

export interface BundleResult {
  readonly entry: string;
  /** index.mjs (the source map beside it is not counted). */
  readonly bytes: number;
  readonly mapBytes: number;
  /** Median of `loads` fresh processes. */
  readonly loadMs: number;
  readonly loadRuns: number[];
}

/** The bundling options HookledgerFunction gives NodejsFunction, as esbuild options. */
async function cdkBundlingOptions(): Promise<BuildOptions> {
  const { ESM_REQUIRE_BANNER } = await import('../lib/constructs/hookledger-function');
  const { BUNDLED_CONFIG_DEFINE } = await import('../core/env');
  const { default: config } = await import('../hookledger.config');
  return {
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node22',
    mainFields: ['module', 'main'],
    banner: { js: ESM_REQUIRE_BANNER },
    minify: true,
    keepNames: true,
    sourcemap: true,
    sourcesContent: false,
    external: [],
    // As HookledgerStack does: the validated configuration inlined, so no zod in the bundle.
    define: { [BUNDLED_CONFIG_DEFINE]: JSON.stringify(JSON.stringify(config)) },
    logLevel: 'warning',
  };
}

/** Dummy values for every variable the handlers read at cold start (core/env.ts), plus Lambda's own. */
function lambdaEnv(name: string, consumerId?: string): Record<string, string> {
  const queue = (id: string) => `https://sqs.us-east-1.amazonaws.com/123456789012/hookledger-${id}`;
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    NODE_OPTIONS: '--enable-source-maps',
    AWS_REGION: 'us-east-1',
    AWS_LAMBDA_FUNCTION_NAME: `hookledger-${name}`,
    AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '256',
    POWERTOOLS_SERVICE_NAME: `hookledger-${name}`,
    POWERTOOLS_METRICS_NAMESPACE: 'Hookledger',
    EVENTS_TABLE: 'hookledger-events',
    LEDGER_TABLE: 'hookledger-ledger',
    SOURCE_SECRETS: JSON.stringify({ platform: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:hookledger/platform' }),
    PAYLOAD_HASH_KEY_SECRET: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:hookledger/payload-hash-key',
    PAYLOAD_BUCKET: 'hookledger-payloads-123456789012',
    QUEUE_URLS: JSON.stringify({
      'billing-meter': queue('billing-meter'),
      'audit-writer': queue('audit-writer'),
      'risk-evaluator': queue('risk-evaluator'),
    }),
    STACK_NAME: 'hookledger',
    // The reconciler as deployed with repair on (the default): its Lambda and SQS clients load too.
    REPAIR_MAX_PER_RUN: '500',
    QUEUE_ARNS: JSON.stringify({ 'billing-meter': 'arn:aws:sqs:us-east-1:123456789012:hookledger-billing-meter' }),
    FANOUT_FAILURE_QUEUE_URL: queue('fanout-failures'),
    CONSUMER_ID: consumerId ?? '',
    QUEUE_URL: queue(consumerId ?? 'none'),
    DLQ_URL: queue(`${consumerId ?? 'none'}-dlq`),
    PRINCIPAL: `arn:aws:iam::123456789012:role/hookledger-${consumerId ?? 'none'}`,
  };
}

const LOAD_SCRIPT =
  'const t0 = performance.now(); const m = await import(process.argv[1]); const ms = performance.now() - t0;' +
  "if (typeof m.handler !== 'function') throw new Error('no handler export'); console.log(ms);";

function loadTime(file: string, env: Record<string, string>, runs: number): number[] {
  return Array.from({ length: runs }, () => {
    const out = spawnSync(process.execPath, ['--input-type=module', '-e', LOAD_SCRIPT, pathToFileURL(file).href], {
      env,
      encoding: 'utf8',
      timeout: 30_000,
    });
    if (out.status !== 0) throw new Error(`loading ${file} failed: ${out.stderr.slice(-1500)}`);
    return Number(out.stdout.trim());
  });
}

export async function measureBundles(
  config: HookledgerConfig,
  runs: number,
): Promise<{ bundles: Record<string, BundleResult>; emptyBundle: BundleResult }> {
  rmSync(BUNDLE_DIR, { recursive: true, force: true });
  const options = await cdkBundlingOptions();
  const targets: { name: string; entry: string; consumerId?: string }[] = [
    { name: 'ingest', entry: 'lambdas/ingest/handler.ts' },
    { name: 'fanout', entry: 'lambdas/fanout/handler.ts' },
    { name: 'reconcile', entry: 'lambdas/reconcile/handler.ts' },
    ...config.consumers.map((c) => ({ name: c.id, entry: workerEntry(c), consumerId: c.id })),
  ];
  const measure = async (name: string, entry: string, buildOptions: BuildOptions, consumerId?: string): Promise<BundleResult> => {
    const outfile = path.join(BUNDLE_DIR, name, 'index.mjs');
    mkdirSync(path.dirname(outfile), { recursive: true });
    await build({ ...options, ...buildOptions, outfile });
    const loadRuns = loadTime(outfile, lambdaEnv(name, consumerId), runs);
    return { entry, bytes: statSync(outfile).size, mapBytes: statSync(`${outfile}.map`).size, loadMs: median(loadRuns), loadRuns };
  };
  const bundles: Record<string, BundleResult> = {};
  for (const t of targets) bundles[t.name] = await measure(t.name, t.entry, { entryPoints: [path.join(ROOT, t.entry)] }, t.consumerId);
  const emptyBundle = await measure('empty', '(stdin) export const handler = async () => ({})', {
    stdin: { contents: 'export const handler = async () => ({});', loader: 'ts', resolveDir: ROOT, sourcefile: 'empty-handler.ts' },
  });
  return { bundles, emptyBundle };
}
