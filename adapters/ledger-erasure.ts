/**
 * Erasure on the Ledger table (`hookledger erase`): a delivery that is not done becomes quarantined
 * `payload_erased`, so the consumer runtime never claims it again (Ledger.claim refuses a row with
 * `erasedAt`) and nothing is charged for it. A done row is never touched: its usage row and access log
 * are the evidence erasure keeps. One conditional single-item write per delivery, as every ledger write.
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { eventKey, type LedgerItem, type LedgerKeyParts, ledgerKey, PAYLOAD_ERASED } from '../core/model';

/** What `markErased` found: `quarantined` now, `done` (left as it is), or `already` erased by an earlier run. */
export type EraseMark = 'quarantined' | 'done' | 'already';

export interface ErasedDelivery extends LedgerKeyParts, Pick<LedgerItem, 'eventType' | 'tenantId' | 'keyId' | 'receivedAt'> {}

export class LedgerErasure {
  constructor(private readonly options: { readonly client: DynamoDBDocumentClient; readonly tableName: string }) {}

  /**
   * Quarantines one delivery `payload_erased` (created with the receipt's attribution when no worker
   * claimed it yet, so reconcile finds it present and explained). Idempotent. A live lease is ended
   * too: its worker's acknowledgement then fails its condition (state leased) and the message comes
   * back to a claim that refuses it, so nothing is charged. Other SDK errors reach the CLI as they are.
   */
  async markErased(
    delivery: ErasedDelivery,
    erasure: { readonly at: number; readonly erasureId: string; readonly operator: string },
  ): Promise<EraseMark> {
    const entry = [
      { attempt: 0, category: PAYLOAD_ERASED, message: `payload erased by ${erasure.operator} (${erasure.erasureId})`, at: erasure.at },
    ];
    try {
      await this.options.client.send(
        new UpdateCommand({
          TableName: this.options.tableName,
          Key: { pk: ledgerKey(delivery.source, delivery.eventId, delivery.consumerId) },
          UpdateExpression:
            'SET #state = :quarantined, lastErrorCategory = :category, erasedAt = :at, erasureId = :eid, ' +
            '#errors = list_append(if_not_exists(#errors, :none), :entry), attempt = if_not_exists(attempt, :zero), ' +
            '#reads = if_not_exists(#reads, :none), eventKey = :eventKey, #source = :source, eventId = :eventId, ' +
            'eventType = if_not_exists(eventType, :eventType), tenantId = if_not_exists(tenantId, :tenantId), ' +
            'keyId = if_not_exists(keyId, :keyId), consumerId = :consumerId, receivedAt = if_not_exists(receivedAt, :receivedAt) ' +
            'REMOVE leaseUntil',
          ConditionExpression: '(attribute_not_exists(pk) OR #state <> :done) AND attribute_not_exists(erasedAt)',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          // Reserved words in DynamoDB.
          ExpressionAttributeNames: { '#state': 'state', '#errors': 'errors', '#reads': 'reads', '#source': 'source' },
          ExpressionAttributeValues: {
            ':quarantined': 'quarantined',
            ':done': 'done',
            ':category': PAYLOAD_ERASED,
            ':at': erasure.at,
            ':eid': erasure.erasureId,
            ':none': [],
            ':entry': entry,
            ':zero': 0,
            ':eventKey': eventKey(delivery.source, delivery.eventId),
            ':source': delivery.source,
            ':eventId': delivery.eventId,
            ':eventType': delivery.eventType,
            ':tenantId': delivery.tenantId,
            ':keyId': delivery.keyId,
            ':consumerId': delivery.consumerId,
            ':receivedAt': delivery.receivedAt,
          },
        }),
      );
      return 'quarantined';
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      const raw = error.Item as Record<string, unknown> | undefined;
      const old = raw && typeof raw.pk === 'object' ? unmarshall(raw as never) : raw;
      return old?.state === 'done' ? 'done' : 'already';
    }
  }
}
