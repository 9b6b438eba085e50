import { Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import type * as sns from 'aws-cdk-lib/aws-sns';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { SourceConfig } from '../../core/config/schema';
import { ENV } from '../../core/env';
import { DIMENSION, METRICS_NAMESPACE, PROVIDER_DRIFT_METRIC, PROVIDER_GAPS_METRIC } from '../../core/metrics';
import { keyPattern, WINDOW_INDEX } from '../../core/model';
import { deadLetterQueueProps } from './defaults';
import { HookledgerFunction } from './hookledger-function';
import type { PayloadBucket } from './payload-bucket';
import { grantIntakeWrites, grantItemsByKeyPattern } from './storage';

export interface GapCheckProps {
  /** A source with `gapCheck` (core/config/schema.ts). */
  readonly source: SourceConfig & { readonly gapCheck: NonNullable<SourceConfig['gapCheck']> };
  readonly events: dynamodb.ITable;
  readonly ledgerTableName: string;
  /** Where the alarm notifies (the stack's alarm topic). */
  readonly alarmTopic: sns.ITopic;
  /** With `gapCheck.recover`: the payload-hash key intake's write path keys the stored body with. */
  readonly payloadHashKey: secretsmanager.ISecret;
  /** With `gapCheck.recover`: where a body too large for its payload item goes. */
  readonly payloadBucket: PayloadBucket;
  /** @default Duration.minutes(5) */
  readonly timeout?: Duration;
  /**
   * The ingest API's webhook base URL (`.../hooks/`). With it and the source's `events`, a drift check
   * runs beside the gap check: the provider's endpoint against this URL and `events`.
   * @default - no drift check
   */
  readonly webhookBaseUrl?: string;
}

/**
 * One source's scheduled provider gap check (lambdas/reconcile/gap-check-handler.ts): every
 * `gapCheck.everyHours`, over the last closed window, the provider's list of sent events against the
 * receipts; publishes `Hookledger/ProviderGaps{Stack, Source}` and alarms above 0. Its role reads
 * that source's API-key secret and no other secret of the stack; with `recover` it may also write what
 * intake writes (receipt, payload, body claim, tenant-day registry) and read the payload-hash key.
 * Given the webhook base URL, a source that declares `events` also gets the drift check on the same
 * schedule (lambdas/reconcile/drift-check-handler.ts): its endpoint at the provider against the
 * configuration, `Hookledger/ProviderDrift{Stack, Source}` alarmed above 0.
 */
export class GapCheck extends Construct {
  readonly handler: HookledgerFunction;
  /** The provider API key: created empty (the operator puts it), retained. */
  readonly apiKeySecret: secretsmanager.ISecret;
  readonly rule: events.Rule;
  readonly alarm: cloudwatch.Alarm;
  readonly deadLetterQueue: sqs.IQueue;
  /** The drift check (with `webhookBaseUrl` and the source's `events`). */
  readonly drift?: { readonly handler: HookledgerFunction; readonly alarm: cloudwatch.Alarm };

  constructor(scope: Construct, id: string, props: GapCheckProps) {
    super(scope, id);
    const { source } = props;
    const { gapCheck } = source;
    this.apiKeySecret = this.buildApiKeySecret(props);
    this.deadLetterQueue = new sqs.Queue(this, 'DeadLetterQueue', deadLetterQueueProps());
    Validations.of(this.deadLetterQueue).acknowledge({
      id: 'Serverless-SQSRedrivePolicy',
      reason: "The terminal dead-letter queue of the gap check's schedule and asynchronous invocations; nothing consumes it.",
    });
    this.handler = this.buildHandler(props);
    this.grantHandler(props);
    this.rule = new events.Rule(this, 'Schedule', {
      description: `Runs the hookledger gap check of source ${source.id}`,
      schedule: events.Schedule.rate(Duration.hours(gapCheck.everyHours)),
      targets: [
        new targets.LambdaFunction(this.handler.function, {
          retryAttempts: 2,
          maxEventAge: Duration.hours(Math.min(gapCheck.everyHours, 24)),
          deadLetterQueue: this.deadLetterQueue,
        }),
      ],
    });
    this.alarm = this.buildAlarms(props);
    if (props.webhookBaseUrl !== undefined && source.events !== undefined) this.drift = this.buildDriftCheck(props, props.webhookBaseUrl);
  }

  /**
   * Created without a value (the L1 resource: the L2 Secret always generates one, and CloudFormation
   * refuses an empty SecretString): the operator puts the provider's key; a run before that fails and says so.
   */
  private buildApiKeySecret({ source }: GapCheckProps): secretsmanager.ISecret {
    const apiKeyResource = new secretsmanager.CfnSecret(this, 'ApiKey', {
      description: `hookledger gap check: the ${source.gapCheck.api} API key of source "${source.id}" (read-only scope, see README "Provider gap check"); put it here`,
    });
    // Kept when the source or the stack goes away: it was issued by the provider, not by us.
    apiKeyResource.applyRemovalPolicy(RemovalPolicy.RETAIN);
    Validations.of(apiKeyResource).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason: 'The API key is issued by the provider and rotated there; the gap check reads it on every run.',
    });
    return secretsmanager.Secret.fromSecretCompleteArn(this, 'ApiKeySecret', apiKeyResource.ref);
  }

  private buildHandler(props: GapCheckProps): HookledgerFunction {
    const { source } = props;
    const { gapCheck } = source;
    return new HookledgerFunction(this, 'Handler', {
      entry: 'lambdas/reconcile/gap-check-handler.ts',
      deadLetterQueue: this.deadLetterQueue,
      description: `hookledger gap check of source ${source.id}: the ${gapCheck.api} API's sent events against the receipts`,
      serviceName: 'hookledger-gaps',
      timeout: props.timeout ?? Duration.minutes(5),
      memorySize: 512,
      environment: {
        [ENV.eventsTable]: props.events.tableName,
        [ENV.ledgerTable]: props.ledgerTableName,
        [ENV.stackName]: Stack.of(this).stackName,
        [ENV.gapSource]: source.id,
        [ENV.gapApiKeySecret]: this.apiKeySecret.secretArn,
        ...(gapCheck.recover
          ? { [ENV.payloadHashKeySecret]: props.payloadHashKey.secretArn, [ENV.payloadBucket]: props.payloadBucket.bucket.bucketName }
          : {}),
      },
    });
  }

  private grantHandler(props: GapCheckProps): void {
    // Its own source's API key, and no other secret of the stack (signing secrets stay with intake).
    this.apiKeySecret.grantRead(this.handler);
    // The window index (receipts as projected: no payload) and the tenant-day registry by key.
    iam.Grant.addToPrincipal({
      grantee: this.handler,
      actions: ['dynamodb:Query'],
      resourceArns: [`${props.events.tableArn}/index/${WINDOW_INDEX.name}`],
    });
    grantItemsByKeyPattern(props.events, this.handler, ['dynamodb:GetItem', 'dynamodb:BatchGetItem'], [keyPattern('tenantDay')]);
    if (props.source.gapCheck.recover) {
      // What intake's write path writes, nothing more.
      grantIntakeWrites(props.events, this.handler);
      props.payloadHashKey.grantRead(this.handler);
      props.payloadBucket.grantPayloadWrite(this.handler);
    }
  }

  /** The gaps alarm (returned), and one on runs that failed; both notify the alarm topic. */
  private buildAlarms(props: GapCheckProps): cloudwatch.Alarm {
    const { source } = props;
    const { gapCheck } = source;
    const gaps = this.perRunAlarm(
      props,
      'ProviderGaps',
      PROVIDER_GAPS_METRIC,
      `The ${gapCheck.api} API lists events of source ${source.id} that no receipt names and the gap check did not recover: run \`hookledger gaps --source ${source.id} --from ... --recover\`.`,
    );
    const action = new SnsAction(props.alarmTopic);
    // Runs that failed (the provider refused the key, storage unavailable) after EventBridge's retries.
    const failed = new cloudwatch.Alarm(this, 'Errors', {
      metric: this.handler.function.metricErrors({ period: Duration.hours(Math.min(gapCheck.everyHours, 24)), statistic: 'Sum' }),
      threshold: 0,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      alarmDescription: `The gap check of source ${source.id} failed (its log says why: the API key unset or refused, the provider unreachable).`,
    });
    failed.addAlarmAction(action);
    failed.addOkAction(action);
    return gaps;
  }

  /**
   * The drift check: its own function on the gap check's schedule (a failure of one never hides the
   * other), reading the same API-key secret and nothing else; `ProviderDrift{Stack, Source}` alarmed above 0.
   */
  private buildDriftCheck(props: GapCheckProps, webhookBaseUrl: string): { handler: HookledgerFunction; alarm: cloudwatch.Alarm } {
    const { source } = props;
    const { gapCheck } = source;
    const handler = new HookledgerFunction(this, 'DriftHandler', {
      entry: 'lambdas/reconcile/drift-check-handler.ts',
      deadLetterQueue: this.deadLetterQueue,
      description: `hookledger drift check of source ${source.id}: the ${gapCheck.api} API's webhook endpoint against the configuration`,
      serviceName: 'hookledger-drift',
      timeout: Duration.minutes(1),
      environment: {
        [ENV.stackName]: Stack.of(this).stackName,
        [ENV.gapSource]: source.id,
        [ENV.gapApiKeySecret]: this.apiKeySecret.secretArn,
        [ENV.driftWebhookUrl]: `${webhookBaseUrl}${source.id}`,
      },
    });
    this.apiKeySecret.grantRead(handler);
    this.rule.addTarget(
      new targets.LambdaFunction(handler.function, {
        retryAttempts: 2,
        maxEventAge: Duration.hours(Math.min(gapCheck.everyHours, 24)),
        deadLetterQueue: this.deadLetterQueue,
      }),
    );
    const stackName = Stack.of(this).stackName;
    const alarm = this.perRunAlarm(
      props,
      'ProviderDrift',
      PROVIDER_DRIFT_METRIC,
      `The ${gapCheck.api} webhook endpoint of source ${source.id} no longer matches the configuration: another URL, event types missing or extra, ` +
        `disabled by the provider (usually after failed deliveries), or deleted. Webhooks may not be arriving. ` +
        `See the difference with \`hookledger sources remote ${source.id} --stack ${stackName}\`, ` +
        `fix it with \`hookledger sources connect ${source.id} --stack ${stackName}\`, then run the gap check for the time it lasted.`,
    );
    return { handler, alarm };
  }
  /**
   * An alarm on one metric the scheduled run publishes once per run, above 0, notifying the alarm topic
   * when it fires and clears. One datapoint per run: the last verdict holds until the next (CloudWatch
   * evaluates at most a day at once, so a run every 48 h keeps its verdict; missing data is ignored).
   */
  private perRunAlarm(props: GapCheckProps, id: string, metricName: string, alarmDescription: string): cloudwatch.Alarm {
    const alarm = new cloudwatch.Alarm(this, id, {
      metric: new cloudwatch.Metric({
        namespace: METRICS_NAMESPACE,
        metricName,
        dimensionsMap: { [DIMENSION.stack]: Stack.of(this).stackName, [DIMENSION.source]: props.source.id },
        statistic: 'Maximum',
        period: Duration.hours(Math.min(props.source.gapCheck.everyHours, 24)),
      }),
      threshold: 0,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.IGNORE,
      alarmDescription,
    });
    const action = new SnsAction(props.alarmTopic);
    alarm.addAlarmAction(action);
    alarm.addOkAction(action);
    return alarm;
  }
}
