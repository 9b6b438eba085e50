import { CreateTableCommand, DescribeTableCommand, DescribeTimeToLiveCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetQueueAttributesCommand, SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineConfig, type HookledgerConfigInput } from '../../core/config/schema';
import config from '../../hookledger.config';
import { localDynamoClient, localSqsClient } from '../../local/clients';
import { type DynamoLocal, freePort, type SqsEmulator, startDynamoLocal, startSqsEmulator } from '../../local/emulators';
import { ProvisionError, provisionLocalStack } from '../../local/provision';
import { receiveAll, uniqueName } from './support';

let dynamoLocal: DynamoLocal;
let sqsEmulator: SqsEmulator;
let dynamo: DynamoDBClient;
let sqs: SQSClient;

beforeAll(async () => {
  [dynamoLocal, sqsEmulator] = await Promise.all([
    freePort().then((port) => startDynamoLocal({ port, dbPath: null })),
    freePort().then((port) => startSqsEmulator({ port })),
  ]);
  dynamo = localDynamoClient(dynamoLocal.endpoint);
  sqs = localSqsClient(sqsEmulator.endpoint);
});

afterAll(async () => {
  dynamo?.destroy();
  sqs?.destroy();
  await Promise.all([dynamoLocal?.stop(), sqsEmulator?.stop()]);
});

async function attributes(url: string): Promise<Record<string, string>> {
  const all = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['All'] }));
  // fauxqs stores RedriveAllowPolicy but leaves it out of 'All': ask for it by name.
  const named = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['RedriveAllowPolicy'] }));
  return { ...all.Attributes, ...named.Attributes };
}

function tableNames() {
  return { events: uniqueName('EventStore'), ledger: uniqueName('Ledger') };
}

