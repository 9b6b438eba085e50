/**
 * Backfill: deliver past events to a consumer that did not exist (or did not subscribe) when they
 * arrived. For each receipt of the window whose type the consumer subscribes to now and whose
 * delivery set lacks it: add the consumer to the delivery set (so reconcile expects its ledger item),
 * then write a requeue item (so it is delivered). Audit first. A consumer with a filter gets only the
 * receipts whose stored body its filter matches now (after a filter change: the past events that now
 * match); a receipt already naming it is never given it again, so nothing is charged twice.
 */

import { forEachLimited } from '../adapters/pool';
import { requeueItem } from '../adapters/requeue';
import type { Window } from '../adapters/table-scan';
import { WindowReader, windowReceiptsInFull } from '../adapters/window-index';
import { findConsumer, matchesEventType } from '../core/config/routing';
import { matchesPattern } from '../core/filter';
import type { EventItem } from '../core/model';
import { writeAudit } from './audit';
import { type ConfigDeps, now as clockNow, eventStoresOf, type OperatorDeps, type Progress } from './deps';
import { UsageError } from './errors';
import { BodyInBucketError, filterEventOf } from './filters';
import { newReplayId } from './ids';
import { splitByErasure, splitByRetention } from './receipts';
import { iso } from './time';

const WRITE_CONCURRENCY = 8;

export interface BackfillRequest extends Window {
  readonly consumer: string;
  readonly dryRun?: boolean;
  readonly confirm?: (plan: { consumer: string; matched: number }) => Promise<boolean>;
  readonly onProgress?: Progress;
}

export interface BackfillResult {
  readonly consumer: string;
  readonly dryRun: boolean;
  /** Receipts of the window the consumer subscribes to whose delivery set lacks it. */
  readonly matched: number;
  /** Receipts left out because their payload passed retention (it is never served again). */
  readonly expired: number;
  /** Receipts of the subscribed types left out because the consumer's filter does not match their body. */
  readonly filteredOut: number;
  /** With a filter: receipts left out because their body is in the payload bucket, which this target names no bucket for. */
  readonly unreadable: number;
  /** Receipts left out because their payload was erased (`hookledger erase`). */
  readonly erased: number;
  readonly replayId?: string;
  /** Receipts the consumer was added to (and a requeue written for). */
  readonly added: number;
  /** Receipts that gained the consumer in the meantime (another backfill): left alone. */
  readonly alreadyPresent: number;
  readonly declined?: boolean;
}

export async function backfill(deps: OperatorDeps & ConfigDeps, request: BackfillRequest): Promise<BackfillResult> {
  const consumer = findConsumer(deps.config, request.consumer);
  if (!consumer) {
    throw new UsageError(
      `unknown consumer "${request.consumer}"; add it to hookledger.config.ts first (configured: ${deps.config.consumers.map((c) => c.id).join(', ')})`,
    );
  }
  const window = { from: request.from, to: request.to };
  // Only the receipts the consumer is missing are read in full; the index has type and delivery set.
  const selected = await windowReceiptsInFull(
    new WindowReader(deps),
    deps,
    { window },
    (r) => consumer.subscribes.some((p) => matchesEventType(p, r.eventType)) && !(r.consumers ?? []).includes(consumer.id),
    request.onProgress,
  );
  // Events whose payload passed retention or was erased cannot be given to a new consumer: it would read nothing.
  const { kept: notErased, erased } = splitByErasure(selected);
  const { kept, expired } = splitByRetention(notErased, clockNow(deps));
  // The filter as configured now, on each stored body (read as intake read it).
  const matching: EventItem[] = [];
  let filteredOut = 0;
  let unreadable = 0;
  if (consumer.filter === undefined) matching.push(...kept);
  else {
    const pattern = consumer.filter;
    await forEachLimited(kept, WRITE_CONCURRENCY, async (receipt) => {
      const event = await filterEventOf(deps, receipt).catch((error: unknown) => {
        if (error instanceof BodyInBucketError) return null;
        throw error;
      });
      if (event === null) unreadable++;
      else if (!event) expired.push(receipt);
      else if (matchesPattern(pattern, event)) matching.push(receipt);
      else filteredOut++;
    });
  }
  const nothing = {
    consumer: consumer.id,
    dryRun: request.dryRun === true,
    matched: matching.length,
    expired: expired.length,
    filteredOut,
    unreadable,
    erased: erased.length,
    added: 0,
    alreadyPresent: 0,
  };
  if (request.dryRun || matching.length === 0) return nothing;
  if (request.confirm && !(await request.confirm({ consumer: consumer.id, matched: matching.length }))) {
    return { ...nothing, declined: true };
  }

  const at = clockNow(deps);
  const replayId = newReplayId(at);
  await writeAudit(
    deps,
    'backfill',
    { replayId, consumer: consumer.id, window: { from: iso(window.from), to: iso(window.to) }, count: matching.length },
    { id: replayId, at },
  );
  const { receiptAdmin: receipts, requeues } = eventStoresOf(deps);
  let added = 0;
  let alreadyPresent = 0;
  await forEachLimited(
    matching,
    WRITE_CONCURRENCY,
    async (receipt) => {
      // The delivery set first (so reconcile expects the delivery), then the requeue that sends it.
      if (!(await receipts.addToDeliverySet(receipt.source, receipt.eventId, consumer.id))) {
        alreadyPresent++;
        return;
      }
      await requeues.putRequeue(requeueItem(receipt, consumer.id, replayId, at));
      added++;
    },
    request.onProgress,
  );
  return { ...nothing, dryRun: false, replayId, added, alreadyPresent };
}
