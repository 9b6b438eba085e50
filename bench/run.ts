/**
 * `npm run bench`: the whole pipeline on the emulators (in memory, loopback only), measured in five
 * sections, printed as tables and written to bench/results.json.
 *   1. units per webhook (DynamoDB units, SQS requests, Lambda invocations), low and high traffic
 *   2. USD per million webhooks from those counts and bench/prices.json
 *   3. intake latency/throughput (autocannon in a second process) against the emulator's write floor
 *   4. end-to-end latency, POST to the last consumer's acknowledgement
 *   5. bundle sizes and module load times, against a floor bundle built in the same run; each
 *      function's first invocation (load + first request on the local stack: bench/first-invocation.ts);
 *      5c. what `tracing: 'xray'` costs (bench/tracing.ts, which `npx tsx bench/tracing.ts` runs alone)
 *   6. bodies by size and content: where each is stored, units, S3 requests, latency, USD per million
 *   (7. window queries, 8. the intake cost of consumer filters: bench/filters.ts, which
 *   `npx tsx bench/filters.ts` runs alone; 8b. the worst-case wildcard: bench/wildcard.ts;
 *   9. a run at scale, one tenant bursting among 1,000: bench/scale.ts, which `npx tsx bench/scale.ts` runs alone;
 *   2c. the cost model's batching against runs at 5/s, 50/s and the machine's most: bench/cost-check.ts, alone likewise;
 *   2d. the lower-cost configuration at 50/s, provisioned: bench/low-cost.ts, alone likewise)
 *
 * `npm run bench -- --only bundles,large-bodies,wildcard` runs only those sections (the ones that can
 * run alone), prints them and writes bench/results.partial.json; bench/results.json is left as it is.
 */

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MAX_BODY_BYTES_CEILING, MAX_INLINE_PAYLOAD_BYTES } from '../core/blobs';
import { PROVISIONED_DEFAULTS } from '../core/config/capacity';
import { subscribedConsumers } from '../core/config/routing';
import { defineConfig, type HookledgerConfig } from '../core/config/schema';
import { PROJECT_ROOT as ROOT } from '../core/paths';
import baseConfig from '../hookledger.config';
import { type LocalStack, startLocalStack } from '../local/stack';
import {
  breakEvenRate,
  checkEstimate,
  costOptionsOf,
  type FullPriceTable,
  loadPrices,
  type MeasuredRun,
  type PriceTable,
  perWebhookOf,
  type StackShape,
  TRAFFIC,
  type Traffic,
  usdPerMillion,
  usdPerMillionProvisioned,
} from '../ops/cost-model';
import { loadStoragePrices, STORAGE_PRICES_FILE } from './body-store';
import { type BundleResult, bundleGoal, loaderNode, measureBundles, ratioVerdict } from './bundles';
import { type CliStartResult, measureCliStartOnFreshStack, printCliStart } from './cli-start';
import { costModelSection } from './cost-check';
import { type EndToEndResult, endToEnd } from './e2e';
import { BenchRunError, BenchSetupError, runToExit } from './errors';
import { type FilterBenchResult, measureFilters, printFilters } from './filters';
import { bundleTargets, measureFirstInvocations, printFirstInvocations, withFirstInvocations } from './first-invocation';
import { type IntakeResult, intakeAgainstFloor } from './intake';
import { BODY_CONTENTS, LARGE_BODY_SIZES, type LargeBodyRow, largeBodies } from './large-bodies';
import { lowCostSection } from './low-cost';
import { countInvocations, installedMeters, type Meters, type S3Meter } from './meters';
import { paymentEvent, TARGET_BYTES } from './payload';
import { fmt, printNotes, printTable, repoRelative } from './report';
import { scaleSection } from './scale';
import { BOOTSTRAP, round } from './stats';
import { tracingSection } from './tracing';
import {
  BODY_PROTECTED_SOURCE,
  type BodyProtectionResult,
  bodyProtection,
  burst,
  type ItemSizes,
  itemSizes,
  lowTraffic,
  SOURCE,
  type TrafficResult,
} from './units';
import { measureWorstCaseWildcard, printWorstCaseWildcard } from './wildcard';
import { measureWindow, type WindowBenchResult } from './window';

// The SDK's notice that Node 20 support ends in 2027 (set it to 'false' to see it).
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const PLAN = {
  lowWebhooks: 50,
  highWebhooks: 200,
  e2eSamples: 40,
  e2eSpacingMs: 100,
  intakeRequests: 3000,
  intakeConnections: 16,
  /** The steady rate (webhooks/s) the provisioned columns are priced at (70% target, default bounds). */
  provisionedRate: 50,
  largeBodyRequests: 25,
  // Loads vary by tens of percent from one process to the next on a shared machine: 41 per bundle, round
  // robin; section 5 prints each ratio's bootstrap range over these rounds (bench/stats.ts).
  bundleLoads: 41,
  firstInvocations: 11,
  eventType: 'payment.succeeded',
};

type Phases = Record<Traffic, TrafficResult>;
type Usd = ReturnType<typeof usdPerMillion>;
type BundleSet = Awaited<ReturnType<typeof measureBundles>>;
type FirstInvocationSet = Awaited<ReturnType<typeof measureFirstInvocations>>;

/** One metered local stack as the pipeline sections run on it. */
interface BenchStack {
  readonly stack: LocalStack;
  readonly meters: Meters;
  readonly s3: S3Meter;
  readonly runId: string;
  /** The shipped source's signing secret. */
  readonly secret: string;
  /** The consumers subscribed to PLAN.eventType. */
  readonly consumers: string[];
}

/** What the pipeline's stack measured: sections 1 and 1b, 4, 6 and 3, run in that order. */
interface PipelineRun {
  readonly config: HookledgerConfig;
  readonly consumers: string[];
  readonly phases: Phases;
  readonly sizes: ItemSizes;
  readonly byBody: BodyProtectionResult;
  readonly e2e: EndToEndResult;
  readonly large: LargeBodyRow[];
  readonly intake: IntakeResult;
}

