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

/** DynamoDB's default per-table quota, units per second each way. */
const TABLE_QUOTA_UNITS = 40_000;

export interface CostRequest {
  /** Webhooks per second, steady. */
  readonly rate: number;
  /** Default: the body size the bench measured. */
  readonly bodyBytes?: number;
  readonly traffic: Traffic;
  /** Deliveries per webhook: the consumers subscribed to this type. Default: every consumer. */
  readonly eventType?: string;
}

export interface CostReport extends Omit<CostEstimate, 'perWebhook'> {
  readonly traffic: Traffic;
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
  readonly assumptions: readonly string[];
  readonly sources: { readonly prices: string; readonly units: string };
}

export interface CostFiles {
  readonly prices: string;
  readonly results: string;
}

export const benchFiles = (root: string): CostFiles => ({
  prices: path.join(root, 'bench', 'prices.json'),
  results: path.join(root, 'bench', 'results.json'),
});

export function estimateStackCost(config: HookledgerConfig, request: CostRequest, files: CostFiles): CostReport {
  const prices = readJson<FullPriceTable>(files.prices, 'the price list');
  const results = readJson<MeasuredRun & { date: string }>(files.results, "the bench's measured units (run `npm run bench`)");
  const consumers = request.eventType
    ? config.consumers.filter((c) => c.subscribes.some((pattern) => matchesEventType(pattern, request.eventType!)))
    : config.consumers;
  if (consumers.length === 0) {
    throw new UsageError(
      `no consumer subscribes to ${request.eventType}: nothing would be delivered; configured patterns: ${config.consumers.flatMap((c) => c.subscribes).join(', ')}`,
    );
  }
  const http = consumers.filter((c) => c.kind === 'http').map((c) => c.id);
  const filtered = consumers.filter((c) => c.filter !== undefined).map((c) => c.id);
  const bodyBytes = request.bodyBytes ?? results.payloadBytes;
  const eventStore = scaledOf(config.capacity.eventStore);
  const ledger = scaledOf(config.capacity.ledger);
  const shape: StackShape = {
    deliveries: consumers.length,
    httpDeliveries: http.length,
    bodyClaimShare: config.sources.filter((s) => s.replayProtection === 'body').length / config.sources.length,
    bodyBytes,
    // A signing secret per source and per HTTP destination, and the payload hash key.
    secrets: config.sources.length + config.consumers.filter((c) => c.kind === 'http').length + 1,
    platformLogLevel: config.logs.platformLevel,
    traffic: request.traffic,
    provisioned: {
      eventStore: eventStore.table,
      byTenantDay: eventStore.indexes[WINDOW_INDEX.name] ?? eventStore.table,
      ledger: ledger.table,
    },
    maxInlinePayloadBytes: MAX_INLINE_PAYLOAD_BYTES,
  };
  const e = estimateCost(prices, results, shape, request.rate);
  const w = e.perWebhook;
  const aboveMax = Object.entries(e.provisioned.capacity)
    .filter(([, c]) => c.aboveMax)
    .map(([t]) => t);
  const f = prices.assumptions.functions;
  return {
    ...e,
    traffic: request.traffic,
    bodyBytes,
    deliveries: consumers.map((c) => c.id),
    httpDestinations: http,
    filteredConsumers: filtered,
    perWebhook: {
      writeUnits: w.writeUnits,
      readUnits: w.readUnits,
      sqsRequests: w.sqsRequests,
      lambdaInvocations: w.invocations.ingest + w.invocations.fanout + w.invocations.consumers,
      logBytes: w.logBytes,
    },
    throttled: aboveMax,
    provisionedSettings: { eventStore: eventStore.source, ledger: ledger.source },
    assumptions: [
      `a steady ${request.rate} webhooks/s, ${prices.assumptions.hoursPerMonth} hours a month; ${bodyBytes}-byte bodies; each webhook to ${consumers.length} consumer(s)${request.eventType ? ` (those subscribed to ${request.eventType})` : ' (every configured consumer: an upper bound; --event-type narrows it)'}`,
      ...(filtered.length > 0
        ? [
            `${filtered.join(', ')} ${filtered.length > 1 ? 'have content filters' : 'has a content filter'}: counted as matching every webhook of ${filtered.length > 1 ? 'their' : 'its'} types (an upper bound; each webhook a filter drops saves ${filtered.length > 1 ? 'that consumer' : 'it'} 2 write units, its SQS requests and its invocations)`,
          ]
        : []),
      `batching as the bench's ${request.traffic} traffic column measured it (low: one webhook at a time; high: a burst; backlog: queued, then released); units per webhook from bench/results.json, scaled per delivery`,
      `Lambda arm64: ingest ${f.ingest.memoryMb} MB ${f.ingest.durationMsPerInvocation} ms, fan-out ${f.fanout.durationMsPerInvocation} ms per batch, consumers ${f.consumer.durationMsPerInvocation} ms per batch${http.length > 0 ? `, plus ${prices.assumptions.httpDestination.roundTripMsPerDelivery} ms per delivery waiting on each HTTP destination (${http.join(', ')})` : ''}`,
      `provisioned: capacity follows the load at its target utilization between each table's and index's min and max (the config's; for an on-demand table at least ${PROVISIONED_DEFAULTS.minWrite} WCU and ${PROVISIONED_DEFAULTS.minRead} RCU at ${PROVISIONED_DEFAULTS.targetUtilization}%, with room for the whole load); auto scaling lags minutes, so a sudden burst above capacity is throttled and intake answers 503 until it catches up`,
      'not included: free tiers, storage (GB-month), the scheduled reconcile, idle SQS polling, data transfer, views of large narrowed payloads in the bucket',
    ],
    sources: { prices: `bench/prices.json of ${prices.date}`, units: `bench/results.json of ${results.date}` },
  };
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
  return { table: { ...PROVISIONED_DEFAULTS, maxWrite: TABLE_QUOTA_UNITS, maxRead: TABLE_QUOTA_UNITS }, indexes: {}, source: 'defaults' };
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
