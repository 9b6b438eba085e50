/**
 * `hookledger doctor` against mocked AWS clients: a fresh account, a healthy deployment, and a
 * deployment with every problem doctor knows, each with its fix. Proves the calls, the verdicts and
 * the exit codes, not the services' behaviour (that needs a real account).
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import {
  GetAccountSettingsCommand,
  GetFunctionConcurrencyCommand,
  LambdaClient,
  ListEventSourceMappingsCommand,
} from '@aws-sdk/client-lambda';
import { GetSecretValueCommand, ListSecretVersionIdsCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { ListSubscriptionsByTopicCommand, SNSClient } from '@aws-sdk/client-sns';
import { GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { GetParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { main } from '../../bin/cli';
import { defineConfig, type HookledgerConfig } from '../../core/config/schema';
import defaultConfig from '../../hookledger.config';
import { type BootstrapRequirement, bootstrapRequirement, type DoctorReport, doctor, doctorClients } from '../../ops/doctor';

const cfn = mockClient(CloudFormationClient);
const ssm = mockClient(SSMClient);
const lambda = mockClient(LambdaClient);
const sqs = mockClient(SQSClient);
const sm = mockClient(SecretsManagerClient);
const sns = mockClient(SNSClient);
const mocks = [cfn, ssm, lambda, sqs, sm, sns];
afterEach(() => {
  for (const m of mocks) m.reset();
});

const REGION = 'eu-west-1';
const ACCOUNT = '123456789012';
const Q = `https://sqs.${REGION}.amazonaws.com/${ACCOUNT}`;
const SECRET_ARN = `arn:aws:secretsmanager:${REGION}:${ACCOUNT}:secret:IngestSecretsplatform-AbC`;
const TOPIC_ARN = `arn:aws:sns:${REGION}:${ACCOUNT}:Hookledger-AlarmTopic-XyZ`;
const NEED: BootstrapRequirement = { parameter: '/cdk-bootstrap/hnb659fds/version', minVersion: 6, from: 'test' };
const CONSUMERS = ['billing-meter', 'audit-writer', 'risk-evaluator'] as const;
const pascal = { 'billing-meter': 'BillingMeter', 'audit-writer': 'AuditWriter', 'risk-evaluator': 'RiskEvaluator' } as const;
const queueArn = (c: string) => `arn:aws:sqs:${REGION}:${ACCOUNT}:Hookledger-${c}-queue`;
const functionArn = (c: string) => `arn:aws:lambda:${REGION}:${ACCOUNT}:function:Hookledger-${c}-Worker`;

const OUTPUTS = {
  WebhookUrl: `https://abc.execute-api.${REGION}.amazonaws.com/hooks/`,
  EventStoreTableName: 'Hookledger-Events',
  LedgerTableName: 'Hookledger-Ledger',
  SecretArnPlatform: SECRET_ARN,
  AlarmTopicArn: TOPIC_ARN,
  ...Object.fromEntries(
    CONSUMERS.flatMap((c) => [
      [`QueueUrl${pascal[c]}`, `${Q}/Hookledger-${c}-queue`],
      [`DlqUrl${pascal[c]}`, `${Q}/dlq-${c}`],
    ]),
  ),
};

function clients() {
  return doctorClients(REGION);
}

/** A deployed, healthy stack; each test then breaks what it is about. */
function healthy(): void {
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
  ssm.on(GetParameterCommand, { Name: NEED.parameter }).resolves({ Parameter: { Name: NEED.parameter, Value: '27' } });
  lambda.on(GetAccountSettingsCommand).resolves({ AccountLimit: { ConcurrentExecutions: 1000, UnreservedConcurrentExecutions: 1000 } });
  lambda.on(GetFunctionConcurrencyCommand).resolves({});
  for (const c of CONSUMERS) {
    sqs
      .on(GetQueueAttributesCommand, { QueueUrl: OUTPUTS[`QueueUrl${pascal[c]}` as keyof typeof OUTPUTS] })
      .resolves({ Attributes: { QueueArn: queueArn(c) } });
    lambda.on(ListEventSourceMappingsCommand, { EventSourceArn: queueArn(c) }).resolves({
      EventSourceMappings: [{ UUID: `uuid-${c}`, State: 'Enabled', EventSourceArn: queueArn(c), FunctionArn: functionArn(c) }],
    });
  }
  sm.on(ListSecretVersionIdsCommand, { SecretId: SECRET_ARN }).resolves({
    Versions: [
      { VersionId: 'generated', VersionStages: ['AWSPREVIOUS'], CreatedDate: new Date('2026-11-30T08:00:00Z') },
      { VersionId: 'from-provider', VersionStages: ['AWSCURRENT'], CreatedDate: new Date('2026-11-30T08:10:00Z') },
    ],
  });
  sns.on(ListSubscriptionsByTopicCommand, { TopicArn: TOPIC_ARN }).resolves({
    Subscriptions: [{ SubscriptionArn: `${TOPIC_ARN}:sub-1`, Protocol: 'email', Endpoint: 'oncall@example.com', TopicArn: TOPIC_ARN }],
  });
}