/** Sections measured apart from the pipeline's stack, each in processes or emulators of its own: 5, 5b, 7, 8. */
interface MeasuredApart {
  readonly bundles: BundleSet;
  readonly first: FirstInvocationSet;
  readonly window: WindowBenchResult;
  readonly filters: FilterBenchResult;
  /** The CLI's start against `node -e 0`, `status --json` on a fresh stack of its own (bench/cli-start.ts). */
  readonly cliStart: CliStartResult;
}

/** Sections 2 and 2b: the run priced on demand and with provisioned tables, and `hookledger cost` checked against it. */
interface Priced {
  readonly cost: Record<Traffic, Usd>;
  readonly provisioned: Record<Traffic, Usd>;
  readonly breakEven: number;
  /** The bench's rate: the live burst's arrivals per second. */
  readonly benchRate: number;
  readonly estimateChecks: Record<Traffic, ReturnType<typeof checkEstimate>>;
}

/** Everything the report's sections and results.json read. */
interface BenchReport extends PipelineRun, MeasuredApart, Priced {
  readonly prices: PriceTable;
  /** Tenant-day registry write units per webhook in the low-traffic phase (see reportOf). */
  readonly registryWrites: number;
  readonly steadyWriteUnits: number;
  readonly runSeconds: number;
}

/** The whole bench: measure (the pipeline's stack, then the sections that run apart), price, print each section, write results.json. */
async function main(): Promise<void> {
  const t0 = performance.now();
  const prices = loadPrices();
  const pipeline = await measurePipeline(prices);
  const apart = await measureApart(pipeline.config);
  const report = reportOf(prices, pipeline, apart, t0);
  printHeader(report);
  printPerWebhook(report);
  printBodyProtection(report);
  printOnDemandCost(report);
  printProvisionedCost(report);
  printIntake(report);
  printEndToEnd(report);
  printBundles(report.bundles);
  printFirstInvocations(report.first, PLAN.firstInvocations);
  console.log(`\ntotal run time ${report.runSeconds.toFixed(0)} s`);
  printLargeBodies(report.large);
  printWindow(report);
  printFilters(report.filters);
  printCliStart(report.cliStart);
  writeResults(report);
  // Section 9 on a fresh stack of its own, merged into results.json as `scale` (bench/scale.ts).
  await scaleSection();
  // Section 5c: intake and the fan-out traced and not, merged as `tracing` (bench/tracing.ts).
  await tracingSection();
  // Section 2c: the cost model's batching against runs at three rates, merged as `costModelCheck` (bench/cost-check.ts).
  await costModelSection();
  // Section 2d: the documented lower-cost configuration at 50/s, merged as `lowCost` (bench/low-cost.ts).
  await lowCostSection();
}

// --- measure ---------------------------------------------------------------------------------

/** The local stack every pipeline section runs on, in memory, metered. */
async function startBenchStack(meters: Meters, secretsDir: string): Promise<LocalStack> {
  console.log('hookledger bench: starting DynamoDB Local, fauxqs and the pipeline (in memory)...');
  return startLocalStack({
    // The shipped configuration plus one GitHub-style source with replay protection by body (section 1b).
    // The shipped sources accept up to the 4 MiB ceiling here, for the large-body rows (section 6).
    config: defineConfig({
      ...baseConfig,
      sources: [...baseConfig.sources.map((s) => ({ ...s, maxBodyBytes: MAX_BODY_BYTES_CEILING })), BODY_PROTECTED_SOURCE],
    }),
    dataDir: null,
    httpPort: 0,
    secretsFile: path.join(secretsDir, 'secrets.json'),
    logger: meters.logs.logger,
    ttlSweepIntervalMs: null,
    onCapacity: meters.capacity.observe,
    onDelivery: meters.deliveries.onDelivery,
  });
}

/** `steps` on a metered bench stack, stopped and its secrets file removed after. */
async function onBenchStack<T>(runId: string, steps: (on: BenchStack) => Promise<T>): Promise<T> {
  const { meters, s3 } = installedMeters();
  const secretsDir = mkdtempSync(path.join(os.tmpdir(), 'hookledger-bench-secrets-'));
  const stack = await startBenchStack(meters, secretsDir);
  const consumers = subscribedConsumers(stack.config, PLAN.eventType);
  try {
    const secret = (await stack.secrets.get(SOURCE)).current;
    // Wrap first: stopPipeline creates the next pollers, and they take the handlers then.
    countInvocations(stack, meters.invocations);
    return await steps({ stack, meters, s3, runId, secret, consumers });
  } finally {
    await stack.stop();
    rmSync(secretsDir, { recursive: true, force: true });
  }
}

/** Sections 1, 1b, 4, 6 and 3 on one metered stack. */
async function measurePipeline(prices: PriceTable): Promise<PipelineRun> {
  return onBenchStack(Date.now().toString(36), async (on) => {
    const traffic = await measureTraffic(on);
    const e2e = await measureEndToEnd(on);
    const large = await runLargeBodies(on, prices);
    checkDeliveries(on.meters);
    const intake = await measureIntake(on);
    return { config: on.stack.config, consumers: on.consumers, ...traffic, e2e, large, intake };
  });
}

/** Sections 1 and 1b: the three traffic phases, then the same low traffic through the body-protected source. */
async function measureTraffic(on: BenchStack): Promise<Pick<PipelineRun, 'phases' | 'sizes' | 'byBody'>> {
  const { stack, meters, secret, runId, consumers } = on;
  // The backlog goes first, while the stream is empty: a restarted fan-out poller re-reads the whole
  // stream (see burst()).
  await stack.stopPipeline();
  console.log(`1. a backlog of ${PLAN.highWebhooks} webhooks, ${PLAN.lowWebhooks} one at a time, a live burst of ${PLAN.highWebhooks}...`);
  // The handlers log at INFO, as deployed, only while section 1 measures (LogMeter).
  meters.logs.record(true);
  const backlog = await burst(stack, meters, secret, `${runId}-backlog`, PLAN.highWebhooks, consumers.length, { backlog: true });
  const low = await lowTraffic(stack, meters, secret, `${runId}-low`, PLAN.lowWebhooks, consumers.length);
  const sizes = await itemSizes(stack, paymentEvent(0, `${runId}-low`).eventId, consumers);
  const high = await burst(stack, meters, secret, `${runId}-burst`, PLAN.highWebhooks, consumers.length);
  meters.logs.record(false);
  const byBody = await bodyProtection(stack, meters, `${runId}-body`, PLAN.lowWebhooks, consumers.length);
  return { phases: { low, high, backlog }, sizes, byBody };
}

