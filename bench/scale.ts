/**
 * Section 9: a run at the scale this machine holds. SCALE_PLAN.webhooks signed webhooks across
 * SCALE_PLAN.tenants tenants on one local stack (the shipped configuration), one tenant sending a
 * third of them in a burst at the machine's most (SCALE_PLAN.heavyConnections at once) while every
 * other tenant sends at a steady pace throughout. Measured: each delivery's latency (intake's 202 ->
 * that consumer's acknowledgement) for the heavy tenant and for the others, write units per webhook,
 * how evenly the window index (GSI partitions `<tenant>#<day>[#<shard>]`) and the tenant-day registry
 * (`tday#<day>#<tenant>`, indexed under `tenants#<day>`) spread over their partition keys, and whether
 * every send to a consumer queue carried its tenant as MessageGroupId.
 *
 * `npx tsx bench/scale.ts` runs it alone and merges `scale` into bench/results.json; bench/run.ts
 * runs it after the other sections.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SendMessageBatchRequestEntry } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { subscribedConsumers } from '../core/config/routing';
import { defineConfig } from '../core/config/schema';
import { WINDOW_INDEX } from '../core/model';
import baseConfig from '../hookledger.config';
import { type DeliveryProgress, type LocalStack, startLocalStack } from '../local/stack';
import { BenchRunError, BenchSetupError, runToExit } from './errors';
import { CapacityMeter, LogMeter } from './meters';
import { paymentEvent, signRequest, TARGET_BYTES } from './payload';
import { fmt, mergeResults, printNotes, printTable } from './report';
import { percentile, round } from './stats';
import { post } from './units';

export const SCALE_PLAN = {
  webhooks: 20_000,
  /** Tenant ids are `tenant_000` .. `tenant_999`: three digits keep every payload at TARGET_BYTES. */
  tenants: 1_000,
  heavyShare: 1 / 3,
  heavyTenant: 'tenant_000',
  /** The heavy tenant's requests in flight at once: the intake's most on this machine (section 3 uses 16). */
  heavyConnections: 16,
  /**
   * The other tenants' webhooks are spread evenly over this many seconds from the start: about as
   * long as the pipeline takes over the whole run on an idle 2-core machine, so they send throughout.
   * A busier machine falls behind the schedule; they then send as fast as othersInFlight allows, half
   * the heavy tenant's requests in flight, so the heavy burst still takes most of the intake.
   */
  othersSeconds: 300,
  othersInFlight: 8,
  progressEvery: 2_000,
  /** A run that acknowledges nothing for this long is stuck, not slow. */
  stallMs: 120_000,
  eventType: 'payment.succeeded',
} as const;

export type ScalePlan = typeof SCALE_PLAN;

// --- pure parts (test/bench/scale.test.ts) --------------------------------------------------------

/** The three-digit tenant id of tenant number `n`. */
export const tenantOf = (n: number) => `tenant_${String(n).padStart(3, '0')}`;

/**
 * Who sends what: the heavy tenant's count, and the other tenants' webhooks in sending order (round
 * robin over tenant_001 .. the last, so each sends steadily through the run).
 */
export function splitTraffic(webhooks: number, tenants: number, heavyShare: number): { heavy: number; others: string[] } {
  if (tenants < 2 || tenants > 1000) {
    throw new BenchSetupError(`SCALE_PLAN.tenants must be 2..1000 (three-digit tenant ids keep payloads at one size), got ${tenants}`);
  }
  const heavy = Math.round(webhooks * heavyShare);
  const others = Array.from({ length: webhooks - heavy }, (_, i) => tenantOf(1 + (i % (tenants - 1))));
  return { heavy, others };
}

/** One delivery: an event's acknowledgement by one consumer, ms after intake answered 202. */
export interface DeliverySample {
  readonly tenantId: string;
  readonly latencyMs: number;
}

export interface LatencySummary {
  readonly deliveries: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
}

export function latencySummary(latencies: readonly number[]): LatencySummary {
  return {
    deliveries: latencies.length,
    p50Ms: round(percentile(latencies, 50)),
    p99Ms: round(percentile(latencies, 99)),
    maxMs: latencies.length === 0 ? Number.NaN : round(Math.max(...latencies)),
  };
}

