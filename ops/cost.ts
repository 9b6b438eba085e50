/**
 * `hookledger cost`: the monthly AWS bill of the configured stack at a steady rate, on demand beside
 * provisioned, from the per-webhook units the bench measured (bench/results.json, read only) and the
 * list prices in bench/prices.json. The model (ops/cost-model.ts `estimateCost`) is the one the bench
 * prices its runs with, so the bench checks it against its measured run.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { MAX_INLINE_PAYLOAD_BYTES } from '../core/blobs';
import { PROVISIONED_DEFAULTS, type TableCapacity } from '../core/config/capacity';
import { matchesEventType } from '../core/config/routing';
import type { HookledgerConfig } from '../core/config/schema';
import { WINDOW_INDEX } from '../core/model';
import { FANOUT_EVENT_SOURCE } from '../core/queues';
import { DYNAMODB_LIMITS, streamShardsOf } from './aws-limits';
import {
  AWS_POLLERS,
  type BatchingEstimate,
  type BatchingShape,
  estimateBatching,
  type PollerTimings,
  type StreamSource,
} from './batching';
import {
  type CostEstimate,
  estimateCost,
  type FullPriceTable,
  type MeasuredRun,
  type ScaledUnits,
  type StackShape,
  type Traffic,
} from './cost-model';
import { NotFoundError, UsageError } from './errors';

export interface CostRequest {
  /** Webhooks per second, steady. */
  readonly rate: number;
  /** Default: the body size the bench measured. */
  readonly bodyBytes?: number;
  /** A measured bench column's batching instead of the model's at `rate` (ops/batching.ts). */
  readonly traffic?: Traffic;
  /** Shards of the EventStore's stream. Default: about its partitions (ops/aws-limits.ts streamShardsOf). */
  readonly streamShards?: number;
  /** Deliveries per webhook: the consumers subscribed to this type. Default: every consumer. */
  readonly eventType?: string;
}

export interface CostReport extends Omit<CostEstimate, 'perWebhook'> {
  /** 'modelled': batching modelled at the rate; else the measured bench column asked for. */
  readonly traffic: Traffic | 'modelled';
  readonly bodyBytes: number;
  /** The consumers each webhook is delivered to. */
  readonly deliveries: readonly string[];
  readonly httpDestinations: readonly string[];
  /** Of the deliveries, consumers with a content `filter`: counted as matching every webhook (an upper bound). */
  readonly filteredConsumers: readonly string[];
  readonly perWebhook: {
    readonly writeUnits: number;
    readonly readUnits: number;
    readonly sqsRequests: number;
    readonly lambdaInvocations: number;
    readonly logBytes: number;
  };
  /** Tables and indexes whose load at this rate needs more than their max: that excess would be throttled. */
  readonly throttled: readonly string[];
  /** Where the provisioned column's bounds come from, per table: the config, or the defaults for an on-demand table. */
  readonly provisionedSettings: Readonly<Record<'eventStore' | 'ledger', 'configured' | 'defaults'>>;
  readonly assumptions: { readonly batching: BatchingAssumptions; readonly notes: readonly string[] };
  readonly sources: { readonly prices: string; readonly units: string };
}

/** The batch fills the estimate priced SQS and Lambda with, per service. */
export interface BatchingAssumptions {
  readonly source: string;
  readonly pollers?: PollerTimings;
  readonly stream?: StreamSource;
  readonly lambda?: {
    readonly fanoutRecordsPerInvocation: number;
    readonly consumerRecordsPerInvocation: Readonly<Record<string, number>>;
    readonly invocationsPerWebhook: BatchingEstimate['invocations'];
  };
  readonly sqs?: {
    readonly messagesPerSendMessageBatch: number;
    readonly messagesPerReceive: Readonly<Record<string, number>>;
    readonly requestsPerWebhook: {
      readonly sendMessageBatch: number;
      readonly receiveMessage: number;
      readonly deleteMessageBatch: number;
      readonly emptyReceives: number;
    };
  };
}

export interface CostFiles {
  readonly prices: string;
  readonly results: string;
}

export const benchFiles = (root: string): CostFiles => ({
  prices: path.join(root, 'bench', 'prices.json'),
  results: path.join(root, 'bench', 'results.json'),
});

