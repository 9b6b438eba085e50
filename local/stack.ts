/**
 * The whole pipeline on one machine: DynamoDB Local (with Streams), an SQS emulator, the tables and
 * queues from hookledger.config.ts, an HTTP gateway in front of the real ingest handler, and pollers
 * that run the real fan-out and consumer handlers under Lambda's event-source rules.
 *
 * Used by `npm start` (bin/start.ts), the end-to-end tests and the benchmark.
 */
import path from 'node:path';
import { GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { SQSEvent } from 'aws-lambda';
import type { ConsumedCapacityObserver } from '../adapters/table';
import type { HookledgerConfig } from '../core/config/schema';
import { PROJECT_ROOT } from '../core/paths';
import { FANOUT_EVENT_SOURCE, FANOUT_FILTER_PATTERN } from '../core/queues';
import defaultConfig from '../hookledger.config';
import { type RepairResult, repair } from '../lambdas/reconcile/repair';
import type { ConsumerHandle, ConsumerLambdaHandler } from '../lambdas/runtime/runtime';
import type { Logger } from '../lambdas/shared/logger';
import { startAdminServer } from './admin-server';
import { createLocalPayloadBucket, LOCAL_REGION, localDynamoClient, localS3Client, localSqsClient } from './clients';
import { type LocalStackCredentials, processCredentials } from './credentials';
import { type DynamoLocal, freePort, type SqsEmulator, startDynamoLocal, startSqsEmulator } from './emulators';
import { type HttpGateway, startHttpGateway } from './http-gateway';
import { type ProvisionedStack, provisionLocalStack } from './provision';
import { DEFAULT_SECRETS_FILE, FileSecrets } from './secrets-file';
import { createSqsPoller, type SqsPoller } from './sqs-poller';
import type { RunningStackState } from './state';
import { fileCheckpointStore } from './streams/checkpoints';
import { createLocalStreamsApi } from './streams/dynamodb-streams';
import { createStreamPoller, type StreamPoller } from './streams/poller';
import { type PollerLogger, sleep } from './support';
import { createTtlSweeper, type TtlSweeper } from './ttl-sweeper';
import { buildHandlers, type LocalHandlers, localDocumentClient } from './wiring';

export interface LocalStackOptions {
  readonly config?: HookledgerConfig;
  /** Folder for DynamoDB Local's files; null keeps everything in memory (tests). Default `.hookledger/data`. */
  readonly dataDir?: string | null;
  /** HTTP port of the webhook gateway; 0 picks a free one. Default 3000. */
  readonly httpPort?: number;
  readonly dynamoPort?: number;
  readonly sqsPort?: number;
  /** Default `.hookledger/secrets.json` under the repository root. */
  readonly secretsFile?: string;
  /** Replace consumers' handles (tests inject faults). */
  readonly handles?: Readonly<Record<string, ConsumerHandle>>;
  readonly logger?: (service: string) => Logger;
  readonly clock?: () => number;
  readonly onCapacity?: ConsumedCapacityObserver;
  /** Consumer backoff base, ms (the runtime's default is 2000). */
  readonly backoffBaseMs?: number;
  /**
   * Runs the TTL sweeper on an interval. Default null (off): the bundled DynamoDB Local 3.3 deletes
   * expired items itself (about every 10 s, emitting AWS-style REMOVE records); `ttlSweeper.sweepOnce`
   * stays available to jump time forward in tests.
   */
  readonly ttlSweepIntervalMs?: number | null;
  /** Called after each consumer batch with one line per record, for `npm start`'s progress log. */
  readonly onDelivery?: (line: DeliveryProgress) => void;
  /** Told when an HTTP consumer's circuit breaker opens (it is then paused). */
  readonly onBreakerOpen?: (consumerId: string, failures: number) => void;
  /** Consumers left paused at start (their queues fill; `resume` starts them). */
  readonly paused?: readonly string[];
  readonly streamPollIntervalMs?: number;
  /** Wraps each consumer's Lambda handler as its poller invokes it (fault injection in tests). */
  readonly wrapConsumer?: (consumerId: string, handler: ConsumerLambdaHandler) => ConsumerLambdaHandler;
  /** Where the pollers report retries and skipped records. Default: the console. */
  readonly pollerLogger?: (poller: string) => PollerLogger;
  /**
   * At start, re-queue every delivery left unfinished by an earlier run (ready, leased or retrying:
   * the emulated queues keep nothing across a restart, fauxqs has no persistence). Default: on when
   * the data is file-backed (`dataDir` not null).
   */
  readonly repairOnStart?: boolean;
}

export interface DeliveryProgress {
  readonly consumerId: string;
  readonly eventId: string;
  readonly tenantId: string;
  readonly receiveCount: number;
  readonly outcome: 'processed' | 'failed';
}

export interface LocalStack {
  readonly config: HookledgerConfig;
  readonly url: string;
  readonly adminUrl: string;
  /** The per-start credential: the emulators accept only its key, the admin endpoint only its token. */
  readonly credentials: LocalStackCredentials;
  readonly endpoints: { readonly dynamodb: string; readonly sqs: string; readonly s3: string };
  /** The payload bucket on the S3 emulator (fauxqs). */
  readonly payloadBucket: string;
  readonly resources: ProvisionedStack;
  readonly handlers: LocalHandlers;
  readonly secrets: FileSecrets;
  readonly secretsFile: string;
  readonly dataDir: string | null;
  readonly ttlSweeper: TtlSweeper;
  /** The pollers' own SQS client (Lambda's event source mappings have their own): tests add middleware. */
  readonly pollerSqs: SQSClient;
  webhookUrl(sourceId: string): string;
  pause(consumerId: string): Promise<void>;
  resume(consumerId: string): void;
  paused(): string[];
  /** Intake requests by outcome since this stack started (`recorded`, `duplicate`, refusal codes). */
  intakeOutcomes(): Record<string, number>;
  /** What the start-up repair re-queued (undefined when it did not run). */
  readonly startupRepair?: RepairResult;
  /**
   * Waits until, twice in a row: the stream is read to its end, no consumer invocation is running,
   * and every running consumer's queue is empty, counting in-flight messages (being handled, backing
   * off, or whose delete was lost). Paused consumers' queues are left to fill.
   */
  drain(options?: { timeoutMs?: number }): Promise<void>;
  /** SIGKILLs DynamoDB Local (no shutdown hook runs) while the gateway and pollers keep running. */
  killStorage(): Promise<void>;
  /** Starts DynamoDB Local again on the same port and data folder. */
  startStorage(): Promise<void>;
  /** Stops the pollers and the TTL sweeper (the gateway and the emulators keep running). */
  stopPipeline(): Promise<void>;
  /** Starts the pollers again after stopPipeline (a "consumer restart"). */
  startPipeline(): Promise<void>;
  /**
   * Stops everything in the reverse order of start: the pollers (each waits for its calls in
   * flight), the admin server, the gateway, the SQS emulator, and DynamoDB Local last, so nothing
   * is still reading when it goes. The pollers are told synchronously, in the call itself. Safe to
   * call twice.
   */
  stop(): Promise<void>;
}

/** What `.hookledger/state.json` records about a running stack (its credential beside it), for the CLI and tests. */
export function stackState(stack: LocalStack, dataDir: string | null): RunningStackState {
  const port = (url: string) => Number(new URL(url).port);
  return {
    version: 1,
    pid: process.pid,
    startedAt: new Date().toISOString(),
    region: LOCAL_REGION,
    dynamo: { endpoint: stack.endpoints.dynamodb, port: port(stack.endpoints.dynamodb), dbPath: dataDir },
    sqs: { endpoint: stack.endpoints.sqs, port: port(stack.endpoints.sqs) },
    gateway: { url: stack.url, port: port(stack.url) },
    webhookUrl: `${stack.url}/hooks/{source}`,
    adminUrl: stack.adminUrl,
    secretsFile: stack.secretsFile,
    tables: stack.resources.tables,
    queues: stack.resources.queues,
    fanoutFailureQueue: stack.resources.fanoutFailureQueue,
    credentials: stack.credentials,
  };
}

export async function startLocalStack(options: LocalStackOptions = {}): Promise<LocalStack> {
  const config = options.config ?? defaultConfig;
  const dataDir = options.dataDir === undefined ? path.join(PROJECT_ROOT, '.hookledger', 'data') : options.dataDir;
  const started: { stop(): Promise<void> }[] = [];
  try {
    const dynamoPort = options.dynamoPort ?? (await freePort());
    let dynamo: DynamoLocal | undefined = await startDynamoLocal({ port: dynamoPort, dbPath: dataDir });
    started.push({ stop: async () => dynamo?.stop() });
    // The payload bucket's objects are kept beside the tables: a body intake answered 202 for survives a restart.
    const sqsServer: SqsEmulator = await startSqsEmulator({
      port: options.sqsPort ?? (await freePort()),
      s3Dir: dataDir === null ? null : path.join(dataDir, 's3'),
    });
    started.push(sqsServer);
    const dynamoEndpoint = dynamo.endpoint;
    // fauxqs serves S3 on the same endpoint as SQS.
    const endpoints = { dynamodb: dynamoEndpoint, sqs: sqsServer.endpoint, s3: sqsServer.endpoint };
    const dynamoClient = localDynamoClient(dynamoEndpoint);
    const sqs = localSqsClient(sqsServer.endpoint);
    const resources = await provisionLocalStack({
      config,
      dynamo: dynamoClient,
      sqs,
      tables: { events: 'hookledger-events', ledger: 'hookledger-ledger' },
    });
    const s3 = localS3Client(endpoints.s3);
    const payloadBucket = await createLocalPayloadBucket(s3);
    s3.destroy();
    const secretsFile = options.secretsFile ?? path.join(PROJECT_ROOT, DEFAULT_SECRETS_FILE);
    const secrets = new FileSecrets({
      path: secretsFile,
      sourceIds: config.sources.map((s) => s.id),
      consumerIds: config.consumers.filter((c) => c.kind === 'http').map((c) => c.id),
    });
    const outcomes = new Map<string, number>();
    const handlers = await buildHandlers({
      onIntakeOutcome: (outcome) => outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1),
      config,
      endpoints,
      resources,
      secrets,
      handles: options.handles,
      logger: options.logger,
      clock: options.clock,
      onCapacity: options.onCapacity,
      backoffBaseMs: options.backoffBaseMs,
      root: PROJECT_ROOT,
      consumerSecrets: secrets.consumerSecrets(),
      // An HTTP consumer's circuit breaker pauses its poller, as `hookledger pause` does.
      pause: (consumerId) => stack.pause(consumerId),
      onBreakerOpen: options.onBreakerOpen,
      payloadBucket,
    });

    const gateway: HttpGateway = await startHttpGateway({ port: options.httpPort ?? 3000, handler: handlers.ingest });
    started.push({ stop: () => gateway.close() });

    const fanoutPoller: StreamPoller = createStreamPoller({
      streams: createLocalStreamsApi({ endpoint: dynamoEndpoint }),
      tableName: resources.tables.events,
      // Looked up per batch, so instrumentation (the benchmark's counters) can wrap it after start.
      handler: (event) => handlers.fanout(event),
      filters: [FANOUT_FILTER_PATTERN],
      batchSize: FANOUT_EVENT_SOURCE.batchSize,
      maxRetryAttempts: FANOUT_EVENT_SOURCE.retryAttempts,
      bisectBatchOnFunctionError: FANOUT_EVENT_SOURCE.bisectBatchOnError,
      maxRecordAgeSeconds: FANOUT_EVENT_SOURCE.maxRecordAgeSeconds,
      onFailure: { sqs, queueUrl: resources.fanoutFailureQueue.url },
      functionName: 'hookledger-fanout',
      pollIntervalMs: options.streamPollIntervalMs ?? 50,
      logger: options.pollerLogger?.('stream-poller'),
      // File-backed data gets file-backed checkpoints: a restart resumes where it stopped.
      checkpoints: dataDir === null ? undefined : fileCheckpointStore(path.join(dataDir, 'stream-checkpoints.json')),
    });

    const pausedSet = new Set(options.paused ?? []);
    /** Consumer invocations running now (a fenced slow worker holds no message, but is still work). */
    let inFlight = 0;
    const makeConsumerPollers = (): Record<string, SqsPoller> =>
      Object.fromEntries(
        config.consumers.map((consumer) => {
          const queue = resources.queues[consumer.id]!;
          return [
            consumer.id,
            createSqsPoller({
              sqs,
              queueUrl: queue.url,
              queueArn: queue.arn,
              batchSize: consumer.batchSize,
              maxConcurrency: Math.min(consumer.maxConcurrency, 4),
              handler: async (event: SQSEvent) => {
                const inner = handlers.consumers[consumer.id]!;
                const handler = options.wrapConsumer ? options.wrapConsumer(consumer.id, inner) : inner;
                inFlight++;
                try {
                  const result = await handler(event);
                  reportProgress(consumer.id, event, result?.batchItemFailures ?? []);
                  return result;
                } finally {
                  inFlight--;
                }
              },
              logger: options.pollerLogger?.(`sqs-poller ${consumer.id}`),
            }),
          ];
        }),
      );
    let consumerPollers = makeConsumerPollers();

    const reportProgress = (consumerId: string, event: SQSEvent, failures: { itemIdentifier: string }[]) => {
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
    };

    const ttlSweeper = createTtlSweeper({
      dynamo: dynamoClient,
      tableName: resources.tables.events,
      intervalMs: options.ttlSweepIntervalMs ?? 5000,
      now: options.clock,
    });

    let running = false;
    const startPipeline = async () => {
      if (running) return;
      await fanoutPoller.start();
      for (const [id, poller] of Object.entries(consumerPollers)) {
        poller.start();
        if (pausedSet.has(id)) await poller.pause();
      }
      if (options.ttlSweepIntervalMs) ttlSweeper.start();
      running = true;
    };
    const stopPipeline = async () => {
      if (!running) return;
      running = false;
      // All told at once, before anything is awaited: on Ctrl-C every tick counts (the JVM got it too).
      await Promise.all([ttlSweeper.stop(), fanoutPoller.stop(), ...Object.values(consumerPollers).map((p) => p.stop())]);
      // The stream poller restarts after its in-memory checkpoint (like Lambda's); SQS pollers are
      // single-use, and SQS itself keeps their place.
      consumerPollers = makeConsumerPollers();
    };
    // Before any poller runs, so that no lease of this process is mistaken for an abandoned one.
    // The queues start empty on every start (fauxqs keeps messages in memory only), while the tables
    // remember every delivery not yet done: re-queue those, through the same ledger-safe path as
    // `hookledger reconcile --repair`. Nobody holds a lease any more (this process just started), and
    // no grace applies: whatever the previous run left unfinished has no message now.
    let startupRepair: RepairResult | undefined;
    if (options.repairOnStart ?? dataDir !== null) {
      const ddb = localDocumentClient(dynamoEndpoint);
      try {
        startupRepair = await repair(
          { ddb, tables: resources.tables, operator: 'npm start', clock: options.clock },
          // All of history, so a scan (the window index would list every UTC day since 1970).
          {
            from: 0,
            to: (options.clock ?? Date.now)() + 1,
            graceMs: 0,
            leasesAbandoned: true,
            paused: pausedSet,
            trigger: 'start',
            scan: true,
          },
        );
      } finally {
        ddb.destroy();
      }
    }

    await startPipeline();

    const credentials = processCredentials();
    const admin = await startAdminServer(
      {
        pause: async (id) => stack.pause(id),
        resume: (id) => stack.resume(id),
        paused: () => stack.paused(),
        intakeOutcomes: () => stack.intakeOutcomes(),
        consumers: config.consumers.map((c) => c.id),
      },
      { token: credentials.adminToken },
    );
    started.push({ stop: () => new Promise<void>((resolve) => admin.server.close(() => resolve())) });
    let stopped: Promise<void> | undefined;

    const stack: LocalStack = {
      config,
      url: gateway.url,
      adminUrl: admin.url,
      credentials,
      endpoints,
      payloadBucket,
      resources,
      handlers,
      secrets,
      secretsFile,
      dataDir,
      ttlSweeper,
      pollerSqs: sqs,
      webhookUrl: (sourceId) => `${gateway.url}/hooks/${sourceId}`,
      async pause(consumerId) {
        requireConsumer(config, consumerId);
        pausedSet.add(consumerId);
        await consumerPollers[consumerId]!.pause();
      },
      resume(consumerId) {
        requireConsumer(config, consumerId);
        pausedSet.delete(consumerId);
        consumerPollers[consumerId]!.resume();
      },
      paused: () => [...pausedSet].sort(),
      intakeOutcomes: () => Object.fromEntries([...outcomes].sort(([a], [b]) => a.localeCompare(b))),
      startupRepair,
      async drain({ timeoutMs = 60_000 } = {}) {
        const deadline = Date.now() + timeoutMs;
        // Quiet twice in a row, 200 ms apart: a consumer retry can put work back after a first look.
        for (let quiet = 0; quiet < 2; ) {
          if (Date.now() > deadline) throw new Error(`local stack did not drain within ${timeoutMs} ms`);
          await fanoutPoller.drained({ timeoutMs: Math.max(1000, deadline - Date.now()) });
          const active = config.consumers.map((c) => c.id).filter((id) => !pausedSet.has(id));
          const backlog = await pendingMessages(
            sqs,
            active.map((id) => resources.queues[id]!.url),
          );
          quiet = backlog === 0 && inFlight === 0 ? quiet + 1 : 0;
          await sleep(200);
        }
      },
      async killStorage() {
        const current = dynamo;
        if (!current) return;
        dynamo = undefined;
        if (current.pid !== undefined) process.kill(current.pid, 'SIGKILL');
        await current.stop();
      },
      async startStorage() {
        if (!dynamo) dynamo = await startDynamoLocal({ port: dynamoPort, dbPath: dataDir });
      },
      stopPipeline,
      startPipeline,
      stop() {
        stopped ??= (async () => {
          await stopPipeline();
          // Started as DynamoDB Local, SQS emulator, gateway, admin server: stopped the other way round.
          for (const part of [...started].reverse()) await part.stop().catch(() => undefined);
        })();
        return stopped;
      },
    };
    return stack;
  } catch (error) {
    for (const part of started.reverse()) await part.stop().catch(() => undefined);
    throw error;
  }
}

function requireConsumer(config: HookledgerConfig, consumerId: string): void {
  if (!config.consumers.some((c) => c.id === consumerId)) {
    throw new Error(`unknown consumer "${consumerId}"; configured: ${config.consumers.map((c) => c.id).join(', ')}`);
  }
}

/** Visible plus in-flight messages: anything there is still work (possibly waiting out a backoff). */
export async function queueDepth(sqs: SQSClient, queueUrl: string): Promise<number> {
  const out = await sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: queueUrl,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
    }),
  );
  return Number(out.Attributes?.ApproximateNumberOfMessages ?? 0) + Number(out.Attributes?.ApproximateNumberOfMessagesNotVisible ?? 0);
}

async function pendingMessages(sqs: SQSClient, queueUrls: string[]): Promise<number> {
  let total = 0;
  for (const url of queueUrls) total += await queueDepth(sqs, url);
  return total;
}
