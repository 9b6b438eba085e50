/**
 * How full the pipeline's batches are at a steady rate, and what that makes SQS requests and Lambda
 * invocations per webhook: the part of the cost estimate (ops/cost-model.ts) that depends on traffic.
 * `hookledger cost` runs it with Lambda's pollers (AWS_POLLERS); the bench (bench/cost-check.ts) runs
 * it with the local stack's pollers and checks it against what it measures at three rates.
 *
 * The model, per webhook at R webhooks/s, arrivals independent of each other (Poisson):
 *  - the fan-out reads each stream shard (R / shards each) once per cycle, a parallelization factor
 *    p spreading what a poll finds over p batches (rate λ = R / shards / p each). A poll reads what
 *    arrived since the one before: after an empty poll, the pause between polls (or the batching
 *    window) plus a read that found nothing, c_idle; after a batch, the pause plus a read that
 *    returned records plus the handler's time on that batch, c_busy. (A read's records are the ones on
 *    the shard when DynamoDB takes it; carrying them back is time after that, so a read that returns
 *    a batch delays the next poll more than an empty one.) With a = 1 − e^(−λ c_idle) and
 *    b = 1 − P(a poll after a batch finds none) the chances that a poll after an empty one, or after
 *    a batch, finds records, batches are a share π = a / (1 − b + a) of the polls, and a batch holds
 *    k_f = λ ((1 − π) c_idle + π c_busy) / π records on average, at most batchSize: 1 when traffic is
 *    sparse, λ c_busy when it is dense (with c_idle = c_busy = c, this is x / (1 − e^−x) for x = λ c);
 *  - the handler's time varies from batch to batch (standard deviation s, fanoutSdMs): a poll after a
 *    long batch finds more, after a short one fewer. With the handler's time gamma-distributed (mean
 *    h_f, sd s) and the pause and the read fixed, what a poll after a batch finds is Poisson over the
 *    fixed part plus negative binomial over the handler's (Poisson over each time, mixed over the
 *    times: shape (h_f / s)², Poisson at s = 0): the mean is the same, but more polls find none and more
 *    find over 10. Lambda's side takes s = 0 (the price list gives one time per batch);
 *  - each invocation sends every subscribed queue its k_f messages in SendMessageBatch calls of at
 *    most 10 (SQS's limit): E[ceil(K / 10)] calls over the batch sizes K a poll finds (the empty ones
 *    left out), more than ceil(k_f / 10) when batches around 10 vary;
 *  - a consumer's pollers, long-polling, take each send as it lands, unless all of them are busy
 *    (each busy for its batch's time h) and messages wait for the next free one, or a batching window
 *    W gathers them: messages per receive k_c = min(batchSize, max(messages per send, R × h /
 *    pollers, R × W / pollers)); one ReceiveMessage and ceil(k_c / 10) DeleteMessageBatch per
 *    invocation;
 *  - empty receives: every poller's long poll that no message ends returns empty after the wait, so a
 *    queue's empty receives per second are max(0, pollers / wait − receives with messages per second),
 *    the idle cost of a queue spread over the webhooks.
 * Evenly spaced arrivals fill sparse batches less (max(1, x) instead of x / (1 − e^−x)): a sender
 * that paces its webhooks exactly gets up to 1.6 times these requests near x = 1, the same when dense.
 */

/** SQS takes at most 10 entries per SendMessageBatch and DeleteMessageBatch, and returns 10 per receive. */
export const SQS_BATCH_LIMIT = 10;

