/**
 * The assembly source: everything from a synthesized cloud assembly, nothing from
 * hookledger.config.ts. Provisioning creates what the template declares (local/assembly/resources.ts)
 * and reads the plan from it (./plan.ts); the functions are the assembly's bundles, each in its own
 * process with the template's environment plus what Lambda adds (local/assembly/functions.ts).
 *
 * The IAM check: with `checkIam`, every call a function makes (and each of its event source mappings
 * makes with its role) goes through a proxy that checks it against the function's role policies, and
 * the Secrets Manager and Lambda endpoints check theirs. Without it (the bench's rig) every process
 * signs as the operator and talks to the emulators directly; only the SQS proxy stays, because
 * queue URLs name it.
 */

import { intakeOutcomeCounter } from '../../assembly/emf';
import { FunctionError, type LocalFunction, startLocalFunction } from '../../assembly/functions';
import { type Authorizer, createAuthorizer, type Denial, functionKeys, type LocalPrincipal, principalsOf } from '../../assembly/iam';
import { type LocalMapping, startLambdaEndpoint } from '../../assembly/lambda-endpoint';
import { type CheckedService, startCheckedProxy } from '../../assembly/proxy';
import type { TableKeys } from '../../assembly/requests';
import { type AssemblyResources, provisionAssembly } from '../../assembly/resources';
import { type SecretBinding, startSecretsEndpoint } from '../../assembly/secrets-endpoint';
import { type CloudAssembly, functionCodeDir } from '../../assembly/template';
import { LOCAL_REGION, localDynamoClient, localS3Client, localSqsClient, localStreamsClient } from '../../clients';
import type { AccessKey, LocalStackCredentials } from '../../credentials';
import { processCredentials } from '../../credentials';
import { behindFunctionUrl } from '../../function-url';
import type { FileSecrets } from '../../secrets-file';
import { FileSecrets as SecretsFile } from '../../secrets-file';
import { createSdkStreamsApi } from '../../streams/dynamodb-streams';
import type { Emulators, Endpoints } from '../emulators';
import type { PipelineSource, Provisioned } from '../pipeline';
import type { MappingClients, PipelineFunctions, PipelinePlan } from '../plan';
import type { StopList } from '../stops';
import type { ConsumerSwitches } from '../switches';
import { bundledSourceOverlaps } from './bundled-config';
import { assemblyPlan, type Env, type IntakeEndpoint, intakeEndpointOf, runningFunctions, templateEnvironment } from './plan';

/** Lambda's defaults when the template sets none. */
const DEFAULT_TIMEOUT_SECONDS = 3;
const DEFAULT_MEMORY_MB = 128;

export interface AssemblyPipelineOptions {
  readonly assembly: CloudAssembly;
  readonly secretsFile: string;
  /** Check every call against its function's role (assembly mode); see the file's comment. */
  readonly checkIam: boolean;
  readonly onDenied?: (denial: Denial) => void;
  /** Every line a function writes, tagged with its logical id. */
  readonly onLog?: (functionId: string, line: string) => void;
  /** Each invocation an event source mapping or the gateway made, once it returned: its outcome and what it returned. */
  readonly onInvoke?: (functionId: string, event: unknown, outcome: { ok: boolean; error?: string; result?: unknown }) => void;
  /** Batches in flight per consumer mapping (default: the mapping's, at most 2). */
  readonly maxQueueConcurrency?: number;
  /**
   * Who runs the functions. Default: each running function's bundle in its own process. The bench
   * gives its own (a fresh process per measurement, its bundles not the assembly's): no process is
   * started and no overlap is read from a bundle.
   */
  readonly invoke?: (functionId: string, event: unknown) => Promise<unknown>;
}

export interface ProvisionedAssembly extends Provisioned {
  readonly assembly: CloudAssembly;
  readonly resources: AssemblyResources;
  /** What reaches intake: the HTTP API's routes or its function URL (local/function-url.ts). */
  readonly intake: IntakeEndpoint;
  /** The template environment of each running function, by logical id. */
  readonly envs: Readonly<Record<string, Env>>;
  readonly operator: LocalStackCredentials;
  readonly principals: ReadonlyMap<string, LocalPrincipal>;
  readonly authorizer: Authorizer;
  readonly denials: readonly Denial[];
  /** The key a function's process signs with (the operator's when IAM is not checked). */
  functionKey(functionId: string): AccessKey;
  /** Where the functions' SDK clients point: the checked proxies, or the emulators (SQS always through its proxy). */
  readonly serviceEndpoints: Endpoints;
}

