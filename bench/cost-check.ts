/**
 * Section 2c: the cost model's batching (ops/batching.ts, what `hookledger cost` prices SQS and Lambda
 * with) against measured runs. The shipped configuration on its own local stack, webhooks sent
 * independently of each other at a mean rate (5/s, 50/s), and as fast as this machine takes them, each run a few
 * seconds to a minute: SQS requests and Lambda invocations per webhook measured (bench/meters.ts's
 * SQS meter; the handlers the pollers call, wrapped and timed) beside the model's estimate at the
 * measured rate, with the local pollers' timings (LOCAL_POLLERS) and, measured in the run, in place
 * of Lambda's: the fan-out's time per batch (mean and spread), a consumer's, and the stream poller's
 * own GetRecords, those that returned records apart from those that found none (a read carries its
 * records back after DynamoDB took it, so the one after a batch is the slower). Within 10% per
 * service is the goal.
 *
 * Empty receives are left out of both sides: the emulator wakes every waiting long poll on each send,
 * and all but one return empty, which says nothing of Lambda's pollers (ops/batching.ts models theirs).
 *
 * `npx tsx bench/cost-check.ts` runs it alone; alone or after the whole bench (bench/run.ts), it
 * prints it and merges it into bench/results.json as `costModelCheck`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import { subscribedConsumers } from '../core/config/routing';
import { defineConfig, type HookledgerConfig } from '../core/config/schema';
import { FANOUT_EVENT_SOURCE } from '../core/queues';
import baseConfig from '../hookledger.config';
import type { FanoutHandler } from '../lambdas/fanout/app';
import type { ConsumerLambdaHandler } from '../lambdas/runtime/runtime';
import { type LocalStack, startLocalStack } from '../local/stack';
import { type BatchingEstimate, type BatchingShape, estimateBatching, type PollerTimings } from '../ops/batching';
import { runToExit } from './errors';
import { DeliveryTracker, LogMeter, SqsMeter } from './meters';
import { ACK_TIMEOUT_MS, Answers, ARRIVAL_SEED, postSigned, sendPaced as sendPacedRequests } from './paced';
import { signedPayments } from './payload';
import { fmt, mergeResults, printNotes, printTable } from './report';
import { round, seededUniform } from './stats';
import { SOURCE } from './units';

/**
 * The three runs: a rate and how long to send at it; `most` as fast as the machine takes them, from
 * `senders` senders that each send their next webhook a pause after the last one's 202 (exponential,
 * mean `pauseMs`): independent arrivals, as in the paced runs and the model, up to senders / pause
 * (80/s), fewer as the machine slows every sender down. (Senders sending back to back instead pace
 * the arrivals to the machine: a poll then finds about one webhook per sender, whatever its cycle.)
 */
export const COST_CHECK_PLAN = {
  runs: [
    { label: '5/s', rate: 5, seconds: 24 },
    { label: '50/s', rate: 50, seconds: 16 },
    { label: 'most', rate: Number.POSITIVE_INFINITY, seconds: 0, webhooks: 800, senders: 32, pauseMs: 400 },
  ],
  /** Sent first and not counted: the stack's first requests are slow (cold JIT, cold DynamoDB Local). */
  warmUp: 30,
  /** Estimated vs measured, per service. */
  tolerance: 0.1,
} as const;

/**
 * The local stack's pollers (local/stack.ts, local/sqs-poller.ts, local/pipeline/sources.ts): the
 * stream read again at once after a batch and 50 ms after a read that found nothing; one shard, no
 * parallelization factor; 1 s long polls, at most 4 workers per queue. The fan-out's and the
 * consumers' times per batch and the poller's GetRecords are measured in each run.
 */
export const LOCAL_POLLERS = {
  streamPauseMs: 0,
  streamIdlePauseMs: 50,
  longPollSeconds: 1,
  queuePollers: 4,
} as const satisfies Omit<PollerTimings, 'fanoutMs' | 'fanoutSdMs' | 'streamReadMs' | 'streamEmptyReadMs' | 'consumerMs'>;

interface PerService {
  readonly sqsRequests: number;
  readonly lambdaInvocations: number;
  readonly fanoutRecordsPerInvocation: number;
  readonly consumerRecordsPerInvocation: number;
}

