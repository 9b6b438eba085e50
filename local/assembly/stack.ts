/**
 * The local stack run from a synthesized cloud assembly: the emulators of local/stack.ts, the
 * tables, queues and bucket the template declares, each function's bundle in its own process with
 * the template's environment, the HTTP API's routes on the local gateway, and the template's event
 * source mappings played by the same stream and SQS pollers; every call a function makes (and each
 * of its event source mappings makes with its role) goes through a proxy that checks it against the
 * function's role policies. Used by `npm start -- --assembly` and test/assembly.
 */
import path from 'node:path';
import type { RepairResult } from '../../lambdas/reconcile/repair';
import { LOCAL_REGION } from '../clients';
import type { AccessKey, LocalStackCredentials } from '../credentials';
import type { AssemblyFunctions, ProvisionedAssembly } from '../pipeline/assembly/source';
import { assemblyPipeline } from '../pipeline/assembly/source';
import { type Pipeline, startPipeline } from '../pipeline/pipeline';
import type { FileSecrets } from '../secrets-file';
import type { RunningStackState } from '../state';
import type { PollerLogger } from '../support';
import type { LocalFunction } from './functions';
import type { Authorizer, Denial } from './iam';
import type { AssemblyResources } from './resources';
import { type CloudAssembly, readAssembly } from './template';

export interface AssemblyStackOptions {
  /** The `cdk synth -o <dir>` output. */
  readonly assemblyDir: string;
  /** DynamoDB Local's folder; null keeps everything in memory (tests). */
  readonly dataDir: string | null;
  readonly secretsFile: string;
  /** 0 picks a free port. */
  readonly httpPort: number;
  /** Every line a function writes, tagged with its logical id. */
  readonly onLog?: (functionId: string, line: string) => void;
  /** Each denied call (also in `denials()`). */
  readonly onDenied?: (denial: Denial) => void;
  /** Each invocation an event source mapping or the gateway made, once it returned: its outcome and what it returned. */
  readonly onInvoke?: (functionId: string, event: unknown, outcome: { ok: boolean; error?: string; result?: unknown }) => void;
  readonly pollerLogger?: (poller: string) => PollerLogger;
  readonly streamPollIntervalMs?: number;
  /**
   * At start, re-queue every delivery an earlier run left unfinished (the emulated queues keep
   * nothing across a restart), as plain `npm start` does. Default: on when `dataDir` is not null.
   */
  readonly repairOnStart?: boolean;
}

export interface AssemblyStack {
  readonly assembly: CloudAssembly;
  readonly url: string;
  webhookUrl(sourceId: string): string;
  readonly secrets: FileSecrets;
  /** The sources intake's SOURCE_SECRETS names. */
  readonly sourceIds: readonly string[];
  readonly resources: AssemblyResources;
  /** The raw emulator endpoints (the operator's; unchecked). */
  readonly endpoints: { readonly dynamodb: string; readonly sqs: string; readonly s3: string };
  /** The checked proxies' endpoints (a function's credentials are checked there). */
  readonly proxies: {
    readonly dynamodb: string;
    readonly sqs: string;
    readonly s3: string;
    readonly secretsmanager: string;
    /** The event source mapping calls (list, enable/disable) of the Lambda API. */
    readonly lambda: string;
  };
  /** What the CLI reads: tables and each consumer's queues, from the functions' environment (and the credential, written beside it). */
  readonly state: RunningStackState;
  /**
   * The operator's per-start credential: the emulators accept only its key, the proxies and endpoints
   * let it through unchecked, the admin endpoint takes its token.
   */
  readonly credentials: LocalStackCredentials;
  /** The key a function's process signs with (its principal's; the proxies check its calls against its role). */
  functionKey(functionId: string): AccessKey;
  readonly functions: Readonly<Record<string, LocalFunction>>;
  readonly iam: Authorizer;
  /** What the start-up repair re-queued (undefined when it did not run). */
  readonly startupRepair?: RepairResult;
  denials(): readonly Denial[];
  pause(consumerId: string): Promise<void>;
  resume(consumerId: string): void;
  /** The consumers paused now (by `pause`, or by disabling their mapping through the Lambda API). */
  paused(): string[];
  /** Until the stream is read to its end and every consumer queue is empty, twice in a row. */
  drain(options?: { timeoutMs?: number }): Promise<void>;
  stop(): Promise<void>;
}

/** How often each stream is read locally, ms (Lambda reads 4 times a second; tests want it sooner). */
const LOCAL_STREAM_POLL_MS = 50;

