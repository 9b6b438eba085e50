/**
 * Replay: send one consumer's deliveries again, for one event or for every receipt of a window
 * whose delivery set includes that consumer. Counts first; then, unless it is a dry run, writes the
 * audit item, one requeue item per delivery, and a `replayRequests` entry on each existing ledger
 * item of that consumer. Sibling consumers' ledger items are never read for writing, never touched.
 *
 * Why this is harmless to billing: the consumer runtime re-runs a done delivery under a replay lease
 * and records it in `replays`, never in `units` (see adapters/ledger.ts, claimReplay).
 */

import { forEachLimited } from '../adapters/pool';
import { requeueItem } from '../adapters/requeue';
import { ledgerItemsByKey, type Window } from '../adapters/table-scan';
import { WindowReader, windowReceiptsInFull } from '../adapters/window-index';
import { findConsumer } from '../core/config/routing';
import { type DeliveryState, type EventItem, type LedgerItem, ledgerKey } from '../core/model';
import { writeAudit } from './audit';
import { type ConfigDeps, now as clockNow, eventStoresOf, ledgerOf, type OperatorDeps, type Progress } from './deps';
import { UsageError } from './errors';
import { receiptMatcher } from './events';
import { newReplayId } from './ids';
import { findReceipt, splitByErasure, splitByRetention } from './receipts';
import { iso } from './time';

const WRITE_CONCURRENCY = 8;

export interface ReplayRequest {
  readonly consumer: string;
  /** One event (source defaults to the only configured source, else every source is tried). */
  readonly event?: { readonly eventId: string; readonly source?: string };
  /** Receipts with receivedAt in [from, to). */
  readonly window?: Window;
  readonly tenant?: string;
  /** An event type, or a prefix of types ending in `*` (`payment.*`). */
  readonly type?: string;
  /** Window mode: only receipts from this source, whose event id starts so, whose delivery is in this state. */
  readonly source?: string;
  readonly eventIdPrefix?: string;
  readonly state?: DeliveryStateOrReady;
  readonly dryRun?: boolean;
  /** Asked after counting, before any write; false stops the replay with nothing written. */
  readonly confirm?: (plan: ReplayPlan) => Promise<boolean>;
  readonly onProgress?: Progress;
}

export type DeliveryStateOrReady = DeliveryState | 'ready';

export interface ReplayPlan {
  readonly consumer: string;
  readonly matched: number;
  /** Deliveries left out because their event's payload passed retention (never served again). */
  readonly expired: number;
  /** Deliveries left out because their event's payload was erased (`hookledger erase`). */
  readonly erased: number;
  /** The matched deliveries by their current state (`ready`: no ledger item yet). */
  readonly byState: Readonly<Partial<Record<DeliveryStateOrReady, number>>>;
}

export interface ReplayResult extends ReplayPlan {
  readonly dryRun: boolean;
  /** Absent on a dry run or when nothing matched or the operator declined. */
  readonly replayId?: string;
  readonly requeued: number;
  /** Existing ledger items of this consumer that got a `replayRequests` entry. */
  readonly annotated: number;
  readonly declined?: boolean;
}

export type ReplayDeps = OperatorDeps & ConfigDeps;

export async function replay(deps: ReplayDeps, request: ReplayRequest): Promise<ReplayResult> {
  const { consumer } = request;
  if (!findConsumer(deps.config, consumer)) {
    throw new UsageError(`unknown consumer "${consumer}"; configured: ${deps.config.consumers.map((c) => c.id).join(', ')}`);
  }
  if ((request.event === undefined) === (request.window === undefined)) {
    throw new UsageError('give either one event (--event) or a window (--from/--to), not both and not neither');
  }
  const replayable = await replayableReceipts(deps, request);
  const { expired, erased } = replayable;
  const states = await ledgerItemsByKey<Pick<LedgerItem, 'pk' | 'state'>>(
    deps,
    replayable.matching.map((r) => ledgerKey(r.source, r.eventId, consumer)),
    { projection: 'pk, #state', names: { '#state': 'state' } },
  );
  const stateOf = (r: EventItem) => states.get(ledgerKey(r.source, r.eventId, consumer))?.state ?? 'ready';
  const matching = request.state === undefined ? replayable.matching : replayable.matching.filter((r) => stateOf(r) === request.state);
  const byState: Partial<Record<DeliveryStateOrReady, number>> = {};
  for (const r of matching) byState[stateOf(r)] = (byState[stateOf(r)] ?? 0) + 1;
  const plan: ReplayPlan = { consumer, matched: matching.length, expired: expired.length, erased: erased.length, byState };
  const nothing = { ...plan, dryRun: request.dryRun === true, requeued: 0, annotated: 0 };
  if (request.dryRun || matching.length === 0) return nothing;
  if (request.confirm && !(await request.confirm(plan))) return { ...nothing, declined: true };
  return { ...plan, dryRun: false, ...(await requeueDeliveries(deps, request, matching, states)) };
}

