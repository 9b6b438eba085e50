/**
 * The pure parts of HTTP destination and ordered consumers: the config shapes and their errors,
 * ordering keys read at intake, FIFO send parameters, Retry-After and signing during a rotation.
 */
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { fifoSendParameters, HTTP_WORKER_ENTRY, orderingGroup, workerEntry } from '../../core/config/consumers';
import { defineConfig, type HookledgerConfigInput } from '../../core/config/schema';
import { orderingKeysFor } from '../../lambdas/recording/ordering';
import { retryAfterMs, signedHeaders } from '../../lambdas/runtime/http';
import { deliveryMessage, NOW, OLD_SECRET, TEST_SECRET } from '../support/factories';

type ConsumerInput = HookledgerConfigInput['consumers'][number];

const withConsumers = (...consumers: ConsumerInput[]): HookledgerConfigInput => ({
  sources: [
    {
      id: 'platform',
      scheme: { type: 'standard-webhooks' },
      attribution: { eventId: { body: 'id' }, eventType: { body: 'type' }, tenantId: { body: 'tenant_id' }, keyId: { body: 'key_id' } },
    },
  ],
  consumers,
});

const crm: ConsumerInput = { id: 'crm-sync', kind: 'http', url: 'https://crm.example.com/hooks', subscribes: ['*'], fields: ['id'] };

describe('consumer config: kind http', () => {
  it('fills the delivery controls with their defaults and runs the shared worker', () => {
    const [c] = defineConfig(withConsumers(crm)).consumers;
    expect(c).toMatchObject({ kind: 'http', url: 'https://crm.example.com/hooks', secretOverlapHours: 72 });
    expect(c?.http).toEqual({
      timeoutMs: 5000,
      ratePerSecond: 50,
      permanentStatuses: [410],
      unitsHeader: 'hookledger-units',
      units: 1,
      breakAfterFailures: 20,
    });
    expect(workerEntry(c!)).toBe(HTTP_WORKER_ENTRY);
  });

  it('refuses an http consumer without url, or with an entry', () => {
    expect(() => defineConfig(withConsumers({ ...crm, url: undefined }))).toThrow(
      /consumers\[id=crm-sync\]\.url \(value missing\): an http consumer needs the url its deliveries are POSTed to/,
    );
    expect(() => defineConfig(withConsumers({ ...crm, entry: 'lambdas/consumers/audit-writer.ts' }))).toThrow(
      /an http consumer runs the shared HTTP worker; remove entry/,
    );
  });

  it('refuses a lambda consumer without entry, or with a url', () => {
    expect(() => defineConfig(withConsumers({ id: 'audit-writer', subscribes: ['*'], fields: ['id'] }))).toThrow(
      /a lambda consumer needs entry/,
    );
    expect(() =>
      defineConfig(
        withConsumers({
          id: 'audit-writer',
          subscribes: ['*'],
          fields: ['id'],
          entry: 'lambdas/consumers/audit-writer.ts',
          url: 'https://x.example.com',
        }),
      ),
    ).toThrow(/url and http apply to kind: 'http' consumers only/);
  });

  it('refuses a request timeout longer than the worker may run, and a 5xx as permanent', () => {
    expect(() => defineConfig(withConsumers({ ...crm, timeoutSeconds: 2, http: { timeoutMs: 3000 } }))).toThrow(
      /http\.timeoutMs \(value 3000\): must not exceed the worker's timeoutSeconds \(2000 ms\), got 3000/,
    );
    expect(() => defineConfig(withConsumers({ ...crm, http: { permanentStatuses: [503] } }))).toThrow(/permanentStatuses/);
  });
});

describe('consumer config: ordering', () => {
  it("accepts key 'tenant' or a body path, with an optional version path", () => {
    const parsed = defineConfig(
      withConsumers(
        { ...crm, ordering: { key: 'tenant' } },
        {
          id: 'ledger-sync',
          subscribes: ['*'],
          fields: ['id'],
          entry: 'lambdas/consumers/audit-writer.ts',
          ordering: { key: { body: 'data.account' }, version: { body: 'data.seq' } },
        },
      ),
    );
    expect(parsed.consumers.map((c) => c.ordering)).toEqual([
      { key: 'tenant' },
      { key: { body: 'data.account' }, version: { body: 'data.seq' } },
    ]);
  });

  it('refuses a key that is neither tenant nor a dotted body path, and unknown fields', () => {
    expect(() => defineConfig(withConsumers({ ...crm, ordering: { key: 'account' as 'tenant' } }))).toThrow(/ordering\.key/);
    expect(() => defineConfig(withConsumers({ ...crm, ordering: { key: { body: 'data..seq' } } }))).toThrow(
      /body path must be dotted keys/,
    );
    expect(() => defineConfig(withConsumers({ ...crm, ordering: { key: { header: 'x-account' } as never } }))).toThrow(/ordering\.key/);
  });
});

