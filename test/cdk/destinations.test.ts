/**
 * HTTP destination consumers and ordered consumers, proven on the template: FIFO queue and DLQ for
 * an ordered consumer; the HTTP worker's role (its own ledger rows, payload reads, its own secret,
 * its own event source mapping and nothing else); the circuit-breaker alarm; VPC placement.
 */
import { type App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import { beforeAll, describe, expect, it } from 'vitest';
import type { HookledgerConfigInput } from '../../core/config/schema';
import { HookledgerStack } from '../../lib/hookledger-stack';
import {
  actionsOf,
  defaultConfig,
  type Json,
  mappingsOf,
  refTarget,
  resourcesOfType,
  resourceTargets,
  statementsOfRole,
  synth,
  testApp,
  type WorkerView,
  workers,
} from './support';

const config: HookledgerConfigInput = {
  sources: defaultConfig.sources,
  consumers: [
    {
      id: 'crm-sync',
      kind: 'http',
      url: 'https://crm.internal.example.com/hooks/hookledger',
      subscribes: ['payment.*'],
      fields: ['id', 'type', 'tenant_id'],
      http: { timeoutMs: 3000, ratePerSecond: 20, breakAfterFailures: 10 },
    },
    {
      id: 'ledger-sync',
      subscribes: ['*'],
      fields: ['id', 'data.account'],
      entry: 'lambdas/consumers/audit-writer.ts',
      ordering: { key: { body: 'data.account' }, version: { body: 'data.seq' } },
      maxReceiveCount: 3,
    },
  ],
};

describe('http and ordered consumers in the template', () => {
  let json: Json;
  let http: WorkerView;
  let ordered: WorkerView;

  beforeAll(() => {
    json = synth(config).json;
    const byId = new Map(workers(json).map((w) => [w.consumerId, w]));
    http = byId.get('crm-sync')!;
    ordered = byId.get('ledger-sync')!;
  });

  it('makes the ordered consumer’s queue and DLQ FIFO, deduplicated by the id the fan-out sets', () => {
    const queue = json.Resources[ordered.queueId].Properties;
    const dlq = json.Resources[ordered.dlqId].Properties;
    expect(queue).toMatchObject({ FifoQueue: true, ContentBasedDeduplication: false, VisibilityTimeout: 60 });
    expect(queue.QueueName).toMatch(/-queue\.fifo$/);
    expect(queue.QueueName.length).toBeLessThanOrEqual(80);
    expect(dlq.FifoQueue).toBe(true);
    expect(queue.RedrivePolicy).toEqual({ deadLetterTargetArn: { 'Fn::GetAtt': [ordered.dlqId, 'Arn'] }, maxReceiveCount: 3 });
    // The worker reads it with partial batch responses (the runtime fails the rest of a failed group).
    expect(mappingsOf(json, ordered.functionId)).toEqual([
      expect.objectContaining({
        FunctionResponseTypes: ['ReportBatchItemFailures'],
        EventSourceArn: { 'Fn::GetAtt': [ordered.queueId, 'Arn'] },
      }),
    ]);
    // The HTTP consumer is unordered: standard queues.
    expect(json.Resources[http.queueId].Properties.FifoQueue).toBeUndefined();
  });

  it('runs the HTTP consumer on the shared worker with its own secret and queue ARN', () => {
    const vars = http.fn.Properties.Environment.Variables;
    const [secretId] = resourcesOfType(json, 'AWS::SecretsManager::Secret').find(([id]) => id.includes('crmsync'))!;
    expect(vars.CONSUMER_ID).toBe('crm-sync');
    expect(vars.CONSUMER_SECRET).toEqual({ Ref: secretId });
    expect(vars.QUEUE_ARN).toEqual({ 'Fn::GetAtt': [http.queueId, 'Arn'] });
    expect(json.Resources[secretId].DeletionPolicy).toBe('Retain');
    expect(json.Outputs.ConsumerSecretArnCrmSync.Value).toEqual({ Ref: secretId });
    // Lambda consumers have neither.
    expect(ordered.fn.Properties.Environment.Variables.CONSUMER_SECRET).toBeUndefined();
  });

  it("gives the HTTP worker's role no table access beyond its own ledger rows (and key reads; never a payload)", () => {
    const statements = statementsOfRole(json, http.roleId);
    const [eventsTable] = resourcesOfType(json, 'AWS::DynamoDB::Table').find(([, t]) => t.Properties.StreamSpecification)!;
    const [ledgerTable] = resourcesOfType(json, 'AWS::DynamoDB::Table').find(([, t]) => !t.Properties.StreamSpecification)!;
    const dynamo = statements.filter((s) => actionsOf(s).some((a) => a.startsWith('dynamodb:')));
    expect(dynamo).toHaveLength(2);
    const ledger = dynamo.find((s) => resourceTargets(s).includes(ledgerTable))!;
    expect(actionsOf(ledger).sort()).toEqual(['dynamodb:GetItem', 'dynamodb:UpdateItem']);
    expect(ledger.Condition).toEqual({ 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['*#crm-sync'] } });
    const events = dynamo.find((s) => resourceTargets(s).includes(eventsTable))!;
    expect(actionsOf(events)).toEqual(['dynamodb:GetItem']);
    expect(events.Condition).toEqual({ 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['key#*'] } });

    const secrets = statements.filter((s) => actionsOf(s).some((a) => a.startsWith('secretsmanager:')));
    expect(secrets.flatMap(resourceTargets)).toEqual([refTarget(http.fn.Properties.Environment.Variables.CONSUMER_SECRET)]);

    const update = statements.find((s) => actionsOf(s).includes('lambda:UpdateEventSourceMapping'))!;
    expect(update.Condition).toEqual({ StringEquals: { 'lambda:FunctionArn': { 'Fn::GetAtt': [http.functionId, 'Arn'] } } });
    // Nothing else: no other service, no write on any other queue; S3 only to read its own claim-checked views.
    const services = new Set(statements.flatMap(actionsOf).map((a) => a.split(':')[0]));
    expect([...services].sort()).toEqual(['dynamodb', 'lambda', 'logs', 's3', 'secretsmanager', 'sqs']);
    const s3 = statements.filter((s) => actionsOf(s).some((a) => a.startsWith('s3:')));
    expect(s3.flatMap(actionsOf)).toEqual(['s3:GetObject']);
    expect(JSON.stringify(s3)).toContain('/views/crm-sync/*');
    const sends = statements.filter((s) => actionsOf(s).includes('sqs:SendMessage'));
    expect(sends.flatMap(resourceTargets)).toEqual([http.dlqId]);
  });

  it('alarms when the HTTP consumer’s circuit breaker opens, and on each DLQ', () => {
    const alarms = resourcesOfType(json, 'AWS::CloudWatch::Alarm').map(([, a]) => a.Properties);
    const circuit = alarms.filter((a) => a.MetricName === 'HttpCircuitOpened');
    expect(circuit).toHaveLength(1);
    expect(circuit[0]).toMatchObject({
      Namespace: 'Hookledger',
      Threshold: 0,
      ComparisonOperator: 'GreaterThanThreshold',
      Dimensions: expect.arrayContaining([
        { Name: 'Stack', Value: 'Hookledger' },
        { Name: 'Consumer', Value: 'crm-sync' },
      ]),
    });
    expect(circuit[0].AlarmActions).toHaveLength(1);
    const dlqAlarms = alarms.filter(
      (a) => a.MetricName === 'ApproximateNumberOfMessagesVisible' && a.Dimensions?.[0]?.Value?.['Fn::GetAtt']?.[0] !== undefined,
    );
    const dlqTargets = dlqAlarms.map((a) => a.Dimensions[0].Value['Fn::GetAtt'][0]);
    expect(dlqTargets).toEqual(expect.arrayContaining([http.dlqId, ordered.dlqId]));
  });

  it('places an HTTP worker in a VPC when the stack is given one for it', () => {
    const app: App = testApp();
    const network = new Stack(app, 'Network', { env: { account: '123456789012', region: 'eu-west-1' } });
    const vpc = new ec2.Vpc(network, 'Vpc', { maxAzs: 2 });
    const stack = new HookledgerStack(app, 'HookledgerVpc', {
      config,
      env: { account: '123456789012', region: 'eu-west-1' },
      consumerVpcs: { 'crm-sync': { vpc } },
    });
    const placed = Template.fromStack(stack).toJSON();
    const w = workers(placed).find((x) => x.consumerId === 'crm-sync')!;
    expect(w.fn.Properties.VpcConfig.SubnetIds).toHaveLength(2);
    expect(w.fn.Properties.VpcConfig.SecurityGroupIds).toHaveLength(1);
    const other = workers(placed).find((x) => x.consumerId === 'ledger-sync')!;
    expect(other.fn.Properties.VpcConfig).toBeUndefined();
  });
});