/** Delivery latency p50/p99 for the heavy tenant and for every other tenant together. */
export function latencyByClass(samples: readonly DeliverySample[], heavyTenant: string): { heavy: LatencySummary; others: LatencySummary } {
  const heavy: number[] = [];
  const others: number[] = [];
  for (const s of samples) (s.tenantId === heavyTenant ? heavy : others).push(s.latencyMs);
  return { heavy: latencySummary(heavy), others: latencySummary(others) };
}

export interface PartitionSpread {
  readonly partitions: number;
  readonly total: number;
  /** The partition key holding the most (the first in key order among equals). */
  readonly largest: string;
  readonly largestCount: number;
  /** largestCount / total: 1 / partitions when perfectly even. */
  readonly largestShare: number;
}

/** How evenly counts (items or writes) spread over partition keys: the largest key's share. */
export function partitionSpread(counts: ReadonlyMap<string, number>): PartitionSpread {
  let total = 0;
  let largest = '';
  let largestCount = 0;
  for (const [key, n] of [...counts].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    total += n;
    if (n > largestCount) {
      largest = key;
      largestCount = n;
    }
  }
  return { partitions: counts.size, total, largest, largestCount, largestShare: total === 0 ? 0 : largestCount / total };
}

// --- meters ------------------------------------------------------------------------------------

type Send = (this: DynamoDBDocumentClient, command: unknown, ...rest: unknown[]) => Promise<unknown>;

/**
 * Writes to the EventStore by partition key, read where they leave the document clients: registry
 * writes per `tday#` key (every attempt: a failed condition is billed too) and window-index writes
 * per `wpk` (a write whose item carries `wpk` and succeeded: only those reach the GSI).
 */
export class PartitionWriteMeter {
  readonly registry = new Map<string, number>();
  readonly index = new Map<string, number>();
  private restore: (() => void) | undefined;

  constructor(private readonly table: string) {}

  install(): void {
    const proto = DynamoDBDocumentClient.prototype as unknown as { send: Send };
    const original = proto.send;
    const meter = this;
    proto.send = function (this: DynamoDBDocumentClient, command: unknown, ...rest: unknown[]) {
      const result = original.call(this, command, ...rest);
      return meter.observe(command, result);
    };
    this.restore = () => {
      proto.send = original;
    };
  }

  uninstall(): void {
    this.restore?.();
    this.restore = undefined;
  }

  private observe(command: unknown, result: Promise<unknown>): Promise<unknown> {
    const input = (command as { input?: WriteInput }).input;
    if (input?.TableName !== this.table) return result;
    const pk = (input.Key?.pk ?? input.Item?.pk) as string | undefined;
    const wpk = (input.Item?.[WINDOW_INDEX.partitionKey] ?? input.ExpressionAttributeValues?.[':wpk']) as string | undefined;
    if (typeof pk !== 'string' || !(input.Item || input.UpdateExpression)) return result;
    if (pk.startsWith('tday#')) add(this.registry, pk);
    if (typeof wpk !== 'string') return result;
    return result.then((out) => {
      add(this.index, wpk);
      return out;
    });
  }
}

interface WriteInput {
  readonly TableName?: string;
  readonly Key?: Record<string, unknown>;
  readonly Item?: Record<string, unknown>;
  readonly UpdateExpression?: string;
  readonly ExpressionAttributeValues?: Record<string, unknown>;
}

const add = (map: Map<string, number>, key: string, n = 1) => map.set(key, (map.get(key) ?? 0) + n);

interface TimedSample extends DeliverySample {
  readonly answeredAt: number;
  readonly ackAt: number;
}

/** Each (event, consumer) acknowledgement, first one only, and when intake answered each event. */
class DeliveryClock {
  readonly answeredAt = new Map<string, number>();
  readonly acks = new Map<string, { tenantId: string; eventId: string; at: number }>();
  readonly completeEvents = new Set<string>();
  readonly perEvent = new Map<string, number>();
  failures = 0;
  lastAckAt = 0;
  onComplete: ((count: number) => void) | undefined;

