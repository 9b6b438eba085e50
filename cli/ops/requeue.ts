/**
 * Re-queues: one `kind: 'requeue'` item per delivery in the EventStore. Its stream INSERT makes the
 * fan-out send that delivery to that one consumer again, carrying the replay id. The ledger is
 * left to the consumer runtime: a done delivery is re-run without new units, anything else is claimed
 * as usual.
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import type { EventItem, RequeueItem } from '../../lambdas/shared/model';
import { requeueKey } from '../../lambdas/shared/model';
import type { StoreDeps } from './deps';

/** Requeue items are consumed by the stream within seconds; a day covers any stream backlog. */
export const REQUEUE_TTL_SECONDS = 86_400;

export function requeueItem(receipt: EventItem, consumerId: string, replayId: string, at: number): RequeueItem {
  return {
    pk: requeueKey(replayId, receipt.source, receipt.eventId, consumerId),
    kind: 'requeue',
    source: receipt.source,
    eventId: receipt.eventId,
    eventType: receipt.eventType,
    tenantId: receipt.tenantId,
    keyId: receipt.keyId,
    consumerId,
    replayId,
    receivedAt: receipt.receivedAt,
    ...(receipt.payloadHmac ? { payloadHmac: receipt.payloadHmac } : {}),
    payloadExpiresAt: receipt.payloadExpiresAt,
    createdAt: at,
    // TTL attributes are epoch seconds.
    expiresAt: Math.floor(at / 1000) + REQUEUE_TTL_SECONDS,
  };
}

export async function putRequeue(deps: StoreDeps, item: RequeueItem): Promise<void> {
  // A new key per replay id. The condition keeps an SDK retry of a write that did land from
  // inserting the item again (a second INSERT would be a second delivery).
  try {
    await deps.ddb.send(
      new PutCommand({ TableName: deps.tables.events, Item: item, ConditionExpression: 'attribute_not_exists(pk)' }),
    );
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
  }
}
