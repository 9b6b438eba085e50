/**
 * Which stack the operations run on (for the CLI and the console alike), and the clients for it.
 *
 *   --stack <name>  a deployed stack: its CloudFormation outputs name the tables, queues, webhook
 *                   URL and secrets; credentials and region come from the usual AWS chain.
 *   (default)       the local stack described by .hookledger/state.json (HOOKLEDGER_STATE
 *                   overrides the path), written by `npm start` while it runs.
 */
import path from 'node:path';
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import { LambdaClient } from '@aws-sdk/client-lambda';
import { S3Client } from '@aws-sdk/client-s3';
import { GetSecretValueCommand, ListSecretVersionIdsCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SQSClient } from '@aws-sdk/client-sqs';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createDocumentClient } from '../adapters/clients';
import { type ErasableBlobs, type PayloadBlobs, S3PayloadBlobs } from '../adapters/payload-blobs';
import { UnknownSecretError } from '../adapters/secrets';
import { dynamoStreamBatches, type StreamBatchPort } from '../adapters/stream-batch';
import type { HookledgerConfig } from '../core/config/schema';
import { apiKeyPath } from '../core/gaps';
import { consumerSecretArnOutput, dlqUrlOutput, gapApiKeySecretArnOutput, OUTPUT, queueUrlOutput, secretArnOutput } from '../core/outputs';
import type { SigningSecrets } from '../core/schemes/types';
// Only the local stack's client and state modules: local/wiring.ts would load the whole pipeline
// (ingest, fan-out, consumer runtime) just to build a document client.
import { LOCAL_PAYLOAD_BUCKET, localDynamoClient, localS3Client, localSqsClient, localStreamsClient } from '../local/clients';
import { DEFAULT_SECRETS_FILE, FileSecrets } from '../local/secrets-file';
import {
  configChangedNotice,
  DEFAULT_STATE_FILE,
  isProcessAlive,
  type LocalStackState,
  readStackCredentials,
  readState,
  StateFileError,
  webhookUrlFor,
} from '../local/state';
import type { QueuePair, TableNames } from './deps';
import { TargetError } from './errors';
import { adminPauseControl, lambdaPauseControl, type PauseControl } from './pause';
import type { SecretRotator } from './secrets';

export interface Target {
  readonly kind: 'local' | 'aws';
  /** `local (<state file>)` or `stack <name> (<region>)`, for messages. */
  readonly label: string;
  /** What the operator should know about the target before anything else (stderr, once): e.g. a configuration changed since the local stack started. */
  readonly notices?: readonly string[];
  readonly ddb: DynamoDBDocumentClient;
  readonly sqs: SQSClient;
  readonly tables: TableNames;
  readonly queues: Readonly<Record<string, QueuePair>>;
  /** The fan-out's on-failure queue (stream batches it gave up on), when the stack names it. */
  readonly fanoutFailureQueueUrl?: string;
  /** Reads back the EventStore stream records an on-failure record names (repair decodes them). */
  readonly streamBatches: StreamBatchPort;
  webhookUrl(sourceId: string): string;
  signingSecret(sourceId: string): Promise<string>;
  readonly rotator: SecretRotator;
  /** HTTP consumers' signing secrets: read (for their receivers) and rotated like the sources'. */
  readonly consumerSecrets: { get(consumerId: string): Promise<SigningSecrets>; readonly rotator: SecretRotator };
  /** The deployment's payload-hash key (verify-payload); never printed. */
  payloadHashKey(): Promise<Buffer>;
  /** Where a source's provider API key (gap check) lives, for messages: never the value. */
  apiKeyLocation(sourceId: string): string;
  /** The source's provider API key (gap check); never printed. */
  providerApiKey(sourceId: string): Promise<string>;
  readonly pauseControl: PauseControl;
  /**
   * The payload bucket: bodies over `payloads.inlineMaxBytes` (read by the commands that read payloads,
   * written by `gaps --recover`) and erasure (list under an event's prefixes, delete); undefined when
   * the stack names none.
   */
  readonly payloadBucket?: PayloadBlobs & ErasableBlobs;
  /**
   * Where a source's rotation stands: whether a previous secret exists and until when it verifies.
   * Read from metadata (the secrets file's dates, Secrets Manager's version list); never a value.
   */
  secretRotation(sourceId: string): Promise<SecretRotationState>;
  /** Intake requests by outcome, where the target keeps them (the local stack); undefined on AWS. */
  intakeOutcomes(): Promise<Record<string, number> | undefined>;
  destroy(): void;
}

