import { sign } from '@octokit/webhooks-methods';
import { describe, expect, it } from 'vitest';
import { githubVerifier } from '../../../core/schemes/github';
import type { SigningSecrets, VerifyInput, VerifyResult } from '../../../core/schemes/types';

const CURRENT = 'gh-hook-secret-Qx7pL2vN9';
const PREVIOUS = 'gh-hook-secret-Mw3kR8tZ4';
const NOW = Date.UTC(2025, 0, 15, 12, 0, 0);
const BODY = '{"action":"opened","pull_request":{"id":2148734,"title":"Réparer le café ☕"},"delivery":"d4f1a2b0-9c3e"}';

function request(signature: string | undefined, rawBody = Buffer.from(BODY, 'utf8')): VerifyInput {
  const headers: Record<string, string> = signature === undefined ? {} : { 'x-hub-signature-256': signature };
  return { rawBody, headers, now: NOW, toleranceSeconds: 300 };
}

const verify = (input: VerifyInput, secrets: SigningSecrets = { current: CURRENT }) => githubVerifier.verify(input, secrets);
const messageOf = (result: VerifyResult): string => (result.ok ? '' : result.message);

describe('github verifier', () => {
  describe('signature', () => {
    it('accepts a body signed by @octokit/webhooks-methods with the current secret', async () => {
      expect(verify(request(await sign(CURRENT, BODY)))).toEqual({ ok: true, secretVersion: 'current' });
    });

    it('accepts upper-case hex', async () => {
      const signature = await sign(CURRENT, BODY);
      expect(verify(request(`sha256=${signature.slice(7).toUpperCase()}`))).toMatchObject({ ok: true });
    });

    it('rejects a body signed with another secret as signature_mismatch', async () => {
      const result = verify(request(await sign(PREVIOUS, BODY)));
      expect(result).toMatchObject({ ok: false, code: 'signature_mismatch' });
      expect(messageOf(result)).toContain('x-hub-signature-256');
    });

    it('rejects a body with one byte changed', async () => {
      const tampered = Buffer.from(BODY, 'utf8');
      tampered[12] = tampered[12]! ^ 0x01;
      expect(verify(request(await sign(CURRENT, BODY), tampered))).toMatchObject({ code: 'signature_mismatch' });
    });

    it('treats a SHA-1 length digest behind sha256= as a mismatch, not an error', () => {
      expect(verify(request(`sha256=${'a1'.repeat(20)}`))).toMatchObject({ ok: false, code: 'signature_mismatch' });
    });
  });

  describe('rotation overlap', () => {
    it('accepts a body signed with the previous secret and reports secretVersion previous', async () => {
      const result = verify(request(await sign(PREVIOUS, BODY)), { current: CURRENT, previous: PREVIOUS });
      expect(result).toEqual({ ok: true, secretVersion: 'previous' });
    });

    it('rejects a body signed with the previous secret once previous is gone', async () => {
      expect(verify(request(await sign(PREVIOUS, BODY)))).toMatchObject({ code: 'signature_mismatch' });
    });
  });

  describe('malformed input', () => {
    it('returns missing_signature without x-hub-signature-256', () => {
      const result = verify(request(undefined));
      expect(result).toMatchObject({ ok: false, code: 'missing_signature' });
      expect(messageOf(result)).toContain('x-hub-signature-256');
    });

    it('does not fall back to the legacy SHA-1 x-hub-signature header', () => {
      const input = { ...request(undefined), headers: { 'x-hub-signature': `sha1=${'a1'.repeat(20)}` } };
      expect(verify(input)).toMatchObject({ code: 'missing_signature' });
    });

    it.each([
      ['without the sha256= prefix', 'ab'.repeat(32)],
      ['with a sha1= prefix', `sha1=${'ab'.repeat(20)}`],
      ['with non-hex after sha256=', `sha256=${'zz'.repeat(32)}`],
      ['with nothing after sha256=', 'sha256='],
    ])('returns malformed_signature for a header %s', (_, signature) => {
      const result = verify(request(signature));
      expect(result).toMatchObject({ ok: false, code: 'malformed_signature' });
      expect(messageOf(result)).toContain('x-hub-signature-256');
    });
  });

  it('never puts the secret, a signature or the body into a failure message', async () => {
    const wrong = await sign(PREVIOUS, BODY);
    const expected = await sign(CURRENT, BODY);
    for (const result of [verify(request(wrong)), verify(request(`sha256=${wrong}`))]) {
      expect(result.ok).toBe(false);
      for (const leak of [CURRENT, PREVIOUS, wrong.slice(7), expected.slice(7), BODY]) {
        expect(messageOf(result)).not.toContain(leak);
      }
    }
  });
});