describe('provisionLocalStack', () => {
  it('gives the EventStore the window index, and adds it to an EventStore made before it', async () => {
    const index = {
      IndexName: 'byTenantDay',
      KeySchema: [
        { AttributeName: 'wpk', KeyType: 'HASH' },
        { AttributeName: 'wsk', KeyType: 'RANGE' },
      ],
      Projection: {
        ProjectionType: 'INCLUDE',
        NonKeyAttributes: [
          'kind',
          'source',
          'eventId',
          'eventType',
          'tenantId',
          'keyId',
          'consumers',
          'receivedAt',
          'secretVersion',
          'shards',
        ],
      },
    };
    const fresh = tableNames();
    await provisionLocalStack({ config, dynamo, sqs, tables: fresh, queuePrefix: `${uniqueName('hl')}-` });
    const made = (await dynamo.send(new DescribeTableCommand({ TableName: fresh.events }))).Table;
    expect(made?.GlobalSecondaryIndexes?.map(({ IndexName, KeySchema, Projection }) => ({ IndexName, KeySchema, Projection }))).toEqual([
      index,
    ]);
    expect((await dynamo.send(new DescribeTableCommand({ TableName: fresh.ledger }))).Table?.GlobalSecondaryIndexes).toBeUndefined();

    // An EventStore from before the index (as an earlier `npm start` made it): provisioning adds it.
    const old = tableNames();
    await dynamo.send(
      new CreateTableCommand({
        TableName: old.events,
        AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
        KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
        BillingMode: 'PAY_PER_REQUEST',
        StreamSpecification: { StreamEnabled: true, StreamViewType: 'NEW_IMAGE' },
      }),
    );
    await provisionLocalStack({ config, dynamo, sqs, tables: old, queuePrefix: `${uniqueName('hl')}-` });
    const upgraded = (await dynamo.send(new DescribeTableCommand({ TableName: old.events }))).Table;
    expect(upgraded?.GlobalSecondaryIndexes?.map(({ IndexName, KeySchema, Projection }) => ({ IndexName, KeySchema, Projection }))).toEqual(
      [index],
    );
    // Once there, a second run leaves it as it is.
    await provisionLocalStack({ config, dynamo, sqs, tables: old, queuePrefix: `${uniqueName('hl')}-` });
    expect((await dynamo.send(new DescribeTableCommand({ TableName: old.events }))).Table?.GlobalSecondaryIndexes).toHaveLength(1);
  });

  it('creates the tables, a queue and DLQ per consumer and the fan-out failure queue from the config', async () => {
    const tables = tableNames();
    const prefix = `${uniqueName('hl')}-`;
    const stack = await provisionLocalStack({ config, dynamo, sqs, tables, queuePrefix: prefix });

    const events = (await dynamo.send(new DescribeTableCommand({ TableName: tables.events }))).Table;
    expect(events?.KeySchema).toEqual([{ AttributeName: 'pk', KeyType: 'HASH' }]);
    expect(events?.StreamSpecification).toEqual({ StreamEnabled: true, StreamViewType: 'NEW_IMAGE' });
    const ttl = await dynamo.send(new DescribeTimeToLiveCommand({ TableName: tables.events }));
    expect(ttl.TimeToLiveDescription).toMatchObject({ AttributeName: 'expiresAt', TimeToLiveStatus: 'ENABLED' });
    const ledger = (await dynamo.send(new DescribeTableCommand({ TableName: tables.ledger }))).Table;
    expect(ledger?.KeySchema).toEqual([{ AttributeName: 'pk', KeyType: 'HASH' }]);

    expect(Object.keys(stack.queues)).toEqual(config.consumers.map((c) => c.id));
    for (const consumer of config.consumers) {
      const queue = stack.queues[consumer.id];
      const attrs = await attributes(queue?.url as string);
      expect(attrs.QueueArn).toBe(queue?.arn);
      expect(attrs.VisibilityTimeout).toBe(String(consumer.visibilityTimeoutSeconds));
      expect(JSON.parse(attrs.RedrivePolicy ?? '{}')).toEqual({
        deadLetterTargetArn: queue?.dlqArn,
        maxReceiveCount: consumer.maxReceiveCount,
      });
      const dlq = await attributes(queue?.dlqUrl as string);
      expect(dlq.QueueArn).toBe(queue?.dlqArn);
      expect(JSON.parse(dlq.RedriveAllowPolicy ?? '{}')).toEqual({ redrivePermission: 'byQueue', sourceQueueArns: [queue?.arn] });
    }
    expect((await attributes(stack.fanoutFailureQueue.url)).QueueArn).toBe(stack.fanoutFailureQueue.arn);

    // The URLs work with the endpoint-bound client (their host is only an identifier).
    await sqs.send(new SendMessageCommand({ QueueUrl: stack.queues['billing-meter']?.url, MessageBody: 'evt_01J8K7M2Q4' }));
    expect((await receiveAll(sqs, stack.queues['billing-meter']?.url as string, 1))[0]?.Body).toBe('evt_01J8K7M2Q4');
  });

  it('is idempotent, and a second run brings changed consumer settings in line', async () => {
    const tables = tableNames();
    const prefix = `${uniqueName('hl')}-`;
    const first = await provisionLocalStack({ config, dynamo, sqs, tables, queuePrefix: prefix });
    const again = await provisionLocalStack({ config, dynamo, sqs, tables, queuePrefix: prefix });
    expect(again).toEqual(first);

    const input = structuredClone(config) as HookledgerConfigInput;
    input.consumers = input.consumers.map((c) =>
      c.id === 'risk-evaluator' ? { ...c, maxReceiveCount: 7, visibilityTimeoutSeconds: 120 } : c,
    );
    const changed = await provisionLocalStack({ config: defineConfig(input), dynamo, sqs, tables, queuePrefix: prefix });

    expect(changed).toEqual(first);
    const attrs = await attributes(changed.queues['risk-evaluator']?.url as string);
    expect(attrs.VisibilityTimeout).toBe('120');
    expect(JSON.parse(attrs.RedrivePolicy ?? '{}').maxReceiveCount).toBe(7);
  });

  it('refuses a table that exists under another key (id, not pk) with a ProvisionError naming it and the fix', async () => {
    const tables = tableNames();
    await dynamo.send(
      new CreateTableCommand({
        TableName: tables.events,
        AttributeDefinitions: [{ AttributeName: 'id', AttributeType: 'S' }],
        KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
        BillingMode: 'PAY_PER_REQUEST',
      }),
    );
    const provisioned = provisionLocalStack({ config, dynamo, sqs, tables, queuePrefix: `${uniqueName('hl')}-` });
    await expect(provisioned).rejects.toBeInstanceOf(ProvisionError);
    await expect(provisioned).rejects.toThrow(`table ${tables.events} exists with key schema id:HASH, expected pk:HASH`);
    await expect(provisioned).rejects.toThrow('delete the table (or the data folder) or choose other table names');
  });
});
