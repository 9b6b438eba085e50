/**
 * What an assembly runs, read from its template alone: the functions an event source mapping, an
 * API route or intake's function URL invokes, each one's environment, what reaches intake, and the
 * event source mappings as a pipeline plan (local/pipeline/plan.ts). Nothing here reads hookledger.config.ts.
 */
import { createHash } from 'node:crypto';
import type { AssemblyResources } from '../../assembly/resources';
import { AssemblyError, type CloudAssembly, resolveIntrinsics, resourcesOfType, type TemplateResource } from '../../assembly/template';
import type { PipelinePlan, QueueMapping, StreamMapping } from '../plan';

export type Env = Record<string, string>;

/** One sandbox per function runs one invocation at a time locally: more receives would only wait. */
const MAX_LOCAL_MAPPING_CONCURRENCY = 2;
/** Lambda's default `ScalingConfig.MaximumConcurrency` floor. */
const DEFAULT_MAPPING_CONCURRENCY = 2;

const functionOf = (ref: unknown) => (ref as { Ref?: string } | undefined)?.Ref ?? '';

/** The Lambda function a route's integration names. */
function integrationTarget(assembly: CloudAssembly, routeProps: Record<string, unknown>): string {
  const target = JSON.stringify(routeProps.Target ?? '');
  const integrationId = /"Ref":"([^"]+)"/.exec(target)?.[1] ?? '';
  const uri = assembly.resources[integrationId]?.Properties?.IntegrationUri as { 'Fn::GetAtt'?: [string, string] } | undefined;
  const fn = uri?.['Fn::GetAtt']?.[0];
  if (!fn) throw new AssemblyError(`route ${String(routeProps.RouteKey)}: its integration ${integrationId} names no Lambda function`);
  return fn;
}

/**
 * A template whose intake the local gateway cannot serve: no HTTP API route and no function URL,
 * both, more than one function behind them, or a function URL callers must sign (AuthType AWS_IAM)
 * or read as a stream. The message names what is missing or refused, and the fix.
 */
export class IntakeEndpointError extends AssemblyError {
  override readonly name: string = 'IntakeEndpointError';
}

/**
 * What reaches intake, read from the template: the HTTP API's routes (`intake.endpoint: 'http-api'`)
 * or intake's own function URL (`'function-url'`), whose target is then the gateway's function.
 */
export type IntakeEndpoint =
  | { readonly kind: 'http-api'; readonly functionId: string; readonly routeKeys: readonly string[] }
  | {
      readonly kind: 'function-url';
      readonly functionId: string;
      /** The AWS::Lambda::Url's logical id. */
      readonly urlLogicalId: string;
      /** The URL id its events carry as `requestContext.apiId` (32 of [a-z0-9], as AWS's). */
      readonly urlId: string;
    };

export function intakeEndpointOf(assembly: CloudAssembly): IntakeEndpoint {
  const routes = resourcesOfType(assembly, 'AWS::ApiGatewayV2::Route');
  const urls = resourcesOfType(assembly, 'AWS::Lambda::Url');
  if (routes.length === 0 && urls.length === 0) {
    throw new IntakeEndpointError(
      `${assembly.templateFile} has no AWS::ApiGatewayV2::Route and no AWS::Lambda::Url: nothing reaches intake; ` +
        `synthesize with intake.endpoint 'http-api' (the default) or 'function-url'`,
    );
  }
  if (routes.length > 0 && urls.length > 0) {
    throw new IntakeEndpointError(
      `${assembly.templateFile} has both HTTP API routes (${routes.map(([id]) => id).join(', ')}) and a function URL ` +
        `(${urls.map(([id]) => id).join(', ')}); the local gateway serves intake on one: keep the one intake.endpoint builds`,
    );
  }
  if (urls.length > 0) return functionUrlEndpoint(assembly, urls);
  const targets = new Set(routes.map(([, r]) => integrationTarget(assembly, r.Properties ?? {})));
  if (targets.size !== 1) throw new IntakeEndpointError(`the HTTP API routes to ${targets.size} functions; the local gateway serves one`);
  return { kind: 'http-api', functionId: [...targets][0]!, routeKeys: routes.map(([, r]) => String(r.Properties?.RouteKey)) };
}