async function run(config: HookledgerConfig = defaultConfig): Promise<DoctorReport> {
  const c = clients();
  try {
    return await doctor(c, { config, stackName: 'Hookledger', bootstrap: NEED });
  } finally {
    c.destroy();
  }
}

const statuses = (report: DoctorReport) => Object.fromEntries(report.checks.map((c) => [c.id, c.status]));
const check = (report: DoctorReport, id: string) => report.checks.find((c) => c.id === id)!;

const reserving = defineConfig({
  ...defaultConfig,
  consumers: defaultConfig.consumers.map((c) => (c.id === 'risk-evaluator' ? c : { ...c, reservedConcurrency: 10 })),
});

describe('doctor on a healthy deployment', () => {
  it('passes every check, never reads a secret value, and finds the consumers enabled', async () => {
    healthy();
    const report = await run();
    expect(report).toMatchObject({ stack: 'Hookledger', region: REGION, deployed: true, problems: 0 });
    expect(statuses(report)).toEqual({
      bootstrap: 'ok',
      concurrency: 'ok',
      stack: 'ok',
      'secret:platform': 'ok',
      alarms: 'ok',
      'consumer:billing-meter': 'ok',
      'consumer:audit-writer': 'ok',
      'consumer:risk-evaluator': 'ok',
    });
    expect(check(report, 'bootstrap').message).toBe(`CDK bootstrap version 27 in ${REGION} (this app needs at least 6)`);
    expect(check(report, 'concurrency').message).toBe(
      "nothing reserved (account limit 1000, unreserved 1000); each consumer is capped by its event source's maxConcurrency",
    );
    expect(check(report, 'alarms').message).toBe('the alarm topic has 1 confirmed subscription(s) (email oncall@example.com)');
    expect(sm.commandCalls(GetSecretValueCommand)).toHaveLength(0);
  });

  it('reports a paused consumer as paused (not a problem) with the command that resumes it', async () => {
    healthy();
    lambda.on(ListEventSourceMappingsCommand, { EventSourceArn: queueArn('risk-evaluator') }).resolves({
      EventSourceMappings: [{ UUID: 'uuid-r', State: 'Disabled', FunctionArn: functionArn('risk-evaluator') }],
    });
    const report = await run();
    expect(report.problems).toBe(0);
    expect(check(report, 'consumer:risk-evaluator')).toEqual({
      id: 'consumer:risk-evaluator',
      status: 'info',
      message:
        'risk-evaluator: paused (event source Disabled); its deliveries wait in its queue. Resume with: npx hookledger resume risk-evaluator',
    });
  });

  it("counts the stack's own reservations as reservable again when it redeploys", async () => {
    healthy();
    // 20 held by this stack's two reserving workers; 110 unreserved: 110 + 20 - 100 = 30 reservable.
    lambda.on(GetAccountSettingsCommand).resolves({ AccountLimit: { ConcurrentExecutions: 130, UnreservedConcurrentExecutions: 110 } });
    lambda.on(GetFunctionConcurrencyCommand, { FunctionName: functionArn('billing-meter') }).resolves({ ReservedConcurrentExecutions: 10 });
    lambda.on(GetFunctionConcurrencyCommand, { FunctionName: functionArn('audit-writer') }).resolves({ ReservedConcurrentExecutions: 10 });
    const report = await run(reserving);
    expect(check(report, 'concurrency')).toEqual({
      id: 'concurrency',
      status: 'ok',
      message: 'reserves 20 of 30 reservable (account limit 130, unreserved 110)',
    });
  });
});

