import { describe, expect, it } from 'vitest';
import { matchesEventType, payloadRetentionDays, payloadRetentionValues, subscribedConsumers } from '../../core/config/routing';
import { defineConfig, type HookledgerConfigInput, type SchemeSourceInput } from '../../core/config/schema';
import config from '../../hookledger.config';

const base = (): HookledgerConfigInput => ({
  sources: [
    {
      id: 'platform',
      scheme: { type: 'standard-webhooks' },
      attribution: { eventId: { body: 'id' }, eventType: { body: 'type' }, tenantId: { body: 'tenant_id' }, keyId: { body: 'key_id' } },
    },
  ],
  consumers: [{ id: 'billing-meter', subscribes: ['*'], fields: ['id'], entry: 'lambdas/consumers/billing-meter.ts' }],
});

describe('config', () => {
  describe('routing', () => {
    it('sends payment.succeeded to all three default consumers', () => {
      expect(subscribedConsumers(config, 'payment.succeeded')).toEqual(['billing-meter', 'audit-writer', 'risk-evaluator']);
    });
    it('sends invoice.paid to billing-meter and audit-writer only', () => {
      expect(subscribedConsumers(config, 'invoice.paid')).toEqual(['billing-meter', 'audit-writer']);
    });
    it('sends scoped_key.revoked to risk-evaluator too', () => {
      expect(subscribedConsumers(config, 'scoped_key.revoked')).toContain('risk-evaluator');
    });
    it('matches prefixes on a dot boundary only', () => {
      expect(matchesEventType('payment.*', 'payment.refund.created')).toBe(true);
      expect(matchesEventType('payment.*', 'payments.created')).toBe(false);
      expect(matchesEventType('payment.*', 'payment')).toBe(false);
      expect(matchesEventType('invoice.paid', 'invoice.paid')).toBe(true);
    });
  });

  describe('validation', () => {
    it('applies defaults: 5 receives, 60 s lease, 30 days payload retention', () => {
      const parsed = defineConfig(base());
      expect(parsed.consumers[0]?.maxReceiveCount).toBe(5);
      expect(parsed.consumers[0]?.visibilityTimeoutSeconds).toBe(60);
      expect(parsed.retention.payloadDays).toBe(30);
    });
    it('names the consumer and the value when the lease is shorter than 6x the timeout', () => {
      const input = base();
      input.consumers[0] = { ...input.consumers[0]!, visibilityTimeoutSeconds: 30, timeoutSeconds: 10 };
      expect(() => defineConfig(input)).toThrow(
        /consumers\[id=billing-meter\]\.visibilityTimeoutSeconds \(value 30\): must be at least 6x timeoutSeconds \(60\), got 30/,
      );
    });
    it('refuses 200 receives x a 2 h lease (16.7 days of retries): failing messages would expire before their DLQ; names the fix', () => {
      const input = base();
      input.consumers[0] = { ...input.consumers[0]!, maxReceiveCount: 200, visibilityTimeoutSeconds: 7200, timeoutSeconds: 600 };
      expect(() => defineConfig(input)).toThrow(
        /consumers\[id=billing-meter\]\.maxReceiveCount \(value 200\): maxReceiveCount 200 x visibilityTimeoutSeconds 7200 = 1440000 s of retries.*Lower maxReceiveCount to at most 144 or visibilityTimeoutSeconds to at most 5184$/s,
      );
    });
    it("keeps a source's payloads its own retentionDays, the others retention.payloadDays; refuses 0 days naming the source", () => {
      const input = base();
      input.sources[0] = { ...(input.sources[0] as object), retentionDays: 7 } as never;
      const parsed = defineConfig({ ...input, retention: { payloadDays: 90 } });
      expect(payloadRetentionDays(parsed, parsed.sources[0])).toBe(7);
      expect(payloadRetentionDays(parsed, undefined)).toBe(90);
      expect(payloadRetentionValues(parsed)).toEqual([7, 90]);
      input.sources[0] = { ...(input.sources[0] as object), retentionDays: 0 } as never;
      expect(() => defineConfig(input)).toThrow(/sources\[id=platform\]\.retentionDays \(value 0\)/);
    });
    it('rejects a duplicate consumer id', () => {
      const input = base();
      input.consumers.push({ ...input.consumers[0]! });
      expect(() => defineConfig(input)).toThrow(/duplicate consumer id "billing-meter"/);
    });
    it('rejects a bad subscription pattern with its value', () => {
      const input = base();
      input.consumers[0] = { ...input.consumers[0]!, subscribes: ['payment*'] };
      expect(() => defineConfig(input)).toThrow(/subscribes\[0\] \(value "payment\*"\)/);
    });
    it('rejects an unknown verification scheme', () => {
      const input = base() as { sources: { scheme: unknown }[] };
      input.sources[0]!.scheme = { type: 'md5' };
      expect(() => defineConfig(input as HookledgerConfigInput)).toThrow(/sources\[id=platform\]\.scheme\.type/);
    });
    it('rejects a source id that cannot be a URL path segment', () => {
      const input = base();
      input.sources[0] = { ...input.sources[0]!, id: 'Platform/../x' };
      expect(() => defineConfig(input)).toThrow(/source id must be/);
    });
    it('defaults the secret rotation overlap to 72 h and refuses one outside 1-720 h, naming the value', () => {
      expect(defineConfig(base()).sources[0]?.secretOverlapHours).toBe(72);
      const input = base();
      input.sources[0] = { ...input.sources[0]!, secretOverlapHours: 12 };
      expect(defineConfig(input).sources[0]?.secretOverlapHours).toBe(12);
      for (const bad of [0, 721, 1.5]) {
        input.sources[0] = { ...input.sources[0]!, secretOverlapHours: bad };
        expect(() => defineConfig(input)).toThrow(new RegExp(`sources\\[id=platform\\]\\.secretOverlapHours \\(value ${bad}\\)`));
      }
    });
  });

  describe('body format and request bounds (a source, never the Content-Type, says how its body is read)', () => {
    const attribution = {
      eventId: { body: 'id' },
      eventType: { body: 'type' },
      tenantId: { body: 'tenant_id' },
      keyId: { body: 'key_id' },
    };
    const withSources = (...sources: unknown[]) => ({ ...base(), sources }) as HookledgerConfigInput;

    it("resolves each source's format once: JSON by default, form for Twilio, the carrier for Mailgun, a source's own declaration", () => {
      const parsed = defineConfig(
        withSources(
          { id: 'platform', scheme: { type: 'standard-webhooks' }, attribution },
          { id: 'twilio', provider: 'twilio', attribution: { keyId: { body: 'MessagingServiceSid' } } },
          { id: 'twilio-json', provider: 'twilio', bodyFormat: 'json', attribution: { keyId: { body: 'MessagingServiceSid' } } },
          {
            id: 'mailgun-form',
            scheme: { type: 'mailgun', carrier: 'form' },
            attribution: {
              eventId: { body: 'token' },
              eventType: { value: 'mailgun.event' },
              tenantId: { value: 'tenant_204' },
              keyId: { value: 'key_mg' },
            },
          },
          { id: 'slash', scheme: { type: 'slack' }, bodyFormat: 'form', attribution },
        ),
      );
      expect(parsed.sources.map((s) => [s.id, s.bodyFormat])).toEqual([
        ['platform', 'json'],
        ['twilio', 'form'],
        ['twilio-json', 'json'],
        ['mailgun-form', 'form'],
        ['slash', 'form'],
      ]);
    });

    it("refuses a bodyFormat that contradicts Mailgun's carrier, naming the path and the fix", () => {
      const mailgun = {
        id: 'mailgun',
        scheme: { type: 'mailgun' },
        bodyFormat: 'form',
        attribution: { eventId: { body: 'signature.token' }, eventType: { value: 'm' }, tenantId: { value: 't' }, keyId: { value: 'k' } },
      };
      expect(() => defineConfig(withSources(mailgun))).toThrow(
        `sources[id=mailgun].bodyFormat (value "form"): the mailgun scheme reads its signature from the body as json, as its options say (carrier: 'json'), so the body cannot be read as form; remove bodyFormat, or change the scheme's options`,
      );
    });

    it('refuses a dotted body path on a form source: form fields are flat', () => {
      const twilio = { id: 'twilio', provider: 'twilio', attribution: { keyId: { body: 'data.MessagingServiceSid' } } };
      expect(() => defineConfig(withSources(twilio))).toThrow(
        'sources[id=twilio].attribution.keyId.body (value "data.MessagingServiceSid"): source "twilio" reads its body as form fields, which are flat: body.data.MessagingServiceSid names no field',
      );
    });

    it('defaults maxFormFields to 1000 and maxHeaders to 100, and refuses values outside 1-100000 and 16-1000, naming them', () => {
      const parsed = defineConfig(base());
      expect([parsed.sources[0]?.maxFormFields, parsed.sources[0]?.maxHeaders]).toEqual([1000, 100]);
      const source = base().sources[0] as SchemeSourceInput;
      expect(() => defineConfig(withSources({ ...source, maxFormFields: 0 }))).toThrow(/sources\[id=platform\]\.maxFormFields \(value 0\)/);
      expect(() => defineConfig(withSources({ ...source, maxFormFields: 100_001 }))).toThrow(/maxFormFields \(value 100001\)/);
      expect(() => defineConfig(withSources({ ...source, maxHeaders: 15 }))).toThrow(/sources\[id=platform\]\.maxHeaders \(value 15\)/);
      expect(() => defineConfig(withSources({ ...source, bodyFormat: 'xml' }))).toThrow(
        /sources\[id=platform\]\.bodyFormat \(value "xml"\)/,
      );
    });
  });

  describe('attribution from unsigned headers', () => {
    const github = (extra: Record<string, unknown> = {}): HookledgerConfigInput => ({
      ...base(),
      sources: [
        {
          id: 'github',
          scheme: { type: 'github' },
          attribution: {
            eventId: { header: 'X-GitHub-Delivery' },
            eventType: { header: 'x-github-event' },
            tenantId: { body: 'installation.id' },
            keyId: { header: 'x-github-hook-id' },
          },
          ...extra,
        },
      ],
    });

    it('refuses a GitHub eventId read from x-github-delivery, naming the header, what the scheme signs and the fix', () => {
      expect(() => defineConfig(github())).toThrow(
        /sources\[id=github\]\.attribution\.eventId\.header \(value "X-GitHub-Delivery"\): header x-github-delivery is not signed \(the github signature covers the body only\).*replayProtection: 'body'/,
      );
      expect(() => defineConfig(github())).toThrow(/attribution\.eventType\.header.*attribution\.keyId\.header/s);
    });

    it("accepts it with replayProtection: 'body', and defaults every source to 'event-id'", () => {
      expect(defineConfig(github({ replayProtection: 'body' })).sources[0]?.replayProtection).toBe('body');
      expect(defineConfig(base()).sources[0]?.replayProtection).toBe('event-id');
    });

    it('accepts a header the scheme signs: Standard Webhooks webhook-id as the event id', () => {
      const input = base();
      const source = input.sources[0] as SchemeSourceInput;
      input.sources[0] = { ...source, attribution: { ...source.attribution, eventId: { header: 'webhook-id' } } };
      expect(defineConfig(input).sources[0]?.attribution.eventId).toEqual({ header: 'webhook-id' });
    });
  });
});
