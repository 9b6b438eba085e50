import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { slackVerifier } from '../../../core/schemes/slack';
import type { SigningSecrets, VerifyInput, VerifyResult } from '../../../core/schemes/types';

// Slack's documented example (api.slack.com/authentication/verifying-requests-from-slack).
const DOC_SECRET = '8f742231b10e8888abcd99yyyzzz85a5';
const DOC_TIMESTAMP = 1531420618;
const DOC_BODY =
  'token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c';
const DOC_SIGNATURE = 'v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503';

const PREVIOUS = '3c9e1a7b5d2f4860a1c3e5b7d9f10a2b';
const NOW = DOC_TIMESTAMP * 1000;
const TOLERANCE = 300;

/** Slack's documented scheme: `v0=` + hex HMAC-SHA256 over `v0:<timestamp>:<body>`. */
const slackSignature = (secret: string, timestamp = DOC_TIMESTAMP, body: string = DOC_BODY): string =>
  `v0=${createHmac('sha256', secret).update(`v0:${timestamp}:${body}`).digest('hex')}`;

function request(headers: Record<string, string>, rawBody = Buffer.from(DOC_BODY, 'utf8')): VerifyInput {
  return { rawBody, headers, now: NOW, toleranceSeconds: TOLERANCE };
}

const headersFor = (signature: string, timestamp = DOC_TIMESTAMP): Record<string, string> => ({
  'x-slack-signature': signature,
  'x-slack-request-timestamp': String(timestamp),
});

const verify = (input: VerifyInput, secrets: SigningSecrets = { current: DOC_SECRET }) => slackVerifier.verify(input, secrets);
const messageOf = (result: VerifyResult): string => (result.ok ? '' : result.message);

describe('slack verifier', () => {
  describe('signature', () => {
    it("accepts Slack's documented example request", () => {
      expect(verify(request(headersFor(DOC_SIGNATURE)))).toEqual({ ok: true, secretVersion: 'current' });
    });

    it('rejects the documented request under another secret as signature_mismatch', () => {
      const result = verify(request(headersFor(DOC_SIGNATURE)), { current: PREVIOUS });
      expect(result).toMatchObject({ ok: false, code: 'signature_mismatch' });
      expect(messageOf(result)).toContain('x-slack-signature');
    });

    it('rejects the documented body with one byte changed', () => {
      const tampered = Buffer.from(DOC_BODY, 'utf8');
      tampered[0] = tampered[0]! ^ 0x01;
      expect(verify(request(headersFor(DOC_SIGNATURE), tampered))).toMatchObject({ code: 'signature_mismatch' });
    });

    it('rejects the documented signature presented with another timestamp', () => {
      const result = verify(request(headersFor(DOC_SIGNATURE, DOC_TIMESTAMP + 1)));
      expect(result).toMatchObject({ ok: false, code: 'signature_mismatch' });
    });
  });

  describe('rotation overlap', () => {
    it('accepts a request signed with the previous secret and reports secretVersion previous', () => {
      const result = verify(request(headersFor(slackSignature(PREVIOUS))), { current: DOC_SECRET, previous: PREVIOUS });
      expect(result).toEqual({ ok: true, secretVersion: 'previous' });
    });

    it('rejects a request signed with the previous secret once previous is gone', () => {
      expect(verify(request(headersFor(slackSignature(PREVIOUS))))).toMatchObject({ code: 'signature_mismatch' });
    });
  });

  describe('timestamp tolerance', () => {
    it.each([
      ['stale', DOC_TIMESTAMP - TOLERANCE - 1],
      ['future', DOC_TIMESTAMP + TOLERANCE + 1],
    ])('rejects a %s timestamp one second beyond the tolerance', (_, timestamp) => {
      const result = verify(request(headersFor(slackSignature(DOC_SECRET, timestamp), timestamp)));
      expect(result).toMatchObject({ ok: false, code: 'timestamp_out_of_tolerance' });
      expect(messageOf(result)).toContain('x-slack-request-timestamp');
    });

    it.each([
      ['past', DOC_TIMESTAMP - TOLERANCE],
      ['future', DOC_TIMESTAMP + TOLERANCE],
    ])('accepts a timestamp exactly at the %s edge of the tolerance', (_, timestamp) => {
      const result = verify(request(headersFor(slackSignature(DOC_SECRET, timestamp), timestamp)));
      expect(result).toEqual({ ok: true, secretVersion: 'current' });
    });
  });

  describe('malformed input', () => {
    it.each(['x-slack-signature', 'x-slack-request-timestamp'])('returns missing_signature without %s', (name) => {
      const headers = headersFor(DOC_SIGNATURE);
      delete headers[name];
      const result = verify(request(headers));
      expect(result).toMatchObject({ ok: false, code: 'missing_signature' });
      expect(messageOf(result)).toContain(name);
    });

    it.each([
      ['x-slack-request-timestamp', `${DOC_TIMESTAMP}.5`],
      ['x-slack-request-timestamp', 'yesterday'],
      ['x-slack-signature', DOC_SIGNATURE.slice(3)],
      ['x-slack-signature', `v1=${DOC_SIGNATURE.slice(3)}`],
      ['x-slack-signature', `v0=${'g'.repeat(64)}`],
    ])('returns malformed_signature when %s is %j', (name, value) => {
      const result = verify(request({ ...headersFor(DOC_SIGNATURE), [name]: value }));
      expect(result).toMatchObject({ ok: false, code: 'malformed_signature' });
      expect(messageOf(result)).toContain(name);
    });
  });

  it('never puts the secret, a signature or the body into a failure message', () => {
    const failures = [
      verify(request(headersFor(DOC_SIGNATURE)), { current: PREVIOUS }),
      verify(request(headersFor(slackSignature(DOC_SECRET, DOC_TIMESTAMP - 3600), DOC_TIMESTAMP - 3600))),
      verify(request(headersFor(`v1=${DOC_SIGNATURE.slice(3)}`))),
    ];
    for (const result of failures) {
      expect(result.ok).toBe(false);
      for (const leak of [
        DOC_SECRET,
        PREVIOUS,
        DOC_SIGNATURE.slice(3),
        slackSignature(PREVIOUS).slice(3),
        DOC_BODY,
        'xyzz0WbapA4vBCDEFasx0q6G',
      ]) {
        expect(messageOf(result)).not.toContain(leak);
      }
    }
  });
});
