/**
 * Section 2c: the cost model's batching (ops/batching.ts, what `hookledger cost` prices SQS and Lambda
 * with) against measured runs. The shipped configuration on its own local stack, webhooks sent
 * independently of each other at a mean rate (5/s, 50/s), and as fast as this machine takes them, each run a few
 * seconds to a minute: SQS requests and Lambda invocations per webhook measured (bench/meters.ts's
 * SQS meter; the handlers the pollers call, wrapped and timed) beside the model's estimate at the
 * measured rate, with the local pollers' timings (LOCAL_POLLERS), the fan-out's measured time per
 * batch, a consumer's and a GetRecords' (sampled beside the fan-out's reads) in place of Lambda's.
 * Within 10% per service is the goal.
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
import { subscribedConsumers } from '../core/config/routing';
import { defineConfig, type HookledgerConfig } from '../core/config/schema';
import { FANOUT_EVENT_SOURCE } from '../core/queues';
import baseConfig from '../hookledger.config';
import type { FanoutHandler } from '../lambdas/fanout/app';
import type { ConsumerLambdaHandler } from '../lambdas/runtime/runtime';
import { type LocalStack, startLocalStack } from '../local/stack';
import { createLocalStreamsApi } from '../local/streams/dynamodb-streams';
import { type BatchingEstimate, type BatchingShape, estimateBatching, type PollerTimings } from '../ops/batching';
import { BenchRunError } from './errors';
import { DeliveryTracker, LogMeter, SqsMeter } from './meters';
import { type SignedRequest, signedPayments } from './payload';
import { fmt, mergeResults, printNotes, printTable } from './report';
import { round } from './stats';
import { SOURCE } from './units';

/** The three runs: a rate and how long to send at it; `most` sends with a fixed number of requests in flight. */
export const COST_CHECK_PLAN = {
  runs: [
    { label: '5/s', rate: 5, seconds: 12 },
    { label: '50/s', rate: 50, seconds: 8 },
    { label: 'most', rate: Number.POSITIVE_INFINITY, seconds: 0, webhooks: 400, inFlight: 8 },
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
 * consumers' times per batch and a GetRecords' are measured in each run.
 */
export const LOCAL_POLLERS = {
  streamPauseMs: 0,
  streamIdlePauseMs: 50,
  longPollSeconds: 1,
  queuePollers: 4,
} as const satisfies Omit<PollerTimings, 'fanoutMs' | 'streamReadMs' | 'consumerMs'>;

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
  /** Arrivals per second at intake, as sent: what the model is run at. */
  readonly ratePerSecond: number;
  /** The fan-out's mean time per batch in this run, the model's stand-in for Lambda's. */
  readonly fanoutMsPerBatch: number;
  /** One GetRecords on the EventStore's stream in this run, mean of the samples. */
  readonly streamReadMs: number;
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
  consumers = 0;
  consumerRecords = 0;
  consumerMs = 0;

  reset(): void {
    this.fanout = 0;
    this.fanoutRecords = 0;
    this.fanoutMs = 0;
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
        this.fanout += 1;
        this.fanoutRecords += event.Records.length;
        this.fanoutMs += performance.now() - t0;
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
  readonly deliveries: DeliveryTracker;
}

/** Times GetRecords on the EventStore's stream while a run goes on: what one of the fan-out's polls takes. */
class ReadSampler {
  private readonly samples: number[] = [];
  private running = false;
  private loop: Promise<void> | undefined;

  constructor(private readonly stack: LocalStack) {}

  start(): void {
    this.samples.length = 0;
    this.running = true;
    this.loop = this.sample();
  }

  /** Stops sampling; the mean time of a GetRecords, ms. */
  async stop(): Promise<number> {
    this.running = false;
    await this.loop;
    return this.samples.reduce((s, v) => s + v, 0) / Math.max(1, this.samples.length);
  }

  private async sample(): Promise<void> {
    const api = createLocalStreamsApi({ endpoint: this.stack.endpoints.dynamodb });
    const arn = (await api.listStreams({ TableName: this.stack.resources.tables.events })).Streams?.[0]?.StreamArn;
    const shards = arn ? ((await api.describeStream({ StreamArn: arn })).StreamDescription.Shards ?? []) : [];
    const shard = shards[shards.length - 1];
    if (!arn || !shard) throw new BenchRunError('the EventStore has no stream shard to time GetRecords on');
    let iterator = (await api.getShardIterator({ StreamArn: arn, ShardId: shard.ShardId, ShardIteratorType: 'LATEST' })).ShardIterator;
    while (this.running && iterator) {
      const t0 = performance.now();
      const page = await api.getRecords({ ShardIterator: iterator, Limit: 1000 });
      this.samples.push(performance.now() - t0);
      iterator = page.NextShardIterator;
      await new Promise((resolve) => setTimeout(resolve, READ_SAMPLE_MS));
    }
  }
}

/** Between two timed GetRecords. */
const READ_SAMPLE_MS = 200;

/** The three runs on one stack of the shipped configuration, each against the model. */
export async function measureCostModel(): Promise<CostModelCheck> {
  const secretsDir = mkdtempSync(path.join(os.tmpdir(), 'hookledger-bench-cost-check-'));
  const logs = new LogMeter();
  logs.install();
  const sqs = new SqsMeter();
  sqs.install();
  const deliveries = new DeliveryTracker();
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
      deliveries,
    };
    await sendPaced(on, 'warm', COST_CHECK_PLAN.warmUp, 50);
    const rows: CostCheckRow[] = [];
    for (const run of COST_CHECK_PLAN.runs) rows.push(await checkRun(on, run));
    return { pollers: LOCAL_POLLERS, rows, within10Percent: rows.every((r) => r.within10Percent) };
  } finally {
    await stack.stop();
    logs.uninstall();
    rmSync(secretsDir, { recursive: true, force: true });
  }
}

