/**
 * The cost model: USD per million webhooks from measured per-webhook counts and the list prices in
 * bench/prices.json, and the monthly estimate of a configured stack at a rate. `hookledger cost`
 * (ops/cost.ts) prices a configuration with it; the bench (bench/run.ts, section 2) prices its
 * measured run with it and checks the estimate against that run. Free tiers, storage (GB-month) and
 * fixed monthly costs (secrets, idle pollers) are not per webhook.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { IntakeEndpoint } from '../core/config/schema';
import { PROJECT_ROOT as ROOT } from '../core/paths';
import type { BatchingEstimate } from './batching';

interface Price {
  readonly usd: number;
  readonly sources: readonly string[];
}

interface FunctionAssumption {
  readonly memoryMb: number;
  readonly durationMsPerInvocation: number;
}

export interface PriceTable {
  readonly date: string;
  readonly prices: Record<
    | 'apiGatewayHttpPerMillionRequests'
    | 'lambdaPerMillionRequests'
    | 'lambdaArm64PerGbSecond'
    | 'dynamodbOnDemandPerMillionWriteUnits'
    | 'dynamodbOnDemandPerMillionReadUnits'
    | 'dynamodbStreamsReadByLambdaPerMillionReads'
    | 'sqsStandardPerMillionRequests'
    | 'secretsManagerPer10kCalls'
    | 'cloudwatchLogsPerGbIngested',
    Price
  >;
  readonly assumptions: {
    readonly functions: Record<'ingest' | 'fanout' | 'consumer', FunctionAssumption>;
    readonly logs: {
      /** Lambda's START/END/REPORT lines of one invocation, sent only at platform level INFO or DEBUG. */
      readonly platformBytesPerInvocation: number;
      /** One access-log line per intake request (the HTTP API stage's access log). */
      readonly apiGatewayAccessBytesPerRequest: number;
    };
    readonly secretsManagerCallsPerWebhook: number;
    readonly bytesPerGb: number;
  };
  readonly compareWith: {
    readonly designTargetWriteUnitsPerWebhook: number;
    readonly transactionalDesignUsdPerMillion: number;
    readonly transactionalDesignWriteUnitsPerWebhook: number;
    readonly floorUsdPerMillion: number;
  };
}

export function loadPrices(): PriceTable {
  return JSON.parse(readFileSync(path.join(ROOT, 'bench', 'prices.json'), 'utf8')) as PriceTable;
}

/** Measured counts per webhook. */
export interface PerWebhook {
  readonly invocations: { readonly ingest: number; readonly fanout: number; readonly consumers: number };
  /** Consumer records per webhook (N). */
  readonly deliveries: number;
  readonly sqsRequests: number;
  readonly writeUnits: number;
  readonly readUnits: number;
  /** Application log bytes (the handlers' INFO lines), measured. */
  readonly logBytes: number;
}

export interface CostOptions {
  /** The stack's `logs.platformLevel`: at WARN (the default) Lambda sends no START/END/REPORT lines. */
  readonly platformLogLevel?: 'WARN' | 'INFO' | 'DEBUG';
  /**
   * The stack's `intake.endpoint`: behind `'http-api'` (the default) each webhook is one API Gateway
   * request and one access-log line; a `'function-url'` has neither (no per-request price of its own).
   */
  readonly intakeEndpoint?: IntakeEndpoint;
}

export type Breakdown = Record<
  | 'apiGateway'
  | 'lambdaRequests'
  | 'lambdaCompute'
  | 'dynamodbWrites'
  | 'dynamodbReads'
  | 'dynamodbStreams'
  | 'sqs'
  | 'secretsManager'
  | 'cloudwatchLogs',
  number
>;