/** Section 4. */
async function measureEndToEnd({ stack, meters, secret, runId, consumers }: BenchStack): Promise<EndToEndResult> {
  console.log(`4. end to end: ${PLAN.e2eSamples} webhooks ${PLAN.e2eSpacingMs} ms apart...`);
  return endToEnd(stack, meters.deliveries, secret, `${runId}-e2e`, {
    samples: PLAN.e2eSamples,
    spacingMs: PLAN.e2eSpacingMs,
    consumers: consumers.length,
  });
}

/** Section 6 on a running stack: every size and content, one webhook at a time. */
async function runLargeBodies({ stack, meters, s3, secret, runId, consumers }: BenchStack, prices: PriceTable): Promise<LargeBodyRow[]> {
  console.log(
    `6. bodies by size: ${PLAN.largeBodyRequests} webhooks each of ${LARGE_BODY_SIZES.join(', ')} bytes, ${BODY_CONTENTS.join(' and ')}, one at a time...`,
  );
  meters.logs.record(true);
  try {
    return await largeBodies(stack, meters, s3, secret, `${runId}-large`, {
      requests: PLAN.largeBodyRequests,
      consumers: consumers.length,
      prices,
      storagePrices: loadStoragePrices(),
      retentionDays: stack.config.retention.payloadDays,
      platformLogLevel: stack.config.logs.platformLevel,
    });
  } finally {
    meters.logs.record(false);
  }
}

function checkDeliveries(meters: Meters): void {
  if (meters.deliveries.failures > 0) throw new BenchRunError(`${meters.deliveries.failures} deliveries failed during the bench`);
}

/** Section 3. The intake alone: pollers stopped, so fan-out and consumers take no CPU from the ingest path. */
async function measureIntake({ stack, secret, runId, consumers }: BenchStack): Promise<IntakeResult> {
  await stack.stopPipeline();
  console.log(
    `3. intake: ${PLAN.intakeRequests} signed webhooks, ${PLAN.intakeConnections} connections, autocannon in a second process...`,
  );
  return intakeAgainstFloor(stack, secret, runId, {
    requests: PLAN.intakeRequests,
    connections: PLAN.intakeConnections,
    consumers,
  });
}

/** Sections 5, 5b, 7 and 8, after the pipeline's stack has stopped. */
async function measureApart(config: HookledgerConfig): Promise<MeasuredApart> {
  console.log(`5. bundling ${3 + config.consumers.length} functions and an empty handler; ${PLAN.bundleLoads} cold loads each...`);
  const bundles = await measureBundles(config, PLAN.bundleLoads);
  const first = await measureFirst(bundles);
  // Its own emulators and tables: reads against history, nothing to do with the pipeline's load.
  const window = await measureWindow();
  // Its own stacks (one without filters, one with): intake alone, pipeline stopped.
  const filters = await measureFilters();
  // Its own fresh stack: the start a user's first `status` has, not this run's thousands of webhooks.
  const cliStart = await measureCliStartOnFreshStack();
  return { bundles, first, window, filters, cliStart };
}

/** Section 5b, on the bundles section 5 built. */
async function measureFirst(bundles: BundleSet): Promise<FirstInvocationSet> {
  // The bundles inline the shipped configuration: the stack they run in is synthesized from it too.
  console.log(`5b. first invocations: ${PLAN.firstInvocations} fresh processes each against the local stack...`);
  return measureFirstInvocations(defineConfig(baseConfig), bundleTargets(Object.keys(bundles.bundles)), PLAN.firstInvocations);
}

// --- price -----------------------------------------------------------------------------------

function reportOf(prices: PriceTable, pipeline: PipelineRun, apart: MeasuredApart, t0: number): BenchReport {
  const { low } = pipeline.phases;
  // The tenant-day registry write is made once per tenant per UTC day per execution environment; this
  // bench spreads its few hundred webhooks over 400 tenants, so its phases register a tenant on many
  // webhooks. The steady-state figure leaves those writes out and reports them apart.
  const registryWrites = low.capacityByOperation.registerTenantDay?.writeUnits ?? 0;
  const steadyWriteUnits = low.writeUnits - registryWrites;
  const cost = priceOnDemand(prices, pipeline);
  const priced = priceProvisioned(prices as FullPriceTable, pipeline, cost);
  const runSeconds = (performance.now() - t0) / 1000;
  return { prices, ...pipeline, ...apart, ...priced, registryWrites, steadyWriteUnits, runSeconds };
}

/** Section 2: each phase's counts at on-demand prices. */
function priceOnDemand(prices: PriceTable, { phases, consumers, config }: PipelineRun): Record<Traffic, Usd> {
  const { low } = phases;
  return Object.fromEntries(
    Object.entries(phases).map(([name, t]) => [
      name,
      usdPerMillion(
        prices,
        {
          invocations: t.invocations,
          deliveries: consumers.length,
          sqsRequests: t.sqsRequests,
          // Units depend on item sizes, not on batching: the low-traffic measurement prices every column.
          writeUnits: low.writeUnits,
          readUnits: low.readUnits,
          logBytes: t.logBytes,
        },
        { platformLogLevel: config.logs.platformLevel, intakeEndpoint: config.intake.endpoint },
      ),
    ]),
  ) as Record<Traffic, Usd>;
}

