/**
 * Creates, on the emulators, what the template declares: every AWS::DynamoDB::Table (keys, indexes,
 * stream, TTL), every AWS::SQS::Queue (visibility, retention, redrive policy, FIFO), every
 * AWS::S3::Bucket; and gives every logical id its local Ref and attributes (ARNs in account
 * 000000000000, us-east-1; queue URLs on the SQS proxy, so a handler's SDK, which sends to the
 * queue URL's host, is checked like every other call).
 */
import {
  CreateTableCommand,
  DescribeTableCommand,
  type DynamoDBClient,
  ResourceInUseException,
  UpdateTimeToLiveCommand,
  waitUntilTableExists,
} from '@aws-sdk/client-dynamodb';
import { CreateBucketCommand, type S3Client } from '@aws-sdk/client-s3';
import { CreateQueueCommand, type QueueAttributeName, type SQSClient } from '@aws-sdk/client-sqs';
import {
  AssemblyError,
  type CloudAssembly,
  LOCAL_ACCOUNT,
  type LocalResource,
  type Resolved,
  resolveIntrinsics,
  resourcesOfType,
  type TemplateResource,
} from './template';

const REGION = 'us-east-1';

export interface AssemblyTable {
  readonly logicalId: string;
  readonly name: string;
  readonly arn: string;
  readonly partitionKey: string;
  readonly streamArn?: string;
}

export interface AssemblyQueue {
  readonly logicalId: string;
  readonly name: string;
  /** On the SQS proxy. */
  readonly url: string;
  readonly arn: string;
}

export interface AssemblyResources {
  readonly locals: Map<string, LocalResource>;
  readonly tables: Record<string, AssemblyTable>;
  readonly queues: Record<string, AssemblyQueue>;
  readonly buckets: Record<string, { readonly name: string; readonly arn: string }>;
  readonly secrets: Record<string, { readonly arn: string; readonly name: string }>;
  /** The emulator's own queue URL prefix (`http://host:port`), which the SQS proxy swaps for its own. */
  readonly upstreamQueueBase: string;
}

export interface ProvisionAssemblyOptions {
  readonly assembly: CloudAssembly;
  readonly dynamo: DynamoDBClient;
  readonly sqs: SQSClient;
  readonly s3: S3Client;
  /** `http://127.0.0.1:<port>` of the SQS proxy: the host of every queue URL handed to a handler. */
  readonly sqsProxyEndpoint: string;
}

const lower = (s: string) => s.toLowerCase().replace(/[^a-z0-9-]/g, '-');

