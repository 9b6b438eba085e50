/**
 * The deployed-stack side of the CLI with mocked AWS clients: what no emulator here can show.
 * Proves the calls and their parameters (outputs read, mapping found by queue ARN, Enabled flipped),
 * not IAM or the services' behaviour.
 */

import { Readable } from 'node:stream';
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { LambdaClient, ListEventSourceMappingsCommand, UpdateEventSourceMappingCommand } from '@aws-sdk/client-lambda';
import {
  DescribeSecretCommand,
  GetSecretValueCommand,
  PutSecretValueCommand,
  SecretsManagerClient,
  UpdateSecretVersionStageCommand,
} from '@aws-sdk/client-secrets-manager';
import { GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import { defineConfig } from '../../core/config/schema';
import { TargetError } from '../../ops/errors';
import { lambdaPauseControl, setPaused } from '../../ops/pause';
import { resolveTarget } from '../../ops/target';
import { parseDuration, parseTime } from '../../ops/time';
import { runCli } from '../support/cli';
import { config } from './support';

const cfn = mockClient(CloudFormationClient);
const sqs = mockClient(SQSClient);
const lambda = mockClient(LambdaClient);
const sm = mockClient(SecretsManagerClient);
const ddb = mockClient(DynamoDBDocumentClient);
afterEach(() => {
  cfn.reset();
  sqs.reset();
  lambda.reset();
  sm.reset();
  ddb.reset();
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
    cfn
      .on(DescribeStacksCommand)
      .resolves({ Stacks: [{ StackName: 'Old', StackStatus: 'CREATE_COMPLETE', CreationTime: new Date(), Outputs: [] }] });
    await expect(resolveTarget({ config, root: '/nowhere', stack: 'Old', region: 'eu-west-1' })).rejects.toBeInstanceOf(TargetError);
  });
});

