/**
 * Step 5, the event source mappings: one stream poller per stream mapping and one SQS poller per
 * consumer queue, each invoking its function as Lambda's mapping would. Stream pollers restart
 * after their checkpoint; SQS pollers are single-use (SQS keeps their place), so each start makes
 * new ones. Every invocation is counted while it runs: a drain waits for them.
 */
import path from 'node:path';
import type { DynamoDBBatchResponse, DynamoDBStreamEvent, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { createSqsPoller, type SqsPoller } from '../sqs-poller';
import { fileCheckpointStore } from '../streams/checkpoints';
import { createStreamPoller, type StreamPoller } from '../streams/poller';
import type { PollerLogger } from '../support';
import type { PipelineFunctions, PipelinePlan, QueueMapping, StreamMapping } from './plan';
import type { ConsumerSwitches } from './switches';

export interface MappingOptions {
  readonly plan: PipelinePlan;
  readonly functions: PipelineFunctions;
  readonly switches: ConsumerSwitches;
  /** File-backed data gets file-backed stream checkpoints; null keeps them in memory. */
  readonly dataDir: string | null;
  /** Default: the stream poller's (Lambda's 4 reads a second). */
  readonly streamPollIntervalMs?: number;
  /** Where the pollers report retries and skipped records. Default: the console. */
  readonly pollerLogger?: (poller: string) => PollerLogger;
}

export class EventSourceMappings {
  readonly streamPollers: readonly StreamPoller[];
  private inFlight = 0;
  private running = false;

  constructor(private readonly options: MappingOptions) {
    this.streamPollers = options.plan.streams.map((mapping) => this.streamPoller(mapping));
  }

  /** Invocations running now (a fenced slow worker holds no message, but is still work). */
  get invocationsInFlight(): number {
    return this.inFlight;
  }

  async start(): Promise<void> {
    if (this.running) return;
    for (const poller of this.streamPollers) await poller.start();
    for (const mapping of this.options.plan.queues) this.options.switches.attach(mapping.consumerId, this.queuePoller(mapping));
    this.running = true;
  }

  /** Every poller is told at once, before anything is awaited: on Ctrl-C every tick counts. */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    await Promise.all([...this.streamPollers.map((p) => p.stop()), ...this.options.switches.detachAll().map((p) => p.stop())]);
  }

  private invoker<E, R>(functionId: string): (event: E) => Promise<R> {
    return async (event) => {
      this.inFlight++;
      try {
        return (await this.options.functions.invoke(functionId, event)) as R;
      } finally {
        this.inFlight--;
      }
    };
  }

  private streamPoller(mapping: StreamMapping): StreamPoller {
    const { functions, dataDir } = this.options;
    const clients = functions.mappingClients(mapping.functionId);
    return createStreamPoller({
      streams: clients.streams,
      tableName: mapping.tableName,
      handler: this.invoker<DynamoDBStreamEvent, DynamoDBBatchResponse>(mapping.functionId),
      filters: mapping.filters,
      bisectBatchOnFunctionError: mapping.bisectBatchOnFunctionError === true,
      ...definedOnly({
        batchSize: mapping.batchSize,
        batchingWindowSeconds: mapping.batchingWindowSeconds,
        maxRetryAttempts: mapping.maxRetryAttempts,
        maxRecordAgeSeconds: mapping.maxRecordAgeSeconds,
        reportBatchItemFailures: mapping.reportBatchItemFailures,
        startingPosition: mapping.startingPosition,
        pollIntervalMs: this.options.streamPollIntervalMs,
        logger: this.options.pollerLogger?.(mapping.logName),
      }),
      ...(mapping.onFailureQueueUrl ? { onFailure: { sqs: clients.sqs, queueUrl: mapping.onFailureQueueUrl } } : {}),
      functionName: mapping.functionName,
      ...(dataDir === null ? {} : { checkpoints: fileCheckpointStore(path.join(dataDir, mapping.checkpointFile)) }),
    });
  }

  private queuePoller(mapping: QueueMapping): SqsPoller {
    return createSqsPoller({
      sqs: this.options.functions.mappingClients(mapping.functionId).sqs,
      queueUrl: mapping.queueUrl,
      queueArn: mapping.queueArn,
      handler: this.invoker<SQSEvent, SQSBatchResponse>(mapping.functionId),
      maxConcurrency: mapping.maxConcurrency,
      ...definedOnly({
        batchSize: mapping.batchSize,
        batchingWindowSeconds: mapping.batchingWindowSeconds,
        filters: mapping.filters,
        reportBatchItemFailures: mapping.reportBatchItemFailures,
        logger: this.options.pollerLogger?.(mapping.logName),
      }),
    });
  }
}

/** The entries whose value is given (the pollers' options take a missing one as their default). */
function definedOnly<T extends Record<string, unknown>>(values: T): Partial<T> {
  return Object.fromEntries(Object.entries(values).filter(([, v]) => v !== undefined)) as Partial<T>;
}