export interface SecretRotationState {
  readonly source: string;
  /** A previous secret is kept (it verifies until `previousUntil`, when that is in the future). */
  readonly hasPrevious: boolean;
  readonly previousUntil?: number;
}

export interface TargetOptions {
  readonly config: HookledgerConfig;
  /** Repository root: where .hookledger/ lives. */
  readonly root: string;
  readonly stack?: string;
  readonly region?: string;
  readonly env?: NodeJS.ProcessEnv;
}

export async function resolveTarget(options: TargetOptions): Promise<Target> {
  return options.stack !== undefined ? awsTarget(options, options.stack) : localTarget(options);
}

// --- local --------------------------------------------------------------------------------------

export function statePath(options: Pick<TargetOptions, 'root' | 'env'>): string {
  const fromEnv = (options.env ?? process.env).HOOKLEDGER_STATE;
  return fromEnv ? path.resolve(fromEnv) : path.join(options.root, DEFAULT_STATE_FILE);
}

/** What a target gives for secrets: sources' and HTTP consumers' signing secrets, the payload-hash key, provider API keys. */
type TargetSecrets = Pick<
  Target,
  'signingSecret' | 'rotator' | 'consumerSecrets' | 'payloadHashKey' | 'secretRotation' | 'apiKeyLocation' | 'providerApiKey'
>;

async function localTarget(options: TargetOptions): Promise<Target> {
  const file = statePath(options);
  const state = await runningStackState(file);
  // The stack's per-start credential: its emulators accept no other key, its admin endpoint no other token.
  const credentials = await readStackCredentials(file, state).catch((error: unknown) => {
    throw error instanceof StateFileError ? new TargetError(error.message, { cause: error }) : error;
  });
  const ddb = createDocumentClient(localDynamoClient(state.dynamo.endpoint, credentials));
  const sqs = localSqsClient(state.sqs.endpoint, credentials);
  const streams = localStreamsClient(state.dynamo.endpoint, credentials);
  // fauxqs serves S3 on its SQS endpoint; the local stack's bucket has a fixed name.
  const s3 = localS3Client(state.sqs.endpoint, credentials);
  const adminFetch = withBearerToken(credentials.adminToken);
  const configChanged = configChangedNotice(state);
  return {
    kind: 'local',
    label: `local stack (${file})`,
    ...(configChanged ? { notices: [configChanged] } : {}),
    ddb,
    sqs,
    tables: state.tables,
    queues: Object.fromEntries(Object.entries(state.queues).map(([id, q]) => [id, { url: q.url, dlqUrl: q.dlqUrl }])),
    fanoutFailureQueueUrl: state.fanoutFailureQueue.url,
    streamBatches: dynamoStreamBatches(streams),
    webhookUrl: (sourceId) => webhookUrlFor(state, sourceId),
    ...localSecrets(options, state),
    ...localAdmin(file, state, adminFetch),
    payloadBucket: new S3PayloadBlobs({ client: s3, bucket: LOCAL_PAYLOAD_BUCKET }),
    destroy: () => {
      ddb.destroy();
      sqs.destroy();
      streams.destroy();
      s3.destroy();
    },
  };
}

