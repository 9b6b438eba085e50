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
  parallelizationFactor: 2,
} as const;
