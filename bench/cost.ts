/**
 * Section 2: USD per million webhooks from measured per-webhook counts and bench/prices.json.
 * Free tiers, storage (GB-month) and fixed monthly costs (secrets, idle pollers) are not per webhook.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT as ROOT } from '../core/paths';

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
  const logBytes = w.logBytes + platformBytes + w.invocations.ingest * logs.apiGatewayAccessBytesPerRequest;
  const breakdown: Breakdown = {
    apiGateway: w.invocations.ingest * p.apiGatewayHttpPerMillionRequests.usd,
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
