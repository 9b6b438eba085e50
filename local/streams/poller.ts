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
 *    (the rules are listed there), as pure decisions this loop carries out;
 *  - scheduler.ts: the timers and background work, a port a test watches to see nothing is left to run.
 * As the mapping's MaximumBatchingWindowInSeconds, a batching window keeps a shard reading after a read
 * found fewer records than batchSize, until the batch is full or the window has passed since its first
 * record; then the handler gets the batch once. A stop ends the window: what it held is read again
 * after the checkpoint at the next start, never handed over on the way out.
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
import { BATCHING_WINDOW_SECONDS } from '../../core/config/consumer-rules';
import { LOCAL_REGION } from '../clients';
import { consoleLogger, describe, type PollerLogger } from '../support';
import { type BatchPolicy, type BatchRun, type Outcome, onFailureRecord, outcomeOf, type SkipStep, startBatch } from './batch-policy';
import type { CheckpointStore } from './checkpoints';
import type { DynamoStreamsApi } from './dynamodb-streams';
import { StreamPollerError } from './errors';
import { compileFilters, type FilterPattern } from './filter-criteria';
import { toLambdaRecord } from './records';
import { type PollerScheduler, realScheduler } from './scheduler';
import { createShardReader, type ShardReader, type ShardState } from './shard-reader';

export type { CheckpointStore } from './checkpoints';
export { StreamPollerError } from './errors';
export { TTL_IDENTITY } from './records';
export { type PollerScheduler, realScheduler } from './scheduler';

export type StreamHandler = (event: DynamoDBStreamEvent) => Promise<DynamoDBBatchResponse | void>;

export interface StreamPollerOptions {
  readonly streams: DynamoStreamsApi;
  readonly tableName: string;
  readonly handler: StreamHandler;
  /** Lambda FilterCriteria patterns (objects, or the JSON strings Lambda stores). Default: none, all records. */
  readonly filters?: readonly (FilterPattern | string)[];
  /** Default 100 (Lambda's default for streams). */
  readonly batchSize?: number;
  /** `MaximumBatchingWindowInSeconds`, 0-300: how long a batch that is not full keeps gathering. Default 0. */
  readonly batchingWindowSeconds?: number;
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
  /**
   * The poller's timers and background work. Default `realScheduler`; a test passes one that counts
   * them, to wait until nothing of the poller's is left to run.
   */
  readonly scheduler?: PollerScheduler;
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

/** The defaults and limits of the options above, in one place. */
const DEFAULTS = {
  /** Lambda's default for streams. */
  batchSize: 100,
  /** Lambda polls each shard 4 times a second. */
  pollIntervalMs: 250,
  retryDelayMs: 200,
  discoveryIntervalMs: 1000,
  functionName: 'local-stream-handler',
  /** The wait before reading again after an unexpected read error, or sending again to the on-failure queue. */
  failureRetryMs: 1000,
  /** DynamoDB Local shows a write on the stream after 10-20 ms. */
  drainSettleMs: 100,
  drainTimeoutMs: 15_000,
  /** How often drained() looks again between the reads and batches that wake it. */
  drainCheckMs: 25,
} as const;
/** Lambda's limit on a stream mapping's batch size. */
const MAX_BATCH_SIZE = 10_000;

const defaultLogger = consoleLogger('stream-poller');

/** The options with their defaults filled in: what every step reads. */
interface PollerSettings {
  readonly tableName: string;
  readonly handler: StreamHandler;
  readonly batchSize: number;
  /** The batching window, ms; 0: none. */
  readonly windowMs: number;
  readonly policy: BatchPolicy;
  readonly reportFailures: boolean;
  readonly onFailure: StreamPollerOptions['onFailure'];
  readonly region: string;
  readonly functionArn: string;
  readonly pollIntervalMs: number;
  readonly retryDelayMs: number;
  readonly discoveryIntervalMs: number;
  readonly now: () => number;
  readonly logger: PollerLogger;
  readonly scheduler: PollerScheduler;
}

/** One poller: its settings, its reader, and what runs between start() and stop(). */
interface PollerState {
  readonly settings: PollerSettings;
  readonly reader: ShardReader;
  running: boolean;
  everStarted: boolean;
  stopSignal: AbortController;
  discoveryLoop: Promise<void> | undefined;
  /** Shard discoveries started by a shard read to its end (the loop's own are awaited by the loop). */
  readonly discoveries: Set<Promise<void>>;
  /** drained() calls looking again whenever a read or a batch ends. */
  readonly waiters: Set<() => void>;
}

export function createStreamPoller(options: StreamPollerOptions): StreamPoller {
  const state = newPoller(options);
  return {
    start: () => startPolling(state),
    stop: () => stopPolling(state),
    drained: (drainOptions) => waitDrained(state, drainOptions),
  };
}

function settingsOf(options: StreamPollerOptions): PollerSettings {
  const batchSize = options.batchSize ?? DEFAULTS.batchSize;
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > MAX_BATCH_SIZE) {
    throw new StreamPollerError(`batchSize must be an integer from 1 to ${MAX_BATCH_SIZE}, got ${batchSize}`);
  }
  const windowSeconds = options.batchingWindowSeconds ?? 0;
  const { min, max } = BATCHING_WINDOW_SECONDS;
  if (!Number.isInteger(windowSeconds) || windowSeconds < min || windowSeconds > max) {
    throw new StreamPollerError(`batchingWindowSeconds must be an integer from ${min} to ${max}, got ${windowSeconds}`);
  }
  const region = options.region ?? LOCAL_REGION;
  return {
    tableName: options.tableName,
    handler: options.handler,
    batchSize,
    windowMs: windowSeconds * 1000,
    policy: {
      maxRetryAttempts: options.maxRetryAttempts ?? -1,
      maxRecordAgeSeconds: options.maxRecordAgeSeconds ?? -1,
      bisectBatchOnFunctionError: options.bisectBatchOnFunctionError ?? false,
    },
    reportFailures: options.reportBatchItemFailures ?? true,
    onFailure: options.onFailure,
    region,
    functionArn: `arn:aws:lambda:${region}:000000000000:function:${options.functionName ?? DEFAULTS.functionName}`,
    pollIntervalMs: options.pollIntervalMs ?? DEFAULTS.pollIntervalMs,
    retryDelayMs: options.retryDelayMs ?? DEFAULTS.retryDelayMs,
    discoveryIntervalMs: options.discoveryIntervalMs ?? DEFAULTS.discoveryIntervalMs,
    now: options.now ?? Date.now,
    logger: options.logger ?? defaultLogger,
    scheduler: options.scheduler ?? realScheduler,
  };
}

