/**
 * The rules a consumer's queue, lease and event source must keep, as one table of data (in the manner
 * of aws-cdk's validate-queue-props.ts). The config schema reports them as issues of `defineConfig`
 * (core/config/schema.ts) and ConsumerWorker throws them at synth for a consumer that never went
 * through it: the same rule, the same message. Pure TypeScript: no zod here.
 */
import { ConfigurationError } from '../errors';
import { QUEUE_RETENTION, RETENTION_HEADROOM_SECONDS, retentionNeededSeconds } from '../queues';

/** AWS guidance for SQS-triggered Lambdas: the lease must outlast several attempts' worth of work. */
export const VISIBILITY_TIMEOUT_FACTOR = 6;

/**
 * Lambda's MaximumBatchingWindowInSeconds, on stream and SQS event sources alike: whole seconds from
 * 0 (none, the default) to 300. The fan-out's and each consumer's `batchingWindowSeconds`.
 */
export const BATCHING_WINDOW_SECONDS = { min: 0, max: 300 } as const;

/** Inclusive integer bounds of the consumer settings the queue and event source take as they are. */
export const CONSUMER_LIMITS = {
  /** SQS allows a redrive policy's maxReceiveCount from 1 to 1000. */
  maxReceiveCount: { min: 1, max: 1000 },
  /** An SQS event source receives at most 10 messages per batch. */
  batchSize: { min: 1, max: 10 },
  /** An SQS event source's maximum concurrency runs from 2 to 1000. */
  maxConcurrency: { min: 2, max: 1000 },
  reservedConcurrency: { min: 1, max: 1000 },
  /** Seconds an SQS event source may gather a batch before it invokes the worker. */
  batchingWindowSeconds: BATCHING_WINDOW_SECONDS,
} as const;

/** What the rules read: a consumer's entry in hookledger.config.ts (`ConsumerConfig` has these). */
export interface ConsumerSettings {
  readonly id: string;
  readonly visibilityTimeoutSeconds: number;
  readonly timeoutSeconds: number;
  readonly maxReceiveCount: number;
  readonly batchSize: number;
  readonly maxConcurrency: number;
  readonly reservedConcurrency?: number;
  /** @default 0 (no batching window) */
  readonly batchingWindowSeconds?: number;
  /** Set on an ordered consumer, whose queue is FIFO. */
  readonly ordering?: unknown;
}

export type ConsumerRuleField = Exclude<keyof ConsumerSettings, 'id' | 'ordering'>;

export interface ConsumerRule {
  /** The setting a broken rule is reported on. */
  readonly field: ConsumerRuleField;
  /** True when the consumer breaks the rule. */
  readonly breaks: (c: ConsumerSettings) => boolean;
  /** What is wrong: the limit, the bad value and the fix; lower case, the caller says where. */
  readonly message: (c: ConsumerSettings) => string;
}

/** A broken rule: the consumer, the path of the setting within it, and the rule's message. */
export interface ConsumerProblem {
  readonly consumerId: string;
  readonly path: readonly [ConsumerRuleField];
  readonly message: string;
}

const within = (value: unknown, { min, max }: { readonly min: number; readonly max: number }): boolean =>
  typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max;

/** An integer setting within its CONSUMER_LIMITS; `why` says what the setting is. */
function inLimits(field: keyof typeof CONSUMER_LIMITS, why: string): ConsumerRule {
  const limits = CONSUMER_LIMITS[field];
  return {
    field,
    breaks: (c) => !within(c[field], limits),
    message: (c) => `must be an integer from ${limits.min} to ${limits.max}${why}, got ${c[field]}`,
  };
}

const windowOf = (c: ConsumerSettings): number => c.batchingWindowSeconds ?? 0;
/** The consumer with an out-of-range window read as none: the lease is not blamed for the window's fault. */
const withValidWindow = (c: ConsumerSettings): ConsumerSettings =>
  within(windowOf(c), BATCHING_WINDOW_SECONDS) ? c : { ...c, batchingWindowSeconds: 0 };

/**
 * The shortest lease AWS recommends: 6x the function timeout, plus the batching window, since a
 * message is in flight from its receive on, while its batch gathers as well as while it runs.
 */
export function minimumVisibilitySeconds(c: Pick<ConsumerSettings, 'timeoutSeconds' | 'batchingWindowSeconds'>): number {
  return VISIBILITY_TIMEOUT_FACTOR * c.timeoutSeconds + (c.batchingWindowSeconds ?? 0);
}

