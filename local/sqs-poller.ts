/**
 * Plays Lambda's SQS event source mapping for one handler: up to `maxConcurrency` batches in
 * parallel, each from one ReceiveMessage, handed over as an SQSEvent. After the handler returns,
 * the messages it did not list in `batchItemFailures` are deleted. A thrown error, or a partial
 * response naming an empty or unknown itemIdentifier, fails the whole batch: nothing is deleted.
 * Failed messages are left alone (visibility untouched), so they come back after the visibility
 * timeout and the queue's RedrivePolicy moves them to the DLQ after maxReceiveCount, as on AWS.
 * As the mapping's `MaximumBatchingWindowInSeconds`, a batching window keeps receiving after the
 * first messages until the batch is full or the window has passed; as its `FilterCriteria`, filters
 * match each message (its body as JSON when it is JSON) and the ones no filter matches are deleted
 * without reaching the handler, as Lambda deletes them.
 */
import {
  DeleteMessageBatchCommand,
  type Message,
  type MessageAttributeValue,
  ReceiveMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent, SQSMessageAttributes, SQSRecord } from 'aws-lambda';
import { BATCHING_WINDOW_SECONDS } from '../core/config/consumer-rules';
import { HookledgerError } from '../core/errors';
import { LOCAL_REGION } from './clients';
import { compileFilters, type FilterPattern, type RecordFilter } from './streams/filter-criteria';
import { consoleLogger, describe, type PollerLogger, sleep } from './support';

export type SqsHandler = (event: SQSEvent) => Promise<SQSBatchResponse | void>;

export interface SqsPollerOptions {
  readonly sqs: SQSClient;
  readonly queueUrl: string;
  /** `eventSourceARN` of every record. */
  readonly queueArn: string;
  readonly handler: SqsHandler;
  /** Messages per batch: 1-10 (one ReceiveMessage), up to 10,000 with a batching window. Default 10. */
  readonly batchSize?: number;
  /** `MaximumBatchingWindowInSeconds`, 0-300: how long to keep gathering a batch that is not full. Default 0. */
  readonly batchingWindowSeconds?: number;
  /** `FilterCriteria` patterns (objects, or the JSON strings Lambda stores); none lets every message through. */
  readonly filters?: readonly (FilterPattern | string)[];
  /** Batches in flight at once. Default 2 (Lambda's minimum maximum concurrency). */
  readonly maxConcurrency?: number;
  /** Long-poll wait. Default 1 s: short, so stop() and pause() are quick. */
  readonly waitTimeSeconds?: number;
  /** Whether `batchItemFailures` is honoured (FunctionResponseTypes ReportBatchItemFailures). Default true. */
  readonly reportBatchItemFailures?: boolean;
  /** `awsRegion` of every record. Default us-east-1. */
  readonly region?: string;
  readonly logger?: PollerLogger;
}

export interface SqsPoller {
  start(): void;
  /** Stops receiving; batches in flight finish. Resolves once no receive or batch is in flight. */
  pause(): Promise<void>;
  resume(): void;
  /** Like pause, for good. */
  stop(): Promise<void>;
  /**
   * Resolves once nothing is in flight and every worker's latest receive, started after this call,
   * found the queue empty (messages in flight elsewhere or invisible do not count). When paused,
   * resolves once nothing is in flight.
   */
  idle(options?: { readonly timeoutMs?: number }): Promise<void>;
}

export class SqsPollerError extends HookledgerError {
  override readonly name = 'SqsPollerError';
}

/** The defaults and limits of the options above, in one place. */
const DEFAULTS = {
  batchSize: 10,
  /** Lambda's minimum maximum concurrency. */
  maxConcurrency: 2,
  /** Short, so stop() and pause() are quick. */
  waitTimeSeconds: 1,
  /** The wait before receiving again after a failed ReceiveMessage. */
  receiveRetryMs: 1000,
  /** The most a batching window waits between receives that found nothing without a long poll. */
  gatherPauseMs: 100,
  idleTimeoutMs: 15_000,
} as const;
/** SQS's limit on one ReceiveMessage and one DeleteMessageBatch. */
const SQS_BATCH_LIMIT = 10;
/** Lambda's limit on an SQS mapping's batch size with a batching window. */
const MAX_WINDOWED_BATCH = 10_000;

const defaultLogger = consoleLogger('sqs-poller');

interface Worker {
  /** A batch is with the handler, or being deleted. */
  handling: boolean;
  /** Start time of the latest receive when it found nothing; -Infinity once one finds messages. */
  emptyAt: number;
  loop: Promise<void> | undefined;
}