function newPoller(options: StreamPollerOptions): PollerState {
  const settings = settingsOf(options);
  const { region } = settings;
  const matches = compileFilters(options.filters);
  const reader = createShardReader({
    streams: options.streams,
    tableName: options.tableName,
    checkpoints: options.checkpoints,
    startingPosition: options.startingPosition ?? 'TRIM_HORIZON',
    logger: settings.logger,
    accept(wire, streamArn) {
      const record = toLambdaRecord(wire, { streamArn, region, readAt: settings.now() });
      return matches(record) ? record : undefined;
    },
  });
  return {
    settings,
    reader,
    running: false,
    everStarted: false,
    stopSignal: new AbortController(),
    discoveryLoop: undefined,
    discoveries: new Set(),
    waiters: new Set(),
  };
}

function notify(state: PollerState): void {
  for (const check of [...state.waiters]) check();
}

/** Waits `ms`, or less when stop() is called meanwhile. */
function pause(state: PollerState, ms: number): Promise<void> {
  return state.settings.scheduler.sleep(ms, state.stopSignal.signal);
}

/** Logs an error unless stop() was called: then the failure is the stop (storage going down with it). */
function failed(state: PollerState, message: string, extra: Record<string, unknown>): void {
  if (state.running) state.settings.logger.error(message, extra);
}

async function startPolling(state: PollerState): Promise<void> {
  if (state.running) return;
  state.running = true;
  state.stopSignal = new AbortController();
  try {
    await discover(state, true);
  } catch (error) {
    state.running = false;
    throw error;
  }
  state.everStarted = true;
  state.discoveryLoop = state.settings.scheduler.track(rediscoverEvery(state));
}

async function rediscoverEvery(state: PollerState): Promise<void> {
  while (state.running) {
    await pause(state, state.settings.discoveryIntervalMs);
    if (!state.running) break;
    await discover(state, false).catch((error: unknown) => failed(state, 'shard discovery failed', { error: describe(error) }));
  }
}

