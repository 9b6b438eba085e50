/**
 * `npm run bench`: the whole pipeline on the emulators (in memory, loopback only), measured in five
 * sections, printed as tables and written to bench/results.json.
 *   1. units per webhook (DynamoDB units, SQS requests, Lambda invocations), low and high traffic
 *   2. USD per million webhooks from those counts and bench/prices.json
 *   3. intake latency/throughput (autocannon in a second process) against the emulator's write floor
 *   4. end-to-end latency, POST to the last consumer's acknowledgement
 *   5. bundle sizes and module load times, against a floor bundle built in the same run; each
 *      function's first invocation (load + first request on the local stack: bench/first-invocation.ts)
 *   6. bodies by size and content: where each is stored, units, S3 requests, latency, USD per million
 *   (7. window queries, 8. the intake cost of consumer filters: bench/filters.ts, which
 *   `npx tsx bench/filters.ts` runs alone; 8b. the worst-case wildcard: bench/wildcard.ts)
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
import { defineConfig } from '../core/config/schema';
import { PROJECT_ROOT as ROOT } from '../core/paths';
import baseConfig from '../hookledger.config';
import { type LocalStack, startLocalStack } from '../local/stack';
import {
  breakEvenRate,
  checkEstimate,
  type FullPriceTable,
  loadPrices,
  type MeasuredRun,
  type PriceTable,
  perWebhookOf,
  type StackShape,
  TRAFFIC,
  usdPerMillion,
  usdPerMillionProvisioned,
} from '../ops/cost-model';
import { loadStoragePrices, STORAGE_PRICES_FILE } from './body-store';
import { type BundleResult, loaderNode, measureBundles } from './bundles';
import { endToEnd } from './e2e';
import { BenchRunError, BenchSetupError } from './errors';
import { type FilterBenchResult, measureFilters, printFilters } from './filters';
import { bundleTargets, measureFirstInvocations, printFirstInvocations, withFirstInvocations } from './first-invocation';
import { intakeAgainstFloor } from './intake';
import { BODY_CONTENTS, LARGE_BODY_SIZES, type LargeBodyRow, largeBodies } from './large-bodies';
import { countInvocations, installedMeters, type Meters, type S3Meter } from './meters';
import { paymentEvent, TARGET_BYTES } from './payload';
import { fmt, printNotes, printTable, repoRelative } from './report';
import { round } from './stats';
import {
  BODY_PROTECTED_SOURCE,
  type BodyProtectionResult,
  bodyProtection,
  burst,
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
  // robin (with 21, two runs of the same code gave paired ratios up to 0.1 apart).
  bundleLoads: 41,
  firstInvocations: 11,
  eventType: 'payment.succeeded',
};

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

async function main(): Promise<void> {
  const t0 = performance.now();
  const prices = loadPrices();
  const runId = Date.now().toString(36);
  const { meters, s3 } = installedMeters();

  const secretsDir = mkdtempSync(path.join(os.tmpdir(), 'hookledger-bench-secrets-'));
  const stack = await startBenchStack(meters, secretsDir);
  const consumers = subscribedConsumers(stack.config, PLAN.eventType);
  let low: TrafficResult;
  let high: TrafficResult;
  let backlog: TrafficResult;
  let sizes: Awaited<ReturnType<typeof itemSizes>>;
  let e2e: Awaited<ReturnType<typeof endToEnd>>;
  let intake: Awaited<ReturnType<typeof intakeAgainstFloor>>;
  let byBody: BodyProtectionResult;
  let large: LargeBodyRow[];
  try {
    const secret = (await stack.secrets.get(SOURCE)).current;
    // Wrap first: stopPipeline creates the next pollers, and they take the handlers then. The
    // backlog goes first, while the stream is empty: a restarted fan-out poller re-reads the whole
    // stream (see burst()).
    countInvocations(stack, meters.invocations);
    await stack.stopPipeline();
    console.log(
      `1. a backlog of ${PLAN.highWebhooks} webhooks, ${PLAN.lowWebhooks} one at a time, a live burst of ${PLAN.highWebhooks}...`,
    );
    // The handlers log at INFO, as deployed, only while section 1 measures (LogMeter).
    meters.logs.record(true);
    backlog = await burst(stack, meters, secret, `${runId}-backlog`, PLAN.highWebhooks, consumers.length, { backlog: true });
    low = await lowTraffic(stack, meters, secret, `${runId}-low`, PLAN.lowWebhooks, consumers.length);
    sizes = await itemSizes(stack, paymentEvent(0, `${runId}-low`).eventId, consumers);
    high = await burst(stack, meters, secret, `${runId}-burst`, PLAN.highWebhooks, consumers.length);
    meters.logs.record(false);
    byBody = await bodyProtection(stack, meters, `${runId}-body`, PLAN.lowWebhooks, consumers.length);
    console.log(`4. end to end: ${PLAN.e2eSamples} webhooks ${PLAN.e2eSpacingMs} ms apart...`);
    e2e = await endToEnd(stack, meters.deliveries, secret, `${runId}-e2e`, {
      samples: PLAN.e2eSamples,
      spacingMs: PLAN.e2eSpacingMs,
      consumers: consumers.length,
    });
    large = await runLargeBodies(stack, meters, s3, secret, runId, prices, consumers.length);
    if (meters.deliveries.failures > 0) throw new BenchRunError(`${meters.deliveries.failures} deliveries failed during the bench`);
    // The intake alone: pollers stopped, so fan-out and consumers take no CPU from the ingest path.
    await stack.stopPipeline();
    console.log(
      `3. intake: ${PLAN.intakeRequests} signed webhooks, ${PLAN.intakeConnections} connections, autocannon in a second process...`,
    );
    intake = await intakeAgainstFloor(stack, secret, runId, {
      requests: PLAN.intakeRequests,
      connections: PLAN.intakeConnections,
      consumers,
    });
  } finally {
    await stack.stop();
    rmSync(secretsDir, { recursive: true, force: true });
  }
  console.log(`5. bundling ${3 + stack.config.consumers.length} functions and an empty handler; ${PLAN.bundleLoads} cold loads each...`);
  const { bundles, emptyBundle, floorBundle } = await measureBundles(stack.config, PLAN.bundleLoads);
  // The bundles inline the shipped configuration: the stack they run in is synthesized from it too.
  console.log(`5b. first invocations: ${PLAN.firstInvocations} fresh processes each against the local stack...`);
  const first = await measureFirstInvocations(defineConfig(baseConfig), bundleTargets(Object.keys(bundles)), PLAN.firstInvocations);
  // Its own emulators and tables: reads against history, nothing to do with the pipeline's load.
  const window: WindowBenchResult = await measureWindow();
  // Its own stacks (one without filters, one with): intake alone, pipeline stopped.
  const filters: FilterBenchResult = await measureFilters();
  // The tenant-day registry write is made once per tenant per UTC day per execution environment; this
  // bench spreads its few hundred webhooks over 400 tenants, so its phases register a tenant on many
  // webhooks. The steady-state figure leaves those writes out and reports them apart.
  const registryWrites = low.capacityByOperation.registerTenantDay?.writeUnits ?? 0;
  const steadyWriteUnits = low.writeUnits - registryWrites;

  // --- 2. cost -------------------------------------------------------------------------------
  const phases = { low, high, backlog };
  const cost = Object.fromEntries(
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
        { platformLogLevel: stack.config.logs.platformLevel },
      ),
    ]),
  ) as Record<keyof typeof phases, ReturnType<typeof usdPerMillion>>;
  // --- 2b. provisioned capacity, and the estimate (`hookledger cost`) checked against this run ---------
  const full = prices as FullPriceTable;
  const run: MeasuredRun = {
    consumers,
    payloadBytes: TARGET_BYTES,
    logBytesPerWebhook: { low: low.logBytes, high: high.logBytes, backlog: backlog.logBytes },
    bodyProtection: { intakeWriteUnits: { default: intakeUnitsOf(low), body: intakeUnitsOf(byBody.traffic) } },
    largeBodies: large,
    details: phases,
  };
  const benchShape = (traffic: (typeof TRAFFIC)[number]): StackShape => ({
    deliveries: consumers.length,
    httpDeliveries: 0,
    bodyClaimShare: 0,
    bodyBytes: TARGET_BYTES,
    secrets: 0,
    platformLogLevel: stack.config.logs.platformLevel,
    traffic,
    provisioned: { eventStore: PROVISIONED_DEFAULTS, byTenantDay: PROVISIONED_DEFAULTS, ledger: PROVISIONED_DEFAULTS },
    maxInlinePayloadBytes: MAX_INLINE_PAYLOAD_BYTES,
  });
  const provisioned = Object.fromEntries(
    TRAFFIC.map((traffic) => {
      const shape = benchShape(traffic);
      const w = perWebhookOf(full, run, shape);
      // The measured column's counts (as `cost` above), with DynamoDB priced as capacity-hours.
      const measured = {
        ...w,
        invocations: phases[traffic].invocations,
        sqsRequests: phases[traffic].sqsRequests,
        writeUnits: low.writeUnits,
      };
      return [
        traffic,
        usdPerMillionProvisioned(full, measured, w.units, shape.provisioned, PLAN.provisionedRate, {
          platformLogLevel: stack.config.logs.platformLevel,
        }),
      ];
    }),
  ) as Record<keyof typeof phases, ReturnType<typeof usdPerMillion>>;
  const breakEven = breakEvenRate(full, perWebhookOf(full, run, benchShape('low')), benchShape('low'));
  // The bench's rate: the live burst's arrivals per second.
  const benchRate = high.webhooks / high.seconds;
  const estimateChecks = Object.fromEntries(
    TRAFFIC.map((traffic) => [traffic, checkEstimate(full, run, benchShape(traffic), benchRate, cost[traffic].total)]),
  ) as Record<keyof typeof phases, ReturnType<typeof checkEstimate>>;
  const { load, floorRps, floorRuns } = intake;
  const ratio = floorRps / load.rps;
  const runSeconds = (performance.now() - t0) / 1000;

  // --- print ---------------------------------------------------------------------------------
  const cpu = os.cpus()[0]?.model ?? 'unknown';
  console.log(`\nhookledger bench  ${new Date().toISOString()}  ${cpu}, ${os.cpus().length} cores, Node ${process.version}`);
  console.log(`N = ${consumers.length} consumers (${consumers.join(', ')}), ${TARGET_BYTES}-byte ${PLAN.eventType} JSON payloads`);

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

  const intakeUnits = (t: TrafficResult) =>
    ['putBodyClaim', 'putPayload', 'putEvent'].reduce((sum, op) => sum + (t.capacityByOperation[op]?.writeUnits ?? 0), 0);
  printTable(
    '1b. Replay protection by body (a GitHub-style source: body-only signature, ids from unsigned headers)',
    ['', `default source (${SOURCE})`, `replayProtection: 'body'`],
    [
      ['webhooks, one at a time', String(low.webhooks), String(byBody.traffic.webhooks)],
      ['DynamoDB write units per webhook', fmt.n(low.writeUnits), fmt.n(byBody.traffic.writeUnits)],
      ['  of which intake', fmt.n(intakeUnits(low)), fmt.n(intakeUnits(byBody.traffic))],
      ['DynamoDB read units per webhook', fmt.n(low.readUnits), fmt.n(byBody.traffic.readUnits)],
    ],
  );
  printNotes([
    `replay of each captured request under a new delivery id: ${byBody.replay.requests} sent, ${byBody.replay.duplicates} answered 200 duplicate naming the first event id, ${byBody.replay.accepted} accepted; ${fmt.n(byBody.replay.writeUnits)} WRU per replayed request (three failed conditions, billed by AWS), no delivery, no usage`,
    'the body claim (bdy#<source>#<keyed hash>) is one more small conditional PutItem per webhook; the default source does not write it',
  ]);

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
  printNotes([
    `compare (AWS-FACTS.md worked example): the 26-WRU transactional design ~$${prices.compareWith.transactionalDesignUsdPerMillion}/M at low traffic, ~$19 batched -> this design ${fmt.usd(cost.low.total)} (${pct(cost.low.total, prices.compareWith.transactionalDesignUsdPerMillion)}) and ${fmt.usd(cost.high.total)} (${pct(cost.high.total, 19)}); the single-item floor ~$${prices.compareWith.floorUsdPerMillion}/M is ${(cost.low.total / prices.compareWith.floorUsdPerMillion).toFixed(1)}x below the low-traffic total`,
    `assumed: arm64, ingest ${f.ingest.memoryMb} MB ${f.ingest.durationMsPerInvocation} ms, fan-out ${f.fanout.memoryMb} MB ${f.fanout.durationMsPerInvocation} ms/batch, consumer ${f.consumer.memoryMb} MB ${f.consumer.durationMsPerInvocation} ms/batch (same at any batch size: optimistic for full batches); logs measured: ${fmt.n(low.logBytes, 0)} / ${fmt.n(high.logBytes, 0)} / ${fmt.n(backlog.logBytes, 0)} B of application lines per webhook (low / burst / backlog, INFO), plus the access log line (${prices.assumptions.logs.apiGatewayAccessBytesPerRequest} B) and ${stack.config.logs.platformLevel === 'WARN' ? 'no platform lines (logs.platformLevel WARN)' : `${prices.assumptions.logs.platformBytesPerInvocation} B of platform lines per invocation`}`,
    'not per webhook, so not included: free tiers, table storage, Secrets Manager ($0.40/secret-month; the secret is cached per execution environment), idle poller receives, the scheduled reconcile (its Scans cost by table size, per run)',
  ]);

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

  printTable(
    '4. End to end: POST -> last consumer acknowledgement',
    ['', 'p50', 'p99', 'max', 'samples'],
    [[`${e2e.samples} webhooks, ${e2e.spacingMs} ms apart`, fmt.ms(e2e.p50Ms), fmt.ms(e2e.p99Ms), fmt.ms(e2e.maxMs), String(e2e.samples)]],
  );
  printNotes([
    'the local stream poller reads every 50 ms and the SQS pollers wake on send; on AWS expect more (published: stream -> Lambda p50 213 ms, p99 552 ms; SQS -> Lambda p50 16 ms)',
    `with ${e2e.samples} samples, p99 is the largest sample`,
  ]);

  printBundles(bundles, emptyBundle, floorBundle);
  printFirstInvocations(first, PLAN.firstInvocations);
  console.log(`\ntotal run time ${runSeconds.toFixed(0)} s`);

  printLargeBodies(large);

  printNotes([
    `7. window queries: reconcile of the last hour with 10x older history vs the hour alone: read units x${window.reconcileReadRatio}, time x${window.reconcileTimeRatio} (target <= 1.2)`,
    `   usage of one tenant for a month among 10 others: ${window.tenantUsageReadUnits} RRU for ${window.tenantUsageRows} ledger rows`,
    `   write units per webhook at N=${consumers.length} with the window index (receipt + its index entry): ${fmt.n(steadyWriteUnits)} (budget <= 9.00; tenant-day registry writes in this sample, 400 tenants: ${fmt.n(registryWrites)} per webhook, in production once per tenant per day per environment)`,
  ]);

  printFilters(filters);

  // --- results.json --------------------------------------------------------------------------
  const results = {
    date: new Date().toISOString(),
    machine: { cpu, cores: os.cpus().length, node: process.version, platform: `${process.platform}-${process.arch}` },
    runSeconds: round(runSeconds),
    consumers,
    payloadBytes: TARGET_BYTES,
    writeUnitsPerWebhook: round(steadyWriteUnits),
    writeUnitsPerWebhookWithRegistry: low.writeUnits,
    tenantDayRegistryWritesPerWebhook: round(registryWrites),
    window,
    filters,
    bodyProtection: {
      writeUnitsPerWebhook: byBody.traffic.writeUnits,
      readUnitsPerWebhook: byBody.traffic.readUnits,
      intakeWriteUnits: { default: intakeUnits(low), body: intakeUnits(byBody.traffic) },
      replay: byBody.replay,
    },
    readUnitsPerWebhook: low.readUnits,
    sqsRequestsPerWebhook: { low: low.sqsRequests, high: high.sqsRequests, backlog: backlog.sqsRequests },
    lambdaInvocationsPerWebhook: { low: low.invocations.total, high: high.invocations.total, backlog: backlog.invocations.total },
    logBytesPerWebhook: {
      low: round(low.logBytes),
      high: round(high.logBytes),
      backlog: round(backlog.logBytes),
      platformLevel: stack.config.logs.platformLevel,
    },
    usdPerMillion: {
      low: usd(cost.low.total),
      high: usd(cost.high.total),
      backlog: usd(cost.backlog.total),
      breakdown: { low: usdEach(cost.low.breakdown), high: usdEach(cost.high.breakdown), backlog: usdEach(cost.backlog.breakdown) },
      provisioned: {
        low: usd(provisioned.low.total),
        high: usd(provisioned.high.total),
        backlog: usd(provisioned.backlog.total),
        breakdown: {
          low: usdEach(provisioned.low.breakdown),
          high: usdEach(provisioned.high.breakdown),
          backlog: usdEach(provisioned.backlog.breakdown),
        },
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
    },
    intake: {
      p50Ms: load.p50Ms,
      p99Ms: load.p99Ms,
      rps: round(load.rps),
      floorRps: round(floorRps),
      ratio: round(ratio),
      concurrency: PLAN.intakeConnections,
      requests: load.requests,
      seconds: round(load.seconds),
      floorRuns: floorRuns.map((r) => ({ webhooks: r.webhooks, rps: round(r.rps), seconds: round(r.seconds) })),
    },
    largeBodies: large,
    endToEnd: { p50Ms: round(e2e.p50Ms), p99Ms: round(e2e.p99Ms), maxMs: round(e2e.maxMs), samples: e2e.samples, spacingMs: e2e.spacingMs },
    ...withFirstInvocations(bundlesJson(bundles, emptyBundle, floorBundle), first),
    details: { ...phases, itemSizes: sizes },
  };
  writeFileSync(path.join(ROOT, 'bench', 'results.json'), `${JSON.stringify(results, null, 2)}\n`);
  console.log('wrote bench/results.json');
}

/** Intake's write units per webhook: body claim, payload, receipt (with its index entry). */
const intakeUnitsOf = (t: TrafficResult) =>
  ['putBodyClaim', 'putPayload', 'putEvent'].reduce((sum, op) => sum + (t.capacityByOperation[op]?.writeUnits ?? 0), 0);