/** The price list, the measured run and the configured stack as the cost model reads them at `request.rate`. */
export function costInputs(config: HookledgerConfig, request: CostRequest, files: CostFiles) {
  const prices = readJson<FullPriceTable>(files.prices, 'the price list');
  const results = readJson<MeasuredRun & { date: string }>(files.results, "the bench's measured units (run `npm run bench`)");
  const consumers = subscribersOf(config, request.eventType);
  const bodyBytes = request.bodyBytes ?? results.payloadBytes;
  return { prices, results, consumers, bodyBytes, stack: stackShapeOf(config, consumers, request, bodyBytes, prices) };
}

export function estimateStackCost(config: HookledgerConfig, request: CostRequest, files: CostFiles): CostReport {
  const { prices, results, consumers, bodyBytes, stack } = costInputs(config, request, files);
  const e = estimateCost(prices, results, stack.shape, request.rate);
  const w = e.perWebhook;
  const aboveMax = Object.entries(e.provisioned.capacity)
    .filter(([, c]) => c.aboveMax)
    .map(([t]) => t);
  return {
    ...e,
    traffic: request.traffic ?? 'modelled',
    bodyBytes,
    deliveries: consumers.map((c) => c.id),
    httpDestinations: stack.http,
    filteredConsumers: stack.filtered,
    perWebhook: {
      writeUnits: w.writeUnits,
      readUnits: w.readUnits,
      sqsRequests: w.sqsRequests,
      lambdaInvocations: w.invocations.ingest + w.invocations.fanout + w.invocations.consumers,
      logBytes: w.logBytes,
    },
    throttled: aboveMax,
    provisionedSettings: stack.provisionedSettings,
    assumptions: {
      batching: batchingAssumptions(stack.batching, request),
      notes: costNotes(config, consumers, request, stack, prices),
    },
    sources: { prices: `bench/prices.json of ${prices.date}`, units: `bench/results.json of ${results.date}` },
  };
}

export type Consumer = HookledgerConfig['consumers'][number];

/** The consumers each webhook goes to: those subscribed to `eventType`, or every one. */
function subscribersOf(config: HookledgerConfig, eventType: string | undefined): Consumer[] {
  const consumers = eventType
    ? config.consumers.filter((c) => c.subscribes.some((pattern) => matchesEventType(pattern, eventType)))
    : config.consumers;
  if (consumers.length === 0) {
    throw new UsageError(
      `no consumer subscribes to ${eventType}: nothing would be delivered; configured patterns: ${config.consumers.flatMap((c) => c.subscribes).join(', ')}`,
    );
  }
  return consumers;
}

export interface StackInputs {
  readonly shape: StackShape;
  readonly batching: { readonly shape: BatchingShape; readonly timings: PollerTimings; readonly estimate: BatchingEstimate } | undefined;
  readonly http: readonly string[];
  readonly filtered: readonly string[];
  readonly provisionedSettings: CostReport['provisionedSettings'];
}

/** The configured stack as the cost model reads it, with its batching modelled at the rate unless a measured column is asked for. */
function stackShapeOf(
  config: HookledgerConfig,
  consumers: readonly Consumer[],
  request: CostRequest,
  bodyBytes: number,
  prices: FullPriceTable,
): StackInputs {
  const http = consumers.filter((c) => c.kind === 'http').map((c) => c.id);
  const eventStore = scaledOf(config.capacity.eventStore);
  const ledger = scaledOf(config.capacity.ledger);
  const batching = request.traffic === undefined ? modelledBatching(config, consumers, request, prices) : undefined;
  const shape: StackShape = {
    deliveries: consumers.length,
    httpDeliveries: http.length,
    bodyClaimShare: config.sources.filter((s) => s.replayProtection === 'body').length / config.sources.length,
    bodyBytes,
    // A signing secret per source and per HTTP destination, and the payload hash key.
    secrets: config.sources.length + config.consumers.filter((c) => c.kind === 'http').length + 1,
    platformLogLevel: config.logs.platformLevel,
    intakeEndpoint: config.intake.endpoint,
    // Modelled batching keeps the measured log bytes of one webhook at a time: the handlers log per record.
    traffic: request.traffic ?? 'low',
    ...(batching ? { batching: batching.estimate } : {}),
    provisioned: {
      eventStore: eventStore.table,
      byTenantDay: eventStore.indexes[WINDOW_INDEX.name] ?? eventStore.table,
      ledger: ledger.table,
    },
    maxInlinePayloadBytes: MAX_INLINE_PAYLOAD_BYTES,
  };
  return {
    shape,
    batching,
    http,
    filtered: consumers.filter((c) => c.filter !== undefined).map((c) => c.id),
    provisionedSettings: { eventStore: eventStore.source, ledger: ledger.source },
  };
}