  constructor(private readonly consumers: number) {}

  readonly onDelivery = (d: DeliveryProgress): void => {
    if (d.outcome !== 'processed') {
      this.failures += 1;
      return;
    }
    const key = `${d.eventId}#${d.consumerId}`;
    if (this.acks.has(key)) return;
    this.lastAckAt = performance.now();
    this.acks.set(key, { tenantId: d.tenantId, eventId: d.eventId, at: this.lastAckAt });
    const n = (this.perEvent.get(d.eventId) ?? 0) + 1;
    this.perEvent.set(d.eventId, n);
    if (n === this.consumers) {
      this.completeEvents.add(d.eventId);
      this.onComplete?.(this.completeEvents.size);
    }
  };

  /** Every acknowledgement as a sample; one that came before the 202 was read (same event loop) counts as 0 ms. */
  samples(): { samples: TimedSample[]; beforeAnswer: number } {
    let beforeAnswer = 0;
    const samples = [...this.acks.values()].map((a) => {
      const answeredAt = this.answeredAt.get(a.eventId) ?? a.at;
      if (a.at < answeredAt) beforeAnswer += 1;
      return { tenantId: a.tenantId, latencyMs: Math.max(0, a.at - answeredAt), answeredAt, ackAt: a.at };
    });
    return { samples, beforeAnswer };
  }
}

/** Every entry the stack's SQS client sends to a consumer queue: how many carried the body's tenant as MessageGroupId. */
function countFairSends(stack: LocalStack): { sent: number; groupedByTenant: number } {
  const counts = { sent: 0, groupedByTenant: 0 };
  stack.handlers.sqs.middlewareStack.add(
    (next) => async (args) => {
      const input = args.input as { MessageBody?: string; MessageGroupId?: string; Entries?: SendMessageBatchRequestEntry[] };
      const entries = input.Entries ?? (input.MessageBody === undefined ? [] : [input]);
      for (const entry of entries) {
        const tenantId = (JSON.parse(entry.MessageBody ?? '{}') as { tenantId?: string }).tenantId;
        counts.sent += 1;
        if (tenantId !== undefined && entry.MessageGroupId === tenantId) counts.groupedByTenant += 1;
      }
      return next(args);
    },
    { step: 'initialize', name: 'benchFairSends' },
  );
  return counts;
}

// --- run -----------------------------------------------------------------------------------------

/** The stack and meters one scale run uses. */
interface ScaleRig {
  readonly stack: LocalStack;
  readonly secret: string;
  readonly consumers: string[];
  readonly capacity: CapacityMeter;
  readonly writes: PartitionWriteMeter;
  readonly clock: DeliveryClock;
  readonly fairSends: { sent: number; groupedByTenant: number };
}

/** What the senders saw: when each side finished sending. */
interface SendTimes {
  readonly startedAt: number;
  readonly heavySentAt: number;
  readonly othersSentAt: number;
}

/** One signed webhook of `tenantId`, sent now; its 202 time recorded. */
async function sendOne(rig: ScaleRig, runId: string, index: number, tenantId: string): Promise<void> {
  const { eventId, body } = paymentEvent(index, runId);
  // Same length as the PRNG's tenant_NNN, so the body stays TARGET_BYTES long.
  const request = signRequest(rig.secret, eventId, body.replace(/"tenant_id":"tenant_\d{3}"/, `"tenant_id":"${tenantId}"`));
  await post(rig.stack, request);
  rig.clock.answeredAt.set(eventId, performance.now());
}

/** The heavy tenant's burst: `count` webhooks, `plan.heavyConnections` in flight at once, as fast as intake answers. */
async function heavyBurst(rig: ScaleRig, runId: string, count: number, plan: ScalePlan, progress: () => void): Promise<number> {
  let next = 0;
  await Promise.all(
    Array.from({ length: plan.heavyConnections }, async () => {
      while (next < count) {
        await sendOne(rig, runId, next++, plan.heavyTenant);
        progress();
      }
    }),
  );
  return performance.now();
}

