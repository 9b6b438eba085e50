/**
 * What each function's bundle carries (esbuild's metafile, the CDK stack's bundling options): no zod
 * in any handler bundle (the configuration is validated at synth and inlined), however indirectly a
 * handler reaches core/config/schema.ts; and what a cold start loads (index.mjs and the chunks it
 * imports statically) leaves out the clients of rare paths, which load on first use (adapters/lazy.ts).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { FLOOR_HANDLER } from '../../bench/bundles';
import config from '../../hookledger.config';
import {
  APART_PACKAGES,
  bundledDefines,
  bundleHandler,
  coldStartOutputs,
  handlerBuildOptions,
} from '../../lib/constructs/hookledger-function';

const ROOT = path.resolve(import.meta.dirname, '../..');

/** One split build per entry, as the stack bundles (handlerBuildOptions), shared by both checks. */
const builds = new Map<string, ReturnType<typeof splitBuild>>();
const built = (entry: string) => {
  if (!builds.has(entry)) builds.set(entry, splitBuild(entry));
  return builds.get(entry)!;
};
async function splitBuild(entry: string) {
  const result = await build({
    ...handlerBuildOptions(bundledDefines(JSON.stringify(config)), entry),
    entryPoints: [path.join(ROOT, entry)],
    outdir: path.join(ROOT, 'bench', 'bundles', 'probe-split'),
    write: false,
    metafile: true,
    logLevel: 'silent',
  });
  return result.metafile;
}

/** The inputs esbuild put into the bundle of `entry` (every chunk), as paths relative to the repository. */
async function bundledInputs(entry: string): Promise<string[]> {
  return Object.keys((await built(entry)).inputs);
}

describe('handler bundles', () => {
  it.each([
    ['lambdas/ingest/handler.ts'],
    ['lambdas/fanout/handler.ts'],
    ['lambdas/reconcile/handler.ts'],
    ['lambdas/consumers/billing-meter.ts'],
  ])('%s bundles neither zod nor the config schema (a value imported from core/config/schema.ts pulls both in)', async (entry) => {
    const inputs = await bundledInputs(entry);
    expect(inputs.filter((f) => f.includes('node_modules/zod/'))).toEqual([]);
    expect(inputs).not.toContain('core/config/schema.ts');
    expect(inputs).toContain('adapters/clients.ts');
  });
});

/** The npm packages (and files of ours) a cold start loads: index.mjs and the chunks it imports statically. */
async function packagesAtColdStart(entry: string): Promise<Set<string>> {
  const files = await filesAtColdStart(entry);
  return new Set([...files].map((input) => /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(input)?.[1] ?? input));
}

