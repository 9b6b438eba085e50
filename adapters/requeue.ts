/**
 * Re-queues: one `kind: 'requeue'` item per delivery in the EventStore. Its stream INSERT makes the
 * fan-out send that delivery to that one consumer again. The ledger is left to the consumer runtime:
 *
 *   replay (replayId)  a done delivery is re-run without new units, anything else is claimed as usual;
 *   repair (repairId)  an ordinary delivery: a done one stays done (the claim is a no-op), anything
 *                      else is claimed as usual, so a repair can never add a ledger row or a charge.
 *
 * Built here, written by `Requeues.putRequeue` (one conditional put per item): by the CLI (replay,
 * backfill, reconcile --repair) and by the scheduled reconciler.
 */
import type { EventItem, RequeueItem } from '../core/model';
import { requeueKey } from '../core/model';
import { traceStillTaken } from '../core/trace-header';

/** Requeue items are consumed by the stream within seconds; a day covers any stream backlog. */
export const REQUEUE_TTL_SECONDS = 86_400;

export type RequeueOperation = { readonly replayId: string } | { readonly repairId: string };

export function requeueItem(
  receipt: Pick<EventItem, 'source' | 'eventId' | 'eventType' | 'tenantId' | 'keyId' | 'receivedAt' | 'payloadExpiresAt'> &
    Partial<Pick<EventItem, 'payloadHmac' | 'orderingKeys' | 'traceHeader'>>,
  consumerId: string,
  operation: string | RequeueOperation,
  at: number,
): RequeueItem {
  const op: RequeueOperation = typeof operation === 'string' ? { replayId: operation } : operation;
  const operationId = 'replayId' in op ? op.replayId : op.repairId;
  return {
    pk: requeueKey(operationId, receipt.source, receipt.eventId, consumerId),
    kind: 'requeue',
    source: receipt.source,
    eventId: receipt.eventId,
    eventType: receipt.eventType,
    tenantId: receipt.tenantId,
    keyId: receipt.keyId,
    consumerId,
    ...op,
    receivedAt: receipt.receivedAt,
    // Which payload item the delivery reads, and until when (copied from the receipt).
    ...(receipt.payloadHmac ? { payloadHmac: receipt.payloadHmac } : {}),
    payloadExpiresAt: receipt.payloadExpiresAt,
    // An ordered consumer's re-queue joins the message group of the original delivery.
    ...(receipt.orderingKeys?.[consumerId] !== undefined ? { orderingKey: receipt.orderingKeys[consumerId] } : {}),
    // The trace of the intake that recorded the webhook, for the fan-out to carry on (tracing: 'xray');
    // a bundle built for tracing off (the scheduled reconciler's) leaves it out with the check.
    ...(process.env.HOOKLEDGER_BUNDLED_TRACING !== 'false' && receipt.traceHeader && traceStillTaken(receipt.traceHeader, at)
      ? { traceHeader: receipt.traceHeader }
      : {}),
    createdAt: at,
    // TTL attributes are epoch seconds.
    expiresAt: Math.floor(at / 1000) + REQUEUE_TTL_SECONDS,
  };
}

/**
 * A re-queue written again by a repair under the repair's own key (`rq#<repairId>#<ledgerKey>`),
 * keeping its operation: a replay whose first re-queue the fan-out gave up on stays that replay. The
 * first item may still be in the table (TTL), and the conditional put never writes a key twice.
 */
export function requeueUnder(repairId: string, item: RequeueItem): RequeueItem {
  return { ...item, pk: requeueKey(repairId, item.source, item.eventId, item.consumerId) };
}
