/**
 * DynamoDB adapter for the EventStore table: receipts, payloads, re-queues and the key registry.
 * Every write is a single-item write; the receipt is the one conditional write that makes an event
 * (and its delivery set) exist.
 */
import { gunzipSync, gzipSync } from 'node:zlib';
import { ConditionalCheckFailedException, type ReturnConsumedCapacity } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, GetCommand, PutCommand, type PutCommandOutput } from '@aws-sdk/lib-dynamodb';
import { StorageUnavailableError } from './errors';
import {
  type EventItem,
  eventKey,
  type KeyItem,
  keyRegistryKey,
  type PayloadItem,
  payloadKey,
  type RequeueItem,
} from './model';

export type RecordOutcome = 'recorded' | 'duplicate';

export interface ConsumedCapacityObserver {
  (operation: string, writeUnits: number, readUnits: number): void;
}

export interface EventStoreOptions {
  readonly client: DynamoDBDocumentClient;
  readonly tableName: string;
  /** Bench hook: asks DynamoDB for consumed capacity and reports it. */
  readonly onCapacity?: ConsumedCapacityObserver;
}

export class EventStore {
  private readonly client: DynamoDBDocumentClient;
  private readonly tableName: string;
  private readonly onCapacity?: ConsumedCapacityObserver;
  private readonly returnCapacity: ReturnConsumedCapacity | undefined;

  constructor(options: EventStoreOptions) {
    this.client = options.client;
    this.tableName = options.tableName;
    this.onCapacity = options.onCapacity;
    this.returnCapacity = options.onCapacity ? 'TOTAL' : undefined;
  }

  /**
   * Stores the payload, then the receipt. The payload goes first so that a receipt never exists
   * without its payload; a payload whose receipt write failed is harmless and expires by TTL.
   */
  async recordEvent(event: Omit<EventItem, 'pk' | 'kind'>, rawBody: Buffer): Promise<RecordOutcome> {
    const zipped = gzipSync(rawBody);
    const useGzip = zipped.length < rawBody.length;
    const payload: PayloadItem = {
      pk: payloadKey(event.source, event.eventId),
      kind: 'payload',
      encoding: useGzip ? 'gzip' : 'identity',
      body: useGzip ? zipped : rawBody,
      expiresAt: Math.floor(event.payloadExpiresAt / 1000),
    };
    try {
      await this.put('putPayload', payload, 'attribute_not_exists(pk)');
    } catch (error) {
      // A payload already stored means an earlier delivery of this event got this far: carry on to
      // the receipt, whose own condition decides whether this is a duplicate.
      if (!(error instanceof ConditionalCheckFailedException)) throw translate(error);
    }
    const item: EventItem = { ...event, pk: eventKey(event.source, event.eventId), kind: 'event' };
    try {
      await this.put('putEvent', item, 'attribute_not_exists(pk)');
      return 'recorded';
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return 'duplicate';
      throw translate(error);
    }
  }

  async getEvent(source: string, eventId: string): Promise<EventItem | undefined> {
    return (await this.get('getEvent', eventKey(source, eventId))) as EventItem | undefined;
  }

  /** The raw payload bytes, or undefined once retention has removed them. */
  async getPayload(source: string, eventId: string): Promise<Buffer | undefined> {
    const item = (await this.get('getPayload', payloadKey(source, eventId))) as PayloadItem | undefined;
    if (!item) return undefined;
    const body = Buffer.from(item.body);
    return item.encoding === 'gzip' ? gunzipSync(body) : body;
  }

  async getKey(keyId: string): Promise<KeyItem | undefined> {
    return (await this.get('getKey', keyRegistryKey(keyId))) as KeyItem | undefined;
  }

  /** An explicit re-queue: the stream carries it to the fan-out, which sends it to one consumer. */
  async putRequeue(item: RequeueItem): Promise<void> {
    try {
      await this.put('putRequeue', item);
    } catch (error) {
      throw translate(error);
    }
  }

  private async put(operation: string, item: object, condition?: string): Promise<void> {
    let out: PutCommandOutput;
    try {
      out = await this.client.send(
        new PutCommand({
          TableName: this.tableName,
          Item: item as Record<string, unknown>,
          ConditionExpression: condition,
          ReturnConsumedCapacity: this.returnCapacity,
        }),
      );
    } catch (error) {
      // AWS bills a failed condition as a write; DynamoDB Local reports nothing for it.
      if (error instanceof ConditionalCheckFailedException) this.onCapacity?.(operation, 1, 0);
      throw error;
    }
    this.onCapacity?.(operation, out.ConsumedCapacity?.CapacityUnits ?? 0, 0);
  }

  /**
   * Strongly consistent: a consumer may read a payload milliseconds after intake wrote it, and an
   * eventually consistent miss would look like an expired payload.
   */
  private async get(operation: string, pk: string): Promise<Record<string, unknown> | undefined> {
    try {
      const out = await this.client.send(
        new GetCommand({ TableName: this.tableName, Key: { pk }, ConsistentRead: true, ReturnConsumedCapacity: this.returnCapacity }),
      );
      this.onCapacity?.(operation, 0, out.ConsumedCapacity?.CapacityUnits ?? 0);
      return out.Item;
    } catch (error) {
      throw translate(error);
    }
  }
}

/** Anything DynamoDB throws that is not a condition failure means "try again later". */
export function translate(error: unknown): Error {
  if (error instanceof StorageUnavailableError) return error;
  const name = error instanceof Error ? error.name : 'unknown';
  return new StorageUnavailableError(`event store unavailable (${name})`, { cause: error });
}
