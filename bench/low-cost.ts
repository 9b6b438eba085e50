/**
 * Section 2d: the documented lower-cost configuration (core/config/low-cost.ts, docs/cost-and-scale.md
 * "Lower-cost configuration") measured at a steady 50 webhooks/s and priced with provisioned tables at
 * that rate. Its own local stack of the shipped configuration with `lowCost` applied; webhooks sent
 * independently of each other at the rate (bench/paced.ts); counted as section 1 counts (DynamoDB
 * units from the adapters' onCapacity hook, SQS requests by command, invocations of the handlers the
 * pollers call, the handlers' log bytes at INFO), then priced by ops/cost-model.ts with the function
 * URL's prices (no API Gateway request, no access log line).
 *
 * Empty receives: the emulator wakes every waiting long poll on each send and all but one return
 * empty, which says nothing of Lambda's pollers; the column takes the model's empty receives for
 * Lambda's pollers at this rate instead (ops/batching.ts). The tenant-day registry writes (once per
 * tenant per day per environment in production) are left out and reported apart, as in section 1.
 *
 * `npx tsx bench/low-cost.ts` runs it alone; alone or after the whole bench (bench/run.ts), it prints
 * it and merges it into bench/results.json as `lowCost`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { LOW_COST, lowCost } from '../core/config/low-cost';
import { subscribedConsumers } from '../core/config/routing';
import { defineConfig, type HookledgerConfig } from '../core/config/schema';
import { PROJECT_ROOT } from '../core/paths';
import baseConfig from '../hookledger.config';
import { type LocalStack, startLocalStack } from '../local/stack';
import { benchFiles, costInputs, estimateStackCost } from '../ops/cost';
import { type Breakdown, costOptionsOf, type MeasuredRun, perWebhookOf, TRAFFIC, usdPerMillionProvisioned } from '../ops/cost-model';
import { BenchRunError, runToExit } from './errors';
import { countInvocations, installedMeters, type Meters } from './meters';
import { type PacedRun, sendPaced } from './paced';
import { signedPayments, TARGET_BYTES } from './payload';
import { fmt, mergeResults, printNotes, printTable } from './report';
import { percentile, round } from './stats';
import { SOURCE } from './units';

export const LOW_COST_PLAN = {
  /** Webhooks per second, steady: the rate the issue prices. */
  rate: 50,
  seconds: 20,
  /** Sent first and not counted: the stack's first requests are slow (cold JIT, cold DynamoDB Local). */
  warmUp: 50,
  /** Hookdeck's volume price per million webhooks, the figure to be at or under. */
  targetUsdPerMillion: 3.3,
  eventType: 'payment.succeeded',
} as const;

/** The DynamoDB operation left out of the steady figure (see the module's note). */
const REGISTRY_OPERATION = 'registerTenantDay';

export interface LowCostResult {
  readonly settings: {
    readonly intakeEndpoint: string;
    readonly fanoutBatchingWindowSeconds: number;
    readonly consumerBatchingWindowSeconds: number;
    readonly targetUtilization: number;
  };
  readonly webhooks: number;
  readonly seconds: number;
  readonly ratePerSecond: number;
  /** From a webhook's send to its last consumer's acknowledgement: what the windows cost in latency. */
  readonly latencyMs: { readonly p50: number; readonly p99: number };
  readonly perWebhook: {
    readonly writeUnits: number;
    readonly readUnits: number;
    readonly registryWriteUnits: number;
    readonly sqsRequests: number;
    readonly sqsEmptyReceivesModelled: number;
    readonly invocations: { readonly ingest: number; readonly fanout: number; readonly consumers: number };
    readonly fanoutRecordsPerInvocation: number;
    readonly consumerRecordsPerInvocation: number;
    readonly logBytes: number;
  };
  readonly usdPerMillion: { readonly total: number; readonly breakdown: Breakdown };
  /** `hookledger cost --rate 50/s` on the same configuration, provisioned: the model beside the measurement. */
  readonly estimatedUsdPerMillion: number;
  readonly met: boolean;
}

