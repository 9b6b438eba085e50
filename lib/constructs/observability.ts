import { ArnFormat, Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import * as chatbot from 'aws-cdk-lib/aws-chatbot';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sns from 'aws-cdk-lib/aws-sns';
import { EmailSubscription, UrlSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { ConfigurationError } from '../../core/errors';
import {
  DEFAULT_SIGNATURE_FAILURE_THRESHOLD,
  DEFAULT_SIGNATURE_FAILURE_WINDOW_MINUTES,
  DIMENSION,
  FANOUT_SKIPPED_DIMENSIONS,
  FANOUT_SKIPPED_METRIC,
  HTTP_CIRCUIT_OPEN_METRIC,
  INTAKE_DIMENSIONS,
  INTAKE_METRIC,
  MAX_CARRIED,
  METRICS_NAMESPACE,
  RECONCILE_CARRY_DROPPED_METRIC,
  RECONCILE_INCOMPLETE_METRIC,
  RECONCILE_REPAIRS_METRIC,
  RECONCILE_VIOLATIONS_METRIC,
  SECRET_REFRESH_FAILURE_METRIC,
  SIGNATURE_FAILURE_METRIC,
} from '../../core/metrics';
import type { IntakeEndpointMetrics } from './ingest-api';

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
  /** Intake's endpoint: the HTTP API, or the function URL's metrics (IngestApi.metrics). */
  readonly api: IntakeEndpointMetrics;
  /** The intake function (IngestApi.handler): IntakeThrottles watches its Throttles, whatever the endpoint. */
  readonly intake: lambda.IFunction;
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
   * The Slack channel the topic posts to through AWS Chatbot (config `alarms.slack`).
   * @default - no Slack channel
   */
  readonly alarmSlack?: AlarmSlackChannel;
  /**
   * HTTPS endpoints subscribed to the topic, a pager's events URL for instance (config `alarms.https`).
   * @default - none
   */
  readonly alarmHttpsEndpoints?: readonly string[];
  /**
   * The sources intake serves: one SignatureFailures alarm each (`Sources/<id>/SignatureFailures`).
   * @default - none
   */
  readonly sourceIds?: readonly string[];
  /**
   * When a source's SignatureFailures alarm fires (config `alarms.signatureFailures`).
   * @default - 10 verification failures within 15 minutes
   */
  readonly signatureFailures?: SignatureFailureAlarm;
  /**
   * Value of the `Stack` dimension the ingest and reconcile functions publish their metrics with
   * (`Hookledger/IntakeRequests`, `Hookledger/ReconcileViolations`); the dashboard and alarms read
   * only that stack's series.
   * @default - this stack's name
   */
  readonly reconcileStackDimension?: string;
}

/** A source's signature-failure alarm: ALARM at `threshold` failures summed over one period of `windowMinutes`. */
export interface SignatureFailureAlarm {
  /** Failures that fire it, 1 or more. */
  readonly threshold: number;
  /** Its period, whole minutes from 1 to a day (CloudWatch's longest period for one evaluation). */
  readonly windowMinutes: number;
}

/** A Slack channel in a workspace authorized with AWS Chatbot. */
export interface AlarmSlackChannel {
  readonly workspaceId: string;
  readonly channelId: string;
}

/** Where the topic's messages go besides e-mail. */
interface AlarmDestinations {
  readonly email?: string;
  readonly slack?: AlarmSlackChannel;
  readonly https?: readonly string[];
}

const ONE_MINUTE = Duration.minutes(1);
/** CloudWatch evaluates at most one day of data for an alarm: its period times its evaluation periods. */
const MAX_ALARM_PERIOD_MINUTES = 24 * 60;
/** Chatbot configuration names are unique per account and at most this long. */
const CHATBOT_CONFIGURATION_NAME_MAX = 128;
/** Why SNS keeps no alarm message it failed to deliver (cdk-nag Serverless-SNSRedrivePolicy, every subscription). */
const UNDELIVERED_ALARM_REASON =
  'An alarm message that cannot be delivered is not worth keeping: the alarm itself stays in ALARM state in CloudWatch and on the dashboard until the cause is fixed, and `hookledger doctor` reports a topic without a confirmed subscription.';
/** Consecutive reconcile runs stopped at their time budget before the ReconcileIncomplete alarm fires. */
export const RECONCILE_INCOMPLETE_RUNS = 3;

/** Labels only on dashboard copies: a labelled metric would turn an alarm into a metric-math alarm. */
function label(metric: cloudwatch.Metric, text: string): cloudwatch.Metric {
  return metric.with({ label: text });
}

/** A custom metric the functions publish as EMF (names in core/metrics.ts), summed per period. */
function customMetric(metricName: string, dimensionsMap: Record<string, string>, period: Duration): cloudwatch.Metric {
  return new cloudwatch.Metric({ namespace: METRICS_NAMESPACE, metricName, dimensionsMap, statistic: 'Sum', period });
}

/** One series per value of the other dimensions of an EMF metric, this stack's only. */
function searchOfStack(metricName: string, dimensions: readonly string[], stackDimension: string): cloudwatch.MathExpression {
  return new cloudwatch.MathExpression({
    // Only this stack's series: another copy in the account publishes under its own Stack.
    expression: `SEARCH('{${METRICS_NAMESPACE},${dimensions.join(',')}} MetricName="${metricName}" Stack="${stackDimension}"', 'Sum', 60)`,
    label: '',
    period: ONE_MINUTE,
  });
}

/** The condition admitting CloudWatch alarms of this stack's account only. */
function alarmsOfThisAccount(stack: Stack): Record<string, unknown> {
  return {
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
}

/** What one alarm watches and says; every alarm notifies the topic when it fires and when it clears. */
interface AlarmSpec {
  readonly scope?: Construct;
  readonly metric: cloudwatch.IMetric;
  readonly threshold: number;
  readonly description: string;
  readonly treatMissingData?: cloudwatch.TreatMissingData;
  /** Breaching periods in a row before it fires (every one of them must breach). @default 1 */
  readonly evaluationPeriods?: number;
  /** @default GREATER_THAN_THRESHOLD */
  readonly comparisonOperator?: cloudwatch.ComparisonOperator;
}

interface IntakeSignals {
  readonly api: IntakeEndpointMetrics;
  readonly count: cloudwatch.Metric;
  readonly clientErrors: cloudwatch.Metric;
  readonly serverErrors: cloudwatch.Metric;
  readonly throttles: cloudwatch.Metric;
  readonly concurrency: cloudwatch.Metric;
}

interface FanOutSignals {
  readonly iteratorAge: cloudwatch.Metric;
  readonly errors: cloudwatch.Metric;
  readonly failures: cloudwatch.Metric;
}

interface ReconcileSignals {
  readonly violations: cloudwatch.Metric;
  readonly repairs: cloudwatch.Metric;
  readonly incomplete: cloudwatch.Metric;
}

interface SecretSignals {
  readonly stale: cloudwatch.Metric;
  readonly none: cloudwatch.Metric;
}

/** Everything the dashboard's overview rows graph. */
interface Signals {
  readonly intake: IntakeSignals;
  readonly fanOut: FanOutSignals;
  readonly reconcile: ReconcileSignals;
  readonly reconcileErrors: cloudwatch.Metric;
  readonly secrets: SecretSignals;
}

/**
 * The alarm topic, the alarms that page on lost or stuck work, and one dashboard for intake, fan-out
 * and every consumer, one builder per concern. Construct ids are a contract: they make the alarms'
 * logical ids and names, and a changed id would replace an alarm and lose its history.
 */
export class Observability extends Construct {
  readonly alarmTopic: sns.ITopic;
  readonly dashboard: cloudwatch.Dashboard;
  readonly alarms: cloudwatch.IAlarm[] = [];
  private readonly action: SnsAction;
  /** The Stack dimension value of every custom metric this stack's functions publish. */
  private readonly stackDimension: string;

  constructor(scope: Construct, id: string, props: ObservabilityProps) {
    super(scope, id);
    this.stackDimension = props.reconcileStackDimension ?? Stack.of(this).stackName;
    this.alarmTopic = this.buildAlarmTopic({ email: props.alarmEmail, slack: props.alarmSlack, https: props.alarmHttpsEndpoints });
    this.action = new SnsAction(this.alarmTopic);

    // The alarms, in the order the dashboard's alarm status widget lists them.
    const signals: Signals = {
      intake: this.watchIntake(props.api, props.intake),
      fanOut: this.watchFanOut(props.fanOut, props.fanOutFailureQueue),
      reconcile: this.watchReconcileResults(props.reconcileInterval),
      secrets: this.watchSecrets(),
      reconcileErrors: this.watchReconcileRuns(props),
    };
    this.watchSignatures(props.sourceIds ?? [], props.signatureFailures ?? DEFAULT_SIGNATURE_FAILURE_ALARM);

    this.dashboard = new cloudwatch.Dashboard(this, 'Dashboard', { defaultInterval: Duration.hours(3) });
    for (const row of overviewRows(signals, this.stackDimension)) this.dashboard.addWidgets(...row);
    const consumersScope = new Construct(this, 'Consumers');
    for (const c of props.consumers) this.dashboard.addWidgets(...this.watchConsumer(consumersScope, c));
    this.dashboard.addWidgets(new cloudwatch.AlarmStatusWidget({ title: 'Alarms', alarms: this.alarms, width: 24 }));
  }

  /**
   * The SSL-only topic every alarm notifies, under its own key. The SSL-only topic policy replaces
   * SNS's default policy, so CloudWatch must be admitted explicitly (this account's alarms only).
   */
  private buildAlarmTopic(destinations: AlarmDestinations): sns.ITopic {
    const cloudwatchPrincipal = new iam.ServicePrincipal('cloudwatch.amazonaws.com');
    const fromOurAlarms = alarmsOfThisAccount(Stack.of(this));
    const topic = new sns.Topic(this, 'AlarmTopic', {
      displayName: 'hookledger alarms',
      masterKey: this.alarmTopicKey(cloudwatchPrincipal, fromOurAlarms),
      enforceSSL: true,
    });
    topic.addToResourcePolicy(
      new iam.PolicyStatement({
        principals: [cloudwatchPrincipal],
        actions: ['sns:Publish'],
        resources: [topic.topicArn],
        conditions: fromOurAlarms,
      }),
    );
    this.subscribeDestinations(topic, destinations);
    return topic;
  }

  /**
   * E-mail, Slack and HTTPS endpoints. None of them needs the topic's key: SNS decrypts a message
   * before it delivers it (Chatbot is an HTTPS subscriber of the topic too), only a publisher
   * (CloudWatch) encrypts with it.
   */
  private subscribeDestinations(topic: sns.Topic, { email, slack, https = [] }: AlarmDestinations): void {
    const subscriptions: sns.Subscription[] = [];
    if (email) subscriptions.push(topic.addSubscription(new EmailSubscription(email)));
    // Endpoint URLs make the subscriptions' ids, so reordering the list replaces nothing.
    for (const url of https) {
      subscriptions.push(topic.addSubscription(new UrlSubscription(url, { protocol: sns.SubscriptionProtocol.HTTPS })));
    }
    for (const subscription of subscriptions) {
      Validations.of(subscription).acknowledge({ id: 'Serverless-SNSRedrivePolicy', reason: UNDELIVERED_ALARM_REASON });
    }
    if (slack) this.slackChannel(topic, slack);
  }

  /**
   * The Slack channel the alarms post to. Chatbot renders CloudWatch alarm messages itself; its role
   * is what commands typed in the channel may do, so it gets no permissions and a read-only
   * CloudWatch guardrail instead of the AdministratorAccess default.
   */
  private slackChannel(topic: sns.ITopic, slack: AlarmSlackChannel): chatbot.SlackChannelConfiguration {
    const role = new iam.Role(this, 'AlarmSlackChannelRole', {
      assumedBy: new iam.ServicePrincipal('chatbot.amazonaws.com'),
      description: 'AWS Chatbot channel of the hookledger alarms: notifications only, no permissions',
    });
    return new chatbot.SlackChannelConfiguration(this, 'AlarmSlackChannel', {
      slackChannelConfigurationName: `${Stack.of(this).stackName}-alarms`.slice(0, CHATBOT_CONFIGURATION_NAME_MAX),
      slackWorkspaceId: slack.workspaceId,
      slackChannelId: slack.channelId,
      notificationTopics: [topic],
      role,
      guardrailPolicies: [iam.ManagedPolicy.fromAwsManagedPolicyName('CloudWatchReadOnlyAccess')],
    });
  }

  /**
   * CloudWatch cannot publish to a topic encrypted with the AWS managed aws/sns key (its policy cannot
   * admit cloudwatch.amazonaws.com), so the topic gets its own key that does.
   */
  private alarmTopicKey(cloudwatchPrincipal: iam.IPrincipal, fromOurAlarms: Record<string, unknown>): kms.IKey {
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
    return key;
  }

  /** Intake: alarms Api5xx and IntakeThrottles. */
  private watchIntake(api: IntakeEndpointMetrics, intake: lambda.IFunction): IntakeSignals {
    const serverErrors = api.metricServerError({ period: ONE_MINUTE, statistic: 'Sum' });
    this.alarm('Api5xx', {
      metric: serverErrors,
      threshold: 0,
      description: 'Intake returned 5xx: webhooks were not recorded (providers will retry).',
    });
    // Requests Lambda refused for want of concurrency (the account's pool, or intake.reservedConcurrency,
    // used up). On a function URL they are answered 429 and counted in Url4xxCount, so this is the only
    // alarm that sees them. Built for the HTTP API too: there the stage's throttling refuses a burst
    // before Lambda is invoked (not counted here), so it fires only when the pool or the reservation
    // runs out below the stage's limits, which is the same cause with the same fix; one alarm under one
    // name keeps the alarm list the same whichever endpoint is deployed.
    const throttles = intake.metricThrottles({ period: ONE_MINUTE, statistic: 'Sum' });
    this.alarm('IntakeThrottles', {
      metric: throttles,
      threshold: 0,
      description:
        "Lambda refused intake requests for want of concurrency: the webhooks were not recorded (on a function URL they were answered 429; providers retry). Intake's concurrency is intake.reservedConcurrency when set, else the account's shared pool: raise the reservation, or the account's Lambda concurrency quota, or find what else holds the pool (AWS/Lambda ClaimedAccountConcurrency).",
    });
    return {
      api,
      count: api.metricCount({ period: ONE_MINUTE, statistic: 'Sum' }),
      clientErrors: api.metricClientError({ period: ONE_MINUTE, statistic: 'Sum' }),
      serverErrors,
      throttles,
      concurrency: intake.metric('ConcurrentExecutions', { period: ONE_MINUTE, statistic: 'Maximum' }),
    };
  }

  /** Fan-out: alarm FanOutFailures (records on its on-failure queue). */
  private watchFanOut(fanOut: lambda.IFunction, failureQueue: sqs.IQueue): FanOutSignals {
    const failures = failureQueue.metricApproximateNumberOfMessagesVisible({ period: ONE_MINUTE, statistic: 'Maximum' });
    this.alarm('FanOutFailures', {
      metric: failures,
      threshold: 0,
      description: 'The fan-out gave up on stream records (see the failure queue); replay them from the EventStore.',
    });
    return {
      iteratorAge: fanOut.metric('IteratorAge', { period: ONE_MINUTE, statistic: 'Maximum' }),
      errors: fanOut.metricErrors({ period: ONE_MINUTE, statistic: 'Sum' }),
      failures,
    };
  }

  /** What each reconcile run reports, once per interval: alarms ReconcileViolations, ReconcileIncomplete and ReconcileCarryDropped. */
  private watchReconcileResults(interval: Duration): ReconcileSignals {
    const dimensions = { [DIMENSION.stack]: this.stackDimension };
    const violations = customMetric(RECONCILE_VIOLATIONS_METRIC, dimensions, interval);
    this.alarm('ReconcileViolations', {
      metric: violations,
      threshold: 0,
      description: 'Reconcile found receipts without their ledger rows, or deliveries stuck past their lease.',
      // Reconcile reports once per interval: keep the last verdict until the next report.
      treatMissingData: cloudwatch.TreatMissingData.IGNORE,
    });
    // 1 for a run that stopped at its time budget and left a checkpoint, 0 for one that finished. One
    // such run is the design working (the next resumes it); RECONCILE_INCOMPLETE_RUNS in a row is a
    // backlog that is not catching up, so no window is being checked to its end.
    const incomplete = customMetric(RECONCILE_INCOMPLETE_METRIC, dimensions, interval);
    this.alarm('ReconcileIncomplete', {
      metric: incomplete,
      threshold: 0,
      evaluationPeriods: RECONCILE_INCOMPLETE_RUNS,
      description: `Reconcile stopped at its time budget ${RECONCILE_INCOMPLETE_RUNS} runs in a row: its backlog (checkpoint, missed windows) is not catching up. Check the hours behind with \`hookledger reconcile --from ... --to ...\` (each scheduled run logs where it stopped, \`resume_at\`).`,
      // A run that did not report (its errors and dead letters have their own alarms) neither ends
      // nor extends a streak.
      treatMissingData: cloudwatch.TreatMissingData.IGNORE,
    });
    // Deliveries the carry-forward could not keep (over MAX_CARRIED): no scheduled run checks them
    // again, so someone must repair them by hand, and the run's log names them.
    this.alarm('ReconcileCarryDropped', {
      metric: customMetric(RECONCILE_CARRY_DROPPED_METRIC, dimensions, interval),
      threshold: 0,
      description: `Reconcile left unrepaired deliveries out of its carry-forward (it keeps at most ${MAX_CARRIED.toLocaleString('en-US')}), so no scheduled run will check them again. Its log names them (\`not carried forward\`, with source, event_id and consumer_id): repair them with \`hookledger reconcile --repair --from ... --to ...\` over their window once their consumers are back.`,
      treatMissingData: cloudwatch.TreatMissingData.IGNORE,
    });
    // Deliveries the reconciler re-queued (its repair); graphed beside the violations, never alarmed:
    // a repair is the system mending itself, the violations alarm already said something was lost.
    const repairs = customMetric(RECONCILE_REPAIRS_METRIC, dimensions, interval);
    return { violations, repairs, incomplete };
  }

  /**
   * Intake could not read a signing secret and served the last known one: fine for up to an hour,
   * then every request is answered 503. Alarm SecretsServedStale at the first, so someone looks before that.
   */
  private watchSecrets(): SecretSignals {
    const secretFailures = (served: 'stale' | 'none') =>
      customMetric(
        SECRET_REFRESH_FAILURE_METRIC,
        { [DIMENSION.stack]: Stack.of(this).stackName, [DIMENSION.served]: served },
        Duration.minutes(5),
      );
    const stale = secretFailures('stale');
    this.alarm('SecretsServedStale', {
      metric: stale,
      threshold: 0,
      description:
        'Intake could not read a signing secret from Secrets Manager and is verifying with the last known values; after an hour it answers 503. Check Secrets Manager access from the ingest function.',
    });
    return { stale, none: secretFailures('none') };
  }

  /**
   * One alarm per source under `Sources/<id>`: SignatureFailures, the failures intake counted for
   * that source (lambdas/shared/metrics.ts) summed over one period of the window. Api5xx cannot see
   * them (each is a 401), and the usual cause pages no one otherwise: a secret rotated on one side only.
   */
  private watchSignatures(sourceIds: readonly string[], rule: SignatureFailureAlarm): void {
    checkSignatureFailureAlarm(rule);
    const sourcesScope = new Construct(this, 'Sources');
    const window = `${rule.windowMinutes} min`;
    for (const sourceId of sourceIds) {
      this.alarm('SignatureFailures', {
        scope: new Construct(sourcesScope, sourceId),
        metric: customMetric(
          SIGNATURE_FAILURE_METRIC,
          { [DIMENSION.stack]: this.stackDimension, [DIMENSION.source]: sourceId },
          Duration.minutes(rule.windowMinutes),
        ),
        threshold: rule.threshold,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        description: `Intake refused ${rule.threshold} or more requests to source ${sourceId} within ${window}: they failed verification (signature missing or wrong, or timestamp outside its tolerance). Usually its signing secret was rotated on one side only: every webhook is answered 401, the provider retries, then disables the endpoint. Compare with \`hookledger sources remote ${sourceId}\`; store the secret the provider signs with by \`hookledger secrets rotate ${sourceId} --value-file -\` (or rotate here and give the provider the new one). The intake log's \`webhook rejected\` lines give each refusal's reason: signature_mismatch after a one-sided rotation, missing_signature from a scanner's probe.`,
      });
    }
  }

  /** Whether the reconcile runs happen at all: alarms ReconcileErrors and ReconcileDeadLetters. */
  private watchReconcileRuns(props: ObservabilityProps): cloudwatch.Metric {
    const errors = props.reconciler.metricErrors({ period: props.reconcileInterval, statistic: 'Sum' });
    this.alarm('ReconcileErrors', {
      metric: errors,
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
    return errors;
  }

  /** One consumer: alarms OldestMessageAge, DeadLetters (and CircuitOpen for HTTP) under `Consumers/<id>`; its dashboard row. */
  private watchConsumer(consumersScope: Construct, c: ConsumerSignals): cloudwatch.IWidget[] {
    const scope = new Construct(consumersScope, c.consumerId);
    const age = c.queue.metricApproximateAgeOfOldestMessage({ period: ONE_MINUTE, statistic: 'Maximum' });
    const dlqDepth = c.deadLetterQueue.metricApproximateNumberOfMessagesVisible({ period: ONE_MINUTE, statistic: 'Maximum' });
    this.alarm('OldestMessageAge', {
      scope,
      metric: age,
      threshold: c.alarmAgeSeconds,
      description: `Consumer ${c.consumerId} is falling behind: its oldest message is older than ${c.alarmAgeSeconds} s.`,
    });
    this.alarm('DeadLetters', {
      scope,
      metric: dlqDepth,
      threshold: 0,
      description: `Consumer ${c.consumerId} has messages in its DLQ: fix the cause, then redrive from the console.`,
    });
    if (c.circuitBreaker) {
      this.alarm('CircuitOpen', {
        scope,
        metric: customMetric(
          HTTP_CIRCUIT_OPEN_METRIC,
          { [DIMENSION.stack]: Stack.of(this).stackName, [DIMENSION.consumer]: c.consumerId },
          ONE_MINUTE,
        ),
        threshold: 0,
        description: `HTTP consumer ${c.consumerId} opened its circuit breaker and is paused: fix the destination, then \`hookledger resume ${c.consumerId}\`.`,
        // The breaker stays open until someone resumes: keep the alarm until then.
        treatMissingData: cloudwatch.TreatMissingData.IGNORE,
      });
    }
    return consumerRow(c, age, dlqDepth);
  }

  private alarm(id: string, opts: AlarmSpec): void {
    const alarm = new cloudwatch.Alarm(opts.scope ?? this, id, {
      metric: opts.metric,
      threshold: opts.threshold,
      comparisonOperator: opts.comparisonOperator ?? cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
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

/** As the config's defaults (core/metrics.ts), for a stack built without them. */
const DEFAULT_SIGNATURE_FAILURE_ALARM: SignatureFailureAlarm = {
  threshold: DEFAULT_SIGNATURE_FAILURE_THRESHOLD,
  windowMinutes: DEFAULT_SIGNATURE_FAILURE_WINDOW_MINUTES,
};

function checkSignatureFailureAlarm({ threshold, windowMinutes }: SignatureFailureAlarm): void {
  if (!Number.isInteger(threshold) || threshold < 1) {
    throw new ConfigurationError(`signatureFailures.threshold must be a whole number of failures, 1 or more, got ${threshold}`);
  }
  if (!Number.isInteger(windowMinutes) || windowMinutes < 1 || windowMinutes > MAX_ALARM_PERIOD_MINUTES) {
    throw new ConfigurationError(
      `signatureFailures.windowMinutes must be whole minutes from 1 to ${MAX_ALARM_PERIOD_MINUTES} (CloudWatch's longest alarm period), got ${windowMinutes}`,
    );
  }
}

/** The dashboard rows above the consumers': intake, its outcomes, the pipeline, secrets and reconcile runs, skips. */
function overviewRows(s: Signals, stackDimension: string): cloudwatch.IWidget[][] {
  return [
    intakeRow(s.intake),
    [intakeOutcomesWidget(stackDimension)],
    pipelineRow(s),
    healthRow(s),
    [skippedDeliveriesWidget(stackDimension)],
  ];
}

function intakeRow({ api, count, clientErrors, serverErrors, throttles, concurrency }: IntakeSignals): cloudwatch.IWidget[] {
  return [
    new cloudwatch.GraphWidget({ title: 'Intake requests', left: [count], width: 6 }),
    new cloudwatch.GraphWidget({ title: 'Intake 4xx / 5xx', left: [label(clientErrors, '4xx'), label(serverErrors, '5xx')], width: 6 }),
    new cloudwatch.GraphWidget({
      title: 'Intake latency (ms)',
      left: [
        label(api.metricLatency({ period: ONE_MINUTE, statistic: 'p50' }), 'p50'),
        label(api.metricLatency({ period: ONE_MINUTE, statistic: 'p99' }), 'p99'),
      ],
      width: 6,
    }),
    new cloudwatch.GraphWidget({
      title: 'Intake throttled requests and concurrency',
      left: [label(throttles, 'throttled')],
      right: [label(concurrency, 'concurrent executions (max)')],
      width: 6,
    }),
  ];
}

function intakeOutcomesWidget(stackDimension: string): cloudwatch.IWidget {
  return new cloudwatch.GraphWidget({
    title: 'Intake outcomes (recorded, duplicate, refusal codes)',
    // Published by the ingest function as EMF (lambdas/shared/metrics.ts): one series per outcome.
    left: [searchOfStack(INTAKE_METRIC, INTAKE_DIMENSIONS, stackDimension)],
    width: 24,
    stacked: true,
  });
}

function pipelineRow({ fanOut, reconcile, reconcileErrors }: Signals): cloudwatch.IWidget[] {
  return [
    new cloudwatch.GraphWidget({ title: 'Fan-out iterator age', left: [label(fanOut.iteratorAge, 'max iterator age (ms)')], width: 8 }),
    new cloudwatch.GraphWidget({
      title: 'Fan-out errors and failures',
      left: [label(fanOut.errors, 'errors')],
      right: [label(fanOut.failures, 'failure queue')],
      width: 8,
    }),
    new cloudwatch.GraphWidget({
      title: 'Reconcile violations and repairs',
      left: [label(reconcile.violations, 'violations'), label(reconcile.repairs, 'repaired')],
      right: [label(reconcileErrors, 'errors')],
      width: 8,
    }),
  ];
}

function healthRow({ secrets, reconcile }: Signals): cloudwatch.IWidget[] {
  return [
    new cloudwatch.GraphWidget({
      title: 'Signing secrets unreadable (intake)',
      left: [label(secrets.stale, 'served last known'), label(secrets.none, 'none cached: 503')],
      width: 12,
    }),
    new cloudwatch.GraphWidget({
      title: 'Reconcile runs stopped at their time budget (incomplete)',
      left: [label(reconcile.incomplete, 'incomplete (1) / finished (0)')],
      leftYAxis: { min: 0, max: 1 },
      width: 12,
    }),
  ];
}

function skippedDeliveriesWidget(stackDimension: string): cloudwatch.IWidget {
  return new cloudwatch.GraphWidget({
    title: 'Fan-out deliveries skipped: consumer no longer configured',
    // Published by the fan-out as EMF (lambdas/shared/metrics.ts): one series per removed consumer.
    left: [searchOfStack(FANOUT_SKIPPED_METRIC, FANOUT_SKIPPED_DIMENSIONS, stackDimension)],
    width: 24,
  });
}

function consumerRow(c: ConsumerSignals, age: cloudwatch.Metric, dlqDepth: cloudwatch.Metric): cloudwatch.IWidget[] {
  const visible = c.queue.metricApproximateNumberOfMessagesVisible({ period: ONE_MINUTE, statistic: 'Maximum' });
  const inFlight = c.queue.metricApproximateNumberOfMessagesNotVisible({ period: ONE_MINUTE, statistic: 'Maximum' });
  return [
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
    new cloudwatch.GraphWidget({
      title: `${c.consumerId}: worker errors`,
      left: [c.worker.metricErrors({ period: ONE_MINUTE, statistic: 'Sum' })],
      width: 6,
    }),
  ];
}
