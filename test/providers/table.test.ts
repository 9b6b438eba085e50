import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { PROVIDERS } from '../../core/providers/catalog';
import { providerSummaries, providersMarkdown } from '../../core/providers/table';

describe('docs/providers.md', () => {
  it('is the table generated from the catalog (run `npx tsx scripts/providers-table.ts` after changing it)', () => {
    expect(readFileSync(new URL('../../docs/providers.md', import.meta.url), 'utf8')).toBe(providersMarkdown());
  });
});

describe('providerSummaries', () => {
  it('gives hookledger providers --json one row per entry, with scheme, signed parts, event id, handshake and proof', () => {
    const rows = providerSummaries();
    expect(rows).toHaveLength(PROVIDERS.length);
    expect(rows.find((r) => r.name === 'stripe')).toEqual({
      name: 'stripe',
      scheme: 'stripe',
      signedParts: 'the body and the t= timestamp of stripe-signature',
      eventId: 'body.id',
      handshake: null,
      proof: 'sdk',
    });
    expect(rows.find((r) => r.name === 'zoom')).toMatchObject({
      scheme: 'hmac-template',
      signedParts: 'the body, x-zm-request-timestamp',
      eventId: 'header x-zm-trackingid',
      handshake: 'zoom-url-validation',
    });
  });
});
