/**
 * What a scheme claims its signature covers (`signedParts`, core/schemes/types.ts), and the config
 * refusals that rest on the claim. Each attack is shown through the real verifier first (why the refusal matters),
 * then refused by the config schema, naming the source, the field and what to use instead.
 */
import { createHash, generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { defineConfig, type HookledgerConfigInput } from '../../core/config/schema';
import { type SchemeConfigInput, signatureHeaders, signedParts, verifierFor } from '../../core/schemes';
import { twilioSignature } from '../support/twilio';

const NOW = Date.parse('2026-11-30T08:00:00Z');
const CONSUMERS: HookledgerConfigInput['consumers'] = [
  { id: 'billing', subscribes: ['*'], fields: ['MessageSid'], entry: 'lambdas/consumers/billing.ts' },
];
const config = (source: Record<string, unknown>): HookledgerConfigInput => ({
  sources: [source as HookledgerConfigInput['sources'][number]],
  consumers: CONSUMERS,
});

describe('twilio signs the sorted form parameters, not the body bytes', () => {
  const TOKEN = '9f2c1a7e5b3d9c4e6f0a8b7c6d5e4f3a';
  const URL = 'https://hooks.example.com/hooks/twilio-sms';
  const form = {
    AccountSid: 'AC3f9a2b7c1d8e4f6a0b5c2d9e7f1a3b4c',
    Body: 'Your code is 482913',
    MessageSid: 'SM1f0e8ae6ade43cb3c0ce4525424e404f',
    MessageStatus: 'delivered',
    To: '+14155550199',
  };
  const sent = new URLSearchParams(form).toString();
  // The same parameters, last first, with the spaces written as %20 instead of +.
  const replayed = Object.entries(form)
    .reverse()
    .map(([name, value]) => `${name}=${encodeURIComponent(value)}`)
    .join('&');
  const verify = (body: string) =>
    verifierFor({ type: 'twilio' }).verify(
      {
        rawBody: Buffer.from(body),
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          'x-twilio-signature': twilioSignature(TOKEN, URL, form),
        },
        now: NOW,
        toleranceSeconds: 300,
        url: URL,
      },
      { current: TOKEN },
    );

  it('verifies a captured request re-sent with its parameters reordered and re-encoded: other bytes, same signature', () => {
    const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
    expect(replayed).toBe(
      'To=%2B14155550199&MessageStatus=delivered&MessageSid=SM1f0e8ae6ade43cb3c0ce4525424e404f&Body=Your%20code%20is%20482913&AccountSid=AC3f9a2b7c1d8e4f6a0b5c2d9e7f1a3b4c',
    );
    expect(sha256(replayed)).not.toBe(sha256(sent));
    expect(verify(sent)).toEqual({ ok: true, secretVersion: 'current' });
    expect(verify(replayed)).toEqual({ ok: true, secretVersion: 'current' });
    // A changed value is another signature: the parameters themselves are signed.
    expect(verify(replayed.replace('delivered', 'undelivered'))).toMatchObject({ ok: false, code: 'signature_mismatch' });
  });

  it('declares it: the body is signed as canonical parameters, not as bytes, and says so in its summary', () => {
    const parts = signedParts({ type: 'twilio' });
    expect(parts.body).toBe('canonical-params');
    expect(parts.summary).toBe(
      'the request URL and the form parameters as a sorted set (not their order or encoding), or a JSON body through bodySHA256',
    );
  });

  it("refuses eventId { derived: 'body-hash' } on the twilio preset, naming the source, the field and a signed parameter to read", () => {
    const input = config({
      id: 'twilio-sms',
      provider: 'twilio',
      attribution: { eventId: { derived: 'body-hash' }, keyId: { body: 'MessagingServiceSid' } },
    });
    expect(() => defineConfig(input)).toThrow(
      /sources\[id=twilio-sms\]\.attribution\.eventId\.derived \(value "body-hash"\): eventId \{ derived: 'body-hash' \} hashes the exact body bytes, but the twilio signature covers the request URL and the form parameters as a sorted set \(not their order or encoding\).*: the same parameters re-sent in another order or encoding verify and would hash to a new event id; read eventId from a signed parameter the provider sends \(\{ body: '<name>' \}, Twilio: MessageSid, CallSid\)/,
    );
  });

  it("refuses replayProtection: 'body' on a hand-written twilio source, naming the source and what to use instead", () => {
    const input = config({
      id: 'twilio-voice',
      scheme: { type: 'twilio' },
      replayProtection: 'body',
      attribution: {
        eventId: { header: 'i-twilio-idempotency-token' },
        eventType: { body: 'CallStatus' },
        tenantId: { body: 'AccountSid' },
        keyId: { body: 'AccountSid' },
      },
    });
    expect(() => defineConfig(input)).toThrow(
      /sources\[id=twilio-voice\]\.replayProtection \(value "body"\): replayProtection: 'body' makes one event of one exact body, but the twilio signature covers the request URL and the form parameters as a sorted set \(not their order or encoding\).*: the same request with its parameters reordered is other bytes and would be counted again; read attribution from signed parameters \(\{ body: '<name>' \}\) and keep replayProtection: 'event-id'/,
    );
  });

  it("refuses replayProtection: 'body' on a mailgun source too, whose body is not signed at all", () => {
    const input = config({
      id: 'mailgun',
      provider: 'mailgun',
      replayProtection: 'body',
      attribution: { eventId: { header: 'x-mailgun-delivery' }, tenantId: { value: 'tenant_204' }, keyId: { value: 'key_mailgun' } },
    });
    expect(() => defineConfig(input)).toThrow(
      /sources\[id=mailgun\]\.replayProtection \(value "body"\): replayProtection: 'body' makes one event of one exact body, but the mailgun signature covers ONLY signature\.timestamp and signature\.token/,
    );
  });

  it('still accepts the twilio preset as it is: the event id is the signed MessageSid, replay protection by event id', () => {
    const source = defineConfig(config({ id: 'twilio-sms', provider: 'twilio', attribution: { keyId: { body: 'MessagingServiceSid' } } }))
      .sources[0];
    expect(source?.attribution.eventId).toEqual({ body: 'MessageSid' });
    expect(source?.replayProtection).toBe('event-id');
  });
});