export interface CostCheckRow {
  readonly label: string;
  readonly webhooks: number;
  readonly seconds: number;
  /** Arrivals per second at the stream, as intake answered them: what the model is run at. */
  readonly ratePerSecond: number;
  /** The fan-out's mean time per batch in this run, the model's stand-in for Lambda's. */
  readonly fanoutMsPerBatch: number;
  /** Its standard deviation from batch to batch. */
  readonly fanoutSdMs: number;
  /** The stream poller's GetRecords in this run that returned records, mean. */
  readonly streamReadMs: number;
  /** Its GetRecords that found nothing, mean (the other's when none did). */
  readonly streamEmptyReadMs: number;
  /** A consumer's mean time per batch in this run. */
  readonly consumerMsPerBatch: number;
  readonly measured: PerService;
  readonly estimated: PerService;
  /** Estimated / measured. */
  readonly ratio: { readonly sqs: number; readonly lambda: number };
  readonly within10Percent: boolean;
  /** Not per webhook, not compared (see the module's note). */
  readonly emptyReceives: number;
}

export interface CostModelCheck {
  readonly pollers: typeof LOCAL_POLLERS;
  readonly rows: readonly CostCheckRow[];
  readonly within10Percent: boolean;
}

/** What the wrapped handlers counted. */
class HandlerMeter {
  fanout = 0;
  fanoutRecords = 0;
  fanoutMs = 0;
  /** Sum of the squares of the fan-out's times, for their spread. */
  fanoutMsSquared = 0;
  consumers = 0;
  consumerRecords = 0;
  consumerMs = 0;

  reset(): void {
    this.fanout = 0;
    this.fanoutRecords = 0;
    this.fanoutMs = 0;
    this.fanoutMsSquared = 0;
    this.consumers = 0;
    this.consumerRecords = 0;
    this.consumerMs = 0;
  }

  /** Wraps the stack's fan-out and consumer handlers (the pollers look them up on every call). */
  install(stack: LocalStack): void {
    const handlers = stack.handlers as unknown as { fanout: FanoutHandler; consumers: Record<string, ConsumerLambdaHandler> };
    const fanout = handlers.fanout;
    handlers.fanout = async (event) => {
      const t0 = performance.now();
      try {
        return await fanout(event);
      } finally {
        const ms = performance.now() - t0;
        this.fanout += 1;
        this.fanoutRecords += event.Records.length;
        this.fanoutMs += ms;
        this.fanoutMsSquared += ms * ms;
      }
    };
    for (const [id, handler] of Object.entries(handlers.consumers)) {
      handlers.consumers[id] = async (event, context) => {
        const t0 = performance.now();
        try {
          return await handler(event, context);
        } finally {
          this.consumers += 1;
          this.consumerRecords += event.Records.length;
          this.consumerMs += performance.now() - t0;
        }
      };
    }
  }
}

interface CheckStack {
  readonly stack: LocalStack;
  readonly config: HookledgerConfig;
  readonly secret: string;
  readonly consumers: number;
  readonly sqs: SqsMeter;
  readonly handlers: HandlerMeter;
  readonly reads: StreamReadMeter;
  readonly deliveries: DeliveryTracker;
}

/** The stream poller's own GetRecords, timed: what the fan-out's polls take, split by what they found. */
class StreamReadMeter {
  private reads = { withRecords: 0, withRecordsMs: 0, empty: 0, emptyMs: 0 };
  private original: DynamoDBStreamsClient['send'] | undefined;

  /** Wraps DynamoDBStreamsClient.prototype.send; the stream poller is the one client in this process that reads. */
  install(): void {
    const original = DynamoDBStreamsClient.prototype.send as (
      this: DynamoDBStreamsClient,
      command: unknown,
      ...rest: unknown[]
    ) => Promise<unknown>;
    this.original = DynamoDBStreamsClient.prototype.send;
    const meter = this;
    (DynamoDBStreamsClient.prototype as unknown as { send: typeof original }).send = function (
      this: DynamoDBStreamsClient,
      command: unknown,
      ...rest: unknown[]
    ) {
      const t0 = performance.now();
      const result = original.call(this, command, ...rest);
      if (
        (command as object).constructor.name !== 'GetRecordsCommand' ||
        typeof (result as Promise<unknown> | undefined)?.then !== 'function'
      ) {
        return result;
      }
      return result.then((out) => {
        meter.count((out as { Records?: unknown[] }).Records?.length ?? 0, performance.now() - t0);
        return out;
      });
    };
  }

