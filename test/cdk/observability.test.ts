/** Alarms that page on stuck or lost work, the dashboard, the alarm topic and the reconcile schedule. */
import { Match } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { defineConfig } from '../../core/config/schema';
import {
  actionsOf,
  asArray,
  CONFIGS,
  defaultConfig,
  functionWithEnv,
  type Json,
  refTarget,
  resourcesOfType,
  resourceTargets,
  type Synthesized,
  statementsOfRole,
  synth,
  workers,
} from './support';

function alarmsOn(json: Json, metricName: string): Json[] {
  return resourcesOfType(json, 'AWS::CloudWatch::Alarm')
    .map(([, a]) => a.Properties)
    .filter((a) => a.MetricName === metricName);
}

function dimension(alarm: Json, name: string): Json {
  return asArray<Json>(alarm.Dimensions).find((d) => d.Name === name)?.Value;
}

describe.each(CONFIGS)('observability with the $name', ({ config }) => {
  const parsed = defineConfig(config);
  let s: Synthesized;
  let topicId: string;

  beforeAll(() => {
    s = synth(config, 'HookledgerObs');
    topicId = s.json.Outputs.AlarmTopicArn.Value.Ref;
  });

  /** The one alarm on a per-run reconcile metric of this stack: Hookledger/<name>{Stack}, hourly, any value above 0, to the topic. */
  function reconcileRunAlarm(metricName: string): Json {
    const alarms = alarmsOn(s.json, metricName);
    expect(alarms).toHaveLength(1);
    expect(alarms[0]).toMatchObject({
      Namespace: 'Hookledger',
      Dimensions: [{ Name: 'Stack', Value: 'HookledgerObs' }],
      Statistic: 'Sum',
      Threshold: 0,
      ComparisonOperator: 'GreaterThanThreshold',
      Period: 3600,
      // A run that did not report neither ends nor extends a streak (its errors have their own alarm).
      TreatMissingData: 'ignore',
      AlarmActions: [{ Ref: topicId }],
    });
    return alarms[0]!;
  }

  it('sends every alarm (and its recovery) to the alarm topic', () => {
    const alarms = resourcesOfType(s.json, 'AWS::CloudWatch::Alarm');
    // Two per consumer, one per source (signature failures), plus API 5xx, intake throttles, fan-out
    // failures, reconcile violations, incomplete runs, dropped carry-forward, errors and dead letters,
    // and signing secrets served stale.
    expect(alarms).toHaveLength(2 * parsed.consumers.length + parsed.sources.length + 9);
    for (const [id, a] of alarms) {
      expect(a.Properties.AlarmActions, id).toEqual([{ Ref: topicId }]);
      expect(a.Properties.OKActions, id).toEqual([{ Ref: topicId }]);
      // Above 0 (or a limit), except signature failures: at their threshold or more (test/cdk/signature-alarm.test.ts).
      expect(a.Properties.ComparisonOperator, id).toBe(
        a.Properties.MetricName === 'SignatureFailures' ? 'GreaterThanOrEqualToThreshold' : 'GreaterThanThreshold',
      );
      expect(a.Properties.AlarmDescription, id).toEqual(expect.any(String));
    }
  });

  it("alarms on intake's first stale signing-secret read of this stack, and graphs repairs beside violations", () => {
    const [alarm] = alarmsOn(s.json, 'SecretRefreshFailures');
    expect(alarm).toMatchObject({ Namespace: 'Hookledger', Threshold: 0, Statistic: 'Sum', Period: 300 });
    expect(alarm!.Dimensions).toEqual([
      { Name: 'Served', Value: 'stale' },
      { Name: 'Stack', Value: 'HookledgerObs' },
    ]);
    const body = JSON.stringify(resourcesOfType(s.json, 'AWS::CloudWatch::Dashboard')[0]![1].Properties.DashboardBody);
    expect(body).toContain('ReconcileRepairs');
    expect(body).toContain('Signing secrets unreadable (intake)');
  });

  it("alarms per consumer when the oldest message is older than the consumer's alarmAgeSeconds", () => {
    const ageAlarms = alarmsOn(s.json, 'ApproximateAgeOfOldestMessage');
    expect(ageAlarms).toHaveLength(parsed.consumers.length);
    for (const c of parsed.consumers) {
      const w = workers(s.json).find((x) => x.consumerId === c.id)!;
      const alarm = ageAlarms.find((a) => refTarget(dimension(a, 'QueueName')) === w.queueId);
      expect(alarm, c.id).toMatchObject({ Namespace: 'AWS/SQS', Threshold: c.alarmAgeSeconds, Statistic: 'Maximum' });
    }
  });

  it('alarms per consumer as soon as its DLQ holds a message', () => {
    const visible = alarmsOn(s.json, 'ApproximateNumberOfMessagesVisible');
    for (const w of workers(s.json)) {
      const alarm = visible.find((a) => refTarget(dimension(a, 'QueueName')) === w.dlqId);
      expect(alarm, w.consumerId).toMatchObject({ Threshold: 0, TreatMissingData: 'notBreaching' });
    }
  });

  it("alarms when the fan-out's failure queue holds a message", () => {
    const [fanOutId] = functionWithEnv(s.json, 'QUEUE_URLS');
    const mapping = resourcesOfType(s.json, 'AWS::Lambda::EventSourceMapping').find(
      ([, m]) => refTarget(m.Properties.FunctionName) === fanOutId,
    )![1];
    const failureQueueId = refTarget(mapping.Properties.DestinationConfig.OnFailure.Destination);
    const alarm = alarmsOn(s.json, 'ApproximateNumberOfMessagesVisible').find(
      (a) => refTarget(dimension(a, 'QueueName')) === failureQueueId,
    );
    expect(alarm).toMatchObject({ Threshold: 0 });
  });

  it('alarms on any intake 5xx', () => {
    const [apiId] = resourcesOfType(s.json, 'AWS::ApiGatewayV2::Api')[0]!;
    const alarms = alarmsOn(s.json, '5xx');
    expect(alarms).toHaveLength(1);
    expect(alarms[0]).toMatchObject({ Namespace: 'AWS/ApiGateway', Threshold: 0, Statistic: 'Sum' });
    expect(refTarget(dimension(alarms[0], 'ApiId'))).toBe(apiId);
  });

  it('alarms on reconcile violations (Hookledger/ReconcileViolations, dimension Stack) and on reconcile errors', () => {
    const violations = alarmsOn(s.json, 'ReconcileViolations');
    expect(violations).toHaveLength(1);
    expect(violations[0]).toMatchObject({
      Namespace: 'Hookledger',
      Dimensions: [{ Name: 'Stack', Value: 'HookledgerObs' }],
      Threshold: 0,
      Period: 3600,
    });
    const [reconcileId] = resourcesOfType(s.json, 'AWS::Lambda::Function').find(
      ([, fn]) => fn.Properties.Environment.Variables.POWERTOOLS_SERVICE_NAME === 'hookledger-reconcile',
    )!;
    // The handler publishes with Stack = its STACK_NAME: both sides must name the same value.
    expect(s.json.Resources[reconcileId].Properties.Environment.Variables.STACK_NAME).toBe('HookledgerObs');
    const errors = alarmsOn(s.json, 'Errors').filter((a) => refTarget(dimension(a, 'FunctionName')) === reconcileId);
    expect(errors).toHaveLength(1);
  });

  it('alarms when reconcile stops at its time budget 3 runs in a row (Hookledger/ReconcileIncomplete), and graphs it', () => {
    const incomplete = reconcileRunAlarm('ReconcileIncomplete');
    // One period per hourly run; all three must be incomplete: one or two is a checkpoint resumed.
    expect([incomplete.EvaluationPeriods, incomplete.DatapointsToAlarm]).toEqual([3, 3]);
    expect(incomplete.AlarmDescription).toContain('3 runs in a row');
    // Every other alarm still fires on its first breaching period.
    const others = resourcesOfType(s.json, 'AWS::CloudWatch::Alarm')
      .map(([, a]) => a.Properties)
      .filter((a) => a.MetricName !== 'ReconcileIncomplete');
    for (const a of others) expect([a.MetricName, a.EvaluationPeriods, a.DatapointsToAlarm]).toEqual([a.MetricName, 1, undefined]);

    const body = JSON.stringify(resourcesOfType(s.json, 'AWS::CloudWatch::Dashboard')[0]![1].Properties.DashboardBody);
    expect(body).toContain('Reconcile runs stopped at their time budget (incomplete)');
    expect(body).toMatch(/\\"Hookledger\\",\\"ReconcileIncomplete\\",\\"Stack\\",\\"HookledgerObs\\"/);
  });

  it('alarms when reconcile drops deliveries from its carry-forward (Hookledger/ReconcileCarryDropped), naming the repair', () => {
    const dropped = reconcileRunAlarm('ReconcileCarryDropped');
    expect(dropped.EvaluationPeriods).toBe(1);
    expect(dropped.AlarmDescription).toContain('it keeps at most 1,000');
    expect(dropped.AlarmDescription).toContain('`hookledger reconcile --repair --from ... --to ...`');
  });

  it('builds one dashboard covering intake, fan-out and every consumer', () => {
    const dashboards = resourcesOfType(s.json, 'AWS::CloudWatch::Dashboard');
    expect(dashboards).toHaveLength(1);
    const body = JSON.stringify(dashboards[0]![1].Properties.DashboardBody);
    for (const metric of [
      'ApproximateAgeOfOldestMessage',
      'ApproximateNumberOfMessagesVisible',
      'ApproximateNumberOfMessagesNotVisible',
      '4xx',
      '5xx',
      'Count',
      'Latency',
      'IteratorAge',
      'Errors',
      'ReconcileViolations',
    ]) {
      expect(body).toContain(`\\"${metric}\\"`);
    }
    for (const w of workers(s.json)) {
      expect(body).toContain(`${w.consumerId}: oldest message age`);
      expect(body).toContain(`${w.consumerId}: DLQ depth`);
      expect(body).toContain(w.queueId);
      expect(body).toContain(w.dlqId);
      expect(body).toContain(w.functionId);
    }
  });

  it("graphs intake requests by outcome from the ingest function's IntakeRequests metric", () => {
    const body = JSON.stringify(
      Object.values(s.json.Resources).find((r) => (r as { Type?: string }).Type === 'AWS::CloudWatch::Dashboard'),
    );
    expect(body).toContain('Intake outcomes (recorded, duplicate, refusal codes)');
    // Only this stack's series (the Stack dimension the ingest function publishes), never another copy's.
    expect(body).toContain("SEARCH('{Hookledger,Outcome,Stack} MetricName=");
    expect(body).toMatch(/MetricName=\W+IntakeRequests\W+ Stack=\W+HookledgerObs\W+', 'Sum', 60\)/);
    // And the fan-out's skipped deliveries, by consumer, of this stack only.
    expect(body).toContain("SEARCH('{Hookledger,Consumer,Stack} MetricName=");
    expect(body).toMatch(/MetricName=\W+FanOutSkippedDeliveries\W+ Stack=\W+HookledgerObs\W+', 'Sum', 60\)/);
    expect(body.match(/SEARCH\(/g)).toHaveLength(2);
    const [, ingest] = functionWithEnv(s.json, 'SOURCE_SECRETS');
    expect(ingest.Properties.Environment.Variables.STACK_NAME).toBe('HookledgerObs');
  });

  it('encrypts the alarm topic with a rotating key CloudWatch may use, and refuses non-TLS publishes', () => {
    const topic = s.json.Resources[topicId];
    const keyId = refTarget(topic.Properties.KmsMasterKeyId)!;
    const key = s.json.Resources[keyId];
    expect(key.Type).toBe('AWS::KMS::Key');
    expect(key.Properties.EnableKeyRotation).toBe(true);
    expect(key.Properties.KeyPolicy.Statement).toContainEqual(
      expect.objectContaining({
        Principal: { Service: 'cloudwatch.amazonaws.com' },
        Action: ['kms:Decrypt', 'kms:GenerateDataKey*'],
      }),
    );
    s.template.hasResourceProperties('AWS::SNS::TopicPolicy', {
      Topics: [{ Ref: topicId }],
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
          Match.objectLike({ Effect: 'Allow', Principal: { Service: 'cloudwatch.amazonaws.com' }, Action: 'sns:Publish' }),
        ]),
      },
    });
  });

  it('subscribes the configured alarm e-mail, and nothing when none is configured', () => {
    const subs = resourcesOfType(s.json, 'AWS::SNS::Subscription');
    if (parsed.alarms.email) {
      expect(subs).toHaveLength(1);
      expect(subs[0]![1].Properties).toMatchObject({ Protocol: 'email', Endpoint: parsed.alarms.email, TopicArn: { Ref: topicId } });
    } else {
      expect(subs).toHaveLength(0);
    }
  });
});

