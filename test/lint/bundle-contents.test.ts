/**
 * What each function's bundle carries (esbuild's metafile, the CDK stack's bundling options): no zod
 * in any handler bundle (the configuration is validated at synth and inlined), however indirectly a
 * handler reaches core/config/schema.ts; and what a cold start loads (index.mjs and the chunks it
 * imports statically) leaves out the clients of rare paths, which load on first use (adapters/lazy.ts).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
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
    ...handlerBuildOptions(bundledDefines(JSON.stringify(config))),
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
    'adapters/secrets-manager.ts',
    'adapters/payload-blobs.ts',
    // Loaded with the first line printed (lambdas/shared/lambda-logger.ts); the common paths log at DEBUG.
    '@aws-lambda-powertools/logger',
  ];
  it.each([
    ['lambdas/ingest/handler.ts', ['@aws-sdk/client-dynamodb', '@aws-sdk/lib-dynamodb']],
    ['lambdas/fanout/handler.ts', ['@aws-sdk/client-dynamodb', '@aws-sdk/client-sqs']],
    ['lambdas/reconcile/handler.ts', ['@aws-sdk/client-dynamodb', '@aws-sdk/client-sqs']],
    ['lambdas/consumers/billing-meter.ts', ['@aws-sdk/client-dynamodb', '@aws-sdk/lib-dynamodb']],
  ])('%s loads %j at cold start and none of S3, Secrets Manager, Lambda, Streams, the key port or the Logger', async (entry, needed) => {
    const packages = await packagesAtColdStart(entry);
    for (const p of needed) expect(packages).toContain(p);
    expect(RARE.filter((p) => packages.has(p))).toEqual([]);
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
  it("is imported by adapters/payload-blobs.ts alone among the handlers' modules, with only the names bundled apart", () => {
    const importers = execFileSync('git', ['grep', '-l', "from '@aws-sdk/client-s3'", '--', 'lambdas', 'adapters', 'core'], {
      cwd: ROOT,
      encoding: 'utf8',
    })
      .trim()
      .split('\n');
    expect(importers).toEqual(['adapters/payload-blobs.ts']);
    const source = readFileSync(path.join(ROOT, 'adapters/payload-blobs.ts'), 'utf8');
    const names = /import \{([^}]*)\} from '@aws-sdk\/client-s3'/
      .exec(source)![1]!
      .split(',')
      .map((n) => n.trim())
      .filter((n) => n !== '' && !n.startsWith('type '));
    expect(names.filter((n) => !APART_PACKAGES['@aws-sdk/client-s3']!.includes(n))).toEqual([]);
  });

  it('a consumer bundled as the stack bundles it links its bucket chunk to the client apart and builds the bucket adapter', async () => {
    const outdir = mkdtempSync(path.join(tmpdir(), 'hookledger-apart-'));
    try {
      bundleHandler('lambdas/consumers/billing-meter.ts', outdir, bundledDefines(JSON.stringify(config)));
      expect(existsSync(path.join(outdir, 'node_modules/@aws-sdk/client-s3/index.mjs'))).toBe(true);
      const chunk = readdirSync(path.join(outdir, 'chunks')).find((f) => f.startsWith('payload-blobs-') && f.endsWith('.mjs'))!;
      const mod = (await import(pathToFileURL(path.join(outdir, 'chunks', chunk)).href)) as {
        s3PayloadBlobs: (bucket: string) => { get: unknown; put: unknown };
      };
      const blobs = mod.s3PayloadBlobs('hookledger-payloads-204');
      expect([typeof blobs.get, typeof blobs.put, blobs.constructor.name]).toEqual(['function', 'function', 'S3PayloadBlobs']);
    } finally {
      rmSync(outdir, { recursive: true, force: true });
    }
  });
});