/** The options with their defaults filled in and checked: what every step reads. */
interface PollerSettings {
  readonly sqs: SQSClient;
  readonly queueUrl: string;
  readonly queueArn: string;
  readonly handler: SqsHandler;
  readonly batchSize: number;
  readonly windowSeconds: number;
  /** Whether any filter is set: without one, no message is dropped (and none parsed for the filters). */
  readonly filtered: boolean;
  readonly matches: RecordFilter;
  readonly maxConcurrency: number;
  readonly waitTimeSeconds: number;
  readonly reportFailures: boolean;
  readonly region: string;
  readonly logger: PollerLogger;
}

/** One poller: its settings, its workers, and whether it receives now. */
interface PollerState {
  readonly settings: PollerSettings;
  readonly workers: Worker[];
  active: boolean;
  stopped: boolean;
  abort: AbortController;
  /** idle() calls looking again whenever a receive or a batch ends. */
  readonly waiters: Set<() => void>;
}

export function createSqsPoller(options: SqsPollerOptions): SqsPoller {
  const state: PollerState = {
    settings: settingsOf(options),
    workers: [],
    active: false,
    stopped: false,
    abort: new AbortController(),
    waiters: new Set(),
  };
  return {
    start: () => resume(state),
    pause: () => halt(state),
    resume: () => resume(state),
    async stop() {
      state.stopped = true;
      await halt(state);
    },
    idle: (idleOptions) => waitIdle(state, idleOptions),
  };
}

function settingsOf(options: SqsPollerOptions): PollerSettings {
  const windowSeconds = options.batchingWindowSeconds ?? 0;
  const { min, max } = BATCHING_WINDOW_SECONDS;
  if (!Number.isInteger(windowSeconds) || windowSeconds < min || windowSeconds > max) {
    throw new SqsPollerError(`batchingWindowSeconds must be an integer from ${min} to ${max}, got ${windowSeconds}`);
  }
  const batchSize = options.batchSize ?? DEFAULTS.batchSize;
  const maxBatch = windowSeconds > 0 ? MAX_WINDOWED_BATCH : SQS_BATCH_LIMIT;
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > maxBatch) {
    throw new SqsPollerError(
      `batchSize must be an integer from 1 to ${maxBatch}${windowSeconds > 0 ? '' : ' (up to 10,000 with a batching window)'}, got ${batchSize}`,
    );
  }
  const maxConcurrency = options.maxConcurrency ?? DEFAULTS.maxConcurrency;
  if (!Number.isInteger(maxConcurrency) || maxConcurrency < 1) {
    throw new SqsPollerError(`maxConcurrency must be a positive integer, got ${maxConcurrency}`);
  }
  return {
    sqs: options.sqs,
    queueUrl: options.queueUrl,
    queueArn: options.queueArn,
    handler: options.handler,
    batchSize,
    windowSeconds,
    filtered: options.filters !== undefined && options.filters.length > 0,
    matches: compileFilters(options.filters),
    maxConcurrency,
    waitTimeSeconds: options.waitTimeSeconds ?? DEFAULTS.waitTimeSeconds,
    reportFailures: options.reportBatchItemFailures ?? true,
    region: options.region ?? LOCAL_REGION,
    logger: options.logger ?? defaultLogger,
  };
}

function notify(state: PollerState): void {
  for (const check of [...state.waiters]) check();
}

function resume(state: PollerState): void {
  if (state.stopped) throw new SqsPollerError('the SQS poller was stopped; create a new one');
  if (!state.active) launch(state);
}

function launch(state: PollerState): void {
  state.abort = new AbortController();
  state.active = true;
  const signal = state.abort.signal;
  while (state.workers.length < state.settings.maxConcurrency) state.workers.push({ handling: false, emptyAt: -Infinity, loop: undefined });
  for (const worker of state.workers) {
    worker.emptyAt = -Infinity;
    worker.loop = runWorker(state, worker, signal).finally(() => {
      worker.loop = undefined;
      notify(state);
    });
  }
}

async function halt(state: PollerState): Promise<void> {
  state.active = false;
  // Receives and handlers in flight run to the end and their batches are settled.
  state.abort.abort();
  await Promise.all(state.workers.map((worker) => worker.loop));
  notify(state);
}

