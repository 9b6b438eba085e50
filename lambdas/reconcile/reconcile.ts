/**
 * Reconcile: compares the receipts of a window with their ledger items and names every violation by
 * its ids. Read-only. Shared by the scheduled Lambda (handler.ts) and `hookledger reconcile`.
 *
 *   missing_delivery     an expected consumer has no ledger item at all, and the receipt is older
 *                        than the grace period (younger ones may simply still be in flight)
 *   unexpected_delivery  a ledger item for a consumer that is not in the receipt's delivery set
 *   done_without_usage   a done ledger item without units (a usage row that was never written)
 *   tenant_mismatch      the ledger item's tenant differs from the tenant captured at intake
 *   usage_without_event  a ledger item whose receipt does not exist
 *
 * Quarantined deliveries are not violations (they are parked in the DLQ on purpose); they are counted.
 */
import { eventKey, type EventItem, type LedgerItem, ledgerKey, parseLedgerKey } from '../../core/model';
import {
  eventStoreItemsByKey,
  ledgerItemsByKey,
  type Progress,
  type ScanDeps,
  scanLedger,
  scanReceipts,
  type Window,
} from '../shared/table-scan';
import { HookledgerError } from '../../core/errors';

export const MINUTE_MS = 60_000;
export const HOUR_MS = 60 * MINUTE_MS;
/** Work younger than this may still be on its way through the stream and the queue. */
export const DEFAULT_GRACE_MS = 15 * MINUTE_MS;

export type ViolationKind =
  | 'missing_delivery'
  | 'unexpected_delivery'
  | 'done_without_usage'
  | 'tenant_mismatch'
  | 'usage_without_event'
  /** Neither done nor quarantined, and no live lease or retry for longer than the grace period. */
  | 'stalled_delivery';

export const VIOLATION_KINDS: readonly ViolationKind[] = [
  'missing_delivery',
  'unexpected_delivery',
  'done_without_usage',
  'tenant_mismatch',
  'usage_without_event',
  'stalled_delivery',
];

export interface Violation {
  readonly kind: ViolationKind;
  readonly source: string;
  readonly eventId: string;
  readonly consumerId: string;
  /** The ledger item's key (`<source>:<eventId>#<consumerId>`), whether or not it exists. */
  readonly ledgerKey: string;
  /** tenant_mismatch: the tenant captured at intake and the one on the ledger item. */
  readonly receiptTenantId?: string;
  readonly ledgerTenantId?: string;
}

export interface ReconcileReport {
  readonly from: number;
  readonly to: number;
  readonly graceMs: number;
  readonly checkedAt: number;
  readonly receipts: number;
  readonly ledgerItems: number;
  readonly expectedDeliveries: number;
  /** Expected deliveries with no ledger item yet whose receipt is still within the grace period. */
  readonly inGrace: number;
  readonly quarantined: number;
  readonly violations: readonly Violation[];
  readonly counts: Readonly<Record<ViolationKind, number>>;
}

export interface ReconcileOptions extends Window {
  readonly graceMs?: number;
  /**
   * Every lease counts as ended, whatever its leaseUntil: nobody holds one any more (the local stack
   * just started, so the process whose workers held them is gone). Default false.
   */
  readonly leasesAbandoned?: boolean;
  readonly onProgress?: Progress;
}

export interface ReconcileDeps extends ScanDeps {
  readonly clock?: () => number;
}

export class ReconcileWindowError extends HookledgerError {
  override readonly name = 'ReconcileWindowError';
}

