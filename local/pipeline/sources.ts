/**
 * The plain `npm start` source: the resources hookledger.config.ts declares, and the handlers built
 * in this process from the sources (local/wiring.ts), the same code the Lambdas run. Nothing is
 * IAM-checked: every client signs with this start's operator key.
 */
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import type { ConsumedCapacityObserver } from '../../adapters/table';
import type { HookledgerConfig } from '../../core/config/schema';
import { isSignatureFailure } from '../../core/metrics';
import { PROJECT_ROOT } from '../../core/paths';
import { FANOUT_EVENT_SOURCE, FANOUT_FILTER_PATTERN } from '../../core/queues';
import type { ConsumerHandle, ConsumerLambdaHandler } from '../../lambdas/runtime/runtime';
import type { Logger } from '../../lambdas/shared/logger';
import { createLocalPayloadBucket, localDynamoClient, localS3Client, localSqsClient } from '../clients';
import { type ProvisionedStack, provisionLocalStack } from '../provision';
import { FileSecrets } from '../secrets-file';
import { SignatureFailureLog } from '../signature-failures';
import { createLocalStreamsApi } from '../streams/dynamodb-streams';
import { buildHandlers, type LocalHandlers } from '../wiring';
import type { Emulators, Endpoints } from './emulators';
import type { PipelineSource, Provisioned } from './pipeline';
import type { PipelineFunctions, PipelinePlan } from './plan';

/** The tables plain `npm start` creates. */
export const LOCAL_TABLES = { events: 'hookledger-events', ledger: 'hookledger-ledger' } as const;
/** The fan-out's function name in its stream records (its name on AWS is the stack's). */
const FANOUT_FUNCTION = 'hookledger-fanout';
/** At most this many batches per consumer in flight locally (two cores share every emulator). */
const MAX_LOCAL_CONSUMER_CONCURRENCY = 4;

export interface DeliveryProgress {
  readonly consumerId: string;
  readonly eventId: string;
  readonly tenantId: string;
  readonly receiveCount: number;
  readonly outcome: 'processed' | 'failed';
}

export interface SourcesOptions {
  readonly config: HookledgerConfig;
  readonly secretsFile: string;
  readonly handles?: Readonly<Record<string, ConsumerHandle>>;
  readonly logger?: (service: string) => Logger;
  readonly clock?: () => number;
  readonly onCapacity?: ConsumedCapacityObserver;
  readonly backoffBaseMs?: number;
  readonly onDelivery?: (line: DeliveryProgress) => void;
  readonly onBreakerOpen?: (consumerId: string, failures: number) => void;
  readonly wrapConsumer?: (consumerId: string, handler: ConsumerLambdaHandler) => ConsumerLambdaHandler;
}

export interface ProvisionedSources extends Provisioned {
  readonly endpoints: Endpoints;
  readonly resources: ProvisionedStack;
  readonly payloadBucket: string;
  readonly secrets: FileSecrets;
}

export interface SourceFunctions extends PipelineFunctions {
  readonly handlers: LocalHandlers;
}

export function sourcesPipeline(options: SourcesOptions): PipelineSource<ProvisionedSources, SourceFunctions> {
  return {
    provision: (emulators) => provisionSources(options, emulators),
    async functions(provisioned, switches) {
      const outcomes = new Map<string, number>();
      const failures = new SignatureFailureLog(options.clock);
      const handlers = await buildHandlers({
        onIntakeOutcome: (outcome, sourceId) => {
          outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
          if (isSignatureFailure(outcome)) failures.add(sourceId);
        },
        config: options.config,
        endpoints: provisioned.endpoints,
        resources: provisioned.resources,
        secrets: provisioned.secrets,
        handles: options.handles,
        logger: options.logger,
        clock: options.clock,
        onCapacity: options.onCapacity,
        backoffBaseMs: options.backoffBaseMs,
        root: PROJECT_ROOT,
        consumerSecrets: provisioned.secrets.consumerSecrets(),
        // An HTTP consumer's circuit breaker pauses its poller, as `hookledger pause` does.
        pause: (consumerId) => switches.pause(consumerId),
        onBreakerOpen: options.onBreakerOpen,
        payloadBucket: provisioned.payloadBucket,
      });
      return sourceFunctions(handlers, provisioned, options, { outcomes, failures });
    },
  };
}

