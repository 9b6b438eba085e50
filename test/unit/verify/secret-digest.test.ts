/**
 * The secret-digest scheme (core/schemes/secret-digest.ts): a plain hash of the signed content with
 * the secret appended (Cloudinary's `sha1(body + timestamp + api_secret)`), checked here against the
 * digest computed independently with node:crypto; the provider's own code is the proof in
 * test/providers/sdk.test.ts.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signatureHeaders, verifierFor } from '../../../core/schemes';

const scheme = { type: 'secret-digest', header: 'x-cld-signature', timestampHeader: 'x-cld-timestamp' } as const;
const NOW = Date.parse('2026-11-30T08:00:00Z');
const BODY = Buffer.from('{"notification_type":"upload","request_id":"799c8bd1d7cc1f0c"}');
const SECRET = 'cloudinary-api-secret-8f2c';
const PREVIOUS = 'cloudinary-api-secret-0f9e';
const TS = String(NOW / 1000);

const sha1 = (text: string) => createHash('sha1').update(text).digest('hex');
const verify = (headers: Record<string, string>, secrets: { current: string; previous?: string } = { current: SECRET }, body = BODY) =>
  verifierFor(scheme).verify({ rawBody: body, headers, now: NOW, toleranceSeconds: 300 }, secrets);

describe('secret-digest', () => {
  it('signs sha1(body + timestamp + secret) in hex, the timestamp in its header', () => {
    expect(signatureHeaders(scheme, { body: BODY, secret: SECRET, now: NOW, messageId: 'unused' })).toEqual({
      'x-cld-timestamp': TS,
      'x-cld-signature': sha1(`${BODY.toString()}${TS}${SECRET}`),
    });
  });

  it('accepts the current secret, then the previous one during a rotation', () => {
    expect(verify({ 'x-cld-timestamp': TS, 'x-cld-signature': sha1(`${BODY}${TS}${SECRET}`) })).toEqual({
      ok: true,
      secretVersion: 'current',
    });
    expect(
      verify({ 'x-cld-timestamp': TS, 'x-cld-signature': sha1(`${BODY}${TS}${PREVIOUS}`) }, { current: SECRET, previous: PREVIOUS }),
    ).toEqual({
      ok: true,
      secretVersion: 'previous',
    });
  });

  it('refuses a digest of the body alone, of another timestamp, or under another secret: signature_mismatch', () => {
    for (const signature of [sha1(`${BODY}${SECRET}`), sha1(`${BODY}${NOW / 1000 + 1}${SECRET}`), sha1(`${BODY}${TS}${PREVIOUS}`)]) {
      expect(verify({ 'x-cld-timestamp': TS, 'x-cld-signature': signature })).toMatchObject({ ok: false, code: 'signature_mismatch' });
    }
  });

  it('refuses a missing signature, a non-hex one, a missing timestamp, and a stale one, each with its code', () => {
    const good = sha1(`${BODY}${TS}${SECRET}`);
    expect(verify({ 'x-cld-timestamp': TS })).toMatchObject({ ok: false, code: 'missing_signature' });
    expect(verify({ 'x-cld-timestamp': TS, 'x-cld-signature': 'not-hex' })).toMatchObject({ ok: false, code: 'malformed_signature' });
    expect(verify({ 'x-cld-signature': good })).toMatchObject({ ok: false, code: 'missing_signature' });
    const staleTs = String(NOW / 1000 - 301);
    expect(verify({ 'x-cld-timestamp': staleTs, 'x-cld-signature': sha1(`${BODY}${staleTs}${SECRET}`) })).toMatchObject({
      ok: false,
      code: 'timestamp_out_of_tolerance',
    });
  });
});
