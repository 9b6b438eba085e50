import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import type { SchemeConfigInput } from '../../core/schemes';
import { signatureHeaders, verifierFor } from '../../core/schemes';

const NOW = Date.parse('2026-11-29T12:00:00Z');
const body = Buffer.from('{"id":"evt_01J8K7M2Q4","type":"payment.succeeded","tenant_id":"tenant_204","key_id":"key_42"}');
const schemes: [SchemeConfigInput, string][] = [
  [{ type: 'standard-webhooks' }, 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'],
  [{ type: 'stripe' }, 'whsec_stripe_test_5f1c'],
  [{ type: 'github' }, 'gh-secret-204'],
  [{ type: 'shopify' }, 'shpss_0f9e8d7c'],
  [{ type: 'slack' }, '8f742231b10e8888abcd99yyyzzz85a5'],
  [{ type: 'hmac', algorithm: 'sha512', encoding: 'base64', header: 'x-platform-signature', prefix: 'sha512=' }, 'generic-secret'],
];

describe('send signers', () => {
  for (const [scheme, secret] of schemes) {
    it(`signs ${scheme.type} so the ${scheme.type} verifier accepts it, and rejects it under another secret`, () => {
      const headers = signatureHeaders(scheme, { body, secret, now: NOW, messageId: 'msg_2Kp7QeWd9' });
      const input = { rawBody: body, headers, now: NOW, toleranceSeconds: 300 };
      expect(verifierFor(scheme).verify(input, { current: secret })).toEqual({ ok: true, secretVersion: 'current' });
      const other = secret.startsWith('whsec_') ? 'whsec_d3JvbmcgYnV0IHZhbGlkIGJhc2U2NA==' : `${secret}x`;
      expect(verifierFor(scheme).verify(input, { current: other })).toMatchObject({ ok: false, code: 'signature_mismatch' });
    });
  }
});

describe('send signer for standard-webhooks', () => {
  it('signs exactly as the standardwebhooks library does, with or without the whsec_ prefix', () => {
    for (const secret of ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'QUJDRA']) {
      const headers = signatureHeaders({ type: 'standard-webhooks' }, { body, secret, now: NOW, messageId: 'msg_2Kp7QeWd9' });
      expect(headers['webhook-signature']).toBe(new Webhook(secret).sign('msg_2Kp7QeWd9', new Date(NOW), body.toString('utf8')));
    }
  });

  it('refuses a secret the library refuses instead of signing with its UTF-8 bytes', () => {
    expect(() =>
      signatureHeaders({ type: 'standard-webhooks' }, { body, secret: 'not-base64-secret', now: NOW, messageId: 'msg_1' }),
    ).toThrow(/not base64/);
  });
});