describe('what a cold start loads', () => {
  const RARE = [
    '@aws-sdk/client-s3',
    '@aws-sdk/client-secrets-manager',
    '@aws-sdk/client-lambda',
    '@aws-sdk/client-dynamodb-streams',
    'adapters/verification-keys.ts',
    // The Secrets Manager port is built at cold start; its reads and the client load with the first.
    'adapters/secrets-manager-client.ts',
    'lambdas/ingest/first-request.ts',
    // Loaded with the first line printed (lambdas/shared/lambda-logger.ts); the common paths log at DEBUG.
    '@aws-lambda-powertools/logger',
    // Loaded when an error escapes a handler (flushingLogs): no map is read at cold start.
    'lambdas/shared/stack-map.ts',
  ];
  it.each([
    ['lambdas/ingest/handler.ts', ['@aws-sdk/client-dynamodb', '@aws-sdk/lib-dynamodb']],
    ['lambdas/fanout/handler.ts', ['@aws-sdk/client-dynamodb', '@aws-sdk/client-sqs']],
    ['lambdas/reconcile/handler.ts', ['@aws-sdk/client-dynamodb', '@aws-sdk/client-sqs']],
    ['lambdas/consumers/billing-meter.ts', ['@aws-sdk/client-dynamodb', '@aws-sdk/lib-dynamodb']],
  ])(
    '%s loads %j at cold start and none of S3, Secrets Manager, Lambda, Streams, the key port, the Logger or the stack mapper',
    async (entry, needed) => {
      const packages = await packagesAtColdStart(entry);
      for (const p of needed) expect(packages).toContain(p);
      expect(RARE.filter((p) => packages.has(p))).toEqual([]);
    },
  );

  it.each([
    ['lambdas/ingest/handler.ts', false],
    ['lambdas/fanout/handler.ts', false],
    ['lambdas/consumers/billing-meter.ts', false],
    ['lambdas/reconcile/handler.ts', true],
  ])(
    '%s bundles Powertools Metrics: %s (the single-line publishers write their EMF line with lambdas/shared/emf.ts)',
    async (entry, bundled) => {
      const packages = await packagesAtColdStart(entry);
      expect(packages.has('@aws-lambda-powertools/metrics')).toBe(bundled);
    },
  );

  it("intake's bundle holds none of the operators' receipt paths (adapters/receipt-admin.ts), the audit log or the requeues", async () => {
    const packages = await packagesAtColdStart('lambdas/ingest/handler.ts');
    expect(['adapters/receipt-admin.ts', 'adapters/audit-log.ts', 'adapters/requeues.ts'].filter((f) => packages.has(f))).toEqual([]);
    expect(packages).toContain('adapters/receipts.ts');
  });

  it("intake's cold start reads as many files as the floor handler's: its first-request chunk shares no module set of its own with it", async () => {
    // The floor (bench/bundles.ts): the DynamoDB document client and an HMAC, bundled the same way.
    const floor = await build({
      ...handlerBuildOptions(bundledDefines(JSON.stringify(config))),
      stdin: { contents: FLOOR_HANDLER, loader: 'ts', resolveDir: ROOT, sourcefile: 'floor-handler.ts' },
      outdir: path.join(ROOT, 'bench', 'bundles', 'probe-floor'),
      write: false,
      metafile: true,
      logLevel: 'silent',
    });
    const floorFiles = coldStartOutputs(floor.metafile).size;
    const metafile = await built('lambdas/ingest/handler.ts');
    const ingest = [...coldStartOutputs(metafile)];
    expect(floorFiles).toBe(9);
    // A module imported by both the cold start and a chunk loaded later would be a file of its own here.
    expect(ingest).toHaveLength(floorFiles);
    const holding = (input: string) => ingest.filter((f) => Object.keys(metafile.outputs[f]!.inputs).includes(input));
    // The SDK's credential chain and our shared modules load with index.mjs, as the floor's chain does.
    const index = ingest.filter((f) => f.endsWith('/index.mjs'));
    expect(holding('node_modules/@aws-sdk/credential-provider-node/dist-es/defaultProvider.js')).toEqual(index);
    expect(holding('core/errors.ts')).toEqual(index);
    expect(holding('adapters/secrets-manager.ts')).toEqual(index);
    // The invoke store sits with the SDK's shared code, as in the floor: the Logger that also imports it is bundled apart.
    expect(holding('node_modules/@aws/lambda-invoke-store/dist-es/invoke-store.js')).toEqual(
      holding('node_modules/@smithy/core/dist-es/submodules/client/middleware-stack/MiddlewareStack.js'),
    );
  });

  it("intake's Secrets Manager client, in its first-request chunk, has no credential chain of its own: the stand-in that refuses", async () => {
    const metafile = await built('lambdas/ingest/handler.ts');
    const [firstRequest, ...others] = Object.entries(metafile.outputs).filter(
      ([, o]) => o.entryPoint === 'lambdas/ingest/first-request.ts',
    );
    expect(others).toEqual([]);
    const inputs = Object.keys(firstRequest![1].inputs);
    expect(inputs).toContain('node_modules/@aws-sdk/client-secrets-manager/dist-es/SecretsManagerClient.js');
    expect(inputs).toContain('hookledger-no-default-credentials:credential-provider-node');
    expect(inputs.filter((f) => f.includes('credential-provider-node/dist-es'))).toEqual([]);
    // The consumers' bundles keep the SDK's chain for any client: the stand-in is intake's alone.
    const consumer = await built('lambdas/consumers/billing-meter.ts');
    expect(Object.keys(consumer.inputs).filter((f) => f.startsWith('hookledger-no-default-credentials:'))).toEqual([]);
  });

  it('a consumer loads no SQS code at cold start: SQS serves only retries and quarantines, loaded on the first', async () => {
    const packages = await packagesAtColdStart('lambdas/consumers/billing-meter.ts');
    expect(packages.has('@aws-sdk/client-sqs')).toBe(false);
    expect(packages).toContain('@aws-lambda-powertools/batch');
  });

  it("intake's cold start compiles the configured scheme (standard-webhooks) and its helpers, none of the other 18", async () => {
    const atStart = [...(await packagesAtColdStart('lambdas/ingest/handler.ts'))].filter((p) => p.startsWith('core/schemes/'));
    expect(atStart.filter((p) => !['core/schemes/bundled.ts', 'core/schemes/set.ts', 'core/schemes/types.ts'].includes(p)).sort()).toEqual([
      'core/schemes/crypto.ts',
      'core/schemes/standard-webhooks.ts',
    ]);
    const all = await bundledInputs('lambdas/ingest/handler.ts');
    expect(all).toContain('core/schemes/standard-webhooks.ts');
    expect(all).not.toContain('core/schemes/index.ts');
  });

  it.each([['lambdas/ingest/handler.ts'], ['lambdas/fanout/handler.ts'], ['lambdas/consumers/billing-meter.ts']])(
    '%s compiles none of the S3 client at cold start, its protocol code (XML, checksum streams) included: it is bundled apart',
    async (entry) => {
      const files = await filesAtColdStart(entry);
      const s3Only = [...files].filter((f) => /client-s3\/|protocols\/xml\/AwsRestXml|checksum\/ChecksumStream|util-waiter/.test(f));
      expect(s3Only).toEqual([]);
    },
  );
});