/** Section 2b: provisioned capacity, its break-even rate, and the estimate (`hookledger cost`) checked against this run. */
function priceProvisioned(full: FullPriceTable, pipeline: PipelineRun, cost: Record<Traffic, Usd>): Priced {
  const { phases } = pipeline;
  const run = measuredRun(pipeline);
  const provisioned = Object.fromEntries(
    TRAFFIC.map((traffic) => {
      const shape = benchShape(pipeline, traffic);
      const w = perWebhookOf(full, run, shape);
      // The measured column's counts (as `cost` above), with DynamoDB priced as capacity-hours.
      const measured = {
        ...w,
        invocations: phases[traffic].invocations,
        sqsRequests: phases[traffic].sqsRequests,
        writeUnits: phases.low.writeUnits,
      };
      return [traffic, usdPerMillionProvisioned(full, measured, w.units, shape.provisioned, PLAN.provisionedRate, costOptionsOf(shape))];
    }),
  ) as Record<Traffic, Usd>;
  const breakEven = breakEvenRate(full, perWebhookOf(full, run, benchShape(pipeline, 'low')), benchShape(pipeline, 'low'));
  const benchRate = phases.high.webhooks / phases.high.seconds;
  const estimateChecks = Object.fromEntries(
    TRAFFIC.map((traffic) => [traffic, checkEstimate(full, run, benchShape(pipeline, traffic), benchRate, cost[traffic].total)]),
  ) as Priced['estimateChecks'];
  return { cost, provisioned, breakEven, benchRate, estimateChecks };
}

/** This run as the cost model reads a measurement. */
function measuredRun({ phases, consumers, byBody, large }: PipelineRun): MeasuredRun {
  const { low, high, backlog } = phases;
  return {
    consumers,
    payloadBytes: TARGET_BYTES,
    logBytesPerWebhook: { low: low.logBytes, high: high.logBytes, backlog: backlog.logBytes },
    bodyProtection: { intakeWriteUnits: { default: intakeUnitsOf(low), body: intakeUnitsOf(byBody.traffic) } },
    largeBodies: large,
    details: phases,
  };
}

/** The stack the bench ran, as `hookledger cost` describes one. */
function benchShape({ consumers, config }: PipelineRun, traffic: Traffic): StackShape {
  return {
    deliveries: consumers.length,
    httpDeliveries: 0,
    bodyClaimShare: 0,
    bodyBytes: TARGET_BYTES,
    secrets: 0,
    platformLogLevel: config.logs.platformLevel,
    intakeEndpoint: config.intake.endpoint,
    traffic,
    provisioned: { eventStore: PROVISIONED_DEFAULTS, byTenantDay: PROVISIONED_DEFAULTS, ledger: PROVISIONED_DEFAULTS },
    maxInlinePayloadBytes: MAX_INLINE_PAYLOAD_BYTES,
  };
}

/** Intake's write units per webhook: body claim, payload, receipt (with its index entry). */
const intakeUnitsOf = (t: TrafficResult) =>
  ['putBodyClaim', 'putPayload', 'putEvent'].reduce((sum, op) => sum + (t.capacityByOperation[op]?.writeUnits ?? 0), 0);

/** "-48%": how much `value` is below (or above) `reference`. */
const pct = (value: number, reference: number) => `${value <= reference ? '-' : '+'}${Math.abs(100 * (1 - value / reference)).toFixed(0)}%`;
const usd = (v: number) => Number(v.toFixed(4));
const usdEach = (o: Record<string, number>) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, usd(v)]));
const cpuModel = () => os.cpus()[0]?.model ?? 'unknown';

// --- print -----------------------------------------------------------------------------------

function printHeader({ consumers }: BenchReport): void {
  console.log(`\nhookledger bench  ${new Date().toISOString()}  ${cpuModel()}, ${os.cpus().length} cores, Node ${process.version}`);
  console.log(`N = ${consumers.length} consumers (${consumers.join(', ')}), ${TARGET_BYTES}-byte ${PLAN.eventType} JSON payloads`);
}

/** Section 1. */
function printPerWebhook({ phases, consumers, sizes, prices }: BenchReport): void {
  const cols = Object.values(phases);
  const row = (label: string, cell: (t: TrafficResult) => string) => [label, ...cols.map(cell)];
  const ops = [...new Set(cols.flatMap((t) => Object.keys(t.capacityByOperation)))];
  const commands = [...new Set(cols.flatMap((t) => Object.keys(t.sqsByCommand)))];
  printTable(
    '1. Per webhook (measured on the emulators)',
    ['', 'low traffic', 'high (burst)', 'backlog (max batching)'],
    [
      row('webhooks', (t) => String(t.webhooks)),
      row('DynamoDB write units (WRU)', (t) => fmt.n(t.writeUnits)),
      row('DynamoDB read units (RRU)', (t) => fmt.n(t.readUnits)),
      ...ops.map((op) =>
        row(`  ${op}`, (t) => {
          const u = t.capacityByOperation[op];
          return `${fmt.n(u?.calls ?? 0)} calls, ${fmt.n((u?.writeUnits ?? 0) + (u?.readUnits ?? 0))} units`;
        }),
      ),
      row('delivery messages sent', (t) => fmt.n(t.messagesSent)),
      row('consumer records handled', (t) => fmt.n(t.consumerRecords)),
      row('SQS requests', (t) => fmt.n(t.sqsRequests)),
      ...commands.map((c) => row(`  ${c}`, (t) => fmt.n(t.sqsByCommand[c] ?? 0))),
      row('  messages per SendMessageBatch', (t) => fmt.n(t.recordsPerBatch.sqsSendBatch, 1)),
      row('  messages per non-empty receive', (t) => fmt.n(t.recordsPerBatch.sqsReceive, 1)),
      row('  empty receives in the phase (not per webhook)', (t) => String(t.sqsEmptyReceives)),
      row('Lambda invocations', (t) => fmt.n(t.invocations.total)),
      row('  ingest', (t) => fmt.n(t.invocations.ingest)),
      row('  fan-out', (t) => fmt.n(t.invocations.fanout)),
      row('  consumers', (t) => fmt.n(t.invocations.consumers)),
      row('  records per fan-out batch', (t) => fmt.n(t.recordsPerBatch.fanout, 1)),
      row('  records per consumer batch', (t) => fmt.n(t.recordsPerBatch.consumer, 1)),
      row('phase wall time', (t) => `${t.seconds.toFixed(1)} s`),
    ],
  );
  const n = consumers.length;
  const { low } = phases;
  const exact = cols.every((t) => t.messagesSent === n && t.capacityByOperation.claim?.calls === n && t.consumerRecords === n);
  printNotes([
    exact
      ? `every webhook gave exactly ${n} delivery messages, ${n} consumer records and ${n} claims (nothing sent, invoked or claimed twice)`
      : `WARNING: messages, consumer records or claims per webhook differ from ${n}: duplicates or uncounted invocations`,
    `item sizes (DynamoDB rules): payload ${sizes.payload} B (gzip), receipt ${sizes.receipt} B, largest ledger item ${sizes.ledger} B -> AWS would charge ${sizes.awsRules.writeUnits} WRU and ${sizes.awsRules.readUnits} RRU per webhook; measured ${fmt.n(low.writeUnits)} WRU, ${fmt.n(low.readUnits)} RRU`,
    "DynamoDB Local reports units by AWS's size rules (1 WRU per started KB, updates by the larger image, 1 RRU per 4 KB strongly consistent) but nothing for a failed condition, which AWS bills: duplicates would be under-counted at intake (none here)",
    `design target <= ${prices.compareWith.designTargetWriteUnitsPerWebhook} WRU per webhook at N=3: ${low.writeUnits <= prices.compareWith.designTargetWriteUnitsPerWebhook ? 'met' : 'NOT met'} (intake: payload 1 + receipt 1 + its window-index entry 1; 2 per consumer; the transactional design: ${prices.compareWith.transactionalDesignWriteUnitsPerWebhook} WRU)`,
    "how counted: DynamoDB units from the adapters' onCapacity hook (ReturnConsumedCapacity TOTAL); SQS requests by wrapping SQSClient.prototype.send (the stack's client and the pollers' own), by command; ingest invocations = gateway requests (each answered 202); fan-out and consumer invocations = calls of the handler functions the pollers invoke (wrapped)",
    "empty ReceiveMessage calls are not per webhook: Lambda's SQS pollers long-poll every queue all the time, a fixed cost per queue whatever the traffic (the local pollers wait 1 s per poll, Lambda 20 s)",
    'low = each webhook sent once every consumer acknowledged the previous one; high = all sent at once, pipeline running (batches as big as arrivals per 50 ms stream poll allow); backlog = the same burst queued with the pipeline stopped, then released',
  ]);
}