async function stopPolling(state: PollerState): Promise<void> {
  if (!state.running) return;
  state.running = false;
  state.stopSignal.abort();
  // Until nothing runs: a discovery in flight may have started a shard's loop before it saw the stop.
  for (;;) {
    const loops = state.reader.shards().map((shard) => shard.loop);
    const pending = [state.discoveryLoop, ...state.discoveries, ...loops].filter((p) => p !== undefined);
    if (pending.length === 0) break;
    await Promise.allSettled(pending);
    state.discoveryLoop = undefined;
  }
  notify(state);
}

function discoverInBackground(state: PollerState): void {
  const discovery: Promise<void> = state.settings.scheduler
    .track(discover(state, false).catch((error: unknown) => failed(state, 'shard discovery failed', { error: describe(error) })))
    .finally(() => state.discoveries.delete(discovery));
  state.discoveries.add(discovery);
}

async function discover(state: PollerState, firstPass: boolean): Promise<void> {
  const arn = await state.reader.refresh();
  if (!arn) {
    throw new StreamPollerError(`table ${state.settings.tableName} has no stream; enable NEW_IMAGE streams on it`);
  }
  for (const shard of state.reader.startable()) {
    if (!state.running) break;
    shard.loop = state.settings.scheduler.track(runShard(state, arn, shard, firstPass && !state.everStarted));
  }
  notify(state);
}

/** One shard's loop: read, hand batches to the handler, until the shard is read to its end or the poller stops. */
async function runShard(state: PollerState, arn: string, shard: ShardState, initial: boolean): Promise<void> {
  try {
    await state.reader.openIterator(arn, shard, initial);
  } catch (error) {
    failed(state, 'GetShardIterator failed', { shardId: shard.shardId, error: describe(error) });
    shard.loop = undefined;
    return;
  }
  while (state.running && !shard.finished) {
    try {
      await readOrHandle(state, arn, shard);
    } catch (error) {
      if (!state.running) break;
      if (!(await state.reader.recover(arn, shard, error))) {
        failed(state, 'reading the stream failed; retrying', { shardId: shard.shardId, error: describe(error) });
        await pause(state, DEFAULTS.failureRetryMs);
      }
    } finally {
      shard.busy = false;
      notify(state);
    }
  }
  state.reader.release(shard);
  shard.loop = undefined;
}

/**
 * One turn of a shard's loop: with nothing buffered, read (or, once the shard is read to its end,
 * finish it and look for its children); else hand the next batch to the handler.
 */
async function readOrHandle(state: PollerState, arn: string, shard: ShardState): Promise<void> {
  if (shard.buffer.length === 0) {
    if (shard.closed || !shard.iterator) {
      shard.finished = true;
      discoverInBackground(state);
      return;
    }
    if (await state.reader.read(arn, shard)) {
      notify(state);
      if (!shard.closed) await pause(state, state.settings.pollIntervalMs);
    }
    if (shard.buffer.length > 0) shard.heldSince = Date.now();
    return;
  }
  if (await gathered(state, arn, shard)) return;
  shard.busy = true;
  const batch = shard.buffer.slice(0, state.settings.batchSize);
  const done = await processBatch(state, arn, shard, batch);
  state.reader.complete(arn, shard, batch, done);
  if (shard.buffer.length === 0) shard.heldSince = undefined;
}

/**
 * The batching window: while the buffered batch is not full, the shard still open and the window not
 * passed since the first record, waits a poll interval (less at the window's end) and reads again.
 * True when it read (the caller's loop looks again); false when the batch is to be handed over now.
 */
async function gathered(state: PollerState, arn: string, shard: ShardState): Promise<boolean> {
  const { windowMs, batchSize, pollIntervalMs } = state.settings;
  if (windowMs === 0 || shard.buffer.length >= batchSize || shard.closed || !shard.iterator) return false;
  const left = (shard.heldSince ?? Date.now()) + windowMs - Date.now();
  if (left <= 0) return false;
  await pause(state, Math.min(pollIntervalMs, left));
  // Stopped meanwhile: the loop ends and releases the shard; what it held is read again at the next start.
  if (!state.running) return true;
  await state.reader.read(arn, shard);
  return true;
}

