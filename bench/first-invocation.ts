/**
 * Section 5b: the first invocation of each bundle (bench/bundles/<name>/index.mjs, as measureBundles
 * built it) and of the floor: a fresh `node` process imports the bundle (load, timed in the child
 * around `await import`), then calls `handler` once with a realistic event (first request, timed in
 * the child around the call); total = load + first request, median over fresh processes run round
 * robin (floor, ingest, fan-out, each consumer, reconcile; like measureBundles' loads).
 *
 * What each process talks to is the local stack: DynamoDB Local, fauxqs (SQS and S3), the assembly's
 * Secrets Manager endpoint (local/assembly/secrets-endpoint.ts) over a local secrets file, and a
 * Lambda endpoint answering ListEventSourceMappings (the reconciler asks which consumers are paused),
 * started once and reused. Each function's environment is the one the CDK stack sets: the stack is
 * synthesized here (bundling skipped), its tables, queues and bucket created on the emulators
 * (provisionAssembly) and each function's Environment.Variables resolved against them, plus what
 * Lambda adds (region, credentials, name, memory, log level) and AWS_ENDPOINT_URL_* for the emulators.
 *
 * The events are the local stack's own: ingest gets a correctly signed standard-webhooks request for
 * the `platform` source through the local HTTP gateway (local/http-gateway.ts), fresh webhook id per
 * process; fan-out the stream batch the local stream poller reads with the template's filter (the
 * receipt's INSERT); each consumer the SQS batch its queue's poller receives (the delivery message
 * fan-out sent); reconcile an EventBridge scheduled event; the floor its PutItem on a table of its own.
 * Every first request is checked (202 and the receipt stored; no batch item failures; the consumer's
 * ledger row done; a complete reconcile run; the floor's item stored): an error path is never timed.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createHmac, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { CreateTableCommand, waitUntilTableExists } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyStructuredResultV2, DynamoDBBatchResponse, DynamoDBStreamEvent, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import type { HookledgerConfig } from '../core/config/schema';
import { HookledgerError } from '../core/errors';
import { eventKey, ledgerKey } from '../core/model';
import { PROJECT_ROOT as ROOT } from '../core/paths';
import { type CloudAssembly, readAssembly, resourcesOfType } from '../local/assembly/template';
import { LOCAL_REGION, localDynamoClient } from '../local/clients';
import {
  type AssemblyFunctions,
  type AssemblyPipelineOptions,
  assemblyPipeline,
  type ProvisionedAssembly,
} from '../local/pipeline/assembly/source';
import { type Pipeline, type PipelineSource, startPipeline } from '../local/pipeline/pipeline';
import { localDocumentClient } from '../local/wiring';
import { BUNDLE_DIR, loaderNode } from './bundles';
import { paymentEvent, signRequest } from './payload';
import { fmt, printNotes, printTable } from './report';
import { median, round } from './stats';

export class FirstInvocationError extends HookledgerError {
  override readonly name = 'FirstInvocationError';
}

export interface FirstInvocationRun {
  readonly loadMs: number;
  readonly firstRequestMs: number;
  readonly totalMs: number;
}

export interface FirstInvocationResult {
  /** Medians over the runs (each its own: the median total is not the sum of the other two medians). */
  readonly loadMs: number;
  readonly firstRequestMs: number;
  readonly totalMs: number;
  readonly runs: readonly FirstInvocationRun[];
}

/**
 * The child: the import timed as measureBundles times it, then one message with the event, the
 * handler called once with a Lambda-like context (timed), the answer sent back, exit.
 */
const RUNNER = `
const t0 = performance.now();
const m = await import(process.argv[1]);
const loadMs = performance.now() - t0;
if (typeof m.handler !== 'function') { console.error('the bundle exports no handler'); process.exit(1); }
process.once('message', async ({ event, deadline, requestId }) => {
  const context = {
    functionName: process.env.AWS_LAMBDA_FUNCTION_NAME, functionVersion: '$LATEST', awsRequestId: requestId,
    memoryLimitInMB: process.env.AWS_LAMBDA_FUNCTION_MEMORY_SIZE, logGroupName: '/aws/lambda/' + process.env.AWS_LAMBDA_FUNCTION_NAME,
    logStreamName: 'bench', callbackWaitsForEmptyEventLoop: true, getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
  };
  let answer;
  const t1 = performance.now();
  try {
    const result = await m.handler(event, context);
    answer = { ok: true, result: result === undefined ? null : result, firstRequestMs: performance.now() - t1 };
  } catch (error) {
    answer = { ok: false, error: { name: error?.name ?? 'Error', message: String(error?.message ?? error) } };
  }
  process.send(answer, () => process.exit(0));
});
process.send({ loadMs });
`;

