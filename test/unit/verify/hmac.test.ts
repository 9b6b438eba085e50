import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { hmacVerifier } from '../../../core/schemes/hmac';
import type { SigningSecrets, VerifyInput, VerifyResult } from '../../../core/schemes/types';

const CURRENT = 'partner-hook-key-R5tY8uI1';
const PREVIOUS = 'partner-hook-key-K2jH6gF4';
const NOW = Date.UTC(2025, 0, 15, 12, 0, 0);
const BODY = '{"eventId":"evt_5Hn3Kq","type":"shipment.delivered","tenant":"ten_7Wd2","note":"Zürich"}';

const sha512Base64 = hmacVerifier({ algorithm: 'sha512', encoding: 'base64', header: 'X-Partner-Signature', prefix: 'sha512=' });
const sha256Hex = hmacVerifier({ algorithm: 'sha256', encoding: 'hex', header: 'x-partner-signature', prefix: '' });

const digest = (algorithm: 'sha256' | 'sha512', encoding: 'hex' | 'base64', secret: string): string =>
  createHmac(algorithm, secret).update(BODY).digest(encoding);

function request(signature: string | undefined, rawBody = Buffer.from(BODY, 'utf8')): VerifyInput {
  const headers: Record<string, string> = signature === undefined ? {} : { 'x-partner-signature': signature };
  return { rawBody, headers, now: NOW, toleranceSeconds: 300 };
}

const current: SigningSecrets = { current: CURRENT };
const messageOf = (result: VerifyResult): string => (result.ok ? '' : result.message);

describe('hmac verifier', () => {
  describe('signature', () => {
    it('accepts sha512 base64 behind a prefix, reading the configured header lower-cased', () => {
      const signature = `sha512=${digest('sha512', 'base64', CURRENT)}`;
      expect(sha512Base64.verify(request(signature), current)).toEqual({ ok: true, secretVersion: 'current' });
    });

    it('accepts sha256 hex with no prefix', () => {
      expect(sha256Hex.verify(request(digest('sha256', 'hex', CURRENT)), current)).toEqual({ ok: true, secretVersion: 'current' });
    });

    it('rejects a body signed with another secret as signature_mismatch', () => {
      const result = sha256Hex.verify(request(digest('sha256', 'hex', PREVIOUS)), current);
      expect(result).toMatchObject({ ok: false, code: 'signature_mismatch' });
      expect(messageOf(result)).toContain('x-partner-signature');
    });

    it('rejects a body with one byte changed', () => {
      const tampered = Buffer.from(BODY, 'utf8');
      tampered[3] = tampered[3]! ^ 0x01;
      const result = sha512Base64.verify(request(`sha512=${digest('sha512', 'base64', CURRENT)}`, tampered), current);
      expect(result).toMatchObject({ ok: false, code: 'signature_mismatch' });
    });

    it('treats a sha256 digest where sha512 is configured as a mismatch, not an error', () => {
      const result = sha512Base64.verify(request(`sha512=${digest('sha256', 'base64', CURRENT)}`), current);
      expect(result).toMatchObject({ ok: false, code: 'signature_mismatch' });
    });
  });

  describe('rotation overlap', () => {
    it('accepts a body signed with the previous secret and reports secretVersion previous', () => {
      const result = sha256Hex.verify(request(digest('sha256', 'hex', PREVIOUS)), { current: CURRENT, previous: PREVIOUS });
      expect(result).toEqual({ ok: true, secretVersion: 'previous' });
    });

    it('rejects a body signed with the previous secret once previous is gone', () => {
      expect(sha256Hex.verify(request(digest('sha256', 'hex', PREVIOUS)), current)).toMatchObject({ code: 'signature_mismatch' });
    });
  });

  describe('malformed input', () => {
    it('returns missing_signature without the configured header', () => {
      const result = sha512Base64.verify(request(undefined), current);
      expect(result).toMatchObject({ ok: false, code: 'missing_signature' });
      expect(messageOf(result)).toContain('x-partner-signature');
    });

    it('returns malformed_signature when the prefix is missing', () => {
      const result = sha512Base64.verify(request(digest('sha512', 'base64', CURRENT)), current);
      expect(result).toMatchObject({ ok: false, code: 'malformed_signature' });
      expect(messageOf(result)).toContain('sha512=');
    });

    it('returns malformed_signature when the value is not in the configured encoding', () => {
      const result = sha256Hex.verify(request(digest('sha256', 'base64', CURRENT)), current);
      expect(result).toMatchObject({ ok: false, code: 'malformed_signature' });
      expect(messageOf(result)).toContain('hex');
    });
  });

  it('never puts the secret, a signature or the body into a failure message', () => {
    const wrong = digest('sha256', 'hex', PREVIOUS);
    for (const result of [sha256Hex.verify(request(wrong), current), sha256Hex.verify(request(`${wrong}zz`), current)]) {
      expect(result.ok).toBe(false);
      for (const leak of [CURRENT, PREVIOUS, wrong, digest('sha256', 'hex', CURRENT), BODY]) {
        expect(messageOf(result)).not.toContain(leak);
      }
    }
  });
});
