import { type DynamoDBClient, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { CreateQueueCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localDynamoClient, localSqsClient } from '../../../local/clients';
import { type DynamoLocal, freePort, type SqsEmulator, startDynamoLocal, startSqsEmulator } from '../../../local/emulators';
import { createLocalStreamsApi, type DynamoStreamsApi, type WireStreamRecord } from '../../../local/streams/dynamodb-streams';
import { createStreamPoller, type PollerScheduler, realScheduler, type StreamPollerOptions } from '../../../local/streams/poller';
import { createEventsTable, eventItem, putItem, receiveAll, recordingLogger, uniqueName, waitFor } from '../support';

let dynamoLocal: DynamoLocal;
let sqsEmulator: SqsEmulator;
let dynamo: DynamoDBClient;
let sqs: SQSClient;
let streams: DynamoStreamsApi;

beforeAll(async () => {
  [dynamoLocal, sqsEmulator] = await Promise.all([
    freePort().then((port) => startDynamoLocal({ port, dbPath: null })),
    freePort().then((port) => startSqsEmulator({ port })),
  ]);
  dynamo = localDynamoClient(dynamoLocal.endpoint);
  sqs = localSqsClient(sqsEmulator.endpoint);
  streams = createLocalStreamsApi({ endpoint: dynamoLocal.endpoint });
});

afterAll(async () => {
  dynamo?.destroy();
  sqs?.destroy();
  await Promise.all([dynamoLocal?.stop(), sqsEmulator?.stop()]);
});

const pks = (event: DynamoDBStreamEvent) => event.Records.map((r) => r.dynamodb?.NewImage?.pk?.S ?? r.dynamodb?.Keys?.pk?.S);
const seq = (record: DynamoDBRecord | undefined) => record?.dynamodb?.SequenceNumber as string;

/** A table with the given items written before the poller starts (so they arrive as one batch). */
async function tableWith(eventIds: string[]): Promise<string> {
  const table = uniqueName('events');
  await createEventsTable(dynamo, table);
  for (const id of eventIds) await putItem(dynamo, table, eventItem(id));
  return table;
}

async function failureQueue(): Promise<string> {
  const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: uniqueName('fanout-failures') }));
  return QueueUrl as string;
}

function poller(table: string, handler: StreamPollerOptions['handler'], extra: Partial<StreamPollerOptions> = {}) {
  return createStreamPoller({
    streams,
    tableName: table,
    handler,
    pollIntervalMs: 50,
    retryDelayMs: 20,
    logger: recordingLogger(),
    ...extra,
  });
}

/**
 * The real timers, with the poller's pending timers and background tasks counted: a test waits until
 * only what it holds is left, or sees that nothing is left to run, instead of sleeping and looking.
 */
function countingScheduler(): { scheduler: PollerScheduler; pending: { timers: number; tasks: number } } {
  const pending = { timers: 0, tasks: 0 };
  const scheduler: PollerScheduler = {
    async sleep(ms, signal) {
      pending.timers += 1;
      try {
        await realScheduler.sleep(ms, signal);
      } finally {
        pending.timers -= 1;
      }
    },
    track(task) {
      pending.tasks += 1;
      return task.finally(() => {
        pending.tasks -= 1;
      });
    },
  };
  return { scheduler, pending };
}