/** One worker: receive, gather, hand the batch to the handler, delete what it did; until paused. */
async function runWorker(state: PollerState, worker: Worker, signal: AbortSignal): Promise<void> {
  const { settings } = state;
  while (state.active && !signal.aborted) {
    const startedAt = Date.now();
    let messages: Message[];
    try {
      messages = await receive(settings, settings.batchSize, settings.waitTimeSeconds);
    } catch (error) {
      if (signal.aborted) break;
      settings.logger.error('ReceiveMessage failed; retrying', { queueUrl: settings.queueUrl, error: describe(error) });
      await sleep(DEFAULTS.receiveRetryMs, signal);
      continue;
    }
    if (messages.length === 0) {
      worker.emptyAt = startedAt;
      notify(state);
      continue;
    }
    worker.emptyAt = -Infinity;
    worker.handling = true;
    try {
      const batch = await gather(state, messages, signal);
      if (batch.length > 0) await handleBatch(settings, batch);
    } finally {
      worker.handling = false;
      notify(state);
    }
  }
}

async function receive(settings: PollerSettings, max: number, waitSeconds: number): Promise<Message[]> {
  const received = await settings.sqs.send(
    new ReceiveMessageCommand({
      QueueUrl: settings.queueUrl,
      MaxNumberOfMessages: Math.min(SQS_BATCH_LIMIT, max),
      WaitTimeSeconds: waitSeconds,
      MessageSystemAttributeNames: ['All'],
      MessageAttributeNames: ['All'],
    }),
    // Not aborted on pause: a receive cut off mid-way could hide messages for a whole
    // visibility timeout. Waiting out the short long-poll is cheaper.
  );
  return received.Messages ?? [];
}

/** The first receive's messages, then more until the batch is full or the batching window has passed. */
async function gather(state: PollerState, first: Message[], signal: AbortSignal): Promise<Message[]> {
  const { settings } = state;
  const batch = await keep(settings, first);
  const deadline = Date.now() + settings.windowSeconds * 1000;
  while (settings.windowSeconds > 0 && batch.length < settings.batchSize && state.active && !signal.aborted) {
    const left = deadline - Date.now();
    if (left <= 0) break;
    const wait = Math.min(settings.waitTimeSeconds, Math.floor(left / 1000));
    let more: Message[];
    try {
      more = await receive(settings, settings.batchSize - batch.length, wait);
    } catch (error) {
      settings.logger.error('ReceiveMessage failed while gathering a batch; handling what was received', {
        queueUrl: settings.queueUrl,
        error: describe(error),
      });
      break;
    }
    if (more.length === 0 && wait === 0) await sleep(Math.min(DEFAULTS.gatherPauseMs, left), signal);
    batch.push(...(await keep(settings, more)));
  }
  return batch;
}

/** The messages a filter matches; the others are deleted, as Lambda deletes what its filters drop. */
async function keep(settings: PollerSettings, messages: Message[]): Promise<Message[]> {
  if (!settings.filtered || messages.length === 0) return messages;
  const kept: Message[] = [];
  const dropped: Message[] = [];
  for (const message of messages) (settings.matches(filterView(settings, message)) ? kept : dropped).push(message);
  if (dropped.length > 0)
    await deleteMessages(
      settings,
      dropped.map((m) => m.ReceiptHandle ?? ''),
    );
  return kept;
}

/** What a filter sees: the record, its body parsed when it is JSON. */
function filterView(settings: PollerSettings, message: Message): unknown {
  const record = toRecord(settings, message);
  try {
    return { ...record, body: JSON.parse(record.body) as unknown };
  } catch {
    return record;
  }
}

async function handleBatch(settings: PollerSettings, messages: Message[]): Promise<void> {
  const records = messages.map((message) => toRecord(settings, message));
  let response: SQSBatchResponse | void;
  try {
    response = await settings.handler({ Records: records });
  } catch (error) {
    settings.logger.error('SQS handler failed; the whole batch will be retried', {
      queueUrl: settings.queueUrl,
      messages: records.length,
      error: describe(error),
    });
    return;
  }
  const failed = reportedFailures(settings, records, response);
  if (!failed) return;
  const done = records.filter((record) => !failed.has(record.messageId));
  await deleteMessages(
    settings,
    done.map((record) => record.receiptHandle),
  );
}

/**
 * The message ids the handler's response reports failed (none unless `reportBatchItemFailures`), or
 * undefined when it names an id not in the batch: Lambda then fails the whole batch.
 */
function reportedFailures(
  settings: PollerSettings,
  records: readonly SQSRecord[],
  response: SQSBatchResponse | void,
): Set<string> | undefined {
  const failed = new Set<string>();
  if (!settings.reportFailures || !response || !Array.isArray(response.batchItemFailures)) return failed;
  const ids = new Set(records.map((record) => record.messageId));
  for (const failure of response.batchItemFailures) {
    const id: unknown = failure?.itemIdentifier;
    if (typeof id !== 'string' || id === '' || !ids.has(id)) {
      settings.logger.error('batchItemFailures names an unknown itemIdentifier; the whole batch will be retried', {
        queueUrl: settings.queueUrl,
        itemIdentifier: id,
      });
      return undefined;
    }
    failed.add(id);
  }
  return failed;
}

