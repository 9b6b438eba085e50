/**
 * Each scheme's declared signed parts (`signedParts` in its module under core/schemes) are exactly what its signature
 * covers: changing a declared header breaks the signature; changing or adding any other header
 * (the provider's delivery id, event type, hook id) does not. Attribution read from the latter can
 * be rewritten on a captured request, which is why config validation refuses it.
 */
import { createHash, generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { schemeSchema, type VerificationScheme } from '../../../core/config/schema';
import { SCHEME_TYPES, signatureHeaders, signedBody, signedParts, verifierFor } from '../../../core/schemes';
import { publicJwkOf } from '../../../core/schemes/jwks';

const NOW = Date.parse('2026-11-30T08:00:00Z');
const BODY = Buffer.from('{"id":"evt_01J8K7M2Q4","type":"payment.succeeded","tenant_id":"tenant_204","key_id":"key_42"}');
/** Twilio signs a JSON body through the bodySHA256 parameter of the URL it signs. */
const URL_SIGNED = `https://hooks.example.com/hooks/acme?bodySHA256=${createHash('sha256').update(BODY).digest('hex')}`;

const ed = generateKeyPairSync('ed25519');
const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const edRaw = (key: 'private' | 'public') =>
  (key === 'private' ? ed.privateKey.export({ format: 'der', type: 'pkcs8' }) : ed.publicKey.export({ format: 'der', type: 'spki' }))
    .subarray(-32)
    .toString('hex');

const edBase64 = (key: 'private' | 'public') => Buffer.from(edRaw(key), 'hex').toString('base64');

const jwksKey = ec.privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64');
const jwksPublic = publicJwkOf(jwksKey);
/** Microsoft Graph's notifications: the event is one item of value[]. */
const GRAPH_BODY = Buffer.from(
  '{"value":[{"id":"evt_01J8K7M2Q4","subscriptionId":"sub_1","changeType":"created","tenantId":"tenant_204","resource":"Users/1"}]}',
);

/** Per scheme: the options beside `type`, the secret it signs with and the one it verifies with. */
const CASES: Record<VerificationScheme['type'], { options?: Record<string, string>; sign: string; verify?: string; body?: Buffer }> = {
  'standard-webhooks': { sign: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' },
  'standard-webhooks-v1a': { sign: `whsk_${edBase64('private')}`, verify: `whpk_${edBase64('public')}` },
  stripe: { sign: 'whsec_test_4eC39HqLyjWDarjtT1zdp7dc' },
  github: { sign: 'gh_webhook_secret_7Hq2xV9pLm4' },
  shopify: { sign: 'shpss_9f2c1a7e5b3d' },
  slack: { sign: '8f742231b10e8888abcd99yyyzzz85a5' },
  hmac: { options: { header: 'x-acme-signature', prefix: 'sha256=' }, sign: 'acme-key-N4m7' },
  'hmac-template': {
    options: {
      header: 'x-zm-signature',
      prefix: 'v0=',
      content: 'v0:{header:x-zm-request-timestamp}:{body}',
      timestampHeader: 'x-zm-request-timestamp',
    },
    sign: 'zoom-secret-Q7',
  },
  'timestamped-hmac': { options: { header: 'mux-signature' }, sign: 'mux-secret-3Lq' },
  ed25519: { options: { header: 'x-signature-ed25519' }, sign: edRaw('private'), verify: edRaw('public') },
  twilio: { sign: 'twilio-auth-token-12345' },
  jwt: { options: { header: 'authorization', prefix: 'Bearer ' }, sign: 'vonage-signature-secret-8f2c' },
  'secret-digest': { options: { header: 'x-cld-signature', timestampHeader: 'x-cld-timestamp' }, sign: 'cloudinary-api-secret-8f2c' },
  hygraph: { sign: 'rCNwyiloY3oJYYkxgpBXaleIiUv5MYlx' },
  sendgrid: {
    sign: ec.privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64'),
    verify: ec.publicKey.export({ format: 'der', type: 'spki' }).toString('base64'),
  },
  jwks: { options: { header: 'plaid-verification' }, sign: jwksKey, verify: 'client_5f2a:secret_9c1d' },
  mailgun: { sign: 'key-3ax6xnjp29jd6fds4gc373sgvjxteol0' },
  'shared-secret': { options: { header: 'authorization' }, sign: 'okta-hook-secret-7Qm2' },
  'client-state': { sign: 'graph-client-state-4Lx9', body: GRAPH_BODY },
};
const SCHEMES = SCHEME_TYPES.map((type) => schemeSchema.parse({ type, ...CASES[type].options }));
const signingSecret = (scheme: VerificationScheme) => CASES[scheme.type].sign;
const verifyingSecret = (scheme: VerificationScheme) => CASES[scheme.type].verify ?? CASES[scheme.type].sign;
/** Headers providers send next to the signature and that tempt a mapping: none is signed by any scheme. */
const UNSIGNED_EXTRAS = [
  'x-github-delivery',
  'x-github-event',
  'x-github-hook-id',
  'x-shopify-event-id',
  'x-shopify-topic',
  'x-request-id',
];

const signInput = (scheme: VerificationScheme) => ({
  body: CASES[scheme.type].body ?? BODY,
  secret: signingSecret(scheme),
  now: NOW,
  messageId: 'msg_2Kp7QeWd9',
  url: URL_SIGNED,
});
/** The body as sent: schemes that sign inside it (Mailgun, Graph) put their signature there. */
const sentBody = (scheme: VerificationScheme) => signedBody(scheme, signInput(scheme));

function request(scheme: VerificationScheme) {
  const headers: Record<string, string> = { ...signatureHeaders(scheme, signInput(scheme)) };
  for (const name of UNSIGNED_EXTRAS) headers[name] = 'd3b07384-d9a0-4c9f-8d6e-2f1b7c0e5a11';
  return headers;
}

const verify = (scheme: VerificationScheme, headers: Record<string, string>, body = sentBody(scheme), url = URL_SIGNED) =>
  verifierFor(scheme).verify(
    { rawBody: body, headers, now: NOW, toleranceSeconds: 300, url, publicKeys: { [jwksPublic.kid]: jwksPublic } },
    { current: verifyingSecret(scheme) },
  );

/**
 * What `body: 'bytes'` promises, checked on bodies where a looser signature would be fooled: a form
 * body re-sent with its parameters in another order (Twilio signs the sorted parameters), and a body
 * whose invalid UTF-8 byte is swapped for another (a signature over the decoded text sees U+FFFD twice).
 */
const URL_FORM = 'https://hooks.example.com/hooks/acme';
const FORM = Buffer.from('AccountSid=AC3f9a2b7c&MessageSid=SM1f0e8ae6&MessageStatus=delivered');
const FORM_REORDERED = Buffer.from('MessageStatus=delivered&MessageSid=SM1f0e8ae6&AccountSid=AC3f9a2b7c');
const INVALID_UTF8 = (byte: number) =>
  Buffer.concat([Buffer.from('{"id":"evt_01J8K7M2Q4","tenant_id":"tenant_204","note":"'), Buffer.from([byte]), Buffer.from('"}')]);

/** The headers a provider sends with `body` to `url` (a form body with its content type). */
const signedFor = (scheme: VerificationScheme, body: Buffer, url: string, form = false) => ({
  ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
  ...signatureHeaders(scheme, { body, secret: signingSecret(scheme), now: NOW, messageId: 'msg_2Kp7QeWd9', url }),
});

/** Another value of the same shape: timestamps move by one second, anything else gains a character. */
const changed = (value: string) => (/^\d+$/.test(value) ? String(Number(value) + 1) : `${value}x`);

describe.each(SCHEMES)('signed parts of $type', (scheme) => {
  const parts = signedParts(scheme);
  const type = scheme.type;
  const signatureHeadersOnly = Object.keys(
    signatureHeaders(scheme, { body: BODY, secret: signingSecret(scheme), now: NOW, messageId: 'm', url: URL_SIGNED }),
  );

  it('verifies the request as signed', () => {
    expect(verify(scheme, request(scheme))).toEqual({ ok: true, secretVersion: 'current' });
  });

  const tampered = () => Buffer.from(sentBody(scheme).toString('utf8').replace('tenant_204', 'tenant_205'));

  if (parts.body === 'bytes' && parts.authentication === undefined) {
    it('declares the exact bytes signed: a form body re-sent with its parameters reordered breaks', () => {
      const headers = signedFor(scheme, FORM, URL_FORM, true);
      expect(verify(scheme, headers, FORM, URL_FORM)).toEqual({ ok: true, secretVersion: 'current' });
      expect(verify(scheme, headers, FORM_REORDERED, URL_FORM)).toMatchObject({ ok: false, code: 'signature_mismatch' });
    });

    it('declares the exact bytes signed: an invalid UTF-8 byte swapped for another (0xfe for 0xff) breaks', () => {
      const headers = signedFor(scheme, INVALID_UTF8(0xff), URL_FORM);
      const original = verify(scheme, headers, INVALID_UTF8(0xff), URL_FORM);
      // Verifiers that sign the body as text (Hygraph) refuse bytes that are not UTF-8 at all.
      expect(original.ok ? 'verified' : original.code).toBe(type === 'hygraph' ? 'malformed_signature' : 'verified');
      expect(verify(scheme, headers, INVALID_UTF8(0xfe), URL_FORM)).toMatchObject({ ok: false });
    });
  }
  if (parts.body === 'canonical-params') {
    it('declares the parameters signed, not the bytes: the same form parameters reordered verify, a changed value does not', () => {
      const headers = signedFor(scheme, FORM, URL_FORM, true);
      expect(verify(scheme, headers, FORM_REORDERED, URL_FORM)).toEqual({ ok: true, secretVersion: 'current' });
      const changedValue = Buffer.from(FORM_REORDERED.toString().replace('delivered', 'undelivered'));
      expect(verify(scheme, headers, changedValue, URL_FORM)).toMatchObject({ ok: false, code: 'signature_mismatch' });
    });
  }

  if (parts.body && parts.authentication === undefined) {
    it('breaks when the body changes by one byte', () => {
      expect(verify(scheme, request(scheme), tampered())).toMatchObject({ ok: false, code: 'signature_mismatch' });
    });
  } else if (!parts.body) {
    it('declares the body unsigned: a changed event still verifies, a changed signed field does not', () => {
      expect(verify(scheme, request(scheme), tampered())).toEqual({ ok: true, secretVersion: 'current' });
      expect(parts.bodyFields).toEqual(['signature.timestamp', 'signature.token', 'signature.signature']);
      const token = Buffer.from(sentBody(scheme).toString('utf8').replace('"token":"msg_2Kp7QeWd9"', '"token":"msg_2Kp7QeWd8"'));
      expect(token.equals(sentBody(scheme))).toBe(false);
      expect(verify(scheme, request(scheme), token)).toMatchObject({ ok: false, code: 'signature_mismatch' });
    });
  } else {
    it('declares nothing signed (a shared secret): a changed body still verifies, so it says so in its summary', () => {
      expect(verify(scheme, request(scheme), tampered())).toEqual({ ok: true, secretVersion: 'current' });
      expect(parts.summary).toMatch(/^nothing: /);
    });
  }

  it.each(parts.headers.length > 0 ? parts.headers : ['(none declared)'])('breaks when the declared header %s changes', (header) => {
    if (header === '(none declared)') {
      expect(parts.headers).toEqual([]);
      return;
    }
    const headers = request(scheme);
    expect(headers[header]).toBeDefined();
    headers[header] = changed(headers[header]!);
    expect(verify(scheme, headers)).toMatchObject({ ok: false, code: 'signature_mismatch' });
  });

  it('still verifies when any header it does not declare changes, so none of them may carry attribution', () => {
    const free = Object.keys(request(scheme)).filter((h) => !parts.headers.includes(h) && !signatureHeadersOnly.includes(h));
    expect(free.length).toBeGreaterThanOrEqual(UNSIGNED_EXTRAS.length);
    for (const header of free) {
      const headers = request(scheme);
      headers[header] = changed(headers[header]!);
      expect(verify(scheme, headers), header).toEqual({ ok: true, secretVersion: 'current' });
    }
  });
});
