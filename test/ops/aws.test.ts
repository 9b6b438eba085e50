/**
 * The deployed-stack side of the CLI with mocked AWS clients: what no emulator here can show.
 * Proves the calls and their parameters (outputs read, mapping found by queue ARN, Enabled flipped),
 * not IAM or the services' behaviour.
 */
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { LambdaClient, ListEventSourceMappingsCommand, UpdateEventSourceMappingCommand } from '@aws-sdk/client-lambda';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import { lambdaPauseControl, setPaused } from '../../cli/ops/pause';
import { resolveTarget, TargetError } from '../../cli/target';
import { parseDuration, parseTime } from '../../cli/time';
import { config } from './support';

const cfn = mockClient(CloudFormationClient);
const sqs = mockClient(SQSClient);
const lambda = mockClient(LambdaClient);
const sm = mockClient(SecretsManagerClient);
afterEach(() => {
  cfn.reset();
  sqs.reset();
  lambda.reset();
  sm.reset();
});

const Q = 'https://sqs.eu-west-1.amazonaws.com/123456789012';
const OUTPUTS = {
  WebhookUrl: 'https://abc123.execute-api.eu-west-1.amazonaws.com/hooks/',
  EventStoreTableName: 'Hookledger-EventStoreEvents-1',
  LedgerTableName: 'Hookledger-EventStoreLedger-1',
  QueueUrlBillingMeter: `${Q}/billing-meter-queue`,
  DlqUrlBillingMeter: `${Q}/billing-meter-dlq`,
  QueueUrlAuditWriter: `${Q}/audit-writer-queue`,
  DlqUrlAuditWriter: `${Q}/audit-writer-dlq`,
  QueueUrlRiskEvaluator: `${Q}/risk-evaluator-queue`,
  DlqUrlRiskEvaluator: `${Q}/risk-evaluator-dlq`,
  SecretArnPlatform: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:platform-AbC',
};

describe('--stack target', () => {
  it('reads tables, queues, webhook URL and secrets from the stack outputs', async () => {
    cfn.on(DescribeStacksCommand, { StackName: 'Hookledger' }).resolves({
      Stacks: [
        {
          StackName: 'Hookledger',
          StackStatus: 'UPDATE_COMPLETE',
          CreationTime: new Date(),
          Outputs: Object.entries(OUTPUTS).map(([OutputKey, OutputValue]) => ({ OutputKey, OutputValue })),
        },
      ],
    });
    sm.on(GetSecretValueCommand, { SecretId: OUTPUTS.SecretArnPlatform, VersionStage: 'AWSCURRENT' }).resolves({ SecretString: 'whsec_x' });

    const target = await resolveTarget({ config, root: '/nowhere', stack: 'Hookledger', region: 'eu-west-1' });
    try {
      expect(target.kind).toBe('aws');
      expect(target.tables).toEqual({ events: OUTPUTS.EventStoreTableName, ledger: OUTPUTS.LedgerTableName });
      expect(target.queues['billing-meter']).toEqual({ url: OUTPUTS.QueueUrlBillingMeter, dlqUrl: OUTPUTS.DlqUrlBillingMeter });
      expect(Object.keys(target.queues)).toEqual(['billing-meter', 'audit-writer', 'risk-evaluator']);
      expect(target.webhookUrl('platform')).toBe('https://abc123.execute-api.eu-west-1.amazonaws.com/hooks/platform');
      expect(await target.signingSecret('platform')).toBe('whsec_x');
      expect(target.rotator).toMatchObject({ kind: 'aws', secretIds: { platform: OUTPUTS.SecretArnPlatform } });
    } finally {
      target.destroy();
    }
  });

  it('says what to check when the stack does not exist or lacks an output', async () => {
    cfn.on(DescribeStacksCommand).rejectsOnce(Object.assign(new Error('Stack with id Nope does not exist'), { name: 'ValidationError' }));
    await expect(resolveTarget({ config, root: '/nowhere', stack: 'Nope', region: 'eu-west-1' })).rejects.toThrow(
      /stack Nope does not exist in eu-west-1; check --stack and --region/,
    );
    cfn.on(DescribeStacksCommand).resolves({ Stacks: [{ StackName: 'Old', StackStatus: 'CREATE_COMPLETE', CreationTime: new Date(), Outputs: [] }] });
    await expect(resolveTarget({ config, root: '/nowhere', stack: 'Old', region: 'eu-west-1' })).rejects.toBeInstanceOf(TargetError);
  });
});

describe('pause on AWS', () => {
  it("flips Enabled on the event source mapping found by the consumer's queue ARN", async () => {
    const queueArn = 'arn:aws:sqs:eu-west-1:123456789012:billing-meter-queue';
    sqs.on(GetQueueAttributesCommand, { QueueUrl: OUTPUTS.QueueUrlBillingMeter }).resolves({ Attributes: { QueueArn: queueArn } });
    lambda.on(ListEventSourceMappingsCommand, { EventSourceArn: queueArn }).resolves({
      EventSourceMappings: [{ UUID: 'esm-1', EventSourceArn: queueArn, State: 'Enabled' }],
    });
    lambda.on(UpdateEventSourceMappingCommand).resolves({ UUID: 'esm-1', State: 'Disabling' });
    const control = lambdaPauseControl({
      lambda: new LambdaClient({ region: 'eu-west-1' }),
      sqs: new SQSClient({ region: 'eu-west-1' }),
      queues: { 'billing-meter': { url: OUTPUTS.QueueUrlBillingMeter, dlqUrl: OUTPUTS.DlqUrlBillingMeter } },
    });

    expect(await setPaused(control, ['billing-meter'], 'billing-meter', true)).toEqual({ consumer: 'billing-meter', paused: true });
    expect(lambda.commandCalls(UpdateEventSourceMappingCommand).map((c) => c.args[0].input)).toEqual([{ UUID: 'esm-1', Enabled: false }]);
    await setPaused(control, ['billing-meter'], 'billing-meter', false);
    expect(lambda.commandCalls(UpdateEventSourceMappingCommand).map((c) => c.args[0].input.Enabled)).toEqual([false, true]);

    lambda.on(ListEventSourceMappingsCommand).resolves({ EventSourceMappings: [{ UUID: 'esm-1', State: 'Disabled' }] });
    expect(await control.paused()).toEqual(new Set(['billing-meter']));
  });
});

describe('command-line times', () => {
  const now = Date.parse('2026-11-29T12:00:00Z');
  it('reads ISO-8601 (UTC without an offset) and times relative to now', () => {
    expect(parseTime('-1h', now)).toBe(now - 3_600_000);
    expect(parseTime('-30m', now)).toBe(now - 1_800_000);
    expect(parseTime('now', now)).toBe(now);
    expect(parseTime('2026-11-29T10:00:00Z', now)).toBe(Date.parse('2026-11-29T10:00:00Z'));
    expect(parseTime('2026-11-29T10:00', now)).toBe(Date.parse('2026-11-29T10:00:00Z'));
    expect(parseTime('2026-11-29', now)).toBe(Date.parse('2026-11-29T00:00:00Z'));
    expect(() => parseTime('yesterday', now, '--from')).toThrow(/--from "yesterday" is not a time/);
    expect(parseDuration('15m')).toBe(900_000);
    expect(parseDuration('0')).toBe(0);
    expect(() => parseDuration('15')).toThrow(/not a duration/);
  });
});
