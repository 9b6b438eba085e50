import { Duration, Stack, Validations } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { ENV } from '../../core/env';
import { ConfigurationError } from '../../core/errors';
import { keyPattern, WINDOW_INDEX } from '../../core/model';
import { deadLetterQueueProps } from './defaults';
import { HookledgerFunction } from './hookledger-function';
import { grantItemsByKeyPattern } from './storage';

export interface ReconcilerRepairProps {
  /** At most this many re-queues per run (1-10000). */
  readonly maxPerRun: number;
  /** Each consumer's queue: a consumer whose event source mappings are all disabled is paused and not repaired. */
  readonly consumerQueues: readonly { readonly consumerId: string; readonly queue: sqs.IQueue }[];
  /** The fan-out's on-failure queue: its records' deliveries are repaired and the records then deleted. */
  readonly fanOutFailureQueue: sqs.IQueue;
}

/**
 * Read by lambdas/reconcile/handler.ts: the value of the metric's `Stack` dimension. Not in
 * core/env.ts because only reconcile reads it.
 */
export const STACK_NAME_ENV = ENV.stackName;

export interface ReconcilerProps {
  readonly events: dynamodb.ITable;
  readonly ledger: dynamodb.ITable;
  /** How often reconcile runs; also the period of its alarms. @default Duration.hours(1) */
  readonly interval?: Duration;
  /** @default Duration.minutes(5) */
  readonly timeout?: Duration;
  /** Re-queue the missing and stalled deliveries each run finds. @default undefined (check only) */
  readonly repair?: ReconcilerRepairProps;
}

/**
 * The scheduled consistency check: compares receipts with ledger rows and publishes the number of
 * violations as the `Hookledger/ReconcileViolations` metric, whose only dimension is `Stack` = this
 * stack's name. With `repair`, it also re-queues the missing and stalled deliveries it found (a
 * requeue item and an audit item in the EventStore: its only writes) and publishes how many as
 * `Hookledger/ReconcileRepairs`.
 */
export class Reconciler extends Construct {
  readonly handler: HookledgerFunction;
  readonly rule: events.Rule;
  readonly interval: Duration;
  /** Scheduled runs EventBridge could not deliver, or that failed after Lambda's async retries. */
  readonly deadLetterQueue: sqs.IQueue;

  constructor(scope: Construct, id: string, props: ReconcilerProps) {
    super(scope, id);
    this.interval = props.interval ?? Duration.hours(1);
    const timeout = props.timeout ?? Duration.minutes(5);
    checkProps(props, this.interval, timeout);

    this.deadLetterQueue = new sqs.Queue(this, 'DeadLetterQueue', deadLetterQueueProps());
    Validations.of(this.deadLetterQueue).acknowledge({
      id: 'Serverless-SQSRedrivePolicy',
      reason:
        "This queue is itself the terminal dead-letter queue of the reconcile schedule and of the function's asynchronous invocations; nothing consumes it (its depth alarms), so a DLQ behind it would never receive anything.",
    });
    this.handler = this.buildHandler(props, timeout);
    this.grantReads(props);
    if (props.repair) this.grantRepairs(props.events, props.repair);
    // No cloudwatch:PutMetricData: the violations and repairs metrics go out as EMF through the log group.

    this.rule = new events.Rule(this, 'Schedule', {
      description: 'Runs hookledger reconcile',
      schedule: events.Schedule.rate(this.interval),
      // A run EventBridge cannot deliver within one interval is superseded by the next; it is kept
      // on the dead-letter queue (and alarmed) rather than dropped.
      targets: [
        new targets.LambdaFunction(this.handler.function, {
          retryAttempts: 2,
          maxEventAge: Duration.seconds(Math.min(this.interval.toSeconds(), Duration.hours(24).toSeconds())),
          deadLetterQueue: this.deadLetterQueue,
        }),
      ],
    });
  }

