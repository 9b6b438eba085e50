/**
 * The reliability suites' stack: the local stack (local/stack.ts) with its fault hooks switched on:
 *
 *   wrapConsumer   wraps each consumer's Lambda handler as the SQS poller invokes it, so a test can
 *                  fail a batch before the runtime runs (the worker died before claiming) or after it
 *                  returned (the ledger committed, the function died before the poller deleted);
 *   failDelete     makes the pollers' DeleteMessageBatch report chosen entries as Failed (a
 *                  middleware on the pollers' own SQS client);
 *   killDynamo / startDynamo
 *                  SIGKILL DynamoDB Local and start it again on the same port and dbPath while the
 *                  gateway, the handlers and the pollers keep running against the same endpoint.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  DeleteMessageBatchCommand,
  type DeleteMessageBatchCommandInput,
  type DeleteMessageBatchCommandOutput,
  ReceiveMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { scanAll } from '../../adapters/table-scan';
import type { HookledgerConfig } from '../../core/config/schema';
import type { DeliveryMessage, EventItem, LedgerItem } from '../../core/model';
import { type ReconcileReport, reconcile } from '../../lambdas/reconcile/reconcile';
import type { ConsumerHandle, ConsumerLambdaHandler } from '../../lambdas/runtime/runtime';
import { createLogger, type Logger } from '../../lambdas/shared/logger';
import type { ProvisionedStack } from '../../local/provision';
import type { FileSecrets } from '../../local/secrets-file';
import { startLocalStack } from '../../local/stack';
import type { LocalHandlers } from '../../local/wiring';

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
  /** What the pollers reported (kept here instead of on the console). */
  readonly pollerLog: string[];
  webhookUrl(sourceId: string): string;
  pause(consumerId: string): Promise<void>;
  resume(consumerId: string): void;
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
  const workDir = mkdtempSync(path.join(tmpdir(), 'hookledger-reliability-'));
  const pollerLog: string[] = [];
  const stack = await startLocalStack({
    config: options.config,
    dataDir: options.dataDir ?? null,
    httpPort: 0,
    secretsFile: path.join(workDir, 'secrets.json'),
    handles: options.handles,
    wrapConsumer: options.wrapConsumer,
    logger: options.logger ?? ((service) => createLogger(service, { silent: true })),
    backoffBaseMs: options.backoffBaseMs ?? 200,
    ttlSweepIntervalMs: null,
    pollerLogger: (name) => ({
      warn: (message, extra) => pollerLog.push(`[${name}] warn ${message} ${JSON.stringify(extra ?? {})}`),
      error: (message, extra) => pollerLog.push(`[${name}] error ${message} ${JSON.stringify(extra ?? {})}`),
    }),
  });
  if (options.failDelete) installDeleteFault(stack.pollerSqs, options.failDelete);
  return {
    config: stack.config,
    resources: stack.resources,
    handlers: stack.handlers,
    secrets: stack.secrets,
    dynamoEndpoint: stack.endpoints.dynamodb,
    pollerLog,
    webhookUrl: (sourceId) => stack.webhookUrl(sourceId),
    pause: (id) => stack.pause(id),
    resume: (id) => stack.resume(id),
    drain: (o) => stack.drain({ timeoutMs: 90_000, ...o }),
    stopPipeline: () => stack.stopPipeline(),
    startPipeline: () => stack.startPipeline(),
    killDynamo: () => stack.killStorage(),
    startDynamo: () => stack.startStorage(),
    stop: () => stack.stop(),
  };
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

export { queueDepth } from '../../local/stack';

/** Receives and deletes everything visible in a queue; returns the delivery messages it held. */
export async function takeAll(sqs: SQSClient, url: string): Promise<DeliveryMessage[]> {
  const taken: DeliveryMessage[] = [];
  for (let empty = 0; empty < 2; ) {
    const out = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10, WaitTimeSeconds: 0, VisibilityTimeout: 30 }),
    );
    const messages = out.Messages ?? [];
    if (messages.length === 0) {
      empty++;
      continue;
    }
    for (const m of messages) taken.push(JSON.parse(m.Body ?? '{}') as DeliveryMessage);
    await sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl: url,
        Entries: messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle })),
      }),
    );
  }
  return taken;
}

function scanTable<T>(handlers: LocalHandlers, tableName: string): Promise<T[]> {
  return scanAll<T>(handlers.ddb, { TableName: tableName, ConsistentRead: true });
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
