import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { shopifyVerifier } from '../../../core/schemes/shopify';
import type { SigningSecrets, VerifyInput, VerifyResult } from '../../../core/schemes/types';

const CURRENT = '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';
const PREVIOUS = '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';
const NOW = Date.UTC(2025, 0, 15, 12, 0, 0);
const BODY = '{"id":820982911946154508,"email":"jon@example.com","note":"Crème brûlée ×2","shop":"hookledger-demo.myshopify.com"}';

/** Shopify's documented scheme: base64 of HMAC-SHA256 over the raw body, keyed with the app's client secret. */
const shopifyHmac = (secret: string, body: Buffer | string = BODY): string => createHmac('sha256', secret).update(body).digest('base64');

function request(signature: string | undefined, rawBody = Buffer.from(BODY, 'utf8')): VerifyInput {
  const headers: Record<string, string> = signature === undefined ? {} : { 'x-shopify-hmac-sha256': signature };
  return { rawBody, headers, now: NOW, toleranceSeconds: 300 };
}

const verify = (input: VerifyInput, secrets: SigningSecrets = { current: CURRENT }) => shopifyVerifier.verify(input, secrets);
const messageOf = (result: VerifyResult): string => (result.ok ? '' : result.message);

describe('shopify verifier', () => {
  describe('signature', () => {
    it('accepts a body signed with the current secret', () => {
      expect(verify(request(shopifyHmac(CURRENT)))).toEqual({ ok: true, secretVersion: 'current' });
    });

    it('accepts a published third-party vector (not from Shopify docs, which give none)', () => {
      // From SQLPage's Shopify webhook example for sqlpage.hmac: same secret, body and base64 digest.
      const body = '{"id":1234567890,"email":"customer@example.com","total_price":"123.45"}';
      const input = request('QNyObTlKbMx2qDlPF/ZOZcBqg5OgPg+2oky3zldc0Gw=', Buffer.from(body, 'utf8'));
      expect(verify(input, { current: 'test-webhook-secret' })).toEqual({ ok: true, secretVersion: 'current' });
    });

    it('rejects a body signed with another secret as signature_mismatch', () => {
      const result = verify(request(shopifyHmac(PREVIOUS)));
      expect(result).toMatchObject({ ok: false, code: 'signature_mismatch' });
      expect(messageOf(result)).toContain('x-shopify-hmac-sha256');
    });

    it('rejects a body with one byte changed', () => {
      const tampered = Buffer.from(BODY, 'utf8');
      tampered[5] = tampered[5]! ^ 0x01;
      expect(verify(request(shopifyHmac(CURRENT), tampered))).toMatchObject({ code: 'signature_mismatch' });
    });

    it('treats a hex digest in the header as a mismatch (it decodes as base64 of the wrong length)', () => {
      const hex = createHmac('sha256', CURRENT).update(BODY).digest('hex');
      expect(verify(request(hex))).toMatchObject({ ok: false, code: 'signature_mismatch' });
    });
  });

  describe('rotation overlap', () => {
    it('accepts a body signed with the previous secret and reports secretVersion previous', () => {
      const result = verify(request(shopifyHmac(PREVIOUS)), { current: CURRENT, previous: PREVIOUS });
      expect(result).toEqual({ ok: true, secretVersion: 'previous' });
    });

    it('rejects a body signed with the previous secret once previous is gone', () => {
      expect(verify(request(shopifyHmac(PREVIOUS)))).toMatchObject({ code: 'signature_mismatch' });
    });
  });

  describe('malformed input', () => {
    it('returns missing_signature without x-shopify-hmac-sha256', () => {
      const result = verify(request(undefined));
      expect(result).toMatchObject({ ok: false, code: 'missing_signature' });
      expect(messageOf(result)).toContain('x-shopify-hmac-sha256');
    });

    it.each([
      ['characters outside base64', 'not*base64!'],
      ['missing padding', shopifyHmac(CURRENT).replace(/=+$/, '')],
    ])('returns malformed_signature for a header with %s', (_, signature) => {
      const result = verify(request(signature));
      expect(result).toMatchObject({ ok: false, code: 'malformed_signature' });
      expect(messageOf(result)).toContain('x-shopify-hmac-sha256');
    });
  });

  it('never puts the secret, a signature or the body into a failure message', () => {
    const wrong = shopifyHmac(PREVIOUS);
    for (const result of [verify(request(wrong)), verify(request(`${wrong}!`))]) {
      expect(result.ok).toBe(false);
      for (const leak of [CURRENT, PREVIOUS, wrong, shopifyHmac(CURRENT), BODY]) {
        expect(messageOf(result)).not.toContain(leak);
      }
    }
  });
});
