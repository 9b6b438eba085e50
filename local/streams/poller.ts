/**
 * Plays Lambda's DynamoDB-stream event source mapping for one handler: discovers the table's stream
 * and shards (a child shard starts once its parent is read to the end), reads each shard in order,
 * drops records that match no filter, and invokes the handler with batches in Lambda's event shape.
 *
 * Failure handling follows Lambda:
 *  - a thrown error fails the whole batch; so does a partial response naming an empty or unknown
 *    itemIdentifier;
 *  - a partial batch response checkpoints before the lowest failed sequence number and retries from
 *    there, re-sending everything after it;
 *  - with bisectBatchOnFunctionError, a thrown error splits the batch in halves (splits do not count
 *    as retries);
 *  - after maxRetryAttempts retries, or once a record is older than maxRecordAgeSeconds, the records
 *    are skipped and a metadata-only record (no item data, like Lambda's) goes to the on-failure
 *    queue.
 * Checkpoints live in memory: stop() then start() resumes after the last completed record.
 *
 * DynamoDB Local differences made good here: `awsRegion` (it says "ddblocal"), the minute-truncated
 * ApproximateCreationDateTime, and its TTL deletes (see toLambdaRecord).
 */
import { randomUUID } from 'node:crypto';
import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { LOCAL_REGION } from '../clients';
import type { DynamoStreamsApi, WireShard, WireStreamRecord } from './dynamodb-streams';
import { compileFilters, type FilterPattern } from './filter-criteria';
import { describe, type PollerLogger, sleep as sleepFor } from '../support';

export type StreamHandler = (event: DynamoDBStreamEvent) => Promise<DynamoDBBatchResponse | void>;

export interface StreamPollerOptions {
  readonly streams: DynamoStreamsApi;
  readonly tableName: string;
  readonly handler: StreamHandler;
  /** Lambda FilterCriteria patterns (objects, or the JSON strings Lambda stores). Default: none, all records. */
  readonly filters?: readonly (FilterPattern | string)[];
  /** Default 100 (Lambda's default for streams). */
  readonly batchSize?: number;
  /** Retries of a failing batch before it is skipped. Default -1: forever, like Lambda. */
  readonly maxRetryAttempts?: number;
  /** Records older than this are skipped. Default -1: never, like Lambda. */
  readonly maxRecordAgeSeconds?: number;
  /** Default false, like Lambda. */
  readonly bisectBatchOnFunctionError?: boolean;
  /** Whether `batchItemFailures` is honoured (FunctionResponseTypes ReportBatchItemFailures). Default true. */
  readonly reportBatchItemFailures?: boolean;
  /** Lambda's OnFailure destination. Default: skipped records are only logged. */
  readonly onFailure?: { readonly sqs: SQSClient; readonly queueUrl: string };
  /** Named in the on-failure record's functionArn. Default 'local-stream-handler'. */
  readonly functionName?: string;
  /** `awsRegion` of every record. Default us-east-1 (DynamoDB Local says "ddblocal"). */
  readonly region?: string;
  /** Where to start on shards open at the first start(). Default TRIM_HORIZON. */
  readonly startingPosition?: 'TRIM_HORIZON' | 'LATEST';
  /** Wait after an empty GetRecords. Default 250 ms (Lambda polls each shard 4 times a second). */
  readonly pollIntervalMs?: number;
  /** Wait before retrying a failed batch. Default 200 ms. */
  readonly retryDelayMs?: number;
  /** How often the shard list is refreshed. Default 1000 ms. */
  readonly discoveryIntervalMs?: number;
  /** Epoch milliseconds. Default Date.now. */
  readonly now?: () => number;
  readonly logger?: PollerLogger;
  /**
   * Where shard checkpoints outlive the process (Lambda keeps them in the event source mapping).
   * Default: memory only, so a new process reads the stream again from TRIM_HORIZON.
   */
  readonly checkpoints?: CheckpointStore;
}

