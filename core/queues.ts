/**
 * Queue and event-source settings shared by the CDK stack (which deploys them) and the local stack
 * (which provisions the emulator's queues and runs pollers that mirror them), so both run the
 * handlers under the same rules.
 */

const DAY_SECONDS = 24 * 3600;

export const QUEUE_RETENTION = {
  /** A consumer's queue, by default; at most `consumerMaxSeconds`. */
  consumerDefaultSeconds: 7 * DAY_SECONDS,
  /** A message must still have a day left in its DLQ when the queue's retention ends. */
  consumerMaxSeconds: 13 * DAY_SECONDS,
  /** Every DLQ and on-failure queue: SQS's maximum, so nobody's evidence expires first. */
  deadLetterSeconds: 14 * DAY_SECONDS,
} as const;

/** SQS's longest visibility timeout (and so the longest a Retry-After can hold a message back), seconds. */
export const MAX_VISIBILITY_SECONDS = 12 * 3600;

/**
 * Kept on top of a consumer's retry budget in its queue's retention: the time a message can wait
 * before its first receive (a backlog, throttled receives) and between its receives.
 */
export const RETENTION_HEADROOM_SECONDS = DAY_SECONDS;

/** The settings that decide how long a consumer's queue must keep a message before its DLQ takes it. */
export interface RetrySettings {
  readonly maxReceiveCount: number;
  readonly visibilityTimeoutSeconds: number;
}

/**
 * How long a consumer's queue keeps a message, seconds: 7 days, or longer when its retry budget
 * (`maxReceiveCount` receives, each holding the message for up to `visibilityTimeoutSeconds`) plus
 * RETENTION_HEADROOM_SECONDS needs it, so no message expires before SQS moves it to the DLQ. Above
 * QUEUE_RETENTION.consumerMaxSeconds the configuration is refused (core/config/schema.ts).
 */
export function consumerRetentionSeconds(consumer: RetrySettings): number {
  return Math.max(QUEUE_RETENTION.consumerDefaultSeconds, retentionNeededSeconds(consumer));
}

/** The retention a consumer's retry budget needs: every receive's hold, plus the headroom. */
export function retentionNeededSeconds(consumer: RetrySettings): number {
  return consumer.maxReceiveCount * consumer.visibilityTimeoutSeconds + RETENTION_HEADROOM_SECONDS;
}

/**
 * The longest one failed receive may hold a message back (a destination's Retry-After): its share of
 * the queue's retention (less the headroom) per allowed receive, at least the lease and at most 12 h.
 * At the defaults (5 receives, 7 days) that is SQS's 12 h; with many receives it is less, so that
 * Retry-Afters cannot add up past the retention either.
 */
export function maxRetryHoldSeconds(consumer: RetrySettings): number {
  const share = Math.floor((consumerRetentionSeconds(consumer) - RETENTION_HEADROOM_SECONDS) / consumer.maxReceiveCount);
  return Math.min(MAX_VISIBILITY_SECONDS, Math.max(consumer.visibilityTimeoutSeconds, share));
}

/** Only new receipts and explicit re-queues are work for the fan-out; every MODIFY/REMOVE is not. */
export const FANOUT_FILTER_PATTERN = {
  eventName: ['INSERT'],
  dynamodb: { NewImage: { kind: { S: ['event', 'requeue'] } } },
} as const;

export const FANOUT_EVENT_SOURCE = {
  batchSize: 100,
  /** Bounded: a poisoned record goes to the on-failure queue instead of blocking its shard for 24 h. */
  retryAttempts: 5,
  bisectBatchOnError: true,
  /** Records older than this are sent to the on-failure queue (streams keep 24 h). */
  maxRecordAgeSeconds: 6 * 3600,
  parallelizationFactor: 1,
} as const;