/** Section 1b. */
function printBodyProtection({ phases: { low }, byBody }: BenchReport): void {
  printTable(
    '1b. Replay protection by body (a GitHub-style source: body-only signature, ids from unsigned headers)',
    ['', `default source (${SOURCE})`, `replayProtection: 'body'`],
    [
      ['webhooks, one at a time', String(low.webhooks), String(byBody.traffic.webhooks)],
      ['DynamoDB write units per webhook', fmt.n(low.writeUnits), fmt.n(byBody.traffic.writeUnits)],
      ['  of which intake', fmt.n(intakeUnitsOf(low)), fmt.n(intakeUnitsOf(byBody.traffic))],
      ['DynamoDB read units per webhook', fmt.n(low.readUnits), fmt.n(byBody.traffic.readUnits)],
    ],
  );
  printNotes([
    `replay of each captured request under a new delivery id: ${byBody.replay.requests} sent, ${byBody.replay.duplicates} answered 200 duplicate naming the first event id, ${byBody.replay.accepted} accepted; ${fmt.n(byBody.replay.writeUnits)} WRU per replayed request (three failed conditions, billed by AWS), no delivery, no usage`,
    'the body claim (bdy#<source>#<keyed hash>) is one more small conditional PutItem per webhook; the default source does not write it',
  ]);
}

/** Section 2. */
function printOnDemandCost({ cost, prices, phases, config }: BenchReport): void {
  const services = Object.keys(cost.low.breakdown) as (keyof typeof cost.low.breakdown)[];
  const costCols = Object.values(cost);
  const dynamoShare = (c: (typeof costCols)[number]) =>
    `${((100 * (c.breakdown.dynamodbWrites + c.breakdown.dynamodbReads)) / c.total).toFixed(0)}%`;
  printTable(
    `2. USD per million webhooks (us-east-1 list prices of ${prices.date}, bench/prices.json)`,
    ['', 'low traffic', 'high (burst)', 'backlog (max batching)'],
    [
      ...services.map((s) => [s, ...costCols.map((c) => fmt.usd(c.breakdown[s]))]),
      ['total', ...costCols.map((c) => fmt.usd(c.total))],
      ['  DynamoDB share', ...costCols.map(dynamoShare)],
    ],
  );
  const f = prices.assumptions.functions;
  const { low, high, backlog } = phases;
  printNotes([
    `compare (AWS-FACTS.md worked example): the 26-WRU transactional design ~$${prices.compareWith.transactionalDesignUsdPerMillion}/M at low traffic, ~$19 batched -> this design ${fmt.usd(cost.low.total)} (${pct(cost.low.total, prices.compareWith.transactionalDesignUsdPerMillion)}) and ${fmt.usd(cost.high.total)} (${pct(cost.high.total, 19)}); the single-item floor ~$${prices.compareWith.floorUsdPerMillion}/M is ${(cost.low.total / prices.compareWith.floorUsdPerMillion).toFixed(1)}x below the low-traffic total`,
    `assumed: arm64, ingest ${f.ingest.memoryMb} MB ${f.ingest.durationMsPerInvocation} ms, fan-out ${f.fanout.memoryMb} MB ${f.fanout.durationMsPerInvocation} ms/batch, consumer ${f.consumer.memoryMb} MB ${f.consumer.durationMsPerInvocation} ms/batch (same at any batch size: optimistic for full batches); logs measured: ${fmt.n(low.logBytes, 0)} / ${fmt.n(high.logBytes, 0)} / ${fmt.n(backlog.logBytes, 0)} B of application lines per webhook (low / burst / backlog, INFO), plus the access log line (${prices.assumptions.logs.apiGatewayAccessBytesPerRequest} B) and ${config.logs.platformLevel === 'WARN' ? 'no platform lines (logs.platformLevel WARN)' : `${prices.assumptions.logs.platformBytesPerInvocation} B of platform lines per invocation`}`,
    'not per webhook, so not included: free tiers, table storage, Secrets Manager ($0.40/secret-month; the secret is cached per execution environment), idle poller receives, the scheduled reconcile (its Scans cost by table size, per run)',
  ]);
}