/** Names and ARNs for every logical id (what exists only on AWS gets a placeholder ARN). */
function nameResources(assembly: CloudAssembly, sqsProxyEndpoint: string) {
  const { stackName } = assembly;
  const locals = new Map<string, LocalResource>();
  const tables: Record<string, AssemblyTable> = {};
  const queues: Record<string, AssemblyQueue> = {};
  const buckets: Record<string, { name: string; arn: string }> = {};
  const secrets: Record<string, { arn: string; name: string }> = {};
  for (const [id, resource] of Object.entries(assembly.resources)) {
    const props = resource.Properties ?? {};
    const given = (key: string) => (typeof props[key] === 'string' ? (props[key] as string) : undefined);
    switch (resource.Type) {
      case 'AWS::DynamoDB::Table': {
        const name = given('TableName') ?? `${stackName}-${id}`;
        const arn = `arn:aws:dynamodb:${REGION}:${LOCAL_ACCOUNT}:table/${name}`;
        const key = (props.KeySchema as { AttributeName: string; KeyType: string }[]).find((k) => k.KeyType === 'HASH');
        tables[id] = { logicalId: id, name, arn, partitionKey: key?.AttributeName ?? '' };
        locals.set(id, { ref: name, attributes: { Arn: arn } });
        break;
      }
      case 'AWS::SQS::Queue': {
        const fifo = props.FifoQueue === true || props.FifoQueue === 'true';
        const name = given('QueueName') ?? `${stackName}-${id}${fifo ? '.fifo' : ''}`;
        const arn = `arn:aws:sqs:${REGION}:${LOCAL_ACCOUNT}:${name}`;
        const url = `${sqsProxyEndpoint}/${LOCAL_ACCOUNT}/${name}`;
        queues[id] = { logicalId: id, name, url, arn };
        locals.set(id, { ref: url, attributes: { Arn: arn, QueueName: name, QueueUrl: url } });
        break;
      }
      case 'AWS::S3::Bucket': {
        const name = given('BucketName') ?? lower(`${stackName}-${id}`);
        buckets[id] = { name, arn: `arn:aws:s3:::${name}` };
        locals.set(id, { ref: name, attributes: { Arn: `arn:aws:s3:::${name}`, DomainName: `${name}.s3.amazonaws.com` } });
        break;
      }
      case 'AWS::SecretsManager::Secret': {
        const name = given('Name') ?? `${id}`;
        const arn = `arn:aws:secretsmanager:${REGION}:${LOCAL_ACCOUNT}:secret:${name}-local`;
        secrets[id] = { arn, name };
        locals.set(id, { ref: arn, attributes: { Id: arn } });
        break;
      }
      case 'AWS::IAM::Role': {
        const name = given('RoleName') ?? `${stackName}-${id}`;
        locals.set(id, { ref: name, attributes: { Arn: `arn:aws:iam::${LOCAL_ACCOUNT}:role/${name}`, RoleId: `AROA${id}` } });
        break;
      }
      case 'AWS::Lambda::Function': {
        const name = given('FunctionName') ?? `${stackName}-${id}`;
        locals.set(id, { ref: name, attributes: { Arn: `arn:aws:lambda:${REGION}:${LOCAL_ACCOUNT}:function:${name}` } });
        break;
      }
      case 'AWS::Logs::LogGroup': {
        const name = given('LogGroupName') ?? `/aws/lambda/${stackName}-${id}`;
        locals.set(id, { ref: name, attributes: { Arn: `arn:aws:logs:${REGION}:${LOCAL_ACCOUNT}:log-group:${name}:*` } });
        break;
      }
      default:
        // Not run locally (API, alarms, schedules, topics, keys): only named, for the ARNs that mention them.
        locals.set(id, { ref: id, attributes: { Arn: `arn:aws:local:${REGION}:${LOCAL_ACCOUNT}:${id}` } });
    }
  }
  return { locals, tables, queues, buckets, secrets };
}

/** What naming gives every logical id, before anything exists on the emulators. */
type NamedResources = ReturnType<typeof nameResources>;

export async function provisionAssembly(options: ProvisionAssemblyOptions): Promise<AssemblyResources> {
  const { assembly, dynamo, sqs, s3 } = options;
  const named = nameResources(assembly, options.sqsProxyEndpoint);
  for (const [id, resource] of resourcesOfType(assembly, 'AWS::DynamoDB::Table')) await createTable(dynamo, named, id, resource);
  const upstreamQueueBase = await createQueues(sqs, named, assembly);
  await createBuckets(s3, named);
  return { ...named, upstreamQueueBase };
}

/**
 * One table as the template declares it (kept when it exists: a file-backed stack starts again on
 * its data); a table with a stream gets its StreamArn, which DynamoDB Local chooses.
 */