/** Durable shard checkpoints: the last sequence number done with, per stream and shard. */
export interface CheckpointStore {
  load(streamArn: string, shardId: string): string | undefined;
  save(streamArn: string, shardId: string, sequenceNumber: string | undefined): void;
}

export interface DrainOptions {
  /** Records written within this long before the call are still waited for. Default 100 ms (DynamoDB Local shows them after 10-20 ms). */
  readonly settleMs?: number;
  /** Default 15 s. */
  readonly timeoutMs?: number;
}

export interface StreamPoller {
  start(): Promise<void>;
  /** Stops polling; waits for the batch in flight (it is not retried until the next start). */
  stop(): Promise<void>;
  /** Resolves once every shard has been read to its current end and the handler is idle. */
  drained(options?: DrainOptions): Promise<void>;
}

export class StreamPollerError extends Error {
  override readonly name = 'StreamPollerError';
}

type Outcome = { kind: 'ok' } | { kind: 'partial'; index: number } | { kind: 'error'; error: unknown };

interface Segment {
  start: number;
  end: number;
  retries: number;
  invocations: number;
  lastError: 'Unhandled' | undefined;
}

interface ShardState {
  readonly shardId: string;
  readonly parentShardId: string | undefined;
  iterator: string | undefined;
  /** Last sequence number read from the shard. */
  lastRead: string | undefined;
  /** Last sequence number done with (handled, filtered out or skipped): restarts go after it. */
  checkpoint: string | undefined;
  buffer: DynamoDBRecord[];
  closed: boolean;
  finished: boolean;
  busy: boolean;
  /** Start time of the latest GetRecords that found nothing while the buffer was empty. */
  caughtUpAt: number;
  loop: Promise<void> | undefined;
}

/** The userIdentity of a stream record written by a TTL delete on AWS. */
export const TTL_IDENTITY = { type: 'Service', principalId: 'dynamodb.amazonaws.com' } as const;

const consoleLogger: PollerLogger = {
  warn: (message, extra) => console.warn(`[stream-poller] ${message}`, extra ?? ''),
  error: (message, extra) => console.error(`[stream-poller] ${message}`, extra ?? ''),
};