export async function reconcile(deps: ReconcileDeps, options: ReconcileOptions): Promise<ReconcileReport> {
  const now = (deps.clock ?? Date.now)();
  const graceMs = options.graceMs ?? DEFAULT_GRACE_MS;
  const window = { from: options.from, to: options.to };
  if (!(Number.isFinite(window.from) && Number.isFinite(window.to) && window.from < window.to)) {
    throw new ReconcileWindowError(
      `the window must have from < to, got from=${new Date(window.from).toISOString()} to=${new Date(window.to).toISOString()}`,
    );
  }
  if (!(graceMs >= 0)) throw new ReconcileWindowError(`grace must be >= 0 ms, got ${graceMs}`);

  let receiptsRead = 0;
  let ledgerRead = 0;
  const progress = () => options.onProgress?.(receiptsRead + ledgerRead, undefined);
  const [receipts, ledgerItems] = await Promise.all([
    scanReceipts(deps, { window }, (n) => {
      receiptsRead = n;
      progress();
    }),
    scanLedger(deps, window, (n) => {
      ledgerRead = n;
      progress();
    }),
  ]);

  const receiptByKey = new Map<string, EventItem>();
  for (const receipt of receipts) receiptByKey.set(eventKey(receipt.source, receipt.eventId), receipt);
  // Ledger items of this window whose receipt is outside it (or absent): look those receipts up by key.
  const orphanKeys: string[] = [];
  for (const item of ledgerItems) {
    const parts = parseLedgerKey(item.pk);
    if (!parts) continue;
    const key = eventKey(parts.source, parts.eventId);
    if (!receiptByKey.has(key)) orphanKeys.push(key);
  }
  const outside = await eventStoreItemsByKey<EventItem>(deps, orphanKeys);
  for (const [key, receipt] of outside) if (receipt.kind === 'event') receiptByKey.set(key, receipt);

  const violations: Violation[] = [];
  let quarantined = 0;
  const ledgerKeys = new Set<string>();
  for (const item of ledgerItems) {
    ledgerKeys.add(item.pk);
    const parts = parseLedgerKey(item.pk);
    if (!parts) continue;
    const ids = { ...parts, ledgerKey: item.pk };
    if (item.state === 'quarantined') quarantined++;
    const receipt = receiptByKey.get(eventKey(parts.source, parts.eventId));
    if (!receipt) {
      violations.push({ kind: 'usage_without_event', ...ids });
      continue;
    }
    if (!(receipt.consumers ?? []).includes(parts.consumerId)) violations.push({ kind: 'unexpected_delivery', ...ids });
    if (item.tenantId !== receipt.tenantId) {
      violations.push({ kind: 'tenant_mismatch', ...ids, receiptTenantId: receipt.tenantId, ledgerTenantId: item.tenantId });
    }
    if (item.state === 'done' && typeof item.units !== 'number') violations.push({ kind: 'done_without_usage', ...ids });
    if (isStalled(item, now - graceMs, options.leasesAbandoned === true)) violations.push({ kind: 'stalled_delivery', ...ids });
  }

  // Only receipts received in the window own expected deliveries (one outside it is another window's).
  let expectedDeliveries = 0;
  let inGrace = 0;
  const missing: { receipt: EventItem; consumerId: string; pk: string }[] = [];
  for (const receipt of receipts) {
    for (const consumerId of receipt.consumers ?? []) {
      expectedDeliveries++;
      const pk = ledgerKey(receipt.source, receipt.eventId, consumerId);
      if (!ledgerKeys.has(pk)) missing.push({ receipt, consumerId, pk });
    }
  }
  // A ledger item whose receivedAt copy is off (outside the window) still counts as present.
  const strays = await ledgerItemsByKey<Pick<LedgerItem, 'pk'>>(
    deps,
    missing.map((m) => m.pk),
    { projection: 'pk' },
  );
  for (const m of missing) {
    if (strays.has(m.pk)) continue;
    if (m.receipt.receivedAt > now - graceMs) {
      inGrace++;
      continue;
    }
    violations.push({
      kind: 'missing_delivery',
      source: m.receipt.source,
      eventId: m.receipt.eventId,
      consumerId: m.consumerId,
      ledgerKey: m.pk,
    });
  }

  violations.sort((a, b) => a.kind.localeCompare(b.kind) || a.ledgerKey.localeCompare(b.ledgerKey));
  const counts = Object.fromEntries(VIOLATION_KINDS.map((k) => [k, 0])) as Record<ViolationKind, number>;
  for (const v of violations) counts[v.kind]++;
  return {
    from: window.from,
    to: window.to,
    graceMs,
    checkedAt: now,
    receipts: receipts.length,
    ledgerItems: ledgerItems.length,
    expectedDeliveries,
    inGrace,
    quarantined,
    violations,
    counts,
  };
}

/**
 * The latest whole window (aligned to `windowMs`, e.g. the hour) that closed at least `graceMs` ago.
 * Run every `windowMs`, consecutive runs cover consecutive windows, and every receipt in a window is
 * past the grace period when its window is checked, so nothing is skipped as "still in flight".
 */
export function lastClosedWindow(now: number, options: { windowMs?: number; graceMs?: number } = {}): Window {
  const windowMs = options.windowMs ?? HOUR_MS;
  const graceMs = options.graceMs ?? DEFAULT_GRACE_MS;
  const to = Math.floor((now - graceMs) / windowMs) * windowMs;
  return { from: to - windowMs, to };
}

/**
 * A delivery nobody is working on any more: its lease ended, or its last failure was recorded,
 * before `cutoff`. This is what a worker that crashed or timed out on its last allowed receive leaves
 * behind (SQS moved the message to the DLQ, but the runtime never got to mark it quarantined).
 */
function isStalled(item: LedgerItem, cutoff: number, leasesAbandoned: boolean): boolean {
  if (item.state === 'leased') return leasesAbandoned || (item.leaseUntil ?? 0) < cutoff;
  if (item.state === 'retrying') {
    const lastFailure = item.errors?.at(-1)?.at ?? item.receivedAt;
    return lastFailure < cutoff;
  }
  return false;
}
