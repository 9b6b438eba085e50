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
import { HookledgerError } from '../core/errors';
import { LOCAL_REGION } from './clients';
import { compileFilters, type FilterPattern } from './streams/filter-criteria';
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

const defaultLogger = consoleLogger('sqs-poller');

interface Worker {
  /** A batch is with the handler, or being deleted. */
  handling: boolean;
  /** Start time of the latest receive when it found nothing; -Infinity once one finds messages. */
  emptyAt: number;
  loop: Promise<void> | undefined;
}

export function createSqsPoller(options: SqsPollerOptions): SqsPoller {
  const windowSeconds = options.batchingWindowSeconds ?? 0;
  if (!Number.isInteger(windowSeconds) || windowSeconds < 0 || windowSeconds > 300) {
    throw new SqsPollerError(`batchingWindowSeconds must be an integer from 0 to 300, got ${windowSeconds}`);
  }
  const batchSize = options.batchSize ?? 10;
  const maxBatch = windowSeconds > 0 ? 10_000 : 10;
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > maxBatch) {
    throw new SqsPollerError(
      `batchSize must be an integer from 1 to ${maxBatch}${windowSeconds > 0 ? '' : ' (up to 10,000 with a batching window)'}, got ${batchSize}`,
    );
  }
  const matches = compileFilters(options.filters);
  const filtered = options.filters !== undefined && options.filters.length > 0;
  const maxConcurrency = options.maxConcurrency ?? 2;
  if (!Number.isInteger(maxConcurrency) || maxConcurrency < 1) {
    throw new SqsPollerError(`maxConcurrency must be a positive integer, got ${maxConcurrency}`);
  }
  const waitTimeSeconds = options.waitTimeSeconds ?? 1;
  const reportFailures = options.reportBatchItemFailures ?? true;
  const region = options.region ?? LOCAL_REGION;
  const logger = options.logger ?? defaultLogger;
  const { sqs, queueUrl } = options;

  const workers: Worker[] = [];
  let active = false;
  let stopped = false;
  let abort = new AbortController();
  const waiters = new Set<() => void>();
  const notify = () => {
    for (const check of [...waiters]) check();
  };

  const receive = async (max: number, waitSeconds: number): Promise<Message[]> => {
    const received = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: Math.min(10, max),
        WaitTimeSeconds: waitSeconds,
        MessageSystemAttributeNames: ['All'],
        MessageAttributeNames: ['All'],
      }),
      // Not aborted on pause: a receive cut off mid-way could hide messages for a whole
      // visibility timeout. Waiting out the short long-poll is cheaper.
    );
    return received.Messages ?? [];
  };

  /** The messages a filter matches; the others are deleted, as Lambda deletes what its filters drop. */
  async function keep(messages: Message[]): Promise<Message[]> {
    if (!filtered || messages.length === 0) return messages;
    const kept: Message[] = [];
    const dropped: Message[] = [];
    for (const message of messages) (matches(filterView(message)) ? kept : dropped).push(message);
    if (dropped.length > 0) await deleteMessages(dropped.map((m) => m.ReceiptHandle ?? ''));
    return kept;
  }

  /** What a filter sees: the record, its body parsed when it is JSON. */
  function filterView(message: Message): unknown {
    const record = toRecord(message);
    try {
      return { ...record, body: JSON.parse(record.body) as unknown };
    } catch {
      return record;
    }
  }

  /** The first receive's messages, then more until the batch is full or the batching window has passed. */
  async function gather(first: Message[], signal: AbortSignal): Promise<Message[]> {
    const batch = await keep(first);
    const deadline = Date.now() + windowSeconds * 1000;
    while (windowSeconds > 0 && batch.length < batchSize && active && !signal.aborted) {
      const left = deadline - Date.now();
      if (left <= 0) break;
      const wait = Math.min(waitTimeSeconds, Math.floor(left / 1000));
      let more: Message[];
      try {
        more = await receive(batchSize - batch.length, wait);
      } catch (error) {
        logger.error('ReceiveMessage failed while gathering a batch; handling what was received', { queueUrl, error: describe(error) });
        break;
      }
      if (more.length === 0 && wait === 0) await sleep(Math.min(100, left), signal);
      batch.push(...(await keep(more)));
    }
    return batch;
  }

  async function runWorker(worker: Worker, signal: AbortSignal): Promise<void> {
    while (active && !signal.aborted) {
      const startedAt = Date.now();
      let messages: Message[];
      try {
        messages = await receive(batchSize, waitTimeSeconds);
      } catch (error) {
        if (signal.aborted) break;
        logger.error('ReceiveMessage failed; retrying', { queueUrl, error: describe(error) });
        await sleep(1000, signal);
        continue;
      }
      if (messages.length === 0) {
        worker.emptyAt = startedAt;
        notify();
        continue;
      }
      worker.emptyAt = -Infinity;
      worker.handling = true;
      try {
        const batch = await gather(messages, signal);
        if (batch.length > 0) await handleBatch(batch);
      } finally {
        worker.handling = false;
        notify();
      }
    }
  }

  async function handleBatch(messages: Message[]): Promise<void> {
    const records = messages.map(toRecord);
    let response: SQSBatchResponse | void;
    try {
      response = await options.handler({ Records: records });
    } catch (error) {
      logger.error('SQS handler failed; the whole batch will be retried', { queueUrl, messages: records.length, error: describe(error) });
      return;
    }
    const failed = new Set<string>();
    if (reportFailures && response && Array.isArray(response.batchItemFailures)) {
      const ids = new Set(records.map((record) => record.messageId));
      for (const failure of response.batchItemFailures) {
        const id: unknown = failure?.itemIdentifier;
        if (typeof id !== 'string' || id === '' || !ids.has(id)) {
          // Lambda treats a malformed partial response as a failure of the whole batch.
          logger.error('batchItemFailures names an unknown itemIdentifier; the whole batch will be retried', {
            queueUrl,
            itemIdentifier: id,
          });
          return;
        }
        failed.add(id);
      }
    }
    const done = records.filter((record) => !failed.has(record.messageId));
    await deleteMessages(done.map((record) => record.receiptHandle));
  }

  /** Deletes in batches of 10 (SQS's limit); what fails to delete is received again. */
  async function deleteMessages(receiptHandles: readonly string[]): Promise<void> {
    for (let at = 0; at < receiptHandles.length; at += 10) {
      const chunk = receiptHandles.slice(at, at + 10);
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

  function toRecord(message: Message): SQSRecord {
    const system = message.Attributes ?? {};
    const attributes: SQSRecord['attributes'] = {
      ApproximateReceiveCount: system.ApproximateReceiveCount ?? '1',
      SentTimestamp: system.SentTimestamp ?? String(Date.now()),
      SenderId: system.SenderId ?? 'AIDALOCAL',
      ApproximateFirstReceiveTimestamp: system.ApproximateFirstReceiveTimestamp ?? String(Date.now()),
    };
    for (const name of [
      'AWSTraceHeader',
      'SequenceNumber',
      'MessageGroupId',
      'MessageDeduplicationId',
      'DeadLetterQueueSourceArn',
    ] as const) {
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
      eventSourceARN: options.queueArn,
      awsRegion: region,
    };
  }

  function quiet(): boolean {
    return workers.every((worker) => !worker.handling && (active || worker.loop === undefined));
  }

  function launch(): void {
    abort = new AbortController();
    active = true;
    const signal = abort.signal;
    while (workers.length < maxConcurrency) workers.push({ handling: false, emptyAt: -Infinity, loop: undefined });
    for (const worker of workers) {
      worker.emptyAt = -Infinity;
      worker.loop = runWorker(worker, signal).finally(() => {
        worker.loop = undefined;
        notify();
      });
    }
  }

  async function halt(): Promise<void> {
    active = false;
    // Receives and handlers in flight run to the end and their batches are settled.
    abort.abort();
    await Promise.all(workers.map((worker) => worker.loop));
    notify();
  }

  return {
    start() {
      if (stopped) throw new SqsPollerError('the SQS poller was stopped; create a new one');
      if (!active) launch();
    },
    pause: halt,
    resume() {
      if (stopped) throw new SqsPollerError('the SQS poller was stopped; create a new one');
      if (!active) launch();
    },
    async stop() {
      stopped = true;
      await halt();
    },
    idle(idleOptions = {}) {
      const since = Date.now();
      const timeoutMs = idleOptions.timeoutMs ?? 15_000;
      return new Promise<void>((resolve, reject) => {
        const finish = (error?: Error) => {
          clearTimeout(timer);
          waiters.delete(check);
          if (error) reject(error);
          else resolve();
        };
        const check = () => {
          if (!quiet()) return;
          if (!active || workers.every((worker) => worker.emptyAt >= since)) finish();
        };
        const timer = setTimeout(() => finish(new SqsPollerError(`queue not idle after ${timeoutMs} ms: ${queueUrl}`)), timeoutMs);
        waiters.add(check);
        check();
      });
    },
  };
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
