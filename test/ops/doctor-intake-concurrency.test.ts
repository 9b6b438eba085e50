/**
 * `hookledger doctor`'s concurrency row with `intake.reservedConcurrency`: intake's reservation is
 * summed with the consumers' against what the account can reserve, and what the deployed intake
 * function already holds counts as given back on redeploy. The intake function is found by its
 * logical id (DescribeStackResource); the last test proves the stack gives it that id.
 */
import { CloudFormationClient, DescribeStackResourceCommand, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import {
  GetAccountSettingsCommand,
  GetFunctionConcurrencyCommand,
  LambdaClient,
  ListEventSourceMappingsCommand,
} from '@aws-sdk/client-lambda';
import { ListSecretVersionIdsCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { ListSubscriptionsByTopicCommand, SNSClient } from '@aws-sdk/client-sns';
import { GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { GetParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import { defineConfig, type HookledgerConfig, type HookledgerConfigInput } from '../../core/config/schema';
import defaultConfig from '../../hookledger.config';
import { type BootstrapRequirement, type Check, doctor, doctorClients, INTAKE_FUNCTION_LOGICAL_ID } from '../../ops/doctor';
import { functionWithEnv, synth } from '../cdk/support';

const cfn = mockClient(CloudFormationClient);
const ssm = mockClient(SSMClient);
const lambda = mockClient(LambdaClient);
const sqs = mockClient(SQSClient);
const sm = mockClient(SecretsManagerClient);
const sns = mockClient(SNSClient);
afterEach(() => {
  for (const m of [cfn, ssm, lambda, sqs, sm, sns]) m.reset();
});

const REGION = 'eu-west-1';
const ACCOUNT = '123456789012';
const NEED: BootstrapRequirement = { parameter: '/cdk-bootstrap/hnb659fds/version', minVersion: 6, from: 'test' };
const INTAKE_FUNCTION = 'Hookledger-IngestHandlerFunction55E2-Xq7RtLm2Pz9a';
const CONSUMERS = ['billing-meter', 'audit-writer', 'risk-evaluator'] as const;
const pascal = { 'billing-meter': 'BillingMeter', 'audit-writer': 'AuditWriter', 'risk-evaluator': 'RiskEvaluator' } as const;
const queueUrl = (c: string) => `https://sqs.${REGION}.amazonaws.com/${ACCOUNT}/Hookledger-${c}-queue`;
const queueArn = (c: string) => `arn:aws:sqs:${REGION}:${ACCOUNT}:Hookledger-${c}-queue`;
const functionArn = (c: string) => `arn:aws:lambda:${REGION}:${ACCOUNT}:function:Hookledger-${c}-Worker`;
const QUOTA_REQUEST =
  'ask for a higher "Concurrent executions" quota: aws service-quotas request-service-quota-increase --service-code lambda --quota-code L-B99A9384 --desired-value 1000';

const config = (input: Partial<HookledgerConfigInput>): HookledgerConfig => defineConfig({ ...defaultConfig, ...input });
const intake40 = config({ intake: { reservedConcurrency: 40 } });
const reservingConsumers = (reserved: Partial<Record<(typeof CONSUMERS)[number], number>>) =>
  defaultConfig.consumers.map((c) => {
    const n = reserved[c.id as (typeof CONSUMERS)[number]];
    return n === undefined ? c : { ...c, reservedConcurrency: n };
  });

function account(limit: number, unreserved: number): void {
  lambda
    .on(GetAccountSettingsCommand)
    .resolves({ AccountLimit: { ConcurrentExecutions: limit, UnreservedConcurrentExecutions: unreserved } });
}

function notDeployed(): void {
  cfn.on(DescribeStacksCommand).rejects(Object.assign(new Error('Stack with id Hookledger does not exist'), { name: 'ValidationError' }));
  ssm.on(GetParameterCommand).resolves({ Parameter: { Value: '27' } });
  lambda.on(GetFunctionConcurrencyCommand).resolves({});
}

/** A deployed stack whose intake function and consumer workers hold nothing until a test says so. */
function deployed(): void {
  cfn.on(DescribeStacksCommand, { StackName: 'Hookledger' }).resolves({
    Stacks: [
      {
        StackName: 'Hookledger',
        StackStatus: 'UPDATE_COMPLETE',
        CreationTime: new Date('2026-11-30T08:00:00Z'),
        Outputs: CONSUMERS.map((c) => ({ OutputKey: `QueueUrl${pascal[c]}`, OutputValue: queueUrl(c) })),
      },
    ],
  });
  cfn.on(DescribeStackResourceCommand, { StackName: 'Hookledger', LogicalResourceId: INTAKE_FUNCTION_LOGICAL_ID }).resolves({
    StackResourceDetail: {
      StackName: 'Hookledger',
      LogicalResourceId: INTAKE_FUNCTION_LOGICAL_ID,
      PhysicalResourceId: INTAKE_FUNCTION,
      ResourceType: 'AWS::Lambda::Function',
      ResourceStatus: 'UPDATE_COMPLETE',
      LastUpdatedTimestamp: new Date('2026-11-30T08:00:00Z'),
    },
  });
  ssm.on(GetParameterCommand).resolves({ Parameter: { Value: '27' } });
  lambda.on(GetFunctionConcurrencyCommand).resolves({});
  for (const c of CONSUMERS) {
    sqs.on(GetQueueAttributesCommand, { QueueUrl: queueUrl(c) }).resolves({ Attributes: { QueueArn: queueArn(c) } });
    lambda.on(ListEventSourceMappingsCommand, { EventSourceArn: queueArn(c) }).resolves({
      EventSourceMappings: [{ UUID: `uuid-${c}`, State: 'Enabled', EventSourceArn: queueArn(c), FunctionArn: functionArn(c) }],
    });
  }
  sm.on(ListSecretVersionIdsCommand).resolves({ Versions: [] });
  sns.on(ListSubscriptionsByTopicCommand).resolves({ Subscriptions: [] });
}

const intakeHolds = (n: number) =>
  lambda.on(GetFunctionConcurrencyCommand, { FunctionName: INTAKE_FUNCTION }).resolves({ ReservedConcurrentExecutions: n });

async function concurrency(cfg: HookledgerConfig): Promise<Check> {
  const clients = doctorClients(REGION);
  try {
    const report = await doctor(clients, { config: cfg, stackName: 'Hookledger', bootstrap: NEED });
    return report.checks.find((c) => c.id === 'concurrency')!;
  } finally {
    clients.destroy();
  }
}

/** intake 40 on an account with 130 unreserved: 30 reservable. */
const INTAKE_40_OF_30: Check = {
  id: 'concurrency',
  status: 'problem',
  message:
    'the config reserves 40 (intake 40) but the account can reserve only 30 while keeping 100 unreserved (account limit 130, unreserved 130); the deploy would fail and roll back',
  fix: `lower or remove intake.reservedConcurrency in hookledger.config.ts (without it intake shares the account's pool), or ${QUOTA_REQUEST}`,
};

describe("doctor's concurrency check with intake.reservedConcurrency", () => {
  it('finds intake 40 more than an undeployed stack can reserve on an account with 30 to spare, and asks CloudFormation for no resource', async () => {
    notDeployed();
    account(130, 130);
    expect(await concurrency(intake40)).toEqual(INTAKE_40_OF_30);
    expect(cfn.commandCalls(DescribeStackResourceCommand)).toHaveLength(0);
  });

  it('finds the same problem when the deployed intake function holds no reservation yet', async () => {
    deployed();
    account(130, 130);
    expect(await concurrency(intake40)).toEqual(INTAKE_40_OF_30);
    expect(lambda.commandCalls(GetFunctionConcurrencyCommand, { FunctionName: INTAKE_FUNCTION })).toHaveLength(1);
  });

  it('counts the 40 the deployed intake function already holds as reservable again', async () => {
    deployed();
    account(170, 130);
    intakeHolds(40);
    // 130 unreserved + 40 held - 100 kept = 70 reservable.
    expect(await concurrency(intake40)).toEqual({
      id: 'concurrency',
      status: 'ok',
      message: 'reserves 40 of 70 reservable (account limit 170, unreserved 130)',
    });
  });

  it('names intake beside the consumers and both settings in the fix when together they reserve too much', async () => {
    notDeployed();
    account(1000, 200);
    expect(
      await concurrency(config({ intake: { reservedConcurrency: 40 }, consumers: reservingConsumers({ 'billing-meter': 100 }) })),
    ).toEqual({
      id: 'concurrency',
      status: 'problem',
      message:
        'the config reserves 140 (intake 40, billing-meter 100) but the account can reserve only 100 while keeping 100 unreserved (account limit 1000, unreserved 200); the deploy would fail and roll back',
      fix: `lower or remove intake.reservedConcurrency and remove reservedConcurrency from those consumers in hookledger.config.ts (maxConcurrency still caps each consumer), or ${QUOTA_REQUEST}`,
    });
  });

  it('counts what a deployed intake holds as given back when the config no longer reserves for intake', async () => {
    deployed();
    account(170, 90);
    intakeHolds(40);
    // 90 unreserved + 40 held by intake - 100 kept = 30 reservable, for billing-meter 10 and audit-writer 10.
    expect(await concurrency(config({ consumers: reservingConsumers({ 'billing-meter': 10, 'audit-writer': 10 }) }))).toEqual({
      id: 'concurrency',
      status: 'ok',
      message: 'reserves 20 of 30 reservable (account limit 170, unreserved 90)',
    });
  });

  it('holds nothing for intake when the deployed stack has no intake function by that logical id', async () => {
    deployed();
    account(130, 130);
    cfn
      .on(DescribeStackResourceCommand)
      .rejects(
        Object.assign(new Error(`Resource ${INTAKE_FUNCTION_LOGICAL_ID} does not exist for stack Hookledger`), { name: 'ValidationError' }),
      );
    expect(await concurrency(intake40)).toEqual(INTAKE_40_OF_30);
  });

  it('says it was not allowed to check when DescribeStackResource is denied', async () => {
    deployed();
    account(130, 130);
    cfn
      .on(DescribeStackResourceCommand)
      .rejects(
        Object.assign(new Error('User is not authorized to perform: cloudformation:DescribeStackResource'), { name: 'AccessDenied' }),
      );
    expect(await concurrency(intake40)).toEqual({
      id: 'concurrency',
      status: 'problem',
      message: 'not allowed to check (cloudformation:DescribeStackResource was denied)',
      fix: 'run doctor with a role that may call cloudformation:DescribeStackResource',
    });
  });

  it('finds the intake function under INTAKE_FUNCTION_LOGICAL_ID in a synthesized stack of any name, holding intake.reservedConcurrency', () => {
    const { json } = synth({ ...defaultConfig, intake: { endpoint: 'function-url', reservedConcurrency: 40 } }, 'HookledgerStaging');
    const [logicalId, fn] = functionWithEnv(json, 'SOURCE_SECRETS');
    expect(logicalId).toBe(INTAKE_FUNCTION_LOGICAL_ID);
    expect(fn.Properties.ReservedConcurrentExecutions).toBe(40);
  });
});
