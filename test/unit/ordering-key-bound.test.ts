/**
 * The ordering key as intake stores it (lambdas/recording/ordering.ts, issue #37 item 4): at most
 * MAX_STORED_ORDERING_KEY_CHARS characters on the receipt, a longer key stored as the FIFO group it
 * maps to, so the group of every delivery is the one the whole key gives.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { messageGroupOf } from '../../core/config/consumers';
import { defineConfig } from '../../core/config/schema';
import defaultConfig from '../../hookledger.config';
import { MAX_STORED_ORDERING_KEY_CHARS, orderingKeysFor, storedOrderingKey } from '../../lambdas/recording/ordering';

const config = defineConfig({
  sources: defaultConfig.sources,
  consumers: [
    {
      id: 'ledger-sync',
      subscribes: ['*'],
      fields: ['id'],
      entry: 'lambdas/consumers/audit-writer.ts',
      ordering: { key: { body: 'data.account' } },
    },
  ],
});

describe('storedOrderingKey', () => {
  it('keeps a key of up to 128 characters as it is, and stores a longer one as h-<sha256>, 66 characters', () => {
    const at = `acct_${'1'.repeat(MAX_STORED_ORDERING_KEY_CHARS - 5)}`;
    expect(storedOrderingKey(at)).toBe(at);
    const over = `${at}2`;
    expect(storedOrderingKey(over)).toMatch(/^h-[0-9a-f]{64}$/);
    expect(orderingKeysFor(config, ['ledger-sync'], 'tenant_204', { data: { account: 'x'.repeat(300_000) } })).toEqual({
      'ledger-sync': messageGroupOf('x'.repeat(300_000)),
    });
  });

  it('never changes the FIFO group: the group of the stored key is the group of the key, for every key', () => {
    const key = fc.oneof(
      fc.string({ maxLength: 200 }),
      fc.string({ unit: 'grapheme', maxLength: 150 }),
      fc.string({ minLength: 120, maxLength: 400 }),
    );
    fc.assert(
      fc.property(key, (k) => {
        expect(storedOrderingKey(k).length).toBeLessThanOrEqual(MAX_STORED_ORDERING_KEY_CHARS);
        expect(messageGroupOf(storedOrderingKey(k))).toBe(messageGroupOf(k));
      }),
      { numRuns: 1000 },
    );
  });
});
