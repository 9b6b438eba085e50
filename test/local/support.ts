/** Shared fixtures for the local-stack tests: tables, items and waiting. */
import {
  type AttributeValue,
  CreateTableCommand,
  type DynamoDBClient,
  PutItemCommand,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import { type Message, ReceiveMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';

let counter = 0;

/** A table or queue name unique within the test run. */
export function uniqueName(prefix: string): string {
  counter += 1;
  return `${prefix}-${process.pid}-${Date.now().toString(36)}-${counter}`;
}

/** An EventStore-shaped table: key `pk`, stream NEW_IMAGE, TTL on `expiresAt`. */
export async function createEventsTable(dynamo: DynamoDBClient, name: string): Promise<void> {
  await dynamo.send(
    new CreateTableCommand({
      TableName: name,
      AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
      KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
      BillingMode: 'PAY_PER_REQUEST',
      StreamSpecification: { StreamEnabled: true, StreamViewType: 'NEW_IMAGE' },
    }),
  );
  await dynamo.send(
    new UpdateTimeToLiveCommand({ TableName: name, TimeToLiveSpecification: { Enabled: true, AttributeName: 'expiresAt' } }),
  );
}

export async function putItem(dynamo: DynamoDBClient, table: string, item: Record<string, AttributeValue>): Promise<void> {
  await dynamo.send(new PutItemCommand({ TableName: table, Item: item }));
}

/** An EventStore receipt item for evt_01J8K7M2Q4-like ids. */
export function eventItem(eventId: string, extra: Record<string, AttributeValue> = {}): Record<string, AttributeValue> {
  return {
    pk: { S: `evt#platform#${eventId}` },
    kind: { S: 'event' },
    source: { S: 'platform' },
    eventId: { S: eventId },
    eventType: { S: 'payment.succeeded' },
    tenantId: { S: 'tenant_204' },
    keyId: { S: 'key_7' },
    ...extra,
  };
}

/**
 * Receives until `count` messages arrived or the time is up; deletes nothing. Leases them for
 * `visibilityTimeout` seconds (default 30, so none comes back during the test; null keeps the
 * queue's own).
 */
export async function receiveAll(
  sqs: SQSClient,
  queueUrl: string,
  count: number,
  timeoutMs = 8000,
  visibilityTimeout: number | null = 30,
): Promise<Message[]> {
  const messages: Message[] = [];
  const deadline = Date.now() + timeoutMs;
  while (messages.length < count && Date.now() < deadline) {
    const { Messages } = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 1,
        ...(visibilityTimeout === null ? {} : { VisibilityTimeout: visibilityTimeout }),
        MessageSystemAttributeNames: ['All'],
      }),
    );
    messages.push(...(Messages ?? []));
  }
  return messages;
}

export { waitFor } from '../support/wait';

/** A logger that keeps quiet in tests but remembers what it was told. */
export function recordingLogger() {
  const lines: { level: 'warn' | 'error'; message: string; extra?: Record<string, unknown> }[] = [];
  return {
    lines,
    warn: (message: string, extra?: Record<string, unknown>) => lines.push({ level: 'warn', message, extra }),
    error: (message: string, extra?: Record<string, unknown>) => lines.push({ level: 'error', message, extra }),
  };
}
