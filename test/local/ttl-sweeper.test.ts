import { type DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import type { DynamoDBRecord } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localDynamoClient } from '../../local/clients';
import { type DynamoLocal, freePort, startDynamoLocal } from '../../local/emulators';
import { createLocalStreamsApi } from '../../local/streams/dynamodb-streams';
import { createStreamPoller, type StreamPoller } from '../../local/streams/poller';
import { createTtlSweeper } from '../../local/ttl-sweeper';
import { createEventsTable, putItem, recordingLogger, uniqueName, waitFor } from './support';

let dynamoLocal: DynamoLocal;
let dynamo: DynamoDBClient;

beforeAll(async () => {
  dynamoLocal = await startDynamoLocal({ port: await freePort(), dbPath: null });
  dynamo = localDynamoClient(dynamoLocal.endpoint);
});

afterAll(async () => {
  dynamo?.destroy();
  await dynamoLocal?.stop();
});

const HOUR = 3_600_000;
const seconds = (ms: number) => String(Math.floor(ms / 1000));

async function exists(table: string, pk: string): Promise<boolean> {
  const { Item } = await dynamo.send(new GetItemCommand({ TableName: table, Key: { pk: { S: pk } } }));
  return Item !== undefined;
}

/** A poller that collects the REMOVE records of a table. */
function removals(table: string): { poller: StreamPoller; removed: DynamoDBRecord[] } {
  const removed: DynamoDBRecord[] = [];
  const poller = createStreamPoller({
    streams: createLocalStreamsApi({ endpoint: dynamoLocal.endpoint }),
    tableName: table,
    filters: [{ eventName: ['REMOVE'] }],
    handler: async (event) => void removed.push(...event.Records),
    pollIntervalMs: 50,
    logger: recordingLogger(),
  });
  return { poller, removed };
}

describe('TTL sweeper', () => {
  // Items expire an hour from now, so DynamoDB Local's own TTL (real clock) leaves them alone and
  // only the sweeper, told it is two hours later, can delete them.
  it('deletes the items whose numeric expiresAt is before `now`, and the stream shows a REMOVE', async () => {
    const table = uniqueName('events');
    await createEventsTable(dynamo, table);
    const later = Date.now() + 2 * HOUR;
    await putItem(dynamo, table, {
      pk: { S: 'pay#platform#evt_01J8K7M2Q4' },
      kind: { S: 'payload' },
      expiresAt: { N: seconds(Date.now() + HOUR) },
    });
    await putItem(dynamo, table, {
      pk: { S: 'pay#platform#evt_01J8K7M2Q5' },
      kind: { S: 'payload' },
      expiresAt: { N: seconds(later + HOUR) },
    });
    await putItem(dynamo, table, { pk: { S: 'evt#platform#evt_01J8K7M2Q4' }, kind: { S: 'event' }, tenantId: { S: 'tenant_204' } });
    // Not a Number: AWS ignores it, so must we.
    await putItem(dynamo, table, { pk: { S: 'audit#1#a' }, kind: { S: 'audit' }, expiresAt: { S: seconds(Date.now() + HOUR) } });
    const { poller, removed } = removals(table);
    await poller.start();

    const result = await createTtlSweeper({ dynamo, tableName: table }).sweepOnce(later);
    await poller.drained();
    await poller.stop();

    expect(result).toEqual({ expired: 1, deleted: 1 });
    expect(await exists(table, 'pay#platform#evt_01J8K7M2Q4')).toBe(false);
    expect(await exists(table, 'pay#platform#evt_01J8K7M2Q5')).toBe(true);
    expect(await exists(table, 'evt#platform#evt_01J8K7M2Q4')).toBe(true);
    expect(await exists(table, 'audit#1#a')).toBe(true);
    expect(removed).toHaveLength(1);
    expect(removed[0]).toMatchObject({
      eventName: 'REMOVE',
      dynamodb: { Keys: { pk: { S: 'pay#platform#evt_01J8K7M2Q4' } }, StreamViewType: 'NEW_IMAGE' },
    });
    expect(removed[0]?.dynamodb).not.toHaveProperty('NewImage');
  });

  it('sweeps on an interval once started', async () => {
    const table = uniqueName('events');
    await createEventsTable(dynamo, table);
    await putItem(dynamo, table, { pk: { S: 'pay#platform#evt_01J8K7M2Q4' }, expiresAt: { N: seconds(Date.now() + HOUR) } });

    const sweeper = createTtlSweeper({
      dynamo,
      tableName: table,
      intervalMs: 100,
      now: () => Date.now() + 2 * HOUR,
      logger: recordingLogger(),
    });
    sweeper.start();
    try {
      await waitFor('the expired item to go', async () => ((await exists(table, 'pay#platform#evt_01J8K7M2Q4')) ? undefined : true));
    } finally {
      await sweeper.stop();
    }
  });
});

describe("DynamoDB Local's own TTL", () => {
  it('deletes an expired item by itself, and the poller hands it over as a TTL REMOVE like AWS', async () => {
    const table = uniqueName('events');
    await createEventsTable(dynamo, table);
    const { poller, removed } = removals(table);
    await poller.start();
    await putItem(dynamo, table, {
      pk: { S: 'pay#platform#evt_01J8K7M2Q4' },
      kind: { S: 'payload' },
      expiresAt: { N: seconds(Date.now() - 60_000) },
    });

    // Its TTL pass runs about every 10 s.
    await waitFor('the TTL delete on the stream', () => removed[0], 15_000);
    await poller.stop();

    expect(removed[0]).toMatchObject({
      eventName: 'REMOVE',
      userIdentity: { type: 'Service', principalId: 'dynamodb.amazonaws.com' },
      dynamodb: { Keys: { pk: { S: 'pay#platform#evt_01J8K7M2Q4' } } },
    });
    expect(await exists(table, 'pay#platform#evt_01J8K7M2Q4')).toBe(false);
  });
});
