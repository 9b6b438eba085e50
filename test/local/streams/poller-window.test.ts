/**
 * The stream poller's batching window (Lambda's MaximumBatchingWindowInSeconds on a stream mapping):
 * after a read finds records but fewer than batchSize, the shard keeps reading until the batch is
 * full or the window has passed since its first record, then invokes once. Played over an in-memory
 * stream whose records the test publishes one read at a time.
 */
import type { DynamoDBStreamEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import type { DynamoStreamsApi, WireStreamRecord } from '../../../local/streams/dynamodb-streams';
import {
  createStreamPoller,
  type PollerScheduler,
  realScheduler,
  StreamPollerError,
  type StreamPollerOptions,
} from '../../../local/streams/poller';
import { recordingLogger, waitFor } from '../support';

const STREAM = 'arn:aws:dynamodb:ddblocal:000000000000:table/events/stream/2026-12-02T11:00:00.000';

function wire(sequence: number, eventId: string): WireStreamRecord {
  const pk = { S: `evt#platform#${eventId}` };
  return {
    eventID: `e${sequence}`,
    eventName: 'INSERT',
    eventVersion: '1.1',
    eventSource: 'aws:dynamodb',
    awsRegion: 'ddblocal',
    dynamodb: {
      ApproximateCreationDateTime: Math.floor(Date.now() / 60_000) * 60,
      Keys: { pk },
      NewImage: { pk, kind: { S: 'event' }, tenantId: { S: 'tenant_204' } },
      SequenceNumber: String(sequence).padStart(21, '0'),
      StreamViewType: 'NEW_IMAGE',
    },
  };
}

/**
 * One open shard: `publish` appends a record; `served(n)` resolves once reads have returned n records
 * in all (counting a record read again after a restart), and says when the first of them was returned.
 */
function liveStream() {
  const records: WireStreamRecord[] = [];
  let served = 0;
  let firstServedAt: number | undefined;
  const waiting: { count: number; resolve: () => void }[] = [];
  const api: DynamoStreamsApi = {
    listStreams: async () => ({ Streams: [{ StreamArn: STREAM, TableName: 'events', StreamLabel: '2026-12-02T11:00:00.000' }] }),
    describeStream: async () => ({ StreamDescription: { StreamArn: STREAM, StreamStatus: 'ENABLED', Shards: [{ ShardId: 'shardId-1' }] } }),
    getShardIterator: async ({ ShardIteratorType, SequenceNumber }) => {
      const after =
        ShardIteratorType === 'AFTER_SEQUENCE_NUMBER' ? records.findIndex((r) => r.dynamodb.SequenceNumber === SequenceNumber) + 1 : 0;
      return { ShardIterator: `shardId-1|${after}` };
    },
    getRecords: async ({ ShardIterator }) => {
      const at = Number(ShardIterator.split('|')[1]);
      const page = records.slice(at);
      if (page.length > 0) {
        firstServedAt ??= Date.now();
        served += page.length;
        for (const w of waiting.filter((w) => served >= w.count)) w.resolve();
      }
      return { Records: page, NextShardIterator: `shardId-1|${at + page.length}` };
    },
  };
  let sequence = 0;
  return {
    api,
    publish: (eventId: string) => records.push(wire(++sequence, eventId)),
    served: (count: number) => (served >= count ? Promise.resolve() : new Promise<void>((resolve) => waiting.push({ count, resolve }))),
    firstServedAt: () => firstServedAt,
  };
}

/** The real timers, counting the poller's pending timers and background tasks. */
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

const ids = (event: DynamoDBStreamEvent) => event.Records.map((r) => r.dynamodb?.NewImage?.pk?.S?.replace('evt#platform#', ''));

function windowedPoller(api: DynamoStreamsApi, extra: Partial<StreamPollerOptions> & Pick<StreamPollerOptions, 'handler'>) {
  return createStreamPoller({
    streams: api,
    tableName: 'events',
    pollIntervalMs: 20,
    discoveryIntervalMs: 60_000,
    logger: recordingLogger(),
    ...extra,
  });
}

describe('stream poller with a batching window', () => {
  it('gathers evt_01J8K7M2Q4..Q6, read one at a time, into one batch handed over once 1 s has passed since the first', async () => {
    const stream = liveStream();
    const batches: { ids: (string | undefined)[]; at: number }[] = [];
    const subject = windowedPoller(stream.api, {
      batchingWindowSeconds: 1,
      handler: async (event) => void batches.push({ ids: ids(event), at: Date.now() }),
    });
    await subject.start();
    stream.publish('evt_01J8K7M2Q4');
    await stream.served(1);
    stream.publish('evt_01J8K7M2Q5');
    await stream.served(2);
    stream.publish('evt_01J8K7M2Q6');
    await stream.served(3);
    await waitFor('the batch', () => (batches.length > 0 ? true : undefined), 5000);
    await subject.drained({ settleMs: 0 });
    await subject.stop();

    expect(batches.map((b) => b.ids)).toEqual([['evt_01J8K7M2Q4', 'evt_01J8K7M2Q5', 'evt_01J8K7M2Q6']]);
    // Timers may fire a millisecond or two early; the window is counted from the first record's read.
    expect(batches[0]!.at - stream.firstServedAt()!).toBeGreaterThanOrEqual(980);
  });

  it('hands over a batch as soon as it is full (batchSize 3), long before its 300 s window', async () => {
    const stream = liveStream();
    const batches: (string | undefined)[][] = [];
    const subject = windowedPoller(stream.api, {
      batchingWindowSeconds: 300,
      batchSize: 3,
      handler: async (event) => void batches.push(ids(event)),
    });
    await subject.start();
    stream.publish('evt_01J8K7M2Q4');
    await stream.served(1);
    stream.publish('evt_01J8K7M2Q5');
    await stream.served(2);
    stream.publish('evt_01J8K7M2Q6');
    await waitFor('the full batch', () => (batches.length > 0 ? true : undefined), 5000);
    await subject.stop();

    expect(batches).toEqual([['evt_01J8K7M2Q4', 'evt_01J8K7M2Q5', 'evt_01J8K7M2Q6']]);
  });

  it('resolves drained() only once the records held in the window have been handed over', async () => {
    const stream = liveStream();
    const batches: (string | undefined)[][] = [];
    const subject = windowedPoller(stream.api, { batchingWindowSeconds: 1, handler: async (event) => void batches.push(ids(event)) });
    await subject.start();
    stream.publish('evt_01J8K7M2Q4');
    await stream.served(1);
    await subject.drained({ settleMs: 0 });
    const atDrain = batches.map((b) => [...b]);
    await subject.stop();

    expect(atDrain).toEqual([['evt_01J8K7M2Q4']]);
  });

  it('holds nothing after stop: stop() ends a 300 s window at once, invokes nothing, and the next start reads the record again', async () => {
    const stream = liveStream();
    const batches: (string | undefined)[][] = [];
    const { scheduler, pending } = countingScheduler();
    const subject = windowedPoller(stream.api, {
      batchingWindowSeconds: 300,
      batchSize: 2,
      scheduler,
      handler: async (event) => void batches.push(ids(event)),
    });
    await subject.start();
    stream.publish('evt_01J8K7M2Q4');
    await stream.served(1);
    const stopping = Date.now();
    await subject.stop();

    expect(Date.now() - stopping).toBeLessThan(5000);
    expect(batches).toEqual([]);
    // No loop left and no timer pending: nothing of the poller's holds the record any more.
    expect(pending).toEqual({ timers: 0, tasks: 0 });

    // Read again after the checkpoint (none yet): with the next record the batch of 2 is full.
    await subject.start();
    await stream.served(2);
    stream.publish('evt_01J8K7M2Q5');
    await waitFor('the batch after the restart', () => (batches.length > 0 ? true : undefined), 5000);
    await subject.stop();

    expect(batches).toEqual([['evt_01J8K7M2Q4', 'evt_01J8K7M2Q5']]);
  });

  it.each([-1, 301, 0.5])('refuses batchingWindowSeconds %s', (bad) => {
    expect(() => windowedPoller(liveStream().api, { batchingWindowSeconds: bad, handler: async () => undefined })).toThrow(
      new StreamPollerError(`batchingWindowSeconds must be an integer from 0 to 300, got ${bad}`),
    );
  });
});