describe('stream poller', () => {
  describe('with the fan-out filter', () => {
    it('delivers only INSERTs whose kind is event or requeue, in the shape Lambda sends', async () => {
      const table = uniqueName('events');
      await createEventsTable(dynamo, table);
      await putItem(
        dynamo,
        table,
        eventItem('evt_01J8K7M2Q4', { digest: { B: new Uint8Array([0xff, 0x00]) }, payloadBytes: { N: '512' } }),
      );
      await putItem(dynamo, table, {
        pk: { S: 'pay#platform#evt_01J8K7M2Q4' },
        kind: { S: 'payload' },
        body: { B: new Uint8Array([0xff, 0x00]) },
      });
      await putItem(dynamo, table, {
        pk: { S: 'rq#rpl_01#platform:evt_01J8K7M2Q4#billing-meter' },
        kind: { S: 'requeue' },
        tenantId: { S: 'tenant_204' },
      });
      await putItem(dynamo, table, { pk: { S: 'key#key_7' }, tenantId: { S: 'tenant_204' } });
      await dynamo.send(
        new UpdateItemCommand({
          TableName: table,
          Key: { pk: { S: 'evt#platform#evt_01J8K7M2Q4' } },
          UpdateExpression: 'SET consumers = :c',
          ExpressionAttributeValues: { ':c': { L: [{ S: 'billing-meter' }] } },
        }),
      );

      const events: DynamoDBStreamEvent[] = [];
      const subject = poller(table, async (event) => void events.push(event), {
        filters: [{ eventName: ['INSERT'], dynamodb: { NewImage: { kind: { S: ['event', 'requeue'] } } } }],
      });
      await subject.start();
      await subject.drained();
      await subject.stop();

      const records = events.flatMap((event) => event.Records);
      expect(records.map((r) => r.dynamodb?.NewImage?.pk?.S)).toEqual([
        'evt#platform#evt_01J8K7M2Q4',
        'rq#rpl_01#platform:evt_01J8K7M2Q4#billing-meter',
      ]);
      const [first] = records;
      expect(first).toMatchObject({
        eventName: 'INSERT',
        eventSource: 'aws:dynamodb',
        awsRegion: 'us-east-1',
        eventSourceARN: expect.stringMatching(new RegExp(`^arn:aws:dynamodb:[^:]+:\\d+:table/${table}/stream/`)),
        dynamodb: {
          Keys: { pk: { S: 'evt#platform#evt_01J8K7M2Q4' } },
          // Binaries as base64 and numbers as strings, as in the JSON Lambda receives.
          NewImage: { kind: { S: 'event' }, tenantId: { S: 'tenant_204' }, digest: { B: '/wA=' }, payloadBytes: { N: '512' } },
          SequenceNumber: expect.any(String),
          StreamViewType: 'NEW_IMAGE',
        },
      });
      const created = first?.dynamodb?.ApproximateCreationDateTime;
      expect(typeof created).toBe('number');
      expect(Math.abs((created as number) - Date.now() / 1000)).toBeLessThan(120);
    });
  });

  describe('with a partial batch response', () => {
    it('checkpoints before the failed record and re-sends it and everything after it', async () => {
      const table = await tableWith(['evt_a', 'evt_b', 'evt_c', 'evt_d']);
      const calls: (string | undefined)[][] = [];
      const subject = poller(table, async (event) => {
        calls.push(pks(event));
        if (calls.length === 1) return { batchItemFailures: [{ itemIdentifier: seq(event.Records[1]) }] };
        return { batchItemFailures: [] };
      });
      await subject.start();
      await subject.drained();
      await subject.stop();

      expect(calls).toEqual([
        ['evt#platform#evt_a', 'evt#platform#evt_b', 'evt#platform#evt_c', 'evt#platform#evt_d'],
        ['evt#platform#evt_b', 'evt#platform#evt_c', 'evt#platform#evt_d'],
      ]);
    });

    it('retries the whole batch when an itemIdentifier is not in the batch', async () => {
      const table = await tableWith(['evt_a', 'evt_b']);
      const calls: (string | undefined)[][] = [];
      const subject = poller(table, async (event) => {
        calls.push(pks(event));
        return calls.length === 1 ? { batchItemFailures: [{ itemIdentifier: '' }] } : undefined;
      });
      await subject.start();
      await subject.drained();
      await subject.stop();

      expect(calls).toEqual([
        ['evt#platform#evt_a', 'evt#platform#evt_b'],
        ['evt#platform#evt_a', 'evt#platform#evt_b'],
      ]);
    });
  });

  describe('when the handler keeps failing', () => {
    it('retries maxRetryAttempts times, sends a metadata-only record to the on-failure queue and moves on', async () => {
      const table = await tableWith(['evt_01J8K7M2Q4', 'evt_01J8K7M2Q5']);
      const queueUrl = await failureQueue();
      const attempts: Record<string, number> = {};
      const subject = poller(
        table,
        async (event) => {
          for (const pk of pks(event)) attempts[pk as string] = (attempts[pk as string] ?? 0) + 1;
          if (pks(event).includes('evt#platform#evt_01J8K7M2Q4')) throw new Error('downstream unavailable');
        },
        { batchSize: 1, maxRetryAttempts: 2, onFailure: { sqs, queueUrl }, functionName: 'hookledger-fanout' },
      );
      await subject.start();
      await subject.drained();
      await subject.stop();

      expect(attempts).toEqual({ 'evt#platform#evt_01J8K7M2Q4': 3, 'evt#platform#evt_01J8K7M2Q5': 1 });
      const [message, ...others] = await receiveAll(sqs, queueUrl, 1);
      expect(others).toEqual([]);
      const body = JSON.parse(message?.Body ?? '{}');
      expect(body).toMatchObject({
        version: '1.0',
        requestContext: {
          condition: 'RetryAttemptsExhausted',
          approximateInvokeCount: 3,
          functionArn: expect.stringMatching(/:function:hookledger-fanout$/),
        },
        responseContext: { statusCode: 200, functionError: 'Unhandled' },
        DDBStreamBatchInfo: {
          batchSize: 1,
          shardId: expect.any(String),
          startSequenceNumber: expect.any(String),
          endSequenceNumber: expect.any(String),
          streamArn: expect.stringContaining(`table/${table}/stream/`),
        },
      });
      expect(body.DDBStreamBatchInfo.startSequenceNumber).toBe(body.DDBStreamBatchInfo.endSequenceNumber);
      // Metadata only, like Lambda: no item data leaves the stream this way.
      expect(message?.Body).not.toContain('tenant_204');
      expect(message?.Body).not.toContain('evt_01J8K7M2Q4');
    });

    it('bisects a failing batch until the poison record is alone, delivering the others', async () => {
      const table = await tableWith(['evt_a', 'evt_b', 'evt_poison', 'evt_d']);
      const queueUrl = await failureQueue();
      const calls: (string | undefined)[][] = [];
      const delivered: (string | undefined)[] = [];
      const subject = poller(
        table,
        async (event) => {
          calls.push(pks(event));
          if (pks(event).includes('evt#platform#evt_poison')) throw new Error('cannot parse');
          delivered.push(...pks(event));
        },
        { bisectBatchOnFunctionError: true, maxRetryAttempts: 0, onFailure: { sqs, queueUrl } },
      );
      await subject.start();
      await subject.drained();
      await subject.stop();

      expect(calls).toEqual([
        ['evt#platform#evt_a', 'evt#platform#evt_b', 'evt#platform#evt_poison', 'evt#platform#evt_d'],
        ['evt#platform#evt_a', 'evt#platform#evt_b'],
        ['evt#platform#evt_poison', 'evt#platform#evt_d'],
        ['evt#platform#evt_poison'],
        ['evt#platform#evt_d'],
      ]);
      expect(delivered).toEqual(['evt#platform#evt_a', 'evt#platform#evt_b', 'evt#platform#evt_d']);
      const [message] = await receiveAll(sqs, queueUrl, 1);
      expect(JSON.parse(message?.Body ?? '{}').DDBStreamBatchInfo.batchSize).toBe(1);
    });

    it('skips records older than maxRecordAgeSeconds without invoking the handler', async () => {
      const table = await tableWith(['evt_01J8K7M2Q4', 'evt_01J8K7M2Q5']);
      const queueUrl = await failureQueue();
      const calls: DynamoDBStreamEvent[] = [];
      const anHourLater = () => Date.now() + 3_600_000;
      const subject = poller(table, async (event) => void calls.push(event), {
        maxRecordAgeSeconds: 60,
        now: anHourLater,
        onFailure: { sqs, queueUrl },
      });
      await subject.start();
      await subject.drained();
      await subject.stop();

      expect(calls).toEqual([]);
      const [message] = await receiveAll(sqs, queueUrl, 1);
      expect(JSON.parse(message?.Body ?? '{}')).toMatchObject({
        requestContext: { condition: 'RecordAgeExceeded', approximateInvokeCount: 0 },
        DDBStreamBatchInfo: { batchSize: 2 },
      });
    });
  });

  describe('after stop and start', () => {
    it('resumes after the last completed record', async () => {
      const table = await tableWith(['evt_01J8K7M2Q4']);
      const seen: (string | undefined)[] = [];
      const subject = poller(table, async (event) => void seen.push(...pks(event)));
      await subject.start();
      await subject.drained();
      await subject.stop();
      await putItem(dynamo, table, eventItem('evt_01J8K7M2Q5'));
      await subject.start();
      await subject.drained();
      await subject.stop();

      expect(seen).toEqual(['evt#platform#evt_01J8K7M2Q4', 'evt#platform#evt_01J8K7M2Q5']);
    });

    it('waits for the batch in flight before stop resolves', async () => {
      const table = await tableWith(['evt_01J8K7M2Q4']);
      let finished = false;
      let entered!: () => void;
      const inHandler = new Promise<void>((resolve) => (entered = resolve));
      const subject = poller(table, async () => {
        entered();
        await new Promise((resolve) => setTimeout(resolve, 300));
        finished = true;
      });
      await subject.start();
      await inHandler;
      await subject.stop();
      expect(finished).toBe(true);
    });
  });
});