  uninstall(): void {
    if (this.original) DynamoDBStreamsClient.prototype.send = this.original;
    this.original = undefined;
  }

  reset(): void {
    this.reads = { withRecords: 0, withRecordsMs: 0, empty: 0, emptyMs: 0 };
  }

  /** Mean ms of the reads that returned records, and of those that found none (the first's when none did). */
  means(): { readonly withRecordsMs: number; readonly emptyMs: number } {
    const r = this.reads;
    const withRecordsMs = r.withRecordsMs / Math.max(1, r.withRecords);
    return { withRecordsMs, emptyMs: r.empty > 0 ? r.emptyMs / r.empty : withRecordsMs };
  }

  private count(records: number, ms: number): void {
    if (records > 0) {
      this.reads.withRecords += 1;
      this.reads.withRecordsMs += ms;
    } else {
      this.reads.empty += 1;
      this.reads.emptyMs += ms;
    }
  }
}

/** The three runs on one stack of the shipped configuration, each against the model. */
export async function measureCostModel(): Promise<CostModelCheck> {
  const secretsDir = mkdtempSync(path.join(os.tmpdir(), 'hookledger-bench-cost-check-'));
  const logs = new LogMeter();
  logs.install();
  const sqs = new SqsMeter();
  sqs.install();
  const deliveries = new DeliveryTracker();
  const reads = new StreamReadMeter();
  reads.install();
  const stack = await startLocalStack({
    config: defineConfig(baseConfig),
    dataDir: null,
    httpPort: 0,
    secretsFile: path.join(secretsDir, 'secrets.json'),
    // Silent: the handlers' lines are not what this section measures.
    logger: logs.logger,
    ttlSweepIntervalMs: null,
    onDelivery: deliveries.onDelivery,
  });
  try {
    const handlers = new HandlerMeter();
    handlers.install(stack);
    const on: CheckStack = {
      stack,
      config: stack.config,
      secret: (await stack.secrets.get(SOURCE)).current,
      consumers: subscribedConsumers(stack.config, 'payment.succeeded').length,
      sqs,
      handlers,
      reads,
      deliveries,
    };
    await sendPaced(on, 'warm', COST_CHECK_PLAN.warmUp, 50);
    const rows: CostCheckRow[] = [];
    for (const run of COST_CHECK_PLAN.runs) rows.push(await checkRun(on, run));
    return { pollers: LOCAL_POLLERS, rows, within10Percent: rows.every((r) => r.within10Percent) };
  } finally {
    await stack.stop();
    reads.uninstall();
    logs.uninstall();
    rmSync(secretsDir, { recursive: true, force: true });
  }
}

type Run = (typeof COST_CHECK_PLAN.runs)[number];

/** One run: send, wait for every delivery, count; then the model at the measured rate. */
async function checkRun(on: CheckStack, run: Run): Promise<CostCheckRow> {
  await on.stack.drain();
  on.sqs.reset();
  on.handlers.reset();
  on.reads.reset();
  const sent =
    'senders' in run
      ? await sendMost(on, run.label, run.webhooks, run)
      : await sendPaced(on, run.label, Math.round(run.rate * run.seconds), run.rate);
  // The reads while webhooks arrive and are delivered; the drain's idle polls after them are not the run's.
  const read = on.reads.means();
  await on.stack.drain();
  const n = sent.webhooks;
  const h = on.handlers;
  const measured: PerService = {
    sqsRequests: on.sqs.billedRequests() / n,
    lambdaInvocations: 1 + (h.fanout + h.consumers) / n,
    fanoutRecordsPerInvocation: h.fanoutRecords / Math.max(1, h.fanout),
    consumerRecordsPerInvocation: h.consumerRecords / Math.max(1, h.consumers),
  };
  const fanoutMs = h.fanoutMs / Math.max(1, h.fanout);
  const fanoutSdMs = Math.sqrt(Math.max(0, h.fanoutMsSquared / Math.max(1, h.fanout) - fanoutMs * fanoutMs));
  const consumerMs = h.consumerMs / Math.max(1, h.consumers);
  const timings: PollerTimings = {
    ...LOCAL_POLLERS,
    fanoutMs,
    fanoutSdMs,
    streamReadMs: read.withRecordsMs,
    streamEmptyReadMs: read.emptyMs,
    consumerMs,
  };
  const e = estimateBatching(localShape(on.config), timings, sent.rate);
  const estimated = perServiceOf(e);
  const ratio = { sqs: estimated.sqsRequests / measured.sqsRequests, lambda: estimated.lambdaInvocations / measured.lambdaInvocations };
  const within = (r: number) => Math.abs(r - 1) <= COST_CHECK_PLAN.tolerance;
  return {
    label: run.label,
    webhooks: n,
    seconds: sent.seconds,
    ratePerSecond: sent.rate,
    fanoutMsPerBatch: fanoutMs,
    fanoutSdMs,
    streamReadMs: read.withRecordsMs,
    streamEmptyReadMs: read.emptyMs,
    consumerMsPerBatch: consumerMs,
    measured,
    estimated,
    ratio,
    within10Percent: within(ratio.sqs) && within(ratio.lambda),
    emptyReceives: on.sqs.emptyReceives,
  };
}