/** Section 2b. */
function printProvisionedCost({ provisioned, cost, breakEven, benchRate, estimateChecks }: BenchReport): void {
  const provCols = Object.values(provisioned);
  printTable(
    `2b. USD per million webhooks with provisioned tables (auto scaling, ${PROVISIONED_DEFAULTS.targetUtilization}% target, min ${PROVISIONED_DEFAULTS.minWrite} WCU / ${PROVISIONED_DEFAULTS.minRead} RCU per table and index), steady ${PLAN.provisionedRate} webhooks/s`,
    ['', 'low traffic', 'high (burst)', 'backlog (max batching)'],
    [
      ['dynamodbWrites', ...provCols.map((c) => fmt.usd(c.breakdown.dynamodbWrites))],
      ['dynamodbReads', ...provCols.map((c) => fmt.usd(c.breakdown.dynamodbReads))],
      ['total', ...provCols.map((c) => fmt.usd(c.total))],
      ['  vs on-demand total', ...TRAFFIC.map((t) => pct(provisioned[t].total, cost[t].total))],
    ],
  );
  printNotes([
    `provisioned pays off above a steady ${fmt.n(breakEven, 2)} webhooks/s (the floors of both tables and the window index cost what on-demand units would); above it DynamoDB writes cost ${((100 * provisioned.high.breakdown.dynamodbWrites) / cost.high.breakdown.dynamodbWrites).toFixed(0)}% of on-demand's at burst traffic (target: at most 50%)`,
    `capacity-hours follow the average load through auto scaling (minutes behind): a burst above capacity plus the table's burst credit is throttled, and intake answers 503 until it scales (docs/cost-and-scale.md "Capacity")`,
    `estimate check (hookledger cost, the stack as measured, at this run's burst rate ${fmt.n(benchRate, 1)}/s): ${TRAFFIC.map((t) => `${t} ${fmt.usd(estimateChecks[t].estimatedPerMillion)} vs measured ${fmt.usd(estimateChecks[t].measuredPerMillion)} (x${estimateChecks[t].ratio.toFixed(3)})`).join('; ')}: ${TRAFFIC.every((t) => estimateChecks[t].within5Percent) ? 'within 5%' : 'NOT within 5%'}`,
  ]);
}

/** Section 3. */
function printIntake({ intake: { load, floorRps, floorRuns } }: BenchReport): void {
  const ratio = floorRps / load.rps;
  printTable(
    `3. Intake (ingest path only: pollers stopped), concurrency ${PLAN.intakeConnections}`,
    ['', 'p50', 'p99', 'webhooks/s', 'webhooks'],
    [
      ['HTTP gateway -> ingest -> DynamoDB Local', fmt.ms(load.p50Ms), fmt.ms(load.p99Ms), fmt.n(load.rps, 0), String(load.requests)],
      [
        'floor: 2 conditional PutItems per webhook (SDK)',
        '',
        '',
        fmt.n(floorRps, 0),
        String(floorRuns.reduce((s, r) => s + r.webhooks, 0)),
      ],
    ],
  );
  printNotes([
    `ratio floor/intake = ${ratio.toFixed(2)} (target: within 2x): ${ratio <= 2 ? 'met' : 'NOT met'}`,
    `floor runs before and after the intake: ${floorRuns.map((r) => fmt.n(r.rps, 0)).join(' and ')} webhooks/s (DynamoDB Local drifts on 2 cores; pooled)`,
    `autocannon in a second process, ${load.requests} distinct webhooks signed just before the run, all answered 202; the intake also verifies the signature, parses JSON, gzips and hashes`,
  ]);
}

/** Section 4. */
function printEndToEnd({ e2e }: BenchReport): void {
  printTable(
    '4. End to end: POST -> last consumer acknowledgement',
    ['', 'p50', 'p99', 'max', 'samples'],
    [[`${e2e.samples} webhooks, ${e2e.spacingMs} ms apart`, fmt.ms(e2e.p50Ms), fmt.ms(e2e.p99Ms), fmt.ms(e2e.maxMs), String(e2e.samples)]],
  );
  printNotes([
    'the local stream poller reads every 50 ms and the SQS pollers wake on send; on AWS expect more (published: stream -> Lambda p50 213 ms, p99 552 ms; SQS -> Lambda p50 16 ms)',
    `with ${e2e.samples} samples, p99 is the largest sample`,
  ]);
}

/** Section 7 (measured and logged by bench/window.ts), with the write units the window index costs. */
function printWindow({ window, consumers, steadyWriteUnits, registryWrites }: BenchReport): void {
  printNotes([
    `7. window queries: reconcile of the last hour with 10x older history vs the hour alone: read units x${window.reconcileReadRatio}, time x${window.reconcileTimeRatio} (target <= 1.2)`,
    `   usage of one tenant for a month among 10 others: ${window.tenantUsageReadUnits} RRU for ${window.tenantUsageRows} ledger rows`,
    `   write units per webhook at N=${consumers.length} with the window index (receipt + its index entry): ${fmt.n(steadyWriteUnits)} (budget <= 9.00; tenant-day registry writes in this sample, 400 tenants: ${fmt.n(registryWrites)} per webhook, in production once per tenant per day per environment)`,
  ]);
}

// --- results.json ----------------------------------------------------------------------------

function writeResults(r: BenchReport): void {
  writeFileSync(path.join(ROOT, 'bench', 'results.json'), `${JSON.stringify(resultsJson(r), null, 2)}\n`);
  console.log('wrote bench/results.json');
}

