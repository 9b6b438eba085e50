/**
 * `hookledger send --provider <name>` sends the provider's sample (core/providers/samples.ts) signed
 * by the preset's scheme: every proved entry has one, our verifier accepts what send builds from it,
 * and intake reads the event id send reports. That the provider's own code accepts the same request
 * is proved per provider in sdk.test.ts ("accepts what `hookledger send --provider` posts").
 */
import { describe, expect, it } from 'vitest';
import { payloadHmac } from '../../adapters/payload-hash';
import { PROVIDERS } from '../../core/providers/catalog';
import { PROVIDER_SAMPLES, renderSample } from '../../core/providers/samples';
import { providerRequest } from '../../ops/send';
import { attributionOf, ed25519Pair, NOW, PAYLOAD_HASH_KEY, p256Pair, sourceFor, verifyWith } from './support';

const EVENT_ID = 'evt_01JDQ8Z4R7M2K9T3W5X6Y7Z8A9';
const MESSAGE_ID = 'msg_01JDQ8Z4R7M2K9T3W5X6Y7Z8B0';
const URL = 'https://hooks.example.com/hooks/acme';

/** What the source stores (verify) and what send would sign with (sign): a key pair for public-key providers. */
function keysFor(name: string): { sign: string; verify: string } {
  const entry = PROVIDERS.find((p) => p.name === name)!;
  if (entry.scheme.type === 'jwt' && entry.scheme.secretFormat === 'key:secret')
    return { sign: 'APIk7Rt2Lm9Kq:livekit-api-secret-8f2c', verify: '' };
  if (!entry.publicKey)
    return {
      sign: entry.scheme.type === 'standard-webhooks' ? 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' : 'ABCDEF0123456789ABCDEF0123456789',
      verify: '',
    };
  if (entry.scheme.type === 'sendgrid') {
    const pair = p256Pair();
    return { sign: pair.privateKey, verify: pair.publicKey };
  }
  const pair = ed25519Pair();
  const encoding =
    entry.scheme.type === 'ed25519' && 'keyEncoding' in entry.scheme && entry.scheme.keyEncoding === 'base64' ? 'base64' : 'hex';
  return { sign: pair.seed.toString(encoding), verify: pair.raw.toString(encoding) };
}

describe('provider samples', () => {
  it('cover every proved catalog entry, and name only catalog entries', () => {
    const names = new Set(PROVIDERS.map((p) => p.name));
    const missing = PROVIDERS.filter((p) => p.proof !== 'unproved' && !PROVIDER_SAMPLES[p.name]);
    expect(missing.map((p) => p.name)).toEqual([]);
    expect(Object.keys(PROVIDER_SAMPLES).filter((name) => !names.has(name))).toEqual([]);
    expect(Object.keys(PROVIDER_SAMPLES)).toHaveLength(61);
  });

  it('fill {{event_id}}, {{now_ms}} and {{now_s}}, leaving no placeholder behind', () => {
    for (const name of Object.keys(PROVIDER_SAMPLES)) {
      const sample = renderSample(name, { eventId: EVENT_ID, now: NOW })!;
      expect(`${sample.body}${JSON.stringify(sample.headers ?? {})}`, name).not.toMatch(/\{\{/);
    }
    expect(renderSample('pusher', { eventId: EVENT_ID, now: NOW })!.body).toContain(`"time_ms":${NOW}`);
    expect(renderSample('twilio', { eventId: EVENT_ID, now: NOW })!.body).toContain(`MessageSid=${EVENT_ID}`);
    expect(renderSample('unproved-or-unknown', { eventId: EVENT_ID, now: NOW })).toBeUndefined();
  });

  describe.each(Object.keys(PROVIDER_SAMPLES))('%s', (name) => {
    it("is accepted by our verifier once send has signed it, and intake reads send's event id from it", () => {
      const keys = keysFor(name);
      const sent = providerRequest({
        source: sourceFor(name),
        provider: name,
        secret: keys.sign,
        now: NOW,
        eventId: EVENT_ID,
        messageId: MESSAGE_ID,
        url: URL,
      });
      const request = { body: sent.body.toString('utf8'), headers: sent.headers, url: URL };
      expect(verifyWith(name, request, keys.verify || keys.sign)).toEqual({ ok: true, secretVersion: 'current' });
      if ('derived' in sourceFor(name).attribution.eventId) {
        // Derived from the body at intake with the deployment's key: send cannot know it, and says so.
        expect(sent.eventId).toBeUndefined();
        expect(sent.derivedEventId).toBe(true);
        expect(attributionOf(name, request).eventId).toBe(`bh_${payloadHmac(PAYLOAD_HASH_KEY, sent.body)}`);
        return;
      }
      expect(sent.eventId).toBeDefined();
      expect(attributionOf(name, request).eventId).toBe(sent.eventId);
      expect([EVENT_ID, MESSAGE_ID, String(NOW)]).toContain(sent.eventId);
    });
  });
});