/** The input files a cold start loads (index.mjs and its static chunks), as the stack bundles. */
async function filesAtColdStart(entry: string): Promise<Set<string>> {
  const metafile = await built(entry);
  return new Set([...coldStartOutputs(metafile)].flatMap((f) => Object.keys(metafile.outputs[f]!.inputs)));
}

describe('the S3 client, bundled apart', () => {
  it("is loaded by adapters/payload-blobs.ts alone among the handlers' modules, with only the names bundled apart", () => {
    const importers = execFileSync('git', ['grep', '-l', '@aws-sdk/client-s3', '--', 'lambdas/*.ts', 'adapters/*.ts', 'core/*.ts'], {
      cwd: ROOT,
      encoding: 'utf8',
    })
      .trim()
      .split('\n');
    expect(importers).toEqual(['adapters/payload-blobs.ts']);
    const source = readFileSync(path.join(ROOT, 'adapters/payload-blobs.ts'), 'utf8');
    // A type import (erased) and the one `import()`; every value comes from its module, `sdk.<name>`.
    expect(source.match(/from '@aws-sdk\/client-s3'/g)).toEqual(["from '@aws-sdk/client-s3'"]);
    expect(source).toContain("import type { S3Client } from '@aws-sdk/client-s3';");
    expect(source.match(/import\('@aws-sdk\/client-s3'\)/g)).toHaveLength(1);
    const names = [...new Set([...source.matchAll(/\bsdk\.(\w+)/g)].map((m) => m[1]!))].sort();
    expect(names).toEqual([...APART_PACKAGES['@aws-sdk/client-s3']!].sort());
  });

  it('a consumer bundled as the stack bundles it imports the client apart on first use, which exports exactly those names', async () => {
    const outdir = mkdtempSync(path.join(tmpdir(), 'hookledger-apart-'));
    try {
      bundleHandler('lambdas/consumers/billing-meter.ts', outdir, bundledDefines(JSON.stringify(config)));
      const apart = path.join(outdir, 'node_modules/@aws-sdk/client-s3/index.mjs');
      // Node resolves the bare name from the bundle's files to the package written beside them.
      const fromIndex = createRequire(path.join(outdir, 'index.mjs')).resolve('@aws-sdk/client-s3');
      expect(fromIndex).toBe(apart);
      const outputs = [
        path.join(outdir, 'index.mjs'),
        ...readdirSync(path.join(outdir, 'chunks'))
          .filter((f) => f.endsWith('.mjs'))
          .map((f) => path.join(outdir, 'chunks', f)),
      ];
      const importing = outputs.filter((f) => readFileSync(f, 'utf8').includes('import("@aws-sdk/client-s3")'));
      expect(importing).toHaveLength(1);
      const mod = (await import(pathToFileURL(apart).href)) as Record<string, unknown>;
      expect(Object.keys(mod).sort()).toEqual([...APART_PACKAGES['@aws-sdk/client-s3']!].sort());
      const client = new (mod.S3Client as new (c: object) => { config: { region: () => Promise<string> } })({ region: 'eu-west-1' });
      expect(await client.config.region()).toBe('eu-west-1');
    } finally {
      rmSync(outdir, { recursive: true, force: true });
    }
  });
});

/**
 * Bundles `entry` as the stack does into a temp folder and runs `script` in a fresh node process (no
 * NODE_OPTIONS, only `env` and PATH), the bundle's index.mjs as its argument: a temp folder, so no
 * repository node_modules can stand in for a file the bundle lacks.
 */
function runShipped(
  entry: string,
  script: string,
  env: Record<string, string>,
  check: (run: { status: number | null; stdout: string; stderr: string }, outdir: string) => void,
): void {
  const outdir = mkdtempSync(path.join(tmpdir(), 'hookledger-shipped-'));
  try {
    bundleHandler(entry, outdir, bundledDefines(JSON.stringify(config)));
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script, pathToFileURL(path.join(outdir, 'index.mjs')).href], {
      encoding: 'utf8',
      timeout: 60_000,
      env: { PATH: process.env.PATH ?? '', AWS_REGION: 'us-east-1', ...env },
    });
    check(run, outdir);
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

