/**
 * The reliability suites' own composition of the local pipeline, built from the same blocks as
 * local/stack.ts (DynamoDB Local, fauxqs, provisioning, buildHandlers, the Lambda-faithful pollers,
 * the HTTP gateway), plus the three hooks startLocalStack does not offer:
 *
 *   wrapConsumer   wraps each consumer's Lambda handler as the SQS poller invokes it, so a test can
 *                  fail a batch before the runtime runs (the worker died before claiming) or after it
 *                  returned (the ledger committed, the function died before the poller deleted);
 *   failDelete     makes the pollers' DeleteMessageBatch report chosen entries as Failed (an SQS
 *                  client middleware on the pollers' own client, which the stack keeps private);
 *   killDynamo / startDynamo
 *                  SIGKILL DynamoDB Local and start it again on the same port and dbPath while the
 *                  gateway, the handlers and the pollers keep running against the same endpoint.
 *
 * As in local/stack.ts, stopPipeline/startPipeline stop and start the same stream poller (it resumes
 * after its in-memory checkpoint, as Lambda's event source mapping does) and replace the single-use
 * SQS pollers. drain() is stricter about running invocations and quicker than the stack's (below).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  DeleteMessageBatchCommand,
  type DeleteMessageBatchCommandInput,
  type DeleteMessageBatchCommandOutput,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import type { SQSEvent } from 'aws-lambda';
import defaultConfig from '../../hookledger.config';
import type { ConsumerHandle, ConsumerLambdaHandler } from '../../lambdas/consumers/runtime';
import { reconcile, type ReconcileReport } from '../../lambdas/reconcile/reconcile';
import { createLogger, type Logger } from '../../lambdas/shared/logger';
import type { DeliveryMessage, EventItem, LedgerItem } from '../../lambdas/shared/model';
import { FANOUT_EVENT_SOURCE, FANOUT_FILTER_PATTERN } from '../../lib/config/event-sources';
import type { HookledgerConfig } from '../../lib/config/schema';
import { localDynamoClient, localSqsClient } from '../../local/clients';
import { createLocalStreamsApi } from '../../local/dynamodb-streams';
import { type DynamoLocal, freePort, startDynamoLocal, startSqsEmulator } from '../../local/emulators';
import { type HttpGateway, startHttpGateway } from '../../local/http-gateway';
import { type ProvisionedStack, provisionLocalStack } from '../../local/provision';
import { FileSecrets } from '../../local/secrets-file';
import { createSqsPoller, type SqsPoller } from '../../local/sqs-poller';
import { createStreamPoller, type PollerLogger } from '../../local/stream-poller';
import { buildHandlers, type LocalHandlers } from '../../local/wiring';

export interface FaultStackOptions {
  readonly config?: HookledgerConfig;
  /** A folder for file-backed tables; null (default) keeps DynamoDB Local in memory. */
  readonly dataDir?: string | null;
  readonly handles?: Readonly<Record<string, ConsumerHandle>>;
  readonly wrapConsumer?: (consumerId: string, handler: ConsumerLambdaHandler) => ConsumerLambdaHandler;
  /** Whether the pollers' DeleteMessageBatch should report this entry as failed (checked once per entry). */
  readonly failDelete?: (queueUrl: string, receiptHandle: string) => boolean;
  /** Default: silent Powertools loggers. */
  readonly logger?: (service: string) => Logger;
  /** Consumer backoff base, ms. Default 200. */
  readonly backoffBaseMs?: number;
}

export interface FaultStack {
  readonly config: HookledgerConfig;
  readonly resources: ProvisionedStack;
  readonly handlers: LocalHandlers;
  readonly secrets: FileSecrets;
  readonly dynamoEndpoint: string;
  /** What the pollers and the gateway reported (kept here instead of on the console). */
  readonly pollerLog: string[];
  webhookUrl(sourceId: string): string;
  pause(consumerId: string): Promise<void>;
  resume(consumerId: string): void;
  /** The stream read to its end and every running consumer's queue empty (visible and in flight), twice in a row. */
  drain(options?: { timeoutMs?: number }): Promise<void>;
  stopPipeline(): Promise<void>;
  startPipeline(): Promise<void>;
  /** SIGKILL DynamoDB Local (no shutdown hook runs) and wait for the JVM to exit. */
  killDynamo(): Promise<void>;
  /** Start DynamoDB Local again on the same port and dbPath. */
  startDynamo(): Promise<void>;
  stop(): Promise<void>;
}

