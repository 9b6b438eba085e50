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
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { CreateTableCommand, waitUntilTableExists } from '@aws-sdk/client-dynamodb';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyStructuredResultV2, DynamoDBBatchResponse, DynamoDBStreamEvent, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import type { HookledgerConfig } from '../core/config/schema';
import { HookledgerError } from '../core/errors';
import { eventKey, ledgerKey } from '../core/model';
import { PROJECT_ROOT as ROOT } from '../core/paths';
import { createAuthorizer } from '../local/assembly/iam';
import { listenOnLoopback } from '../local/assembly/loopback';
import { startCheckedProxy } from '../local/assembly/proxy';
import { provisionAssembly } from '../local/assembly/resources';
import { type SecretBinding, startSecretsEndpoint } from '../local/assembly/secrets-endpoint';
import { type CloudAssembly, readAssembly, resolveIntrinsics, resourcesOfType } from '../local/assembly/template';
import { LOCAL_REGION, localDynamoClient, localS3Client, localSqsClient, localStreamsClient } from '../local/clients';
import { processCredentials } from '../local/credentials';
import { freePort, startDynamoLocal, startSqsEmulator } from '../local/emulators';
import { startHttpGateway } from '../local/http-gateway';
import { FileSecrets } from '../local/secrets-file';
import { createSqsPoller, type SqsPoller } from '../local/sqs-poller';
import { createSdkStreamsApi } from '../local/streams/dynamodb-streams';
import { createStreamPoller, type StreamPoller } from '../local/streams/poller';
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