type Run = (typeof COST_CHECK_PLAN.runs)[number];

/** The arrival times' seed. */
const ARRIVAL_SEED = 42;

/** From a webhook's send to its last consumer's acknowledgement, at most (a shared, loaded machine is slow). */
const ACK_TIMEOUT_MS = 180_000;

/** One run: send, wait for every delivery, count; then the model at the measured rate. */
async function checkRun(on: CheckStack, run: Run): Promise<CostCheckRow> {
  await on.stack.drain();
  on.sqs.reset();
  on.handlers.reset();
  const reads = new ReadSampler(on.stack);
  reads.start();
  const sent =
    'inFlight' in run
      ? await sendFlat(on, run.label, run.webhooks, run.inFlight)
      : await sendPaced(on, run.label, Math.round(run.rate * run.seconds), run.rate);
  const streamReadMs = await reads.stop();
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
  const consumerMs = h.consumerMs / Math.max(1, h.consumers);
  const e = estimateBatching(localShape(on.config), { ...LOCAL_POLLERS, fanoutMs, streamReadMs, consumerMs }, sent.rate);
  const estimated = perServiceOf(e);
  const ratio = { sqs: estimated.sqsRequests / measured.sqsRequests, lambda: estimated.lambdaInvocations / measured.lambdaInvocations };
  const within = (r: number) => Math.abs(r - 1) <= COST_CHECK_PLAN.tolerance;
  return {
    label: run.label,
    webhooks: n,
    seconds: sent.seconds,
    ratePerSecond: sent.rate,
    fanoutMsPerBatch: fanoutMs,
    streamReadMs,
    consumerMsPerBatch: consumerMs,
    measured,
    estimated,
    ratio,
    within10Percent: within(ratio.sqs) && within(ratio.lambda),
    emptyReceives: on.sqs.emptyReceives,
  };
}