export async function startFaultStack(options: FaultStackOptions = {}): Promise<FaultStack> {
  const config = options.config ?? defaultConfig;
  const dataDir = options.dataDir ?? null;
  const workDir = mkdtempSync(path.join(tmpdir(), 'hookledger-reliability-'));
  const pollerLog: string[] = [];
  const pollerLogger = (name: string): PollerLogger => ({
    warn: (message, extra) => pollerLog.push(`[${name}] warn ${message} ${JSON.stringify(extra ?? {})}`),
    error: (message, extra) => pollerLog.push(`[${name}] error ${message} ${JSON.stringify(extra ?? {})}`),
  });
  const cleanups: (() => Promise<unknown>)[] = [];
  try {
    const dynamoPort = await freePort();
    let dynamo: DynamoLocal | undefined = await startDynamoLocal({ port: dynamoPort, dbPath: dataDir });
    cleanups.push(() => dynamo?.stop() ?? Promise.resolve());
    const sqsServer = await startSqsEmulator({ port: await freePort() });
    cleanups.push(() => sqsServer.stop());
    const endpoints = { dynamodb: dynamo.endpoint, sqs: sqsServer.endpoint };
    const dynamoClient = localDynamoClient(dynamo.endpoint);
    const adminSqs = localSqsClient(sqsServer.endpoint);
    const resources = await provisionLocalStack({
      config,
      dynamo: dynamoClient,
      sqs: adminSqs,
      tables: { events: 'hookledger-events', ledger: 'hookledger-ledger' },
    });
    const secrets = new FileSecrets({ path: path.join(workDir, 'secrets.json'), sourceIds: config.sources.map((s) => s.id) });
    const handlers = await buildHandlers({
      config,
      endpoints,
      resources,
      secrets,
      handles: options.handles,
      logger: options.logger ?? ((service) => createLogger(service, { silent: true })),
      backoffBaseMs: options.backoffBaseMs ?? 200,
    });
    const gateway: HttpGateway = await startHttpGateway({
      port: 0,
      handler: handlers.ingest,
      onError: (error) => pollerLog.push(`[http-gateway] error ${error instanceof Error ? error.name : 'unknown'}`),
    });
    cleanups.push(() => gateway.close());

    // The pollers' own SQS client, as Lambda's event source mapping has its own.
    const pollerSqs = localSqsClient(sqsServer.endpoint);
    if (options.failDelete) installDeleteFault(pollerSqs, options.failDelete);

    const fanoutPoller = createStreamPoller({
      streams: createLocalStreamsApi({ endpoint: dynamo.endpoint }),
      tableName: resources.tables.events,
      handler: handlers.fanout,
      filters: [FANOUT_FILTER_PATTERN],
      batchSize: FANOUT_EVENT_SOURCE.batchSize,
      maxRetryAttempts: FANOUT_EVENT_SOURCE.retryAttempts,
      bisectBatchOnFunctionError: FANOUT_EVENT_SOURCE.bisectBatchOnError,
      maxRecordAgeSeconds: FANOUT_EVENT_SOURCE.maxRecordAgeSeconds,
      onFailure: { sqs: pollerSqs, queueUrl: resources.fanoutFailureQueue.url },
      functionName: 'hookledger-fanout',
      pollIntervalMs: 50,
      logger: pollerLogger('stream-poller'),
    });
    /** Consumer invocations running now (a fenced slow worker holds no message, but is still work). */
    let inFlight = 0;
    const makeConsumerPollers = (): Record<string, SqsPoller> =>
      Object.fromEntries(
        config.consumers.map((consumer) => {
          const queue = resources.queues[consumer.id]!;
          const inner = handlers.consumers[consumer.id]!;
          const handler = options.wrapConsumer ? options.wrapConsumer(consumer.id, inner) : inner;
          return [
            consumer.id,
            createSqsPoller({
              sqs: pollerSqs,
              queueUrl: queue.url,
              queueArn: queue.arn,
              batchSize: consumer.batchSize,
              maxConcurrency: Math.min(consumer.maxConcurrency, 4),
              handler: async (event: SQSEvent) => {
                inFlight++;
                try {
                  return await handler(event);
                } finally {
                  inFlight--;
                }
              },
              logger: pollerLogger(`sqs-poller ${consumer.id}`),
            }),
          ];
        }),
      );
    let consumerPollers = makeConsumerPollers();
    const paused = new Set<string>();
    let running = false;

    const startPipeline = async () => {
      if (running) return;
      await fanoutPoller.start();
      for (const [id, poller] of Object.entries(consumerPollers)) {
        poller.start();
        if (paused.has(id)) await poller.pause();
      }
      running = true;
    };
    const stopPipeline = async () => {
      if (!running) return;
      running = false;
      await Promise.all([fanoutPoller.stop(), ...Object.values(consumerPollers).map((p) => p.stop())]);
      consumerPollers = makeConsumerPollers();
    };
    await startPipeline();
    cleanups.push(stopPipeline);

    const stack: FaultStack = {
      config,
      resources,
      handlers,
      secrets,
      dynamoEndpoint: dynamo.endpoint,
      pollerLog,
      webhookUrl: (sourceId) => `${gateway.url}/hooks/${sourceId}`,
      async pause(consumerId) {
        paused.add(consumerId);
        await consumerPollers[consumerId]!.pause();
      },
      resume(consumerId) {
        paused.delete(consumerId);
        consumerPollers[consumerId]!.resume();
      },
      async drain({ timeoutMs = 90_000 } = {}) {
        // Quiet twice in a row, 200 ms apart: the stream read to its end, no consumer invocation
        // running, and every running consumer's queue empty, counting in-flight messages (a message
        // being handled, backing off, or whose delete was lost). Unlike the stack's drain it does
        // not wait for a fresh empty long poll per worker, which costs 2-4 s per call.
        const deadline = Date.now() + timeoutMs;
        for (let quiet = 0; quiet < 2; ) {
          if (Date.now() > deadline) throw new Error(`pipeline did not drain within ${timeoutMs} ms`);
          await fanoutPoller.drained({ timeoutMs: Math.max(1000, deadline - Date.now()) });
          const active = config.consumers.map((c) => c.id).filter((id) => !paused.has(id));
          const backlog = await pendingMessages(adminSqs, active.map((id) => resources.queues[id]!.url));
          quiet = backlog === 0 && inFlight === 0 ? quiet + 1 : 0;
          await sleep(200);
        }
      },
      stopPipeline,
      startPipeline,
      async killDynamo() {
        const current = dynamo;
        if (!current) return;
        dynamo = undefined;
        if (current.pid !== undefined) process.kill(current.pid, 'SIGKILL');
        await current.stop();
      },
      async startDynamo() {
        if (dynamo) return;
        dynamo = await startDynamoLocal({ port: dynamoPort, dbPath: dataDir });
      },
      async stop() {
        for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
        cleanups.length = 0;
      },
    };
    return stack;
  } catch (error) {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
    throw error;
  }
}

