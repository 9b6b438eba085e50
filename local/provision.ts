/**
 * Creates the stateful resources of the local stack from the one config: the EventStore (stream
 * NEW_IMAGE, TTL on `expiresAt`) and the Ledger, and per consumer a queue and its DLQ, plus the
 * fan-out's on-failure queue. Idempotent: what exists is kept and brought in line with the config.
 */
import {
  CreateTableCommand,
  DescribeTableCommand,
  DescribeTimeToLiveCommand,
  type DynamoDBClient,
  type GlobalSecondaryIndex,
  ResourceInUseException,
  type StreamSpecification,
  UpdateTableCommand,
  UpdateTimeToLiveCommand,
  waitUntilTableExists,
} from '@aws-sdk/client-dynamodb';
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  type QueueAttributeName,
  QueueDoesNotExist,
  SetQueueAttributesCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { FIFO_SUFFIX, isOrdered } from '../core/config/consumers';
import type { HookledgerConfig } from '../core/config/schema';
import { HookledgerError } from '../core/errors';
import { TABLE_KEY, TTL_ATTRIBUTE, WINDOW_INDEX } from '../core/model';
import { consumerRetentionSeconds, QUEUE_RETENTION } from '../core/queues';

export interface ConsumerQueues {
  readonly url: string;
  readonly arn: string;
  readonly dlqUrl: string;
  readonly dlqArn: string;
}

export interface QueueRef {
  readonly url: string;
  readonly arn: string;
}

export interface ProvisionedStack {
  readonly tables: { readonly events: string; readonly ledger: string };
  readonly queues: Record<string, ConsumerQueues>;
  readonly fanoutFailureQueue: QueueRef;
}

export interface ProvisionOptions {
  readonly config: HookledgerConfig;
  readonly dynamo: DynamoDBClient;
  /** Built with an explicit `endpoint` (see local/clients.ts). */
  readonly sqs: SQSClient;
  readonly tables: { readonly events: string; readonly ledger: string };
  /** Prefix of every queue name. Default 'hookledger-'. */
  readonly queuePrefix?: string;
}

/**
 * A table or queue the local stack could not create or take over: one that exists in a shape the
 * config cannot use, or an emulator answer SQS never gives. The message names it and what to do.
 */
export class ProvisionError extends HookledgerError {
  override readonly name = 'ProvisionError';
}

/** What to do when the SQS emulator answers off the SQS contract (fauxqs, local/emulators.ts). */
const OFF_CONTRACT =
  ', which SQS always returns: the SQS emulator (fauxqs) answered off the contract; restart the local stack, ' +
  'and if it persists check the fauxqs version package.json pins';

/** SQS's maximum, so a message outlives any retry budget on its way through the DLQ. */
const DEAD_LETTER_RETENTION = String(QUEUE_RETENTION.deadLetterSeconds);

export async function provisionLocalStack(options: ProvisionOptions): Promise<ProvisionedStack> {
  const { config, dynamo, sqs, tables } = options;
  const prefix = options.queuePrefix ?? 'hookledger-';

  await ensureTable(dynamo, tables.events, { StreamEnabled: true, StreamViewType: 'NEW_IMAGE' }, windowIndex);
  await ensureTtl(dynamo, tables.events, TTL_ATTRIBUTE);
  await ensureTable(dynamo, tables.ledger, undefined);

  // The failure queue first: its ARN shows the account and region every other ARN shares.
  const failureUrl = await ensureQueue(sqs, `${prefix}fanout-failures`, { MessageRetentionPeriod: DEAD_LETTER_RETENTION });
  const failureArn = await queueArn(sqs, failureUrl);

  const queues: Record<string, ConsumerQueues> = {};
  for (const consumer of config.consumers) {
    // Ordered consumers: a FIFO queue and a FIFO DLQ (SQS requires a FIFO queue's DLQ to be FIFO).
    const fifo = isOrdered(consumer);
    const suffix = fifo ? FIFO_SUFFIX : '';
    const name = `${prefix}${consumer.id}${suffix}`;
    const dlqName = `${prefix}${consumer.id}-dlq${suffix}`;
    const fifoAttributes: Partial<Record<QueueAttributeName, string>> = fifo
      ? { FifoQueue: 'true', ContentBasedDeduplication: 'false' }
      : {};
    const arn = sibling(failureArn, name);
    // Only this consumer's queue may use the DLQ. fauxqs takes RedriveAllowPolicy only at
    // CreateQueue, so it is sent when the DLQ is created and never re-applied.
    const dlqUrl = await ensureQueue(
      sqs,
      dlqName,
      { MessageRetentionPeriod: DEAD_LETTER_RETENTION },
      { ...fifoAttributes, RedriveAllowPolicy: JSON.stringify({ redrivePermission: 'byQueue', sourceQueueArns: [arn] }) },
    );
    const dlqArn = await queueArn(sqs, dlqUrl);
    const url = await ensureQueue(
      sqs,
      name,
      {
        VisibilityTimeout: String(consumer.visibilityTimeoutSeconds),
        MessageRetentionPeriod: String(consumerRetentionSeconds(consumer)),
        RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount: consumer.maxReceiveCount }),
      },
      fifoAttributes,
    );
    queues[consumer.id] = { url, arn: await queueArn(sqs, url), dlqUrl, dlqArn };
  }

  return {
    tables: { events: tables.events, ledger: tables.ledger },
    queues,
    fanoutFailureQueue: { url: failureUrl, arn: failureArn },
  };
}