/** Carries out the batch policy's steps; returns how many leading records are done (all unless stopped). */
async function processBatch(state: PollerState, arn: string, shard: ShardState, batch: DynamoDBRecord[]): Promise<number> {
  const run: BatchRun = startBatch(batch, state.settings.policy);
  while (!run.finished) {
    if (!state.running) return run.done;
    const step = run.next(state.settings.now);
    if (step.kind === 'skip') {
      if (!(await skip(state, arn, shard, batch, step))) return run.done;
      run.skipped(step);
      continue;
    }
    const records = batch.slice(step.start, step.end);
    const outcome = await invoke(state.settings, records);
    if (outcome.kind === 'error') {
      failed(state, 'stream handler failed', { shardId: shard.shardId, records: records.length, error: describe(outcome.error) });
    }
    const after = run.invoked(outcome);
    if (after.kind === 'skip') {
      if (!(await skip(state, arn, shard, batch, after))) return run.done;
      run.skipped(after);
    } else if (after.kind === 'retry') {
      await pause(state, state.settings.retryDelayMs);
    }
  }
  return run.done;
}

async function invoke(settings: PollerSettings, records: DynamoDBRecord[]): Promise<Outcome> {
  let response: DynamoDBBatchResponse | void;
  try {
    // Each invocation gets its own copy, as each Lambda invocation gets its own JSON.
    response = await settings.handler({ Records: structuredClone(records) });
  } catch (error) {
    return { kind: 'error', error };
  }
  return outcomeOf(records, response, settings.reportFailures);
}

/** Reports skipped records; false when stopped before the on-failure queue took them. */
async function skip(state: PollerState, arn: string, shard: ShardState, batch: DynamoDBRecord[], step: SkipStep): Promise<boolean> {
  const { settings } = state;
  const invocationRecord = onFailureRecord(batch, step, {
    requestId: randomUUID(),
    functionArn: settings.functionArn,
    shardId: shard.shardId,
    streamArn: arn,
    nowMs: settings.now(),
  });
  settings.logger.warn('skipping stream records', { condition: step.condition, ...invocationRecord.DDBStreamBatchInfo });
  if (!settings.onFailure) return true;
  const { sqs, queueUrl } = settings.onFailure;
  // Keep trying: locally the failure queue is the only trace of the skipped records. When stopped
  // first, the records stay unskipped and are read again at the next start.
  while (state.running) {
    try {
      await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: JSON.stringify(invocationRecord) }));
      return true;
    } catch (error) {
      failed(state, 'sending to the on-failure queue failed; retrying', { queueUrl, error: describe(error) });
      await pause(state, DEFAULTS.failureRetryMs);
    }
  }
  return false;
}

function caughtUp(state: PollerState, since: number): boolean {
  const shards = state.reader.shards();
  const active = shards.filter((shard) => !shard.finished);
  if (shards.length === 0) return false;
  return active.every((shard) => shard.loop !== undefined && !shard.busy && shard.buffer.length === 0 && shard.caughtUpAt >= since);
}

function waitDrained(state: PollerState, drainOptions: DrainOptions = {}): Promise<void> {
  const since = Date.now() + (drainOptions.settleMs ?? DEFAULTS.drainSettleMs);
  const timeoutMs = drainOptions.timeoutMs ?? DEFAULTS.drainTimeoutMs;
  return new Promise<void>((resolve, reject) => {
    const finish = (error?: Error) => {
      clearTimeout(timer);
      clearInterval(ticker);
      state.waiters.delete(check);
      if (error) reject(error);
      else resolve();
    };
    const check = () => {
      if (!state.running) finish(new StreamPollerError('the stream poller is not running'));
      else if (Date.now() >= since && caughtUp(state, since)) finish();
    };
    const timer = setTimeout(() => {
      const pending = state.reader.shards().map((s) => ({ shardId: s.shardId, buffered: s.buffer.length, busy: s.busy }));
      finish(new StreamPollerError(`stream not drained after ${timeoutMs} ms: ${JSON.stringify(pending)}`));
    }, timeoutMs);
    const ticker = setInterval(check, DEFAULTS.drainCheckMs);
    state.waiters.add(check);
    check();
  });
}
