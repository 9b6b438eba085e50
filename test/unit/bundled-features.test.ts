/**
 * Content filters and handshakes are left out of a bundle whose configuration uses neither
 * (core/bundled-features.ts): the defines say which, esbuild folds the checks at their uses, and the
 * modules nothing reaches any longer are not in the output. In the sources every feature is in, and
 * a bundle given a configuration it was not built for says so rather than guessing.
 */
import path from 'node:path';
import { build } from 'esbuild';
import { afterEach, describe, expect, it } from 'vitest';
import { BUNDLED_FEATURE_FLAGS, FeatureNotBundledError, featuresUsed } from '../../core/bundled-features';
import { receives } from '../../core/config/routing';
import { bundledDefines, handlerBuildOptions } from '../../lib/constructs/hookledger-function';

const ROOT = path.resolve(import.meta.dirname, '../..');

const PLAIN = {
  sources: [{ id: 'platform', scheme: { type: 'standard-webhooks' } }],
  consumers: [{ id: 'billing-meter', subscribes: ['payment.*'] }],
};
const WITH_BOTH = {
  sources: [...PLAIN.sources, { id: 'slack', scheme: { type: 'slack' }, handshake: 'slack-url-verification' }],
  consumers: [...PLAIN.consumers, { id: 'big-usd', subscribes: ['payment.*'], filter: { tenantId: ['tenant_204'] } }],
};

/** The files of ours a bundle of intake holds (bytes in some output), for this configuration. */
async function intakeFiles(config: object): Promise<string[]> {
  const result = await build({
    ...handlerBuildOptions(bundledDefines(JSON.stringify(config))),
    entryPoints: [path.join(ROOT, 'lambdas/ingest/handler.ts')],
    outdir: path.join(ROOT, 'bench', 'bundles', 'probe-features'),
    write: false,
    metafile: true,
    logLevel: 'silent',
  });
  return Object.values(result.metafile.outputs).flatMap((o) =>
    Object.entries(o.inputs)
      .filter(([f, i]) => i.bytesInOutput > 0 && !f.includes('node_modules'))
      .map(([f]) => f),
  );
}

describe('features a bundle leaves out', () => {
  afterEach(() => {
    delete process.env.HOOKLEDGER_BUNDLED_FILTERS;
  });

  it('defines "false" for both when no consumer has a filter and no source a handshake, "true" when one of each does', () => {
    expect(featuresUsed(PLAIN)).toEqual({ filters: false, handshakes: false, tracing: false });
    expect(featuresUsed(WITH_BOTH)).toEqual({ filters: true, handshakes: true, tracing: false });
    expect(featuresUsed({ ...PLAIN, tracing: 'xray' }).tracing).toBe(true);
    const plain = bundledDefines(JSON.stringify(PLAIN));
    expect([plain[BUNDLED_FEATURE_FLAGS.filters], plain[BUNDLED_FEATURE_FLAGS.handshakes]]).toEqual(['"false"', '"false"']);
    const both = bundledDefines(JSON.stringify(WITH_BOTH));
    expect([both[BUNDLED_FEATURE_FLAGS.filters], both[BUNDLED_FEATURE_FLAGS.handshakes]]).toEqual(['"true"', '"true"']);
  });

  it('a bundle of intake without either holds neither core/filter.ts nor handshake.ts; with both, it holds both', async () => {
    const plain = await intakeFiles(PLAIN);
    expect(plain).toContain('core/config/routing.ts');
    expect(plain.filter((f) => f === 'core/filter.ts' || f === 'lambdas/ingest/handshake.ts')).toEqual([]);
    const both = await intakeFiles(WITH_BOTH);
    expect(both.filter((f) => f === 'core/filter.ts' || f === 'lambdas/ingest/handshake.ts').sort()).toEqual([
      'core/filter.ts',
      'lambdas/ingest/handshake.ts',
    ]);
  });

  it("in the sources a consumer's filter decides: big-usd receives tenant_204's evt_01J8K7M2Q4 and not tenant_311's", () => {
    const consumer = WITH_BOTH.consumers[1]!;
    const event = { source: 'platform', type: 'payment.succeeded', tenantId: 'tenant_204', keyId: 'key_7', body: { id: 'evt_01J8K7M2Q4' } };
    expect(receives(consumer, event)).toBe(true);
    expect(receives(consumer, { ...event, tenantId: 'tenant_311' })).toBe(false);
    expect(receives(WITH_BOTH.consumers[0]!, { ...event, tenantId: 'tenant_311' })).toBe(true);
  });

  it('a bundle built without filters, handed a consumer with one, names the feature and what to do instead of delivering to it', () => {
    process.env.HOOKLEDGER_BUNDLED_FILTERS = 'false';
    const event = { source: 'platform', type: 'payment.succeeded', tenantId: 'tenant_204', keyId: 'key_7', body: {} };
    // A consumer without a filter is unaffected.
    expect(receives(WITH_BOTH.consumers[0]!, event)).toBe(true);
    expect(() => receives(WITH_BOTH.consumers[1]!, event)).toThrow(FeatureNotBundledError);
    expect(() => receives(WITH_BOTH.consumers[1]!, event)).toThrow(
      'a consumer needs filters, but this bundle was built for a configuration without filters (core/bundled-features.ts); synthesize and deploy again with the configuration it runs',
    );
  });
});
