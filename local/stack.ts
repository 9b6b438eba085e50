/**
 * The whole pipeline on one machine: DynamoDB Local (with Streams), an SQS emulator, the tables and
 * queues from hookledger.config.ts, an HTTP gateway in front of the real ingest handler, and pollers
 * that run the real fan-out and consumer handlers under Lambda's event-source rules.
 *
 * Used by `npm start` (bin/start.ts), the end-to-end tests and the benchmark.
 */
import path from 'node:path';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { ConsumedCapacityObserver } from '../adapters/table';
import type { HookledgerConfig } from '../core/config/schema';
import { PROJECT_ROOT } from '../core/paths';
import defaultConfig from '../hookledger.config';
import type { RepairResult } from '../lambdas/reconcile/repair';
import type { ConsumerHandle, ConsumerLambdaHandler } from '../lambdas/runtime/runtime';
import type { Logger } from '../lambdas/shared/logger';
import { LOCAL_REGION } from './clients';
import { type LocalStackCredentials, processCredentials } from './credentials';
import { behindFunctionUrl, functionUrlIdOf } from './function-url';
import { type Pipeline, type PipelineSource, startPipeline } from './pipeline/pipeline';
import { type DeliveryProgress, type ProvisionedSources, type SourceFunctions, sourcesPipeline } from './pipeline/sources';
import type { ProvisionedStack } from './provision';
import { DEFAULT_SECRETS_FILE, type FileSecrets } from './secrets-file';
import type { RunningStackState } from './state';
import type { PollerLogger } from './support';
import { createTtlSweeper, type TtlSweeper } from './ttl-sweeper';
import type { LocalHandlers } from './wiring';

export { queueDepth } from './pipeline/drain';
export type { DeliveryProgress } from './pipeline/sources';

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

/** The TTL sweeper's interval when one is asked for without a value, ms. */
const DEFAULT_TTL_SWEEP_MS = 5000;
/** How often the fan-out's stream is read locally, ms (Lambda reads 4 times a second; tests want it sooner). */
const LOCAL_STREAM_POLL_MS = 50;

export async function startLocalStack(options: LocalStackOptions = {}): Promise<LocalStack> {
  const config = options.config ?? defaultConfig;
  const dataDir = options.dataDir === undefined ? path.join(PROJECT_ROOT, '.hookledger', 'data') : options.dataDir;
  const secretsFile = options.secretsFile ?? path.join(PROJECT_ROOT, DEFAULT_SECRETS_FILE);
  const pipeline = await startPipeline(asDeployed(sourcesPipeline({ ...options, config, secretsFile }), config), {
    name: 'local stack',
    emulators: {
      dataDir,
      ...(options.dynamoPort ? { dynamoPort: options.dynamoPort } : {}),
      ...(options.sqsPort ? { sqsPort: options.sqsPort } : {}),
    },
    httpPort: options.httpPort ?? 3000,
    operator: 'npm start',
    streamPollIntervalMs: options.streamPollIntervalMs ?? LOCAL_STREAM_POLL_MS,
    ...(options.paused ? { paused: options.paused } : {}),
    ...(options.repairOnStart !== undefined ? { repairOnStart: options.repairOnStart } : {}),
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.pollerLogger ? { pollerLogger: options.pollerLogger } : {}),
  });
  const ttlSweeper = createTtlSweeper({
    dynamo: pipeline.functions.handlers.ddb,
    tableName: pipeline.provisioned.resources.tables.events,
    intervalMs: options.ttlSweepIntervalMs ?? DEFAULT_TTL_SWEEP_MS,
    now: options.clock,
  });
  if (options.ttlSweepIntervalMs) ttlSweeper.start();
  const startSweeper = options.ttlSweepIntervalMs ? () => ttlSweeper.start() : () => undefined;
  return localStackOf(pipeline, { config, secretsFile, ttlSweeper, startSweeper });
}

/** The id of intake's function URL locally: its events carry it as `requestContext.apiId`. */
const LOCAL_FUNCTION_URL_ID = functionUrlIdOf('hookledger-local/ingest');

/**
 * The sources' pipeline with the gateway in front of intake as `intake.endpoint` deploys it: the
 * HTTP API's routes, or intake's function URL (./function-url.ts).
 */
function asDeployed(
  source: PipelineSource<ProvisionedSources, SourceFunctions>,
  config: HookledgerConfig,
): PipelineSource<ProvisionedSources, SourceFunctions> {
  if (config.intake.endpoint !== 'function-url') return source;
  return {
    ...source,
    async provision(emulators, stops) {
      const provisioned = await source.provision(emulators, stops);
      return { ...provisioned, plan: behindFunctionUrl(provisioned.plan, LOCAL_FUNCTION_URL_ID) };
    },
  };
}

/** The LocalStack face of a started pipeline on the sources. */
function localStackOf(
  pipeline: Pipeline<ProvisionedSources, SourceFunctions>,
  {
    config,
    secretsFile,
    ttlSweeper,
    startSweeper,
  }: { config: HookledgerConfig; secretsFile: string; ttlSweeper: TtlSweeper; startSweeper: () => void },
): LocalStack {
  const { provisioned, switches, mappings, emulators } = pipeline;
  const url = pipeline.gateway.url;
  const stopPipeline = () => Promise.all([ttlSweeper.stop(), mappings.stop()]).then(() => undefined);
  let stopped: Promise<void> | undefined;
  return {
    config,
    url,
    adminUrl: pipeline.adminUrl ?? '',
    credentials: processCredentials(),
    endpoints: emulators.endpoints,
    payloadBucket: provisioned.payloadBucket,
    resources: provisioned.resources,
    handlers: pipeline.functions.handlers,
    secrets: provisioned.secrets,
    secretsFile,
    dataDir: emulators.dataDir,
    ttlSweeper,
    pollerSqs: provisioned.operatorSqs,
    webhookUrl: (sourceId) => `${url}/hooks/${sourceId}`,
    pause: (consumerId) => switches.pause(consumerId),
    resume: (consumerId) => switches.resume(consumerId),
    paused: () => switches.paused(),
    intakeOutcomes: () => pipeline.functions.intakeOutcomes(),
    ...(pipeline.startupRepair ? { startupRepair: pipeline.startupRepair } : {}),
    drain: (drainOptions) => pipeline.drain(drainOptions),
    killStorage: () => emulators.killStorage(),
    startStorage: () => emulators.startStorage(),
    stopPipeline,
    async startPipeline() {
      await mappings.start();
      startSweeper();
    },
    stop() {
      // Everything told at once, before anything is awaited: on Ctrl-C the JVM got the signal too.
      stopped ??= stopPipeline().then(() => pipeline.stop());
      return stopped;
    },
  };
}
