/**
 * The hygraph scheme (core/schemes/hygraph.ts) against the signed content computed independently:
 * HMAC-SHA256 base64 of JSON.stringify({ Body, EnvironmentName, TimeStamp }). The provider's own
 * code (@hygraph/utils) is the proof in test/providers/sdk.test.ts.
 */
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signatureHeaders, verifierFor } from '../../../core/schemes';

const scheme = { type: 'hygraph' } as const;
const NOW = Date.parse('2026-11-30T08:00:00Z');
const BODY = '{"operation":"publish","data":{"id":"ckwf4tz3c00x40b50v7m9vq3y","title":"Say \\"hi\\""}}';
const SECRET = 'rCNwyiloY3oJYYkxgpBXaleIiUv5MYlx';

const mac = (env: string, t: number, secret = SECRET, body = BODY) =>
  createHmac('sha256', secret)
    .update(JSON.stringify({ Body: body, EnvironmentName: env, TimeStamp: t }))
    .digest('base64');
const verify = (signature: string, now = NOW, body = BODY) =>
  verifierFor(scheme).verify(
    { rawBody: Buffer.from(body), headers: { 'gcms-signature': signature }, now, toleranceSeconds: 300 },
    { current: SECRET },
  );

describe('hygraph', () => {
  it('signs sign=, env=master and t= (ms) over the JSON text of body, environment and time', () => {
    expect(signatureHeaders(scheme, { body: Buffer.from(BODY), secret: SECRET, now: NOW, messageId: 'unused' })).toEqual({
      'gcms-signature': `sign=${mac('master', NOW)}, env=master, t=${NOW}`,
    });
  });

  it('accepts another environment, which is signed too', () => {
    expect(verify(`sign=${mac('staging', NOW)}, env=staging, t=${NOW}`)).toEqual({ ok: true, secretVersion: 'current' });
    expect(verify(`sign=${mac('staging', NOW)}, env=master, t=${NOW}`)).toMatchObject({ ok: false, code: 'signature_mismatch' });
  });

  it('refuses another secret, another body, another time: signature_mismatch', () => {
    expect(verify(`sign=${mac('master', NOW, 'other-secret')}, env=master, t=${NOW}`)).toMatchObject({
      ok: false,
      code: 'signature_mismatch',
    });
    expect(verify(`sign=${mac('master', NOW)}, env=master, t=${NOW}`, NOW, BODY.replace('hi', 'ho'))).toMatchObject({
      ok: false,
      code: 'signature_mismatch',
    });
    expect(verify(`sign=${mac('master', NOW)}, env=master, t=${NOW + 1}`)).toMatchObject({ ok: false, code: 'signature_mismatch' });
  });

  it('refuses a missing header, a malformed one and a stale one, each with its code', () => {
    const stale = NOW - 301_000;
    expect(
      verifierFor(scheme).verify({ rawBody: Buffer.from(BODY), headers: {}, now: NOW, toleranceSeconds: 300 }, { current: SECRET }),
    ).toMatchObject({
      ok: false,
      code: 'missing_signature',
    });
    expect(verify(`sign=${mac('master', NOW)}, t=${NOW}`)).toMatchObject({ ok: false, code: 'malformed_signature' });
    expect(verify(`sign=${mac('master', NOW)}, env=master, t=soon`)).toMatchObject({ ok: false, code: 'malformed_signature' });
    expect(verify(`sign=${mac('master', stale)}, env=master, t=${stale}`)).toMatchObject({ ok: false, code: 'timestamp_out_of_tolerance' });
  });

  it('refuses a body that is not UTF-8: otherwise two bodies differing in an invalid byte (0xff, 0xfe) share one signature', () => {
    const withByte = (byte: number) =>
      Buffer.concat([Buffer.from('{"id":"ckwf4tz3c00x40b50v7m9vq3y","note":"'), Buffer.from([byte]), Buffer.from('"}')]);
    // What a lenient decoder would sign for either body: the text with U+FFFD in place of the byte.
    const signature = `sign=${mac('master', NOW, SECRET, withByte(0xff).toString('utf8'))}, env=master, t=${NOW}`;
    expect(withByte(0xfe).toString('utf8')).toBe(withByte(0xff).toString('utf8'));
    for (const byte of [0xff, 0xfe]) {
      expect(
        verifierFor(scheme).verify(
          { rawBody: withByte(byte), headers: { 'gcms-signature': signature }, now: NOW, toleranceSeconds: 300 },
          { current: SECRET },
        ),
      ).toEqual({ ok: false, code: 'malformed_signature', message: 'the body is not UTF-8, and Hygraph signs the body as UTF-8 text' });
    }
  });
});
