/**
 * The tenant-day registry intake keeps for the window index: written before the receipt, about once
 * per tenant per UTC day per execution environment (an in-memory set), and a failed write stores
 * nothing and answers 503.
 */

import { ProvisionedThroughputExceededException } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import { createDocumentClient } from '../../adapters/clients';
import { eventStores, intakeStore } from '../../adapters/event-stores';
import { TenantDayCache } from '../../adapters/receipts';
import type { SecretsPort } from '../../adapters/secrets';
import { ALL_SCHEMES } from '../../core/schemes';
import config from '../../hookledger.config';
import { createIngestHandler } from '../../lambdas/ingest/app';
import { httpEvent, NOW, platformEvent, signedHeaders, TEST_HASH_KEY, TEST_SECRET } from '../support/factories';
import { capturingLogger } from '../support/logs';

const ddbMock = mockClient(DynamoDBDocumentClient);
afterEach(() => ddbMock.reset());

const secrets: SecretsPort = {
  payloadHashKey: async () => TEST_HASH_KEY,
  get: async () => ({ current: TEST_SECRET }),
  refresh: async () => ({ current: TEST_SECRET }),
};

/** One execution environment: one Receipts, a clock the test moves. */
function environment() {
  let now = NOW;
  const stores = eventStores({ client: createDocumentClient({ region: 'us-east-1' }), tableName: 'events' });
  const store = stores.receipts;
  const handler = createIngestHandler({
    schemes: ALL_SCHEMES,
    config,
    store: intakeStore(stores),
    secrets,
    logger: capturingLogger().logger,
    clock: () => now,
  });
  const send = (id: string, tenant: string) => {
    const body = JSON.stringify(platformEvent({ id, tenant_id: tenant }));
    return handler(httpEvent('platform', body, signedHeaders(body, { at: now, msgId: `msg_${id}` })));
  };
  const setNow = (at: number) => {
    now = at;
  };
  return { store, send, setNow };
}

const registryWrites = () =>
  ddbMock
    .commandCalls(UpdateCommand)
    .map((c) => String(c.args[0].input.Key?.pk))
    .filter((pk) => pk.startsWith('tday#'));

describe('tenant-day registry', () => {
  it('is written once per tenant per day per environment, before the receipt, and again after the day changes', async () => {
    ddbMock.on(PutCommand).resolves({});
    ddbMock.on(UpdateCommand).resolves({});
    const env = environment();
    for (const id of ['evt_01J8K7M2Q4', 'evt_01J8K7M2R5', 'evt_01J8K7M2S6'])
      expect((await env.send(id, 'tenant_204')).statusCode).toBe(202);
    expect((await env.send('evt_01J8K7M2T7', 'tenant_311')).statusCode).toBe(202);
    expect(registryWrites()).toEqual(['tday#2026-11-29#tenant_204', 'tday#2026-11-29#tenant_311']);
    // The registry item is the first write of the first event: before its payload and its receipt.
    const first = ddbMock.calls()[0]?.args[0].input as { Key?: { pk: string }; UpdateExpression?: string };
    expect(first.Key?.pk).toBe('tday#2026-11-29#tenant_204');
    const update = ddbMock.commandCalls(UpdateCommand)[0]?.args[0].input;
    expect(update?.ExpressionAttributeValues).toMatchObject({ ':wpk': 'tenants#2026-11-29', ':tenant': 'tenant_204', ':shards': 1 });
    // Receipts carry the index keys: tenant-day partition, receivedAt.
    const receipts = ddbMock
      .commandCalls(PutCommand)
      .map((c) => c.args[0].input.Item as Record<string, unknown>)
      .filter((i) => i.kind === 'event');
    expect(receipts.map((r) => [r.eventId, r.wpk, r.wsk])).toEqual([
      ['evt_01J8K7M2Q4', 'tenant_204#2026-11-29', NOW],
      ['evt_01J8K7M2R5', 'tenant_204#2026-11-29', NOW],
      ['evt_01J8K7M2S6', 'tenant_204#2026-11-29', NOW],
      ['evt_01J8K7M2T7', 'tenant_311#2026-11-29', NOW],
    ]);

    // Midnight UTC passes: the day's first event of each tenant registers the new day.
    env.setNow(Date.parse('2026-11-30T00:00:05Z'));
    await env.send('evt_01J8K7M2U8', 'tenant_204');
    await env.send('evt_01J8K7M2V9', 'tenant_204');
    expect(registryWrites()).toEqual(['tday#2026-11-29#tenant_204', 'tday#2026-11-29#tenant_311', 'tday#2026-11-30#tenant_204']);
    expect(env.store.registered.size).toBe(1);

    // Another execution environment knows nothing of this one's set: it writes its own (idempotent) item.
    const other = environment();
    other.setNow(Date.parse('2026-11-30T00:00:05Z'));
    await other.send('evt_01J8K7M2W1', 'tenant_204');
    expect(registryWrites()).toHaveLength(4);
  });

  it('stores nothing and answers 503 when the registry write fails', async () => {
    ddbMock.on(UpdateCommand).rejects(new ProvisionedThroughputExceededException({ message: 'slow down', $metadata: {} }));
    ddbMock.on(PutCommand).resolves({});
    const env = environment();
    const res = await env.send('evt_01J8K7M2Q4', 'tenant_204');
    expect(res.statusCode).toBe(503);
    expect(JSON.parse(res.body!).error).toBe('storage_unavailable');
    expect(ddbMock.commandCalls(PutCommand)).toHaveLength(0);
    // Not remembered: the provider's retry registers it.
    expect(env.store.registered.has('2026-11-29', 'tenant_204')).toBe(false);
  });
});

describe('TenantDayCache', () => {
  it('forgets every pair when the day changes and stays within its bound', () => {
    const cache = new TenantDayCache(2);
    cache.remember('2026-11-29', 'tenant_204');
    cache.remember('2026-11-29', 'tenant_311');
    expect([cache.has('2026-11-29', 'tenant_204'), cache.has('2026-11-29', 'tenant_311'), cache.size]).toEqual([true, true, 2]);
    cache.remember('2026-11-29', 'tenant_412');
    expect([cache.has('2026-11-29', 'tenant_204'), cache.has('2026-11-29', 'tenant_412'), cache.size]).toEqual([false, true, 2]);
    cache.remember('2026-11-30', 'tenant_204');
    expect([cache.has('2026-11-29', 'tenant_412'), cache.has('2026-11-30', 'tenant_204'), cache.size]).toEqual([false, true, 1]);
  });
});