describe('stream poller over shards that roll over', () => {
  const STREAM = 'arn:aws:dynamodb:ddblocal:000000000000:table/fake/stream/2026-11-29T22:00:00.000';

  function wire(sequence: number, eventId: string, eventName = 'INSERT'): WireStreamRecord {
    const pk = { S: `evt#platform#${eventId}` };
    return {
      eventID: `e${sequence}`,
      eventName: eventName as WireStreamRecord['eventName'],
      eventVersion: '1.1',
      eventSource: 'aws:dynamodb',
      awsRegion: 'ddblocal',
      dynamodb: {
        ApproximateCreationDateTime: Math.floor(Date.now() / 60_000) * 60,
        Keys: { pk },
        ...(eventName === 'INSERT' ? { NewImage: { pk, kind: { S: 'event' } } } : {}),
        SequenceNumber: String(sequence).padStart(21, '0'),
        StreamViewType: 'NEW_IMAGE',
      },
    };
  }

  /** An in-memory DynamoStreamsApi: shards appear after `from` DescribeStream calls. */
  function fakeStreams(
    shards: { id: string; parent?: string; closed: boolean; from: number; records: WireStreamRecord[] }[],
  ): DynamoStreamsApi {
    let describes = 0;
    return {
      listStreams: async () => ({ Streams: [{ StreamArn: STREAM, TableName: 'fake', StreamLabel: '2026-11-29T22:00:00.000' }] }),
      describeStream: async () => {
        describes += 1;
        const visible = shards
          .filter((s) => s.from <= describes)
          .map((s) => ({ ShardId: s.id, ...(s.parent ? { ParentShardId: s.parent } : {}) }));
        return { StreamDescription: { StreamArn: STREAM, StreamStatus: 'ENABLED', Shards: visible } };
      },
      getShardIterator: async ({ ShardId, ShardIteratorType, SequenceNumber }) => {
        const shard = shards.find((s) => s.id === ShardId);
        const after =
          ShardIteratorType === 'AFTER_SEQUENCE_NUMBER'
            ? (shard?.records.findIndex((r) => r.dynamodb.SequenceNumber === SequenceNumber) ?? -1) + 1
            : 0;
        return { ShardIterator: `${ShardId}|${after}` };
      },
      getRecords: async ({ ShardIterator }) => {
        const [id, at] = ShardIterator.split('|') as [string, string];
        const shard = shards.find((s) => s.id === id);
        const records = shard?.records.slice(Number(at)) ?? [];
        const next = Number(at) + records.length;
        return { Records: records, ...(shard?.closed && records.length === 0 ? {} : { NextShardIterator: `${id}|${next}` }) };
      },
    };
  }

  it('reads a closed parent shard to its end before its child, and finds shards that appear later', async () => {
    const api = fakeStreams([
      { id: 'shardId-child', parent: 'shardId-parent', closed: false, from: 1, records: [wire(3, 'evt_01J8K7M2Q6')] },
      { id: 'shardId-parent', closed: true, from: 1, records: [wire(1, 'evt_01J8K7M2Q4'), wire(2, 'evt_01J8K7M2Q5')] },
      { id: 'shardId-late', closed: false, from: 3, records: [wire(4, 'evt_01J8K7M2Q7')] },
    ]);
    const seen: (string | undefined)[] = [];
    const subject = createStreamPoller({
      streams: api,
      tableName: 'fake',
      handler: async (event) => void seen.push(...pks(event)),
      pollIntervalMs: 10,
      discoveryIntervalMs: 30,
      logger: recordingLogger(),
    });
    await subject.start();
    await waitFor('four records', () => (seen.length >= 4 ? true : undefined), 3000);
    await subject.stop();

    expect(seen).toEqual([
      'evt#platform#evt_01J8K7M2Q4',
      'evt#platform#evt_01J8K7M2Q5',
      'evt#platform#evt_01J8K7M2Q6',
      'evt#platform#evt_01J8K7M2Q7',
    ]);
  });

  it('stop() waits for the shard discovery that a shard read to its end started', async () => {
    const api = fakeStreams([{ id: 'shardId-parent', closed: true, from: 1, records: [wire(1, 'evt_01J8K7M2Q4')] }]);
    let describes = 0;
    let inFlight = 0;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const seen: (string | undefined)[] = [];
    const logger = recordingLogger();
    const { scheduler, pending } = countingScheduler();
    const subject = createStreamPoller({
      streams: {
        ...api,
        // The first DescribeStream is start()'s; the second, the look for children once the parent is read out: held.
        describeStream: async (input) => {
          describes += 1;
          inFlight += 1;
          try {
            if (describes === 2) await gate;
            return await api.describeStream(input);
          } finally {
            inFlight -= 1;
          }
        },
      },
      tableName: 'fake',
      handler: async (event) => void seen.push(...pks(event)),
      pollIntervalMs: 10,
      discoveryIntervalMs: 60_000,
      logger,
      scheduler,
    });
    await subject.start();
    await waitFor('the discovery after the parent shard', () => (describes === 2 ? true : undefined), 3000);
    let stopped = false;
    const stopping = subject.stop().then(() => {
      stopped = true;
    });
    // The discovery loop and the parent's read loop have ended and no timer is pending: the held
    // discovery is all that is left, and stop() is still waiting for it.
    await waitFor('only the held discovery left', () => (pending.tasks === 1 && pending.timers === 0 ? true : undefined), 3000);
    expect(stopped).toBe(false);
    release();
    await stopping;

    expect(pending).toEqual({ timers: 0, tasks: 0 });
    expect(inFlight).toBe(0);
    expect(describes).toBe(2);
    expect(seen).toEqual(['evt#platform#evt_01J8K7M2Q4']);
    expect(logger.lines).toEqual([]);
  });

  it("turns DynamoDB Local's TTL delete record into the REMOVE that AWS sends", async () => {
    const ttlDelete = wire(1, 'evt_01J8K7M2Q4', 'UNKNOWN_TO_SDK_VERSION');
    const records: DynamoDBRecord[] = [];
    const subject = createStreamPoller({
      streams: fakeStreams([{ id: 'shardId-1', closed: false, from: 1, records: [ttlDelete] }]),
      tableName: 'fake',
      handler: async (event) => void records.push(...event.Records),
      filters: [{ eventName: ['REMOVE'] }],
      pollIntervalMs: 10,
      logger: recordingLogger(),
    });
    await subject.start();
    await subject.drained({ settleMs: 0 });
    await subject.stop();

    expect(records).toEqual([
      expect.objectContaining({
        eventName: 'REMOVE',
        awsRegion: 'us-east-1',
        userIdentity: { type: 'Service', principalId: 'dynamodb.amazonaws.com' },
        eventSourceARN: STREAM,
      }),
    ]);
  });
});