/** The fan-out's and the consumers' event sources as configured, under Lambda's pollers, at the rate. */
function modelledBatching(config: HookledgerConfig, consumers: readonly Consumer[], request: CostRequest, prices: FullPriceTable) {
  const shape: BatchingShape = {
    stream: {
      batchSize: FANOUT_EVENT_SOURCE.batchSize,
      windowSeconds: config.fanout.batchingWindowSeconds,
      parallelizationFactor: FANOUT_EVENT_SOURCE.parallelizationFactor,
      shards: request.streamShards ?? streamShardsOf(config.capacity.eventStore),
    },
    queues: consumers.map((c) => ({
      id: c.id,
      batchSize: c.batchSize,
      windowSeconds: c.batchingWindowSeconds,
      maxConcurrency: c.maxConcurrency,
    })),
  };
  const f = prices.assumptions.functions;
  const timings: PollerTimings = {
    ...AWS_POLLERS,
    fanoutMs: f.fanout.durationMsPerInvocation,
    consumerMs: f.consumer.durationMsPerInvocation,
  };
  return { shape, timings, estimate: estimateBatching(shape, timings, request.rate) };
}

/** What the estimate assumed of batching, per service: the fills it used (modelled), or the bench column it took. */
function batchingAssumptions(batching: StackInputs['batching'], request: CostRequest): BatchingAssumptions {
  if (!batching) return { source: `measured: the bench's ${request.traffic} traffic column (bench/results.json details)` };
  const { shape, timings, estimate: e } = batching;
  const perQueue = (f: (q: BatchingEstimate['queues'][number]) => number) => Object.fromEntries(e.queues.map((q) => [q.id, f(q)]));
  const sum = (f: (q: BatchingEstimate['queues'][number]) => number) => e.queues.reduce((s, q) => s + f(q), 0);
  return {
    source: `modelled at a steady ${request.rate} webhooks/s (ops/batching.ts)`,
    pollers: timings,
    stream: shape.stream,
    lambda: {
      fanoutRecordsPerInvocation: e.fanout.recordsPerInvocation,
      consumerRecordsPerInvocation: perQueue((q) => q.messagesPerReceive),
      invocationsPerWebhook: e.invocations,
    },
    sqs: {
      messagesPerSendMessageBatch: e.fanout.messagesPerSend,
      messagesPerReceive: perQueue((q) => q.messagesPerReceive),
      requestsPerWebhook: {
        sendMessageBatch: sum((q) => q.sends),
        receiveMessage: sum((q) => q.receives),
        deleteMessageBatch: sum((q) => q.deletes),
        emptyReceives: e.sqsEmptyReceives,
      },
    },
  };
}