describe('a timestamp header the signed content does not include is no replay protection', () => {
  const ed = generateKeyPairSync('ed25519');
  const edRaw = (der: Buffer) => der.subarray(-32).toString('hex');
  const edPrivate = edRaw(ed.privateKey.export({ format: 'der', type: 'pkcs8' }));
  const edPublic = edRaw(ed.publicKey.export({ format: 'der', type: 'spki' }));
  const HOUR_LATER = NOW + 3_600_000;
  const BODY = Buffer.from('{"id":"evt_01J8K7M2Q4","type":"payment.succeeded","tenant_id":"tenant_204","key_id":"key_42"}');

  /** Per scheme: the scheme with `timestampHeader` x-acme-timestamp and a content that leaves it out, and the fix. */
  const CASES: Array<{ type: string; unsigned: SchemeConfigInput; signed: SchemeConfigInput; sign: string; verify: string }> = [
    {
      type: 'hmac-template',
      unsigned: { type: 'hmac-template', header: 'x-acme-signature', content: '{body}', timestampHeader: 'x-acme-timestamp' },
      signed: {
        type: 'hmac-template',
        header: 'x-acme-signature',
        content: '{header:x-acme-timestamp}.{body}',
        timestampHeader: 'x-acme-timestamp',
      },
      sign: 'acme-key-N4m7',
      verify: 'acme-key-N4m7',
    },
    {
      type: 'ed25519',
      unsigned: { type: 'ed25519', header: 'x-acme-signature', content: '{body}', timestampHeader: 'x-acme-timestamp' },
      signed: {
        type: 'ed25519',
        header: 'x-acme-signature',
        content: '{header:x-acme-timestamp}{body}',
        timestampHeader: 'x-acme-timestamp',
      },
      sign: edPrivate,
      verify: edPublic,
    },
    {
      type: 'secret-digest',
      unsigned: { type: 'secret-digest', header: 'x-acme-signature', content: '{body}', timestampHeader: 'x-acme-timestamp' },
      signed: {
        type: 'secret-digest',
        header: 'x-acme-signature',
        content: '{body}{header:x-acme-timestamp}',
        timestampHeader: 'x-acme-timestamp',
      },
      sign: 'acme-api-secret-8f2c',
      verify: 'acme-api-secret-8f2c',
    },
  ];

  const source = (scheme: SchemeConfigInput) =>
    config({
      id: 'acme',
      scheme,
      attribution: { eventId: { body: 'id' }, eventType: { body: 'type' }, tenantId: { body: 'tenant_id' }, keyId: { body: 'key_id' } },
    });

  /** A request signed at NOW, captured, and re-sent an hour later with the timestamp header set to that hour. */
  function replayAnHourLater(scheme: SchemeConfigInput, sign: string, verify: string) {
    const headers = signatureHeaders(scheme, { body: BODY, secret: sign, now: NOW, messageId: 'msg_2Kp7QeWd9' });
    const check = (h: Record<string, string>) =>
      verifierFor(scheme).verify({ rawBody: BODY, headers: h, now: HOUR_LATER, toleranceSeconds: 300 }, { current: verify });
    return {
      asCaptured: check(headers),
      withFreshTimestamp: check({ ...headers, 'x-acme-timestamp': String(Math.floor(HOUR_LATER / 1000)) }),
    };
  }

  describe.each(CASES)('$type', ({ type, unsigned, signed, sign, verify }) => {
    it('lets a request captured an hour ago through once its unsigned x-acme-timestamp is rewritten to now', () => {
      const { asCaptured, withFreshTimestamp } = replayAnHourLater(unsigned, sign, verify);
      expect(asCaptured).toMatchObject({ ok: false, code: 'timestamp_out_of_tolerance' });
      expect(withFreshTimestamp).toEqual({ ok: true, secretVersion: 'current' });
    });

    it('refuses the timestampHeader at config load, naming the source, the option, the content and the fix', () => {
      expect(() => defineConfig(source(unsigned))).toThrow(
        new RegExp(
          `sources\\[id=acme\\]\\.scheme\\.timestampHeader \\(value "x-acme-timestamp"\\): the ${type} content "\\{body\\}" does not sign ` +
            'header x-acme-timestamp, so a captured request re-sent later with a fresh x-acme-timestamp would pass the tolerance check; ' +
            `add \\{header:x-acme-timestamp\\} to content where the provider signs it, or set timestampHeader: '' \\(no signed time: ` +
            'replay protection is then the event id alone\\)',
        ),
      );
    });

    it('does not declare the unsigned header a signed timestamp', () => {
      expect(signedParts(unsigned).timestamp).toBeUndefined();
      expect(signedParts(signed).timestamp).toBe('x-acme-timestamp');
    });

    it('accepts it when the content signs it, and the replay with a fresh timestamp is then refused', () => {
      expect(defineConfig(source(signed)).sources[0]?.scheme).toMatchObject({ timestampHeader: 'x-acme-timestamp' });
      const { asCaptured, withFreshTimestamp } = replayAnHourLater(signed, sign, verify);
      expect(asCaptured).toMatchObject({ ok: false, code: 'timestamp_out_of_tolerance' });
      expect(withFreshTimestamp).toMatchObject({ ok: false, code: 'signature_mismatch' });
    });
  });

  it("refuses ed25519 content without the default x-signature-timestamp, and accepts it with timestampHeader: ''", () => {
    const scheme = { type: 'ed25519', header: 'x-signature-ed25519', content: '{body}' } as const;
    expect(() => defineConfig(source(scheme))).toThrow(
      /sources\[id=acme\]\.scheme\.timestampHeader \(value default "x-signature-timestamp"\): the ed25519 content "\{body\}" does not sign header x-signature-timestamp/,
    );
    const accepted = defineConfig(source({ ...scheme, timestampHeader: '' })).sources[0]?.scheme;
    expect(accepted).toMatchObject({ type: 'ed25519', content: '{body}', timestampHeader: '' });
    expect(signedParts(accepted!).timestamp).toBeUndefined();
  });

  it('refuses a timestamped-hmac content without {t}: its t= timestamp would be checked but not signed', () => {
    const scheme = { type: 'timestamped-hmac', header: 'acme-signature', content: '{body}' } as const;
    const headers = signatureHeaders(scheme, { body: BODY, secret: 'acme-key-N4m7', now: NOW, messageId: 'msg_2Kp7QeWd9' });
    const t = String(Math.floor(HOUR_LATER / 1000));
    const fresh = { 'acme-signature': headers['acme-signature']!.replace(/^t=\d+/, `t=${t}`) };
    expect(fresh['acme-signature']).toMatch(new RegExp(`^t=${t},v1=[0-9a-f]{64}$`));
    expect(
      verifierFor(scheme).verify({ rawBody: BODY, headers: fresh, now: HOUR_LATER, toleranceSeconds: 300 }, { current: 'acme-key-N4m7' }),
    ).toEqual({ ok: true, secretVersion: 'current' });
    expect(() => defineConfig(source(scheme))).toThrow(
      /sources\[id=acme\]\.scheme\.content \(value "\{body\}"\): the timestamped-hmac content "\{body\}" does not sign the t= timestamp of acme-signature, so a captured request re-sent later with a fresh t= would pass the tolerance check; put \{t\} in content where the provider signs it \(Stripe-style: "\{t\}\.\{body\}"\)/,
    );
    expect(signedParts(scheme).timestamp).toBeUndefined();
  });
});