/** "-48%": how much `value` is below (or above) `reference`. */
const pct = (value: number, reference: number) => `${value <= reference ? '-' : '+'}${Math.abs(100 * (1 - value / reference)).toFixed(0)}%`;
const usd = (v: number) => Number(v.toFixed(4));
const usdEach = (o: Record<string, number>) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, usd(v)]));

/** Section 6 on a running stack: every size and content, one webhook at a time. */
async function runLargeBodies(
  stack: LocalStack,
  meters: Meters,
  s3: S3Meter,
  secret: string,
  runId: string,
  prices: PriceTable,
  consumers: number,
): Promise<LargeBodyRow[]> {
  console.log(
    `6. bodies by size: ${PLAN.largeBodyRequests} webhooks each of ${LARGE_BODY_SIZES.join(', ')} bytes, ${BODY_CONTENTS.join(' and ')}, one at a time...`,
  );
  meters.logs.record(true);
  try {
    return await largeBodies(stack, meters, s3, secret, `${runId}-large`, {
      requests: PLAN.largeBodyRequests,
      consumers,
      prices,
      storagePrices: loadStoragePrices(),
      retentionDays: stack.config.retention.payloadDays,
      platformLogLevel: stack.config.logs.platformLevel,
    });
  } finally {
    meters.logs.record(false);
  }
}