/** The EventStore's window index, as lib/constructs/storage.ts declares it (core/model.ts WINDOW_INDEX). */
const windowIndex: GlobalSecondaryIndex = {
  IndexName: WINDOW_INDEX.name,
  KeySchema: [
    { AttributeName: WINDOW_INDEX.partitionKey, KeyType: 'HASH' },
    { AttributeName: WINDOW_INDEX.sortKey, KeyType: 'RANGE' },
  ],
  Projection: { ProjectionType: 'INCLUDE', NonKeyAttributes: [...WINDOW_INDEX.projected] },
};
const windowIndexAttributes = [
  { AttributeName: WINDOW_INDEX.partitionKey, AttributeType: 'S' as const },
  { AttributeName: WINDOW_INDEX.sortKey, AttributeType: 'N' as const },
];

async function ensureTable(
  dynamo: DynamoDBClient,
  name: string,
  stream: StreamSpecification | undefined,
  index?: GlobalSecondaryIndex,
): Promise<void> {
  try {
    await dynamo.send(
      new CreateTableCommand({
        TableName: name,
        AttributeDefinitions: [{ AttributeName: TABLE_KEY, AttributeType: 'S' }, ...(index ? windowIndexAttributes : [])],
        KeySchema: [{ AttributeName: TABLE_KEY, KeyType: 'HASH' }],
        BillingMode: 'PAY_PER_REQUEST',
        ...(stream ? { StreamSpecification: stream } : {}),
        ...(index ? { GlobalSecondaryIndexes: [index] } : {}),
      }),
    );
  } catch (error) {
    if (!(error instanceof ResourceInUseException)) throw error;
    const { Table } = await dynamo.send(new DescribeTableCommand({ TableName: name }));
    const key = Table?.KeySchema?.map((k) => `${k.AttributeName ?? ''}:${k.KeyType ?? ''}`).join(',');
    if (key !== `${TABLE_KEY}:HASH`) {
      throw new ProvisionError(
        `table ${name} exists with key schema ${key ?? 'unknown'}, expected ${TABLE_KEY}:HASH, so the local stack cannot use it; ` +
          'delete the table (or the data folder) or choose other table names',
      );
    }
    const current = Table?.StreamSpecification;
    if (stream && (!current?.StreamEnabled || current.StreamViewType !== stream.StreamViewType)) {
      if (current?.StreamEnabled) {
        await dynamo.send(new UpdateTableCommand({ TableName: name, StreamSpecification: { StreamEnabled: false } }));
      }
      await dynamo.send(new UpdateTableCommand({ TableName: name, StreamSpecification: stream }));
    }
    // A table made before the window index: add it. Its existing receipts are not in it until
    // `hookledger index backfill` gives them the index attributes (README, upgrade notes).
    if (index && !(Table?.GlobalSecondaryIndexes ?? []).some((i) => i.IndexName === index.IndexName)) {
      await dynamo.send(
        new UpdateTableCommand({
          TableName: name,
          AttributeDefinitions: windowIndexAttributes,
          GlobalSecondaryIndexUpdates: [{ Create: index }],
        }),
      );
    }
  }
  await waitUntilTableExists({ client: dynamo, maxWaitTime: 30, minDelay: 1 }, { TableName: name });
}

async function ensureTtl(dynamo: DynamoDBClient, name: string, attribute: string): Promise<void> {
  const { TimeToLiveDescription } = await dynamo.send(new DescribeTimeToLiveCommand({ TableName: name }));
  const status = TimeToLiveDescription?.TimeToLiveStatus;
  if ((status === 'ENABLED' || status === 'ENABLING') && TimeToLiveDescription?.AttributeName === attribute) return;
  await dynamo.send(new UpdateTimeToLiveCommand({ TableName: name, TimeToLiveSpecification: { Enabled: true, AttributeName: attribute } }));
}

/**
 * CreateQueue with `attributes` (kept in line with the config on later runs) and `createOnly` (sent
 * only when the queue is new). Returns the queue URL.
 */
async function ensureQueue(
  sqs: SQSClient,
  name: string,
  attributes: Partial<Record<QueueAttributeName, string>>,
  createOnly: Partial<Record<QueueAttributeName, string>> = {},
): Promise<string> {
  const existing = await queueUrl(sqs, name);
  if (existing === undefined) {
    const created = await sqs.send(new CreateQueueCommand({ QueueName: name, Attributes: { ...attributes, ...createOnly } }));
    if (!created.QueueUrl) throw new ProvisionError(`CreateQueue ${name} answered without a QueueUrl${OFF_CONTRACT}`);
    return created.QueueUrl;
  }
  await sqs.send(new SetQueueAttributesCommand({ QueueUrl: existing, Attributes: attributes }));
  return existing;
}

async function queueUrl(sqs: SQSClient, name: string): Promise<string | undefined> {
  try {
    return (await sqs.send(new GetQueueUrlCommand({ QueueName: name }))).QueueUrl;
  } catch (error) {
    if (error instanceof QueueDoesNotExist || (error as Error).name === 'AWS.SimpleQueueService.NonExistentQueue') return undefined;
    throw error;
  }
}

async function queueArn(sqs: SQSClient, url: string): Promise<string> {
  const { Attributes } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] }));
  const arn = Attributes?.QueueArn;
  if (!arn) throw new ProvisionError(`queue ${url} answered GetQueueAttributes without its QueueArn${OFF_CONTRACT}`);
  return arn;
}

/** The ARN of another queue in the same account and region. */
function sibling(arn: string, name: string): string {
  return arn.replace(/[^:]+$/, name);
}