/** The one function URL, checked: a function of the template, AuthType NONE, buffered. */
function functionUrlEndpoint(assembly: CloudAssembly, urls: [string, TemplateResource][]): IntakeEndpoint {
  if (urls.length !== 1) {
    throw new IntakeEndpointError(
      `the template has ${urls.length} function URLs (${urls.map(([id]) => id).join(', ')}); the local gateway serves one`,
    );
  }
  const [urlLogicalId, url] = urls[0]!;
  const props = url.Properties ?? {};
  const target = props.TargetFunctionArn as { 'Fn::GetAtt'?: [string, string]; Ref?: string } | undefined;
  const functionId = target?.['Fn::GetAtt']?.[1] === 'Arn' ? target['Fn::GetAtt'][0] : target?.Ref;
  if (!functionId || assembly.resources[functionId]?.Type !== 'AWS::Lambda::Function') {
    throw new IntakeEndpointError(
      `function URL ${urlLogicalId}: its TargetFunctionArn ${JSON.stringify(target)} names no AWS::Lambda::Function of the template`,
    );
  }
  if (props.AuthType !== 'NONE') {
    throw new IntakeEndpointError(
      `function URL ${urlLogicalId} has AuthType ${String(props.AuthType)}: the local gateway takes unsigned callers only, ` +
        `as webhook providers call (AuthType NONE, what intake.endpoint 'function-url' builds)`,
    );
  }
  if (props.InvokeMode !== undefined && props.InvokeMode !== 'BUFFERED') {
    throw new IntakeEndpointError(
      `function URL ${urlLogicalId} has InvokeMode ${String(props.InvokeMode)}: the local gateway answers BUFFERED only`,
    );
  }
  const urlId = createHash('sha256').update(`${assembly.stackName}/${urlLogicalId}`).digest('hex').slice(0, 32);
  return { kind: 'function-url', functionId, urlLogicalId, urlId };
}

/**
 * The gateway's function and routes: the HTTP API's routes, or for a function URL the default two,
 * which source.ts turns into the URL's every path and method (local/function-url.ts behindFunctionUrl).
 */
export function gatewayOf(assembly: CloudAssembly): PipelinePlan['gateway'] {
  const intake = intakeEndpointOf(assembly);
  return intake.kind === 'http-api' ? { functionId: intake.functionId, routeKeys: intake.routeKeys } : { functionId: intake.functionId };
}

/** The functions that run: those an event source mapping invokes, and intake (behind the API's routes or its URL). */
export function runningFunctions(assembly: CloudAssembly): string[] {
  const esms = resourcesOfType(assembly, 'AWS::Lambda::EventSourceMapping');
  return [...new Set([...esms.map(([, e]) => functionOf(e.Properties?.FunctionName)), intakeEndpointOf(assembly).functionId])];
}

/** A function's Environment.Variables, resolved against the local resources. */
export function templateEnvironment(assembly: CloudAssembly, resources: AssemblyResources, functionId: string): Env {
  const variables = (assembly.resources[functionId]?.Properties?.Environment as { Variables?: unknown } | undefined)?.Variables;
  return resolveIntrinsics(variables ?? {}, resources.locals, `${functionId}.Environment.Variables`) as Env;
}

export interface AssemblyPlanOptions {
  /** By function id, the template environment of each running function. */
  readonly envs: Readonly<Record<string, Env>>;
  /** Batches in flight per consumer mapping. Default: the mapping's MaximumConcurrency, at most 2. */
  readonly maxQueueConcurrency?: number;
}

export function assemblyPlan(assembly: CloudAssembly, resources: AssemblyResources, options: AssemblyPlanOptions): PipelinePlan {
  const streams: StreamMapping[] = [];
  const queues: QueueMapping[] = [];
  for (const [esmId, esm] of resourcesOfType(assembly, 'AWS::Lambda::EventSourceMapping')) {
    const props = resolveIntrinsics(esm.Properties ?? {}, resources.locals, esmId) as Record<string, unknown>;
    const functionId = functionOf(esm.Properties?.FunctionName);
    const source = (esm.Properties?.EventSourceArn as { 'Fn::GetAtt'?: [string, string] } | undefined)?.['Fn::GetAtt'];
    const common = {
      id: esmId,
      functionId,
      functionArn: resources.locals.get(functionId)?.attributes.Arn ?? '',
      filters: ((props.FilterCriteria as { Filters?: { Pattern: string }[] } | undefined)?.Filters ?? []).map((f) => f.Pattern),
      reportBatchItemFailures: ((props.FunctionResponseTypes as string[] | undefined) ?? []).includes('ReportBatchItemFailures'),
      ...numberOf(props, { batchSize: 'BatchSize' }),
    };
    if (source?.[1] === 'StreamArn') streams.push({ ...common, ...streamMapping(esmId, functionId, source[0], props, resources) });
    else queues.push({ ...common, ...queueMapping(esmId, functionId, esm.Properties?.EventSourceArn, props, resources, options) });
  }
  return { tables: tablesOf(options.envs), gateway: gatewayOf(assembly), streams, queues };
}