/** Deletes in batches of 10 (SQS's limit); what fails to delete is received again. */
async function deleteMessages(settings: PollerSettings, receiptHandles: readonly string[]): Promise<void> {
  const { sqs, queueUrl, logger } = settings;
  for (let at = 0; at < receiptHandles.length; at += SQS_BATCH_LIMIT) {
    const chunk = receiptHandles.slice(at, at + SQS_BATCH_LIMIT);
    try {
      const result = await sqs.send(
        new DeleteMessageBatchCommand({
          QueueUrl: queueUrl,
          Entries: chunk.map((handle, i) => ({ Id: String(i), ReceiptHandle: handle })),
        }),
      );
      if (result.Failed && result.Failed.length > 0) {
        logger.error('DeleteMessageBatch left messages undeleted; they will be received again', { queueUrl, failed: result.Failed });
      }
    } catch (error) {
      logger.error('DeleteMessageBatch failed; the messages will be received again', { queueUrl, error: describe(error) });
    }
  }
}

/** The system attributes Lambda copies onto a record when SQS sends them. */
const OPTIONAL_ATTRIBUTES = [
  'AWSTraceHeader',
  'SequenceNumber',
  'MessageGroupId',
  'MessageDeduplicationId',
  'DeadLetterQueueSourceArn',
] as const;

function toRecord(settings: PollerSettings, message: Message): SQSRecord {
  const system = message.Attributes ?? {};
  const attributes: SQSRecord['attributes'] = {
    ApproximateReceiveCount: system.ApproximateReceiveCount ?? '1',
    SentTimestamp: system.SentTimestamp ?? String(Date.now()),
    SenderId: system.SenderId ?? 'AIDALOCAL',
    ApproximateFirstReceiveTimestamp: system.ApproximateFirstReceiveTimestamp ?? String(Date.now()),
  };
  for (const name of OPTIONAL_ATTRIBUTES) {
    const value = system[name];
    if (value !== undefined) attributes[name] = value;
  }
  return {
    messageId: message.MessageId ?? '',
    receiptHandle: message.ReceiptHandle ?? '',
    body: message.Body ?? '',
    attributes,
    messageAttributes: toMessageAttributes(message.MessageAttributes),
    md5OfBody: message.MD5OfBody ?? '',
    ...(message.MD5OfMessageAttributes ? { md5OfMessageAttributes: message.MD5OfMessageAttributes } : {}),
    eventSource: 'aws:sqs',
    eventSourceARN: settings.queueArn,
    awsRegion: settings.region,
  };
}

function quiet(state: PollerState): boolean {
  return state.workers.every((worker) => !worker.handling && (state.active || worker.loop === undefined));
}

function waitIdle(state: PollerState, idleOptions: { readonly timeoutMs?: number } = {}): Promise<void> {
  const since = Date.now();
  const timeoutMs = idleOptions.timeoutMs ?? DEFAULTS.idleTimeoutMs;
  return new Promise<void>((resolve, reject) => {
    const finish = (error?: Error) => {
      clearTimeout(timer);
      state.waiters.delete(check);
      if (error) reject(error);
      else resolve();
    };
    const check = () => {
      if (!quiet(state)) return;
      if (!state.active || state.workers.every((worker) => worker.emptyAt >= since)) finish();
    };
    const timer = setTimeout(
      () => finish(new SqsPollerError(`queue not idle after ${timeoutMs} ms: ${state.settings.queueUrl}`)),
      timeoutMs,
    );
    state.waiters.add(check);
    check();
  });
}

function toMessageAttributes(attributes: Record<string, MessageAttributeValue> | undefined): SQSMessageAttributes {
  const result: SQSMessageAttributes = {};
  for (const [name, value] of Object.entries(attributes ?? {})) {
    result[name] = {
      dataType: value.DataType ?? 'String',
      ...(value.StringValue !== undefined ? { stringValue: value.StringValue } : {}),
      ...(value.BinaryValue !== undefined ? { binaryValue: Buffer.from(value.BinaryValue).toString('base64') } : {}),
      stringListValues: value.StringListValues ?? [],
      binaryListValues: (value.BinaryListValues ?? []).map((bytes) => Buffer.from(bytes).toString('base64')),
    };
  }
  return result;
}