/** The shipped event sources as the local stack runs them: one shard, no parallelization factor, no windows. */
function localShape(config: HookledgerConfig): BatchingShape {
  return {
    stream: { batchSize: FANOUT_EVENT_SOURCE.batchSize, windowSeconds: 0, parallelizationFactor: 1, shards: 1 },
    queues: subscribedConsumers(config, 'payment.succeeded').map((id) => {
      const c = config.consumers.find((x) => x.id === id)!;
      return { id, batchSize: c.batchSize, windowSeconds: 0, maxConcurrency: c.maxConcurrency };
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
  /** Webhooks per second between the first send and the last 202. */
  readonly rate: number;
}

/**
 * One webhook, answered 202. A connection the gateway closed as the request went out (a kept-alive
 * socket timing out on a loaded machine) is sent again once; a 200 then is the same webhook recorded.
 */
async function post(stack: LocalStack, request: SignedRequest): Promise<void> {
  const send = () => fetch(stack.webhookUrl(SOURCE), { method: 'POST', headers: request.headers, body: request.body });
  const res = await send().catch(() => send());
  const text = await res.text();
  if (res.status !== 202 && res.status !== 200) throw new BenchRunError(`webhook ${request.eventId} answered ${res.status}: ${text}`);
}

/** A seeded uniform generator in [0, 1) (mulberry32): the same arrival times on every run. */
function uniform(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * `count` webhooks at a mean `rate`, each independent of the others (exponential gaps, seeded), as
 * webhooks from many tenants arrive and as the model assumes; resolves once every consumer
 * acknowledged each.
 */
async function sendPaced(on: CheckStack, runId: string, count: number, rate: number): Promise<Sent> {
  const requests = signedPayments(on.secret, `cost-${runId}-${Date.now().toString(36)}`, count);
  const acked: Promise<number>[] = [];
  const t0 = performance.now();
  const posts: Promise<void>[] = [];
  const next = uniform(ARRIVAL_SEED);
  let dueMs = 0;
  for (const request of requests) {
    dueMs += (-Math.log(1 - next()) * 1000) / rate;
    const due = t0 + dueMs;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    acked.push(on.deliveries.allProcessed(request.eventId, on.consumers, ACK_TIMEOUT_MS));
    posts.push(post(on.stack, request));
  }
  await Promise.all(posts);
  const seconds = (performance.now() - t0) / 1000;
  await Promise.all(acked);
  // The last send's own interval counts: count arrivals over count intervals.
  return { webhooks: count, seconds, rate: count / Math.max(seconds, count / rate) };
}

/** `count` webhooks with `inFlight` requests open at a time: as fast as the machine takes them. */
async function sendFlat(on: CheckStack, runId: string, count: number, inFlight: number): Promise<Sent> {
  const requests = signedPayments(on.secret, `cost-${runId}-${Date.now().toString(36)}`, count);
  const acked: Promise<number>[] = [];
  const t0 = performance.now();
  let next = 0;
  const lane = async () => {
    while (next < requests.length) {
      const request = requests[next++]!;
      acked.push(on.deliveries.allProcessed(request.eventId, on.consumers, ACK_TIMEOUT_MS));
      await post(on.stack, request);
    }
  };
  await Promise.all(Array.from({ length: inFlight }, lane));
  const seconds = (performance.now() - t0) / 1000;
  await Promise.all(acked);
  return { webhooks: count, seconds, rate: count / seconds };
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
      'GetRecords',
      'within 10%',
    ],
    check.rows.map((r) => [
      r.label,
      fmt.n(r.ratePerSecond, 1),
      `${fmt.n(r.estimated.sqsRequests)} / ${fmt.n(r.measured.sqsRequests)} (x${r.ratio.sqs.toFixed(2)})`,
      `${fmt.n(r.estimated.lambdaInvocations)} / ${fmt.n(r.measured.lambdaInvocations)} (x${r.ratio.lambda.toFixed(2)})`,
      `${fmt.n(r.estimated.fanoutRecordsPerInvocation, 1)} / ${fmt.n(r.measured.fanoutRecordsPerInvocation, 1)}`,
      `${fmt.n(r.estimated.consumerRecordsPerInvocation, 1)} / ${fmt.n(r.measured.consumerRecordsPerInvocation, 1)}`,
      fmt.ms(r.fanoutMsPerBatch),
      fmt.ms(r.consumerMsPerBatch),
      fmt.ms(r.streamReadMs),
      r.within10Percent ? 'yes' : 'NO',
    ]),
  );
  printNotes([
    `the model run at each run's measured rate with the local pollers (stream read again at once after a batch, one shard, no parallelization factor; ${check.pollers.queuePollers} long-polling workers per queue) and the fan-out's, the consumers' and a GetRecords' measured times; \`hookledger cost\` runs the same model with Lambda's (4 polls a second per shard, ${FANOUT_EVENT_SOURCE.parallelizationFactor} batches per shard, 5 pollers per queue, 20 s long polls)`,
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
      streamReadMs: round(r.streamReadMs),
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
  costModelSection().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