export interface AssemblyFunctions extends PipelineFunctions {
  readonly secrets: FileSecrets;
  /** The sources intake's SOURCE_SECRETS names. */
  readonly sourceIds: readonly string[];
  readonly endpoints: { readonly secretsmanager: string; readonly lambda: string };
  /** The running bundles by logical id (none when `invoke` was given). */
  readonly processes: Readonly<Record<string, LocalFunction>>;
  /** A function's whole environment: the template's variables, what Lambda adds, the endpoints. */
  environment(functionId: string): Env;
}

export function assemblyPipeline(options: AssemblyPipelineOptions): PipelineSource<ProvisionedAssembly, AssemblyFunctions> {
  return {
    provision: (emulators, stops) => provisionAssemblyPipeline(options, emulators, stops),
    functions: (provisioned, switches, stops) => startAssemblyFunctions(options, provisioned, switches, stops),
  };
}

async function provisionAssemblyPipeline(
  options: AssemblyPipelineOptions,
  emulators: Emulators,
  stops: StopList,
): Promise<ProvisionedAssembly> {
  const { assembly } = options;
  // Before anything is created: a template nothing reaches intake through is refused at once.
  const intake = intakeEndpointOf(assembly);
  const operator = processCredentials();
  // Filled once the template is resolved; the proxies read them per request.
  const principals = new Map<string, LocalPrincipal>();
  const tableKeys = new Map<string, TableKeys>();
  const denials: Denial[] = [];
  const authorizer = createAuthorizer(principals, (denial) => {
    denials.push(denial);
    options.onDenied?.(denial);
  });
  let upstreamQueueBase = '';
  const proxy = async (service: CheckedService) => {
    const started = await startCheckedProxy({
      service,
      upstream: emulators.endpoints[service],
      principals,
      operator,
      authorizer,
      tables: tableKeys,
      ...(service === 'sqs' ? { queueUrlBase: () => upstreamQueueBase } : {}),
    });
    stops.add(() => started.close());
    return started.endpoint;
  };
  const serviceEndpoints = options.checkIam
    ? { dynamodb: await proxy('dynamodb'), sqs: await proxy('sqs'), s3: await proxy('s3') }
    : { ...emulators.endpoints, sqs: await proxy('sqs') };
  const resources = await createResources(assembly, emulators.endpoints, serviceEndpoints.sqs);
  upstreamQueueBase = resources.upstreamQueueBase;
  if (options.checkIam) {
    for (const [k, v] of principalsOf(assembly, resources.locals)) principals.set(k, v);
    for (const [name, keys] of tableKeysOf(assembly, resources)) tableKeys.set(name, keys);
  }
  const envs = Object.fromEntries(runningFunctions(assembly).map((id) => [id, templateEnvironment(assembly, resources, id)]));
  // From here on queue URLs name the SQS proxy; the operator's calls through it are not checked.
  const operatorSqs = localSqsClient(serviceEndpoints.sqs);
  stops.add(async () => operatorSqs.destroy());
  const keys = functionKeys(principals);
  const plan = assemblyPlan(assembly, resources, { envs, ...definedConcurrency(options) });
  return {
    // Behind a function URL the gateway hands intake every path and method, with the URL's event.
    plan: intake.kind === 'function-url' ? behindFunctionUrl(plan, intake.urlId) : plan,
    operatorSqs,
    assembly,
    resources,
    intake,
    envs,
    operator,
    principals,
    authorizer,
    denials,
    functionKey: (id) => (options.checkIam ? keys(id) : operator),
    serviceEndpoints,
  };
}

function definedConcurrency(options: AssemblyPipelineOptions) {
  return options.maxQueueConcurrency !== undefined ? { maxQueueConcurrency: options.maxQueueConcurrency } : {};
}

/** The template's tables, queues and bucket, created as the operator on the emulators themselves. */
async function createResources(assembly: CloudAssembly, endpoints: Endpoints, sqsProxyEndpoint: string): Promise<AssemblyResources> {
  const dynamo = localDynamoClient(endpoints.dynamodb);
  const sqs = localSqsClient(endpoints.sqs);
  const s3 = localS3Client(endpoints.s3);
  try {
    return await provisionAssembly({ assembly, dynamo, sqs, s3, sqsProxyEndpoint });
  } finally {
    for (const client of [dynamo, sqs, s3]) client.destroy();
  }
}