async function provisionSources(options: SourcesOptions, emulators: Emulators): Promise<ProvisionedSources> {
  const { config } = options;
  const { endpoints } = emulators;
  const sqs = localSqsClient(endpoints.sqs);
  const resources = await provisionLocalStack({ config, dynamo: localDynamoClient(endpoints.dynamodb), sqs, tables: LOCAL_TABLES });
  const s3 = localS3Client(endpoints.s3);
  const payloadBucket = await createLocalPayloadBucket(s3);
  s3.destroy();
  const secrets = new FileSecrets({
    path: options.secretsFile,
    sourceIds: config.sources.map((s) => s.id),
    consumerIds: config.consumers.filter((c) => c.kind === 'http').map((c) => c.id),
  });
  return { plan: planOf(config, resources), operatorSqs: sqs, resources, payloadBucket, secrets, endpoints };
}

/** The fan-out on the EventStore stream and one SQS mapping per consumer, as the CDK stack declares them. */
function planOf(config: HookledgerConfig, resources: ProvisionedStack): PipelinePlan {
  return {
    tables: resources.tables,
    gateway: { functionId: 'ingest' },
    streams: [
      {
        id: 'fanout',
        functionId: 'fanout',
        functionName: FANOUT_FUNCTION,
        functionArn: '',
        tableName: resources.tables.events,
        eventSourceArn: '',
        filters: [FANOUT_FILTER_PATTERN],
        batchSize: FANOUT_EVENT_SOURCE.batchSize,
        batchingWindowSeconds: config.fanout.batchingWindowSeconds,
        maxRetryAttempts: FANOUT_EVENT_SOURCE.retryAttempts,
        bisectBatchOnFunctionError: FANOUT_EVENT_SOURCE.bisectBatchOnError,
        maxRecordAgeSeconds: FANOUT_EVENT_SOURCE.maxRecordAgeSeconds,
        onFailureQueueUrl: resources.fanoutFailureQueue.url,
        checkpointFile: 'stream-checkpoints.json',
        logName: 'stream-poller',
      },
    ],
    queues: config.consumers.map((consumer) => {
      const queue = resources.queues[consumer.id]!;
      return {
        id: consumer.id,
        consumerId: consumer.id,
        functionId: consumer.id,
        functionArn: '',
        queueUrl: queue.url,
        queueArn: queue.arn,
        batchSize: consumer.batchSize,
        batchingWindowSeconds: consumer.batchingWindowSeconds,
        maxConcurrency: Math.min(consumer.maxConcurrency, MAX_LOCAL_CONSUMER_CONCURRENCY),
        logName: `sqs-poller ${consumer.id}`,
      };
    }),
  };
}

/** The handlers as the pipeline's functions: ingest, fanout, and each consumer by its id. */
function sourceFunctions(
  handlers: LocalHandlers,
  provisioned: ProvisionedSources,
  options: SourcesOptions,
  intake: { readonly outcomes: Map<string, number>; readonly failures: SignatureFailureLog },
): SourceFunctions {
  const streams = createLocalStreamsApi({ endpoint: provisioned.endpoints.dynamodb });
  const sqs: SQSClient = provisioned.operatorSqs;
  return {
    handlers,
    // Looked up per call: instrumentation (the benchmark's counters) may replace a handler after start.
    invoke(functionId, event) {
      if (functionId === 'ingest') return handlers.ingest(event as Parameters<LocalHandlers['ingest']>[0]);
      if (functionId === 'fanout') return handlers.fanout(event as Parameters<LocalHandlers['fanout']>[0]);
      return invokeConsumer(handlers, options, functionId, event as SQSEvent);
    },
    mappingClients: () => ({ sqs, streams }),
    intakeOutcomes: () => Object.fromEntries([...intake.outcomes].sort(([a], [b]) => a.localeCompare(b))),
    signatureFailures: () => intake.failures.counts(),
  };
}

async function invokeConsumer(handlers: LocalHandlers, options: SourcesOptions, consumerId: string, event: SQSEvent) {
  const inner = handlers.consumers[consumerId]!;
  const handler = options.wrapConsumer ? options.wrapConsumer(consumerId, inner) : inner;
  const result = (await handler(event)) as SQSBatchResponse | undefined;
  reportProgress(options, consumerId, event, result?.batchItemFailures ?? []);
  return result;
}

/** One line per record for `npm start`'s progress log. */
function reportProgress(options: SourcesOptions, consumerId: string, event: SQSEvent, failures: { itemIdentifier: string }[]): void {
  if (!options.onDelivery) return;
  const failed = new Set(failures.map((f) => f.itemIdentifier));
  for (const record of event.Records) {
    let body: { eventId?: string; tenantId?: string } = {};
    try {
      body = JSON.parse(record.body) as typeof body;
    } catch {
      // Malformed messages are reported by the runtime itself.
    }
    options.onDelivery({
      consumerId,
      eventId: body.eventId ?? '?',
      tenantId: body.tenantId ?? '?',
      receiveCount: Number(record.attributes.ApproximateReceiveCount ?? 1),
      outcome: failed.has(record.messageId) ? 'failed' : 'processed',
    });
  }
}
