import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { schemeSchema } from '../../../core/config/schema';
import { SCHEME_TYPES, SCHEMES, signedParts, verifierFor } from '../../../core/schemes';
import { githubVerifier } from '../../../core/schemes/github';
import { shopifyVerifier } from '../../../core/schemes/shopify';
import { slackVerifier } from '../../../core/schemes/slack';
import { standardWebhooksVerifier } from '../../../core/schemes/standard-webhooks';
import { stripeVerifier } from '../../../core/schemes/stripe';

describe('verifierFor', () => {
  it.each([
    ['standard-webhooks', standardWebhooksVerifier],
    ['stripe', stripeVerifier],
    ['github', githubVerifier],
    ['shopify', shopifyVerifier],
    ['slack', slackVerifier],
  ] as const)('routes a %s source to its shared verifier', (type, verifier) => {
    expect(verifierFor(schemeSchema.parse({ type }))).toBe(verifier);
  });

  it('lists exactly the nineteen schemes, each with a signer, a verifier and its signed parts', () => {
    expect(SCHEME_TYPES).toEqual([
      'standard-webhooks',
      'standard-webhooks-v1a',
      'stripe',
      'github',
      'shopify',
      'slack',
      'hmac',
      'hmac-template',
      'timestamped-hmac',
      'ed25519',
      'twilio',
      'sendgrid',
      'jwt',
      'jwks',
      'mailgun',
      'shared-secret',
      'client-state',
      'secret-digest',
      'hygraph',
    ]);
    for (const type of SCHEME_TYPES) {
      const options = { header: 'x-acme-signature' };
      expect(
        signedParts(
          schemeSchema.parse({ type, ...((SCHEMES[type].options as object) && 'header' in SCHEMES[type].options ? options : {}) }),
        ).body,
      ).toBe(
        // Mailgun signs only a token and a timestamp, not the body; Twilio the sorted form parameters, not their bytes.
        type === 'mailgun' ? false : type === 'twilio' ? 'canonical-params' : 'bytes',
      );
      expect(typeof SCHEMES[type].sign).toBe('function');
    }
  });

  it('builds an hmac verifier from the config, with its defaults (sha256, hex, no prefix)', () => {
    const scheme = schemeSchema.parse({ type: 'hmac', header: 'X-Acme-Signature' });
    const body = '{"id":"evt_3Fq8Lp"}';
    const signature = createHmac('sha256', 'acme-key-N4m7').update(body).digest('hex');
    const input = { rawBody: Buffer.from(body), headers: { 'x-acme-signature': signature }, now: 0, toleranceSeconds: 300 };
    expect(verifierFor(scheme).verify(input, { current: 'acme-key-N4m7' })).toEqual({ ok: true, secretVersion: 'current' });
  });
});
