/**
 * What an assembly runs, read from its template alone: the functions an event source mapping or an
 * API route invokes, each one's environment, the HTTP API's routes, and the event source mappings as
 * a pipeline plan (local/pipeline/plan.ts). Nothing here reads hookledger.config.ts.
 */
import type { AssemblyResources } from '../../assembly/resources';
import { AssemblyError, type CloudAssembly, resolveIntrinsics, resourcesOfType } from '../../assembly/template';
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

/** The HTTP API: its routes, all on the one integration the local gateway serves. */
export function gatewayOf(assembly: CloudAssembly): PipelinePlan['gateway'] {
  const routes = resourcesOfType(assembly, 'AWS::ApiGatewayV2::Route');
  const targets = new Set(routes.map(([, r]) => integrationTarget(assembly, r.Properties ?? {})));
  if (targets.size !== 1) throw new AssemblyError(`the HTTP API routes to ${targets.size} functions; the local gateway serves one`);
  return { functionId: [...targets][0]!, routeKeys: routes.map(([, r]) => String(r.Properties?.RouteKey)) };
}

/** The functions that run: those an event source mapping or an API route invokes. */
export function runningFunctions(assembly: CloudAssembly): string[] {
  const esms = resourcesOfType(assembly, 'AWS::Lambda::EventSourceMapping');
  const routes = resourcesOfType(assembly, 'AWS::ApiGatewayV2::Route');
  return [
    ...new Set([
      ...esms.map(([, e]) => functionOf(e.Properties?.FunctionName)),
      ...routes.map(([, r]) => integrationTarget(assembly, r.Properties ?? {})),
    ]),
  ];
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
    ...numberOf(props, { maxRetryAttempts: 'MaximumRetryAttempts', maxRecordAgeSeconds: 'MaximumRecordAgeInSeconds' }),
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
