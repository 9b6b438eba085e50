import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { secretSpec } from '../../../core/schemes';
import { SigningSecretError } from '../../../core/schemes/crypto';
import { standardWebhooksKey, standardWebhooksVerifier } from '../../../core/schemes/standard-webhooks';
import type { VerifyInput, VerifyResult } from '../../../core/schemes/types';

const CURRENT = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const PREVIOUS = 'whsec_C2FVsBQIhrscChlQIMV5b5sSYspob7oD';
const MSG_ID = 'msg_2Kp7QeWd9';
const NOW = Date.UTC(2025, 0, 15, 12, 0, 0);
const NOW_S = NOW / 1000;
const TOLERANCE = 300;
const BODY = '{"type":"invoice.paid","data":{"id":"in_8Rt2Lm","amount":4200,"memo":"café €"}}';

/** Signs with the standardwebhooks library and returns the headers it would send. */
function signed(secret: string, { id = MSG_ID, at = NOW_S, body = BODY } = {}): Record<string, string> {
  const signature = new Webhook(secret).sign(id, new Date(at * 1000), body);
  return { 'webhook-id': id, 'webhook-timestamp': String(at), 'webhook-signature': signature };
}

function request(headers: Record<string, string>, rawBody = Buffer.from(BODY, 'utf8')): VerifyInput {
  return { rawBody, headers, now: NOW, toleranceSeconds: TOLERANCE };
}

const messageOf = (result: VerifyResult): string => (result.ok ? '' : result.message);

const verify = (input: VerifyInput, secrets: { current: string; previous?: string } = { current: CURRENT }) =>
  standardWebhooksVerifier.verify(input, secrets);

