/**
 * Plays Lambda's DynamoDB-stream event source mapping for one handler: discovers the table's stream
 * and shards (a child shard starts once its parent is read to the end), reads each shard in order,
 * drops records that match no filter, and invokes the handler with batches in Lambda's event shape.
 *
 * This file only composes and runs the parts, one loop per shard:
 *  - shard-reader.ts: streams, shards, iterators, the shard buffers and checkpoints;
 *  - records.ts: the record Lambda would send for each wire record;
 *  - filter-criteria.ts: which records the handler gets at all;
 *  - batch-policy.ts: bisect, retries, maximum record age and what the on-failure queue is told
 *    (the rules are listed there), as pure decisions this loop carries out.
 * Checkpoints live in memory unless a CheckpointStore is given: stop() then start() resumes after
 * the last completed record.
 *
 * stop() waits for every call it started (reads, shard discoveries, the batch with the handler), and
 * what fails once stop() was called is not logged: that is the stop itself. On Ctrl-C the terminal
 * signals DynamoDB Local's JVM too, so its calls in flight then fail with ECONNREFUSED; the records
 * not done are read again after the checkpoint at the next start.
 */
import { randomUUID } from 'node:crypto';
import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { LOCAL_REGION } from '../clients';
import { consoleLogger, describe, type PollerLogger, sleep as sleepFor } from '../support';
import { type BatchRun, type Outcome, onFailureRecord, outcomeOf, type SkipStep, startBatch } from './batch-policy';
import type { CheckpointStore } from './checkpoints';
import type { DynamoStreamsApi } from './dynamodb-streams';
import { StreamPollerError } from './errors';
import { compileFilters, type FilterPattern } from './filter-criteria';
import { toLambdaRecord } from './records';
import { createShardReader, type ShardState } from './shard-reader';

export type { CheckpointStore } from './checkpoints';
export { StreamPollerError } from './errors';
export { TTL_IDENTITY } from './records';

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

export interface DrainOptions {
  /** Records written within this long before the call are still waited for. Default 100 ms (DynamoDB Local shows them after 10-20 ms). */
  readonly settleMs?: number;
  /** Default 15 s. */
  readonly timeoutMs?: number;
}

export interface StreamPoller {
  start(): Promise<void>;
  /**
   * Stops polling; waits for every read and shard discovery in flight and for the batch with the
   * handler (it is not retried until the next start). Failures after this call are not logged.
   */
  stop(): Promise<void>;
  /** Resolves once every shard has been read to its current end and the handler is idle. */
  drained(options?: DrainOptions): Promise<void>;
}

const defaultLogger = consoleLogger('stream-poller');