// With repair on (the default) the reconciler also writes: see test/cdk/reconciler.test.ts.
describe('reconciler with repair off (reconcile.repair: false)', () => {
  let json: Json;
  let reconcileId: string;
  beforeAll(() => {
    json = synth({ ...defaultConfig, reconcile: { repair: false } }).json;
    [reconcileId] = resourcesOfType(json, 'AWS::Lambda::Function').find(
      ([, fn]) => fn.Properties.Environment.Variables.POWERTOOLS_SERVICE_NAME === 'hookledger-reconcile',
    )!;
  });

  it('runs hourly from an EventBridge rule that targets the reconcile function', () => {
    const rules = resourcesOfType(json, 'AWS::Events::Rule');
    expect(rules).toHaveLength(1);
    expect(rules[0]![1].Properties.ScheduleExpression).toBe('rate(1 hour)');
    expect(rules[0]![1].Properties.Targets).toEqual([expect.objectContaining({ Arn: { 'Fn::GetAtt': [reconcileId, 'Arn'] } })]);
    const permissions = resourcesOfType(json, 'AWS::Lambda::Permission').filter(
      ([, p]) => p.Properties.Principal === 'events.amazonaws.com',
    );
    expect(permissions).toHaveLength(1);
    expect(refTarget(permissions[0]![1].Properties.FunctionName)).toBe(reconcileId);
  });

  it('retries an undelivered run twice within one interval, then keeps it on a retained, alarmed dead-letter queue', () => {
    const [target] = json.Resources[resourcesOfType(json, 'AWS::Events::Rule')[0]![0]].Properties.Targets;
    expect(target.RetryPolicy).toEqual({ MaximumRetryAttempts: 2, MaximumEventAgeInSeconds: 3600 });
    const dlqId = refTarget(target.DeadLetterConfig.Arn)!;
    expect(json.Resources[dlqId]).toMatchObject({
      Type: 'AWS::SQS::Queue',
      DeletionPolicy: 'Retain',
      UpdateReplacePolicy: 'Retain',
      Properties: { SqsManagedSseEnabled: true, MessageRetentionPeriod: 14 * 24 * 3600 },
    });
    // The same queue takes the function's own failed asynchronous invocations.
    expect(refTarget(json.Resources[reconcileId].Properties.DeadLetterConfig.TargetArn)).toBe(dlqId);
    // EventBridge may send to it (CDK's queue policy, scoped to this rule).
    const policies = resourcesOfType(json, 'AWS::SQS::QueuePolicy').filter(([, p]) =>
      asArray<Json>(p.Properties.Queues).some((q) => refTarget(q) === dlqId),
    );
    const statements = policies.flatMap(([, p]) => asArray<Json>(p.Properties.PolicyDocument.Statement));
    expect(statements).toContainEqual(
      expect.objectContaining({ Effect: 'Allow', Principal: { Service: 'events.amazonaws.com' }, Action: 'sqs:SendMessage' }),
    );
    const alarm = resourcesOfType(json, 'AWS::CloudWatch::Alarm')
      .map(([, a]) => a.Properties)
      .find((a) => a.MetricName === 'ApproximateNumberOfMessagesVisible' && refTarget(dimension(a, 'QueueName')) === dlqId);
    expect(alarm).toMatchObject({ Threshold: 0, ComparisonOperator: 'GreaterThanThreshold' });
  });

  it('reads both tables by key (and Queries the window index; no Scan), writes only its checkpoint, and has no cloudwatch:PutMetricData (its metric goes out as EMF)', () => {
    const fn = json.Resources[reconcileId];
    const statements = statementsOfRole(json, refTarget(fn.Properties.Role)!);
    const dynamo = statements.filter((st) => actionsOf(st).some((a) => a.startsWith('dynamodb:')));
    const reads = dynamo.filter((st) => !actionsOf(st).includes('dynamodb:PutItem'));
    expect([...new Set(reads.flatMap(actionsOf))].sort()).toEqual(['dynamodb:BatchGetItem', 'dynamodb:GetItem', 'dynamodb:Query'].sort());
    const tables = resourcesOfType(json, 'AWS::DynamoDB::Table').map(([id]) => id);
    expect(
      reads
        .flatMap(resourceTargets)
        .filter((r) => tables.includes(r))
        .sort(),
    ).toEqual([...tables].sort());
    const writes = dynamo.filter((st) => actionsOf(st).includes('dynamodb:PutItem'));
    expect(writes.map((st) => [actionsOf(st), st.Condition?.['ForAllValues:StringLike']?.['dynamodb:LeadingKeys']])).toEqual([
      [['dynamodb:PutItem'], ['ckpt#*']],
    ]);
    expect(statements.flatMap(actionsOf).filter((a) => a.startsWith('cloudwatch:'))).toEqual([]);
    // Only the dead-letter queue besides its tables and logs.
    expect(statements.flatMap(actionsOf).filter((a) => a.startsWith('sqs:'))).toEqual(['sqs:SendMessage']);
    const env = fn.Properties.Environment.Variables;
    expect(Object.keys(env).sort()).toEqual(
      ['EVENTS_TABLE', 'LEDGER_TABLE', 'STACK_NAME', 'POWERTOOLS_SERVICE_NAME', 'POWERTOOLS_METRICS_NAMESPACE'].sort(),
    );
    // The value of the violations metric's Stack dimension, which the alarm names.
    expect(env.STACK_NAME).toBe('Hookledger');
  });
});

