/**
 * DynamoDB adapter for the EventStore table: receipts, payloads, body claims, conflict audits,
 * re-queues, the key registry and operator audit items. Every write is a single-item write; the
 * receipt is the one conditional write that makes an event (and its delivery set) exist.
 *
 * Errors: the intake and consumer paths translate SDK errors into StorageUnavailableError (intake
 * answers 503). The operator paths (requeue, audit, keys, delivery set, lookups) turn a failed
 * condition into their result and let every other SDK error through as it is, for the CLI to print.
 * Bulk reads (scans, batch gets) are in table-scan.ts.
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
import type { PayloadBlobs } from './payload-blobs';
import { matchesPlainSha256 } from './payload-hash';
import { MAX_INLINE_PAYLOAD_BYTES, payloadObjectKey } from '../core/blobs';
import { HookledgerError } from '../core/errors';
import {
  type Attribution,
  type BodyClaimItem,
  bodyClaimKey,
  type ConflictEntry,
  conflictKey,
  type AuditItem,
  type ConflictItem,
  type EventItem,
  eventKey,
  type KeyItem,
  keyRegistryKey,
  MAX_CONFLICT_ENTRIES,
  type PayloadItem,
  payloadKey,
  receiptIndexAttributes,
  type RequeueItem,
  tenantDayItem,
  utcDay,
  WINDOW_INDEX,
} from '../core/model';

/**
 * `duplicate`: this event id was recorded with these very bytes (a provider retry).
 * `duplicate_conflict`: it was recorded with other bytes; nothing was stored for this request
 * except its line in the event's conflict audit.
 */
export type RecordOutcome = 'recorded' | 'duplicate' | 'duplicate_conflict';

export type ConsumedCapacityObserver = (operation: string, writeUnits: number, readUnits: number) => void;

export interface EventStoreOptions {
  readonly client: DynamoDBDocumentClient;
  readonly tableName: string;
  /** Bench hook: asks DynamoDB for consumed capacity and reports it. */
  readonly onCapacity?: ConsumedCapacityObserver;
  /** Epoch ms; decides whether a payload is past its retention. Default Date.now. */
  readonly clock?: () => number;
  /**
   * The payload bucket: bodies whose stored size passes MAX_INLINE_PAYLOAD_BYTES are kept there and
   * their payload item holds the object key. Needed by intake and by whoever reads payloads.
   * @default - none: such a body cannot be recorded (PayloadBucketMissingError)
   */
  readonly blobs?: PayloadBlobs;
  /**
   * How many window-index partitions a day of this tenant's receipts is spread over (config
   * `windowIndex.hotTenants`). @default 1 for every tenant
   */
  readonly shardsOf?: (tenantId: string) => number;
}

/**
 * The (day, tenant) pairs this execution environment has registered: the registry write is made
 * about once per tenant per UTC day per environment, not per webhook. Bounded; forgotten when the day
 * changes (a new day needs new registry items anyway).
 */
export class TenantDayCache {
  private day: string | undefined;
  private readonly tenants = new Set<string>();
  constructor(private readonly maxTenants = 10_000) {}

  /** True when (day, tenant) is known to be registered by this environment. */
  has(day: string, tenantId: string): boolean {
    return this.day === day && this.tenants.has(tenantId);
  }

  remember(day: string, tenantId: string): void {
    if (this.day !== day) {
      this.day = day;
      this.tenants.clear();
    }
    // Past the bound the oldest pair is forgotten: at worst one more idempotent write for it.
    if (this.tenants.size >= this.maxTenants) this.tenants.delete(this.tenants.values().next().value as string);
    this.tenants.add(tenantId);
  }

  get size(): number {
    return this.tenants.size;
  }
}

/** A body too large for its payload item, and no payload bucket to put it in: a wiring bug. */
export class PayloadBucketMissingError extends HookledgerError {
  override readonly name = 'PayloadBucketMissingError';
}

export class EventStore {
  private readonly client: DynamoDBDocumentClient;
  private readonly tableName: string;
  private readonly onCapacity?: ConsumedCapacityObserver;
  private readonly returnCapacity: ReturnConsumedCapacity | undefined;
  private readonly clock: () => number;
  private readonly blobs?: PayloadBlobs;
  private readonly shardsOf: (tenantId: string) => number;
  /** Per instance: intake builds its EventStore once per execution environment. */
  readonly registered = new TenantDayCache();