export function createStreamPoller(options: StreamPollerOptions): StreamPoller {
  const batchSize = options.batchSize ?? 100;
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 10_000) {
    throw new StreamPollerError(`batchSize must be an integer from 1 to 10000, got ${batchSize}`);
  }
  const policy = {
    maxRetryAttempts: options.maxRetryAttempts ?? -1,
    maxRecordAgeSeconds: options.maxRecordAgeSeconds ?? -1,
    bisectBatchOnFunctionError: options.bisectBatchOnFunctionError ?? false,
  };
  const reportFailures = options.reportBatchItemFailures ?? true;
  const region = options.region ?? LOCAL_REGION;
  const pollIntervalMs = options.pollIntervalMs ?? 250;
  const retryDelayMs = options.retryDelayMs ?? 200;
  const discoveryIntervalMs = options.discoveryIntervalMs ?? 1000;
  const now = options.now ?? Date.now;
  const logger = options.logger ?? defaultLogger;
  const functionArn = `arn:aws:lambda:${region}:000000000000:function:${options.functionName ?? 'local-stream-handler'}`;
  const matches = compileFilters(options.filters);
  const reader = createShardReader({
    streams: options.streams,
    tableName: options.tableName,
    checkpoints: options.checkpoints,
    startingPosition: options.startingPosition ?? 'TRIM_HORIZON',
    logger,
    accept(wire, streamArn) {
      const record = toLambdaRecord(wire, { streamArn, region, readAt: now() });
      return matches(record) ? record : undefined;
    },
  });

  let running = false;
  let everStarted = false;
  let stopSignal = new AbortController();
  let discoveryLoop: Promise<void> | undefined;
  /** Shard discoveries started by a shard read to its end (the loop's own are awaited by the loop). */
  const discoveries = new Set<Promise<void>>();
  const waiters = new Set<() => void>();

  const notify = () => {
    for (const check of [...waiters]) check();
  };

  const sleep = (ms: number) => sleepFor(ms, stopSignal.signal);

  /** Logs an error unless stop() was called: then the failure is the stop (storage going down with it). */
  const failed = (message: string, extra: Record<string, unknown>) => {
    if (running) logger.error(message, extra);
  };

  function discoverInBackground(): void {
    const discovery = discover(false)
      .catch((error: unknown) => failed('shard discovery failed', { error: describe(error) }))
      .finally(() => discoveries.delete(discovery));
    discoveries.add(discovery);
  }

  async function discover(firstPass: boolean): Promise<void> {
    const arn = await reader.refresh();
    if (!arn) throw new StreamPollerError(`table ${options.tableName} has no stream; enable NEW_IMAGE streams on it`);
    for (const shard of reader.startable()) {
      if (!running) break;
      shard.loop = runShard(arn, shard, firstPass && !everStarted);
    }
    notify();
  }

  async function runShard(arn: string, shard: ShardState, initial: boolean): Promise<void> {
    try {
      await reader.openIterator(arn, shard, initial);
    } catch (error) {
      failed('GetShardIterator failed', { shardId: shard.shardId, error: describe(error) });
      shard.loop = undefined;
      return;
    }
    while (running && !shard.finished) {
      try {
        if (shard.buffer.length === 0) {
          if (shard.closed || !shard.iterator) {
            shard.finished = true;
            discoverInBackground();
            break;
          }
          if (await reader.read(arn, shard)) {
            notify();
            if (!shard.closed) await sleep(pollIntervalMs);
          }
          continue;
        }
        shard.busy = true;
        const batch = shard.buffer.slice(0, batchSize);
        const done = await processBatch(arn, shard, batch);
        reader.complete(arn, shard, batch, done);
      } catch (error) {
        if (!running) break;
        if (!(await reader.recover(arn, shard, error))) {
          failed('reading the stream failed; retrying', { shardId: shard.shardId, error: describe(error) });
          await sleep(1000);
        }
      } finally {
        shard.busy = false;
        notify();
      }
    }
    reader.release(shard);
    shard.loop = undefined;
  }

  /** Carries out the batch policy's steps; returns how many leading records are done (all unless stopped). */
  async function processBatch(arn: string, shard: ShardState, batch: DynamoDBRecord[]): Promise<number> {
    const run: BatchRun = startBatch(batch, policy);
    while (!run.finished) {
      if (!running) return run.done;
      const step = run.next(now);
      if (step.kind === 'skip') {
        if (!(await skip(arn, shard, batch, step))) return run.done;
        run.skipped(step);
        continue;
      }
      const records = batch.slice(step.start, step.end);
      const outcome = await invoke(records);
      if (outcome.kind === 'error') {
        failed('stream handler failed', { shardId: shard.shardId, records: records.length, error: describe(outcome.error) });
      }
      const after = run.invoked(outcome);
      if (after.kind === 'skip') {
        if (!(await skip(arn, shard, batch, after))) return run.done;
        run.skipped(after);
      } else if (after.kind === 'retry') {
        await sleep(retryDelayMs);
      }
    }
    return run.done;
  }

  async function invoke(records: DynamoDBRecord[]): Promise<Outcome> {
    let response: DynamoDBBatchResponse | void;
    try {
      // Each invocation gets its own copy, as each Lambda invocation gets its own JSON.
      response = await options.handler({ Records: structuredClone(records) });
    } catch (error) {
      return { kind: 'error', error };
    }
    return outcomeOf(records, response, reportFailures);
  }

  /** Reports skipped records; false when stopped before the on-failure queue took them. */
  async function skip(arn: string, shard: ShardState, batch: DynamoDBRecord[], step: SkipStep): Promise<boolean> {
    const invocationRecord = onFailureRecord(batch, step, {
      requestId: randomUUID(),
      functionArn,
      shardId: shard.shardId,
      streamArn: arn,
      nowMs: now(),
    });
    logger.warn('skipping stream records', { condition: step.condition, ...invocationRecord.DDBStreamBatchInfo });
    if (!options.onFailure) return true;
    const { sqs, queueUrl } = options.onFailure;
    // Keep trying: locally the failure queue is the only trace of the skipped records. When stopped
    // first, the records stay unskipped and are read again at the next start.
    while (running) {
      try {
        await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: JSON.stringify(invocationRecord) }));
        return true;
      } catch (error) {
        failed('sending to the on-failure queue failed; retrying', { queueUrl, error: describe(error) });
        await sleep(1000);
      }
    }
    return false;
  }

  function caughtUp(since: number): boolean {
    const shards = reader.shards();
    const active = shards.filter((shard) => !shard.finished);
    if (shards.length === 0) return false;
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
          await discover(false).catch((error: unknown) => failed('shard discovery failed', { error: describe(error) }));
        }
      })();
    },

    async stop() {
      if (!running) return;
      running = false;
      stopSignal.abort();
      // Until nothing runs: a discovery in flight may have started a shard's loop before it saw the stop.
      for (;;) {
        const pending = [discoveryLoop, ...discoveries, ...reader.shards().map((shard) => shard.loop)].filter((p) => p !== undefined);
        if (pending.length === 0) break;
        await Promise.allSettled(pending);
        discoveryLoop = undefined;
      }
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
          const pending = reader.shards().map((s) => ({ shardId: s.shardId, buffered: s.buffer.length, busy: s.busy }));
          finish(new StreamPollerError(`stream not drained after ${timeoutMs} ms: ${JSON.stringify(pending)}`));
        }, timeoutMs);
        const ticker = setInterval(check, 25);
        waiters.add(check);
        check();
      });
    },
  };
}