/**
 * DeleteMessageBatch answers the chosen entries as Failed (an InternalError, as SQS can) and
 * deletes the rest for real: the message stays in the queue and comes back after its visibility
 * timeout, exactly as when the poller's delete is lost after the ledger committed.
 */
function installDeleteFault(sqs: SQSClient, failDelete: (queueUrl: string, receiptHandle: string) => boolean): void {
  sqs.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName !== 'DeleteMessageBatchCommand') return next(args);
      const input = args.input as DeleteMessageBatchCommandInput;
      const entries = input.Entries ?? [];
      const failing = entries.filter((e) => e.ReceiptHandle !== undefined && failDelete(input.QueueUrl ?? '', e.ReceiptHandle));
      if (failing.length === 0) return next(args);
      const rest = entries.filter((e) => !failing.includes(e));
      const result =
        rest.length > 0
          ? await next({ ...args, input: { ...input, Entries: rest } })
          : { output: { $metadata: {}, Successful: [], Failed: [] } as DeleteMessageBatchCommandOutput, response: {} };
      const output = result.output as DeleteMessageBatchCommandOutput;
      output.Failed = [
        ...(output.Failed ?? []),
        ...failing.map((e) => ({ Id: e.Id, SenderFault: false, Code: 'InternalError', Message: 'injected: delete lost' })),
      ];
      return result;
    },
    { step: 'initialize', name: 'reliabilityDeleteFault' },
  );
}

async function pendingMessages(sqs: SQSClient, queueUrls: string[]): Promise<number> {
  let total = 0;
  for (const url of queueUrls) total += await queueDepth(sqs, url);
  return total;
}

/** Visible plus in-flight messages. */
export async function queueDepth(sqs: SQSClient, url: string): Promise<number> {
  const out = await sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'] }),
  );
  return Number(out.Attributes?.ApproximateNumberOfMessages ?? 0) + Number(out.Attributes?.ApproximateNumberOfMessagesNotVisible ?? 0);
}

/** Receives and deletes everything visible in a queue; returns the delivery messages it held. */
export async function takeAll(sqs: SQSClient, url: string): Promise<DeliveryMessage[]> {
  const taken: DeliveryMessage[] = [];
  for (let empty = 0; empty < 2; ) {
    const out = await sqs.send(new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10, WaitTimeSeconds: 0, VisibilityTimeout: 30 }));
    const messages = out.Messages ?? [];
    if (messages.length === 0) {
      empty++;
      continue;
    }
    for (const m of messages) taken.push(JSON.parse(m.Body ?? '{}') as DeliveryMessage);
    await sqs.send(
      new DeleteMessageBatchCommand({ QueueUrl: url, Entries: messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle })) }),
    );
  }
  return taken;
}

async function scanTable<T>(handlers: LocalHandlers, tableName: string): Promise<T[]> {
  const items: T[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const out = await handlers.ddb.send(new ScanCommand({ TableName: tableName, ExclusiveStartKey: start, ConsistentRead: true }));
    items.push(...((out.Items ?? []) as T[]));
    start = out.LastEvaluatedKey;
  } while (start);
  return items;
}

export const ledgerItems = (stack: Pick<FaultStack, 'handlers' | 'resources'>) =>
  scanTable<LedgerItem>(stack.handlers, stack.resources.tables.ledger);

export const receipts = async (stack: Pick<FaultStack, 'handlers' | 'resources'>) =>
  (await scanTable<EventItem & { kind: string }>(stack.handlers, stack.resources.tables.events)).filter((i) => i.kind === 'event');

/** The reconcile check over [from, to) with no grace period: everything there must be settled. */
export function reconcileWindow(
  stack: Pick<FaultStack, 'handlers' | 'resources'>,
  window: { from: number; to: number },
): Promise<ReconcileReport> {
  return reconcile({ ddb: stack.handlers.ddb, tables: stack.resources.tables }, { ...window, graceMs: 0 });
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