/** Load-time goals against the floor bundle: intake and the consumers run on every webhook. */
const bundleGoal = (name: string) => (name === 'fanout' || name === 'reconcile' ? 1.25 : 1.1);

function printBundles(bundles: Record<string, BundleResult>, emptyBundle: BundleResult, floorBundle: BundleResult): void {
  printTable(
    `5. Bundles (esbuild as the CDK stack: ESM, minified, node22, AWS SDK inside; load = median of ${PLAN.bundleLoads} fresh node processes, round robin; ratio = median over the rounds of the load over the floor's in the same round)`,
    ['function', 'at cold start', 'with chunks', 'load', 'ratio to floor', 'goal', 'largest parts at cold start'],
    [
      ...Object.entries(bundles).map(([name, b]) => {
        const ratio = b.ratioToFloor;
        return [
          name,
          fmt.kb(b.bytes),
          fmt.kb(b.bytesWithChunks),
          fmt.ms(b.loadMs),
          ratio.toFixed(3),
          `<= ${bundleGoal(name).toFixed(2)} ${ratio <= bundleGoal(name) ? 'met' : 'NOT met'}`,
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
    'loaded without NODE_OPTIONS (the CDK stack sets none: source maps are read only when an error escapes a handler) and dummy env values; consumers build their clients on the first invocation, not at import (lambdas/runtime/lambda.ts)',
    `loaded by local ${process.arch} Node ${loaderNode().version}${loaderNode().path === process.execPath ? '' : ' (HOOKLEDGER_BENCH_NODE)'}, not Lambda's arm64 Node 22: compare functions with the floor built in the same run, not with AWS INIT durations`,
  ]);
}

function bundlesJson(bundles: Record<string, BundleResult>, emptyBundle: BundleResult, floorBundle: BundleResult) {
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
        { ...one(b), ratioToFloor: Number(b.ratioToFloor.toFixed(3)), goal: bundleGoal(name) },
      ]),
    ),
    floorBundle: one(floorBundle),
    emptyBundle: one(emptyBundle),
    loadedBy: { node: loaderNode().version, arch: process.arch },
  };
}

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
    const { meters, s3 } = installedMeters();
    const secretsDir = mkdtempSync(path.join(os.tmpdir(), 'hookledger-bench-secrets-'));
    const stack = await startBenchStack(meters, secretsDir);
    try {
      countInvocations(stack, meters.invocations);
      const consumers = subscribedConsumers(stack.config, PLAN.eventType);
      const secret = (await stack.secrets.get(SOURCE)).current;
      const large = await runLargeBodies(stack, meters, s3, secret, Date.now().toString(36), prices, consumers.length);
      if (meters.deliveries.failures > 0) throw new BenchRunError(`${meters.deliveries.failures} deliveries failed during the bench`);
      printLargeBodies(large);
      partial.largeBodies = large;
    } finally {
      await stack.stop();
      rmSync(secretsDir, { recursive: true, force: true });
    }
  }
  if (sections.has('bundles')) {
    console.log(
      `5. bundling ${3 + baseConfig.consumers.length} functions, the floor and an empty handler; ${PLAN.bundleLoads} cold loads each...`,
    );
    const { bundles, emptyBundle, floorBundle } = await measureBundles(defineConfig(baseConfig), PLAN.bundleLoads);
    console.log(`5b. first invocations: ${PLAN.firstInvocations} fresh processes each against the local stack...`);
    const first = await measureFirstInvocations(defineConfig(baseConfig), bundleTargets(Object.keys(bundles)), PLAN.firstInvocations);
    printBundles(bundles, emptyBundle, floorBundle);
    printFirstInvocations(first, PLAN.firstInvocations);
    Object.assign(partial, withFirstInvocations(bundlesJson(bundles, emptyBundle, floorBundle), first));
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

(() => {
  const only = onlySections(process.argv.slice(2));
  return only ? runOnly(only) : main();
})().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
    process.exit(1);
  },
);