export function usdPerMillion(table: PriceTable, w: PerWebhook, options: CostOptions = {}): { total: number; breakdown: Breakdown } {
  const p = table.prices;
  const f = table.assumptions.functions;
  const M = 1e6;
  const invocations = [
    [f.ingest, w.invocations.ingest],
    [f.fanout, w.invocations.fanout],
    [f.consumer, w.invocations.consumers],
  ] as const;
  const gbSeconds = invocations.reduce((s, [fn, n]) => s + n * (fn.memoryMb / 1024) * (fn.durationMsPerInvocation / 1000), 0);
  const requests = w.invocations.ingest + w.invocations.fanout + w.invocations.consumers;
  const logs = table.assumptions.logs;
  const platformBytes = (options.platformLogLevel ?? 'WARN') === 'WARN' ? 0 : requests * logs.platformBytesPerInvocation;
  const gateway = (options.intakeEndpoint ?? 'http-api') === 'http-api' ? w.invocations.ingest : 0;
  const logBytes = w.logBytes + platformBytes + gateway * logs.apiGatewayAccessBytesPerRequest;
  const breakdown: Breakdown = {
    apiGateway: gateway * p.apiGatewayHttpPerMillionRequests.usd,
    lambdaRequests: requests * p.lambdaPerMillionRequests.usd,
    lambdaCompute: M * gbSeconds * p.lambdaArm64PerGbSecond.usd,
    dynamodbWrites: w.writeUnits * p.dynamodbOnDemandPerMillionWriteUnits.usd,
    dynamodbReads: w.readUnits * p.dynamodbOnDemandPerMillionReadUnits.usd,
    dynamodbStreams: w.invocations.fanout * p.dynamodbStreamsReadByLambdaPerMillionReads.usd,
    sqs: w.sqsRequests * p.sqsStandardPerMillionRequests.usd,
    secretsManager: (M / 10_000) * table.assumptions.secretsManagerCallsPerWebhook * p.secretsManagerPer10kCalls.usd,
    cloudwatchLogs: ((M * logBytes) / table.assumptions.bytesPerGb) * p.cloudwatchLogsPerGbIngested.usd,
  };
  const total = Object.values(breakdown).reduce((s, v) => s + v, 0);
  return { total, breakdown };
}

// --- the estimate of a configured stack (`hookledger cost`), and provisioned capacity ---------------

/** Prices the estimate and the provisioned columns read besides the on-demand ones. */
export interface EstimatePrices {
  readonly prices: {
    readonly dynamodbProvisionedPerWcuHour: Price;
    readonly dynamodbProvisionedPerRcuHour: Price;
    readonly secretsManagerPerSecretMonth: Price;
    readonly s3PutPer1kRequests: Price;
    readonly s3GetPer1kRequests: Price;
  };
  readonly assumptions: {
    readonly hoursPerMonth: number;
    /** What an HTTP destination's worker waits per delivery (the POST's round trip), on top of a consumer invocation. */
    readonly httpDestination: { readonly roundTripMsPerDelivery: number };
  };
}
export type FullPriceTable = PriceTable & EstimatePrices;

export const TRAFFIC = ['low', 'high', 'backlog'] as const;
export type Traffic = (typeof TRAFFIC)[number];

interface OperationUnits {
  readonly calls: number;
  readonly writeUnits: number;
  readonly readUnits: number;
}

/** The parts of bench/results.json the estimate reads: what one measured run counted per webhook. */
export interface MeasuredRun {
  /** The consumers each measured webhook went to (N). */
  readonly consumers: readonly string[];
  /** Body size of the measured webhooks. */
  readonly payloadBytes: number;
  readonly logBytesPerWebhook: Readonly<Record<Traffic, number>>;
  readonly bodyProtection?: { readonly intakeWriteUnits: { readonly default: number; readonly body: number } };
  /** Large-body rows: units per webhook by body size, and where the payload was kept. */
  readonly largeBodies?: readonly {
    readonly bytes: number;
    readonly writeUnitsPerWebhook: number;
    readonly readUnitsPerWebhook: number;
    readonly stored: 'item' | 'bucket';
  }[];
  readonly details: Readonly<
    Record<
      Traffic,
      {
        readonly invocations: { readonly ingest: number; readonly fanout: number; readonly consumers: number };
        readonly sqsRequests: number;
        readonly capacityByOperation: Readonly<Record<string, OperationUnits>>;
      }
    >
  >;
}

/** Auto scaling bounds of one table or index (config `capacity`, core/config/capacity.ts). */
export interface ScaledUnits {
  readonly minWrite: number;
  readonly maxWrite: number;
  readonly minRead: number;
  readonly maxRead: number;
  readonly targetUtilization: number;
}