function resultsJson(r: BenchReport) {
  const { phases, byBody, e2e } = r;
  const { low, high, backlog } = phases;
  return {
    date: new Date().toISOString(),
    machine: { cpu: cpuModel(), cores: os.cpus().length, node: process.version, platform: `${process.platform}-${process.arch}` },
    runSeconds: round(r.runSeconds),
    consumers: r.consumers,
    payloadBytes: TARGET_BYTES,
    writeUnitsPerWebhook: round(r.steadyWriteUnits),
    writeUnitsPerWebhookWithRegistry: low.writeUnits,
    tenantDayRegistryWritesPerWebhook: round(r.registryWrites),
    window: r.window,
    filters: r.filters,
    bodyProtection: {
      writeUnitsPerWebhook: byBody.traffic.writeUnits,
      readUnitsPerWebhook: byBody.traffic.readUnits,
      intakeWriteUnits: { default: intakeUnitsOf(low), body: intakeUnitsOf(byBody.traffic) },
      replay: byBody.replay,
    },
    readUnitsPerWebhook: low.readUnits,
    sqsRequestsPerWebhook: { low: low.sqsRequests, high: high.sqsRequests, backlog: backlog.sqsRequests },
    lambdaInvocationsPerWebhook: { low: low.invocations.total, high: high.invocations.total, backlog: backlog.invocations.total },
    logBytesPerWebhook: {
      low: round(low.logBytes),
      high: round(high.logBytes),
      backlog: round(backlog.logBytes),
      platformLevel: r.config.logs.platformLevel,
    },
    usdPerMillion: usdJson(r),
    intake: intakeJson(r.intake),
    cliStart: r.cliStart,
    largeBodies: r.large,
    endToEnd: { p50Ms: round(e2e.p50Ms), p99Ms: round(e2e.p99Ms), maxMs: round(e2e.maxMs), samples: e2e.samples, spacingMs: e2e.spacingMs },
    ...withFirstInvocations(bundlesJson(r.bundles), r.first),
    details: { ...phases, itemSizes: r.sizes },
  };
}

/** `usdPerMillion`: sections 2 and 2b. */
function usdJson({ cost, provisioned, breakEven, benchRate, estimateChecks, prices }: BenchReport) {
  const totals = (c: Record<Traffic, Usd>) => ({
    low: usd(c.low.total),
    high: usd(c.high.total),
    backlog: usd(c.backlog.total),
    breakdown: { low: usdEach(c.low.breakdown), high: usdEach(c.high.breakdown), backlog: usdEach(c.backlog.breakdown) },
  });
  return {
    ...totals(cost),
    provisioned: {
      ...totals(provisioned),
      ratePerSecond: PLAN.provisionedRate,
      settings: PROVISIONED_DEFAULTS,
      breakEvenPerSecond: round(breakEven),
    },
    estimateCheck: {
      ratePerSecond: round(benchRate),
      ...Object.fromEntries(
        TRAFFIC.map((t) => [
          t,
          {
            estimated: usd(estimateChecks[t].estimatedPerMillion),
            measured: usd(estimateChecks[t].measuredPerMillion),
            ratio: round(estimateChecks[t].ratio),
          },
        ]),
      ),
      within5Percent: TRAFFIC.every((t) => estimateChecks[t].within5Percent),
    },
    pricesDate: prices.date,
    compareWith: repoRelative(prices.compareWith),
    pricesFiles: ['bench/prices.json', STORAGE_PRICES_FILE],
  };
}

/** `intake`: section 3. */
function intakeJson({ load, floorRps, floorRuns }: IntakeResult) {
  return {
    p50Ms: load.p50Ms,
    p99Ms: load.p99Ms,
    rps: round(load.rps),
    floorRps: round(floorRps),
    ratio: round(floorRps / load.rps),
    concurrency: PLAN.intakeConnections,
    requests: load.requests,
    seconds: round(load.seconds),
    floorRuns: floorRuns.map((r) => ({ webhooks: r.webhooks, rps: round(r.rps), seconds: round(r.seconds) })),
  };
}

/** Section 5. */
function printBundles({ bundles, emptyBundle, floorBundle }: BundleSet): void {
  printTable(
    `5. Bundles (esbuild as the CDK stack: ESM, minified, node22, AWS SDK inside; load = median of ${PLAN.bundleLoads} fresh node processes, round robin; ratio = median over the rounds of the load over the floor's in the same round [95% range])`,
    ['function', 'at cold start', 'with chunks', 'load', 'ratio to floor [95%]', 'goal', 'largest parts at cold start'],
    [
      ...Object.entries(bundles).map(([name, b]) => {
        const [lo, hi] = b.ratioRange;
        return [
          name,
          fmt.kb(b.bytes),
          fmt.kb(b.bytesWithChunks),
          fmt.ms(b.loadMs),
          `${b.ratioToFloor.toFixed(3)} [${lo.toFixed(2)}-${hi.toFixed(2)}]`,
          `<= ${bundleGoal(name).toFixed(2)} ${ratioVerdict(b.ratioToFloor, b.ratioRange, bundleGoal(name))}`,
          b.largest
            .slice(0, 4)
            .map((p) => `${p.part} ${fmt.kb(p.bytes)}`)
            .join(', '),
        ];
      }),
      [
        '(floor: DynamoDB document client + HMAC)',
        fmt.kb(floorBundle.bytes),
        fmt.kb(floorBundle.bytesWithChunks),
        fmt.ms(floorBundle.loadMs),
        '1.000',
        '',
        '',
      ],
      ['(empty handler)', fmt.kb(emptyBundle.bytes), fmt.kb(emptyBundle.bytesWithChunks), fmt.ms(emptyBundle.loadMs), '', '', ''],
    ],
  );
  printNotes([
    `ratio [95% range]: the range is the middle 95% of the ratio over ${BOOTSTRAP.resamples} resamples of the ${PLAN.bundleLoads} rounds (seeded bootstrap: the same loads give the same range), how far this run's ratio may sit from the one more rounds would settle on; a rerun of the same code moves by about as much`,
    'goal: met = ratio at or under the goal; NOT met = the whole range over it; not settled = the ratio over the goal but its range reaching it, so this run cannot tell it from noise (rerun, or raise the rounds)',
    'loaded without NODE_OPTIONS (the CDK stack sets none: source maps are read only when an error escapes a handler) and dummy env values; consumers build their clients on the first invocation, not at import (lambdas/runtime/lambda.ts)',
    `loaded by local ${process.arch} Node ${loaderNode().version}${loaderNode().path === process.execPath ? '' : ' (HOOKLEDGER_BENCH_NODE)'}, not Lambda's arm64 Node 22: compare functions with the floor built in the same run, not with AWS INIT durations`,
  ]);
}