export async function startAssemblyStack(options: AssemblyStackOptions): Promise<AssemblyStack> {
  const assembly = readAssembly(path.resolve(options.assemblyDir));
  const pipeline = await startPipeline(
    assemblyPipeline({
      assembly,
      secretsFile: options.secretsFile,
      checkIam: true,
      ...(options.onDenied ? { onDenied: options.onDenied } : {}),
      ...(options.onLog ? { onLog: options.onLog } : {}),
      ...(options.onInvoke ? { onInvoke: options.onInvoke } : {}),
    }),
    {
      name: 'assembly stack',
      emulators: { dataDir: options.dataDir },
      httpPort: options.httpPort,
      operator: 'npm start --assembly',
      streamPollIntervalMs: options.streamPollIntervalMs ?? LOCAL_STREAM_POLL_MS,
      ...(options.repairOnStart !== undefined ? { repairOnStart: options.repairOnStart } : {}),
      ...(options.pollerLogger ? { pollerLogger: options.pollerLogger } : {}),
    },
  );
  return assemblyStackOf(pipeline, options);
}

/** The AssemblyStack face of a started pipeline on an assembly. */
function assemblyStackOf(pipeline: Pipeline<ProvisionedAssembly, AssemblyFunctions>, options: AssemblyStackOptions): AssemblyStack {
  const { provisioned, functions, switches, gateway } = pipeline;
  return {
    assembly: provisioned.assembly,
    url: gateway.url,
    webhookUrl: (sourceId) => `${gateway.url}/hooks/${sourceId}`,
    secrets: functions.secrets,
    sourceIds: functions.sourceIds,
    resources: provisioned.resources,
    endpoints: pipeline.emulators.endpoints,
    proxies: { ...provisioned.serviceEndpoints, ...functions.endpoints },
    state: assemblyState(pipeline, options),
    credentials: provisioned.operator,
    functionKey: (id) => provisioned.functionKey(id),
    functions: functions.processes,
    iam: provisioned.authorizer,
    ...(pipeline.startupRepair ? { startupRepair: pipeline.startupRepair } : {}),
    denials: () => [...provisioned.denials],
    pause: (consumerId) => switches.pause(consumerId),
    resume: (consumerId) => switches.resume(consumerId),
    paused: () => switches.paused(),
    drain: (drainOptions) => pipeline.drain(drainOptions),
    stop: () => pipeline.stop(),
  };
}

/** What the CLI reads: tables and each consumer's queues, from the functions' environment (and the credential, written beside it). */
function assemblyState(pipeline: Pipeline<ProvisionedAssembly, AssemblyFunctions>, options: AssemblyStackOptions): RunningStackState {
  const { provisioned, emulators, gateway } = pipeline;
  const envs = Object.values(provisioned.envs);
  const fanoutEnv = envs.find((e) => e.QUEUE_URLS);
  const consumerEnvs = envs.filter((e) => e.CONSUMER_ID);
  const queues = Object.values(provisioned.resources.queues);
  const sqsEndpoint = provisioned.serviceEndpoints.sqs;
  return {
    version: 1,
    pid: process.pid,
    startedAt: new Date().toISOString(),
    region: LOCAL_REGION,
    dynamo: { endpoint: emulators.endpoints.dynamodb, port: emulators.dynamoPort, dbPath: options.dataDir },
    // The CLI reaches the queues through the proxy too (queue URLs name it); as the operator, unchecked.
    sqs: { endpoint: sqsEndpoint, port: Number(new URL(sqsEndpoint).port) },
    gateway: { url: gateway.url, port: gateway.port },
    webhookUrl: `${gateway.url}/hooks/{source}`,
    adminUrl: pipeline.adminUrl ?? '',
    secretsFile: options.secretsFile,
    tables: { events: consumerEnvs[0]?.EVENTS_TABLE ?? fanoutEnv?.EVENTS_TABLE ?? '', ledger: consumerEnvs[0]?.LEDGER_TABLE ?? '' },
    queues: Object.fromEntries(
      consumerEnvs.map((e) => {
        const q = queues.find((x) => x.url === e.QUEUE_URL);
        const dlq = queues.find((x) => x.url === e.DLQ_URL);
        return [e.CONSUMER_ID!, { url: q?.url ?? '', arn: q?.arn ?? '', dlqUrl: dlq?.url ?? '', dlqArn: dlq?.arn ?? '' }];
      }),
    ),
    fanoutFailureQueue: fanoutFailureQueueOf(provisioned),
    credentials: provisioned.operator,
  };
}

/** The stream mapping's on-failure destination (the fan-out's). */
function fanoutFailureQueueOf(provisioned: ProvisionedAssembly): { url: string; arn: string } {
  const url = provisioned.plan.streams.find((m) => m.onFailureQueueUrl)?.onFailureQueueUrl;
  const q = Object.values(provisioned.resources.queues).find((x) => x.url === url);
  return { url: q?.url ?? '', arn: q?.arn ?? '' };
}
