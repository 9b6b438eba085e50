/**
 * What each function's bundle carries (esbuild's metafile, the CDK stack's bundling options): no zod
 * in any handler bundle (the configuration is validated at synth and inlined), however indirectly a
 * handler reaches core/config/schema.ts.
 */
import path from 'node:path';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { BUNDLED_CONFIG_DEFINE } from '../../core/env';
import config from '../../hookledger.config';
import { ESM_REQUIRE_BANNER } from '../../lib/constructs/hookledger-function';

const ROOT = path.resolve(import.meta.dirname, '../..');

/** The inputs esbuild put into the bundle of `entry`, as paths relative to the repository. */
async function bundledInputs(entry: string): Promise<string[]> {
  const result = await build({
    entryPoints: [path.join(ROOT, entry)],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node22',
    mainFields: ['module', 'main'],
    banner: { js: ESM_REQUIRE_BANNER },
    define: { [BUNDLED_CONFIG_DEFINE]: JSON.stringify(JSON.stringify(config)) },
    write: false,
    outfile: path.join(ROOT, 'bench', 'bundles', 'probe', 'index.mjs'),
    metafile: true,
    logLevel: 'silent',
  });
  return Object.keys(result.metafile.inputs);
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
