/**
 * Intake's bundle loads only the configured sources' schemes (core/schemes/load.ts), one module
 * each, where the CLI and the config schema read the static registry of all of them
 * (core/schemes/index.ts). The two lists must hold the same schemes, and a loaded set must verify
 * exactly as the registry does.
 */
import { describe, expect, it } from 'vitest';
import { SCHEME_TYPES, SCHEMES, signatureHeaders } from '../../core/schemes';
import { loadSchemes, SCHEME_LOADERS } from '../../core/schemes/load';

const NOW = Date.UTC(2026, 11, 1, 12, 0, 0);
const BODY = Buffer.from('{"id":"evt_01J8K7M2Q4","type":"payment.succeeded","tenant_id":"tenant_204"}');
const STRIPE_SECRET = 'whsec_stripe_scheme_loading_test';

describe('scheme loading (intake loads only the configured schemes)', () => {
  it('has a loader for each of the registry scheme types, and each loads the very scheme the registry holds', async () => {
    expect(Object.keys(SCHEME_LOADERS).sort()).toEqual([...SCHEME_TYPES].sort());
    expect(SCHEME_TYPES).toHaveLength(19);
    for (const type of SCHEME_TYPES) expect(await SCHEME_LOADERS[type](), type).toBe(SCHEMES[type]);
  });

  it('verifies a Stripe-signed evt_01J8K7M2Q4 with only stripe loaded, and refuses the same bytes with one digit of the signature changed', async () => {
    const schemes = await loadSchemes(['stripe', 'stripe']);
    const headers = signatureHeaders({ type: 'stripe' }, { body: BODY, secret: STRIPE_SECRET, now: NOW, messageId: 'msg_1' });
    const input = { rawBody: BODY, headers, now: NOW, toleranceSeconds: 300 };
    const verifier = schemes.verifierFor({ type: 'stripe' });
    expect(verifier.verify(input, { current: STRIPE_SECRET })).toEqual({ ok: true, secretVersion: 'current' });
    const tampered = headers['stripe-signature']!.replace(/v1=(.)/, (_m, c: string) => `v1=${c === '0' ? '1' : '0'}`);
    expect(verifier.verify({ ...input, headers: { 'stripe-signature': tampered } }, { current: STRIPE_SECRET })).toMatchObject({
      ok: false,
      code: 'signature_mismatch',
    });
    expect(schemes.bodyFormat({ type: 'stripe' })).toEqual({ format: 'json', fixed: false });
    expect(schemes.keyRequestFor({ type: 'stripe' }, input)).toBeUndefined();
  });

  it('answers the body format of a loaded scheme as the registry does (twilio: form, mailgun: fixed)', async () => {
    const schemes = await loadSchemes(['twilio', 'mailgun']);
    expect(schemes.bodyFormat({ type: 'twilio' })).toEqual({ format: 'form', fixed: false });
    expect(schemes.bodyFormat({ type: 'mailgun' })).toMatchObject({ fixed: true });
  });

  it('names a scheme that was not loaded, and the ones that were, instead of verifying with something else', async () => {
    const schemes = await loadSchemes(['standard-webhooks']);
    expect(() => schemes.verifierFor({ type: 'github' })).toThrow('scheme "github" was not loaded; loaded: standard-webhooks');
  });

  it('refuses an unknown scheme type, listing the known ones', async () => {
    await expect(loadSchemes(['stripe', 'stripe-v2'])).rejects.toThrow(
      /unknown scheme type "stripe-v2"; one of: standard-webhooks, .*hygraph/,
    );
  });
});