/** The lower-cost configuration of the shipped one, on its own metered stack: measure, then price. */
export async function measureLowCost(): Promise<LowCostResult> {
  const config = lowCost(defineConfig(baseConfig));
  // The S3 meter comes along unread: the bodies here stay in their items.
  const { meters } = installedMeters();
  const secretsDir = mkdtempSync(path.join(os.tmpdir(), 'hookledger-bench-low-cost-'));
  const stack = await startLocalStack({
    config,
    dataDir: null,
    httpPort: 0,
    secretsFile: path.join(secretsDir, 'secrets.json'),
    logger: meters.logs.logger,
    ttlSweepIntervalMs: null,
    onCapacity: meters.capacity.observe,
    onDelivery: meters.deliveries.onDelivery,
  });
  try {
    // Wrapped with the pipeline stopped: the pollers started next take the counting handlers.
    await stack.stopPipeline();
    countInvocations(stack, meters.invocations);
    await stack.startPipeline();
    return await runAndPrice(stack, config, meters);
  } finally {
    await stack.stop();
    meters.logs.uninstall();
    rmSync(secretsDir, { recursive: true, force: true });
  }
}

async function runAndPrice(stack: LocalStack, config: HookledgerConfig, meters: Meters): Promise<LowCostResult> {
  const plan = LOW_COST_PLAN;
  const secret = (await stack.secrets.get(SOURCE)).current;
  const consumers = subscribedConsumers(config, plan.eventType);
  const runId = `low-cost-${Date.now().toString(36)}`;
  await sendPaced(stack, meters.deliveries, consumers.length, signedPayments(secret, `${runId}-warm`, plan.warmUp), plan.rate);
  await stack.drain();
  for (const m of [meters.capacity, meters.sqs, meters.invocations, meters.logs]) m.reset();
  meters.logs.record(true);
  const run = await sendPaced(
    stack,
    meters.deliveries,
    consumers.length,
    signedPayments(secret, runId, plan.rate * plan.seconds),
    plan.rate,
  );
  await stack.drain();
  meters.logs.record(false);
  if (meters.deliveries.failures > 0) throw new BenchRunError(`${meters.deliveries.failures} deliveries failed during the low-cost run`);
  return priceLowCost(config, consumers, countsOf(meters), run);
}

/** What one run counted, in total over its webhooks. */
export interface LowCostCounts {
  readonly byOperation: ReadonlyMap<string, { readonly calls: number; readonly writeUnits: number; readonly readUnits: number }>;
  /** SQS requests that carried messages (the emulator's empty receives left out). */
  readonly sqsRequests: number;
  readonly fanoutInvocations: number;
  readonly fanoutRecords: number;
  readonly consumerInvocations: number;
  readonly consumerRecords: number;
  readonly logBytes: number;
}

/** The meters' totals after a run. */
function countsOf(meters: Meters): LowCostCounts {
  const consumers = [...meters.invocations.consumers.values()];
  return {
    byOperation: meters.capacity.byOperation,
    sqsRequests: meters.sqs.billedRequests(),
    fanoutInvocations: meters.invocations.fanout,
    fanoutRecords: meters.invocations.fanoutRecords,
    consumerInvocations: meters.invocations.consumerInvocations(),
    consumerRecords: consumers.reduce((s, c) => s + c.records, 0),
    logBytes: meters.logs.bytes,
  };
}

/**
 * A run's counts per webhook, priced with `config`'s provisioned tables at `rate`: ops/cost-model.ts
 * on the measured units (the tenant-day registry left out), invocations, SQS requests plus the empty
 * receives the model gives Lambda's pollers at the rate, and log bytes.
 */