export const CONSUMER_RULES: readonly ConsumerRule[] = [
  {
    field: 'visibilityTimeoutSeconds',
    breaks: (c) => c.visibilityTimeoutSeconds < minimumVisibilitySeconds(withValidWindow(c)),
    message: (given) => {
      const c = withValidWindow(given);
      const minimum = minimumVisibilitySeconds(c);
      if (windowOf(c) === 0) {
        return `must be at least ${VISIBILITY_TIMEOUT_FACTOR}x timeoutSeconds (${minimum}), got ${c.visibilityTimeoutSeconds}; raise it to ${minimum} or lower timeoutSeconds`;
      }
      return (
        `must be at least ${VISIBILITY_TIMEOUT_FACTOR}x timeoutSeconds plus batchingWindowSeconds ` +
        `(${VISIBILITY_TIMEOUT_FACTOR} x ${c.timeoutSeconds} + ${windowOf(c)} = ${minimum}), got ${c.visibilityTimeoutSeconds}: ` +
        `messages stay in flight while a batch gathers; raise it to ${minimum}, or lower timeoutSeconds or batchingWindowSeconds`
      );
    },
  },
  inLimits('maxReceiveCount', ' (receives before a message moves to the DLQ)'),
  {
    // The queue's retention follows the retry budget (core/queues.ts consumerRetentionSeconds) up to
    // 13 days; beyond that a failing message would expire in its queue before SQS moved it to the DLQ.
    field: 'maxReceiveCount',
    breaks: (c) => retentionNeededSeconds(c) > QUEUE_RETENTION.consumerMaxSeconds,
    message: (c) => {
      const usable = QUEUE_RETENTION.consumerMaxSeconds - RETENTION_HEADROOM_SECONDS;
      const maxReceives = Math.floor(usable / c.visibilityTimeoutSeconds);
      const maxVisibility = Math.floor(usable / c.maxReceiveCount);
      return (
        `maxReceiveCount ${c.maxReceiveCount} x visibilityTimeoutSeconds ${c.visibilityTimeoutSeconds} = ` +
        `${c.maxReceiveCount * c.visibilityTimeoutSeconds} s of retries, plus a day's headroom, outlasts the longest queue retention ` +
        `(${QUEUE_RETENTION.consumerMaxSeconds} s, 13 days; its DLQ keeps 14): failing messages would expire before reaching the DLQ. ` +
        `Lower maxReceiveCount to at most ${maxReceives}` +
        (maxVisibility >= minimumVisibilitySeconds(withValidWindow(c)) ? ` or visibilityTimeoutSeconds to at most ${maxVisibility}` : '')
      );
    },
  },
  inLimits('batchSize', ' (messages per SQS receive)'),
  inLimits('maxConcurrency', ' (batches of this consumer running at once)'),
  {
    // Opt-in: unset means 0, no window.
    field: 'batchingWindowSeconds',
    breaks: (c) => !within(windowOf(c), BATCHING_WINDOW_SECONDS),
    message: (c) =>
      `must be an integer from ${BATCHING_WINDOW_SECONDS.min} to ${BATCHING_WINDOW_SECONDS.max} (seconds a batch may gather before the worker runs; 0: none), got ${c.batchingWindowSeconds}`,
  },
  {
    // AWS Lambda: "Batching window is not supported for FIFO queues" (and the CDK throws on one).
    field: 'batchingWindowSeconds',
    breaks: (c) => c.ordering !== undefined && windowOf(c) !== 0,
    message: (c) =>
      `must be 0 on an ordered consumer, got ${c.batchingWindowSeconds}: its queue is FIFO and Lambda takes no batching window on a FIFO queue; remove batchingWindowSeconds, or remove ordering`,
  },
  {
    // Opt-in: unset means the account's shared pool.
    field: 'reservedConcurrency',
    breaks: (c) => c.reservedConcurrency !== undefined && !within(c.reservedConcurrency, CONSUMER_LIMITS.reservedConcurrency),
    message: (c) =>
      `must be an integer from ${CONSUMER_LIMITS.reservedConcurrency.min} to ${CONSUMER_LIMITS.reservedConcurrency.max}, got ${c.reservedConcurrency}; or remove it to use the shared pool`,
  },
  {
    // Throttled SQS deliveries still count as receives: they would push messages into the DLQ early.
    field: 'reservedConcurrency',
    breaks: (c) =>
      c.reservedConcurrency !== undefined &&
      within(c.maxConcurrency, CONSUMER_LIMITS.maxConcurrency) &&
      c.reservedConcurrency < c.maxConcurrency,
    message: (c) =>
      `must be at least maxConcurrency (${c.maxConcurrency}) so the event source is never throttled, got ${c.reservedConcurrency}; raise it, lower maxConcurrency, or remove it to use the shared pool`,
  },
];

/** Every rule the consumer breaks, at most one per setting (the first in table order). */
export function checkConsumer(c: ConsumerSettings): ConsumerProblem[] {
  const problems: ConsumerProblem[] = [];
  for (const rule of CONSUMER_RULES) {
    if (problems.some((p) => p.path[0] === rule.field) || !rule.breaks(c)) continue;
    problems.push({ consumerId: c.id, path: [rule.field], message: rule.message(c) });
  }
  return problems;
}

/** `consumer <id>: <path> <message>`: what ConsumerWorker throws. */
export function describeConsumerProblem(problem: ConsumerProblem): string {
  return `consumer ${problem.consumerId}: ${problem.path.join('.')} ${problem.message}`;
}

/** Throws one ConfigurationError naming every rule the consumer breaks (for code that skipped defineConfig). */
export function assertConsumerRules(c: ConsumerSettings): void {
  const problems = checkConsumer(c);
  if (problems.length > 0) throw new ConfigurationError(problems.map(describeConsumerProblem).join('\n'));
}