/** The estimate's assumptions in words, for people. */
function costNotes(
  config: HookledgerConfig,
  consumers: readonly Consumer[],
  request: CostRequest,
  stack: StackInputs,
  prices: FullPriceTable,
): string[] {
  const { http, filtered, shape } = stack;
  const f = prices.assumptions.functions;
  return [
    `a steady ${request.rate} webhooks/s, ${prices.assumptions.hoursPerMonth} hours a month; ${shape.bodyBytes}-byte bodies; each webhook to ${consumers.length} consumer(s)${request.eventType ? ` (those subscribed to ${request.eventType})` : ' (every configured consumer: an upper bound; --event-type narrows it)'}`,
    ...(filtered.length > 0
      ? [
          `${filtered.join(', ')} ${filtered.length > 1 ? 'have content filters' : 'has a content filter'}: counted as matching every webhook of ${filtered.length > 1 ? 'their' : 'its'} types (an upper bound; each webhook a filter drops saves ${filtered.length > 1 ? 'that consumer' : 'it'} 2 write units, its SQS requests and its invocations)`,
        ]
      : []),
    stack.batching
      ? batchingNote(stack.batching.shape, config)
      : `batching as the bench's ${shape.traffic} traffic column measured it (low: one webhook at a time; high: a burst; backlog: queued, then released); units per webhook from bench/results.json, scaled per delivery`,
    config.intake.endpoint === 'function-url'
      ? "intake through its Lambda function URL (intake.endpoint 'function-url'): no API Gateway request price and no access log line per webhook"
      : `intake behind the API Gateway HTTP API: one request and one access-log line (${prices.assumptions.logs.apiGatewayAccessBytesPerRequest} B) per webhook`,
    `Lambda arm64: ingest ${f.ingest.memoryMb} MB ${f.ingest.durationMsPerInvocation} ms, fan-out ${f.fanout.durationMsPerInvocation} ms per batch, consumers ${f.consumer.durationMsPerInvocation} ms per batch${http.length > 0 ? `, plus ${prices.assumptions.httpDestination.roundTripMsPerDelivery} ms per delivery waiting on each HTTP destination (${http.join(', ')})` : ''}`,
    `provisioned: capacity follows the load at its target utilization between each table's and index's min and max (the config's; for an on-demand table at least ${PROVISIONED_DEFAULTS.minWrite} WCU and ${PROVISIONED_DEFAULTS.minRead} RCU at ${PROVISIONED_DEFAULTS.targetUtilization}%, with room for the whole load); auto scaling lags minutes, so a sudden burst above capacity is throttled and intake answers 503 until it catches up`,
    'not included: free tiers, storage (GB-month), the scheduled reconcile, data transfer, views of large narrowed payloads in the bucket',
  ];
}

function batchingNote(shape: BatchingShape, config: HookledgerConfig): string {
  const s = shape.stream;
  const shardsWhy =
    config.capacity.eventStore.mode === 'on-demand'
      ? `a new on-demand table serves ${DYNAMODB_LIMITS.onDemandInitialWriteUnits} WRU/s at ${DYNAMODB_LIMITS.partitionWriteUnits} per partition, so about ${s.shards} partitions and as many stream shards`
      : 'one partition per 1,000 WCU / 3,000 RCU of the provisioned minimum';
  const windows = [...new Set(shape.queues.map((q) => q.windowSeconds))];
  const queueWindow =
    windows.length === 1 && windows[0] === 0
      ? "each consumer's pollers take each SendMessageBatch as it lands (no batching window)"
      : `each consumer's pollers gather a batch for its batching window (${shape.queues.map((q) => `${q.id} ${q.windowSeconds} s`).join(', ')}) or take each SendMessageBatch as it lands without one`;
  const streamPolls =
    s.windowSeconds > 0
      ? `once per ${s.windowSeconds} s batching window`
      : `${1000 / AWS_POLLERS.streamPauseMs} times a second (no batching window)`;
  return (
    `batching modelled at this rate (ops/batching.ts; --burstiness takes a measured bench column instead): the fan-out polls each of ${s.shards} stream shard(s) (${shardsWhy}; --stream-shards sets it) ${streamPolls}, ` +
    `parallelization factor ${s.parallelizationFactor}; ${queueWindow}; ` +
    `empty receives: ${AWS_POLLERS.queuePollers} pollers per queue long-polling ${AWS_POLLERS.longPollSeconds} s, less the receives traffic ends early; webhooks arriving independently of each other (evenly paced ones batch a little less near one per poll)`
  );
}

/** The bounds a table's provisioned column uses: its own when provisioned, the defaults otherwise. */
function scaledOf(c: TableCapacity): {
  table: ScaledUnits;
  indexes: Readonly<Record<string, ScaledUnits>>;
  source: 'configured' | 'defaults';
} {
  if (c.mode === 'provisioned') {
    const { mode: _, indexes, ...table } = c;
    return { table, indexes, source: 'configured' };
  }
  // An on-demand table's what-if: the default floors and target, and room for the whole load (up to
  // the table quota), so the column prices serving it rather than throttling it at the default max.
  return {
    table: { ...PROVISIONED_DEFAULTS, maxWrite: DYNAMODB_LIMITS.tableQuotaUnits, maxRead: DYNAMODB_LIMITS.tableQuotaUnits },
    indexes: {},
    source: 'defaults',
  };
}

function readJson<T>(file: string, what: string): T {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    throw new NotFoundError(`${path.relative(process.cwd(), file) || file} not found: ${what}`);
  }
  return JSON.parse(text) as T;
}