/** The other tenants, each webhook due at its place in a steady schedule; a late one goes at once, within `inFlight`. */
async function steadyOthers(
  rig: ScaleRig,
  runId: string,
  tenants: readonly string[],
  from: number,
  plan: ScalePlan,
  progress: () => void,
): Promise<number> {
  const t0 = performance.now();
  const spacingMs = (1000 * plan.othersSeconds) / tenants.length;
  const inFlight = new Set<Promise<void>>();
  for (let i = 0; i < tenants.length; i++) {
    const wait = t0 + i * spacingMs - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    if (inFlight.size >= plan.othersInFlight) await Promise.race(inFlight);
    const sent: Promise<void> = sendOne(rig, runId, from + i, tenants[i]!).then(() => {
      inFlight.delete(sent);
      progress();
    });
    inFlight.add(sent);
  }
  await Promise.all(inFlight);
  return performance.now();
}

/**
 * Resolves when every webhook is acknowledged by every consumer; fails when nothing is acknowledged
 * for stallMs. `cancel` stops watching (a sender failed).
 */
function allAcknowledged(
  clock: DeliveryClock,
  webhooks: number,
  progress: (done: number) => void,
): { done: Promise<void>; cancel: () => void } {
  let cancel = () => {};
  const done = new Promise<void>((resolve, reject) => {
    let last = performance.now();
    const check = () => {
      if (clock.completeEvents.size >= webhooks) return finish();
      if (performance.now() - Math.max(last, clock.lastAckAt) > SCALE_PLAN.stallMs) {
        finish();
        reject(new BenchRunError(`scale run stalled: ${clock.completeEvents.size} of ${webhooks} webhooks acknowledged by every consumer`));
      }
    };
    const timer = setInterval(check, 1000);
    const finish = () => {
      clearInterval(timer);
      clock.onComplete = undefined;
      resolve();
    };
    clock.onComplete = (done) => {
      last = performance.now();
      if (done % SCALE_PLAN.progressEvery === 0) progress(done);
      if (done >= webhooks) finish();
    };
    cancel = finish;
  });
  return { done, cancel };
}

/** Sends both kinds of traffic at once, printing progress, and waits for every acknowledgement. */
async function sendScaleTraffic(rig: ScaleRig, runId: string, plan: ScalePlan): Promise<SendTimes> {
  const { heavy, others } = splitTraffic(plan.webhooks, plan.tenants, plan.heavyShare);
  const startedAt = performance.now();
  let sent = 0;
  const line = (what: string) =>
    console.log(`   ${what} at ${((performance.now() - startedAt) / 1000).toFixed(0)} s (load ${os.loadavg()[0]!.toFixed(2)})`);
  const onSent = () => {
    sent += 1;
    if (sent % plan.progressEvery === 0) line(`${sent} of ${plan.webhooks} sent`);
  };
  const acknowledged = allAcknowledged(rig.clock, plan.webhooks, (done) =>
    line(`${done} of ${plan.webhooks} acknowledged by every consumer`),
  );
  const [heavySentAt, othersSentAt] = await Promise.all([
    heavyBurst(rig, runId, heavy, plan, onSent).then((at) => {
      line(`the heavy tenant's ${heavy} sent`);
      return at;
    }),
    steadyOthers(rig, runId, others, heavy, plan, onSent),
  ]).catch((error: unknown) => {
    acknowledged.cancel();
    throw error;
  });
  await acknowledged.done;
  return { startedAt, heavySentAt, othersSentAt };
}

// --- measure -------------------------------------------------------------------------------------

