/**
 * Provisioned capacity throttles a sudden burst until auto scaling catches up: intake must answer 503
 * (providers retry) and leave no event behind. DynamoDB Local never throttles, so the throttle is
 * injected at the adapter boundary (the document client the event store is given); everything that
 * does land is written to, and read back from, DynamoDB Local.
 */

import { ProvisionedThroughputExceededException } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventStores, intakeStore } from '../../adapters/event-stores';
import type { SecretsPort } from '../../adapters/secrets';
import { ALL_SCHEMES } from '../../core/schemes';
import config from '../../hookledger.config';
import { createIngestHandler } from '../../lambdas/ingest/app';
import { createTable, startTestDynamo } from '../support/dynamo';
import { httpEvent, NOW, platformEvent, signedHeaders, TEST_HASH_KEY, TEST_SECRET } from '../support/factories';
import { capturingLogger } from '../support/logs';

const secrets: SecretsPort = {
  get: async () => ({ current: TEST_SECRET }),
  refresh: async () => ({ current: TEST_SECRET }),
  payloadHashKey: async () => TEST_HASH_KEY,
};

let dynamo: Awaited<ReturnType<typeof startTestDynamo>>;
let tableNo = 0;
beforeAll(async () => {
  dynamo = await startTestDynamo();
});
afterAll(() => dynamo?.stop());

type Command = Parameters<DynamoDBDocumentClient['send']>[0];
/** Which write a command is: the tenant-day registry (UpdateItem), the payload or the receipt (PutItem). */
function writeOf(command: Command): 'registry' | 'payload' | 'receipt' | 'other' {
  const input = command.input as { Item?: { pk?: string }; Key?: { pk?: string } };
  const pk = input.Item?.pk ?? input.Key?.pk ?? '';
  if (command.constructor.name === 'UpdateCommand' && pk.startsWith('tday#')) return 'registry';
  if (command.constructor.name === 'PutCommand' && pk.startsWith('pay#')) return 'payload';
  if (command.constructor.name === 'PutCommand' && pk.startsWith('evt#')) return 'receipt';
  return 'other';
}

/** DynamoDB Local behind a client that throws `error` for the chosen writes while `throttling.on`. */
async function intakeWithThrottle(throttled: ReadonlySet<string>, error: () => Error) {
  const table = `throttle-${++tableNo}`;
  await createTable(dynamo.client, table, true);
  const throttling = { on: true, refused: [] as string[] };
  const client = {
    send: async (command: Command) => {
      const write = writeOf(command);
      if (throttling.on && throttled.has(write)) {
        throttling.refused.push(write);
        throw error();
      }
      return dynamo.doc.send(command as never);
    },
  } as unknown as DynamoDBDocumentClient;
  const outcomes: string[] = [];
  const handler = createIngestHandler({
    schemes: ALL_SCHEMES,
    config,
    store: intakeStore(eventStores({ client, tableName: table })),
    secrets,
    logger: capturingLogger().logger,
    clock: () => NOW,
    onOutcome: (o) => outcomes.push(o),
  });
  const items = async () =>
    ((await dynamo.doc.send(new ScanCommand({ TableName: table, ConsistentRead: true }))).Items ?? []).map((i) => String(i.pk)).sort();
  return { handler, throttling, outcomes, items };
}

const throughputExceeded = () =>
  new ProvisionedThroughputExceededException({
    message: 'The level of configured provisioned throughput for the table was exceeded',
    $metadata: {},
  });
const named = (name: string) => () => Object.assign(new Error('Throughput exceeds the current capacity of your table or index.'), { name });

