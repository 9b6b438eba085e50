/**
 * Section 8: the intake cost of consumer filters. The shipped configuration's three consumers of
 * payment.succeeded, without filters and with one filter each (all matching the bench's payments, so
 * the delivery set, and with it the receipt, is the same size):
 *
 *  - the delivery set alone (`deliverySet`, core/config/routing.ts) on the parsed bodies: median µs
 *    per webhook, none vs filtered;
 *  - the intake path through the local HTTP gateway (pipeline stopped): median µs per webhook and
 *    DynamoDB write units per webhook (the adapters' onCapacity hook), none vs filtered. Filters are
 *    evaluated in memory on the body intake already parsed: the write units must be the same;
 *  - 8b, the worst case of a wildcard (bench/wildcard.ts), recorded as `filters.worstCaseWildcard`.
 *
 * `npx tsx bench/filters.ts` runs it alone and prints it (it writes nothing); `npm run bench` runs it
 * as its own section and puts `filters` in bench/results.json.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { deliverySet } from '../core/config/routing';
import { defineConfig, type HookledgerConfig, type HookledgerConfigInput } from '../core/config/schema';
import baseConfig from '../hookledger.config';
import { type LocalStack, startLocalStack } from '../local/stack';
import { BenchRunError, runToExit } from './errors';
import { CapacityMeter } from './meters';
import { paymentEvent, signRequest } from './payload';
import { printTable } from './report';
import { median, round } from './stats';
import { post, SOURCE } from './units';
import { measureWorstCaseWildcard, printWorstCaseWildcard, type WildcardBenchResult } from './wildcard';

/** Requests before timing: each stack starts its own DynamoDB Local JVM, slow until warm. */
const WARM_UP = 100;

/** One filter per consumer, each matching every bench payment (so the delivery set keeps its size). */
export const BENCH_FILTERS: Record<string, Record<string, unknown>> = {
  'billing-meter': { body: { data: { currency: [{ 'anything-but': ['xxx'] }], amount: [{ numeric: ['>', 0] }] } } },
  'audit-writer': { tenantId: [{ prefix: 'tenant_' }], body: { data: { status: ['succeeded'], captured: [true] } } },
  'risk-evaluator': {
    $or: [{ body: { data: { amount: [{ numeric: ['>=', 100, '<', 1_000_000] }] } } }, { type: [{ prefix: 'scoped_key.' }] }],
  },
};

export interface FilterBenchResult {
  readonly webhooks: number;
  readonly consumersWithFilters: number;
  /** deliverySet alone, median µs per webhook. */
  readonly deliverySetMicros: { readonly none: number; readonly filtered: number };
  /** One webhook through the local gateway and intake (pipeline stopped), median µs. */
  readonly intakeMicros: { readonly none: number; readonly filtered: number };
  readonly writeUnitsPerWebhook: { readonly none: number; readonly filtered: number };
  readonly deliveriesPerWebhook: { readonly none: number; readonly filtered: number };
  readonly worstCaseWildcard: WildcardBenchResult;
}

function filteredConfig(): HookledgerConfig {
  return defineConfig({
    ...(baseConfig as unknown as HookledgerConfigInput),
    consumers: baseConfig.consumers.map((c) => (BENCH_FILTERS[c.id] ? { ...c, filter: BENCH_FILTERS[c.id] } : c)),
  } as HookledgerConfigInput);
}

/** Median µs per webhook of `deliverySet` over the bodies, in samples of the whole list. */
function timeDeliverySet(config: HookledgerConfig, bodies: readonly Record<string, unknown>[], samples: number): number {
  const events = bodies.map((body) => ({
    source: SOURCE,
    type: String(body.type),
    tenantId: String(body.tenant_id),
    keyId: String(body.key_id),
    body,
  }));
  const per: number[] = [];
  let sink = 0;
  for (let s = 0; s < samples; s++) {
    const start = process.hrtime.bigint();
    for (const e of events) sink += deliverySet(config, e).length;
    per.push(Number(process.hrtime.bigint() - start) / 1000 / events.length);
  }
  if (sink === 0)
    throw new BenchRunError(
      'no consumer received any bench event: the filters bench would time no filter; check its consumers subscribe to payment events',
    );
  return median(per);
}

interface IntakeRun {
  readonly stack: LocalStack;
  readonly capacity: CapacityMeter;
  readonly secret: string;
  readonly config: HookledgerConfig;
  readonly micros: number[];
  deliveries: number;
}

async function startIntake(config: HookledgerConfig, secretsDir: string, name: string): Promise<IntakeRun> {
  const capacity = new CapacityMeter();
  const stack = await startLocalStack({
    config,
    dataDir: null,
    httpPort: 0,
    secretsFile: path.join(secretsDir, `${name}.json`),
    ttlSweepIntervalMs: null,
    onCapacity: capacity.observe,
  });
  await stack.stopPipeline();
  return { stack, capacity, secret: (await stack.secrets.get(SOURCE)).current, config, micros: [], deliveries: 0 };
}

