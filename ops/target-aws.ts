/**
 * A deployed stack as a Target (ops/target.ts): its CloudFormation outputs name the tables, queues,
 * webhook URL and secrets; credentials and region come from the usual AWS chain. Apart from the local
 * target so that a command on the local stack loads none of these clients (CloudFormation, Lambda,
 * Secrets Manager): resolveTarget imports this module only for `--stack`.
 */
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import { LambdaClient } from '@aws-sdk/client-lambda';
import { S3Client } from '@aws-sdk/client-s3';
import { GetSecretValueCommand, ListSecretVersionIdsCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SQSClient } from '@aws-sdk/client-sqs';
import { createDocumentClient } from '../adapters/clients';
import { S3PayloadBlobs } from '../adapters/payload-blobs';
import { dynamoStreamBatches } from '../adapters/stream-batch';
import type { HookledgerConfig } from '../core/config/schema';
import { consumerSecretArnOutput, dlqUrlOutput, gapApiKeySecretArnOutput, OUTPUT, queueUrlOutput, secretArnOutput } from '../core/outputs';
import type { SigningSecrets } from '../core/schemes/types';
import type { QueuePair } from './deps';
import { TargetError } from './errors';
import { lambdaPauseControl } from './pause';
import type { SecretRotationState, Target, TargetOptions, TargetSecrets } from './target-types';

export async function awsTarget(options: TargetOptions, stackName: string): Promise<Target> {
  const region = options.region;
  const clientConfig = region ? { region } : {};
  const outputs = await stackOutputs(stackName, region, clientConfig);
  const need = (key: string) => {
    const value = outputs.get(key);
    if (!value) {
      throw new TargetError(`stack ${stackName} has no output ${key}; was it deployed from this repository (\`npx cdk deploy\`)?`);
    }
    return value;
  };
  const tables = { events: need(OUTPUT.eventStoreTable), ledger: need(OUTPUT.ledgerTable) };
  const webhookBase = need(OUTPUT.webhookUrl);
  const queues: Record<string, QueuePair> = {};
  for (const consumer of options.config.consumers) {
    const url = outputs.get(queueUrlOutput(consumer.id));
    const dlqUrl = outputs.get(dlqUrlOutput(consumer.id));
    if (url && dlqUrl) queues[consumer.id] = { url, dlqUrl };
  }
  const secrets = new StackSecrets(stackName, outputs, options.config, new SecretsManagerClient(clientConfig));
  const ddb = createDocumentClient(clientConfig);
  const sqs = new SQSClient(clientConfig);
  const streams = new DynamoDBStreamsClient(clientConfig);
  const lambda = new LambdaClient(clientConfig);
  const bucketName = outputs.get(OUTPUT.payloadBucket);
  const s3 = bucketName ? new S3Client(clientConfig) : undefined;
  return {
    kind: 'aws',
    label: `stack ${stackName}${region ? ` (${region})` : ''}`,
    ddb,
    sqs,
    tables,
    queues,
    ...(outputs.get(OUTPUT.fanoutFailureQueueUrl) ? { fanoutFailureQueueUrl: outputs.get(OUTPUT.fanoutFailureQueueUrl) } : {}),
    streamBatches: dynamoStreamBatches(streams),
    webhookUrl: (sourceId) => `${webhookBase.endsWith('/') ? webhookBase : `${webhookBase}/`}${encodeURIComponent(sourceId)}`,
    ...secrets.forTarget(),
    pauseControl: lambdaPauseControl({ lambda, sqs, queues }),
    ...(s3 && bucketName ? { payloadBucket: new S3PayloadBlobs({ client: s3, bucket: bucketName }) } : {}),
    intakeOutcomes: async () => undefined,
    destroy: () => {
      ddb.destroy();
      sqs.destroy();
      streams.destroy();
      secrets.client.destroy();
      lambda.destroy();
      s3?.destroy();
    },
  };
}

/** The stack's CloudFormation outputs by key, or a TargetError that says what to fix (stack, region, credentials). */
async function stackOutputs(
  stackName: string,
  region: string | undefined,
  clientConfig: { region?: string },
): Promise<Map<string, string>> {
  const cfn = new CloudFormationClient(clientConfig);
  try {
    const out = await cfn.send(new DescribeStacksCommand({ StackName: stackName }));
    const stack = out.Stacks?.[0];
    if (!stack) throw new TargetError(`stack ${stackName} not found`);
    return new Map((stack.Outputs ?? []).map((o) => [o.OutputKey ?? '', o.OutputValue ?? '']));
  } catch (error) {
    throw new TargetError(describeAwsError(error, stackName, region), { cause: error });
  } finally {
    cfn.destroy();
  }
}

/** A deployed stack's secrets in Secrets Manager, found by its outputs: values read only when asked for, never printed. */
class StackSecrets {
  /** Source id -> its signing secret's ARN. */
  readonly sourceSecretIds: Record<string, string> = {};
  /** HTTP consumer id -> its signing secret's ARN. */
  readonly consumerSecretIds: Record<string, string> = {};

  constructor(
    private readonly stackName: string,
    private readonly outputs: ReadonlyMap<string, string>,
    private readonly config: HookledgerConfig,
    readonly client: SecretsManagerClient,
  ) {
    for (const source of config.sources) {
      const arn = outputs.get(secretArnOutput(source.id));
      if (arn) this.sourceSecretIds[source.id] = arn;
    }
    for (const consumer of config.consumers) {
      const arn = outputs.get(consumerSecretArnOutput(consumer.id));
      if (arn) this.consumerSecretIds[consumer.id] = arn;
    }
  }