describe('doctor on a fresh account', () => {
  it('finds no bootstrap and too little concurrency for the reservations, and skips the deployed-stack checks', async () => {
    cfn.on(DescribeStacksCommand).rejects(Object.assign(new Error('Stack with id Hookledger does not exist'), { name: 'ValidationError' }));
    ssm.on(GetParameterCommand).rejects(Object.assign(new Error('parameter not found'), { name: 'ParameterNotFound' }));
    lambda.on(GetAccountSettingsCommand).resolves({ AccountLimit: { ConcurrentExecutions: 10, UnreservedConcurrentExecutions: 10 } });
    const report = await run(reserving);
    expect(report.deployed).toBe(false);
    expect(report.problems).toBe(2);
    expect(report.checks).toEqual([
      {
        id: 'bootstrap',
        status: 'problem',
        message: `${REGION} is not bootstrapped for the CDK (no SSM parameter /cdk-bootstrap/hnb659fds/version); the template is too large to deploy inline and has file assets`,
        fix: 'npx cdk bootstrap (once per account and region; upgrades the CDKToolkit stack in place)',
      },
      {
        id: 'concurrency',
        status: 'problem',
        message:
          'the config reserves 20 (billing-meter 10, audit-writer 10) but the account can reserve only 0 while keeping 100 unreserved (account limit 10, unreserved 10); the deploy would fail and roll back',
        fix: 'remove reservedConcurrency from those consumers in hookledger.config.ts (maxConcurrency still caps each), or ask for a higher "Concurrent executions" quota: aws service-quotas request-service-quota-increase --service-code lambda --quota-code L-B99A9384 --desired-value 1000',
      },
      {
        id: 'stack',
        status: 'info',
        message: `stack Hookledger is not deployed in ${REGION}; the secret, alarm and consumer checks run once it is`,
      },
    ]);
    expect(sqs.calls()).toHaveLength(0);
    expect(sns.calls()).toHaveLength(0);
  });

  it('says, without failing, that a 10-execution account cannot run every consumer at its maxConcurrency at once', async () => {
    cfn.on(DescribeStacksCommand).rejects(Object.assign(new Error('Stack with id Hookledger does not exist'), { name: 'ValidationError' }));
    ssm.on(GetParameterCommand).resolves({ Parameter: { Value: '27' } });
    lambda.on(GetAccountSettingsCommand).resolves({ AccountLimit: { ConcurrentExecutions: 10, UnreservedConcurrentExecutions: 10 } });
    const report = await run();
    expect(report.problems).toBe(0);
    expect(check(report, 'concurrency')).toMatchObject({
      status: 'info',
      message:
        "nothing reserved (account limit 10, unreserved 10); the consumers' maxConcurrency add up to 15, more than the account can run at once, so under load they share what there is",
    });
  });
});