  private buildHandler(props: ReconcilerProps, timeout: Duration): HookledgerFunction {
    return new HookledgerFunction(this, 'Handler', {
      entry: 'lambdas/reconcile/handler.ts',
      deadLetterQueue: this.deadLetterQueue,
      description: 'hookledger reconcile: checks every receipt has its ledger rows; publishes violations',
      serviceName: 'hookledger-reconcile',
      timeout,
      memorySize: 512,
      environment: {
        [ENV.eventsTable]: props.events.tableName,
        [ENV.ledgerTable]: props.ledger.tableName,
        [STACK_NAME_ENV]: Stack.of(this).stackName,
        ...(props.repair
          ? {
              [ENV.repairMaxPerRun]: String(props.repair.maxPerRun),
              [ENV.queueArns]: Stack.of(this).toJsonString(
                Object.fromEntries(props.repair.consumerQueues.map((c) => [c.consumerId, c.queue.queueArn])),
              ),
              [ENV.fanoutFailureQueueUrl]: props.repair.fanOutFailureQueue.queueUrl,
            }
          : {}),
      },
    });
  }

  /**
   * Only what a scheduled run reads, never a stored payload and never a Scan (full-history scans,
   * `--scan`, stay with the operator's own credentials through the CLI).
   */
  private grantReads(props: ReconcilerProps): void {
    //  - the window index (Query): the day's tenant list and each tenant-day's receipts, as the index
    //    projects them (core/model.ts WINDOW_INDEX: no payload item has its keys, no body is projected);
    iam.Grant.addToPrincipal({
      grantee: this.handler,
      actions: ['dynamodb:Query'],
      resourceArns: [`${props.events.tableArn}/index/${WINDOW_INDEX.name}`],
    });
    //  - by key: receipts in full (a repair copies their payload hash and retention), tenant-day items
    //    and its checkpoint; `dynamodb:LeadingKeys` keeps every other kind (pay#, key#, ...) out;
    grantItemsByKeyPattern(
      props.events,
      this.handler,
      ['dynamodb:GetItem', 'dynamodb:BatchGetItem'],
      [keyPattern('event'), keyPattern('tenantDay'), keyPattern('checkpoint')],
    );
    //  - ledger rows by key: each receipt's deliveries (every configured consumer's).
    props.ledger.grant(this.handler, 'dynamodb:GetItem', 'dynamodb:BatchGetItem');
    // The checkpoint of a run that stopped before the end of its window (lambdas/reconcile/app.ts).
    grantItemsByKeyPattern(props.events, this.handler, ['dynamodb:PutItem'], [keyPattern('checkpoint')]);
  }

  private grantRepairs(eventsTable: dynamodb.ITable, repair: ReconcilerRepairProps): void {
    // Repairs write requeue items and one audit item per run: new items only, never an update.
    grantItemsByKeyPattern(eventsTable, this.handler, ['dynamodb:PutItem'], [keyPattern('requeue'), keyPattern('audit')]);
    repair.fanOutFailureQueue.grantConsumeMessages(this.handler);
    // A failure record names a stream batch by sequence numbers only: read back to know what it held.
    if (eventsTable.tableStreamArn) {
      iam.Grant.addToPrincipal({
        grantee: this.handler,
        actions: ['dynamodb:GetShardIterator', 'dynamodb:GetRecords'],
        resourceArns: [eventsTable.tableStreamArn],
      });
    }
    iam.Grant.addToPrincipal({
      grantee: this.handler,
      actions: ['lambda:ListEventSourceMappings'],
      resourceArns: ['*'],
    });
    Validations.of(this.handler).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'lambda:ListEventSourceMappings (read-only: which consumers are paused, so their deliveries are not repaired) has no resource-level permissions.',
    });
  }
}

function checkProps(props: ReconcilerProps, interval: Duration, timeout: Duration): void {
  if (interval.toSeconds() < 60) {
    throw new ConfigurationError(`interval must be at least 1 minute, got ${interval.toSeconds()} seconds; omit it for 1 hour`);
  }
  if (props.repair && !(Number.isInteger(props.repair.maxPerRun) && props.repair.maxPerRun >= 1 && props.repair.maxPerRun <= 10_000)) {
    throw new ConfigurationError(`repair.maxPerRun must be an integer from 1 to 10000, got ${props.repair.maxPerRun}`);
  }
  if (timeout.toSeconds() >= interval.toSeconds()) {
    throw new ConfigurationError(
      `timeout (${timeout.toSeconds()} s) must be shorter than interval (${interval.toSeconds()} s) so runs never overlap; lower timeout or raise interval`,
    );
  }
}