/** The event source mappings' timings: Lambda's on AWS, the local stack's in the bench. */
export interface PollerTimings {
  /** Pause after a poll of a stream shard that found records, before the next (no batching window). */
  readonly streamPauseMs: number;
  /** Pause after a poll that found nothing. */
  readonly streamIdlePauseMs: number;
  /** Time a poll that returns records takes (GetRecords): what follows a batch. */
  readonly streamReadMs: number;
  /** Time a poll that finds nothing takes: what follows an empty poll. Default: streamReadMs. */
  readonly streamEmptyReadMs?: number;
  /** The fan-out's mean time on one batch: the shard waits for it before the next poll. */
  readonly fanoutMs: number;
  /** How much the fan-out's time varies from batch to batch (standard deviation). Default 0: every batch fanoutMs. */
  readonly fanoutSdMs?: number;
  /** A consumer's time on one batch: its poller receives again after it. */
  readonly consumerMs: number;
  /** An SQS long poll's wait (WaitTimeSeconds). */
  readonly longPollSeconds: number;
  /** Pollers long-polling each queue at low traffic, at most the consumer's maxConcurrency. */
  readonly queuePollers: number;
}

/**
 * Lambda's pollers: each shard polled 4 times a second when no batching window is set; SQS pollers
 * long-poll 20 s, and with MaximumConcurrency set (every consumer here has one) Lambda keeps 5 of
 * them per queue when traffic is low. The fan-out's and consumers' times per batch are the price
 * list's assumptions.
 */
export const AWS_POLLERS = {
  streamPauseMs: 250,
  streamIdlePauseMs: 250,
  streamReadMs: 0,
  longPollSeconds: 20,
  queuePollers: 5,
} as const satisfies Omit<PollerTimings, 'fanoutMs' | 'consumerMs'>;

/** The fan-out's stream event source, as configured (core/queues.ts FANOUT_EVENT_SOURCE). */
export interface StreamSource {
  readonly batchSize: number;
  /** MaximumBatchingWindowInSeconds; 0: none. */
  readonly windowSeconds: number;
  readonly parallelizationFactor: number;
  /** Open shards of the EventStore's stream: about one per table partition. */
  readonly shards: number;
}

/** One subscribed consumer's SQS event source, as configured. */
export interface QueueSource {
  readonly id: string;
  readonly batchSize: number;
  /** MaximumBatchingWindowInSeconds; 0: none. */
  readonly windowSeconds: number;
  readonly maxConcurrency: number;
}

export interface BatchingShape {
  readonly stream: StreamSource;
  /** The consumers each webhook is delivered to. */
  readonly queues: readonly QueueSource[];
}

export interface QueueBatching {
  readonly id: string;
  readonly messagesPerReceive: number;
  /** Per webhook: SendMessageBatch to this queue, receives with messages, deletes, empty receives. */
  readonly sends: number;
  readonly receives: number;
  readonly deletes: number;
  readonly emptyReceives: number;
  readonly invocations: number;
}

export interface BatchingEstimate {
  readonly ratePerSecond: number;
  readonly fanout: {
    /** Records per fan-out invocation (k_f). */
    readonly recordsPerInvocation: number;
    /** Messages per SendMessageBatch. */
    readonly messagesPerSend: number;
    readonly invocations: number;
  };
  readonly queues: readonly QueueBatching[];
  /** Per webhook, every queue together: requests that carried messages, and empty receives. */
  readonly sqsRequests: number;
  readonly sqsEmptyReceives: number;
  readonly invocations: { readonly ingest: number; readonly fanout: number; readonly consumers: number };
}

const clamp = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, v));

/** Mean size of a non-empty batch when `x` arrivals are expected per batch (Poisson): x / (1 − e^−x), 1 at x = 0. */
export function nonEmptyMean(x: number): number {
  return x < 1e-9 ? 1 : x / -Math.expm1(-x);
}

/** Above this many expected records per batch, batch sizes are taken as their mean (Poisson's spread is small beside it). */
const SPREAD_LIMIT = 50;

/**
 * The chance that a poll finds k records, k = 0, 1, ..., when `x` are expected and the time the poll
 * gathers over has a spread (standard deviation over mean) of `spread`: Poisson(x) at 0, else the
 * negative binomial of a gamma-distributed time, shape 1 / spread². Each term from the one before,
 * in logs, so that a large x does not underflow the first.
 */