describe('the Powertools Logger, bundled apart', () => {
  it('prints the first WARN line of a shipped intake bundle through the Logger written beside it, as JSON', () => {
    // A request to no registered source: intake answers 404 and logs a WARN, the first line it
    // prints, which loads the Logger. Nothing is called (the endpoints are a closed port anyway).
    const script =
      "const { handler } = await import(process.argv[1]); const r = await handler({ httpMethod: 'POST', path: '/hooks/', " +
      "headers: { 'content-type': 'application/json' }, body: '{}', isBase64Encoded: false, requestContext: { requestId: 'req-1' } }, " +
      "{ awsRequestId: 'req-1', getRemainingTimeInMillis: () => 5000 }); console.log('STATUS', r.statusCode);";
    const env = {
      AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE',
      AWS_SECRET_ACCESS_KEY: 'not-a-secret',
      AWS_MAX_ATTEMPTS: '1',
      AWS_ENDPOINT_URL: 'http://127.0.0.1:9',
      AWS_LAMBDA_FUNCTION_NAME: 'hookledger-ingest',
      POWERTOOLS_SERVICE_NAME: 'hookledger-ingest',
      EVENTS_TABLE: 'hookledger-events',
      STACK_NAME: 'hookledger-probe',
      PAYLOAD_BUCKET: 'hookledger-payloads',
      SOURCE_SECRETS: JSON.stringify({ platform: 'hookledger/platform' }),
      PAYLOAD_HASH_KEY_SECRET: 'hookledger/payload-hash-key',
    };
    runShipped('lambdas/ingest/handler.ts', script, env, (run, outdir) => {
      const apart = path.join(outdir, 'node_modules/@aws-lambda-powertools/logger/index.mjs');
      expect(createRequire(path.join(outdir, 'chunks', 'x.mjs')).resolve('@aws-lambda-powertools/logger')).toBe(apart);
      expect(run.status).toBe(0);
      // Powertools prints WARN and ERROR to stderr (both reach the function's log stream).
      const out = `${run.stdout}${run.stderr}`;
      const lines = out.split('\n').filter((l) => l.startsWith('{') && !l.includes('"_aws"'));
      const warn = lines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.level === 'WARN');
      expect(warn).toMatchObject({ message: 'webhook rejected', service: 'hookledger-ingest', status: 404, reason: 'unknown_source' });
      expect(out).toContain('STATUS 404');
    });
  });
});

describe('stacks of a shipped bundle, mapped on the error path', () => {
  it('an error escaping a consumer bundle run without --enable-source-maps names the source line it was thrown at', () => {
    // billing-meter's module run as audit-writer: the first invocation refuses (lambdas/runtime/lambda.ts).
    const script =
      "const { handler } = await import(process.argv[1]); try { await handler({ Records: [] }, { awsRequestId: 'req-1' }); } " +
      'catch (e) { console.log(JSON.stringify({ sourceMaps: process.sourceMapsEnabled ?? false, stack: e.stack })); }';
    const env = {
      CONSUMER_ID: 'audit-writer',
      EVENTS_TABLE: 'hookledger-events',
      LEDGER_TABLE: 'hookledger-ledger',
      PAYLOAD_BUCKET: 'hookledger-payloads',
      QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/123456789012/hookledger-audit-writer',
      DLQ_URL: 'https://sqs.us-east-1.amazonaws.com/123456789012/hookledger-audit-writer-dlq',
      PRINCIPAL: 'arn:aws:iam::123456789012:role/hookledger-audit-writer',
    };
    runShipped('lambdas/consumers/billing-meter.ts', script, env, (run, outdir) => {
      expect(run.status).toBe(0);
      const { sourceMaps, stack } = JSON.parse(run.stdout.trim().split('\n').pop()!) as { sourceMaps: boolean; stack: string };
      expect(sourceMaps).toBe(false);
      const source = readFileSync(path.join(ROOT, 'lambdas/runtime/lambda.ts'), 'utf8').split('\n');
      const thrownAt = source.findIndex((l) => l.includes('but this module is')) + 1;
      const frames = stack.split('\n');
      expect(frames[0]).toBe('ConfigurationError: CONSUMER_ID is audit-writer, but this module is billing-meter');
      expect(frames[1]).toMatch(new RegExp(`^    at build \\(lambdas/runtime/lambda\\.ts:${thrownAt}:\\d+\\)$`));
      expect(frames.some((f) => /at .*lambdas\/shared\/lambda-logger\.ts:\d+:\d+/.test(f))).toBe(true);
      // No frame of ours is left pointing into the bundle.
      expect(frames.filter((f) => f.includes(outdir))).toEqual([]);
    });
  });
});