describe('standard-webhooks verifier', () => {
  describe('signature', () => {
    it('accepts a request signed by the standardwebhooks library with the current secret', () => {
      expect(verify(request(signed(CURRENT)))).toEqual({ ok: true, secretVersion: 'current' });
    });

    it('accepts when any v1 entry matches and skips other versions in the same header', () => {
      const good = signed(CURRENT)['webhook-signature'];
      const other = signed(PREVIOUS)['webhook-signature'];
      const headers = { ...signed(CURRENT), 'webhook-signature': `v1a,c2lnbmF0dXJl ${other} ${good}` };
      expect(verify(request(headers))).toEqual({ ok: true, secretVersion: 'current' });
    });

    it('rejects a request signed with another secret as signature_mismatch', () => {
      expect(verify(request(signed(PREVIOUS)))).toMatchObject({ ok: false, code: 'signature_mismatch' });
    });

    it('rejects a body with one byte changed', () => {
      const tampered = Buffer.from(BODY, 'utf8');
      tampered[20] = tampered[20]! ^ 0x01;
      expect(verify(request(signed(CURRENT), tampered))).toMatchObject({ ok: false, code: 'signature_mismatch' });
    });

    it('rejects a signature replayed under another webhook-id', () => {
      const headers = { ...signed(CURRENT), 'webhook-id': 'msg_9Xw4RtYh2' };
      expect(verify(request(headers))).toMatchObject({ ok: false, code: 'signature_mismatch' });
    });

    it('verifies the exact bytes, including a body that is not valid UTF-8', () => {
      const rawBody = Buffer.from([0x7b, 0xff, 0xfe, 0x7d]);
      const content = Buffer.concat([Buffer.from(`${MSG_ID}.${NOW_S}.`), rawBody]);
      const key = Buffer.from(CURRENT.slice('whsec_'.length), 'base64');
      const signature = `v1,${createHmac('sha256', key).update(content).digest('base64')}`;
      const headers = { 'webhook-id': MSG_ID, 'webhook-timestamp': String(NOW_S), 'webhook-signature': signature };
      expect(verify(request(headers, rawBody))).toEqual({ ok: true, secretVersion: 'current' });
    });
  });

  describe('secret format (exactly as the standardwebhooks library reads it)', () => {
    it('accepts a secret without the whsec_ prefix as the same base64 key', () => {
      const bare = CURRENT.slice('whsec_'.length);
      expect(verify(request(signed(bare)), { current: bare })).toEqual({ ok: true, secretVersion: 'current' });
      // The same key with or without the prefix.
      expect(verify(request(signed(CURRENT)), { current: bare })).toEqual({ ok: true, secretVersion: 'current' });
    });

    // A secret that is no key verifies nothing (401, never a 503), and the other secret still verifies;
    // `hookledger send` and `secrets rotate --value-file` read it with standardWebhooksKey, which says why.
    it('matches nothing, naming no secret, with a prefix-less secret the library refuses (not base64)', () => {
      const plain = 'hookledger-dev-secret-7Qm2';
      expect(() => new Webhook(plain)).toThrow();
      const result = verify(request(signed(CURRENT)), { current: plain });
      expect(result).toMatchObject({ ok: false, code: 'signature_mismatch' });
      expect(messageOf(result)).not.toContain('hookledger-dev');
      expect(verify(request(signed(CURRENT)), { current: plain, previous: CURRENT })).toEqual({ ok: true, secretVersion: 'previous' });
      expect(() => standardWebhooksKey(plain)).toThrow(SigningSecretError);
      expect(() => standardWebhooksKey(plain)).not.toThrow(/hookledger-dev/);
    });

    it('matches nothing, naming no secret, when the part after whsec_ is not base64', () => {
      const broken = 'whsec_not*base64!';
      const result = verify(request(signed(CURRENT)), { current: broken });
      expect(result).toMatchObject({ ok: false, code: 'signature_mismatch' });
      expect(messageOf(result)).not.toContain('not*base64');
      expect(() => standardWebhooksKey(broken)).toThrow(SigningSecretError);
    });

    it.each([
      ['unpadded, length not a multiple of 4', 'MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwQQ'],
      ['padding that is not needed', 'QUJD='],
      ['a lone trailing character, which the library ignores', 'MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw!'],
      ['unused trailing bits set', 'QR=='],
    ])('matches the library on a prefix-less secret with %s', (_, secret) => {
      expect(() => new Webhook(secret)).not.toThrow();
      expect(verify(request(signed(secret)), { current: secret })).toEqual({ ok: true, secretVersion: 'current' });
    });

    it.each([
      ['shorter than 4 characters', 'QUI'],
      ['three padding characters', 'QUJD==='],
      ['the URL-safe alphabet', 'MfKQ9r8GKYqrTwjUPD8ILPZIo2La_aSw'],
      ['a space inside', 'MfKQ9r8GKYqr TwjUPD8ILPZIo2LaLaS'],
      ['only the prefix', 'whsec_'],
      ['an empty string', ''],
    ])('refuses, as the library does, a secret with %s', (_, secret) => {
      expect(() => new Webhook(secret)).toThrow();
      expect(verify(request(signed(CURRENT)), { current: secret })).toMatchObject({ ok: false, code: 'signature_mismatch' });
      expect(secretSpec({ type: 'standard-webhooks' }).usable(secret)).toBe(false);
    });

    it('verifies a library-signed request exactly when the library accepts the secret (property)', () => {
      const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=-_ !';
      const secrets = fc
        .tuple(
          fc.constantFrom('', 'whsec_', 'whsec', 'WHSEC_'),
          fc.string({ unit: fc.constantFrom(...alphabet), minLength: 0, maxLength: 40 }),
        )
        .map(([prefix, rest]) => prefix + rest);
      fc.assert(
        fc.property(secrets, (secret) => {
          let library: Webhook | undefined;
          try {
            library = new Webhook(secret);
          } catch {
            library = undefined;
          }
          expect(secretSpec({ type: 'standard-webhooks' }).usable(secret)).toBe(library !== undefined);
          if (!library) {
            expect(verify(request(signed(CURRENT)), { current: secret })).toMatchObject({ ok: false, code: 'signature_mismatch' });
            return;
          }
          const signature = library.sign(MSG_ID, new Date(NOW), BODY);
          const headers = { ...signed(CURRENT), 'webhook-signature': signature };
          expect(verify(request(headers), { current: secret })).toEqual({ ok: true, secretVersion: 'current' });
        }),
        { seed: 20261130, numRuns: 500 },
      );
    });
  });

  describe('rotation overlap', () => {
    it('accepts a request signed with the previous secret and reports secretVersion previous', () => {
      const result = verify(request(signed(PREVIOUS)), { current: CURRENT, previous: PREVIOUS });
      expect(result).toEqual({ ok: true, secretVersion: 'previous' });
    });

    it('rejects a request signed with the previous secret once previous is gone', () => {
      expect(verify(request(signed(PREVIOUS)), { current: CURRENT })).toMatchObject({ code: 'signature_mismatch' });
    });

    it('reports current when the request is signed with the current secret during the overlap', () => {
      const result = verify(request(signed(CURRENT)), { current: CURRENT, previous: PREVIOUS });
      expect(result).toEqual({ ok: true, secretVersion: 'current' });
    });
  });

  describe('timestamp tolerance', () => {
    it.each([
      ['stale', NOW_S - TOLERANCE - 1],
      ['future', NOW_S + TOLERANCE + 1],
    ])('rejects a %s timestamp one second beyond the tolerance', (_, at) => {
      const result = verify(request(signed(CURRENT, { at })));
      expect(result).toMatchObject({ ok: false, code: 'timestamp_out_of_tolerance' });
      expect(messageOf(result)).toContain('webhook-timestamp');
    });

    it.each([
      ['past', NOW_S - TOLERANCE],
      ['future', NOW_S + TOLERANCE],
    ])('accepts a timestamp exactly at the %s edge of the tolerance', (_, at) => {
      expect(verify(request(signed(CURRENT, { at })))).toEqual({ ok: true, secretVersion: 'current' });
    });
  });

  describe('malformed input', () => {
    it.each(['webhook-id', 'webhook-timestamp', 'webhook-signature'])('returns missing_signature without %s', (name) => {
      const headers: Record<string, string> = { ...signed(CURRENT) };
      delete headers[name];
      const result = verify(request(headers));
      expect(result).toMatchObject({ ok: false, code: 'missing_signature' });
      expect(messageOf(result)).toContain(name);
    });

    it('treats a blank webhook-signature as missing', () => {
      const headers = { ...signed(CURRENT), 'webhook-signature': '  ' };
      expect(verify(request(headers))).toMatchObject({ code: 'missing_signature' });
    });

    it.each([
      ['webhook-timestamp', `${NOW_S}abc`],
      ['webhook-timestamp', '2025-01-15T12:00:00Z'],
      ['webhook-signature', 'v1'],
      ['webhook-signature', 'v1,not*base64!'],
      ['webhook-signature', 'v1a,c2lnbmF0dXJl'],
    ])('returns malformed_signature when %s is %j', (name, value) => {
      const result = verify(request({ ...signed(CURRENT), [name]: value }));
      expect(result).toMatchObject({ ok: false, code: 'malformed_signature' });
      expect(messageOf(result)).toContain(name);
    });
  });

  it('never puts the secret, a signature or the body into a failure message', () => {
    const headers = signed(PREVIOUS);
    const signature = headers['webhook-signature']!;
    const expected = signed(CURRENT)['webhook-signature']!;
    const failures = [
      verify(request(headers)),
      verify(request(signed(CURRENT, { at: NOW_S - 3600 }))),
      verify(request({ ...headers, 'webhook-signature': 'v1,not*base64!' })),
    ];
    for (const result of failures) {
      expect(result.ok).toBe(false);
      const message = messageOf(result);
      for (const leak of [CURRENT, CURRENT.slice(6), PREVIOUS.slice(6), signature.slice(3), expected.slice(3), BODY, 'in_8Rt2Lm']) {
        expect(message).not.toContain(leak);
      }
    }
  });
});