/** ListEventSourceMappings from the template's mappings, all enabled (no consumer paused). */
async function startLambdaEndpoint(mappings: readonly { uuid: string; functionArn: string; eventSourceArn: string }[]) {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://lambda.local');
    req.resume();
    if (req.method !== 'GET' || !url.pathname.startsWith('/2015-03-31/event-source-mappings')) {
      res.writeHead(400, { 'content-type': 'application/json', 'x-amzn-errortype': 'InvalidParameterValueException' });
      return res.end(JSON.stringify({ message: `${req.method} ${url.pathname} is not served by the bench's Lambda endpoint` }));
    }
    const arn = url.searchParams.get('EventSourceArn');
    const found = mappings.filter((m) => arn === null || m.eventSourceArn === arn);
    const body = JSON.stringify({
      EventSourceMappings: found.map((m) => ({
        UUID: m.uuid,
        EventSourceArn: m.eventSourceArn,
        FunctionArn: m.functionArn,
        State: 'Enabled',
      })),
    });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
  return listenOnLoopback(server);
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

/**
 * The template synthesized from `config`, its resources on DynamoDB Local and fauxqs, the Secrets
 * Manager and Lambda endpoints, the HTTP gateway, and the pollers of its event source mappings.
 */
async function startRig(config: HookledgerConfig, consumerIds: readonly string[], work: string): Promise<Rig> {
  const stops: (() => Promise<unknown>)[] = [];
  const stop = async () => {
    for (const s of stops.splice(0).reverse()) await s().catch(() => undefined);
  };
  try {
    // DynamoDB Local's JVM starts in its own process while the stack is synthesized here.
    const dynamoStarting = freePort().then((port) => startDynamoLocal({ port, dbPath: null }));
    dynamoStarting.catch(() => undefined);
    const assembly = await synthesize(config, path.join(work, 'cdk.out')).catch(async (error: unknown) => {
      await (await dynamoStarting.catch(() => undefined))?.stop();
      throw error;
    });
    const dynamo = await dynamoStarting;
    stops.push(() => dynamo.stop());
    const fauxqs = await startSqsEmulator({ port: await freePort() });
    // The bundles sign as the operator (the emulators accept no other key); this bench checks no IAM.
    const operator = processCredentials();
    stops.push(() => fauxqs.stop());
    // fauxqs names its queues by a host that does not resolve here (sqs.<region>.localhost): as in
    // assembly mode, queue URLs name the assembly's SQS proxy (unchecked: no principals), which
    // swaps them for fauxqs's own.
    let upstreamQueueBase = '';
    const sqsProxy = await startCheckedProxy({
      service: 'sqs',
      upstream: fauxqs.endpoint,
      principals: new Map(),
      operator,
      authorizer: createAuthorizer(new Map()),
      queueUrlBase: () => upstreamQueueBase,
    });
    stops.push(() => sqsProxy.close());
    const ddbRaw = localDynamoClient(dynamo.endpoint);
    const s3 = localS3Client(fauxqs.endpoint);
    const provisioning = localSqsClient(fauxqs.endpoint);
    const resources = await provisionAssembly({ assembly, dynamo: ddbRaw, sqs: provisioning, s3, sqsProxyEndpoint: sqsProxy.endpoint });
    upstreamQueueBase = resources.upstreamQueueBase;
    provisioning.destroy();
    s3.destroy();
    const sqs = localSqsClient(sqsProxy.endpoint);
    const ddb = localDocumentClient(dynamo.endpoint);
    stops.push(async () => {
      ddbRaw.destroy();
      sqs.destroy();
      ddb.destroy();
    });

    // Each bundle's function in the template, by its service name (hookledger-<name>).
    const templateEnv = new Map<string, FunctionSpec>();
    for (const [id, fn] of resourcesOfType(assembly, 'AWS::Lambda::Function')) {
      const props = fn.Properties ?? {};
      const env = resolveIntrinsics(
        (props.Environment as { Variables?: unknown } | undefined)?.Variables ?? {},
        resources.locals,
        `${id}.Environment.Variables`,
      ) as Record<string, string>;
      const service = env.POWERTOOLS_SERVICE_NAME;
      if (!service?.startsWith('hookledger-')) continue;
      const logging = (props.LoggingConfig ?? {}) as { ApplicationLogLevel?: string; LogFormat?: string };
      templateEnv.set(service.slice('hookledger-'.length), {
        logicalId: id,
        timeoutSeconds: Number(props.Timeout ?? 3),
        env: {
          ...env,
          AWS_LAMBDA_FUNCTION_NAME: resources.locals.get(id)?.ref ?? id,
          AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(props.MemorySize ?? 128),
          AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
          ...(logging.LogFormat ? { AWS_LAMBDA_LOG_FORMAT: logging.LogFormat } : {}),
          ...(logging.ApplicationLogLevel ? { AWS_LAMBDA_LOG_LEVEL: logging.ApplicationLogLevel } : {}),
        },
      });
    }
    const ingestEnv = templateEnv.get('ingest')?.env ?? {};

    // Secrets Manager: the template's secrets bound to a local secrets file, served as the assembly serves them.
    const bindings = new Map<string, SecretBinding>();
    const sourceSecrets = JSON.parse(ingestEnv.SOURCE_SECRETS ?? '{}') as Record<string, string>;
    for (const [source, arn] of Object.entries(sourceSecrets)) bindings.set(arn, { kind: 'source', id: source });
    if (ingestEnv.PAYLOAD_HASH_KEY_SECRET) bindings.set(ingestEnv.PAYLOAD_HASH_KEY_SECRET, { kind: 'payloadHashKey' });
    const secrets = new FileSecrets({ path: path.join(work, 'secrets.json'), sourceIds: Object.keys(sourceSecrets) });
    const secretsEndpoint = await startSecretsEndpoint({
      secrets,
      bindings,
      principals: new Map(),
      operator,
      authorizer: createAuthorizer(new Map()),
    });
    stops.push(() => secretsEndpoint.close());

    // The event source mappings: the fan-out's stream and each consumer's queue.
    const esms = resourcesOfType(assembly, 'AWS::Lambda::EventSourceMapping').map(([id, esm]) => ({
      id,
      functionId: (esm.Properties?.FunctionName as { Ref?: string } | undefined)?.Ref ?? '',
      source: (esm.Properties?.EventSourceArn as { 'Fn::GetAtt'?: [string, string] } | undefined)?.['Fn::GetAtt'],
      props: resolveIntrinsics(esm.Properties ?? {}, resources.locals, id) as Record<string, unknown>,
    }));
    const lambdaEndpoint = await startLambdaEndpoint(
      esms.map((e) => ({
        uuid: e.id,
        functionArn: resources.locals.get(e.functionId)?.attributes.Arn ?? '',
        eventSourceArn: String(e.props.EventSourceArn ?? ''),
      })),
    );
    stops.push(() => lambdaEndpoint.close());

    // What Lambda adds, credentials, and the SDK clients pointed at the emulators.
    const common = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      AWS_REGION: LOCAL_REGION,
      AWS_DEFAULT_REGION: LOCAL_REGION,
      AWS_ACCESS_KEY_ID: operator.accessKeyId,
      AWS_SECRET_ACCESS_KEY: operator.secretAccessKey,
      AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint,
      AWS_ENDPOINT_URL_SQS: sqsProxy.endpoint,
      AWS_ENDPOINT_URL_S3: fauxqs.endpoint,
      AWS_ENDPOINT_URL_SECRETS_MANAGER: secretsEndpoint.endpoint,
      AWS_ENDPOINT_URL_LAMBDA: lambdaEndpoint.endpoint,
      AWS_EC2_METADATA_DISABLED: 'true',
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    };
    const spec = (name: string): FunctionSpec => {
      const found = templateEnv.get(name);
      if (!found) {
        throw new FirstInvocationError(`${name}: no function with POWERTOOLS_SERVICE_NAME hookledger-${name} in the synthesized template`);
      }
      return { ...found, env: { ...common, ...found.env } };
    };
    const ingest = spec('ingest');
    const fanout = spec('fanout');
    spec('reconcile');
    for (const id of consumerIds) spec(id);

    // The floor: ingest's environment, its table one of its own with the same key.
    const floorTable = `${assembly.stackName}-bench-floor`;
    await ddbRaw.send(
      new CreateTableCommand({
        TableName: floorTable,
        AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
        KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
        BillingMode: 'PAY_PER_REQUEST',
      }),
    );
    await waitUntilTableExists({ client: ddbRaw, maxWaitTime: 30, minDelay: 1 }, { TableName: floorTable });

    // Ingest behind the local HTTP gateway: the request it gets is the event API Gateway would build.
    let ingestInvoke: ((event: unknown) => Promise<unknown>) | undefined;
    const gateway = await startHttpGateway({
      port: 0,
      handler: async (event) => {
        if (!ingestInvoke) throw new FirstInvocationError('ingest: a request arrived while no ingest process was waiting');
        return (await ingestInvoke(event)) as APIGatewayProxyStructuredResultV2;
      },
      onError: () => undefined,
    });
    stops.push(() => gateway.close());

    // The pollers, as the event source mappings are configured; each batch waits for its fresh process.
    const streamBatches = new Mailbox<DynamoDBStreamEvent>();
    const queueBatches = new Map<string, Mailbox<SQSEvent>>();
    const pollers: (StreamPoller | SqsPoller)[] = [];
    stops.push(async () => {
      streamBatches.close();
      for (const m of queueBatches.values()) m.close();
      await Promise.all(pollers.map((p) => p.stop()));
    });
    const quiet = { warn: () => undefined, error: () => undefined };
    for (const esm of esms) {
      const reportBatchItemFailures = ((esm.props.FunctionResponseTypes as string[] | undefined) ?? []).includes('ReportBatchItemFailures');
      if (esm.functionId === fanout.logicalId && esm.source?.[1] === 'StreamArn') {
        const table = resources.tables[esm.source[0]];
        if (!table) throw new FirstInvocationError(`fanout: its stream belongs to ${esm.source[0]}, not a table of the template`);
        const poller = createStreamPoller({
          streams: createSdkStreamsApi(localStreamsClient(dynamo.endpoint)),
          tableName: table.name,
          handler: streamBatches.handler as (event: DynamoDBStreamEvent) => Promise<DynamoDBBatchResponse>,
          filters: ((esm.props.FilterCriteria as { Filters?: { Pattern: string }[] } | undefined)?.Filters ?? []).map((f) => f.Pattern),
          ...(esm.props.BatchSize !== undefined ? { batchSize: Number(esm.props.BatchSize) } : {}),
          reportBatchItemFailures,
          functionName: fanout.env.AWS_LAMBDA_FUNCTION_NAME,
          startingPosition: esm.props.StartingPosition === 'LATEST' ? 'LATEST' : 'TRIM_HORIZON',
          // Lambda's 4 reads a second (the default): fewer reads compete with the processes being timed.
          logger: quiet,
        });
        await poller.start();
        pollers.push(poller);
        continue;
      }
      const consumerId = [...templateEnv].find(([, f]) => f.logicalId === esm.functionId)?.[0];
      const queue = esm.source?.[1] === 'Arn' ? resources.queues[esm.source[0]] : undefined;
      if (!consumerId || !queue || !consumerIds.includes(consumerId)) continue;
      const mailbox = new Mailbox<SQSEvent>();
      queueBatches.set(consumerId, mailbox);
      const poller = createSqsPoller({
        sqs,
        queueUrl: queue.url,
        queueArn: queue.arn,
        handler: mailbox.handler as (event: SQSEvent) => Promise<SQSBatchResponse>,
        ...(esm.props.BatchSize !== undefined ? { batchSize: Number(esm.props.BatchSize) } : {}),
        maxConcurrency: 1,
        reportBatchItemFailures,
        logger: quiet,
      });
      poller.start();
      pollers.push(poller);
    }
    for (const id of consumerIds) {
      if (!queueBatches.has(id)) throw new FirstInvocationError(`${id}: no SQS event source mapping in the synthesized template`);
    }

    const source = Object.keys(sourceSecrets)[0];
    if (!source) throw new FirstInvocationError('ingest: SOURCE_SECRETS names no source');
    return {
      stackName: assembly.stackName,
      source,
      secret: (await secrets.get(source)).current,
      spec,
      floor: { ...ingest, env: { ...ingest.env, EVENTS_TABLE: floorTable }, table: floorTable },
      gatewayUrl: gateway.url,
      serveIngest: (invoke) => {
        ingestInvoke = invoke;
      },
      streamBatches,
      queueBatches: (id) => queueBatches.get(id)!,
      stored: async (table, pk) => (await ddb.send(new GetCommand({ TableName: table, Key: { pk }, ConsistentRead: true }))).Item,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
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

/** One round: a fresh process each for the floor, ingest, fan-out, every consumer and reconcile, in that order. */
async function oneRound(
  rig: Rig,
  targets: FirstInvocationTargets,
  consumerIds: readonly string[],
  round: number,
  runId: string,
): Promise<Record<string, FirstInvocationRun>> {
  const fresh = (name: string, spec: FunctionSpec): FreshProcess => {
    const file = name === 'floor' ? targets.floor : targets.bundles[name];
    if (!file) throw new FirstInvocationError(`${name}: no bundle to measure`);
    return { file, env: spec.env, timeoutSeconds: spec.timeoutSeconds };
  };
  const out: Record<string, FirstInvocationRun> = {};

  // The floor: its conditional PutItem of a fresh key, on a table that exists.
  const floorBody = `${runId}-floor-${round}`;
  out.floor = await firstInvocation(
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

  // Ingest: a signed webhook with a webhook id of its own, POSTed to the gateway.
  const { eventId, body } = paymentEvent(round, runId);
  const request = signRequest(rig.secret, eventId, body);
  const receiptKey = eventKey(rig.source, eventId);
  const ingest = rig.spec('ingest');
  out.ingest = await firstInvocation(
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

  // Fan-out: the stream batch carrying that receipt's INSERT.
  out.fanout = await firstInvocation(
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

  // Each consumer: the SQS batch with the delivery message fan-out sent it.
  for (const id of consumerIds) {
    const spec = rig.spec(id);
    out[id] = await firstInvocation(
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

  // Reconcile: the schedule's event.
  const reconcile = rig.spec('reconcile');
  out.reconcile = await firstInvocation(
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
  return out;
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