/** The event sources as the local stack runs them: one shard, no parallelization factor, the configured windows. */
function localShape(config: HookledgerConfig): BatchingShape {
  return {
    stream: {
      batchSize: FANOUT_EVENT_SOURCE.batchSize,
      windowSeconds: config.fanout.batchingWindowSeconds,
      parallelizationFactor: 1,
      shards: 1,
    },
    queues: subscribedConsumers(config, 'payment.succeeded').map((id) => {
      const c = config.consumers.find((x) => x.id === id)!;
      return { id, batchSize: c.batchSize, windowSeconds: c.batchingWindowSeconds, maxConcurrency: c.maxConcurrency };
    }),
  };
}

function perServiceOf(e: BatchingEstimate): PerService {
  const q = e.queues;
  return {
    sqsRequests: e.sqsRequests,
    lambdaInvocations: e.invocations.ingest + e.invocations.fanout + e.invocations.consumers,
    fanoutRecordsPerInvocation: e.fanout.recordsPerInvocation,
    consumerRecordsPerInvocation: q.reduce((s, x) => s + x.messagesPerReceive, 0) / Math.max(1, q.length),
  };
}

interface Sent {
  readonly webhooks: number;
  readonly seconds: number;
  /** Webhooks per second as they reached the stream (intake's answers). */
  readonly rate: number;
}

/** `count` webhooks at a mean `rate`, each independent of the others (bench/paced.ts); resolves once every consumer acknowledged each. */
async function sendPaced(on: CheckStack, runId: string, count: number, rate: number): Promise<Sent> {
  const requests = signedPayments(on.secret, `cost-${runId}-${Date.now().toString(36)}`, count);
  const run = await sendPacedRequests(on.stack, on.deliveries, on.consumers, requests, rate);
  return { webhooks: run.webhooks, seconds: run.seconds, rate: run.rate };
}

/**
 * `count` webhooks from `senders` senders, each sending its next one an exponential pause (mean
 * `pauseMs`, seeded) after its last one's 202, its first one such a pause after the start: as fast as
 * the machine takes them, each arrival independent of the others.
 */
async function sendMost(on: CheckStack, runId: string, count: number, plan: { senders: number; pauseMs: number }): Promise<Sent> {
  const requests = signedPayments(on.secret, `cost-${runId}-${Date.now().toString(36)}`, count);
  const acked: Promise<number>[] = [];
  const t0 = performance.now();
  const draw = seededUniform(ARRIVAL_SEED);
  const answers = new Answers();
  let next = 0;
  const sender = async () => {
    for (;;) {
      await new Promise((resolve) => setTimeout(resolve, -Math.log(1 - draw()) * plan.pauseMs));
      const request = requests[next++];
      if (!request) return;
      acked.push(on.deliveries.allProcessed(request.eventId, on.consumers, ACK_TIMEOUT_MS));
      await postSigned(on.stack, request, answers);
    }
  };
  await Promise.all(Array.from({ length: plan.senders }, sender));
  const seconds = (performance.now() - t0) / 1000;
  await Promise.all(acked);
  return { webhooks: count, seconds, rate: answers.rate() };
}