/** Each table's partition key and its indexes' (the proxy checks dynamodb:LeadingKeys with them). */
function tableKeysOf(assembly: CloudAssembly, resources: AssemblyResources): Map<string, TableKeys> {
  const keys = new Map<string, TableKeys>();
  for (const [id, table] of Object.entries(resources.tables)) {
    const gsis = (assembly.resources[id]?.Properties?.GlobalSecondaryIndexes ?? []) as {
      IndexName: string;
      KeySchema: { AttributeName: string; KeyType: string }[];
    }[];
    keys.set(table.name, {
      partitionKey: table.partitionKey,
      indexKeys: Object.fromEntries(gsis.map((g) => [g.IndexName, g.KeySchema.find((k) => k.KeyType === 'HASH')?.AttributeName ?? ''])),
      ...(table.streamArn ? { streamArn: table.streamArn } : {}),
    });
  }
  return keys;
}

async function startAssemblyFunctions(
  options: AssemblyPipelineOptions,
  provisioned: ProvisionedAssembly,
  switches: ConsumerSwitches,
  stops: StopList,
): Promise<AssemblyFunctions> {
  const { principals, operator, authorizer, plan } = provisioned;
  const { bindings, sourceIds, consumerIds } = secretBindings(provisioned.envs);
  const secrets = new SecretsFile({ path: options.secretsFile, sourceIds, consumerIds });
  const overlapMs = options.invoke ? {} : bundledSourceOverlaps(options.assembly, plan.gateway.functionId);
  const secretsEndpoint = await startSecretsEndpoint({ secrets, bindings, principals, operator, authorizer, overlapMs });
  stops.add(() => secretsEndpoint.close());
  // A circuit breaker disables its own mapping here, as on AWS.
  const lambdaEndpoint = await startLambdaEndpoint({ mappings: () => localMappings(plan, switches), principals, operator, authorizer });
  stops.add(() => lambdaEndpoint.close());
  const endpoints = { secretsmanager: secretsEndpoint.endpoint, lambda: lambdaEndpoint.endpoint };
  const environment = (id: string) => lambdaEnvironment(provisioned, id, endpoints);
  const intake = intakeOutcomeCounter();
  const processes = options.invoke ? {} : await startBundles(provisioned, environment, intake.add, options, stops);
  return {
    invoke: options.invoke ?? ((id, event) => invokeRecorded(processes, id, event, options.onInvoke)),
    mappingClients: mappingClientsOf(provisioned),
    // From the ingest bundle's own IntakeRequests and SignatureFailures EMF lines, as CloudWatch counts them.
    intakeOutcomes: () => intake.outcomes(),
    signatureFailures: () => intake.signatureFailures(),
    secrets,
    sourceIds,
    endpoints,
    processes,
    environment,
  };
}

/** The secrets the template hands to the functions, bound to the local secrets file's entries. */
function secretBindings(envs: Readonly<Record<string, Env>>) {
  const bindings = new Map<string, SecretBinding>();
  const sourceIds = new Set<string>();
  const consumerIds = new Set<string>();
  for (const env of Object.values(envs)) {
    for (const [source, arn] of Object.entries(JSON.parse(env.SOURCE_SECRETS ?? '{}') as Record<string, string>)) {
      bindings.set(arn, { kind: 'source', id: source });
      sourceIds.add(source);
    }
    if (env.PAYLOAD_HASH_KEY_SECRET) bindings.set(env.PAYLOAD_HASH_KEY_SECRET, { kind: 'payloadHashKey' });
    if (env.CONSUMER_SECRET && env.CONSUMER_ID) {
      bindings.set(env.CONSUMER_SECRET, { kind: 'consumer', id: env.CONSUMER_ID });
      consumerIds.add(env.CONSUMER_ID);
    }
  }
  return { bindings, sourceIds: [...sourceIds], consumerIds: [...consumerIds] };
}

/** The template's event source mappings on the Lambda endpoint; disabling an SQS one pauses its consumer. */
function localMappings(plan: PipelinePlan, switches: ConsumerSwitches): LocalMapping[] {
  return [
    ...plan.streams.map((m) => ({ uuid: m.id, eventSourceArn: m.eventSourceArn, functionArn: m.functionArn, enabled: () => true })),
    ...plan.queues.map((m) => ({
      uuid: m.id,
      eventSourceArn: m.queueArn,
      functionArn: m.functionArn,
      enabled: () => !switches.isPaused(m.consumerId),
      // Not awaited: the caller may be the batch the pause waits for (Lambda answers Disabling too).
      setEnabled: (enabled: boolean) => (enabled ? switches.resume(m.consumerId) : void switches.pause(m.consumerId)),
    })),
  ];
}