/** What of a configured stack the estimate needs (ops/cost.ts builds it from the configuration). */
export interface StackShape {
  /** Consumers each webhook goes to (N). */
  readonly deliveries: number;
  /** Of those, HTTP destinations (`kind: 'http'`): their worker also waits on the POST. */
  readonly httpDeliveries: number;
  /** Share of webhooks from sources with `replayProtection: 'body'` (one more write each). */
  readonly bodyClaimShare: number;
  /** Body size of a webhook. */
  readonly bodyBytes: number;
  /** Secrets kept in Secrets Manager: one per source, one per HTTP destination, the payload hash key. */
  readonly secrets: number;
  readonly platformLogLevel: 'WARN' | 'INFO' | 'DEBUG';
  /** The configured `intake.endpoint` (default 'http-api'). */
  readonly intakeEndpoint?: IntakeEndpoint;
  /** The measured column whose log bytes (and, without `batching`, invocations and SQS requests) are used. */
  readonly traffic: Traffic;
  /**
   * Invocations and SQS requests per webhook as ops/batching.ts models them at the rate (empty
   * receives included); without it, the `traffic` column's measured counts.
   */
  readonly batching?: BatchingEstimate;
  /** The provisioned column's settings: the configured ones, or PROVISIONED_DEFAULTS for an on-demand stack. */
  readonly provisioned: { readonly eventStore: ScaledUnits; readonly byTenantDay: ScaledUnits; readonly ledger: ScaledUnits };
  /** Above this stored size a payload goes to the bucket (core/blobs.ts MAX_INLINE_PAYLOAD_BYTES). */
  readonly maxInlinePayloadBytes: number;
}

/** DynamoDB units per webhook, by where they are billed in provisioned mode. */
export interface UnitsByTable {
  readonly eventStore: { readonly write: number; readonly read: number };
  readonly byTenantDay: { readonly write: number; readonly read: number };
  readonly ledger: { readonly write: number; readonly read: number };
}

export interface PerWebhookEstimate extends PerWebhook {
  readonly units: UnitsByTable;
  /** S3 requests per webhook (a body kept in the payload bucket: intake's PUT, the fan-out's GET). */
  readonly s3: { readonly puts: number; readonly gets: number };
  /** Lambda GB-seconds per webhook spent waiting on HTTP destinations. */
  readonly httpGbSeconds: number;
}

const units = (op: OperationUnits | undefined) => ({ w: op?.writeUnits ?? 0, r: op?.readUnits ?? 0, calls: op?.calls ?? 0 });

/**
 * One webhook of `shape`, from the measured run: intake's writes (payload, receipt, its window-index
 * entry) per webhook, claim + acknowledgement per delivery, the fan-out's payload read per webhook
 * (units depend on item sizes, not on batching: the low-traffic column prices every traffic);
 * invocations and SQS requests as `shape.batching` models them at the rate, or else as the chosen
 * traffic column measured them, per webhook (ingest, fan-out) or per delivery (consumers, SQS); log
 * bytes of the chosen column. Body sizes other than the measured one move the payload's units along
 * the large-body rows (linear between rows); a payload whose stored size passes the inline limit goes
 * to the bucket (its rows' units, plus an S3 PUT and GET).
 */
