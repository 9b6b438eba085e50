/**
 * DynamoDB adapter for the EventStore table: receipts, payloads, re-queues and the key registry.
 * Every write is a single-item write; the receipt is the one conditional write that makes an event
 * (and its delivery set) exist.
 */
import { gunzipSync, gzipSync } from 'node:zlib';
import { type AttributeValue, ConditionalCheckFailedException, type ReturnConsumedCapacity } from '@aws-sdk/client-dynamodb';
import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  type PutCommandOutput,
  UpdateCommand,
  type UpdateCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { StorageUnavailableError } from './errors';
import { matchesPlainSha256 } from './payload-hash';
import {
  type Attribution,
  type BodyClaimItem,
  bodyClaimKey,
  type ConflictEntry,
  conflictKey,
  type EventItem,
  eventKey,
  type KeyItem,
  keyRegistryKey,
  MAX_CONFLICT_ENTRIES,
  type PayloadItem,
  payloadKey,
  type RequeueItem,
} from '../../core/model';

/**
 * `duplicate`: this event id was recorded with these very bytes (a provider retry).
 * `duplicate_conflict`: it was recorded with other bytes; nothing was stored for this request
 * except its line in the event's conflict audit.
 */
export type RecordOutcome = 'recorded' | 'duplicate' | 'duplicate_conflict';

export interface ConsumedCapacityObserver {
  (operation: string, writeUnits: number, readUnits: number): void;
}

export interface EventStoreOptions {
  readonly client: DynamoDBDocumentClient;
  readonly tableName: string;
  /** Bench hook: asks DynamoDB for consumed capacity and reports it. */
  readonly onCapacity?: ConsumedCapacityObserver;
  /** Epoch ms; decides whether a payload is past its retention. Default Date.now. */
  readonly clock?: () => number;
}

export class EventStore {
  private readonly client: DynamoDBDocumentClient;
  private readonly tableName: string;
  private readonly onCapacity?: ConsumedCapacityObserver;
  private readonly returnCapacity: ReturnConsumedCapacity | undefined;
  private readonly clock: () => number;

  constructor(options: EventStoreOptions) {
    this.clock = options.clock ?? Date.now;
    this.client = options.client;
    this.tableName = options.tableName;
    this.onCapacity = options.onCapacity;
    this.returnCapacity = options.onCapacity ? 'TOTAL' : undefined;
  }

  /**
   * Stores the payload, then the receipt. The payload goes first so that a receipt never exists
   * without its payload. The payload's key names the body's keyed hash, so two requests with the
   * same event id and different bytes write two payload items and the receipt (first one wins)
   * points at its own: the stored payload can never disagree with its receipt, whatever fails
   * between the writes. A payload whose receipt never lands is harmless and expires by TTL.
   */
  async recordEvent(event: Omit<EventItem, 'pk' | 'kind'>, rawBody: Buffer): Promise<RecordOutcome> {
    const zipped = gzipSync(rawBody);
    const useGzip = zipped.length < rawBody.length;
    const payload: PayloadItem = {
      pk: payloadKey(event.source, event.eventId, event.payloadHmac),
      kind: 'payload',
      // The hash is in the key only: every byte of this item counts toward its write units.
      encoding: useGzip ? 'gzip' : 'identity',
      body: useGzip ? zipped : rawBody,
      expiresAt: Math.floor(event.payloadExpiresAt / 1000),
    };
    try {
      await this.put('putPayload', payload, 'attribute_not_exists(pk)');
    } catch (error) {
      // Already stored: an earlier request with these very bytes got this far. The receipt's own
      // condition decides what this request is.
      if (!(error instanceof ConditionalCheckFailedException)) throw translate(error);
    }
    const item: EventItem = { ...event, pk: eventKey(event.source, event.eventId), kind: 'event' };
    let existing: Record<string, unknown> | undefined;
    try {
      await this.put('putEvent', item, 'attribute_not_exists(pk)', true);
      return 'recorded';
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw translate(error);
      existing = error.Item ? unmarshall(error.Item as Record<string, AttributeValue>) : await this.get('getEvent', item.pk);
    }
    if (existing && sameBytes(existing as Partial<EventItem>, event, rawBody)) return 'duplicate';
    // Another body holds this event id. Ours is referenced by nothing: remove it, record the attempt.
    try {
      await this.client.send(new DeleteCommand({ TableName: this.tableName, Key: { pk: payload.pk } }));
      this.onCapacity?.('deleteConflictPayload', 1, 0);
      await this.noteConflict(event.source, event.eventId, {
        at: event.receivedAt,
        payloadHmac: event.payloadHmac,
        payloadBytes: event.payloadBytes,
        secretVersion: event.secretVersion,
      });
    } catch (error) {
      throw translate(error);
    }
    return 'duplicate_conflict';
  }