export interface ScaleResult {
  readonly webhooks: number;
  readonly tenants: number;
  readonly heavyTenant: string;
  readonly heavyWebhooks: number;
  readonly consumers: string[];
  /** First send to the last acknowledgement. */
  readonly trafficSeconds: number;
  readonly heavySendSeconds: number;
  readonly othersSendSeconds: number;
  readonly latency: {
    readonly heavy: LatencySummary;
    readonly others: LatencySummary;
    /** The other tenants' deliveries whose webhook intake answered before the heavy tenant's last acknowledgement. */
    readonly othersWhileHeavyBacklog: LatencySummary;
  };
  readonly acknowledgedBeforeAnswer: number;
  readonly writeUnitsPerWebhook: number;
  readonly registryWriteUnitsPerWebhook: number;
  readonly windowIndex: { readonly items: PartitionSpread; readonly writes: PartitionSpread };
  readonly tenantDayRegistry: {
    readonly items: PartitionSpread;
    readonly writes: PartitionSpread;
    /** Where the registry's items sit in the window index: one `tenants#<day>` partition per day. */
    readonly indexPartitions: PartitionSpread;
  };
  readonly fairSends: { readonly sent: number; readonly groupedByTenant: number };
  readonly loadAverage: { readonly before: number[]; readonly after: number[] };
  /** This process's CPU (the stack's functions, emulated queues and the senders; DynamoDB Local runs apart). */
  readonly processCpuSeconds: number;
  readonly runSeconds: number;
}

/** The window index after the run, by partition key: every item, and the registry's items by table key and index key. */
async function readPartitions(
  stack: LocalStack,
): Promise<{ index: Map<string, number>; registry: Map<string, number>; registryIndex: Map<string, number> }> {
  const index = new Map<string, number>();
  const registry = new Map<string, number>();
  const registryIndex = new Map<string, number>();
  let start: Record<string, unknown> | undefined;
  do {
    const page = await stack.handlers.ddb.send(
      new ScanCommand({
        TableName: stack.resources.tables.events,
        IndexName: WINDOW_INDEX.name,
        ProjectionExpression: '#pk, #wpk, #kind',
        ExpressionAttributeNames: { '#pk': 'pk', '#wpk': WINDOW_INDEX.partitionKey, '#kind': 'kind' },
        ExclusiveStartKey: start,
      }),
    );
    for (const item of page.Items ?? []) {
      const wpk = String(item[WINDOW_INDEX.partitionKey]);
      add(index, wpk);
      if (item.kind !== 'tenantDay') continue;
      add(registry, String(item.pk));
      add(registryIndex, wpk);
    }
    start = page.LastEvaluatedKey;
  } while (start);
  return { index, registry, registryIndex };
}

/** A fresh in-memory stack on the shipped configuration, its handlers silent, metered for this section. */
async function startScaleRig(secretsDir: string): Promise<ScaleRig> {
  const capacity = new CapacityMeter();
  const config = defineConfig(baseConfig);
  const consumers = subscribedConsumers(config, SCALE_PLAN.eventType);
  const clock = new DeliveryClock(consumers.length);
  const stack = await startLocalStack({
    config,
    dataDir: null,
    httpPort: 0,
    secretsFile: path.join(secretsDir, 'secrets.json'),
    // Silent (LogMeter's loggers log only while recording): 60,000 deliveries' lines would be the load.
    logger: new LogMeter().logger,
    ttlSweepIntervalMs: null,
    onCapacity: capacity.observe,
    onDelivery: clock.onDelivery,
  });
  const writes = new PartitionWriteMeter(stack.resources.tables.events);
  writes.install();
  const secret = (await stack.secrets.get(config.sources[0]!.id)).current;
  return { stack, secret, consumers, capacity, writes, clock, fairSends: countFairSends(stack) };
}

