/**
 * Receipts in the EventStore table as intake writes them: the one conditional write that makes an
 * event (and its delivery set) exist, with what intake writes around it (the tenant-day registry and
 * the window index's attributes, the payload through Payloads, body claims, the conflict audit, the
 * duplicate counts Activity reads). The
 * operator paths on receipts (lookups, erasure marks, backfills) are ReceiptAdmin's
 * (receipt-admin.ts): intake's bundle loads none of them.
 */
import { type AttributeValue, ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { UpdateCommand, type UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import {
  type Attribution,
  type BodyClaimItem,
  bodyClaimKey,
  type ConflictEntry,
  conflictKey,
  duplicateCountKey,
  duplicateMinuteAttribute,
  type EventItem,
  eventKey,
  HOUR_MS,
  MAX_CONFLICT_ENTRIES,
  receiptIndexAttributes,
  tenantDayItem,
  utcDay,
} from '../core/model';
import { StorageUnavailableError } from './errors';
import { matchesPlainSha256 } from './payload-hash';
import type { PayloadWrites } from './payloads';
import { EventTable, type TableOptions, translate } from './table';

/**
 * `duplicate`: this event id was recorded with these very bytes (a provider retry).
 * `duplicate_conflict`: it was recorded with other bytes; nothing was stored for this request
 * except its line in the event's conflict audit.
 */
export type RecordOutcome = 'recorded' | 'duplicate' | 'duplicate_conflict';

export interface ReceiptsOptions extends TableOptions {
  /** Where recordEvent writes the payload (the same table), and deletes it again on a conflict. */
  readonly payloads: Pick<PayloadWrites, 'write' | 'discard'>;
  /**
   * How many window-index partitions a day of this tenant's receipts is spread over (config
   * `windowIndex.hotTenants`). @default 1 for every tenant
   */
  readonly shardsOf?: (tenantId: string) => number;
  /** The receipt's `recordedAt`: read just before its conditional write. @default Date.now */
  readonly clock?: () => number;
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

export class Receipts extends EventTable {
  private readonly payloads: Pick<PayloadWrites, 'write' | 'discard'>;
  /** Index partitions per tenant-day (`windowIndex.hotTenants`); ReceiptAdmin's index backfill reads it too. */
  readonly shardsOf: (tenantId: string) => number;
  /** Per instance: intake builds its Receipts once per execution environment. */
  readonly registered = new TenantDayCache();
  private readonly clock: () => number;

  constructor(options: ReceiptsOptions) {
    super(options);
    this.payloads = options.payloads;
    this.shardsOf = options.shardsOf ?? (() => 1);
    this.clock = options.clock ?? Date.now;
  }

  /**
   * Stores the payload, then the receipt. The payload goes first so that a receipt never exists
   * without its payload. The payload's key names the body's keyed hash, so two requests with the
   * same event id and different bytes write two payload items and the receipt (first one wins)
   * points at its own: the stored payload can never disagree with its receipt, whatever fails
   * between the writes. A payload whose receipt never lands is harmless and expires by TTL.
   */
  async recordEvent(event: Omit<EventItem, 'pk' | 'kind'>, rawBody: Buffer): Promise<RecordOutcome> {
    const shards = this.shardsOf(event.tenantId);
    // The tenant-day registry before anything else: no receipt can exist that a window reader, which
    // finds tenants through the registry, would miss. A failure here stores nothing.
    await this.registerTenantDay(utcDay(event.receivedAt), event.tenantId, shards);
    const payload = await this.payloads.write(event, rawBody);
    // The window index's attributes (sparse GSI, core/model.ts WINDOW_INDEX): receipts only.
    const item: EventItem = {
      ...event,
      pk: eventKey(event.source, event.eventId),
      kind: 'event',
      ...receiptIndexAttributes(event, shards),
      // After the registry and the payload: the timeline's `recorded` step, in the same write (no write of its own).
      recordedAt: this.clock(),
    };
    let existing: Record<string, unknown> | undefined;
    try {
      await this.put('putEvent', item, 'attribute_not_exists(pk)', true);
      return 'recorded';
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw translate(error);
      existing = error.Item ? unmarshall(error.Item as Record<string, AttributeValue>) : await this.get('getEvent', item.pk);
    }
    if (existing && sameBytes(existing as Partial<EventItem>, event, rawBody)) {
      await this.countDuplicate(event.source, event.receivedAt);
      return 'duplicate';
    }
    // Another body holds this event id. Ours is referenced by nothing: remove it, record the attempt.
    try {
      await this.payloads.discard(payload.pk);
      await this.noteConflict(event.source, event.eventId, {
        at: event.receivedAt,
        payloadHmac: event.payloadHmac,
        payloadBytes: event.payloadBytes,
        ...(event.secretVersion ? { secretVersion: event.secretVersion } : {}),
        ...(event.origin ? { origin: event.origin } : {}),
      });
    } catch (error) {
      throw translate(error);
    }
    await this.countDuplicate(event.source, event.receivedAt);
    return 'duplicate_conflict';
  }

  /**
   * Adds 1 to the duplicate answers of `source` in `at`'s minute (`dup#` items, core/model.ts), which
   * Activity sums per bucket. Only ever on a duplicate's path: a first delivery writes none. A failed
   * write fails the request (503) like any other of intake's writes, so the provider's retry is
   * counted instead of the answer going uncounted.
   */
  private async countDuplicate(source: string, at: number): Promise<void> {
    const pk = duplicateCountKey(source, at);
    try {
      const out = await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk },
          UpdateExpression: 'SET #kind = :kind, #source = :source, hourStart = :hour ADD #minute :one',
          ExpressionAttributeNames: { '#kind': 'kind', '#source': 'source', '#minute': duplicateMinuteAttribute(at) },
          ExpressionAttributeValues: { ':kind': 'duplicates', ':source': source, ':hour': Math.floor(at / HOUR_MS) * HOUR_MS, ':one': 1 },
          ReturnConsumedCapacity: this.returnCapacity,
        }),
      );
      this.onCapacity?.('countDuplicate', out?.ConsumedCapacity?.CapacityUnits ?? 0, 0);
    } catch (error) {
      throw translate(error);
    }
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
}

/** The recorded receipt was written for these bytes (keyed hash; plain SHA-256 for old receipts). */
function sameBytes(recorded: Partial<EventItem>, event: Pick<EventItem, 'payloadHmac'>, rawBody: Buffer): boolean {
  if (recorded.payloadHmac !== undefined) return recorded.payloadHmac === event.payloadHmac;
  if (recorded.payloadSha256 !== undefined) return matchesPlainSha256(rawBody, recorded.payloadSha256);
  return false;
}