/** The state file of a local stack that is running, or a TargetError saying how to start one. */
async function runningStackState(file: string): Promise<LocalStackState> {
  let state: LocalStackState | undefined;
  try {
    state = await readState(file);
  } catch (error) {
    if (!(error instanceof StateFileError)) throw error;
    throw new TargetError(`${error.message}; restart the local stack with \`npm start\` so it writes a current one`);
  }
  if (!state) {
    throw new TargetError(
      `no local stack is running (${file} does not exist). Start one with \`npm start\` in another terminal, ` +
        'or pass --stack <name> to use a deployed stack.',
    );
  }
  if (!isProcessAlive(state.pid)) {
    throw new TargetError(`the local stack recorded in ${file} (pid ${state.pid}) is not running any more. Start it with \`npm start\`.`);
  }
  return state;
}

/** The local stack's secrets file: the sources' and HTTP consumers' secrets, the payload-hash key and the provider API keys. */
function localSecrets(options: TargetOptions, state: LocalStackState): TargetSecrets {
  const secretsPath = state.secretsFile ? path.resolve(options.root, state.secretsFile) : path.join(options.root, DEFAULT_SECRETS_FILE);
  const secrets = new FileSecrets({
    path: secretsPath,
    sourceIds: options.config.sources.map((s) => s.id),
    consumerIds: options.config.consumers.filter((c) => c.kind === 'http').map((c) => c.id),
  });
  const consumerFile = secrets.consumerSecrets();
  return {
    signingSecret: async (sourceId) => (await secrets.get(sourceId)).current,
    rotator: {
      kind: 'local',
      rotate: (sourceId, overlapMs, value) => secrets.rotate(sourceId, overlapMs, 'sources', value),
      retire: (sourceId) => secrets.retire(sourceId),
    },
    consumerSecrets: {
      get: (consumerId) => consumerFile.get(consumerId),
      rotator: { kind: 'local', rotate: (id, overlapMs) => consumerFile.rotate(id, overlapMs), retire: (id) => consumerFile.retire(id) },
    },
    payloadHashKey: () => secrets.payloadHashKey(),
    secretRotation: async (sourceId) => {
      const { previous, previousUntil } = await secrets.get(sourceId);
      return { source: sourceId, hasPrevious: previous !== undefined, ...(previousUntil !== undefined ? { previousUntil } : {}) };
    },
    apiKeyLocation: (sourceId) => `${apiKeyPath(sourceId)} in ${secretsPath}`,
    providerApiKey: async (sourceId) => {
      try {
        return await secrets.apiKey(sourceId);
      } catch (error) {
        if (error instanceof UnknownSecretError) throw new TargetError(error.message);
        throw error;
      }
    },
  };
}

/** What the local stack's admin endpoint serves: pausing consumers, and intake's outcome counts. */
function localAdmin(file: string, state: LocalStackState, adminFetch: typeof fetch): Pick<Target, 'pauseControl' | 'intakeOutcomes'> {
  const noAdmin = async (): Promise<never> => {
    throw new TargetError(`${file} has no adminUrl: this local stack cannot pause consumers; update and restart \`npm start\``);
  };
  return {
    pauseControl: state.adminUrl ? adminPauseControl(state.adminUrl, adminFetch) : { pause: noAdmin, resume: noAdmin, paused: noAdmin },
    intakeOutcomes: async () => {
      if (!state.adminUrl) return undefined;
      const response = await adminFetch(`${state.adminUrl.replace(/\/+$/, '')}/intake`);
      if (!response.ok) return undefined;
      return ((await response.json()) as { outcomes?: Record<string, number> }).outcomes;
    },
  };
}

/** fetch with the admin endpoint's `Authorization: Bearer <token>` (local/admin-server.ts). */
function withBearerToken(token: string): typeof fetch {
  return (input, init) => {
    const headers = new Headers(init?.headers);
    headers.set('authorization', `Bearer ${token}`);
    return fetch(input, { ...init, headers });
  };
}

// --- AWS ----------------------------------------------------------------------------------------

async function awsTarget(options: TargetOptions, stackName: string): Promise<Target> {
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
