import { Duration, Stack, Validations } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource, SqsDlq } from 'aws-cdk-lib/aws-lambda-event-sources';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { BATCHING_WINDOW_SECONDS } from '../../core/config/consumer-rules';
import { ENV } from '../../core/env';
import { ConfigurationError } from '../../core/errors';
import { keyPattern } from '../../core/model';
import { FANOUT_EVENT_SOURCE, FANOUT_FILTER_PATTERN } from '../../core/queues';
import { deadLetterQueueProps } from './defaults';
import { HookledgerFunction } from './hookledger-function';
import { grantItemsByKeyPattern } from './storage';

/** A consumer's delivery queue, as the fan-out sees it. */
export interface ConsumerQueue {
  readonly consumerId: string;
  readonly queue: sqs.IQueue;
}

export interface FanOutProps {
  /** The EventStore table; it must have a stream (NEW_IMAGE). */
  readonly events: dynamodb.ITable;
  /** Every configured consumer's queue; the fan-out may send to all of them. */
  readonly consumerQueues: readonly ConsumerQueue[];
  // Defaults come from core/queues.ts, which the local stack's stream poller mirrors.
  /** Retries of a failing batch before its records go to the failure queue. @default 5 */
  readonly retryAttempts?: number;
  /**
   * Records older than this skip to the failure queue instead of blocking the shard. At most 24 hours
   * (stream retention); replay reads the table, so a skipped record is recoverable.
   * @default Duration.hours(6)
   */
  readonly maxRecordAge?: Duration;
  /** @default 100 */
  readonly batchSize?: number;
  /** @default 2 */
  readonly parallelizationFactor?: number;
  /**
   * How long each shard's batch may gather before the fan-out is invoked (MaximumBatchingWindowInSeconds),
   * whole seconds from 0 to 300: fuller batches, fewer invocations and SQS sends, up to this much more latency.
   * @default - none (Duration.seconds(0) is the same): a batch is handed over as soon as records are read
   */
  readonly maxBatchingWindow?: Duration;
  /** @default Duration.seconds(60) */
  readonly timeout?: Duration;
}

/**
 * The fan-out: reads the EventStore stream and puts one message per subscribed consumer on that
 * consumer's queue. Only INSERTs of `event` and `requeue` items pass the filter, so status updates and
 * TTL deletes never re-enqueue work. Retries are bounded, failing batches are bisected, and records
 * that still fail end up (as metadata) on a dedicated failure queue.
 */
export class FanOut extends Construct {
  readonly handler: HookledgerFunction;
  /** On-failure destination of the stream: metadata of records the fan-out gave up on. */
  readonly failureQueue: sqs.IQueue;
  readonly eventSource: DynamoEventSource;

