import { describe, expect, it } from 'vitest';
import { defineConfig, type HookledgerConfigInput } from '../../core/config/schema';
import { closeProviderNames, PROVIDERS, type ProviderPreset } from '../../core/providers/catalog';

const CONSUMERS: HookledgerConfigInput['consumers'] = [
  { id: 'billing', subscribes: ['*'], fields: ['id'], entry: 'lambdas/consumers/billing.ts' },
];
const withSource = (source: HookledgerConfigInput['sources'][number]) => defineConfig({ sources: [source], consumers: CONSUMERS });
/** A signed location of the preset to read a tenant and key from: its event id's, or its type's when the id is derived from the body. */
const readable = (preset: ProviderPreset) => ('derived' in preset.eventId ? preset.eventType : preset.eventId);

describe('a source that names a provider', () => {
  it("resolves stripe's preset into the same shape as a hand-written source", () => {
    const source = withSource({
      id: 'stripe-live',
      provider: 'stripe',
      attribution: { tenantId: { body: 'account' }, keyId: { body: 'data.object.metadata.key_id' } },
    }).sources[0];
    expect(source).toEqual({
      id: 'stripe-live',
      provider: 'stripe',
      scheme: { type: 'stripe' },
      toleranceSeconds: 300,
      maxBodyBytes: 1_048_576,
      bodyFormat: 'json',
      maxFormFields: 1000,
      maxHeaders: 100,
      attribution: {
        eventId: { body: 'id' },
        eventType: { body: 'type' },
        tenantId: { body: 'account' },
        keyId: { body: 'data.object.metadata.key_id' },
      },
      enforceKeyRegistry: false,
      replayProtection: 'event-id',
      secretOverlapHours: 72,
    });
  });

  it("lets the source override the preset's attribution and keeps the preset's handshake and replay protection", () => {
    const source = withSource({
      id: 'zoom-meetings',
      provider: 'zoom',
      attribution: { eventType: { body: 'payload.object.type' }, keyId: { body: 'payload.object.host_id' } },
      toleranceSeconds: 120,
    }).sources[0]!;
    expect(source.scheme).toMatchObject({ type: 'hmac-template', header: 'x-zm-signature', timestampHeader: 'x-zm-request-timestamp' });
    expect(source.attribution).toEqual({
      eventId: { header: 'x-zm-trackingid' },
      eventType: { body: 'payload.object.type' },
      tenantId: { body: 'payload.account_id' },
      keyId: { body: 'payload.object.host_id' },
    });
    expect(source.handshake).toBe('zoom-url-validation');
    expect(source.replayProtection).toBe('body');
    expect(source.toleranceSeconds).toBe(120);
  });

  it('refuses an unknown provider and names the close ones', () => {
    expect(() => withSource({ id: 'pay', provider: 'strpe', attribution: {} })).toThrow(
      /sources\[id=pay\]\.provider \(value "strpe"\): unknown provider "strpe"; did you mean "stripe", "stream"\?/,
    );
    expect(closeProviderNames('shopfy')).toEqual(['shopify']);
    expect(closeProviderNames('stand')).toContain('standard-webhooks');
  });

  it('says which attribution field a preset without a tenant needs', () => {
    expect(() => withSource({ id: 'pay', provider: 'stripe', attribution: { keyId: { body: 'id' } } })).toThrow(
      /\[id=pay\]\.attribution\.tenantId \(value missing\)/,
    );
  });

  it('still refuses an unsigned header as attribution when the preset replays by event id', () => {
    expect(() =>
      withSource({ id: 'pay', provider: 'stripe', attribution: { tenantId: { header: 'x-tenant' }, keyId: { body: 'id' } } }),
    ).toThrow(/header x-tenant is not signed \(the stripe signature covers the body and the t= timestamp of stripe-signature\)/);
  });

  it.each(PROVIDERS.map((p) => [p.name, p] as const))('%s: resolves and passes the door-integrity rule as listed', (name, preset) => {
    const source = withSource({
      id: 'acme',
      provider: name,
      attribution: { tenantId: preset.tenantId ?? readable(preset), keyId: preset.keyId ?? readable(preset) },
      // Meta's GET handshake compares the verify token the team typed into the app dashboard.
      ...(preset.handshake === 'meta-hub-challenge' ? { verifyToken: 'vt_9c2f7a1e5b3d4c6e' } : {}),
    }).sources[0]!;
    expect(source.provider).toBe(name);
    expect(source.scheme.type).toBe(preset.scheme.type);
    expect(source.replayProtection).toBe(preset.replayProtection ?? 'event-id');
  });

  it("refuses Meta's preset without the verify token its GET handshake compares", () => {
    expect(() => withSource({ id: 'wa', provider: 'meta', attribution: { tenantId: { body: 'id' }, keyId: { body: 'id' } } })).toThrow(
      /verifyToken.*meta-hub-challenge handshake needs verifyToken/,
    );
  });

  it('refuses Mailgun attribution from the unsigned event data and accepts the signed token and fixed values', () => {
    expect(() =>
      withSource({
        id: 'mg',
        provider: 'mailgun',
        attribution: { eventType: { body: 'event-data.event' }, tenantId: { value: 'tenant_204' }, keyId: { value: 'key_42' } },
      }),
    ).toThrow(/body\.event-data\.event is not signed: the mailgun signature covers ONLY signature\.timestamp and signature\.token/);
    const source = withSource({
      id: 'mg',
      provider: 'mailgun',
      attribution: { tenantId: { value: 'tenant_204' }, keyId: { value: 'key_42' } },
    }).sources[0]!;
    expect(source.attribution).toEqual({
      eventId: { body: 'signature.token' },
      eventType: { value: 'mailgun.event' },
      tenantId: { value: 'tenant_204' },
      keyId: { value: 'key_42' },
    });
  });

  it('lists each provider once, with a docs page, and a named proof for every proved entry', () => {
    const names = PROVIDERS.map((p) => p.name);
    expect(new Set(names).size).toBe(names.length);
    for (const p of PROVIDERS) {
      expect(p.docs, p.name).toMatch(/^https:\/\//);
      if (p.proof !== 'unproved') expect(p.provedBy, p.name).toBeTruthy();
    }
  });
});

describe('signed-content templates in a scheme', () => {
  it('refuses a template without {body} or with an unknown token', () => {
    expect(() =>
      withSource({
        id: 'acme',
        scheme: { type: 'hmac-template', header: 'x-sig', content: '{header:x-ts}' },
        attribution: { eventId: { body: 'id' }, eventType: { body: 'type' }, tenantId: { body: 't' }, keyId: { body: 'k' } },
      }),
    ).toThrow(/scheme\.content.*must be text with \{body\}/);
    expect(() =>
      withSource({
        id: 'acme',
        scheme: { type: 'hmac-template', header: 'x-sig', content: '{ts}.{body}' },
        attribution: { eventId: { body: 'id' }, eventType: { body: 'type' }, tenantId: { body: 't' }, keyId: { body: 'k' } },
      }),
    ).toThrow(/scheme\.content/);
  });

  it('counts a header named in the template as signed, so it may carry attribution', () => {
    const source = withSource({
      id: 'acme',
      scheme: { type: 'hmac-template', header: 'x-sig', content: '{header:x-delivery}.{body}' },
      attribution: { eventId: { header: 'x-delivery' }, eventType: { body: 'type' }, tenantId: { body: 't' }, keyId: { body: 'k' } },
    }).sources[0]!;
    expect(source.attribution.eventId).toEqual({ header: 'x-delivery' });
  });
});

describe('an event id derived from the signed body', () => {
  it("resolves Meta's and Dropbox's presets to a body-hash id, a signed type and (Meta) the first entry's id as tenant", () => {
    const meta = withSource({ id: 'wa', provider: 'meta', verifyToken: 'vt_9c2f7a1e5b3d4c6e', attribution: { keyId: { body: 'object' } } })
      .sources[0]!;
    expect(meta.attribution).toEqual({
      eventId: { derived: 'body-hash' },
      eventType: { body: 'object' },
      tenantId: { body: 'entry.0.id' },
      keyId: { body: 'object' },
    });
    const dropbox = withSource({
      id: 'dbx',
      provider: 'dropbox',
      attribution: { tenantId: { value: 'tenant_204' }, keyId: { value: 'key_dropbox' } },
    }).sources[0]!;
    expect(dropbox.attribution.eventId).toEqual({ derived: 'body-hash' });
    expect(dropbox.attribution.eventType).toEqual({ value: 'dropbox.list_folder' });
  });

  it('is refused where the scheme does not sign the body, naming the field, the scheme and what to do', () => {
    expect(() =>
      withSource({
        id: 'mg',
        provider: 'mailgun',
        attribution: { eventId: { derived: 'body-hash' }, tenantId: { value: 'tenant_204' }, keyId: { value: 'key_mg' } },
      }),
    ).toThrow(
      /attribution\.eventId\.derived.*eventId \{ derived: 'body-hash' \} needs a signed body, but the mailgun signature covers .*read eventId from the signed body\.signature\.timestamp or body\.signature\.token or body\.signature\.signature, or verify the source with a scheme that signs the body/,
    );
    expect(() =>
      withSource({
        id: 'okta',
        provider: 'okta',
        attribution: { eventId: { derived: 'body-hash' }, tenantId: { value: 'tenant_204' }, keyId: { value: 'key_okta' } },
      }),
    ).toThrow(/needs a signed body, but the shared-secret signature covers .*read eventId from an id the provider sends/);
  });

  it('is an event id location only: the type, tenant and key are read, never derived', () => {
    expect(() =>
      withSource({
        id: 'pay',
        provider: 'stripe',
        attribution: { tenantId: { derived: 'body-hash' } as never, keyId: { body: 'id' } },
      }),
    ).toThrow(/attribution\.tenantId/);
  });
});