export function perWebhookOf(table: FullPriceTable, run: MeasuredRun, shape: StackShape): PerWebhookEstimate {
  const n0 = run.consumers.length;
  const ops = run.details.low.capacityByOperation;
  const put = units(ops.putPayload);
  const receipt = units(ops.putEvent);
  const read = units(ops.getPayload);
  const perDeliveryWrites = (units(ops.claim).w + units(ops.acknowledge).w) / n0;
  // A receipt within 1 KB is one unit on the table per call; the rest of putEvent is its index entry.
  const indexWrites = receipt.w - receipt.calls;
  const claimExtra = run.bodyProtection ? run.bodyProtection.intakeWriteUnits.body - run.bodyProtection.intakeWriteUnits.default : 1;
  const body = payloadUnits(run, shape, put.w, read.r);
  const t = run.details[shape.traffic];
  const consumerInvocations = shape.batching?.invocations.consumers ?? (t.invocations.consumers / n0) * shape.deliveries;
  const fanoutInvocations = shape.batching?.invocations.fanout ?? t.invocations.fanout;
  const sqsRequests = shape.batching
    ? shape.batching.sqsRequests + shape.batching.sqsEmptyReceives
    : (t.sqsRequests / n0) * shape.deliveries;
  const u: UnitsByTable = {
    eventStore: { write: body.write + (receipt.w - indexWrites) + shape.bodyClaimShare * claimExtra, read: body.read },
    byTenantDay: { write: indexWrites, read: 0 },
    ledger: { write: perDeliveryWrites * shape.deliveries, read: 0 },
  };
  const consumerFn = table.assumptions.functions.consumer;
  return {
    invocations: { ingest: t.invocations.ingest, fanout: fanoutInvocations, consumers: consumerInvocations },
    deliveries: shape.deliveries,
    sqsRequests,
    writeUnits: u.eventStore.write + u.byTenantDay.write + u.ledger.write,
    readUnits: u.eventStore.read + u.byTenantDay.read + u.ledger.read,
    logBytes: run.logBytesPerWebhook[shape.traffic],
    units: u,
    s3: { puts: body.bucket ? 1 : 0, gets: body.bucket ? 1 : 0 },
    httpGbSeconds: shape.httpDeliveries * (consumerFn.memoryMb / 1024) * (table.assumptions.httpDestination.roundTripMsPerDelivery / 1000),
  };
}

/** The payload item's write and read units at `shape.bodyBytes`, and whether it is kept in the bucket. */
function payloadUnits(run: MeasuredRun, shape: StackShape, baseWrite: number, baseRead: number) {
  const b = shape.bodyBytes;
  if (b === run.payloadBytes) return { write: baseWrite, read: baseRead, bucket: false };
  // A large-body row differs from the 1 KB run by its payload only: the payload's units at its size.
  const base = totals(run);
  const measured = (run.largeBodies ?? []).map((row) => ({
    bytes: row.bytes,
    stored: row.stored,
    w: baseWrite + row.writeUnitsPerWebhook - base.w,
    r: baseRead + row.readUnitsPerWebhook - base.r,
  }));
  const rows = [{ bytes: run.payloadBytes, w: baseWrite, r: baseRead }, ...measured.filter((m) => m.stored === 'item')].sort(
    (x, y) => x.bytes - y.bytes,
  );
  const bucketRow = measured.filter((m) => m.stored === 'bucket').sort((x, y) => x.bytes - y.bytes)[0];
  let w: number;
  let r: number;
  if (rows.length === 1) {
    // Nothing measured but the 1 KB body: stored as sent (no compression assumed), 1 KB per write unit, 4 KB per read unit.
    w = Math.max(baseWrite, Math.ceil(b / 1024));
    r = Math.max(baseRead, Math.ceil(b / 4096));
  } else {
    // Linear between the two rows around b (or along the nearest two beyond them).
    const above = rows.findIndex((row) => row.bytes >= b);
    const i = Math.max(0, Math.min(rows.length - 2, (above === -1 ? rows.length : above) - 1));
    const [lo, hi] = [rows[i]!, rows[i + 1]!];
    const f = (b - lo.bytes) / (hi.bytes - lo.bytes);
    w = Math.max(baseWrite, lo.w + f * (hi.w - lo.w));
    r = Math.max(baseRead, lo.r + f * (hi.r - lo.r));
  }
  // One write unit per stored KB: past the inline limit the payload is kept in the bucket.
  if (w * 1024 > shape.maxInlinePayloadBytes) return { write: bucketRow?.w ?? baseWrite, read: bucketRow?.r ?? baseRead, bucket: true };
  return { write: w, read: r, bucket: false };
}

function totals(run: MeasuredRun): { w: number; r: number } {
  return Object.values(run.details.low.capacityByOperation).reduce((s, op) => ({ w: s.w + op.writeUnits, r: s.r + op.readUnits }), {
    w: 0,
    r: 0,
  });
}

export type EstimateService = keyof Breakdown | 's3';

export interface ModeEstimate {
  readonly monthlyUsd: number;
  readonly perMillionUsd: number;
  readonly services: Readonly<Record<EstimateService, { readonly monthlyUsd: number; readonly perMillionUsd: number }>>;
}