describe('ordering keys at intake', () => {
  const config = defineConfig(
    withConsumers(
      { ...crm, ordering: { key: 'tenant' } },
      {
        id: 'ledger-sync',
        subscribes: ['*'],
        fields: ['id'],
        entry: 'lambdas/consumers/audit-writer.ts',
        ordering: { key: { body: 'data.account' } },
      },
      { id: 'audit-writer', subscribes: ['*'], fields: ['id'], entry: 'lambdas/consumers/audit-writer.ts' },
    ),
  );

  it('reads the tenant or the signed body field for each ordered consumer of the delivery set', () => {
    const body = { id: 'evt_01J8K7M2Q4', data: { account: 'acct_7', seq: 3 } };
    expect(orderingKeysFor(config, ['crm-sync', 'ledger-sync', 'audit-writer'], 'tenant_204', body)).toEqual({
      'crm-sync': 'tenant_204',
      'ledger-sync': 'acct_7',
    });
    expect(orderingKeysFor(config, ['ledger-sync'], 'tenant_204', { data: { account: 42 } })).toEqual({ 'ledger-sync': '42' });
    expect(orderingKeysFor(config, ['audit-writer'], 'tenant_204', body)).toBeUndefined();
  });

  it('puts events without the key field in one group of their own', () => {
    expect(orderingKeysFor(config, ['ledger-sync'], 'tenant_204', { id: 'evt_01J8K7M2Q4' })).toEqual({ 'ledger-sync': '_unkeyed' });
  });
});

describe('FIFO send parameters', () => {
  const fifo = 'http://127.0.0.1:4566/000000000000/hookledger-ledger-sync.fifo';

  it('sends nothing extra to a standard queue', () => {
    expect(fifoSendParameters('http://127.0.0.1:4566/000000000000/hookledger-audit-writer', deliveryMessage())).toEqual({});
  });

  it('groups by the ordering key and deduplicates by the ledger key', () => {
    const message = deliveryMessage({ consumerId: 'ledger-sync', orderingKey: 'acct_7' });
    expect(fifoSendParameters(fifo, message)).toEqual({
      MessageGroupId: 'acct_7',
      MessageDeduplicationId: 'platform:evt_01J8K7M2Q4#ledger-sync',
    });
  });

  it('keeps a replay or repair within the 5-minute window from being deduplicated away', () => {
    expect(fifoSendParameters(fifo, deliveryMessage({ consumerId: 'ledger-sync', orderingKey: 'acct_7', replayId: 'rpl_01J8K7' }))).toEqual(
      {
        MessageGroupId: 'acct_7',
        MessageDeduplicationId: 'platform:evt_01J8K7M2Q4#ledger-sync#replay:rpl_01J8K7',
      },
    );
  });

  it('falls back to the tenant and hashes ids SQS would refuse', () => {
    expect(orderingGroup(deliveryMessage())).toBe('tenant_204');
    const long = orderingGroup(deliveryMessage({ orderingKey: 'a'.repeat(200) }));
    expect(long).toMatch(/^h-[0-9a-f]{64}$/);
    expect(orderingGroup(deliveryMessage({ orderingKey: 'Zürich' }))).toMatch(/^h-[0-9a-f]{64}$/);
  });
});

describe('Retry-After', () => {
  it('reads seconds and HTTP dates, caps at 12 h and ignores the rest', () => {
    expect(retryAfterMs('30', NOW)).toBe(30_000);
    expect(retryAfterMs(new Date(NOW + 90_000).toUTCString(), NOW)).toBe(90_000);
    expect(retryAfterMs('999999', NOW)).toBe(43_200_000);
    expect(retryAfterMs('soon', NOW)).toBeUndefined();
    expect(retryAfterMs(null, NOW)).toBeUndefined();
  });
});

describe('signing a delivery', () => {
  const body = Buffer.from('{"id":"evt_01J8K7M2Q4"}');

  it('is verified by the standardwebhooks library with the consumer secret; webhook-id is the ledger key', () => {
    const headers = signedHeaders(body, 'platform:evt_01J8K7M2Q4#crm-sync', NOW, { current: TEST_SECRET });
    expect(headers['webhook-id']).toBe('platform:evt_01J8K7M2Q4#crm-sync');
    const wh = new Webhook(TEST_SECRET);
    // The library checks the timestamp against its own clock; sign "now" for it.
    const live = signedHeaders(body, 'platform:evt_01J8K7M2Q4#crm-sync', Date.now(), { current: TEST_SECRET });
    expect(wh.verify(body.toString(), live)).toEqual({ id: 'evt_01J8K7M2Q4' });
  });

  it('carries a signature under each secret during a rotation overlap', () => {
    const live = signedHeaders(body, 'platform:evt_01J8K7M2Q4#crm-sync', Date.now(), {
      current: TEST_SECRET,
      previous: OLD_SECRET,
      previousUntil: Date.now() + 60_000,
    });
    expect(live['webhook-signature']?.split(' ')).toHaveLength(2);
    expect(new Webhook(OLD_SECRET).verify(body.toString(), live)).toEqual({ id: 'evt_01J8K7M2Q4' });
    expect(new Webhook(TEST_SECRET).verify(body.toString(), live)).toEqual({ id: 'evt_01J8K7M2Q4' });
  });
});
