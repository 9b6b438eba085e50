/**
 * The operator paths on receipts (the CLI's): lookups by event id, the conflict audit, erasure marks,
 * backfill's delivery set and index attributes. Apart from Receipts (receipts.ts), which holds what
 * intake writes, so that intake's bundle loads none of this.
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { UpdateCommand, type UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import { type ConflictItem, conflictKey, type EventItem, eventKey, receiptIndexAttributes, utcDay, WINDOW_INDEX } from '../core/model';
import type { Receipts } from './receipts';
import { EventTable, type TableOptions } from './table';

export interface ReceiptAdminOptions extends TableOptions {
  /** The index backfill registers each receipt's tenant-day as intake does, through intake's Receipts. */
  readonly receipts: Pick<Receipts, 'registerTenantDay' | 'shardsOf'>;
}

export class ReceiptAdmin extends EventTable {
  private readonly receipts: Pick<Receipts, 'registerTenantDay' | 'shardsOf'>;

  constructor(options: ReceiptAdminOptions) {
    super(options);
    this.receipts = options.receipts;
  }

  /**
   * `hookledger index backfill`: gives a receipt written before the window index (or before tenant
   * ids were escaped in it, core/model.ts keyPart) its index attributes (its tenant-day registered
   * first, as intake does). Idempotent: a receipt that has them already is left as it is (false).
   */
  async indexReceipt(receipt: Pick<EventItem, 'source' | 'eventId' | 'tenantId' | 'receivedAt'>): Promise<boolean> {
    const shards = this.receipts.shardsOf(receipt.tenantId);
    await this.receipts.registerTenantDay(utcDay(receipt.receivedAt), receipt.tenantId, shards);
    const attributes = receiptIndexAttributes(receipt, shards);
    return this.updateReceipt(receipt.source, receipt.eventId, {
      UpdateExpression: 'SET #wpk = :wpk, #wsk = :wsk',
      ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(#wpk) OR #wpk <> :wpk)',
      ExpressionAttributeNames: { '#wpk': WINDOW_INDEX.partitionKey, '#wsk': WINDOW_INDEX.sortKey },
      ExpressionAttributeValues: {
        ':wpk': attributes[WINDOW_INDEX.partitionKey],
        ':wsk': attributes[WINDOW_INDEX.sortKey],
      },
    });
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
   * Erasure (`hookledger erase`): notes on the receipt when and by whom its payload was erased, and
   * removes what it holds beyond attribution that was read from the body (the ordering keys). Ids,
   * type, tenant, key, times, delivery set and keyed hash stay: the ledger's evidence. False when an
   * earlier run erased it already (its first erasure stays on record).
   */
  async markErased(
    source: string,
    eventId: string,
    erasure: { readonly at: number; readonly operator: string; readonly erasureId: string },
  ): Promise<boolean> {
    return this.updateReceipt(source, eventId, {
      UpdateExpression: 'SET erasedAt = :at, erasedBy = :by, erasureId = :eid REMOVE orderingKeys',
      ConditionExpression: 'kind = :event AND attribute_not_exists(erasedAt)',
      ExpressionAttributeValues: { ':at': erasure.at, ':by': erasure.operator, ':eid': erasure.erasureId, ':event': 'event' },
    });
  }

  /**
   * Adds a consumer to a receipt's delivery set (backfill), so reconcile expects its ledger item.
   * False when the receipt already has it (another backfill got there first) or is not a receipt.
   */
  async addToDeliverySet(source: string, eventId: string, consumerId: string): Promise<boolean> {
    // A MODIFY: the fan-out passes only INSERTs, so this alone delivers nothing.
    return this.updateReceipt(source, eventId, {
      UpdateExpression: 'SET consumers = list_append(if_not_exists(consumers, :none), :added)',
      ConditionExpression: 'kind = :event AND NOT contains(consumers, :consumer)',
      ExpressionAttributeValues: { ':none': [], ':added': [consumerId], ':consumer': consumerId, ':event': 'event' },
    });
  }

  /** One conditional update of a receipt: true when made, false when its condition failed; other SDK errors as they are (the operator's paths). */
  private async updateReceipt(
    source: string,
    eventId: string,
    update: Pick<UpdateCommandInput, 'UpdateExpression' | 'ConditionExpression' | 'ExpressionAttributeNames' | 'ExpressionAttributeValues'>,
  ): Promise<boolean> {
    try {
      await this.client.send(new UpdateCommand({ TableName: this.tableName, Key: { pk: eventKey(source, eventId) }, ...update }));
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw error;
    }
  }
}
