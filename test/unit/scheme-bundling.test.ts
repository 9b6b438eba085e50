/**
 * Intake's bundle holds only the configured sources' schemes (core/schemes/bundled.ts, folded by the
 * defines of bundledDefines), where the CLI and the config schema read the static registry of all of
 * them (core/schemes/index.ts). The two lists must hold the same schemes, the defines must keep exactly
 * the configured ones, and the bundled set must verify exactly as the registry does.
 */
import path from 'node:path';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { SCHEME_TYPES, SCHEMES, signatureHeaders } from '../../core/schemes';
import { BUNDLED_SCHEMES, bundledSchemeFlag, bundledSchemes } from '../../core/schemes/bundled';
import { bundledDefines, handlerBuildOptions } from '../../lib/constructs/hookledger-function';

const ROOT = path.resolve(import.meta.dirname, '../..');
const NOW = Date.UTC(2026, 11, 1, 12, 0, 0);
const BODY = Buffer.from('{"id":"evt_01J8K7M2Q4","type":"payment.succeeded","tenant_id":"tenant_204"}');
const STRIPE_SECRET = 'whsec_stripe_scheme_bundling_test';

describe('intake bundles only the configured schemes', () => {
  it('lists the registry 19 scheme types, each the very scheme the registry holds (in the sources, all are bundled)', () => {
    expect(Object.keys(BUNDLED_SCHEMES).sort()).toEqual([...SCHEME_TYPES].sort());
    expect(SCHEME_TYPES).toHaveLength(19);
    for (const type of SCHEME_TYPES) expect(BUNDLED_SCHEMES[type], type).toBe(SCHEMES[type]);
  });

  it('defines "true" for the schemes the sources name (stripe, twilio) and "false" for the other 17', () => {
    const config = JSON.stringify({
      sources: [{ scheme: { type: 'stripe' } }, { scheme: { type: 'twilio' } }, { scheme: { type: 'stripe' } }],
    });
    const defines = bundledDefines(config);
    expect(defines.__HOOKLEDGER_CONFIG__).toBe(JSON.stringify(config));
    const flags = SCHEME_TYPES.map((type) => [type, defines[bundledSchemeFlag(type)]]);
    expect(flags.filter(([, v]) => v === '"true"').map(([t]) => t)).toEqual(['stripe', 'twilio']);
    expect(flags.filter(([, v]) => v === '"false"')).toHaveLength(17);
    expect(bundledSchemeFlag('standard-webhooks-v1a')).toBe('process.env.HOOKLEDGER_BUNDLED_SCHEME_STANDARD_WEBHOOKS_V1A');
  });

  it("a bundle of intake for a Stripe-only configuration holds stripe's module and none of the other 18", async () => {
    const config = JSON.stringify({ sources: [{ id: 'payments', scheme: { type: 'stripe' } }] });
    const result = await build({
      ...handlerBuildOptions(bundledDefines(config)),
      entryPoints: [path.join(ROOT, 'lambdas/ingest/handler.ts')],
      outdir: path.join(ROOT, 'bench', 'bundles', 'probe-schemes'),
      write: false,
      metafile: true,
      logLevel: 'silent',
    });
    // What the output holds (metafile.inputs lists every file parsed, tree-shaken or not).
    const bundled = Object.values(result.metafile.outputs).flatMap((o) =>
      Object.entries(o.inputs)
        .filter(([, i]) => i.bytesInOutput > 0)
        .map(([f]) => f),
    );
    const schemes = bundled.filter((f) => /^core\/schemes\/[\w-]+\.ts$/.test(f));
    const modules = SCHEME_TYPES.map((t) => `core/schemes/${t}.ts`);
    expect(schemes.filter((f) => modules.includes(f))).toEqual(['core/schemes/stripe.ts']);
    expect(schemes).not.toContain('core/schemes/index.ts');
  });

  it('verifies a Stripe-signed evt_01J8K7M2Q4 through the bundled set, and refuses it with one digit of the signature changed', () => {
    const schemes = bundledSchemes();
    const headers = signatureHeaders({ type: 'stripe' }, { body: BODY, secret: STRIPE_SECRET, now: NOW, messageId: 'msg_1' });
    const input = { rawBody: BODY, headers, now: NOW, toleranceSeconds: 300 };
    const verifier = schemes.verifierFor({ type: 'stripe' });
    expect(verifier.verify(input, { current: STRIPE_SECRET })).toEqual({ ok: true, secretVersion: 'current' });
    const tampered = headers['stripe-signature']!.replace(/v1=(.)/, (_m, c: string) => `v1=${c === '0' ? '1' : '0'}`);
    expect(verifier.verify({ ...input, headers: { 'stripe-signature': tampered } }, { current: STRIPE_SECRET })).toMatchObject({
      ok: false,
      code: 'signature_mismatch',
    });
    expect(schemes.bodyFormat({ type: 'twilio' })).toEqual({ format: 'form', fixed: false });
    expect(schemes.bodyFormat({ type: 'mailgun' })).toMatchObject({ fixed: true });
    expect(schemes.keyRequestFor({ type: 'stripe' }, input)).toBeUndefined();
  });

  it('names a scheme type no bundle holds, and lists the ones it does', () => {
    expect(() => bundledSchemes().verifierFor({ type: 'stripe-v2' })).toThrow(
      /scheme "stripe-v2" is not in this bundle; bundled: standard-webhooks, .*hygraph/,
    );
  });
});