/** Average provisioned capacity of one table or index: consumed / target, within the bounds. */
export interface ProvisionedUnits {
  readonly write: number;
  readonly read: number;
  /** The load needs more than `max` at this target: the excess is throttled (intake answers 503). */
  readonly aboveMax: boolean;
}

export interface CostEstimate {
  readonly ratePerSecond: number;
  readonly webhooksPerMonth: number;
  readonly perWebhook: PerWebhookEstimate;
  readonly onDemand: ModeEstimate;
  readonly provisioned: ModeEstimate & { readonly capacity: Readonly<Record<keyof UnitsByTable, ProvisionedUnits>> };
  /** The steady rate (webhooks/s) above which the provisioned tables cost less than on-demand ones. */
  readonly breakEvenPerSecond: number;
}

/** Provisioned DynamoDB at `rate` webhooks/s: capacity per table and index, and its monthly USD. */
export function provisionedDynamo(table: FullPriceTable, u: UnitsByTable, bounds: StackShape['provisioned'], rate: number) {
  const hours = table.assumptions.hoursPerMonth;
  const capacity = {} as Record<keyof UnitsByTable, ProvisionedUnits>;
  let writesUsd = 0;
  let readsUsd = 0;
  for (const key of Object.keys(u) as (keyof UnitsByTable)[]) {
    const b = bounds[key];
    const need = (perWebhook: number) => (rate * perWebhook * 100) / b.targetUtilization;
    const write = Math.min(b.maxWrite, Math.max(b.minWrite, need(u[key].write)));
    const read = Math.min(b.maxRead, Math.max(b.minRead, need(u[key].read)));
    capacity[key] = { write, read, aboveMax: need(u[key].write) > b.maxWrite || need(u[key].read) > b.maxRead };
    writesUsd += write * hours * table.prices.dynamodbProvisionedPerWcuHour.usd;
    readsUsd += read * hours * table.prices.dynamodbProvisionedPerRcuHour.usd;
  }
  return { capacity, writesUsd, readsUsd };
}

/** The options `usdPerMillion` prices a stack of `shape` with. */
export const costOptionsOf = (shape: Pick<StackShape, 'platformLogLevel' | 'intakeEndpoint'>): CostOptions => ({
  platformLogLevel: shape.platformLogLevel,
  ...(shape.intakeEndpoint ? { intakeEndpoint: shape.intakeEndpoint } : {}),
});

/** The monthly bill of `shape` at a steady `rate` webhooks/s, on demand and provisioned. */
export function estimateCost(table: FullPriceTable, run: MeasuredRun, shape: StackShape, rate: number): CostEstimate {
  const w = perWebhookOf(table, run, shape);
  const webhooksPerMonth = rate * 3600 * table.assumptions.hoursPerMonth;
  const millions = webhooksPerMonth / 1e6;
  const base = usdPerMillion(table, w, costOptionsOf(shape)).breakdown;
  const p = table.prices;
  const perMillion: Record<EstimateService, number> = {
    ...base,
    lambdaCompute: base.lambdaCompute + 1e6 * w.httpGbSeconds * p.lambdaArm64PerGbSecond.usd,
    s3: 1e3 * (w.s3.puts * p.s3PutPer1kRequests.usd + w.s3.gets * p.s3GetPer1kRequests.usd),
  };
  const secretMonths = shape.secrets * p.secretsManagerPerSecretMonth.usd;
  const mode = (dynamo: { writes: number; reads: number }): ModeEstimate => {
    const monthly = Object.fromEntries(
      (Object.keys(perMillion) as EstimateService[]).map((s) => [
        s,
        s === 'dynamodbWrites'
          ? dynamo.writes
          : s === 'dynamodbReads'
            ? dynamo.reads
            : perMillion[s] * millions + (s === 'secretsManager' ? secretMonths : 0),
      ]),
    ) as Record<EstimateService, number>;
    const monthlyUsd = Object.values(monthly).reduce((a, v) => a + v, 0);
    return {
      monthlyUsd,
      perMillionUsd: monthlyUsd / millions,
      services: Object.fromEntries(
        Object.entries(monthly).map(([s, v]) => [s, { monthlyUsd: v, perMillionUsd: v / millions }]),
      ) as ModeEstimate['services'],
    };
  };
  const prov = provisionedDynamo(table, w.units, shape.provisioned, rate);
  return {
    ratePerSecond: rate,
    webhooksPerMonth,
    perWebhook: w,
    onDemand: mode({ writes: base.dynamodbWrites * millions, reads: base.dynamodbReads * millions }),
    provisioned: { ...mode({ writes: prov.writesUsd, reads: prov.readsUsd }), capacity: prov.capacity },
    breakEvenPerSecond: breakEvenRate(table, w, shape),
  };
}