  /**
   * Replay protection by body: the first attribution these exact bytes were received with. A
   * request with the same bytes and any other headers gets that first attribution back, so it can
   * only ever name the event the bytes first made.
   */
  async claimBody(claim: Omit<BodyClaimItem, 'pk' | 'kind'>, payloadHmac: string): Promise<Attribution> {
    const item: BodyClaimItem = { ...claim, pk: bodyClaimKey(claim.source, payloadHmac), kind: 'claim' };
    try {
      await this.put('putBodyClaim', item, 'attribute_not_exists(pk)', true);
      return claim;
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw translate(error);
      const first = (error.Item ? unmarshall(error.Item as Record<string, AttributeValue>) : await this.get('getBodyClaim', item.pk)) as
        | BodyClaimItem
        | undefined;
      if (!first) throw new StorageUnavailableError('body claim vanished after its condition failed');
      return { source: first.source, eventId: first.eventId, eventType: first.eventType, tenantId: first.tenantId, keyId: first.keyId };
    }
  }

  /** The conflict audit of one event id: every attempt counted, the first MAX_CONFLICT_ENTRIES kept. */
  private async noteConflict(source: string, eventId: string, entry: ConflictEntry): Promise<void> {
    const names = { '#count': 'count', '#kind': 'kind', '#action': 'action', '#source': 'source' };
    const set = '#kind = :kind, #action = :action, #source = :source, eventId = :eventId, #count = if_not_exists(#count, :zero) + :one';
    const values = { ':kind': 'audit', ':action': 'intake.duplicate_conflict', ':source': source, ':eventId': eventId, ':zero': 0, ':one': 1 };
    const update = (input: Pick<UpdateCommandInput, 'ExpressionAttributeNames' | 'ExpressionAttributeValues' | 'UpdateExpression' | 'ConditionExpression'>) =>
      this.client.send(new UpdateCommand({ TableName: this.tableName, Key: { pk: conflictKey(source, eventId) }, ...input }));
    try {
      await update({
        ExpressionAttributeNames: { ...names, '#entries': 'entries' },
        UpdateExpression: `SET ${set}, #entries = list_append(if_not_exists(#entries, :empty), :entry)`,
        ConditionExpression: 'attribute_not_exists(#entries) OR size(#entries) < :max',
        ExpressionAttributeValues: { ...values, ':empty': [], ':entry': [entry], ':max': MAX_CONFLICT_ENTRIES },
      });
      this.onCapacity?.('noteConflict', 1, 0);
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      // The list is full: count the attempt only. AWS bills the failed condition too.
      await update({ ExpressionAttributeNames: names, UpdateExpression: `SET ${set}`, ExpressionAttributeValues: values });
      this.onCapacity?.('noteConflict', 2, 0);
    }
  }

  async getEvent(source: string, eventId: string): Promise<EventItem | undefined> {
    return (await this.get('getEvent', eventKey(source, eventId))) as EventItem | undefined;
  }

  /**
   * The raw payload bytes, or undefined once past retention: an item TTL has not deleted yet (TTL
   * may lag by days) is never served. `payloadHmac` names the item (absent for old receipts).
   */
  async getPayload(source: string, eventId: string, payloadHmac?: string): Promise<Buffer | undefined> {
    const item = (await this.get('getPayload', payloadKey(source, eventId, payloadHmac))) as PayloadItem | undefined;
    if (!item) return undefined;
    if (item.expiresAt * 1000 <= this.clock()) return undefined;
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

  private async put(operation: string, item: object, condition?: string, returnOld = false): Promise<void> {
    let out: PutCommandOutput;
    try {
      out = await this.client.send(
        new PutCommand({
          TableName: this.tableName,
          Item: item as Record<string, unknown>,
          ConditionExpression: condition,
          ReturnConsumedCapacity: this.returnCapacity,
          // The item that failed the condition comes back with the error: no second read.
          ...(returnOld ? { ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const } : {}),
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

/** The recorded receipt was written for these bytes (keyed hash; plain SHA-256 for old receipts). */
function sameBytes(recorded: Partial<EventItem>, event: Pick<EventItem, 'payloadHmac'>, rawBody: Buffer): boolean {
  if (recorded.payloadHmac !== undefined) return recorded.payloadHmac === event.payloadHmac;
  if (recorded.payloadSha256 !== undefined) return matchesPlainSha256(rawBody, recorded.payloadSha256);
  return false;
}

/** Anything DynamoDB throws that is not a condition failure means "try again later". */
export function translate(error: unknown): Error {
  if (error instanceof StorageUnavailableError) return error;
  const name = error instanceof Error ? error.name : 'unknown';
  return new StorageUnavailableError(`event store unavailable (${name})`, { cause: error });
}