/** Section 2c. */
export function printCostModelCheck(check: CostModelCheck): void {
  printTable(
    "2c. The cost model's batching (ops/batching.ts) against measured runs: per webhook, estimated / measured",
    [
      'run',
      'webhooks/s',
      'SQS requests',
      'Lambda invocations',
      'fan-out fill',
      'consumer fill',
      'fan-out ms/batch',
      'consumer ms/batch',
      'GetRecords (records / none)',
      'within 10%',
    ],
    check.rows.map((r) => [
      r.label,
      fmt.n(r.ratePerSecond, 1),
      `${fmt.n(r.estimated.sqsRequests)} / ${fmt.n(r.measured.sqsRequests)} (x${r.ratio.sqs.toFixed(2)})`,
      `${fmt.n(r.estimated.lambdaInvocations)} / ${fmt.n(r.measured.lambdaInvocations)} (x${r.ratio.lambda.toFixed(2)})`,
      `${fmt.n(r.estimated.fanoutRecordsPerInvocation, 1)} / ${fmt.n(r.measured.fanoutRecordsPerInvocation, 1)}`,
      `${fmt.n(r.estimated.consumerRecordsPerInvocation, 1)} / ${fmt.n(r.measured.consumerRecordsPerInvocation, 1)}`,
      `${fmt.ms(r.fanoutMsPerBatch)} ± ${fmt.ms(r.fanoutSdMs)}`,
      fmt.ms(r.consumerMsPerBatch),
      `${fmt.ms(r.streamReadMs)} / ${fmt.ms(r.streamEmptyReadMs)}`,
      r.within10Percent ? 'yes' : 'NO',
    ]),
  );
  printNotes([
    `the model run at each run's measured rate with the local pollers (stream read again at once after a batch, ${check.pollers.streamIdlePauseMs} ms after an empty read, one shard, no parallelization factor; ${check.pollers.queuePollers} long-polling workers per queue) and the times measured in the run: the fan-out's per batch (mean ± standard deviation), the consumers', and the stream poller's own GetRecords that returned records (after them, a batch) and that found none (after them, the pause); \`hookledger cost\` runs the same model with Lambda's (4 polls a second per shard, ${FANOUT_EVENT_SOURCE.parallelizationFactor} batches per shard, 5 pollers per queue, 20 s long polls)`,
    'empty receives are in neither column: the emulator returns every waiting long poll but one empty on each send, unlike SQS (their cost on AWS: ops/batching.ts)',
  ]);
}

/** `costModelCheck` in bench/results.json. */
export function costModelCheckJson(check: CostModelCheck) {
  const each = (s: PerService) => Object.fromEntries(Object.entries(s).map(([k, v]) => [k, round(v)]));
  return {
    pollers: check.pollers,
    tolerance: COST_CHECK_PLAN.tolerance,
    rows: check.rows.map((r) => ({
      label: r.label,
      // The rate asked for (null: as fast as the machine takes them); the model runs at ratePerSecond, the rate measured.
      targetRatePerSecond: COST_CHECK_PLAN.runs.find((run) => run.label === r.label)?.rate ?? null,
      webhooks: r.webhooks,
      seconds: round(r.seconds),
      ratePerSecond: round(r.ratePerSecond),
      fanoutMsPerBatch: round(r.fanoutMsPerBatch),
      fanoutSdMs: round(r.fanoutSdMs),
      streamReadMs: round(r.streamReadMs),
      streamEmptyReadMs: round(r.streamEmptyReadMs),
      consumerMsPerBatch: round(r.consumerMsPerBatch),
      estimated: each(r.estimated),
      measured: each(r.measured),
      ratio: { sqs: round(r.ratio.sqs), lambda: round(r.ratio.lambda) },
      within10Percent: r.within10Percent,
      emptyReceives: r.emptyReceives,
    })),
    within10Percent: check.within10Percent,
  };
}

/** Section 2c as bench/run.ts and `npx tsx bench/cost-check.ts` run it: measure, print, merge `costModelCheck` into bench/results.json. */
export async function costModelSection(): Promise<CostModelCheck> {
  console.log(
    `2c. the cost model's batching against measured runs: ${COST_CHECK_PLAN.runs.map((r) => r.label).join(', ')} on a stack of its own...`,
  );
  const check = await measureCostModel();
  printCostModelCheck(check);
  mergeResults({ costModelCheck: costModelCheckJson(check) });
  console.log('merged costModelCheck into bench/results.json');
  return check;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  runToExit(costModelSection);
}
