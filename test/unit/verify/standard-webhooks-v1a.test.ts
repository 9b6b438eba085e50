import { generateKeyPairSync, sign } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { signatureHeaders, verifierFor } from '../../../core/schemes';

const NOW = Date.parse('2026-11-30T08:00:00Z');
const BODY = Buffer.from('{"type":"invoice.paid","data":{"id":"inv_01J8K7M2Q4"}}');

function keyPair() {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return {
    privateKey,
    whsk: `whsk_${privateKey.export({ format: 'der', type: 'pkcs8' }).subarray(-32).toString('base64')}`,
    whpk: `whpk_${publicKey.export({ format: 'der', type: 'spki' }).subarray(-32).toString('base64')}`,
  };
}
const sender = keyPair();
const stranger = keyPair();
const scheme = { type: 'standard-webhooks-v1a' } as const;
const signed = (secret = sender.whsk, now = NOW) => signatureHeaders(scheme, { body: BODY, secret, now, messageId: 'msg_2Kp7QeWd9Lm' });
const verify = (headers: Record<string, string>, body = BODY, publicKey = sender.whpk) =>
  verifierFor(scheme).verify({ rawBody: body, headers, now: NOW, toleranceSeconds: 300 }, { current: publicKey });

describe('standard-webhooks v1a (ed25519)', () => {
  it('signs id.timestamp.body with the secret key exactly as the spec says', () => {
    const headers = signed();
    const expected = sign(null, Buffer.concat([Buffer.from(`msg_2Kp7QeWd9Lm.${NOW / 1000}.`), BODY]), sender.privateKey).toString('base64');
    expect(headers).toEqual({
      'webhook-id': 'msg_2Kp7QeWd9Lm',
      'webhook-timestamp': String(NOW / 1000),
      'webhook-signature': `v1a,${expected}`,
    });
  });

  it('accepts with the public key, also when a v1 entry comes first', () => {
    expect(verify(signed())).toEqual({ ok: true, secretVersion: 'current' });
    const v1 = new Webhook('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw').sign('msg_2Kp7QeWd9Lm', new Date(NOW), BODY.toString());
    const headers = signed();
    expect(verify({ ...headers, 'webhook-signature': `${v1} ${headers['webhook-signature']}` })).toEqual({
      ok: true,
      secretVersion: 'current',
    });
  });

  it('refuses another sender, a tampered body and a moved timestamp: signature_mismatch', () => {
    expect(verify(signed(stranger.whsk))).toMatchObject({ ok: false, code: 'signature_mismatch' });
    expect(verify(signed(), Buffer.from(BODY.toString().replace('01J8', '01J9')))).toMatchObject({ ok: false, code: 'signature_mismatch' });
    expect(verify({ ...signed(), 'webhook-timestamp': String(NOW / 1000 + 1) })).toMatchObject({ ok: false, code: 'signature_mismatch' });
  });

  it('refuses a stale signature: timestamp_out_of_tolerance', () => {
    expect(verify(signed(sender.whsk, NOW - 301_000))).toMatchObject({ ok: false, code: 'timestamp_out_of_tolerance' });
  });

  it('refuses more than 10 v1a entries before checking any (each costs a pass over the body, header size times body size): malformed_signature', () => {
    const headers = signed();
    const decoys = Array.from({ length: 10 }, () => `v1a,${Buffer.alloc(64, 7).toString('base64')}`);
    // Ten entries are checked (the real one last); eleven are refused whatever they hold.
    expect(verify({ ...headers, 'webhook-signature': [...decoys.slice(1), headers['webhook-signature']].join(' ') })).toEqual({
      ok: true,
      secretVersion: 'current',
    });
    expect(verify({ ...headers, 'webhook-signature': [...decoys, headers['webhook-signature']].join(' ') })).toMatchObject({
      ok: false,
      code: 'malformed_signature',
      message: 'header webhook-signature has more than 10 v1a entries',
    });
  });

  it('refuses a header with only v1 entries: malformed_signature', () => {
    const v1 = new Webhook('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw').sign('msg_2Kp7QeWd9Lm', new Date(NOW), BODY.toString());
    expect(verify({ ...signed(), 'webhook-signature': v1 })).toMatchObject({
      ok: false,
      code: 'malformed_signature',
      message: 'header webhook-signature has no v1a entry',
    });
  });
});