/** Section 9: start, send, wait for every acknowledgement, drain, read the partitions, stop. */
export async function measureScale(plan: ScalePlan = SCALE_PLAN): Promise<ScaleResult> {
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const before = os.loadavg();
  const secretsDir = mkdtempSync(path.join(os.tmpdir(), 'hookledger-bench-scale-'));
  const rig = await startScaleRig(secretsDir);
  try {
    console.log(
      `9. scale: ${plan.webhooks} webhooks across ${plan.tenants} tenants; ${plan.heavyTenant} sends ${Math.round(plan.webhooks * plan.heavyShare)} at once (${plan.heavyConnections} in flight), the others spread over ${plan.othersSeconds} s (${plan.othersInFlight} in flight at most)...`,
    );
    const times = await sendScaleTraffic(rig, Date.now().toString(36), plan);
    await rig.stack.drain({ timeoutMs: SCALE_PLAN.stallMs });
    if (rig.clock.failures > 0) throw new BenchRunError(`${rig.clock.failures} deliveries failed during the scale run`);
    const partitions = await readPartitions(rig.stack);
    const cpu = process.cpuUsage(cpu0);
    return resultOf(rig, plan, times, partitions, {
      loadAverage: { before: before.map(round), after: os.loadavg().map(round) },
      processCpuSeconds: round((cpu.user + cpu.system) / 1e6),
      runSeconds: round((performance.now() - t0) / 1000),
    });
  } finally {
    rig.writes.uninstall();
    await rig.stack.stop();
    rmSync(secretsDir, { recursive: true, force: true });
  }
}

function resultOf(
  rig: ScaleRig,
  plan: ScalePlan,
  times: SendTimes,
  partitions: Awaited<ReturnType<typeof readPartitions>>,
  machine: Pick<ScaleResult, 'loadAverage' | 'processCpuSeconds' | 'runSeconds'>,
): ScaleResult {
  const { samples, beforeAnswer } = rig.clock.samples();
  const heavyDoneAt = Math.max(...samples.filter((s) => s.tenantId === plan.heavyTenant).map((s) => s.ackAt));
  const lastAckAt = Math.max(...samples.map((s) => s.ackAt));
  const whileBacklog = samples.filter((s) => s.tenantId !== plan.heavyTenant && s.answeredAt <= heavyDoneAt).map((s) => s.latencyMs);
  const registryUnits = rig.capacity.byOperation.get('registerTenantDay')?.writeUnits ?? 0;
  const seconds = (from: number, to: number) => round((to - from) / 1000);
  return {
    webhooks: plan.webhooks,
    tenants: plan.tenants,
    heavyTenant: plan.heavyTenant,
    heavyWebhooks: splitTraffic(plan.webhooks, plan.tenants, plan.heavyShare).heavy,
    consumers: rig.consumers,
    trafficSeconds: seconds(times.startedAt, lastAckAt),
    heavySendSeconds: seconds(times.startedAt, times.heavySentAt),
    othersSendSeconds: seconds(times.startedAt, times.othersSentAt),
    latency: { ...latencyByClass(samples, plan.heavyTenant), othersWhileHeavyBacklog: latencySummary(whileBacklog) },
    acknowledgedBeforeAnswer: beforeAnswer,
    writeUnitsPerWebhook: round(rig.capacity.writeUnits / plan.webhooks),
    registryWriteUnitsPerWebhook: round(registryUnits / plan.webhooks),
    windowIndex: { items: partitionSpread(partitions.index), writes: partitionSpread(rig.writes.index) },
    tenantDayRegistry: {
      items: partitionSpread(partitions.registry),
      writes: partitionSpread(rig.writes.registry),
      indexPartitions: partitionSpread(partitions.registryIndex),
    },
    fairSends: { ...rig.fairSends },
    ...machine,
  };
}

// --- report --------------------------------------------------------------------------------------

/** What the local emulators show of fair queueing, and what they do not. */
const EMULATOR_NOTE =
  "fauxqs takes a MessageGroupId on a standard queue but neither stores nor uses it: every consumer queue here is first in, first out across tenants, so these latencies show the backlog one tenant puts in front of the others without fair queues. On AWS, an SQS fair queue would let the other tenants' messages past the heavy tenant's backlog in each consumer queue; the stream and the fan-out ahead of the queues are shared by every tenant either way.";

const pct = (share: number) => `${(100 * share).toFixed(share < 0.01 ? 2 : 1)}%`;