describe('function logs', () => {
  it('every function logs JSON and keeps only platform warnings by default: no START, END or REPORT line per invocation', () => {
    const s = synth(defaultConfig, 'HookledgerLogs');
    const functions = resourcesOfType(s.json, 'AWS::Lambda::Function');
    // ingest, fan-out, reconcile and one worker per configured consumer (defaultConfig has 3).
    expect(functions.map(([id]) => id.replace(/Function[0-9A-F]{8}$/, '')).sort()).toEqual([
      'ConsumersauditwriterWorker',
      'ConsumersbillingmeterWorker',
      'ConsumersriskevaluatorWorker',
      'FanOutHandler',
      'IngestHandler',
      'ReconcilerHandler',
    ]);
    for (const [, f] of functions) {
      expect(f.Properties.LoggingConfig).toMatchObject({ LogFormat: 'JSON', SystemLogLevel: 'WARN', ApplicationLogLevel: 'INFO' });
    }
  });

  it('logs.platformLevel INFO brings the REPORT lines back and logs.applicationLevel DEBUG the success lines, on every function', () => {
    const s = synth({ ...defaultConfig, logs: { platformLevel: 'INFO', applicationLevel: 'DEBUG' } }, 'HookledgerLogsInfo');
    const levels = resourcesOfType(s.json, 'AWS::Lambda::Function').map(([, f]) => [
      f.Properties.LoggingConfig.SystemLogLevel,
      f.Properties.LoggingConfig.ApplicationLogLevel,
    ]);
    expect(levels).toEqual(Array(6).fill(['INFO', 'DEBUG']));
  });

  it('refuses an unknown platform level, naming the field and the allowed values', () => {
    expect(() => defineConfig({ ...defaultConfig, logs: { platformLevel: 'TRACE' as 'INFO' } })).toThrow(
      /logs\.platformLevel \(value "TRACE"\).*WARN.*INFO.*DEBUG/s,
    );
  });
});