export function priceLowCost(
  config: HookledgerConfig,
  consumers: readonly string[],
  counts: LowCostCounts,
  run: Pick<PacedRun, 'webhooks' | 'seconds' | 'rate' | 'latenciesMs'>,
  rate: number = LOW_COST_PLAN.rate,
): LowCostResult {
  const n = run.webhooks;
  const ops = Object.fromEntries(
    [...counts.byOperation]
      .filter(([op]) => op !== REGISTRY_OPERATION)
      .map(([op, u]) => [op, { calls: u.calls / n, writeUnits: u.writeUnits / n, readUnits: u.readUnits / n }]),
  );
  const request = { rate, eventType: LOW_COST_PLAN.eventType };
  const { prices, stack } = costInputs(config, request, benchFiles(PROJECT_ROOT));
  const emptyReceives = stack.batching?.estimate.sqsEmptyReceives ?? 0;
  const invocations = { ingest: 1, fanout: counts.fanoutInvocations / n, consumers: counts.consumerInvocations / n };
  const sqsRequests = counts.sqsRequests / n + emptyReceives;
  const logBytes = counts.logBytes / n;
  const measured: MeasuredRun = {
    consumers,
    payloadBytes: TARGET_BYTES,
    logBytesPerWebhook: { low: logBytes, high: logBytes, backlog: logBytes },
    details: Object.fromEntries(TRAFFIC.map((t) => [t, { invocations, sqsRequests, capacityByOperation: ops }])) as MeasuredRun['details'],
  };
  const { batching: _, ...unbatched } = stack.shape;
  const shape = { ...unbatched, traffic: 'low' as const };
  const w = perWebhookOf(prices, measured, shape);
  const usd = usdPerMillionProvisioned(prices, { ...w, invocations, sqsRequests }, w.units, shape.provisioned, rate, costOptionsOf(shape));
  return {
    settings: settingsOf(config),
    webhooks: n,
    seconds: run.seconds,
    ratePerSecond: run.rate,
    latencyMs: { p50: percentile(run.latenciesMs, 50), p99: percentile(run.latenciesMs, 99) },
    perWebhook: {
      writeUnits: w.writeUnits,
      readUnits: w.readUnits,
      registryWriteUnits: (counts.byOperation.get(REGISTRY_OPERATION)?.writeUnits ?? 0) / n,
      sqsRequests,
      sqsEmptyReceivesModelled: emptyReceives,
      invocations,
      fanoutRecordsPerInvocation: counts.fanoutRecords / Math.max(1, counts.fanoutInvocations),
      consumerRecordsPerInvocation: counts.consumerRecords / Math.max(1, counts.consumerInvocations),
      logBytes,
    },
    usdPerMillion: usd,
    estimatedUsdPerMillion: estimateStackCost(config, request, benchFiles(PROJECT_ROOT)).provisioned.perMillionUsd,
    met: usd.total <= LOW_COST_PLAN.targetUsdPerMillion,
  };
}

function settingsOf(config: HookledgerConfig): LowCostResult['settings'] {
  const ledger = config.capacity.ledger;
  const unordered = config.consumers.find((c) => c.ordering === undefined);
  return {
    intakeEndpoint: config.intake.endpoint,
    fanoutBatchingWindowSeconds: config.fanout.batchingWindowSeconds,
    consumerBatchingWindowSeconds: unordered?.batchingWindowSeconds ?? 0,
    targetUtilization: ledger.mode === 'provisioned' ? ledger.targetUtilization : LOW_COST.targetUtilization,
  };
}