/**
 * The steady rate above which provisioned tables cost less than on-demand ones (everything else is
 * the same in both modes). Provisioned cost is the floors' until the load passes them, then grows at
 * a fraction of on-demand's: one crossing, found by bisection. Infinity when provisioned never pays.
 */
export function breakEvenRate(table: FullPriceTable, w: Pick<PerWebhookEstimate, 'units'>, shape: Pick<StackShape, 'provisioned'>): number {
  const p = table.prices;
  const perSecondOnDemand = (rate: number) => {
    const writes = w.units.eventStore.write + w.units.byTenantDay.write + w.units.ledger.write;
    const reads = w.units.eventStore.read + w.units.byTenantDay.read + w.units.ledger.read;
    const millions = (rate * 3600 * table.assumptions.hoursPerMonth) / 1e6;
    return millions * (writes * p.dynamodbOnDemandPerMillionWriteUnits.usd + reads * p.dynamodbOnDemandPerMillionReadUnits.usd);
  };
  const gap = (rate: number) => {
    const prov = provisionedDynamo(table, w.units, shape.provisioned, rate);
    return prov.writesUsd + prov.readsUsd - perSecondOnDemand(rate);
  };
  let lo = 0;
  let hi = 1;
  while (gap(hi) > 0) {
    hi *= 2;
    if (hi > 1e7) return Number.POSITIVE_INFINITY;
  }
  for (let i = 0; i < 60; i++) {
    const mid = (lo + hi) / 2;
    if (gap(mid) > 0) lo = mid;
    else hi = mid;
  }
  return hi;
}

/**
 * USD per million webhooks with provisioned tables at a steady `rate` (webhooks/s): `usdPerMillion`'s
 * breakdown with DynamoDB reads and writes priced as capacity-hours (consumed / target utilization,
 * within each table's and index's bounds) spread over the month's webhooks.
 */
export function usdPerMillionProvisioned(
  table: FullPriceTable,
  w: PerWebhook,
  u: UnitsByTable,
  bounds: StackShape['provisioned'],
  rate: number,
  options: CostOptions = {},
): { total: number; breakdown: Breakdown } {
  const onDemand = usdPerMillion(table, w, options);
  const prov = provisionedDynamo(table, u, bounds, rate);
  const millions = (rate * 3600 * table.assumptions.hoursPerMonth) / 1e6;
  const breakdown: Breakdown = {
    ...onDemand.breakdown,
    dynamodbWrites: prov.writesUsd / millions,
    dynamodbReads: prov.readsUsd / millions,
  };
  return { total: Object.values(breakdown).reduce((s, v) => s + v, 0), breakdown };
}

/**
 * The bench's check of `estimateCost`: the estimate of the measured stack (its consumers, its body
 * size) at the run's own rate against what the run measured, per million webhooks on demand, the
 * fixed secret-months left out (the run prices per webhook only).
 */
export function checkEstimate(
  table: FullPriceTable,
  run: MeasuredRun,
  shape: StackShape,
  rate: number,
  measuredPerMillion: number,
): { rate: number; estimatedPerMillion: number; measuredPerMillion: number; ratio: number; within5Percent: boolean } {
  const e = estimateCost(table, run, shape, rate);
  const fixedPerMillion = (shape.secrets * table.prices.secretsManagerPerSecretMonth.usd) / (e.webhooksPerMonth / 1e6);
  const estimatedPerMillion = e.onDemand.perMillionUsd - fixedPerMillion;
  const ratio = estimatedPerMillion / measuredPerMillion;
  return { rate, estimatedPerMillion, measuredPerMillion, ratio, within5Percent: Math.abs(ratio - 1) <= 0.05 };
}