/**
 * The receipts whose delivery set includes the consumer (the event, or the window's, narrowed by tenant,
 * type or type prefix, source and event id prefix as Events searches: ops/events.ts), less those whose
 * payload was erased or passed retention; for one event, either is refused.
 */
async function replayableReceipts(
  deps: ReplayDeps,
  request: ReplayRequest,
): Promise<{ matching: EventItem[]; expired: EventItem[]; erased: EventItem[] }> {
  const { consumer } = request;
  const match = receiptMatcher({ type: request.type, idPrefix: request.eventIdPrefix });
  const receipts = request.event
    ? [await findReceipt(deps, request.event.eventId, request.event.source, consumer)]
    : await windowReceiptsInFull(
        new WindowReader(deps),
        deps,
        { window: request.window!, consumer, tenant: request.tenant, type: match.type, source: request.source },
        match.matches,
        request.onProgress,
      );
  const selected = receipts.filter(
    (r) =>
      (r.consumers ?? []).includes(consumer) &&
      (request.tenant === undefined || r.tenantId === request.tenant) &&
      (request.source === undefined || r.source === request.source) &&
      match.matches(r),
  );
  // An erased payload is gone for good; one past retention is never served again, whatever TTL has deleted yet.
  const { kept: notErased, erased } = splitByErasure(selected);
  if (request.event && erased.length > 0) {
    const e = erased[0]!;
    throw new UsageError(
      `event ${request.event.eventId}: its payload was erased at ${iso(e.erasedAt!)} by ${e.erasedBy ?? 'unknown'} and cannot be replayed; ` +
        'the receipt, its keyed hash and the ledger trail remain (hookledger trace)',
    );
  }
  const { kept: matching, expired } = splitByRetention(notErased, clockNow(deps));
  if (request.event && expired.length > 0) {
    throw new UsageError(
      `event ${request.event.eventId}: its payload passed retention at ${iso(expired[0]!.payloadExpiresAt)} and is never served again; ` +
        'the receipt, its keyed hash and the ledger trail remain (hookledger trace)',
    );
  }
  return { matching, expired, erased };
}

/** The audit item, then one requeue item per delivery and a `replayRequests` note on each existing ledger item. */
async function requeueDeliveries(
  deps: ReplayDeps,
  request: ReplayRequest,
  matching: readonly EventItem[],
  states: ReadonlyMap<string, unknown>,
): Promise<{ replayId: string; requeued: number; annotated: number }> {
  const { consumer } = request;
  const at = clockNow(deps);
  const replayId = newReplayId(at);
  await writeAudit(
    deps,
    'replay',
    {
      replayId,
      consumer,
      ...(request.event ? { eventId: request.event.eventId, source: matching[0]?.source } : {}),
      ...(request.window ? { window: { from: iso(request.window.from), to: iso(request.window.to) } } : {}),
      ...(request.tenant !== undefined ? { tenant: request.tenant } : {}),
      ...(request.type !== undefined ? { type: request.type } : {}),
      ...(request.source !== undefined ? { source: request.source } : {}),
      ...(request.eventIdPrefix !== undefined ? { eventIdPrefix: request.eventIdPrefix } : {}),
      ...(request.state !== undefined ? { state: request.state } : {}),
      count: matching.length,
    },
    { id: replayId, at },
  );
  const { requeues } = eventStoresOf(deps);
  const ledger = ledgerOf(deps);
  let requeued = 0;
  let annotated = 0;
  await forEachLimited(
    matching,
    WRITE_CONCURRENCY,
    async (receipt) => {
      // The requeue first: a ledger note about a replay that was never sent would mislead.
      await requeues.putRequeue(requeueItem(receipt, consumer, replayId, at));
      requeued++;
      if (states.has(ledgerKey(receipt.source, receipt.eventId, consumer))) {
        const delivery = { source: receipt.source, eventId: receipt.eventId, consumerId: consumer };
        if (await ledger.noteReplayRequest(delivery, { replayId, at, operator: deps.operator })) annotated++;
      }
    },
    request.onProgress,
  );
  return { replayId, requeued, annotated };
}