describe('doctor on a deployment with problems', () => {
  it('reports an old bootstrap, the placeholder secret, an unsubscribed topic and a consumer without event source, each with its fix', async () => {
    healthy();
    ssm.on(GetParameterCommand, { Name: NEED.parameter }).resolves({ Parameter: { Value: '5' } });
    sm.on(ListSecretVersionIdsCommand, { SecretId: SECRET_ARN }).resolves({
      Versions: [{ VersionId: 'generated', VersionStages: ['AWSCURRENT'], CreatedDate: new Date('2026-11-30T08:00:00Z') }],
    });
    sns.on(ListSubscriptionsByTopicCommand).resolves({ Subscriptions: [] });
    lambda.on(ListEventSourceMappingsCommand, { EventSourceArn: queueArn('audit-writer') }).resolves({ EventSourceMappings: [] });

    const report = await run();
    expect(report.problems).toBe(4);
    expect(check(report, 'bootstrap')).toMatchObject({
      status: 'problem',
      message: `CDK bootstrap version 5 in ${REGION} is older than 6, which this app's assets need (test)`,
      fix: 'npx cdk bootstrap (once per account and region; upgrades the CDKToolkit stack in place)',
    });
    expect(check(report, 'secret:platform')).toEqual({
      id: 'secret:platform',
      status: 'problem',
      message:
        'the signing secret of platform is still the placeholder CloudFormation generated: every webhook from the provider will be refused (401)',
      fix: `aws secretsmanager put-secret-value --region ${REGION} --secret-id ${SECRET_ARN} --secret-string '<the signing secret the provider issued>'`,
    });
    expect(check(report, 'alarms')).toEqual({
      id: 'alarms',
      status: 'problem',
      message: 'the alarm topic has no subscription: alarms reach nobody',
      fix: `set alarms.email in hookledger.config.ts and deploy, or subscribe directly: aws sns subscribe --topic-arn ${TOPIC_ARN} --protocol email --notification-endpoint you@example.com`,
    });
    expect(check(report, 'consumer:audit-writer')).toMatchObject({
      status: 'problem',
      message: 'no event source reads the queue of audit-writer: its messages wait and nothing delivers them',
    });
    expect(sm.commandCalls(GetSecretValueCommand)).toHaveLength(0);
  });

  it('treats a subscription pending confirmation as no subscription yet', async () => {
    healthy();
    sns.on(ListSubscriptionsByTopicCommand).resolves({
      Subscriptions: [{ SubscriptionArn: 'PendingConfirmation', Protocol: 'email', Endpoint: 'oncall@example.com' }],
    });
    const report = await run();
    expect(check(report, 'alarms')).toEqual({
      id: 'alarms',
      status: 'problem',
      message: 'the alarm topic has 1 subscription(s) pending confirmation and none confirmed: alarms reach nobody yet',
      fix: 'confirm it from the e-mail AWS Notifications sent (oncall@example.com)',
    });
  });

  it('reports a rolled-back first deploy with how to recover, and a denied call naming the permission', async () => {
    cfn
      .on(DescribeStacksCommand)
      .resolves({ Stacks: [{ StackName: 'Hookledger', StackStatus: 'ROLLBACK_COMPLETE', CreationTime: new Date() }] });
    ssm.on(GetParameterCommand).rejects(Object.assign(new Error('User is not authorized'), { name: 'AccessDeniedException' }));
    lambda.on(GetAccountSettingsCommand).resolves({ AccountLimit: { ConcurrentExecutions: 1000, UnreservedConcurrentExecutions: 1000 } });
    const report = await run();
    expect(check(report, 'stack')).toMatchObject({
      status: 'problem',
      message: 'stack Hookledger is ROLLBACK_COMPLETE: its last deploy failed',
    });
    expect(check(report, 'stack').fix).toContain(
      'aws cloudformation delete-stack --stack-name Hookledger; retained tables, queues and secrets stay',
    );
    expect(check(report, 'bootstrap')).toEqual({
      id: 'bootstrap',
      status: 'problem',
      message: 'not allowed to check (ssm:GetParameter was denied)',
      fix: 'run doctor with a role that may call ssm:GetParameter',
    });
  });
});