  constructor(scope: Construct, id: string, props: FanOutProps) {
    super(scope, id);
    if (!props.events.tableStreamArn) {
      throw new ConfigurationError(
        `events table ${props.events.node.path} has no stream for the fan-out to read; create it with stream: dynamodb.StreamViewType.NEW_IMAGE (as Storage does)`,
      );
    }
    if (props.consumerQueues.length === 0) {
      throw new ConfigurationError('consumerQueues must name at least one consumer, got none; add a consumer to hookledger.config.ts');
    }
    const retryAttempts = props.retryAttempts ?? FANOUT_EVENT_SOURCE.retryAttempts;
    if (!Number.isInteger(retryAttempts) || retryAttempts < 0 || retryAttempts > 10_000) {
      throw new ConfigurationError(
        `retryAttempts must be an integer from 0 to 10000 (a bound, not -1), got ${retryAttempts}; omit it for ${FANOUT_EVENT_SOURCE.retryAttempts}`,
      );
    }
    const maxBatchingWindow = batchingWindowOf(props.maxBatchingWindow);
    const maxRecordAge = props.maxRecordAge ?? Duration.seconds(FANOUT_EVENT_SOURCE.maxRecordAgeSeconds);
    if (maxRecordAge.toSeconds() < 60 || maxRecordAge.toSeconds() > Duration.hours(24).toSeconds()) {
      throw new ConfigurationError(
        `maxRecordAge must be from 60 seconds to 24 hours (stream retention), got ${maxRecordAge.toSeconds()} seconds; omit it for ${FANOUT_EVENT_SOURCE.maxRecordAgeSeconds / 3600} hours`,
      );
    }

    // It names the records the fan-out gave up on: kept when the stack goes away or it is replaced.
    const failureQueue = new sqs.Queue(this, 'FailureQueue', deadLetterQueueProps());
    Validations.of(failureQueue).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason:
        'This queue is itself the terminal on-failure destination of the stream event source (record metadata for replay); nothing consumes it, so a DLQ behind it would never receive anything.',
    });
    Validations.of(failureQueue).acknowledge({
      id: 'Serverless-SQSRedrivePolicy',
      reason:
        'This queue is itself the terminal on-failure destination of the stream event source (record metadata for replay); nothing consumes it, so a redrive policy would never move anything.',
    });
    this.failureQueue = failureQueue;

    this.handler = new HookledgerFunction(this, 'Handler', {
      entry: 'lambdas/fanout/handler.ts',
      description: 'hookledger fan-out: EventStore stream to one message per subscribed consumer',
      serviceName: 'hookledger-fanout',
      timeout: props.timeout ?? Duration.seconds(60),
      environment: {
        // The `Stack` dimension of FanOutSkippedDeliveries (deliveries to a consumer no longer configured).
        [ENV.stackName]: Stack.of(this).stackName,
        [ENV.eventsTable]: props.events.tableName,
        [ENV.queueUrls]: Stack.of(this).toJsonString(
          Object.fromEntries(props.consumerQueues.map(({ consumerId, queue }) => [consumerId, queue.queueUrl])),
        ),
      },
    });
    for (const { queue } of props.consumerQueues) queue.grantSendMessages(this.handler);
    // The fan-out is the only reader of stored payloads: it narrows each consumer's view into its message.
    grantItemsByKeyPattern(props.events, this.handler, ['dynamodb:GetItem'], [keyPattern('payload')]);

    this.eventSource = new DynamoEventSource(props.events, {
      startingPosition: lambda.StartingPosition.TRIM_HORIZON,
      batchSize: props.batchSize ?? FANOUT_EVENT_SOURCE.batchSize,
      parallelizationFactor: props.parallelizationFactor ?? FANOUT_EVENT_SOURCE.parallelizationFactor,
      retryAttempts,
      bisectBatchOnError: FANOUT_EVENT_SOURCE.bisectBatchOnError,
      maxRecordAge,
      // Left out at 0, so the shipped template keeps no MaximumBatchingWindowInSeconds.
      ...(maxBatchingWindow ? { maxBatchingWindow } : {}),
      reportBatchItemFailures: true,
      onFailure: new SqsDlq(failureQueue),
      // {eventName: INSERT, NewImage.kind.S: event | requeue}: acknowledgements (MODIFY) and TTL
      // deletes (REMOVE) never reach the handler, so they cannot re-enqueue work.
      filters: [lambda.FilterCriteria.filter(FANOUT_FILTER_PATTERN)],
    });
    this.handler.function.addEventSource(this.eventSource);
    Validations.of(this.handler).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'dynamodb:ListStreams, added by the DynamoDB event source, has no resource-level permissions and must be granted on "*"; all other stream actions are scoped to the EventStore stream ARN.',
    });
  }
}

/** The window as the event source takes it: undefined for none, else whole seconds within Lambda's range. */
function batchingWindowOf(window: Duration | undefined): Duration | undefined {
  if (window === undefined) return undefined;
  const seconds = window.toMilliseconds() / 1000;
  if (!Number.isInteger(seconds) || seconds < BATCHING_WINDOW_SECONDS.min || seconds > BATCHING_WINDOW_SECONDS.max) {
    throw new ConfigurationError(
      `maxBatchingWindow must be whole seconds from ${BATCHING_WINDOW_SECONDS.min} to ${BATCHING_WINDOW_SECONDS.max}, got ${seconds} seconds; omit it for none`,
    );
  }
  return seconds === 0 ? undefined : Duration.seconds(seconds);
}
