import { ArnFormat, Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import type * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sns from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import {
  DIMENSION,
  FANOUT_SKIPPED_DIMENSIONS,
  FANOUT_SKIPPED_METRIC,
  HTTP_CIRCUIT_OPEN_METRIC,
  INTAKE_DIMENSIONS,
  INTAKE_METRIC,
  METRICS_NAMESPACE,
  RECONCILE_INCOMPLETE_METRIC,
  RECONCILE_REPAIRS_METRIC,
  RECONCILE_VIOLATIONS_METRIC,
  SECRET_REFRESH_FAILURE_METRIC,
} from '../../core/metrics';

/** What is watched for one consumer. */
export interface ConsumerSignals {
  readonly consumerId: string;
  readonly queue: sqs.IQueue;
  readonly deadLetterQueue: sqs.IQueue;
  readonly worker: lambda.IFunction;
  /** Alarm when the oldest message on the queue is older than this (config `alarmAgeSeconds`). */
  readonly alarmAgeSeconds: number;
  /**
   * An HTTP consumer: alarm when its circuit breaker opens (the worker publishes HttpCircuitOpened).
   * @default false
   */
  readonly circuitBreaker?: boolean;
}

export interface ObservabilityProps {
  readonly api: apigwv2.IHttpApi;
  readonly fanOut: lambda.IFunction;
  readonly fanOutFailureQueue: sqs.IQueue;
  readonly reconciler: lambda.IFunction;
  /** How often reconcile runs: the period of its alarms, so one report holds the state until the next. */
  readonly reconcileInterval: Duration;
  readonly consumers: readonly ConsumerSignals[];
  /**
   * Dead-letter queue of the reconcile schedule: any message there is a run that never happened.
   * @default - no alarm
   */
  readonly reconcileDeadLetterQueue?: sqs.IQueue;
  /** @default - no subscription; subscribe to the topic by other means */
  readonly alarmEmail?: string;
  /**
   * Value of the `Stack` dimension the ingest and reconcile functions publish their metrics with
   * (`Hookledger/IntakeRequests`, `Hookledger/ReconcileViolations`); the dashboard and alarms read
   * only that stack's series.
   * @default - this stack's name
   */
  readonly reconcileStackDimension?: string;
}

const ONE_MINUTE = Duration.minutes(1);
/** Consecutive reconcile runs stopped at their time budget before the ReconcileIncomplete alarm fires. */
export const RECONCILE_INCOMPLETE_RUNS = 3;

/** Labels only on dashboard copies: a labelled metric would turn an alarm into a metric-math alarm. */
function label(metric: cloudwatch.Metric, text: string): cloudwatch.Metric {
  return metric.with({ label: text });
}

/**
 * The alarm topic, the alarms that page on lost or stuck work, and one dashboard for intake, fan-out
 * and every consumer.
 */
export class Observability extends Construct {
  readonly alarmTopic: sns.ITopic;
  readonly dashboard: cloudwatch.Dashboard;
  readonly alarms: cloudwatch.IAlarm[] = [];
  private readonly action: SnsAction;

  constructor(scope: Construct, id: string, props: ObservabilityProps) {
    super(scope, id);
    const stack = Stack.of(this);
    // The Stack dimension value of every custom metric this stack's functions publish.
    const stackDimension = props.reconcileStackDimension ?? stack.stackName;

    // CloudWatch cannot publish to a topic encrypted with the AWS managed aws/sns key (its policy
    // cannot admit cloudwatch.amazonaws.com), so the topic gets its own key that does.
    const cloudwatchPrincipal = new iam.ServicePrincipal('cloudwatch.amazonaws.com');
    const fromOurAlarms = {
      StringEquals: { 'aws:SourceAccount': stack.account },
      ArnLike: {
        'aws:SourceArn': stack.formatArn({
          service: 'cloudwatch',
          resource: 'alarm',
          resourceName: '*',
          arnFormat: ArnFormat.COLON_RESOURCE_NAME,
        }),
      },
    };
    const key = new kms.Key(this, 'AlarmTopicKey', {
      description: 'Encrypts the hookledger alarm topic; CloudWatch alarms of this account use it to publish',
      enableKeyRotation: true,
      removalPolicy: RemovalPolicy.DESTROY,
      pendingWindow: Duration.days(7),
    });
    key.addToResourcePolicy(
      new iam.PolicyStatement({
        principals: [cloudwatchPrincipal],
        actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
        resources: ['*'],
        conditions: fromOurAlarms,
      }),
    );
    const topic = new sns.Topic(this, 'AlarmTopic', {
      displayName: 'hookledger alarms',
      masterKey: key,
      enforceSSL: true,
    });
    // The SSL-only topic policy replaces SNS's default policy, so CloudWatch must be admitted explicitly.
    topic.addToResourcePolicy(
      new iam.PolicyStatement({
        principals: [cloudwatchPrincipal],
        actions: ['sns:Publish'],
        resources: [topic.topicArn],
        conditions: fromOurAlarms,
      }),
    );
    if (props.alarmEmail) {
      const subscription = topic.addSubscription(new EmailSubscription(props.alarmEmail));
      Validations.of(subscription).acknowledge({
        id: 'Serverless-SNSRedrivePolicy',
        reason:
          'An e-mail that cannot be delivered is not worth keeping: the alarm itself stays in ALARM state in CloudWatch and on the dashboard until the cause is fixed, and `hookledger doctor` reports a topic without a confirmed subscription.',
      });
    }
    this.alarmTopic = topic;
    this.action = new SnsAction(topic);

    // Intake.
    const api = props.api;
    const apiCount = api.metricCount({ period: ONE_MINUTE, statistic: 'Sum' });
    const api4xx = api.metricClientError({ period: ONE_MINUTE, statistic: 'Sum' });
    const api5xx = api.metricServerError({ period: ONE_MINUTE, statistic: 'Sum' });
    this.alarm('Api5xx', {
      metric: api5xx,
      threshold: 0,
      description: 'Intake returned 5xx: webhooks were not recorded (providers will retry).',
    });

    // Fan-out.
    const iteratorAge = props.fanOut.metric('IteratorAge', { period: ONE_MINUTE, statistic: 'Maximum' });
    const fanOutErrors = props.fanOut.metricErrors({ period: ONE_MINUTE, statistic: 'Sum' });
    const failures = props.fanOutFailureQueue.metricApproximateNumberOfMessagesVisible({
      period: ONE_MINUTE,
      statistic: 'Maximum',
    });
    this.alarm('FanOutFailures', {
      metric: failures,
      threshold: 0,
      description: 'The fan-out gave up on stream records (see the failure queue); replay them from the EventStore.',
    });

    // Reconcile.
    // The custom metrics the functions publish as EMF, summed per period.
    const custom = (metricName: string, dimensionsMap: Record<string, string>, period: Duration) =>
      new cloudwatch.Metric({ namespace: METRICS_NAMESPACE, metricName, dimensionsMap, statistic: 'Sum', period });
    const reconcileDimensions = { [DIMENSION.stack]: props.reconcileStackDimension ?? stack.stackName };
    const violations = custom(RECONCILE_VIOLATIONS_METRIC, reconcileDimensions, props.reconcileInterval);
    this.alarm('ReconcileViolations', {
      metric: violations,
      threshold: 0,
      description: 'Reconcile found receipts without their ledger rows, or deliveries stuck past their lease.',
      // Reconcile reports once per interval: keep the last verdict until the next report.
      treatMissingData: cloudwatch.TreatMissingData.IGNORE,
    });
    // Deliveries the reconciler re-queued (its repair); graphed beside the violations, never alarmed:
    // a repair is the system mending itself, the violations alarm already said something was lost.
    const repairs = custom(RECONCILE_REPAIRS_METRIC, reconcileDimensions, props.reconcileInterval);
    // 1 for a run that stopped at its time budget and left a checkpoint, 0 for one that finished. One
    // such run is the design working (the next resumes it); RECONCILE_INCOMPLETE_RUNS in a row is a
    // backlog that is not catching up, so no window is being checked to its end.
    const incomplete = custom(RECONCILE_INCOMPLETE_METRIC, reconcileDimensions, props.reconcileInterval);
    this.alarm('ReconcileIncomplete', {
      metric: incomplete,
      threshold: 0,
      evaluationPeriods: RECONCILE_INCOMPLETE_RUNS,
      description: `Reconcile stopped at its time budget ${RECONCILE_INCOMPLETE_RUNS} runs in a row: its backlog (checkpoint, missed windows) is not catching up. Check the hours behind with \`hookledger reconcile --from ... --to ...\` (each scheduled run logs where it stopped, \`resume_at\`).`,
      // A run that did not report (its errors and dead letters have their own alarms) neither ends
      // nor extends a streak.
      treatMissingData: cloudwatch.TreatMissingData.IGNORE,
    });
    // Intake could not read a signing secret and served the last known one: fine for up to an hour,
    // then every request is answered 503. Alarm at the first, so someone looks before that.
    const secretFailures = (served: 'stale' | 'none') =>
      custom(SECRET_REFRESH_FAILURE_METRIC, { [DIMENSION.stack]: stack.stackName, [DIMENSION.served]: served }, Duration.minutes(5));
    const secretsStale = secretFailures('stale');
    this.alarm('SecretsServedStale', {
      metric: secretsStale,
      threshold: 0,
      description:
        'Intake could not read a signing secret from Secrets Manager and is verifying with the last known values; after an hour it answers 503. Check Secrets Manager access from the ingest function.',
    });
    const secretsNone = secretFailures('none');
    const reconcileErrors = props.reconciler.metricErrors({ period: props.reconcileInterval, statistic: 'Sum' });
    this.alarm('ReconcileErrors', {
      metric: reconcileErrors,
      threshold: 0,
      description: 'Reconcile failed, so the violations alarm is not being updated.',
    });
    if (props.reconcileDeadLetterQueue) {
      this.alarm('ReconcileDeadLetters', {
        metric: props.reconcileDeadLetterQueue.metricApproximateNumberOfMessagesVisible({ period: ONE_MINUTE, statistic: 'Maximum' }),
        threshold: 0,
        description:
          'A scheduled reconcile run was not delivered or failed after its retries (see its dead-letter queue); run `hookledger reconcile` for that hour.',
      });
    }

    const dashboard = new cloudwatch.Dashboard(this, 'Dashboard', { defaultInterval: Duration.hours(3) });
    dashboard.addWidgets(
      new cloudwatch.GraphWidget({ title: 'Intake requests', left: [apiCount], width: 8 }),
      new cloudwatch.GraphWidget({ title: 'Intake 4xx / 5xx', left: [label(api4xx, '4xx'), label(api5xx, '5xx')], width: 8 }),
      new cloudwatch.GraphWidget({
        title: 'Intake latency (ms)',
        left: [
          label(api.metricLatency({ period: ONE_MINUTE, statistic: 'p50' }), 'p50'),
          label(api.metricLatency({ period: ONE_MINUTE, statistic: 'p99' }), 'p99'),
        ],
        width: 8,
      }),
    );
    dashboard.addWidgets(
      new cloudwatch.GraphWidget({
        title: 'Intake outcomes (recorded, duplicate, refusal codes)',
        // Published by the ingest function as EMF (lambdas/shared/intake-metrics.ts): one series per outcome.
        left: [
          new cloudwatch.MathExpression({
            // Only this stack's series: another copy in the account publishes under its own Stack.
            expression: `SEARCH('{${METRICS_NAMESPACE},${INTAKE_DIMENSIONS.join(',')}} MetricName="${INTAKE_METRIC}" Stack="${stackDimension}"', 'Sum', 60)`,
            label: '',
            period: ONE_MINUTE,
          }),
        ],
        width: 24,
        stacked: true,
      }),
    );
    dashboard.addWidgets(
      new cloudwatch.GraphWidget({ title: 'Fan-out iterator age', left: [label(iteratorAge, 'max iterator age (ms)')], width: 8 }),
      new cloudwatch.GraphWidget({
        title: 'Fan-out errors and failures',
        left: [label(fanOutErrors, 'errors')],
        right: [label(failures, 'failure queue')],
        width: 8,
      }),
      new cloudwatch.GraphWidget({
        title: 'Reconcile violations and repairs',
        left: [label(violations, 'violations'), label(repairs, 'repaired')],
        right: [label(reconcileErrors, 'errors')],
        width: 8,
      }),
    );
    dashboard.addWidgets(
      new cloudwatch.GraphWidget({
        title: 'Signing secrets unreadable (intake)',
        left: [label(secretsStale, 'served last known'), label(secretsNone, 'none cached: 503')],
        width: 12,
      }),
      new cloudwatch.GraphWidget({
        title: 'Reconcile runs stopped at their time budget (incomplete)',
        left: [label(incomplete, 'incomplete (1) / finished (0)')],
        leftYAxis: { min: 0, max: 1 },
        width: 12,
      }),
    );
    dashboard.addWidgets(
      new cloudwatch.GraphWidget({
        title: 'Fan-out deliveries skipped: consumer no longer configured',
        // Published by the fan-out as EMF (lambdas/fanout/metrics.ts): one series per removed consumer.
        left: [
          new cloudwatch.MathExpression({
            expression: `SEARCH('{${METRICS_NAMESPACE},${FANOUT_SKIPPED_DIMENSIONS.join(',')}} MetricName="${FANOUT_SKIPPED_METRIC}" Stack="${stackDimension}"', 'Sum', 60)`,
            label: '',
            period: ONE_MINUTE,
          }),
        ],
        width: 24,
      }),
    );

    const consumersScope = new Construct(this, 'Consumers');
    for (const c of props.consumers) {
      const scopeForConsumer = new Construct(consumersScope, c.consumerId);
      const age = c.queue.metricApproximateAgeOfOldestMessage({ period: ONE_MINUTE, statistic: 'Maximum' });
      const visible = c.queue.metricApproximateNumberOfMessagesVisible({ period: ONE_MINUTE, statistic: 'Maximum' });
      const inFlight = c.queue.metricApproximateNumberOfMessagesNotVisible({ period: ONE_MINUTE, statistic: 'Maximum' });
      const dlqDepth = c.deadLetterQueue.metricApproximateNumberOfMessagesVisible({ period: ONE_MINUTE, statistic: 'Maximum' });
      const workerErrors = c.worker.metricErrors({ period: ONE_MINUTE, statistic: 'Sum' });

      this.alarm('OldestMessageAge', {
        scope: scopeForConsumer,
        metric: age,
        threshold: c.alarmAgeSeconds,
        description: `Consumer ${c.consumerId} is falling behind: its oldest message is older than ${c.alarmAgeSeconds} s.`,
      });
      this.alarm('DeadLetters', {
        scope: scopeForConsumer,
        metric: dlqDepth,
        threshold: 0,
        description: `Consumer ${c.consumerId} has messages in its DLQ: fix the cause, then redrive from the console.`,
      });
      if (c.circuitBreaker) {
        this.alarm('CircuitOpen', {
          scope: scopeForConsumer,
          metric: custom(HTTP_CIRCUIT_OPEN_METRIC, { [DIMENSION.stack]: stack.stackName, [DIMENSION.consumer]: c.consumerId }, ONE_MINUTE),
          threshold: 0,
          description: `HTTP consumer ${c.consumerId} opened its circuit breaker and is paused: fix the destination, then \`hookledger resume ${c.consumerId}\`.`,
          // The breaker stays open until someone resumes: keep the alarm until then.
          treatMissingData: cloudwatch.TreatMissingData.IGNORE,
        });
      }
      dashboard.addWidgets(
        new cloudwatch.GraphWidget({
          title: `${c.consumerId}: oldest message age (s)`,
          left: [age],
          leftAnnotations: [{ value: c.alarmAgeSeconds, label: 'alarm' }],
          width: 6,
        }),
        new cloudwatch.GraphWidget({
          title: `${c.consumerId}: messages`,
          left: [label(visible, 'visible'), label(inFlight, 'not visible (in flight)')],
          width: 6,
        }),
        new cloudwatch.GraphWidget({ title: `${c.consumerId}: DLQ depth`, left: [dlqDepth], width: 6 }),
        new cloudwatch.GraphWidget({ title: `${c.consumerId}: worker errors`, left: [workerErrors], width: 6 }),
      );
    }
    dashboard.addWidgets(new cloudwatch.AlarmStatusWidget({ title: 'Alarms', alarms: this.alarms, width: 24 }));
    this.dashboard = dashboard;
  }

  private alarm(
    id: string,
    opts: {
      readonly scope?: Construct;
      readonly metric: cloudwatch.IMetric;
      readonly threshold: number;
      readonly description: string;
      readonly treatMissingData?: cloudwatch.TreatMissingData;
      /** Breaching periods in a row before it fires (every one of them must breach). @default 1 */
      readonly evaluationPeriods?: number;
    },
  ): void {
    const alarm = new cloudwatch.Alarm(opts.scope ?? this, id, {
      metric: opts.metric,
      threshold: opts.threshold,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: opts.evaluationPeriods ?? 1,
      ...(opts.evaluationPeriods ? { datapointsToAlarm: opts.evaluationPeriods } : {}),
      treatMissingData: opts.treatMissingData ?? cloudwatch.TreatMissingData.NOT_BREACHING,
      alarmDescription: opts.description,
    });
    alarm.addAlarmAction(this.action);
    alarm.addOkAction(this.action);
    this.alarms.push(alarm);
  }
}