describe('hookledger doctor (the command)', () => {
  function io() {
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    let out = '';
    let err = '';
    stdout.on('data', (c: Buffer) => (out += c.toString()));
    stderr.on('data', (c: Buffer) => (err += c.toString()));
    return { io: { stdout, stderr, stdin: new PassThrough(), env: { USER: 'doctor-test' } }, out: () => out, err: () => err };
  }

  it('prints each problem with its fix and exits 1; --json gives the same report', async () => {
    healthy();
    sns.on(ListSubscriptionsByTopicCommand).resolves({ Subscriptions: [] });
    const human = io();
    expect(await main(['doctor', '--stack', 'Hookledger', '--region', REGION], human.io, defaultConfig)).toBe(1);
    const text = human.out();
    expect(text).toContain(`hookledger doctor: stack Hookledger in ${REGION}`);
    expect(text).toMatch(/^PROBLEM {2}alarms {19}the alarm topic has no subscription: alarms reach nobody$/m);
    expect(text).toMatch(/^ {34}fix: set alarms\.email in hookledger\.config\.ts and deploy/m);
    expect(text).toMatch(/^ok {7}consumer:billing-meter {3}billing-meter: event source enabled$/m);
    expect(text).toContain('1 problem(s) found');

    const json = io();
    expect(await main(['doctor', '--json', '--stack', 'Hookledger', '--region', REGION], json.io, defaultConfig)).toBe(1);
    const report = JSON.parse(json.out()) as DoctorReport;
    expect(report.problems).toBe(1);
    expect(report.checks.find((c) => c.id === 'alarms')?.status).toBe('problem');
  });

  it('exits 0 on a healthy stack and checks the default stack name when --stack is left out', async () => {
    healthy();
    const run = io();
    expect(await main(['doctor', '--region', REGION], run.io, defaultConfig)).toBe(0);
    expect(run.out()).toContain('no problems found');
    expect(cfn.commandCalls(DescribeStacksCommand)[0]!.args[0].input).toEqual({ StackName: 'Hookledger' });
  });
});

describe('bootstrapRequirement', () => {
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'hookledger-doctor-'));
  });
  afterAll(async () => {
    if (root) await rm(root, { recursive: true, force: true });
  });

  it('reads the version and parameter this stack and its asset manifest need from cdk.out', async () => {
    await mkdir(path.join(root, 'cdk.out'));
    await writeFile(
      path.join(root, 'cdk.out', 'manifest.json'),
      JSON.stringify({
        artifacts: {
          'Other.assets': {
            type: 'cdk:asset-manifest',
            properties: { requiresBootstrapStackVersion: 6, bootstrapStackVersionSsmParameter: '/cdk-bootstrap/custom1/version' },
          },
          Other: {
            type: 'aws:cloudformation:stack',
            properties: {
              stackName: 'Other',
              requiresBootstrapStackVersion: 8,
              bootstrapStackVersionSsmParameter: '/cdk-bootstrap/custom1/version',
            },
            dependencies: ['Other.assets'],
          },
          Hookledger: { type: 'aws:cloudformation:stack', properties: { stackName: 'Hookledger', requiresBootstrapStackVersion: 6 } },
        },
      }),
    );
    expect(await bootstrapRequirement(root, 'Other')).toEqual({
      parameter: '/cdk-bootstrap/custom1/version',
      minVersion: 8,
      from: path.join('cdk.out', 'manifest.json'),
    });
  });

  it("falls back to aws-cdk-lib's minimum and cdk.json's qualifier before the first synth", async () => {
    await writeFile(path.join(root, 'cdk.json'), JSON.stringify({ context: { '@aws-cdk/core:bootstrapQualifier': 'team42' } }));
    expect(await bootstrapRequirement(root, 'Hookledger')).toEqual({
      parameter: '/cdk-bootstrap/team42/version',
      minVersion: 6,
      from: "aws-cdk-lib's default synthesizer (no cdk.out yet)",
    });
  });
});