async function postTimed(run: IntakeRun, index: number, runId: string, timed: boolean): Promise<void> {
  const { eventId, body } = paymentEvent(index, runId);
  const request = signRequest(run.secret, eventId, body);
  const start = process.hrtime.bigint();
  await post(run.stack, request);
  if (!timed) return;
  run.micros.push(Number(process.hrtime.bigint() - start) / 1000);
  const parsed = JSON.parse(body) as Record<string, unknown>;
  run.deliveries += deliverySet(run.config, {
    source: SOURCE,
    type: String(parsed.type),
    tenantId: String(parsed.tenant_id),
    keyId: String(parsed.key_id),
    body: parsed,
  }).length;
}

/**
 * Both stacks at once, the webhooks interleaved (one to each in turn, the order swapped every other
 * webhook): on a shared machine the noise then falls on both sides alike.
 */
async function timeIntake(configs: { none: HookledgerConfig; filtered: HookledgerConfig }, runId: string, webhooks: number) {
  const secretsDir = mkdtempSync(path.join(os.tmpdir(), 'hookledger-bench-filters-'));
  const runs: IntakeRun[] = [];
  try {
    runs.push(await startIntake(configs.none, secretsDir, 'none'));
    runs.push(await startIntake(configs.filtered, secretsDir, 'filtered'));
    // Warm-up: each stack starts its own DynamoDB Local JVM, slow until warm.
    for (let i = 0; i < WARM_UP; i++) for (const run of runs) await postTimed(run, i, `${runId}-warm`, false);
    for (const run of runs) run.capacity.reset();
    for (let i = 0; i < webhooks; i++) {
      for (const run of i % 2 === 0 ? runs : [...runs].reverse()) await postTimed(run, i, runId, true);
    }
    const [none, filtered] = runs.map((run) => ({
      micros: median(run.micros),
      writeUnits: run.capacity.writeUnits / webhooks,
      deliveries: run.deliveries / webhooks,
    }));
    return { none: none!, filtered: filtered! };
  } finally {
    for (const run of runs) await run.stack.stop();
    rmSync(secretsDir, { recursive: true, force: true });
  }
}

export async function measureFilters(
  options: { webhooks?: number; samples?: number; log?: (line: string) => void } = {},
): Promise<FilterBenchResult> {
  const webhooks = options.webhooks ?? 200;
  const samples = options.samples ?? 200;
  const log = options.log ?? console.log;
  const none = baseConfig;
  const filtered = filteredConfig();
  const runId = Date.now().toString(36);
  const bodies = Array.from({ length: webhooks }, (_, i) => JSON.parse(paymentEvent(i, runId).body) as Record<string, unknown>);
  log(`8. filters: deliverySet x ${samples} over ${webhooks} bodies; intake of ${webhooks} webhooks without and with 3 filters...`);
  const setNone = timeDeliverySet(none, bodies, samples);
  const setFiltered = timeDeliverySet(filtered, bodies, samples);
  const { none: intakeNone, filtered: intakeFiltered } = await timeIntake({ none, filtered }, runId, webhooks);
  const worstCaseWildcard = measureWorstCaseWildcard({ log });
  return {
    webhooks,
    consumersWithFilters: Object.keys(BENCH_FILTERS).length,
    deliverySetMicros: { none: round(setNone), filtered: round(setFiltered) },
    intakeMicros: { none: round(intakeNone.micros), filtered: round(intakeFiltered.micros) },
    writeUnitsPerWebhook: { none: round(intakeNone.writeUnits), filtered: round(intakeFiltered.writeUnits) },
    deliveriesPerWebhook: { none: intakeNone.deliveries, filtered: intakeFiltered.deliveries },
    worstCaseWildcard,
  };
}

const row = (label: string, v: { readonly none: number; readonly filtered: number }) => [
  label,
  String(v.none),
  String(v.filtered),
  String(round(v.filtered - v.none)),
];

export function printFilters(r: FilterBenchResult): void {
  printTable(
    `8. Intake cost of filters (${r.consumersWithFilters} consumers with a filter each, all matching; ${r.webhooks} webhooks, one at a time)`,
    ['', 'no filters', 'filtered', 'difference'],
    [
      row('delivery set, µs per webhook (median)', r.deliverySetMicros),
      row('intake request, µs per webhook (median)', r.intakeMicros),
      row('write units per webhook', r.writeUnitsPerWebhook),
      row('deliveries per webhook', r.deliveriesPerWebhook),
    ],
  );
  printWorstCaseWildcard(r.worstCaseWildcard);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  runToExit(async () => {
    const r = await measureFilters();
    printFilters(r);
    const units = r.writeUnitsPerWebhook;
    if (units.none !== units.filtered) {
      throw new BenchRunError(`write units per webhook differ with filters (${units.none} without, ${units.filtered} with)`);
    }
  });
}