function* pollCounts(x: number, spread: number): Generator<number> {
  if (spread <= 0) {
    let log = -x;
    for (let k = 0; ; k++) {
      if (k > 0) log += Math.log(x / k);
      yield Math.exp(log);
    }
  }
  const shape = 1 / (spread * spread);
  const q = x / (shape + x);
  let log = -shape * Math.log1p(x / shape);
  for (let k = 0; ; k++) {
    if (k > 0) log += Math.log(((shape + k - 1) / k) * q);
    yield Math.exp(log);
  }
}

/** The first `n` terms of `counts`. */
function take(counts: Generator<number>, n: number): number[] {
  const out: number[] = [];
  for (let k = 0; k < n; k++) out.push(counts.next().value as number);
  return out;
}

/**
 * The chances of 0, 1, ... records in a poll that gathers over a fixed time (`fixed` records
 * expected) and a varying one (`varying` expected, spread as in pollCounts): the two counts added.
 * Terms past the most a batch holds, or past where no chance is left, are not listed.
 */
function countsOver(fixed: number, varying: number, spread: number, batchSize: number): number[] {
  const sd = Math.sqrt(fixed + varying + (varying * spread) ** 2);
  const n = Math.min(batchSize, Math.ceil(fixed + varying + 40 * sd + 20)) + 1;
  if (varying <= 0 || spread <= 0) return take(pollCounts(fixed + varying, 0), n);
  const a = take(pollCounts(fixed, 0), n);
  const b = take(pollCounts(varying, spread), n);
  return a.map((_, k) => {
    let p = 0;
    for (let i = 0; i <= k; i++) p += a[i]! * b[k - i]!;
    return p;
  });
}

/**
 * SendMessageBatch calls over the polls that find records (not per poll): E[ceil(min(K, batchSize) / 10); K >= 1]
 * for K as `counts` lists its chances, and the chance P(K >= 1).
 */
function sendsOverPolls(counts: readonly number[], batchSize: number): { readonly calls: number; readonly nonEmpty: number } {
  const nonEmpty = 1 - counts[0]!;
  let mass = 0;
  let calls = 0;
  for (let k = 1; k < counts.length; k++) {
    mass += counts[k]!;
    calls += counts[k]! * Math.ceil(k / SQS_BATCH_LIMIT);
  }
  // Polls that find more than a batch holds: a full batch each.
  calls += Math.max(0, nonEmpty - mass) * Math.ceil(batchSize / SQS_BATCH_LIMIT);
  return { calls, nonEmpty };
}

/**
 * SendMessageBatch calls one non-empty batch takes per queue: E[ceil(min(K, batchSize) / 10) | K >= 1]
 * for K ~ Poisson(x), or negative binomial when the time the poll gathers over has a `spread`
 * (standard deviation over mean).
 */
export function sendsPerBatch(x: number, batchSize: number, spread = 0): number {
  if (spread <= 0 && x >= SPREAD_LIMIT) return Math.ceil(Math.min(x, batchSize) / SQS_BATCH_LIMIT);
  const { calls, nonEmpty } = sendsOverPolls(countsOver(0, x, spread, batchSize), batchSize);
  if (nonEmpty < 1e-12) return 1;
  return calls / nonEmpty;
}

/** The fan-out's polls at `rate`: records per batch, and SendMessageBatch calls per batch and queue. */
export interface StreamPolls {
  readonly recordsPerBatch: number;
  readonly sendsPerBatch: number;
}