describe('secrets on AWS (hookledger ... --stack)', () => {
  const stackOutputs = () =>
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
  const run = (argv: string[]) => runCli(argv, config, { USER: 'ops-aws', AWS_REGION: 'eu-west-1' });

  it('secrets retire removes AWSPREVIOUS from the version that holds it and writes one secret.retire audit item', async () => {
    stackOutputs();
    sm.on(DescribeSecretCommand, { SecretId: OUTPUTS.SecretArnPlatform }).resolves({
      VersionIdsToStages: { 'a1b2-current': ['AWSCURRENT'], 'c3d4-previous': ['AWSPREVIOUS'] },
    });
    sm.on(UpdateSecretVersionStageCommand).resolves({});
    ddb.on(PutCommand).resolves({});

    const result = await run(['secrets', 'retire', 'platform', '--stack', 'Hookledger', '--region', 'eu-west-1']);

    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(
      'retired the previous signing secret of platform on stack Hookledger (eu-west-1) (version c3d4-previous lost AWSPREVIOUS): ' +
        'only the current secret verifies (on every intake container within 30 s of this retire, or 5 minutes of the rotation if that is later).\n',
    );
    expect(sm.commandCalls(UpdateSecretVersionStageCommand).map((c) => c.args[0].input)).toEqual([
      { SecretId: OUTPUTS.SecretArnPlatform, VersionStage: 'AWSPREVIOUS', RemoveFromVersionId: 'c3d4-previous' },
    ]);
    const puts = ddb.commandCalls(PutCommand).map((c) => c.args[0].input);
    expect(puts).toHaveLength(1);
    expect(puts[0]).toMatchObject({
      TableName: OUTPUTS.EventStoreTableName,
      Item: {
        kind: 'audit',
        action: 'secret.retire',
        operator: 'ops-aws',
        source: 'platform',
        where: 'aws',
        retired: true,
        versionId: 'c3d4-previous',
      },
    });
    expect(sm.commandCalls(GetSecretValueCommand)).toHaveLength(0); // never reads a value
  });

  it('secrets rotate prints when the previous secret stops verifying and refuses --overlap on a deployed stack', async () => {
    stackOutputs();
    sm.on(PutSecretValueCommand).resolves({ VersionId: 'e5f6-new' });
    ddb.on(PutCommand).resolves({});
    const before = Date.now();

    const rotated = await run(['secrets', 'rotate', 'platform', '--stack', 'Hookledger', '--region', 'eu-west-1']);

    expect(rotated.code).toBe(0);
    const until = Date.parse(
      /the previous secret verifies until (\S+) \(counted from the new version's creation\)/.exec(rotated.stdout)?.[1] ?? '',
    );
    expect(until - before).toBeGreaterThanOrEqual(72 * 3_600_000);
    expect(until - Date.now()).toBeLessThanOrEqual(72 * 3_600_000);
    expect(ddb.commandCalls(PutCommand)[0]?.args[0].input.Item).toMatchObject({
      action: 'secret.rotate',
      versionId: 'e5f6-new',
      previousUntil: until,
      overlapMs: 72 * 3_600_000,
    });

    const refused = await run(['secrets', 'rotate', 'platform', '--overlap', '6h', '--stack', 'Hookledger', '--region', 'eu-west-1']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/intake takes the overlap from the deployed config \(source "platform" secretOverlapHours 72\)/);
    expect(sm.commandCalls(PutSecretValueCommand)).toHaveLength(1);
  });

  describe('a secret the provider issues (Discord public key)', () => {
    const withDiscord = defineConfig({
      ...config,
      sources: [...config.sources, { id: 'discord', provider: 'discord', attribution: { keyId: { body: 'application_id' } } }],
    });
    const DISCORD_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:discord-XyZ';
    const KEY = 'b6b5a3f1c2d4e6f8a0b2c4d6e8f0a1b3c5d7e9f1a3b5c7d9e1f3a5b7c9d1e3f5';
    const outputs = () =>
      cfn.on(DescribeStacksCommand, { StackName: 'Hookledger' }).resolves({
        Stacks: [
          {
            StackName: 'Hookledger',
            StackStatus: 'UPDATE_COMPLETE',
            CreationTime: new Date(),
            Outputs: Object.entries({ ...OUTPUTS, SecretArnDiscord: DISCORD_ARN }).map(([OutputKey, OutputValue]) => ({
              OutputKey,
              OutputValue,
            })),
          },
        ],
      });
    const rotate = (argv: string[], stdin?: NodeJS.ReadableStream) =>
      runCli(
        ['secrets', 'rotate', 'discord', ...argv, '--stack', 'Hookledger', '--region', 'eu-west-1'],
        withDiscord,
        { USER: 'ops-aws', AWS_REGION: 'eu-west-1' },
        stdin,
      );

    it("--value-file - puts the provider's value with PutSecretValue, never printing or auditing it", async () => {
      outputs();
      sm.on(PutSecretValueCommand).resolves({ VersionId: 'f7a8-provided' });
      ddb.on(PutCommand).resolves({});

      const rotated = await rotate(['--value-file', '-'], Readable.from([Buffer.from(`${KEY}\n`)]));

      expect(rotated.stderr).toBe('');
      expect(rotated.code).toBe(0);
      expect(sm.commandCalls(PutSecretValueCommand).map((c) => c.args[0].input)).toEqual([{ SecretId: DISCORD_ARN, SecretString: KEY }]);
      expect(rotated.stdout).toMatch(
        /^rotated the signing secret of discord on stack Hookledger \(eu-west-1\) \(version f7a8-provided\) to the value in standard input\.\n/,
      );
      expect(ddb.commandCalls(PutCommand)[0]?.args[0].input.Item).toMatchObject({
        action: 'secret.rotate',
        source: 'discord',
        versionId: 'f7a8-provided',
        value: 'provided',
      });
      expect(rotated.stdout + JSON.stringify(ddb.commandCalls(PutCommand)[0]?.args[0].input.Item)).not.toContain(KEY);
    });

    it('refuses a generated value (exit 2, naming --value-file) and a value that is no ed25519 key, calling Secrets Manager for neither', async () => {
      outputs();
      const generated = await rotate([]);
      expect(generated.code).toBe(2);
      expect(generated.stderr).toMatch(/^error: source "discord" \(discord\) cannot use a generated secret: .*--value-file <path>/);
      const wrong = await rotate(['--value-file', '-'], Readable.from([Buffer.from('whsec_C2FVsBQIhrscChlQIMV5b5sSYspob7oD')]));
      expect(wrong.code).toBe(2);
      expect(wrong.stderr).toBe(
        'error: --value-file - (standard input) does not hold what source "discord" (discord) verifies with: ' +
          "expected the provider's ed25519 public key (32 bytes, hex)\n",
      );
      expect(sm.commandCalls(PutSecretValueCommand)).toHaveLength(0);
      expect(ddb.commandCalls(PutCommand)).toHaveLength(0);
    });
  });
});

describe('pause on AWS', () => {
  it('gaps: names the empty API-key secret and how to put a value (exit 3), calling the provider never', async () => {
    const gapConfig = defineConfig({
      ...config,
      sources: [
        ...config.sources,
        {
          id: 'stripe',
          provider: 'stripe',
          attribution: { tenantId: { body: 'account' }, keyId: { body: 'data.object.id' } },
          gapCheck: { api: 'stripe' },
        },
      ],
    });
    const arn = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:GapChecksstripeApiKey-XyZ';
    cfn.on(DescribeStacksCommand).resolves({
      Stacks: [
        {
          StackName: 'Hookledger',
          CreationTime: new Date(),
          StackStatus: 'CREATE_COMPLETE',
          Outputs: Object.entries({ ...OUTPUTS, GapApiKeySecretArnStripe: arn }).map(([OutputKey, OutputValue]) => ({
            OutputKey,
            OutputValue,
          })),
        },
      ],
    });
    sm.on(GetSecretValueCommand, { SecretId: arn }).rejects(
      Object.assign(new Error("Secrets Manager can't find the specified secret value for staging label: AWSCURRENT"), {
        name: 'ResourceNotFoundException',
      }),
    );
    const out = await runCli(
      ['gaps', '--source', 'stripe', '--from', '-1h', '--stack', 'Hookledger', '--region', 'eu-west-1'],
      gapConfig,
      {},
    );
    expect(out.code).toBe(3);
    expect(out.stderr).toBe(
      `error: the provider API key of source "stripe" has no value yet: put it with \`aws secretsmanager put-secret-value --secret-id ${arn} --secret-string ...\`\n`,
    );
    expect(sm.commandCalls(GetSecretValueCommand)).toHaveLength(1);
  });

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