export function printScale(r: ScaleResult): void {
  const { heavy, others, othersWhileHeavyBacklog } = r.latency;
  const row = (label: string, l: LatencySummary) => [label, String(l.deliveries), fmt.ms(l.p50Ms), fmt.ms(l.p99Ms), fmt.ms(l.maxMs)];
  printTable(
    `9. Scale: ${r.webhooks} webhooks, ${r.tenants} tenants, ${r.heavyTenant} sending ${r.heavyWebhooks} in a burst; delivery latency (intake's 202 -> each consumer's acknowledgement)`,
    ['tenants', 'deliveries', 'p50', 'p99', 'max'],
    [
      row(`heavy (${r.heavyTenant})`, heavy),
      row(`the other ${r.tenants - 1}`, others),
      row('  the others, while the heavy backlog lasted', othersWhileHeavyBacklog),
    ],
  );
  const spread = (label: string, s: PartitionSpread, of: string) => [
    label,
    of,
    String(s.partitions),
    String(s.total),
    s.largest,
    pct(s.largestShare),
    pct(1 / Math.max(1, s.partitions)),
  ];
  printTable(
    "9b. Partition spread after the run (largest partition key's share)",
    ['', 'of', 'partitions', 'total', 'largest', 'share', 'even share'],
    [
      spread('window index (GSI wpk)', r.windowIndex.items, 'items'),
      spread('', r.windowIndex.writes, 'writes'),
      spread('tenant-day registry (table pk)', r.tenantDayRegistry.items, 'items'),
      spread('', r.tenantDayRegistry.writes, 'writes'),
      spread('  its entries in the window index', r.tenantDayRegistry.indexPartitions, 'items'),
    ],
  );
  printNotes([
    `${fmt.n(r.webhooks / r.trafficSeconds, 1)} webhooks/s sustained: first send to last acknowledgement ${r.trafficSeconds} s; the heavy burst sent in ${r.heavySendSeconds} s, the others' in ${r.othersSendSeconds} s`,
    `write units per webhook ${fmt.n(r.writeUnitsPerWebhook)} (tenant-day registry ${fmt.n(r.registryWriteUnitsPerWebhook)} of them: once per tenant per day per intake environment)`,
    `sends to consumer queues carrying their tenant as MessageGroupId: ${r.fairSends.groupedByTenant} of ${r.fairSends.sent}`,
    EMULATOR_NOTE,
    `run ${r.runSeconds} s; this process ${r.processCpuSeconds} CPU-s (DynamoDB Local apart); load average ${r.loadAverage.before[0]} before, ${r.loadAverage.after[0]} after (${os.cpus().length} cores)`,
    ...(r.acknowledgedBeforeAnswer > 0
      ? [`${r.acknowledgedBeforeAnswer} acknowledgements came before their 202 was read (counted as 0 ms)`]
      : []),
  ]);
}

/** `scale` in bench/results.json. */
export function scaleJson(r: ScaleResult) {
  return {
    date: new Date().toISOString(),
    cores: os.cpus().length,
    ...r,
    sustainedWebhooksPerSecond: round(r.webhooks / r.trafficSeconds),
    // What bounds the rate on an idle machine: the functions, queues and senders share this one process.
    processCpuMsPerWebhook: round((1000 * r.processCpuSeconds) / r.webhooks),
    windowIndex: { items: shareJson(r.windowIndex.items), writes: shareJson(r.windowIndex.writes) },
    tenantDayRegistry: {
      items: shareJson(r.tenantDayRegistry.items),
      writes: shareJson(r.tenantDayRegistry.writes),
      indexPartitions: shareJson(r.tenantDayRegistry.indexPartitions),
    },
    plan: {
      heavyConnections: SCALE_PLAN.heavyConnections,
      othersSeconds: SCALE_PLAN.othersSeconds,
      othersInFlight: SCALE_PLAN.othersInFlight,
      payloadBytes: TARGET_BYTES,
    },
    emulator: EMULATOR_NOTE,
  };
}

const shareJson = (s: PartitionSpread) => ({ ...s, largestShare: Number(s.largestShare.toFixed(4)) });

/** Section 9 as bench/run.ts and `npx tsx bench/scale.ts` run it: measure, print, merge `scale` into bench/results.json. */
export async function scaleSection(): Promise<ScaleResult> {
  const result = await measureScale();
  printScale(result);
  mergeResults({ scale: scaleJson(result) });
  console.log('merged scale into bench/results.json');
  return result;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  runToExit(scaleSection);
}