describe('intake at a burst beyond provisioned capacity', () => {
  it('answers 503 storage_unavailable to every webhook of the burst, stores nothing, and takes each retry once capacity is back', async () => {
    const { handler, throttling, outcomes, items } = await intakeWithThrottle(
      new Set(['registry', 'payload', 'receipt']),
      throughputExceeded,
    );
    const burst = ['evt_01J8K7BST1', 'evt_01J8K7BST2', 'evt_01J8K7BST3'].map((id, i) => {
      const body = JSON.stringify(platformEvent({ id, tenant_id: 'tenant_204' }));
      return { body, headers: signedHeaders(body, { msgId: `msg_burst0${i}` }) };
    });
    const answers = await Promise.all(burst.map((w) => handler(httpEvent('platform', w.body, w.headers))));
    expect(answers.map((a) => a.statusCode)).toEqual([503, 503, 503]);
    expect(answers.map((a) => JSON.parse(a.body!))).toEqual(
      Array(3).fill({ error: 'storage_unavailable', message: 'the event could not be stored; retry later' }),
    );
    expect(outcomes).toEqual(['storage_unavailable', 'storage_unavailable', 'storage_unavailable']);
    expect(throttling.refused).toEqual(['registry', 'registry', 'registry']);
    expect(await items()).toEqual([]);

    // Auto scaling caught up: the providers' retries (same bytes, same message ids) are each one event.
    throttling.on = false;
    const retries = await Promise.all(burst.map((w) => handler(httpEvent('platform', w.body, w.headers))));
    expect(retries.map((r) => r.statusCode)).toEqual([202, 202, 202]);
    expect((await items()).filter((pk) => pk.startsWith('evt#'))).toEqual([
      'evt#platform#evt_01J8K7BST1',
      'evt#platform#evt_01J8K7BST2',
      'evt#platform#evt_01J8K7BST3',
    ]);
  });

  it('leaves no receipt when only the receipt write is throttled (the payload before it is kept for the retry), then records the retry once', async () => {
    const { handler, throttling, items } = await intakeWithThrottle(new Set(['receipt']), throughputExceeded);
    const body = JSON.stringify(platformEvent({ id: 'evt_01J8K7RCP1', tenant_id: 'tenant_311' }));
    const res = await handler(httpEvent('platform', body, signedHeaders(body, { msgId: 'msg_rcpt01' })));
    expect(res.statusCode).toBe(503);
    expect(JSON.parse(res.body!).error).toBe('storage_unavailable');
    expect(throttling.refused).toEqual(['receipt']);
    // No receipt: no event, no delivery set, no window-index entry, nothing for the fan-out. What
    // landed before the throttled write is the tenant-day registry item (idempotent) and the payload,
    // keyed by its body hash: referenced by no receipt, expiring by TTL unless the retry claims it.
    const left = await items();
    expect(left.filter((pk) => pk.startsWith('evt#'))).toEqual([]);
    expect(left.map((pk) => pk.split('#')[0])).toEqual(['pay', 'tday']);

    throttling.on = false;
    const retry = await handler(httpEvent('platform', body, signedHeaders(body, { msgId: 'msg_rcpt01' })));
    expect(retry.statusCode).toBe(202);
    expect(JSON.parse(retry.body!)).toEqual({ event_id: 'evt_01J8K7RCP1', deliveries: 3 });
    const after = await items();
    expect(after.filter((pk) => pk.startsWith('evt#'))).toEqual(['evt#platform#evt_01J8K7RCP1']);
    expect(after.filter((pk) => pk.startsWith('pay#'))).toEqual(left.filter((pk) => pk.startsWith('pay#')));
  });

  it.each([
    ['ThrottlingException', 'payload'],
    ['RequestLimitExceeded', 'registry'],
  ])('answers 503 and stores no receipt for %s on the %s write', async (name, write) => {
    const { handler, throttling, items } = await intakeWithThrottle(new Set([write]), named(name));
    const body = JSON.stringify(platformEvent({ id: 'evt_01J8K7THR9', tenant_id: 'tenant_204' }));
    const res = await handler(httpEvent('platform', body, signedHeaders(body)));
    expect(res.statusCode).toBe(503);
    expect(JSON.parse(res.body!).error).toBe('storage_unavailable');
    expect(throttling.refused).toEqual([write]);
    expect((await items()).filter((pk) => !pk.startsWith('tday#'))).toEqual([]);
  });
});