  constructor(options: EventStoreOptions) {
    this.shardsOf = options.shardsOf ?? (() => 1);
    this.clock = options.clock ?? Date.now;
    this.blobs = options.blobs;
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
   *
   * A body whose stored size passes MAX_INLINE_PAYLOAD_BYTES is written to the payload bucket first
   * and the item keeps its key. Object before item, so an item never names a missing object; an
   * object whose item or receipt never lands (a failed write, a duplicate_conflict) is referenced by
   * nothing and the bucket's lifecycle deletes it after the retention days.
   */
  async recordEvent(event: Omit<EventItem, 'pk' | 'kind'>, rawBody: Buffer): Promise<RecordOutcome> {
    const shards = this.shardsOf(event.tenantId);
    // The tenant-day registry before anything else: no receipt can exist that a window reader, which
    // finds tenants through the registry, would miss. A failure here stores nothing.
    await this.registerTenantDay(utcDay(event.receivedAt), event.tenantId, shards);
    const zipped = gzipSync(rawBody);
    const useGzip = zipped.length < rawBody.length;
    const stored = useGzip ? zipped : rawBody;
    const common = {
      pk: payloadKey(event.source, event.eventId, event.payloadHmac),
      kind: 'payload' as const,
      // The hash is in the key only: every byte of this item counts toward its write units.
      encoding: useGzip ? ('gzip' as const) : ('identity' as const),
      expiresAt: Math.floor(event.payloadExpiresAt / 1000),
    };
    let payload: PayloadItem;
    if (stored.length > MAX_INLINE_PAYLOAD_BYTES) {
      if (!this.blobs) {
        throw new PayloadBucketMissingError(
          `a body stored as ${stored.length} bytes needs the payload bucket, and this event store has none`,
        );
      }
      const s3Key = payloadObjectKey(event.source, event.eventId, event.payloadHmac);
      await this.blobs.put(s3Key, stored, useGzip ? 'application/gzip' : 'application/octet-stream');
      payload = { ...common, s3Key, storedBytes: stored.length };
    } else {
      payload = { ...common, body: stored };
    }
    try {
      await this.put('putPayload', payload, 'attribute_not_exists(pk)');
    } catch (error) {
      // Already stored: an earlier request with these very bytes got this far. The receipt's own
      // condition decides what this request is.
      if (!(error instanceof ConditionalCheckFailedException)) throw translate(error);
    }
    // The window index's attributes (sparse GSI, core/model.ts WINDOW_INDEX): receipts only.
    const item: EventItem = {
      ...event,
      pk: eventKey(event.source, event.eventId),
      kind: 'event',
      ...receiptIndexAttributes(event, shards),
    };
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
   * Makes sure `tday#<day>#<tenant>` exists (and names at least `shards` index partitions); skipped
   * when this environment already did it today. Idempotent: an UpdateItem whose condition fails when
   * the item already names as many shards (a failed condition is success here).
   */
  async registerTenantDay(day: string, tenantId: string, shards = 1): Promise<void> {
    if (this.registered.has(day, tenantId)) return;
    const item = tenantDayItem(day, tenantId, shards);
    try {
      const out = await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: item.pk },
          UpdateExpression: 'SET #kind = :kind, #day = :day, tenantId = :tenant, shards = :shards, wpk = :wpk, wsk = :wsk',
          ConditionExpression: 'attribute_not_exists(shards) OR shards < :shards',
          ExpressionAttributeNames: { '#kind': 'kind', '#day': 'day' },
          ExpressionAttributeValues: {
            ':kind': item.kind,
            ':day': item.day,
            ':tenant': item.tenantId,
            ':shards': item.shards,
            ':wpk': item.wpk,
            ':wsk': item.wsk,
          },
          ReturnConsumedCapacity: this.returnCapacity,
        }),
      );
      this.onCapacity?.('registerTenantDay', out?.ConsumedCapacity?.CapacityUnits ?? 0, 0);
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) this.onCapacity?.('registerTenantDay', 1, 0);
      else throw translate(error);
    }
    this.registered.remember(day, tenantId);
  }

  /**
   * `hookledger index backfill`: gives a receipt written before the window index (or before tenant
   * ids were escaped in it, core/model.ts keyPart) its index attributes (its tenant-day registered
   * first, as intake does). Idempotent: a receipt that has them already is left as it is (false).
   */
  async indexReceipt(receipt: Pick<EventItem, 'source' | 'eventId' | 'tenantId' | 'receivedAt'>): Promise<boolean> {
    const shards = this.shardsOf(receipt.tenantId);
    await this.registerTenantDay(utcDay(receipt.receivedAt), receipt.tenantId, shards);
    const attributes = receiptIndexAttributes(receipt, shards);
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: eventKey(receipt.source, receipt.eventId) },
          UpdateExpression: 'SET #wpk = :wpk, #wsk = :wsk',
          ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(#wpk) OR #wpk <> :wpk)',
          ExpressionAttributeNames: { '#wpk': WINDOW_INDEX.partitionKey, '#wsk': WINDOW_INDEX.sortKey },
          ExpressionAttributeValues: {
            ':wpk': attributes[WINDOW_INDEX.partitionKey],
            ':wsk': attributes[WINDOW_INDEX.sortKey],
          },
        }),
      );
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw error;
    }
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
    const values = {
      ':kind': 'audit',
      ':action': 'intake.duplicate_conflict',
      ':source': source,
      ':eventId': eventId,
      ':zero': 0,
      ':one': 1,
    };
    const update = (
      input: Pick<
        UpdateCommandInput,
        'ExpressionAttributeNames' | 'ExpressionAttributeValues' | 'UpdateExpression' | 'ConditionExpression'
      >,
    ) => this.client.send(new UpdateCommand({ TableName: this.tableName, Key: { pk: conflictKey(source, eventId) }, ...input }));
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

  /**
   * The raw payload bytes, or undefined once past retention: an item TTL has not deleted yet (TTL
   * may lag by days) is never served. `payloadHmac` names the item (absent for old receipts).
   */
  async getPayload(source: string, eventId: string, payloadHmac?: string): Promise<Buffer | undefined> {
    const item = (await this.get('getPayload', payloadKey(source, eventId, payloadHmac))) as PayloadItem | undefined;
    if (!item) return undefined;
    if (item.expiresAt * 1000 <= this.clock()) return undefined;
    let body: Buffer | undefined;
    if (item.s3Key !== undefined) {
      if (!this.blobs) throw new PayloadBucketMissingError(`payload ${item.pk} is in the payload bucket, and this event store has none`);
      // Missing: the lifecycle expired it (its day count is the retention) before TTL removed the item.
      body = await this.blobs.get(item.s3Key);
      if (!body) return undefined;
    } else {
      body = Buffer.from(item.body ?? new Uint8Array());
    }
    return item.encoding === 'gzip' ? gunzipSync(body) : body;
  }

  /** Whether the payload item is still stored and within retention; reads its expiry, not its bytes. */
  async hasPayload(source: string, eventId: string, payloadHmac?: string): Promise<boolean> {
    return (await this.payloadState(source, eventId, payloadHmac)).present;
  }

  /**
   * `hasPayload`, and where the bytes are: `s3Key` names the payload bucket's object when the body
   * was too large for its item. Reads the item's expiry and key, not its bytes.
   */
  async payloadState(
    source: string,
    eventId: string,
    payloadHmac?: string,
  ): Promise<{ readonly present: boolean; readonly s3Key?: string }> {
    const item = await this.read('getPayloadExpiry', payloadKey(source, eventId, payloadHmac), 'pk, expiresAt, s3Key');
    if (!item) return { present: false };
    // TTL deletes lag expiry (by up to days on AWS; never on DynamoDB Local): expired means expired.
    const expiresAt = item.expiresAt as number | undefined;
    const present = expiresAt === undefined || expiresAt * 1000 > this.clock();
    return { present, ...(typeof item.s3Key === 'string' ? { s3Key: item.s3Key } : {}) };
  }

  /** The receipts of one event id, one read per source tried; the sources that have none are left out. */
  async findReceipts(eventId: string, sources: readonly string[]): Promise<EventItem[]> {
    const found: EventItem[] = [];
    for (const source of sources) {
      const item = (await this.read('getEvent', eventKey(source, eventId))) as EventItem | undefined;
      if (item) found.push(item);
    }
    return found;
  }

  /** The conflict audit of one event id (requests that reused it with other bytes), if any. */
  async getConflict(source: string, eventId: string): Promise<ConflictItem | undefined> {
    return (await this.read('getConflict', conflictKey(source, eventId))) as ConflictItem | undefined;
  }

  /**
   * Adds a consumer to a receipt's delivery set (backfill), so reconcile expects its ledger item.
   * False when the receipt already has it (another backfill got there first) or is not a receipt.
   */
  async addToDeliverySet(source: string, eventId: string, consumerId: string): Promise<boolean> {
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: eventKey(source, eventId) },
          // A MODIFY: the fan-out passes only INSERTs, so this alone delivers nothing.
          UpdateExpression: 'SET consumers = list_append(if_not_exists(consumers, :none), :added)',
          ConditionExpression: 'kind = :event AND NOT contains(consumers, :consumer)',
          ExpressionAttributeValues: { ':none': [], ':added': [consumerId], ':consumer': consumerId, ':event': 'event' },
        }),
      );
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw error;
    }
  }

  /**
   * An explicit re-queue: the stream carries its INSERT to the fan-out, which sends it to one
   * consumer. A new key per operation id; the condition keeps an SDK retry of a write that did land
   * from inserting the item again (a second INSERT would be a second delivery), so writing the same
   * item twice is a no-op.
   */
  async putRequeue(item: RequeueItem): Promise<void> {
    try {
      await this.put('putRequeue', item, 'attribute_not_exists(pk)');
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    }
  }

  /** An operator action's audit item; never overwrites one (a failed condition is thrown). */
  async putAudit(item: AuditItem): Promise<void> {
    await this.put('putAudit', item, 'attribute_not_exists(pk)');
  }

  async getKey(keyId: string): Promise<KeyItem | undefined> {
    return (await this.get('getKey', keyRegistryKey(keyId))) as KeyItem | undefined;
  }

  /**
   * Registers a key. False when the id exists: ids are never re-issued, so events already
   * attributed to one keep meaning the same tenant.
   */
  async createKey(item: KeyItem): Promise<boolean> {
    try {
      await this.put('putKey', item, 'attribute_not_exists(pk)');
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw error;
    }
  }

  /**
   * Marks a registered key revoked. Returns the key as it is now, and whether it was revoked
   * already (then nothing is written); undefined when there is no such key.
   */
  async revokeKey(keyId: string, at: number): Promise<{ readonly key: KeyItem; readonly alreadyRevoked: boolean } | undefined> {
    const existing = (await this.read('getKey', keyRegistryKey(keyId))) as KeyItem | undefined;
    if (existing?.kind !== 'key') return undefined;
    if (existing.status === 'revoked') return { key: existing, alreadyRevoked: true };
    try {
      const out = await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: keyRegistryKey(keyId) },
          UpdateExpression: 'SET #status = :revoked, revokedAt = :at',
          ConditionExpression: 'attribute_exists(pk) AND kind = :key',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ':revoked': 'revoked', ':at': at, ':key': 'key' },
          ReturnValues: 'ALL_NEW',
        }),
      );
      return { key: out.Attributes as KeyItem, alreadyRevoked: false };
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return undefined;
      throw error;
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
      return await this.read(operation, pk);
    } catch (error) {
      throw translate(error);
    }
  }

  /** `get` for the operator paths: SDK errors pass through untranslated. */
  private async read(operation: string, pk: string, projection?: string): Promise<Record<string, unknown> | undefined> {
    const out = await this.client.send(
      new GetCommand({
        TableName: this.tableName,
        Key: { pk },
        ConsistentRead: true,
        ReturnConsumedCapacity: this.returnCapacity,
        ...(projection ? { ProjectionExpression: projection } : {}),
      }),
    );
    this.onCapacity?.(operation, 0, out.ConsumedCapacity?.CapacityUnits ?? 0);
    return out.Item;
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
