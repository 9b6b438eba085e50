/**
 * The documentation's provider examples, exactly as written there (docs/configuration.md, "Verification schemes"):
 * tests use these, so the documented configuration is the tested one.
 */
import type { HookledgerConfigInput } from '../../core/config/schema';

type SourceInput = HookledgerConfigInput['sources'][number];

export const GITHUB_SOURCE: SourceInput = {
  id: 'github',
  scheme: { type: 'github' },
  replayProtection: 'body',
  attribution: {
    eventId: { header: 'x-github-delivery' },
    eventType: { header: 'x-github-event' },
    tenantId: { body: 'installation.id' },
    keyId: { header: 'x-github-hook-id' },
  },
};

export const SHOPIFY_SOURCE: SourceInput = {
  id: 'shopify',
  scheme: { type: 'shopify' },
  replayProtection: 'body',
  attribution: {
    eventId: { header: 'x-shopify-event-id' },
    eventType: { header: 'x-shopify-topic' },
    tenantId: { header: 'x-shopify-shop-domain' },
    keyId: { header: 'x-shopify-shop-domain' },
  },
};