  forTarget(): TargetSecrets {
    return {
      signingSecret: (sourceId) => this.signingSecret(sourceId),
      rotator: { kind: 'aws', client: this.client, secretIds: this.sourceSecretIds },
      consumerSecrets: {
        get: (consumerId) => this.consumerSecret(consumerId),
        rotator: { kind: 'aws', client: this.client, secretIds: this.consumerSecretIds },
      },
      payloadHashKey: () => this.payloadHashKey(),
      secretRotation: (sourceId) => this.secretRotation(sourceId),
      apiKeyLocation: (sourceId) =>
        `the secret ${this.outputs.get(gapApiKeySecretArnOutput(sourceId)) ?? '(none)'} (stack output ${gapApiKeySecretArnOutput(sourceId)})`,
      providerApiKey: (sourceId) => this.providerApiKey(sourceId),
    };
  }

  async signingSecret(sourceId: string): Promise<string> {
    const secretId = this.sourceSecretIds[sourceId];
    if (!secretId) throw new TargetError(`stack ${this.stackName} has no SecretArn output for source "${sourceId}"`);
    const out = await this.client.send(new GetSecretValueCommand({ SecretId: secretId, VersionStage: 'AWSCURRENT' }));
    if (!out.SecretString) throw new TargetError(`the signing secret of source "${sourceId}" has no value yet`);
    return out.SecretString;
  }

  async consumerSecret(consumerId: string): Promise<SigningSecrets> {
    const secretId = this.consumerSecretIds[consumerId];
    if (!secretId)
      throw new TargetError(
        `stack ${this.stackName} has no ${consumerSecretArnOutput(consumerId)} output: is "${consumerId}" an http consumer?`,
      );
    const out = await this.client.send(new GetSecretValueCommand({ SecretId: secretId, VersionStage: 'AWSCURRENT' }));
    if (!out.SecretString) throw new TargetError(`the signing secret of consumer "${consumerId}" has no value yet`);
    return { current: out.SecretString };
  }

  async payloadHashKey(): Promise<Buffer> {
    const secretId = this.outputs.get(OUTPUT.payloadHashKeySecretArn);
    if (!secretId)
      throw new TargetError(`stack ${this.stackName} has no output ${OUTPUT.payloadHashKeySecretArn}; redeploy it from this repository`);
    const out = await this.client.send(new GetSecretValueCommand({ SecretId: secretId }));
    if (!out.SecretString) throw new TargetError('the payload-hash key secret has no value');
    return Buffer.from(out.SecretString, 'utf8');
  }

  async secretRotation(sourceId: string): Promise<SecretRotationState> {
    const secretId = this.sourceSecretIds[sourceId];
    if (!secretId) throw new TargetError(`stack ${this.stackName} has no SecretArn output for source "${sourceId}"`);
    // Version metadata only (stages and creation dates), never a value: AWSPREVIOUS verifies until
    // the AWSCURRENT version's creation plus the source's overlap (adapters/secrets-manager.ts).
    const out = await this.client.send(new ListSecretVersionIdsCommand({ SecretId: secretId }));
    const versions = out.Versions ?? [];
    const current = versions.find((v) => v.VersionStages?.includes('AWSCURRENT'));
    const hasPrevious = versions.some((v) => v.VersionStages?.includes('AWSPREVIOUS'));
    const overlapHours = this.config.sources.find((s) => s.id === sourceId)?.secretOverlapHours;
    const rotatedAt = current?.CreatedDate?.getTime();
    return {
      source: sourceId,
      hasPrevious,
      ...(hasPrevious && rotatedAt !== undefined && overlapHours !== undefined
        ? { previousUntil: rotatedAt + overlapHours * 3_600_000 }
        : {}),
    };
  }

  async providerApiKey(sourceId: string): Promise<string> {
    const secretId = this.outputs.get(gapApiKeySecretArnOutput(sourceId));
    if (!secretId) {
      throw new TargetError(
        `stack ${this.stackName} has no output ${gapApiKeySecretArnOutput(sourceId)}: does source "${sourceId}" have gapCheck, and was the stack deployed since?`,
      );
    }
    const unset = () =>
      new TargetError(
        `the provider API key of source "${sourceId}" has no value yet: put it with \`aws secretsmanager put-secret-value --secret-id ${secretId} --secret-string ...\``,
      );
    // Created without a value: until one is put, there is no AWSCURRENT version to read.
    const out = await this.client.send(new GetSecretValueCommand({ SecretId: secretId })).catch((error: unknown) => {
      throw (error as Error)?.name === 'ResourceNotFoundException' ? unset() : error;
    });
    if (!out.SecretString) throw unset();
    return out.SecretString;
  }
}

function describeAwsError(error: unknown, stackName: string, region: string | undefined): string {
  if (error instanceof TargetError) return error.message;
  const name = (error as Error)?.name ?? 'Error';
  const message = (error as Error)?.message ?? String(error);
  if (name === 'ValidationError' && /does not exist/.test(message)) {
    return `stack ${stackName} does not exist${region ? ` in ${region}` : ' in the current region'}; check --stack and --region (or AWS_REGION)`;
  }
  if (name === 'CredentialsProviderError' || /credential/i.test(message)) {
    return `no AWS credentials were found (${message}); set AWS_PROFILE or run \`aws sso login\`, then try again`;
  }
  if (/region/i.test(message) && !region) {
    return `no AWS region is set (${message}); pass --region or set AWS_REGION`;
  }
  return `could not read stack ${stackName}: ${name}: ${message}`;
}
