/**
 * Event-source settings shared by the CDK stack (which deploys them) and the local stack (whose
 * pollers mirror them), so both run the handlers under the same rules.
 */

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