/** Section 2d. */
export function printLowCost(r: LowCostResult): void {
  const s = r.settings;
  const b = r.usdPerMillion.breakdown;
  printTable(
    `2d. The lower-cost configuration at ${fmt.n(r.ratePerSecond, 1)} webhooks/s, provisioned (USD per million webhooks)`,
    [
      'total',
      'DynamoDB writes',
      'DynamoDB reads',
      'API Gateway',
      'Lambda',
      'SQS',
      'logs',
      'hookledger cost',
      `<= $${LOW_COST_PLAN.targetUsdPerMillion}`,
    ],
    [
      [
        fmt.usd(r.usdPerMillion.total),
        fmt.usd(b.dynamodbWrites),
        fmt.usd(b.dynamodbReads),
        fmt.usd(b.apiGateway),
        fmt.usd(b.lambdaRequests + b.lambdaCompute),
        fmt.usd(b.sqs),
        fmt.usd(b.cloudwatchLogs),
        fmt.usd(r.estimatedUsdPerMillion),
        r.met ? 'yes' : 'NO',
      ],
    ],
  );
  const w = r.perWebhook;
  printNotes([
    `settings: intake ${s.intakeEndpoint}; batching windows ${s.fanoutBatchingWindowSeconds} s (fan-out) and ${s.consumerBatchingWindowSeconds} s (consumers); provisioned tables at ${s.targetUtilization}% target utilization (core/config/low-cost.ts)`,
    `per webhook: ${fmt.n(w.writeUnits)} WRU, ${fmt.n(w.readUnits)} RRU, ${fmt.n(w.sqsRequests)} SQS requests (${fmt.n(w.sqsEmptyReceivesModelled)} empty receives modelled), ${fmt.n(w.invocations.ingest + w.invocations.fanout + w.invocations.consumers)} invocations (fan-out ${fmt.n(w.fanoutRecordsPerInvocation, 1)} records, consumers ${fmt.n(w.consumerRecordsPerInvocation, 1)} per invocation), ${fmt.n(w.logBytes, 0)} log bytes; tenant-day registry writes left out (${fmt.n(w.registryWriteUnits)} per webhook here)`,
    `${r.webhooks} webhooks in ${fmt.n(r.seconds, 1)} s; send to last acknowledgement p50 ${fmt.ms(r.latencyMs.p50)}, p99 ${fmt.ms(r.latencyMs.p99)} (the windows' price in latency)`,
  ]);
}

/** `lowCost` in bench/results.json. */
export function lowCostJson(r: LowCostResult) {
  const each = (o: Record<string, number>) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, round(v)]));
  const w = r.perWebhook;
  return {
    settings: r.settings,
    ratePerSecond: round(r.ratePerSecond),
    webhooks: r.webhooks,
    seconds: round(r.seconds),
    latencyMs: each(r.latencyMs),
    perWebhook: {
      writeUnits: round(w.writeUnits),
      readUnits: round(w.readUnits),
      registryWriteUnits: round(w.registryWriteUnits),
      sqsRequests: round(w.sqsRequests),
      sqsEmptyReceivesModelled: round(w.sqsEmptyReceivesModelled),
      invocations: each(w.invocations),
      fanoutRecordsPerInvocation: round(w.fanoutRecordsPerInvocation),
      consumerRecordsPerInvocation: round(w.consumerRecordsPerInvocation),
      logBytes: round(w.logBytes),
    },
    usdPerMillion: { total: round(r.usdPerMillion.total), breakdown: each(r.usdPerMillion.breakdown) },
    estimatedUsdPerMillion: round(r.estimatedUsdPerMillion),
    targetUsdPerMillion: LOW_COST_PLAN.targetUsdPerMillion,
    met: r.met,
  };
}

/** Section 2d as bench/run.ts and `npx tsx bench/low-cost.ts` run it: measure, print, merge `lowCost` into bench/results.json. */
export async function lowCostSection(): Promise<LowCostResult> {
  console.log(
    `2d. the lower-cost configuration: ${LOW_COST_PLAN.rate * LOW_COST_PLAN.seconds} webhooks at ${LOW_COST_PLAN.rate}/s on a stack of its own...`,
  );
  const r = await measureLowCost();
  printLowCost(r);
  mergeResults({ lowCost: lowCostJson(r) });
  console.log('merged lowCost into bench/results.json');
  return r;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  runToExit(lowCostSection);
}