export interface FreshProcess {
  /** The bundle (or any ES module exporting `handler`). */
  readonly file: string;
  /** The whole environment of the process. */
  readonly env: Readonly<Record<string, string>>;
  /** The function's timeout (the context's remaining time). @default 10 */
  readonly timeoutSeconds?: number;
}

type ChildMessage =
  | { loadMs: number }
  | { ok: true; result: unknown; firstRequestMs: number }
  | { ok: false; error: { name: string; message: string } };

/**
 * One fresh process: the import, then `trigger` makes the one invocation (directly, or through the
 * gateway or a poller handing the event over), then `verify` checks what the trigger returned
 * (the handler's answer, or the HTTP response) and the rows it should have written. Rejects, never
 * returns a time, when the import fails, the handler throws, the trigger does not invoke exactly
 * once, or `verify` throws.
 */
export async function firstInvocation<T>(
  name: string,
  fresh: FreshProcess,
  trigger: (invoke: (event: unknown) => Promise<unknown>) => Promise<T>,
  verify: (answer: T) => Promise<void>,
): Promise<FirstInvocationRun> {
  const child = spawn(loaderNode().path, ['--input-type=module', '-e', RUNNER, pathToFileURL(fresh.file).href], {
    env: fresh.env,
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  // What the function logs goes where Lambda's logs go: read and dropped (kept only for an error's tail).
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-3000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const failed = (what: string) => new FirstInvocationError(`${name}: ${what}${output ? `\n${output.trim()}` : ''}`);
  const nextMessage = (): Promise<ChildMessage> =>
    new Promise((resolve, reject) => {
      const onMessage = (m: ChildMessage) => {
        child.off('exit', onExit);
        resolve(m);
      };
      const onExit = (code: number | null, signal: string | null) => {
        child.off('message', onMessage);
        reject(failed(`the process exited (${signal ?? code}) before answering`));
      };
      child.once('message', onMessage);
      child.once('exit', onExit);
    });
  try {
    const loaded = await withTimeout(nextMessage(), 30_000, () => failed('the import did not finish within 30 s'));
    if (!('loadMs' in loaded)) throw failed('the process answered before it was sent an event');
    let invocations = 0;
    let firstRequestMs: number | undefined;
    const invoke = async (event: unknown): Promise<unknown> => {
      if (++invocations > 1) throw failed('the handler was invoked a second time; each process measures one first invocation');
      const answer = nextMessage();
      const timeoutMs = (fresh.timeoutSeconds ?? 10) * 1000;
      send(child, { event, deadline: Date.now() + timeoutMs, requestId: randomUUID() });
      const reply = await withTimeout(answer, timeoutMs + 5000, () => failed(`the first request did not answer within ${timeoutMs} ms`));
      if ('loadMs' in reply) throw failed('the process sent its load time twice');
      if (!reply.ok) throw failed(`the first invocation threw ${reply.error.name}: ${reply.error.message}`);
      firstRequestMs = reply.firstRequestMs;
      return reply.result;
    };
    const answer = await trigger(invoke);
    if (invocations !== 1 || firstRequestMs === undefined) throw failed(`the handler was invoked ${invocations} times, expected once`);
    await exited;
    try {
      await verify(answer);
    } catch (error) {
      // What the function logged tells why (its own error lines); never a secret: handlers log ids only.
      throw error instanceof FirstInvocationError && output ? failed(error.message.replace(/^[^:]+: /, '')) : error;
    }
    return { loadMs: loaded.loadMs, firstRequestMs, totalMs: loaded.loadMs + firstRequestMs };
  } finally {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exited;
    }
  }
}

function send(child: ChildProcess, message: unknown): void {
  child.send(message as never);
}

async function withTimeout<T>(promise: Promise<T>, ms: number, error: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([promise, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(error()), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

/** An API Gateway result (or HTTP response) with status 202; anything else names its status and body. */
export function expectHttp202(name: string, answer: unknown): void {
  const { statusCode, body } = (answer ?? {}) as APIGatewayProxyStructuredResultV2;
  if (statusCode !== 202) {
    throw new FirstInvocationError(
      `${name}: the first request answered ${statusCode ?? JSON.stringify(answer)}, not 202: ${String(body ?? '').slice(0, 300)}`,
    );
  }
}

/** A batch answer without item failures (a failed record would be retried: its time measures an error path). */
function expectNoBatchFailures(name: string, answer: unknown): void {
  const failures = (answer as DynamoDBBatchResponse | SQSBatchResponse | null)?.batchItemFailures ?? [];
  if (failures.length > 0) {
    throw new FirstInvocationError(
      `${name}: the first request reported ${failures.length} batch item failure(s): ${JSON.stringify(failures)}`,
    );
  }
}

// --- the local stack the processes talk to -------------------------------------------------------

/** The CDK context of `cdk synth` (cdk.json), so the template is the one deployed. */
function cdkContext(): Record<string, unknown> {
  return (JSON.parse(readFileSync(path.join(ROOT, 'cdk.json'), 'utf8')) as { context?: Record<string, unknown> }).context ?? {};
}

/** The stack synthesized in this process with bundling skipped: its template is all that is read. */
async function synthesize(config: HookledgerConfig, outdir: string): Promise<CloudAssembly> {
  const { App } = await import('aws-cdk-lib');
  const { addHookledgerStack } = await import('../lib/hookledger-stack');
  // Neither the CloudFormation rules check (seconds of WebAssembly) nor tree.json: only the template is read.
  const app = new App({
    outdir,
    context: { ...cdkContext(), 'aws:cdk:bundling-stacks': [] },
    builtinCloudFormationValidation: false,
    treeMetadata: false,
  });
  addHookledgerStack(app, config);
  app.synth();
  return readAssembly(outdir);
}

/** A batch a poller handed over, waiting for the answer of the invocation it is given to. */
interface Handed<E, R> {
  readonly event: E;
  answer(result: Promise<unknown>): Promise<R>;
}

/** Batches the pollers read, taken one at a time by the round robin (the poller waits for the answer). */
class Mailbox<E> {
  private readonly batches: Handed<E, unknown>[] = [];
  private waiter: ((b: Handed<E, unknown>) => void) | undefined;
  private closed = false;

  /** The poller's handler. */
  readonly handler = (event: E): Promise<never> =>
    new Promise((resolve, reject) => {
      if (this.closed) return reject(new FirstInvocationError('the bench is stopping'));
      const handed: Handed<E, unknown> = {
        event,
        answer: async (result) => {
          try {
            const value = await result;
            resolve(value as never);
            return value;
          } catch (error) {
            reject(error);
            throw error;
          }
        },
      };
      if (this.waiter) {
        const w = this.waiter;
        this.waiter = undefined;
        w(handed);
      } else this.batches.push(handed);
    });

  /** Fails every batch not taken, so that the pollers can stop. */
  close(): void {
    this.closed = true;
    for (const b of this.batches.splice(0))
      b.answer(Promise.reject(new FirstInvocationError('the bench is stopping'))).catch(() => undefined);
  }

  take(what: string, timeoutMs = 15_000): Promise<Handed<E, unknown>> {
    const next = this.batches.shift();
    if (next) return Promise.resolve(next);
    return new Promise((resolve, reject) => {
      // On timeout the waiter goes too: a batch arriving later is kept for close() to fail, not lost.
      const timer = setTimeout(() => {
        this.waiter = undefined;
        reject(new FirstInvocationError(`no ${what} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiter = (batch) => {
        clearTimeout(timer);
        resolve(batch);
      };
    });
  }
}

interface FunctionSpec {
  readonly logicalId: string;
  /** Its whole environment: the template's variables, what Lambda adds, the emulators' endpoints. */
  readonly env: Record<string, string>;
  readonly timeoutSeconds: number;
}

export interface FirstInvocationTargets {
  /** Bundle name (ingest, fanout, reconcile, a consumer id) -> its index.mjs. */
  readonly bundles: Readonly<Record<string, string>>;
  /** The floor's index.mjs. */
  readonly floor: string;
}

/** The local stack every fresh process of the measurement talks to, started once. */
interface Rig {
  readonly stackName: string;
  /** The source the webhooks are signed for (the first of ingest's SOURCE_SECRETS) and its current secret. */
  readonly source: string;
  readonly secret: string;
  /** By bundle name (the service name less `hookledger-`). */
  spec(name: string): FunctionSpec;
  /** Ingest's environment writing to a table of its own. */
  readonly floor: FunctionSpec & { readonly table: string };
  readonly gatewayUrl: string;
  /** Where the gateway hands the next request (undefined: none expected). */
  serveIngest(invoke: ((event: unknown) => Promise<unknown>) | undefined): void;
  readonly streamBatches: Mailbox<DynamoDBStreamEvent>;
  queueBatches(consumerId: string): Mailbox<SQSEvent>;
  stored(table: string, pk: string): Promise<Record<string, unknown> | undefined>;
  stop(): Promise<void>;
}

/** The bench's functions, by logical id: ingest behind the gateway, every other one a mailbox its poller fills. */
class RigFunctions {
  /** The gateway's function, once the pipeline started. */
  gatewayFunction: string | undefined;
  /** Where the gateway hands the next request (undefined: none expected). */
  ingest: ((event: unknown) => Promise<unknown>) | undefined;
  private readonly mailboxes = new Map<string, Mailbox<unknown>>();

  /** The pipeline's `invoke`: a poller's batch waits in its function's mailbox for the fresh process. */
  readonly invoke = async (functionId: string, event: unknown): Promise<unknown> => {
    if (functionId !== this.gatewayFunction) return this.mailbox(functionId).handler(event);
    if (!this.ingest) throw new FirstInvocationError('ingest: a request arrived while no ingest process was waiting');
    return this.ingest(event);
  };

  mailbox<E>(functionId: string): Mailbox<E> {
    const found = this.mailboxes.get(functionId) ?? new Mailbox<unknown>();
    this.mailboxes.set(functionId, found);
    return found as Mailbox<E>;
  }

  /** Fails every batch not taken, so that the pollers can stop. */
  close(): void {
    for (const m of this.mailboxes.values()) m.close();
  }
}

/** Each bundle's function in the template, by its service name (hookledger-<name>). */
function functionsByService(assembly: CloudAssembly): Map<string, { logicalId: string; timeoutSeconds: number }> {
  const byService = new Map<string, { logicalId: string; timeoutSeconds: number }>();
  for (const [id, fn] of resourcesOfType(assembly, 'AWS::Lambda::Function')) {
    const variables = (fn.Properties?.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables ?? {};
    const service = variables.POWERTOOLS_SERVICE_NAME;
    if (typeof service !== 'string' || !service.startsWith('hookledger-')) continue;
    byService.set(service.slice('hookledger-'.length), { logicalId: id, timeoutSeconds: Number(fn.Properties?.Timeout ?? 3) });
  }
  return byService;
}

/** The floor's table: ingest's key, a table of its own. */
async function createFloorTable(endpoint: string, name: string): Promise<void> {
  const ddb = localDynamoClient(endpoint);
  try {
    await ddb.send(
      new CreateTableCommand({
        TableName: name,
        AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
        KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
        BillingMode: 'PAY_PER_REQUEST',
      }),
    );
    await waitUntilTableExists({ client: ddb, maxWaitTime: 30, minDelay: 1 }, { TableName: name });
  } finally {
    ddb.destroy();
  }
}

/**
 * The local pipeline (local/pipeline) on the template synthesized from `config`: its resources on
 * DynamoDB Local and fauxqs, the Secrets Manager and Lambda endpoints, the HTTP gateway, and the
 * pollers of its event source mappings, with no IAM check (the processes sign as the operator) and
 * the functions run by the bench itself, one fresh process per measurement. DynamoDB Local's JVM
 * starts in its own process while the stack is synthesized here.
 */
async function startRig(config: HookledgerConfig, consumerIds: readonly string[], work: string): Promise<Rig> {
  const synthesized = synthesize(config, path.join(work, 'cdk.out'));
  synthesized.catch(() => undefined);
  const functions = new RigFunctions();
  const pipeline = await startPipeline(
    lateAssembly(synthesized, {
      secretsFile: path.join(work, 'secrets.json'),
      checkIam: false,
      invoke: functions.invoke,
      // One batch at a time per consumer: each is handed to one fresh process.
      maxQueueConcurrency: 1,
    }),
    {
      name: 'first-invocation rig',
      emulators: { dataDir: null },
      httpPort: 0,
      onGatewayError: () => undefined,
      operator: 'bench',
      repairOnStart: false,
      admin: false,
      // Lambda's 4 stream reads a second (the poller's default): fewer reads compete with the processes being timed.
      pollerLogger: () => ({ warn: () => undefined, error: () => undefined }),
    },
  );
  functions.gatewayFunction = pipeline.provisioned.plan.gateway.functionId;
  const ddb = localDocumentClient(pipeline.emulators.endpoints.dynamodb);
  const stop = async () => {
    functions.close();
    await pipeline.stop();
    ddb.destroy();
  };
  try {
    return await rigOf(pipeline, functions, consumerIds, { ddb, stop });
  } catch (error) {
    await stop();
    throw error;
  }
}

/** The assembly source on an assembly still being synthesized (awaited when provisioning starts). */
function lateAssembly(
  synthesized: Promise<CloudAssembly>,
  options: Omit<AssemblyPipelineOptions, 'assembly'>,
): PipelineSource<ProvisionedAssembly, AssemblyFunctions> {
  return {
    provision: async (emulators, stops) => assemblyPipeline({ ...options, assembly: await synthesized }).provision(emulators, stops),
    functions: (provisioned, switches, stops) =>
      assemblyPipeline({ ...options, assembly: provisioned.assembly }).functions(provisioned, switches, stops),
  };
}

/** The rig's face: each function's spec, the floor, the gateway and the mailboxes. */
async function rigOf(
  pipeline: Pipeline<ProvisionedAssembly, AssemblyFunctions>,
  functions: RigFunctions,
  consumerIds: readonly string[],
  { ddb, stop }: { ddb: DynamoDBDocumentClient; stop: () => Promise<void> },
): Promise<Rig> {
  const { assembly, plan } = pipeline.provisioned;
  const byService = functionsByService(assembly);
  const spec = (name: string): FunctionSpec => {
    const found = byService.get(name);
    if (!found)
      throw new FirstInvocationError(`${name}: no function with POWERTOOLS_SERVICE_NAME hookledger-${name} in the synthesized template`);
    return { ...found, env: pipeline.functions.environment(found.logicalId) };
  };
  const ingest = spec('ingest');
  const fanout = spec('fanout');
  spec('reconcile');
  const consumerFunction = new Map(plan.queues.map((q) => [q.consumerId, q.functionId]));
  for (const id of consumerIds) {
    spec(id);
    if (!consumerFunction.has(id)) throw new FirstInvocationError(`${id}: no SQS event source mapping in the synthesized template`);
  }
  if (!plan.streams.some((m) => m.functionId === fanout.logicalId)) {
    throw new FirstInvocationError('fanout: no stream event source mapping in the synthesized template');
  }
  const floorTable = `${assembly.stackName}-bench-floor`;
  await createFloorTable(pipeline.emulators.endpoints.dynamodb, floorTable);
  const source = JSON.parse(ingest.env.SOURCE_SECRETS ?? '{}') as Record<string, string>;
  const sourceId = Object.keys(source)[0];
  if (!sourceId) throw new FirstInvocationError('ingest: SOURCE_SECRETS names no source');
  return {
    stackName: assembly.stackName,
    source: sourceId,
    secret: (await pipeline.functions.secrets.get(sourceId)).current,
    spec,
    floor: { ...ingest, env: { ...ingest.env, EVENTS_TABLE: floorTable }, table: floorTable },
    gatewayUrl: pipeline.gateway.url,
    serveIngest: (invoke) => {
      functions.ingest = invoke;
    },
    streamBatches: functions.mailbox<DynamoDBStreamEvent>(fanout.logicalId),
    queueBatches: (id) => functions.mailbox<SQSEvent>(consumerFunction.get(id) ?? id),
    stored: async (table, pk) => (await ddb.send(new GetCommand({ TableName: table, Key: { pk }, ConsistentRead: true }))).Item,
    stop,
  };
}

/** Takes the next batch a poller read, checks it holds `wanted`, and answers the poller with the invocation's result. */
async function invokeWithBatch<E>(
  name: string,
  mailbox: Mailbox<E>,
  what: string,
  holds: (event: E) => { ok: boolean; found: string },
  invoke: (event: unknown) => Promise<unknown>,
): Promise<unknown> {
  const batch = await mailbox.take(`${what} for ${name}`);
  const check = holds(batch.event);
  if (!check.ok) {
    const error = new FirstInvocationError(`${name}: the batch holds ${check.found}, not the ${what}`);
    await batch.answer(Promise.reject(error)).catch(() => undefined);
    throw error;
  }
  return batch.answer(invoke(batch.event));
}

/** What one round measures with: the rig, the bundles, and this round's webhook. */
interface RoundContext {
  readonly rig: Rig;
  fresh(name: string, spec: FunctionSpec): FreshProcess;
  readonly round: number;
  readonly runId: string;
  /** The round's webhook: its event id and the receipt key intake stores it under. */
  readonly eventId: string;
  readonly receiptKey: string;
}

/** One round: a fresh process each for the floor, ingest, fan-out, every consumer and reconcile, in that order. */
async function oneRound(
  rig: Rig,
  targets: FirstInvocationTargets,
  consumerIds: readonly string[],
  round: number,
  runId: string,
): Promise<Record<string, FirstInvocationRun>> {
  const { eventId } = paymentEvent(round, runId);
  const context: RoundContext = {
    rig,
    round,
    runId,
    eventId,
    receiptKey: eventKey(rig.source, eventId),
    fresh: (name, spec) => {
      const file = name === 'floor' ? targets.floor : targets.bundles[name];
      if (!file) throw new FirstInvocationError(`${name}: no bundle to measure`);
      return { file, env: spec.env, timeoutSeconds: spec.timeoutSeconds };
    },
  };
  const out: Record<string, FirstInvocationRun> = {};
  out.floor = await floorRun(context);
  out.ingest = await ingestRun(context);
  out.fanout = await fanoutRun(context);
  for (const id of consumerIds) out[id] = await consumerRun(context, id);
  out.reconcile = await reconcileRun(context);
  return out;
}

/** The floor: its conditional PutItem of a fresh key, on a table that exists. */
function floorRun({ rig, fresh, round, runId }: RoundContext): Promise<FirstInvocationRun> {
  const floorBody = `${runId}-floor-${round}`;
  return firstInvocation(
    'floor',
    fresh('floor', rig.floor),
    (invoke) => invoke({ body: floorBody }),
    async (answer) => {
      expectHttp202('floor', answer);
      const pk = createHmac('sha256', rig.floor.table).update(floorBody).digest('hex');
      if (!(await rig.stored(rig.floor.table, pk))) {
        throw new FirstInvocationError(`floor: answered 202 but wrote no item pk=${pk} in ${rig.floor.table}`);
      }
    },
  );
}

/** Ingest: a signed webhook with a webhook id of its own, POSTed to the gateway. */
function ingestRun({ rig, fresh, round, runId, receiptKey }: RoundContext): Promise<FirstInvocationRun> {
  const { eventId, body } = paymentEvent(round, runId);
  const request = signRequest(rig.secret, eventId, body);
  const ingest = rig.spec('ingest');
  return firstInvocation(
    'ingest',
    fresh('ingest', ingest),
    async (invoke) => {
      rig.serveIngest(invoke);
      try {
        const res = await fetch(`${rig.gatewayUrl}/hooks/${rig.source}`, { method: 'POST', headers: request.headers, body: request.body });
        return { statusCode: res.status, body: await res.text() };
      } finally {
        rig.serveIngest(undefined);
      }
    },
    async (answer) => {
      expectHttp202('ingest', answer);
      const receipt = await rig.stored(ingest.env.EVENTS_TABLE ?? '', receiptKey);
      if (receipt?.kind !== 'event') throw new FirstInvocationError(`ingest: answered 202 but stored no receipt ${receiptKey}`);
    },
  );
}

/** Fan-out: the stream batch carrying that receipt's INSERT. */
function fanoutRun({ rig, fresh, receiptKey }: RoundContext): Promise<FirstInvocationRun> {
  return firstInvocation(
    'fanout',
    fresh('fanout', rig.spec('fanout')),
    (invoke) =>
      invokeWithBatch(
        'fanout',
        rig.streamBatches,
        `stream record of ${receiptKey}`,
        (event) => {
          const keys = event.Records.map((r) => r.dynamodb?.Keys?.pk?.S);
          return { ok: keys.includes(receiptKey), found: keys.join(', ') };
        },
        invoke,
      ),
    async (answer) => expectNoBatchFailures('fanout', answer),
  );
}

/** A consumer: the SQS batch with the delivery message fan-out sent it. */
function consumerRun({ rig, fresh, eventId }: RoundContext, id: string): Promise<FirstInvocationRun> {
  const spec = rig.spec(id);
  return firstInvocation(
    id,
    fresh(id, spec),
    (invoke) =>
      invokeWithBatch(
        id,
        rig.queueBatches(id),
        `delivery message of ${eventId}`,
        (event) => {
          const ids = event.Records.map((r) => (JSON.parse(r.body) as { eventId?: string }).eventId);
          return { ok: ids.includes(eventId), found: ids.join(', ') };
        },
        invoke,
      ),
    async (answer) => {
      expectNoBatchFailures(id, answer);
      const key = ledgerKey(rig.source, eventId, id);
      const row = await rig.stored(spec.env.LEDGER_TABLE ?? '', key);
      if (row?.state !== 'done') {
        throw new FirstInvocationError(
          `${id}: the first request left ledger row ${key} ${row ? `in state ${row.state}` : 'unwritten'}, not done`,
        );
      }
    },
  );
}

/** Reconcile: the schedule's event. */
function reconcileRun({ rig, fresh }: RoundContext): Promise<FirstInvocationRun> {
  const reconcile = rig.spec('reconcile');
  return firstInvocation(
    'reconcile',
    fresh('reconcile', reconcile),
    (invoke) =>
      invoke({
        version: '0',
        id: randomUUID(),
        'detail-type': 'Scheduled Event',
        source: 'aws.events',
        account: '000000000000',
        time: new Date().toISOString(),
        region: LOCAL_REGION,
        resources: [`arn:aws:events:${LOCAL_REGION}:000000000000:rule/${rig.stackName}-reconcile`],
        detail: {},
      }),
    async (answer) => {
      const run = answer as { complete?: unknown; receiptsChecked?: unknown; repair?: unknown } | null;
      if (run?.complete !== true || typeof run.receiptsChecked !== 'number') {
        throw new FirstInvocationError(`reconcile: the first run did not complete: ${JSON.stringify(answer).slice(0, 300)}`);
      }
      if (reconcile.env.REPAIR_MAX_PER_RUN && run.repair === undefined) {
        throw new FirstInvocationError('reconcile: deployed with repair on, but the first run did not repair (no `repair` in its answer)');
      }
    },
  );
}

/**
 * Starts the local stack once, then `runs` rounds of one fresh process per function and one for the
 * floor. The configuration must be the one the bundles inline (the shipped one).
 */
export async function measureFirstInvocations(
  config: HookledgerConfig,
  targets: FirstInvocationTargets,
  runs: number,
): Promise<FirstInvocations> {
  const t0 = performance.now();
  const work = mkdtempSync(path.join(tmpdir(), 'hookledger-bench-first-'));
  try {
    const consumerIds = Object.keys(targets.bundles).filter((n) => !['ingest', 'fanout', 'reconcile'].includes(n));
    const rig = await startRig(config, consumerIds, work);
    const names = ['ingest', 'fanout', ...consumerIds, 'reconcile'];
    const runsOf: Record<string, FirstInvocationRun[]> = Object.fromEntries(['floor', ...names].map((n) => [n, []]));
    try {
      const runId = `first${Date.now().toString(36)}`;
      for (let round = 0; round < runs; round++) {
        for (const [name, run] of Object.entries(await oneRound(rig, targets, consumerIds, round, runId))) runsOf[name]!.push(run);
      }
    } finally {
      await rig.stop();
    }
    const summary = (r: readonly FirstInvocationRun[]): FirstInvocationResult => ({
      loadMs: median(r.map((x) => x.loadMs)),
      firstRequestMs: median(r.map((x) => x.firstRequestMs)),
      totalMs: median(r.map((x) => x.totalMs)),
      runs: r,
    });
    return {
      byFunction: Object.fromEntries(names.map((n) => [n, summary(runsOf[n]!)])),
      floor: summary(runsOf.floor!),
      seconds: (performance.now() - t0) / 1000,
    };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

// --- report ------------------------------------------------------------------------------------

export interface FirstInvocations {
  readonly byFunction: Readonly<Record<string, FirstInvocationResult>>;
  readonly floor: FirstInvocationResult;
  /** Wall time of the whole measurement, the local stack's start and stop included. */
  readonly seconds: number;
}

/** The bundles measureBundles built (bench/bundles/<name>/index.mjs) and the floor's. */
export function bundleTargets(names: readonly string[]): FirstInvocationTargets {
  return {
    bundles: Object.fromEntries(names.map((n) => [n, path.join(BUNDLE_DIR, n, 'index.mjs')])),
    floor: path.join(BUNDLE_DIR, 'floor', 'index.mjs'),
  };
}

export function printFirstInvocations(first: FirstInvocations, runs: number): void {
  const floor = first.floor.totalMs;
  printTable(
    `5b. First invocation (fresh node process: load, then one request against the local stack; median of ${runs} processes each, round robin)`,
    ['function', 'the request', 'load', 'first request', 'total', 'ratio to floor'],
    [
      ...Object.entries(first.byFunction).map(([name, r]) => [
        name,
        FIRST_REQUEST[name] ?? 'an SQS batch: one delivery message (claim, run, ledger row done)',
        fmt.ms(r.loadMs),
        fmt.ms(r.firstRequestMs),
        fmt.ms(r.totalMs),
        (r.totalMs / floor).toFixed(2),
      ]),
      ['(floor)', FIRST_REQUEST.floor!, fmt.ms(first.floor.loadMs), fmt.ms(first.floor.firstRequestMs), fmt.ms(floor), '1.00'],
    ],
  );
  printNotes([
    'each function with the environment the CDK stack sets (the template synthesized here, resolved against the local tables, queues, bucket and secrets); DynamoDB Local, fauxqs (SQS through the assembly SQS proxy, S3), the assembly Secrets Manager endpoint, a Lambda endpoint for ListEventSourceMappings',
    'every first request checked: 202 and the receipt stored, no batch item failures, each ledger row done, a complete reconcile run, the floor item stored; a fresh webhook id per process; medians taken apart (total is not load + first request of the medians)',
    `load timed as in table 5, but with the emulators and pollers running beside the process: compare each total with this table's floor; measured in ${first.seconds.toFixed(0)} s, the local stack's start included`,
  ]);
}

const FIRST_REQUEST: Record<string, string> = {
  floor: 'PutItem (conditional) after an HMAC',
  ingest: 'signed webhook via the HTTP gateway (202, receipt stored)',
  fanout: 'stream batch with the receipt INSERT (messages sent)',
  reconcile: 'scheduled event (window checked, repair run)',
};

/** `bundles.<name>.firstInvocation` and `floorBundle.firstInvocation` added to the bundle figures. */
export function withFirstInvocations<J extends { bundles: Record<string, object>; floorBundle: object }>(
  json: J,
  first: FirstInvocations,
): J {
  const one = (r: FirstInvocationResult) => ({
    loadMs: round(r.loadMs),
    firstRequestMs: round(r.firstRequestMs),
    totalMs: round(r.totalMs),
    totalRunsMs: r.runs.map((x) => round(x.totalMs)),
  });
  return {
    ...json,
    bundles: Object.fromEntries(
      Object.entries(json.bundles).map(([name, b]) => {
        const r = first.byFunction[name];
        return [name, r ? { ...b, firstInvocation: { ...one(r), ratioToFloor: round(r.totalMs / first.floor.totalMs) } } : b];
      }),
    ),
    floorBundle: { ...json.floorBundle, firstInvocation: one(first.floor) },
  };
}