/** `bundles`, `floorBundle`, `emptyBundle`, `loadedBy`: section 5. */
function bundlesJson({ bundles, emptyBundle, floorBundle }: BundleSet) {
  const one = (b: BundleResult) => ({
    entry: b.entry,
    bytes: b.bytes,
    bytesWithChunks: b.bytesWithChunks,
    mapBytes: b.mapBytes,
    loadMs: round(b.loadMs),
    loadRunsMs: b.loadRuns.map(round),
    largest: b.largest,
  });
  return {
    bundles: Object.fromEntries(
      Object.entries(bundles).map(([name, b]) => [
        name,
        {
          ...one(b),
          ratioToFloor: Number(b.ratioToFloor.toFixed(3)),
          ratioRange: b.ratioRange.map((r) => Number(r.toFixed(3))),
          goal: bundleGoal(name),
          verdict: ratioVerdict(b.ratioToFloor, b.ratioRange, bundleGoal(name)),
        },
      ]),
    ),
    floorBundle: one(floorBundle),
    emptyBundle: one(emptyBundle),
    loadedBy: { node: loaderNode().version, arch: process.arch },
  };
}

/** Section 6. */
function printLargeBodies(large: readonly LargeBodyRow[]): void {
  printTable(
    `6. Bodies by size (one at a time, pipeline running; ${PLAN.largeBodyRequests} webhooks per row)`,
    ['body', 'content', 'stored', 'in', 'p50', 'p99', 'WRU', 'RRU', 'S3 PUT/GET', 'USD/M', 'other store', 'x cheaper'],
    large.map((r) => [
      fmt.kb(r.bytes),
      r.content,
      fmt.n(r.storedBytes, 0),
      r.stored,
      `${r.p50Ms} ms`,
      `${r.p99Ms} ms`,
      fmt.n(r.writeUnitsPerWebhook),
      fmt.n(r.readUnitsPerWebhook),
      `${fmt.n(r.s3RequestsPerWebhook.put)}/${fmt.n(r.s3RequestsPerWebhook.get)}`,
      fmt.usd(r.usdPerMillion.total),
      fmt.usd(r.usdPerMillion.otherStore),
      r.usdPerMillion.ratioToCheaper.toFixed(2),
    ]),
  );
  printNotes([
    `with ${PLAN.largeBodyRequests} samples per row, p99 is the slowest sample; latency is the gateway round trip (verify, gzip, the S3 PUT for bucket-held bodies, the conditional writes)`,
    'per webhook: every DynamoDB write and read (intake, the fan-out payload read, claims and acknowledgements; tenant-day registry writes left out, as in section 7) and S3 request; USD per million: section 2\'s model with these units + S3 requests + the body\'s storage for the retention (bench/body-store.ts); "other store": the same webhook with the body in the other store (modelled)',
  ]);
}

const SECTIONS = ['bundles', 'large-bodies', 'wildcard'] as const;
type Section = (typeof SECTIONS)[number];

/** `--only bundles,large-bodies,wildcard`: the sections to run alone; undefined runs the whole bench. */
function onlySections(argv: readonly string[]): Set<Section> | undefined {
  const at = argv.findIndex((a) => a === '--only' || a.startsWith('--only='));
  if (at < 0) return undefined;
  const value = argv[at]!.includes('=') ? argv[at]!.slice('--only='.length) : argv[at + 1];
  const names = (value ?? '').split(',').filter(Boolean);
  const unknown = names.filter((n) => !(SECTIONS as readonly string[]).includes(n));
  if (names.length === 0 || unknown.length > 0) {
    throw new BenchSetupError(
      `--only takes a comma-separated list of ${SECTIONS.join(', ')} (the sections that run alone), got "${value ?? ''}"; run without --only for the whole bench`,
    );
  }
  return new Set(names as Section[]);
}

/** Only the sections named: printed, and written to bench/results.partial.json (never results.json). */
async function runOnly(sections: Set<Section>): Promise<void> {
  const t0 = performance.now();
  const prices = loadPrices();
  const partial: Record<string, unknown> = { date: new Date().toISOString(), node: process.version, sections: [...sections] };
  if (sections.has('large-bodies')) {
    const large = await onBenchStack(Date.now().toString(36), async (on) => {
      const rows = await runLargeBodies(on, prices);
      checkDeliveries(on.meters);
      return rows;
    });
    printLargeBodies(large);
    partial.largeBodies = large;
  }
  if (sections.has('bundles')) {
    console.log(
      `5. bundling ${3 + baseConfig.consumers.length} functions, the floor and an empty handler; ${PLAN.bundleLoads} cold loads each...`,
    );
    const bundles = await measureBundles(defineConfig(baseConfig), PLAN.bundleLoads);
    const first = await measureFirst(bundles);
    printBundles(bundles);
    printFirstInvocations(first, PLAN.firstInvocations);
    Object.assign(partial, withFirstInvocations(bundlesJson(bundles), first));
  }
  if (sections.has('wildcard')) {
    // Recorded where the whole bench puts it: filters.worstCaseWildcard.
    const worstCaseWildcard = measureWorstCaseWildcard();
    printWorstCaseWildcard(worstCaseWildcard);
    partial.filters = { worstCaseWildcard };
  }
  partial.runSeconds = round((performance.now() - t0) / 1000);
  writeFileSync(path.join(ROOT, 'bench', 'results.partial.json'), `${JSON.stringify(partial, null, 2)}\n`);
  console.log(`\nwrote bench/results.partial.json (${[...sections].join(', ')}); bench/results.json is unchanged`);
}

// Async, so a bad --only is refused by runToExit (its message, exit 1) rather than thrown at load.
runToExit(async () => {
  const only = onlySections(process.argv.slice(2));
  return only ? runOnly(only) : main();
});
