/**
 * The queue settings every construct of the stack shares (in the manner of AWS Solutions Constructs'
 * sqs-defaults.ts): each queue is encrypted and refuses requests without TLS; a terminal queue (a
 * DLQ or an on-failure destination) keeps its messages for SQS's maximum and outlives the stack.
 * Retention values come from core/queues.ts, which the local stack reads too.
 */
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { QUEUE_RETENTION } from '../../core/queues';

/** Every queue: SQS-managed encryption at rest, and a queue policy denying requests without TLS. */
const SECURE_QUEUE = { encryption: sqs.QueueEncryption.SQS_MANAGED, enforceSSL: true } as const;

export interface DeadLetterQueueOptions {
  /** A FIFO source queue's DLQ must be FIFO. @default false */
  readonly fifo?: boolean;
  /** @default - any queue may redrive to it */
  readonly redriveAllowPolicy?: sqs.RedriveAllowPolicy;
}

/**
 * A terminal queue: a consumer's DLQ, the fan-out's on-failure queue, the reconcile schedule's DLQ.
 * Nothing consumes it; what lands there is evidence of lost or poisoned work, so it is kept for SQS's
 * maximum (QUEUE_RETENTION.deadLetterSeconds) and retained when its construct or the stack is removed
 * or replaced.
 */
export function deadLetterQueueProps(options: DeadLetterQueueOptions = {}): sqs.QueueProps {
  return {
    ...SECURE_QUEUE,
    retentionPeriod: Duration.seconds(QUEUE_RETENTION.deadLetterSeconds),
    removalPolicy: RemovalPolicy.RETAIN,
    ...(options.fifo ? { fifo: true } : {}),
    ...(options.redriveAllowPolicy ? { redriveAllowPolicy: options.redriveAllowPolicy } : {}),
  };
}

export interface WorkQueueOptions {
  /** Fixed at synth when its DLQ must name it (a redrive-allow policy). @default - generated */
  readonly queueName?: string;
  /** The lease of a received message. */
  readonly visibility: Duration;
  /** How long an unreceived message stays on the queue. */
  readonly retention: Duration;
  /** FIFO, deduplicated by the id the sender sets, never by the body's hash. @default false */
  readonly fifo?: boolean;
  readonly deadLetterQueue: sqs.DeadLetterQueue;
}

/** A queue a worker consumes: leased messages, a retry budget, then its DLQ. Removed with the stack. */
export function workQueueProps(options: WorkQueueOptions): sqs.QueueProps {
  return {
    ...(options.queueName !== undefined ? { queueName: options.queueName } : {}),
    ...SECURE_QUEUE,
    retentionPeriod: options.retention,
    visibilityTimeout: options.visibility,
    ...(options.fifo ? { fifo: true, contentBasedDeduplication: false } : {}),
    deadLetterQueue: options.deadLetterQueue,
  };
}