/** What Lambda sets around the template's variables: region, the function's key, its name and memory, the endpoints. */
function lambdaEnvironment(provisioned: ProvisionedAssembly, id: string, endpoints: AssemblyFunctions['endpoints']): Env {
  const { assembly, resources, serviceEndpoints } = provisioned;
  const props = assembly.resources[id]?.Properties ?? {};
  const logging = (props.LoggingConfig ?? {}) as { ApplicationLogLevel?: string; LogFormat?: string };
  const key = provisioned.functionKey(id);
  return {
    PATH: process.env.PATH ?? '',
    ...(provisioned.envs[id] ?? templateEnvironment(assembly, resources, id)),
    AWS_REGION: LOCAL_REGION,
    AWS_DEFAULT_REGION: LOCAL_REGION,
    AWS_ACCESS_KEY_ID: key.accessKeyId,
    AWS_SECRET_ACCESS_KEY: key.secretAccessKey,
    AWS_ENDPOINT_URL_DYNAMODB: serviceEndpoints.dynamodb,
    AWS_ENDPOINT_URL_SQS: serviceEndpoints.sqs,
    AWS_ENDPOINT_URL_S3: serviceEndpoints.s3,
    AWS_ENDPOINT_URL_SECRETS_MANAGER: endpoints.secretsmanager,
    AWS_ENDPOINT_URL_LAMBDA: endpoints.lambda,
    AWS_EC2_METADATA_DISABLED: 'true',
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    AWS_LAMBDA_FUNCTION_NAME: resources.locals.get(id)?.ref ?? id,
    AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(props.MemorySize ?? DEFAULT_MEMORY_MB),
    AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
    ...(logging.LogFormat ? { AWS_LAMBDA_LOG_FORMAT: logging.LogFormat } : {}),
    ...(logging.ApplicationLogLevel ? { AWS_LAMBDA_LOG_LEVEL: logging.ApplicationLogLevel } : {}),
  };
}

/** Each running function's bundle in its own process; resolves once every module scope ran. */
async function startBundles(
  provisioned: ProvisionedAssembly,
  environment: (id: string) => Env,
  countIntake: (line: string) => void,
  options: AssemblyPipelineOptions,
  stops: StopList,
): Promise<Record<string, LocalFunction>> {
  const { assembly, resources } = provisioned;
  const processes: Record<string, LocalFunction> = {};
  for (const id of Object.keys(provisioned.envs)) {
    const props = assembly.resources[id]?.Properties ?? {};
    const started = startLocalFunction({
      logicalId: id,
      functionName: resources.locals.get(id)?.ref ?? id,
      functionArn: resources.locals.get(id)?.attributes.Arn ?? '',
      codeDir: functionCodeDir(assembly, id),
      handler: String(props.Handler ?? 'index.handler'),
      timeoutSeconds: Number(props.Timeout ?? DEFAULT_TIMEOUT_SECONDS),
      memorySize: Number(props.MemorySize ?? DEFAULT_MEMORY_MB),
      environment: environment(id),
      onLog: (line) => {
        countIntake(line);
        options.onLog?.(id, line);
      },
    });
    processes[id] = started;
    stops.add(() => started.stop());
  }
  await Promise.all(Object.values(processes).map((f) => f.ready()));
  return processes;
}

async function invokeRecorded(
  processes: Readonly<Record<string, LocalFunction>>,
  id: string,
  event: unknown,
  onInvoke: AssemblyPipelineOptions['onInvoke'],
): Promise<unknown> {
  const fn = processes[id];
  if (!fn) throw new FunctionError('ResourceNotFoundException', `function ${id} does not run locally`);
  try {
    const result = await fn.invoke(event);
    onInvoke?.(id, event, { ok: true, result });
    return result;
  } catch (error) {
    onInvoke?.(id, event, { ok: false, error: error instanceof Error ? error.message : String(error) });
    throw error;
  }
}

/** Each mapping reads and deletes with its function's key (checked like the function's own calls), one set per function. */
function mappingClientsOf(provisioned: ProvisionedAssembly): (functionId: string) => MappingClients {
  const byFunction = new Map<string, MappingClients>();
  return (functionId) => {
    const found = byFunction.get(functionId);
    if (found) return found;
    const key = provisioned.functionKey(functionId);
    const clients = {
      sqs: localSqsClient(provisioned.serviceEndpoints.sqs, key),
      streams: createSdkStreamsApi(localStreamsClient(provisioned.serviceEndpoints.dynamodb, key)),
    };
    byFunction.set(functionId, clients);
    return clients;
  };
}