function streamMapping(esmId: string, functionId: string, tableId: string, props: Record<string, unknown>, resources: AssemblyResources) {
  const table = resources.tables[tableId];
  if (!table) throw new AssemblyError(`${esmId}: its stream belongs to ${tableId}, not a table the local stack runs`);
  const onFailureArn = (props.DestinationConfig as { OnFailure?: { Destination?: string } } | undefined)?.OnFailure?.Destination;
  const onFailureQueue = onFailureArn ? Object.values(resources.queues).find((q) => q.arn === onFailureArn) : undefined;
  if (onFailureArn && !onFailureQueue)
    throw new AssemblyError(`${esmId}: on-failure destination ${onFailureArn} is not an SQS queue of the stack`);
  return {
    tableName: table.name,
    eventSourceArn: table.streamArn ?? '',
    functionName: resources.locals.get(functionId)?.ref ?? functionId,
    bisectBatchOnFunctionError: props.BisectBatchOnFunctionError === true,
    startingPosition: props.StartingPosition === 'LATEST' ? ('LATEST' as const) : ('TRIM_HORIZON' as const),
    ...numberOf(props, {
      maxRetryAttempts: 'MaximumRetryAttempts',
      maxRecordAgeSeconds: 'MaximumRecordAgeInSeconds',
      batchingWindowSeconds: 'MaximumBatchingWindowInSeconds',
    }),
    ...(onFailureQueue ? { onFailureQueueUrl: onFailureQueue.url } : {}),
    checkpointFile: `stream-checkpoints-${esmId}.json`,
    logName: `stream ${esmId}`,
  };
}

function queueMapping(
  esmId: string,
  functionId: string,
  sourceArn: unknown,
  props: Record<string, unknown>,
  resources: AssemblyResources,
  options: AssemblyPlanOptions,
) {
  const source = (sourceArn as { 'Fn::GetAtt'?: [string, string] } | undefined)?.['Fn::GetAtt'];
  const queue = source?.[1] === 'Arn' ? resources.queues[source[0]] : undefined;
  if (!queue)
    throw new AssemblyError(`${esmId}: event source ${JSON.stringify(sourceArn)} is neither a table stream nor a queue of the stack`);
  const consumerId = options.envs[functionId]?.CONSUMER_ID ?? functionId;
  const scaling = Number(
    (props.ScalingConfig as { MaximumConcurrency?: number } | undefined)?.MaximumConcurrency ?? DEFAULT_MAPPING_CONCURRENCY,
  );
  return {
    consumerId,
    queueUrl: queue.url,
    queueArn: queue.arn,
    maxConcurrency: options.maxQueueConcurrency ?? Math.min(scaling, MAX_LOCAL_MAPPING_CONCURRENCY),
    ...numberOf(props, { batchingWindowSeconds: 'MaximumBatchingWindowInSeconds' }),
    logName: `sqs ${consumerId}`,
  };
}

/** The named properties that are given, as numbers. */
function numberOf<K extends string>(props: Record<string, unknown>, names: Record<K, string>): Partial<Record<K, number>> {
  const out: Partial<Record<K, number>> = {};
  for (const [key, name] of Object.entries(names) as [K, string][]) if (props[name] !== undefined) out[key] = Number(props[name]);
  return out;
}

/** The tables the functions are told (EVENTS_TABLE, LEDGER_TABLE): what the start-up repair reads. */
function tablesOf(envs: Readonly<Record<string, Env>>): PipelinePlan['tables'] {
  const all = Object.values(envs);
  return {
    events: all.find((e) => e.EVENTS_TABLE)?.EVENTS_TABLE ?? '',
    ledger: all.find((e) => e.LEDGER_TABLE)?.LEDGER_TABLE ?? '',
  };
}