// Ctrl-C in a terminal reaches every process of the foreground job: `npm start`'s Node process and
// DynamoDB Local's JVM alike. So while the stack stops, the JVM may already be gone; whatever the
// poller had in flight then fails. Those failures are the stop, not errors: nothing may be printed,
// and stop() must wait for every call it started.
describe('stream poller stopped by a Ctrl-C that DynamoDB Local got too', () => {
  const started: DynamoLocal[] = [];
  afterAll(async () => {
    await Promise.all(started.map((jvm) => jvm.stop()));
  });

  /** A table on a DynamoDB Local of the test's own (this test stops it), its real streams API, observed. */
  async function ownTable(eventIds: string[]) {
    const jvm = await startDynamoLocal({ port: await freePort(), dbPath: null });
    started.push(jvm);
    const client = localDynamoClient(jvm.endpoint);
    const table = uniqueName('events');
    await createEventsTable(client, table);
    for (const id of eventIds) await putItem(client, table, eventItem(id));
    client.destroy();
    const real = createLocalStreamsApi({ endpoint: jvm.endpoint });
    const calls = { inFlight: 0 };
    /** Runs `before` once, on the next call of `operation`, then makes the call. */
    const hooks: Partial<Record<keyof DynamoStreamsApi, () => Promise<void>>> = {};
    const observe =
      <K extends keyof DynamoStreamsApi>(operation: K) =>
      async (input: Parameters<DynamoStreamsApi[K]>[0]): Promise<Awaited<ReturnType<DynamoStreamsApi[K]>>> => {
        calls.inFlight += 1;
        try {
          const before = hooks[operation];
          delete hooks[operation];
          await before?.();
          const call = real[operation] as (input: Parameters<DynamoStreamsApi[K]>[0]) => ReturnType<DynamoStreamsApi[K]>;
          return await call(input);
        } finally {
          calls.inFlight -= 1;
        }
      };
    const api: DynamoStreamsApi = {
      listStreams: observe('listStreams'),
      describeStream: observe('describeStream'),
      getShardIterator: observe('getShardIterator'),
      getRecords: observe('getRecords'),
    };
    return { jvm, table, api, calls, hooks };
  }

  it('a GetRecords in flight when DynamoDB Local went down: stop() waits for it, nothing is logged, nothing is read after', async () => {
    const { jvm, table, api, calls, hooks } = await ownTable(['evt_01J8K7M2Q4']);
    const seen: (string | undefined)[] = [];
    const logger = recordingLogger();
    const { scheduler, pending } = countingScheduler();
    const subject = createStreamPoller({
      streams: api,
      tableName: table,
      handler: async (event) => void seen.push(...pks(event)),
      pollIntervalMs: 20,
      logger,
      scheduler,
    });
    await subject.start();
    await subject.drained();
    expect(seen).toEqual(['evt#platform#evt_01J8K7M2Q4']);

    // Ctrl-C during the next read: the stack's stop() is called and the JVM goes down under the read.
    // stop() first, as the stack's signal handler calls it at once while the JVM takes a while to die:
    // the other way round, the poller's other calls would meet the dying JVM before any stop().
    let stopped: Promise<void> | undefined;
    hooks.getRecords = async () => {
      stopped = subject.stop();
      await jvm.stop();
    };
    await waitFor('the Ctrl-C during a read', () => (stopped ? true : undefined), 5000);
    await stopped;

    expect(calls.inFlight).toBe(0);
    // No loop left and no timer pending: nothing of the poller's can read after the stop.
    expect(pending).toEqual({ timers: 0, tasks: 0 });
    expect(logger.lines).toEqual([]);
  });

  it('a shard discovery in flight when DynamoDB Local went down: stop() waits for it, nothing is logged', async () => {
    const { jvm, table, api, calls, hooks } = await ownTable(['evt_01J8K7M2Q5']);
    const logger = recordingLogger();
    const subject = createStreamPoller({
      streams: api,
      tableName: table,
      handler: async () => undefined,
      pollIntervalMs: 20,
      discoveryIntervalMs: 30,
      logger,
    });
    await subject.start();
    await subject.drained();

    // As above: stop() is called, and the JVM goes down under the discovery's ListStreams.
    let stopped: Promise<void> | undefined;
    hooks.listStreams = async () => {
      stopped = subject.stop();
      await jvm.stop();
    };
    await waitFor('the Ctrl-C during a shard discovery', () => (stopped ? true : undefined), 5000);
    await stopped;

    expect(calls.inFlight).toBe(0);
    expect(logger.lines).toEqual([]);
  });
});