/** What the fan-out's batches hold at `rate` (the two-cycle model above). */
export function streamPolls(stream: StreamSource, timings: PollerTimings, rate: number): StreamPolls {
  const lambda = rate / stream.shards / stream.parallelizationFactor;
  const read = timings.streamReadMs / 1000;
  const emptyRead = (timings.streamEmptyReadMs ?? timings.streamReadMs) / 1000;
  const window = stream.windowSeconds;
  const idle = (window > 0 ? window : timings.streamIdlePauseMs / 1000) + emptyRead;
  const busy = (window > 0 ? window : timings.streamPauseMs / 1000) + read + timings.fanoutMs / 1000;
  // After a batch, the pause and the read take a fixed time; the fan-out's varies (its spread: sd over mean).
  const fanout = timings.fanoutMs / 1000;
  const spread = fanout > 0 ? (timings.fanoutSdMs ?? 0) / timings.fanoutMs : 0;
  const a = -Math.expm1(-lambda * idle);
  if (a < 1e-12) return { recordsPerBatch: 1, sendsPerBatch: 1 };
  const afterBatch =
    spread > 0
      ? sendsOverPolls(countsOver(lambda * (busy - fanout), lambda * fanout, spread, stream.batchSize), stream.batchSize)
      : undefined;
  const b = afterBatch ? afterBatch.nonEmpty : -Math.expm1(-lambda * busy);
  const share = a / (1 - b + a);
  // Batches after an empty poll (Poisson(λ c_idle) sizes) and after a batch (Poisson(λ c_busy), or with the fan-out's spread).
  const afterIdle = ((1 - share) * a) / share;
  const sends =
    afterIdle * sendsPerBatch(lambda * idle, stream.batchSize) +
    (afterBatch ? afterBatch.calls : b * sendsPerBatch(lambda * busy, stream.batchSize));
  const records = (lambda * ((1 - share) * idle + share * busy)) / share;
  return { recordsPerBatch: clamp(records, 1, stream.batchSize), sendsPerBatch: sends };
}

/** Records per fan-out invocation at `rate`. */
export function fanoutFill(stream: StreamSource, timings: PollerTimings, rate: number): number {
  return streamPolls(stream, timings, rate).recordsPerBatch;
}

/** Messages per receive of one consumer, its queue fed `messagesPerSend` at a time at `rate`. */
export function queueFill(queue: QueueSource, timings: PollerTimings, rate: number, messagesPerSend: number): number {
  const pollers = Math.min(queue.maxConcurrency, timings.queuePollers);
  const gathered = (rate * Math.max(queue.windowSeconds, timings.consumerMs / 1000)) / pollers;
  // Without a window a receive returns at most SQS's 10; with one, Lambda gathers up to batchSize.
  const most = queue.windowSeconds > 0 ? queue.batchSize : Math.min(queue.batchSize, SQS_BATCH_LIMIT);
  return clamp(Math.max(messagesPerSend, gathered), 1, most);
}

/** SQS requests and Lambda invocations per webhook at a steady `rate` webhooks/s. */
export function estimateBatching(shape: BatchingShape, timings: PollerTimings, rate: number): BatchingEstimate {
  const polls = streamPolls(shape.stream, timings, rate);
  const kf = polls.recordsPerBatch;
  const sendsPerInvocation = polls.sendsPerBatch;
  const messagesPerSend = kf / sendsPerInvocation;
  const queues = shape.queues.map((q): QueueBatching => {
    const kc = queueFill(q, timings, rate, messagesPerSend);
    const receives = 1 / kc;
    const pollers = Math.min(q.maxConcurrency, timings.queuePollers);
    const emptyPerSecond = Math.max(0, pollers / timings.longPollSeconds - rate * receives);
    return {
      id: q.id,
      messagesPerReceive: kc,
      sends: sendsPerInvocation / kf,
      receives,
      deletes: Math.ceil(kc / SQS_BATCH_LIMIT) / kc,
      emptyReceives: emptyPerSecond / rate,
      invocations: receives,
    };
  });
  const sum = (f: (q: QueueBatching) => number) => queues.reduce((s, q) => s + f(q), 0);
  return {
    ratePerSecond: rate,
    fanout: { recordsPerInvocation: kf, messagesPerSend, invocations: 1 / kf },
    queues,
    sqsRequests: sum((q) => q.sends + q.receives + q.deletes),
    sqsEmptyReceives: sum((q) => q.emptyReceives),
    invocations: { ingest: 1, fanout: 1 / kf, consumers: sum((q) => q.invocations) },
  };
}