export function createStreamPoller(options: StreamPollerOptions): StreamPoller {
  const batchSize = options.batchSize ?? 100;
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 10_000) {
    throw new StreamPollerError(`batchSize must be an integer from 1 to 10000, got ${batchSize}`);
  }
  const maxRetryAttempts = options.maxRetryAttempts ?? -1;
  const maxRecordAgeSeconds = options.maxRecordAgeSeconds ?? -1;
  const bisect = options.bisectBatchOnFunctionError ?? false;
  const reportFailures = options.reportBatchItemFailures ?? true;
  const region = options.region ?? LOCAL_REGION;
  const pollIntervalMs = options.pollIntervalMs ?? 250;
  const retryDelayMs = options.retryDelayMs ?? 200;
  const discoveryIntervalMs = options.discoveryIntervalMs ?? 1000;
  const now = options.now ?? Date.now;
  const logger = options.logger ?? consoleLogger;
  const functionArn = `arn:aws:lambda:${region}:000000000000:function:${options.functionName ?? 'local-stream-handler'}`;
  const matches = compileFilters(options.filters);
  const { streams } = options;

  let streamArn: string | undefined;
  let shards = new Map<string, ShardState>();
  let running = false;
  let everStarted = false;
  let stopSignal = new AbortController();
  let discoveryLoop: Promise<void> | undefined;
  const waiters = new Set<() => void>();

  const notify = () => {
    for (const check of [...waiters]) check();
  };

  const sleep = (ms: number) => sleepFor(ms, stopSignal.signal);

  async function latestStreamArn(): Promise<string | undefined> {
    let latest: { StreamArn: string; StreamLabel: string } | undefined;
    let start: string | undefined;
    do {
      const page = await streams.listStreams({ TableName: options.tableName, ExclusiveStartStreamArn: start });
      for (const stream of page.Streams ?? []) {
        if (!latest || stream.StreamLabel > latest.StreamLabel) latest = stream;
      }
      start = page.LastEvaluatedStreamArn;
    } while (start);
    return latest?.StreamArn;
  }

  async function listShards(arn: string): Promise<WireShard[]> {
    const all: WireShard[] = [];
    let start: string | undefined;
    do {
      const page = await streams.describeStream({ StreamArn: arn, ExclusiveStartShardId: start });
      all.push(...(page.StreamDescription.Shards ?? []));
      start = page.StreamDescription.LastEvaluatedShardId;
    } while (start);
    return all;
  }

  async function discover(firstPass: boolean): Promise<void> {
    const arn = await latestStreamArn();
    if (!arn) throw new StreamPollerError(`table ${options.tableName} has no stream; enable NEW_IMAGE streams on it`);
    if (arn !== streamArn) {
      // A new stream (table re-created or stream re-enabled): start it from the beginning.
      if (streamArn !== undefined) {
        logger.warn('stream changed; reading the new stream from TRIM_HORIZON', { from: streamArn, to: arn });
        for (const shard of shards.values()) shard.finished = true;
        shards = new Map();
      }
      streamArn = arn;
    }
    for (const wire of await listShards(arn)) {
      if (!shards.has(wire.ShardId)) shards.set(wire.ShardId, newShard(wire, options.checkpoints?.load(arn, wire.ShardId)));
    }
    for (const shard of shards.values()) {
      if (!running) break;
      if (shard.loop || shard.finished) continue;
      const parent = shard.parentShardId ? shards.get(shard.parentShardId) : undefined;
      // Lambda reads a parent shard to its end before its children, so per-key order holds.
      if (parent && !parent.finished) continue;
      shard.loop = runShard(arn, shard, firstPass && !everStarted);
    }
    notify();
  }

  function setCheckpoint(arn: string, shard: ShardState, sequenceNumber: string | undefined): void {
    if (shard.checkpoint === sequenceNumber) return;
    shard.checkpoint = sequenceNumber;
    options.checkpoints?.save(arn, shard.shardId, sequenceNumber);
  }

  function newShard(wire: WireShard, checkpoint: string | undefined): ShardState {
    return {
      shardId: wire.ShardId,
      parentShardId: wire.ParentShardId,
      iterator: undefined,
      lastRead: undefined,
      checkpoint,
      buffer: [],
      closed: false,
      finished: false,
      busy: false,
      caughtUpAt: -Infinity,
      loop: undefined,
    };
  }

  async function acquireIterator(arn: string, shard: ShardState, initial: boolean): Promise<void> {
    const after = shard.lastRead ?? shard.checkpoint;
    const request = after
      ? { StreamArn: arn, ShardId: shard.shardId, ShardIteratorType: 'AFTER_SEQUENCE_NUMBER' as const, SequenceNumber: after }
      : {
          StreamArn: arn,
          ShardId: shard.shardId,
          ShardIteratorType: initial ? (options.startingPosition ?? 'TRIM_HORIZON') : ('TRIM_HORIZON' as const),
        };
    const { ShardIterator } = await streams.getShardIterator(request);
    if (!ShardIterator) shard.closed = true;
    shard.iterator = ShardIterator;
  }

  async function runShard(arn: string, shard: ShardState, initial: boolean): Promise<void> {
    try {
      await acquireIterator(arn, shard, initial);
    } catch (error) {
      logger.error('GetShardIterator failed', { shardId: shard.shardId, error: describe(error) });
      shard.loop = undefined;
      return;
    }
    while (running && !shard.finished) {
      try {
        if (shard.buffer.length === 0) {
          if (shard.closed || !shard.iterator) {
            shard.finished = true;
            void discover(false).catch((error: unknown) => logger.error('shard discovery failed', { error: describe(error) }));
            break;
          }
          await readShard(arn, shard);
          continue;
        }
        shard.busy = true;
        const batch = shard.buffer.slice(0, batchSize);
        const done = await processBatch(arn, shard, batch);
        shard.buffer.splice(0, done);
        if (done > 0) setCheckpoint(arn, shard, batch[done - 1]?.dynamodb?.SequenceNumber);
        if (done === batch.length && shard.buffer.length === 0 && shard.lastRead) setCheckpoint(arn, shard, shard.lastRead);
      } catch (error) {
        await handleReadError(arn, shard, error);
      } finally {
        shard.busy = false;
        notify();
      }
    }
    // On stop, what was read but not done is read again after the checkpoint at the next start.
    shard.buffer = [];
    shard.lastRead = undefined;
    shard.iterator = undefined;
    shard.loop = undefined;
  }

  async function readShard(arn: string, shard: ShardState): Promise<void> {
    const startedAt = Date.now();
    const page = await streams.getRecords({ ShardIterator: shard.iterator as string, Limit: 1000 });
    shard.iterator = page.NextShardIterator;
    if (!page.NextShardIterator) shard.closed = true;
    const records = page.Records ?? [];
    for (const wire of records) {
      shard.lastRead = wire.dynamodb.SequenceNumber;
      const record = toLambdaRecord(wire, arn);
      if (matches(record)) shard.buffer.push(record);
      else if (shard.buffer.length === 0) setCheckpoint(arn, shard, shard.lastRead); // Lambda drops it: done.
    }
    if (records.length === 0 && shard.buffer.length === 0) {
      shard.caughtUpAt = startedAt;
      notify();
      if (!shard.closed) await sleep(pollIntervalMs);
    }
  }

  async function handleReadError(arn: string, shard: ShardState, error: unknown): Promise<void> {
    const name = error instanceof Error ? error.name : undefined;
    if (name === 'ExpiredIteratorException') {
      await acquireIterator(arn, shard, false).catch(() => undefined);
      return;
    }
    if (name === 'TrimmedDataAccessException') {
      logger.warn('records were trimmed before they were read; continuing from TRIM_HORIZON', { shardId: shard.shardId });
      shard.lastRead = undefined;
      setCheckpoint(arn, shard, undefined);
      await acquireIterator(arn, shard, false).catch(() => undefined);
      return;
    }
    if (name === 'ResourceNotFoundException') {
      shard.finished = true;
      return;
    }
    logger.error('reading the stream failed; retrying', { shardId: shard.shardId, error: describe(error) });
    await sleep(1000);
  }

  function toLambdaRecord(wire: WireStreamRecord, arn: string): DynamoDBRecord {
    const firstSeen = Math.floor(now() / 1000);
    const truncated = wire.dynamodb.ApproximateCreationDateTime;
    // DynamoDB Local truncates the time to the minute; when the record is first read within that
    // minute, the read time is the better approximation (AWS gives whole seconds).
    const approximate =
      truncated === undefined ? firstSeen : firstSeen >= truncated && firstSeen < truncated + 60 ? firstSeen : truncated;
    // DynamoDB Local (3.3.0) runs TTL itself, about every 10 s, and writes those deletes to the
    // stream as eventName "UNKNOWN_TO_SDK_VERSION" without userIdentity. AWS writes a REMOVE
    // carrying the TTL service's identity, which is what the handler gets here.
    const ttlDelete = (wire.eventName as string) === 'UNKNOWN_TO_SDK_VERSION' && wire.dynamodb.NewImage === undefined;
    const userIdentity = ttlDelete ? TTL_IDENTITY : wire.userIdentity;
    return {
      eventID: wire.eventID,
      eventName: ttlDelete ? 'REMOVE' : wire.eventName,
      eventVersion: wire.eventVersion,
      eventSource: 'aws:dynamodb',
      awsRegion: region,
      dynamodb: { ...wire.dynamodb, ApproximateCreationDateTime: approximate },
      eventSourceARN: arn,
      ...(userIdentity ? { userIdentity: { ...userIdentity } } : {}),
    };
  }

  /** Returns how many leading records of the batch are done (all of them unless stopped). */
  async function processBatch(arn: string, shard: ShardState, batch: DynamoDBRecord[]): Promise<number> {
    const segments: Segment[] = [{ start: 0, end: batch.length, retries: 0, invocations: 0, lastError: undefined }];
    let done = 0;
    while (segments.length > 0) {
      const segment = segments[0] as Segment;
      if (!running) return done;

      const expired = countExpired(batch, segment);
      if (expired > 0) {
        if (!(await skip(arn, shard, batch.slice(segment.start, segment.start + expired), 'RecordAgeExceeded', segment))) return done;
        segment.start += expired;
        done = segment.start;
        if (segment.start >= segment.end) segments.shift();
        continue;
      }

      const records = batch.slice(segment.start, segment.end);
      segment.invocations += 1;
      const outcome = await invoke(records);
      if (outcome.kind === 'ok') {
        done = segment.end;
        segments.shift();
        continue;
      }
      if (outcome.kind === 'error') {
        logger.error('stream handler failed', { shardId: shard.shardId, records: records.length, error: describe(outcome.error) });
        segment.lastError = 'Unhandled';
        if (bisect && records.length > 1) {
          const middle = segment.start + Math.ceil(records.length / 2);
          const halves: Segment[] = [
            { start: segment.start, end: middle, retries: segment.retries, invocations: 0, lastError: undefined },
            { start: middle, end: segment.end, retries: segment.retries, invocations: 0, lastError: undefined },
          ];
          segments.splice(0, 1, ...halves);
          continue;
        }
      } else {
        segment.lastError = undefined;
        segment.start += outcome.index;
        done = segment.start;
      }
      segment.retries += 1;
      if (maxRetryAttempts >= 0 && segment.retries > maxRetryAttempts) {
        if (!(await skip(arn, shard, batch.slice(segment.start, segment.end), 'RetryAttemptsExhausted', segment))) return done;
        done = segment.end;
        segments.shift();
        continue;
      }
      await sleep(retryDelayMs);
    }
    return done;
  }

  function countExpired(batch: DynamoDBRecord[], segment: Segment): number {
    if (maxRecordAgeSeconds < 0) return 0;
    const oldest = now() / 1000 - maxRecordAgeSeconds;
    let count = 0;
    for (let i = segment.start; i < segment.end; i += 1) {
      const created = batch[i]?.dynamodb?.ApproximateCreationDateTime ?? Infinity;
      if (created >= oldest) break;
      count += 1;
    }
    return count;
  }

  async function invoke(records: DynamoDBRecord[]): Promise<Outcome> {
    let response: DynamoDBBatchResponse | void;
    try {
      // Each invocation gets its own copy, as each Lambda invocation gets its own JSON.
      response = await options.handler({ Records: structuredClone(records) });
    } catch (error) {
      return { kind: 'error', error };
    }
    if (!reportFailures || !response || !Array.isArray(response.batchItemFailures)) return { kind: 'ok' };
    if (response.batchItemFailures.length === 0) return { kind: 'ok' };
    const positions = new Map(records.map((record, i) => [record.dynamodb?.SequenceNumber, i]));
    let lowest = Infinity;
    for (const failure of response.batchItemFailures) {
      const id: unknown = failure?.itemIdentifier;
      const position = typeof id === 'string' && id !== '' ? positions.get(id) : undefined;
      if (position === undefined) {
        // Lambda treats a malformed partial response as a failure of the whole batch.
        return { kind: 'error', error: new StreamPollerError(`batchItemFailures names an unknown itemIdentifier ${JSON.stringify(id)}`) };
      }
      lowest = Math.min(lowest, position);
    }
    return { kind: 'partial', index: lowest };
  }

  async function skip(
    arn: string,
    shard: ShardState,
    records: DynamoDBRecord[],
    condition: 'RetryAttemptsExhausted' | 'RecordAgeExceeded',
    segment: Segment,
  ): Promise<boolean> {
    const first = records[0];
    const last = records[records.length - 1];
    const arrival = (record: DynamoDBRecord | undefined) =>
      new Date((record?.dynamodb?.ApproximateCreationDateTime ?? 0) * 1000).toISOString().replace('.000Z', 'Z');
    const invocationRecord = {
      requestContext: { requestId: randomUUID(), functionArn, condition, approximateInvokeCount: segment.invocations },
      responseContext: {
        statusCode: 200,
        executedVersion: '$LATEST',
        ...(segment.lastError ? { functionError: segment.lastError } : {}),
      },
      version: '1.0',
      timestamp: new Date(now()).toISOString(),
      DDBStreamBatchInfo: {
        shardId: shard.shardId,
        startSequenceNumber: first?.dynamodb?.SequenceNumber,
        endSequenceNumber: last?.dynamodb?.SequenceNumber,
        approximateArrivalOfFirstRecord: arrival(first),
        approximateArrivalOfLastRecord: arrival(last),
        batchSize: records.length,
        streamArn: arn,
      },
    };
    logger.warn('skipping stream records', { condition, ...invocationRecord.DDBStreamBatchInfo });
    if (!options.onFailure) return true;
    const { sqs, queueUrl } = options.onFailure;
    // Keep trying: locally the failure queue is the only trace of the skipped records. When stopped
    // first, the records stay unskipped and are read again at the next start.
    while (running) {
      try {
        await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: JSON.stringify(invocationRecord) }));
        return true;
      } catch (error) {
        logger.error('sending to the on-failure queue failed; retrying', { queueUrl, error: describe(error) });
        await sleep(1000);
      }
    }
    return false;
  }

  function caughtUp(since: number): boolean {
    const active = [...shards.values()].filter((shard) => !shard.finished);
    if (shards.size === 0) return false;
    return active.every((shard) => shard.loop !== undefined && !shard.busy && shard.buffer.length === 0 && shard.caughtUpAt >= since);
  }

  return {
    async start() {
      if (running) return;
      running = true;
      stopSignal = new AbortController();
      try {
        await discover(true);
      } catch (error) {
        running = false;
        throw error;
      }
      everStarted = true;
      discoveryLoop = (async () => {
        while (running) {
          await sleep(discoveryIntervalMs);
          if (!running) break;
          await discover(false).catch((error: unknown) => logger.error('shard discovery failed', { error: describe(error) }));
        }
      })();
    },

    async stop() {
      if (!running) return;
      running = false;
      stopSignal.abort();
      await Promise.all([discoveryLoop, ...[...shards.values()].map((shard) => shard.loop)]);
      discoveryLoop = undefined;
      notify();
    },

    drained(drainOptions = {}) {
      const since = Date.now() + (drainOptions.settleMs ?? 100);
      const timeoutMs = drainOptions.timeoutMs ?? 15_000;
      return new Promise<void>((resolve, reject) => {
        const finish = (error?: Error) => {
          clearTimeout(timer);
          clearInterval(ticker);
          waiters.delete(check);
          if (error) reject(error);
          else resolve();
        };
        const check = () => {
          if (!running) finish(new StreamPollerError('the stream poller is not running'));
          else if (Date.now() >= since && caughtUp(since)) finish();
        };
        const timer = setTimeout(() => {
          const pending = [...shards.values()].map((s) => ({ shardId: s.shardId, buffered: s.buffer.length, busy: s.busy }));
          finish(new StreamPollerError(`stream not drained after ${timeoutMs} ms: ${JSON.stringify(pending)}`));
        }, timeoutMs);
        const ticker = setInterval(check, 25);
        waiters.add(check);
        check();
      });
    },
  };
}