async function createTable(dynamo: DynamoDBClient, named: NamedResources, id: string, resource: TemplateResource): Promise<void> {
  const { locals, tables } = named;
  const props = resolveIntrinsics(resource.Properties ?? {}, locals, id) as Record<string, Resolved>;
  const table = tables[id]!;
  const stream = props.StreamSpecification as { StreamViewType?: string } | undefined;
  try {
    await dynamo.send(
      new CreateTableCommand({
        TableName: table.name,
        AttributeDefinitions: props.AttributeDefinitions as never,
        KeySchema: props.KeySchema as never,
        BillingMode: 'PAY_PER_REQUEST',
        ...(props.GlobalSecondaryIndexes ? { GlobalSecondaryIndexes: props.GlobalSecondaryIndexes as never } : {}),
        ...(props.LocalSecondaryIndexes ? { LocalSecondaryIndexes: props.LocalSecondaryIndexes as never } : {}),
        ...(stream?.StreamViewType ? { StreamSpecification: { StreamEnabled: true, StreamViewType: stream.StreamViewType as never } } : {}),
      }),
    );
    const ttl = props.TimeToLiveSpecification as { AttributeName?: string; Enabled?: boolean } | undefined;
    if (ttl?.Enabled && ttl.AttributeName) {
      await dynamo.send(
        new UpdateTimeToLiveCommand({
          TableName: table.name,
          TimeToLiveSpecification: { Enabled: true, AttributeName: ttl.AttributeName },
        }),
      );
    }
  } catch (error) {
    if (!(error instanceof ResourceInUseException)) throw error;
  }
  await waitUntilTableExists({ client: dynamo, maxWaitTime: 30, minDelay: 1 }, { TableName: table.name });
  if (!stream?.StreamViewType) return;
  const { Table } = await dynamo.send(new DescribeTableCommand({ TableName: table.name }));
  const label = Table?.LatestStreamLabel;
  if (!label) throw new AssemblyError(`table ${table.name} (${id}) declares a stream but DynamoDB Local reports none`);
  const streamArn = `${table.arn}/stream/${label}`;
  tables[id] = { ...table, streamArn };
  locals.set(id, { ref: table.name, attributes: { Arn: table.arn, StreamArn: streamArn } });
}

/** The queue attributes CreateQueue takes as the template gives them (numbers and flags as strings). */
const SCALAR_QUEUE_ATTRIBUTES = [
  'VisibilityTimeout',
  'MessageRetentionPeriod',
  'DelaySeconds',
  'MaximumMessageSize',
  'ReceiveMessageWaitTimeSeconds',
  'FifoQueue',
  'ContentBasedDeduplication',
  'DeduplicationScope',
  'FifoThroughputLimit',
] as const;
/** The queue attributes the template may give as objects, which CreateQueue takes as JSON. */
const POLICY_QUEUE_ATTRIBUTES = ['RedrivePolicy', 'RedriveAllowPolicy'] as const;

/** Every queue, the dead-letter targets first; returns the emulator's queue URL prefix. */
async function createQueues(sqs: SQSClient, named: NamedResources, assembly: CloudAssembly): Promise<string> {
  // Queues a redrive policy names first: SQS checks that the dead-letter target exists.
  let upstreamQueueBase = '';
  const queueIds = resourcesOfType(assembly, 'AWS::SQS::Queue').sort(
    ([, a], [, b]) => Number(a.Properties?.RedrivePolicy !== undefined) - Number(b.Properties?.RedrivePolicy !== undefined),
  );
  for (const [id, resource] of queueIds) {
    const props = resolveIntrinsics(resource.Properties ?? {}, named.locals, id) as Record<string, Resolved>;
    const attributes: Partial<Record<QueueAttributeName, string>> = {};
    for (const key of SCALAR_QUEUE_ATTRIBUTES) {
      if (props[key] !== undefined) attributes[key] = String(props[key]);
    }
    for (const key of POLICY_QUEUE_ATTRIBUTES) {
      if (props[key] !== undefined) attributes[key] = typeof props[key] === 'string' ? props[key] : JSON.stringify(props[key]);
    }
    const created = await sqs.send(new CreateQueueCommand({ QueueName: named.queues[id]!.name, Attributes: attributes }));
    upstreamQueueBase = created.QueueUrl?.replace(/\/[^/]+\/[^/]+$/, '') ?? upstreamQueueBase;
  }
  return upstreamQueueBase;
}

async function createBuckets(s3: S3Client, named: NamedResources): Promise<void> {
  for (const bucket of Object.values(named.buckets)) {
    try {
      await s3.send(new CreateBucketCommand({ Bucket: bucket.name }));
    } catch (error) {
      if (!(error instanceof Error && /BucketAlreadyOwnedByYou|BucketAlreadyExists/.test(error.name))) throw error;
    }
  }
}
