/**
 * Reconcile: compares the receipts of a window with their ledger items and names every violation by
 * its ids. Read-only. Shared by the scheduled Lambda (handler.ts) and `hookledger reconcile`.
 *
 *   missing_delivery     an expected consumer has no ledger item at all, and the receipt is older
 *                        than the grace period (younger ones may simply still be in flight)
 *   unexpected_delivery  a ledger item for a consumer that is not in the receipt's delivery set
 *   done_without_usage   a done ledger item without units (a usage row that was never written)
 *   tenant_mismatch      the ledger item's tenant differs from the tenant captured at intake
 *   usage_without_event  a ledger item whose receipt does not exist (scan mode only: an index of
 *                        receipts cannot name a row that no receipt names; `--scan` reads both tables)
 *
 * Two ways to read the window. The default reads the window index (adapters/window-index.ts):
 * the window's receipts, then their ledger rows by key (the delivery set plus every configured
 * consumer, so unexpected_delivery is found), in pages that can stop and resume (`reconcilePages`).
 * Its cost follows the window, not the history kept. `scan: true` scans both tables (the audit of all
 * history that also finds usage_without_event).
 *
 * Quarantined deliveries are not violations (they are parked in the DLQ on purpose); they are counted.
 */

import {
  eventStoreItemsByKey,
  ledgerItemsByKey,
  type Progress,
  type ScanDeps,
  scanLedger,
  scanReceipts,
  type Window,
} from '../../adapters/table-scan';
import { type IndexedReceipt, WindowReader } from '../../adapters/window-index';
import { WindowError } from '../../core/errors';
import { type EventItem, eventKey, HOUR_MS, type LedgerItem, ledgerKey, MINUTE_MS, parseLedgerKey } from '../../core/model';

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
  /** Violations counted in `counts` but not listed (a paged run keeps at most MAX_TALLY_VIOLATIONS). */
  readonly violationsNotListed?: number;
}

export interface ReconcileOptions extends Window {
  readonly graceMs?: number;
  /**
   * Every lease counts as ended, whatever its leaseUntil: nobody holds one any more (the local stack
   * just started, so the process whose workers held them is gone). Default false.
   */
  readonly leasesAbandoned?: boolean;
  readonly onProgress?: Progress;
  /**
   * Scan both tables instead of reading the window index: reads all history (cost grows with it),
   * and is the only way to find usage_without_event. Default false.
   */
  readonly scan?: boolean;
  /**
   * Every configured consumer id: the window mode also looks up these consumers' rows of each
   * receipt, so a row outside its delivery set is found (unexpected_delivery). Default: none (only
   * the delivery set's rows are read).
   */
  readonly consumers?: readonly string[];
}

export interface ReconcileDeps extends ScanDeps {
  readonly clock?: () => number;
  /** The window reader (its counters say what a run read). Default: a new one per call. */
  readonly reader?: WindowReader;
}

/** What a window's pages found so far; a checkpoint carries it from one run to the next. */
export interface ReconcileTally {
  receipts: number;
  ledgerItems: number;
  expectedDeliveries: number;
  inGrace: number;
  quarantined: number;
  violations: Violation[];
  counts: Record<ViolationKind, number>;
  /** Violations counted but not kept in `violations` (beyond `maxListed`). */
  violationsNotListed: number;
  /** How many violations `violations` keeps: a tally saved in a checkpoint keeps MAX_TALLY_VIOLATIONS. */
  maxListed: number;
}

/** Where the next page starts: the index partition (`<tenant>#<day>[#<shard>]`) and the key after the last item read. */
export interface ReconcileCursor {
  readonly partition: string;
  readonly lastKey?: Record<string, unknown>;
}

/** Violations a tally lists (a checkpoint item must stay far below 400 KB); the rest are counted. */
export const MAX_TALLY_VIOLATIONS = 1000;
/** Receipts per page: one Query page, then its ledger rows in BatchGets of 100 keys. */
export const DEFAULT_PAGE_SIZE = 200;

/** JSON has no Infinity: a tally that lists every violation says so with -1. */
export function emptyTally(maxListed = -1): ReconcileTally {
  return {
    maxListed,
    receipts: 0,
    ledgerItems: 0,
    expectedDeliveries: 0,
    inGrace: 0,
    quarantined: 0,
    violations: [],
    counts: Object.fromEntries(VIOLATION_KINDS.map((k) => [k, 0])) as Record<ViolationKind, number>,
    violationsNotListed: 0,
  };
}

export interface PageControl {
  /** Resume here (from a checkpoint). Default: the window's first partition. */
  readonly start?: ReconcileCursor;
  /** Asked before every page but the first: true stops the run there (the time budget). Default: never. */
  readonly shouldStop?: () => boolean;
  /** @default DEFAULT_PAGE_SIZE */
  readonly pageSize?: number;
}

export interface PagesResult {
  /** Absent when the window is complete. */
  readonly cursor?: ReconcileCursor;
  readonly pages: number;
  /** The violations these pages found (not the earlier runs'), in the order found. */
  readonly found: Violation[];
}

/**
 * Reconciles the window's receipts page by page from `control.start`, adding to `tally`, until the
 * window ends or `control.shouldStop()` says so; returns where to resume. A page is one Query page of
 * one tenant-day partition and the BatchGets of its receipts' ledger rows.
 */
export async function reconcilePages(
  deps: ReconcileDeps,
  options: ReconcileOptions,
  tally: ReconcileTally,
  control: PageControl = {},
): Promise<PagesResult> {
  const now = (deps.clock ?? Date.now)();
  const graceMs = checkOptions(options);
  const reader = deps.reader ?? new WindowReader(deps);
  const partitions = await reader.partitions({ from: options.from, to: options.to });
  let index = 0;
  let lastKey = control.start?.lastKey;
  if (control.start) {
    index = partitions.findIndex((p) => p.id === control.start?.partition);
    // The partition a checkpoint names is always listed again (the registry only grows); should it
    // not be, nothing of the window is skipped: start over.
    if (index < 0) {
      index = 0;
      lastKey = undefined;
    }
  }
  const found: Violation[] = [];
  let pages = 0;
  const keep = (v: Violation) => {
    found.push(v);
    tally.counts[v.kind]++;
    if (tally.maxListed < 0 || tally.violations.length < tally.maxListed) tally.violations.push(v);
    else tally.violationsNotListed++;
  };
  while (index < partitions.length) {
    const partition = partitions[index]!;
    // At least one page per call: a run always moves the window on, whatever its budget says.
    if (pages > 0 && control.shouldStop?.()) return { cursor: { partition: partition.id, ...(lastKey ? { lastKey } : {}) }, pages, found };
    const page = await reader.receiptPage(partition, {}, lastKey, control.pageSize ?? DEFAULT_PAGE_SIZE);
    await checkReceipts(reader, page.receipts, options, { now, graceMs, tally, keep });
    pages++;
    options.onProgress?.(tally.receipts, undefined);
    lastKey = page.lastKey;
    if (!lastKey) index++;
  }
  return { pages, found };
}

/** One page's receipts against their ledger rows (read by key). */
async function checkReceipts(
  reader: WindowReader,
  receipts: readonly IndexedReceipt[],
  options: ReconcileOptions,
  ctx: { now: number; graceMs: number; tally: ReconcileTally; keep: (v: Violation) => void },
): Promise<void> {
  const { tally, keep } = ctx;
  const rows = await reader.ledgerRows<LedgerItem>(receipts, { alsoConsumers: options.consumers });
  for (const receipt of receipts) {
    tally.receipts++;
    const expected = new Set(receipt.consumers ?? []);
    const consumers = new Set([...expected, ...(options.consumers ?? [])]);
    for (const consumerId of [...consumers].sort()) {
      const pk = ledgerKey(receipt.source, receipt.eventId, consumerId);
      const ids = { source: receipt.source, eventId: receipt.eventId, consumerId, ledgerKey: pk };
      const item = rows.get(pk);
      if (expected.has(consumerId)) tally.expectedDeliveries++;
      if (!item) {
        if (!expected.has(consumerId)) continue;
        if (receipt.receivedAt > ctx.now - ctx.graceMs) tally.inGrace++;
        else keep({ kind: 'missing_delivery', ...ids });
        continue;
      }
      tally.ledgerItems++;
      if (item.state === 'quarantined') tally.quarantined++;
      if (!expected.has(consumerId)) keep({ kind: 'unexpected_delivery', ...ids });
      if (item.tenantId !== receipt.tenantId) {
        keep({ kind: 'tenant_mismatch', ...ids, receiptTenantId: receipt.tenantId, ledgerTenantId: item.tenantId });
      }
      if (item.state === 'done' && typeof item.units !== 'number') keep({ kind: 'done_without_usage', ...ids });
      if (isStalled(item, ctx.now - ctx.graceMs, options.leasesAbandoned === true)) keep({ kind: 'stalled_delivery', ...ids });
    }
  }
}

/** The report of a tally (complete or not): violations in a stable order. */
export function reportOf(tally: ReconcileTally, options: ReconcileOptions, checkedAt: number): ReconcileReport {
  const violations = [...tally.violations].sort((a, b) => a.kind.localeCompare(b.kind) || a.ledgerKey.localeCompare(b.ledgerKey));
  return {
    from: options.from,
    to: options.to,
    graceMs: options.graceMs ?? DEFAULT_GRACE_MS,
    checkedAt,
    receipts: tally.receipts,
    ledgerItems: tally.ledgerItems,
    expectedDeliveries: tally.expectedDeliveries,
    inGrace: tally.inGrace,
    quarantined: tally.quarantined,
    violations,
    counts: { ...tally.counts },
    ...(tally.violationsNotListed > 0 ? { violationsNotListed: tally.violationsNotListed } : {}),
  };
}

function checkOptions(options: ReconcileOptions): number {
  const graceMs = options.graceMs ?? DEFAULT_GRACE_MS;
  if (!(Number.isFinite(options.from) && Number.isFinite(options.to) && options.from < options.to)) {
    throw new ReconcileWindowError(
      `the window must have from < to, got from=${new Date(options.from).toISOString()} to=${new Date(options.to).toISOString()}`,
    );
  }
  if (!(graceMs >= 0)) throw new ReconcileWindowError(`grace must be >= 0 ms, got ${graceMs}`);
  return graceMs;
}

export class ReconcileWindowError extends WindowError {
  override readonly name = 'ReconcileWindowError';
}

/** The whole window in one call: the window index by default, both tables with `scan: true`. */
export async function reconcile(deps: ReconcileDeps, options: ReconcileOptions): Promise<ReconcileReport> {
  if (options.scan) return reconcileByScan(deps, options);
  const now = (deps.clock ?? Date.now)();
  checkOptions(options);
  const tally = emptyTally();
  await reconcilePages(deps, options, tally);
  return reportOf(tally, options, now);
}

/**
 * Scan mode: both tables read whole, filtered to the window (what every run did before the index).
 * The steps: scanWindow → receiptsByKey (with those of ledger rows whose receipt is outside the
 * window) → checkLedgerRows → checkExpectedDeliveries → the report.
 */
async function reconcileByScan(deps: ReconcileDeps, options: ReconcileOptions): Promise<ReconcileReport> {
  const now = (deps.clock ?? Date.now)();
  const graceMs = checkOptions(options);
  const window = { from: options.from, to: options.to };
  const cutoff = now - graceMs;
  const { receipts, ledgerItems } = await scanWindow(deps, window, options.onProgress);
  const receiptByKey = await receiptsByKey(deps, receipts, ledgerItems);
  const rows = checkLedgerRows(ledgerItems, receiptByKey, cutoff, options.leasesAbandoned === true);
  const expected = await checkExpectedDeliveries(deps, receipts, rows.ledgerKeys, cutoff);
  const violations = [...rows.violations, ...expected.missing];
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
    expectedDeliveries: expected.expectedDeliveries,
    inGrace: expected.inGrace,
    quarantined: rows.quarantined,
    violations,
    counts,
  };
}

/** Both tables scanned at once, filtered to the window; progress is the items read of both. */
async function scanWindow(
  deps: ReconcileDeps,
  window: Window,
  onProgress: Progress | undefined,
): Promise<{ receipts: EventItem[]; ledgerItems: LedgerItem[] }> {
  let receiptsRead = 0;
  let ledgerRead = 0;
  const progress = () => onProgress?.(receiptsRead + ledgerRead, undefined);
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
  return { receipts, ledgerItems };
}

/** The window's receipts by event key, and the receipts of its ledger rows whose receipt is outside it (looked up by key). */
async function receiptsByKey(
  deps: ReconcileDeps,
  receipts: readonly EventItem[],
  ledgerItems: readonly LedgerItem[],
): Promise<Map<string, EventItem>> {
  const receiptByKey = new Map<string, EventItem>();
  for (const receipt of receipts) receiptByKey.set(eventKey(receipt.source, receipt.eventId), receipt);
  const orphanKeys: string[] = [];
  for (const item of ledgerItems) {
    const parts = parseLedgerKey(item.pk);
    if (!parts) continue;
    const key = eventKey(parts.source, parts.eventId);
    if (!receiptByKey.has(key)) orphanKeys.push(key);
  }
  const outside = await eventStoreItemsByKey<EventItem>(deps, orphanKeys);
  for (const [key, receipt] of outside) if (receipt.kind === 'event') receiptByKey.set(key, receipt);
  return receiptByKey;
}

/** Each ledger row against its receipt: every violation a row can show, the quarantined count, and the keys read. */
function checkLedgerRows(
  ledgerItems: readonly LedgerItem[],
  receiptByKey: ReadonlyMap<string, EventItem>,
  cutoff: number,
  leasesAbandoned: boolean,
): { violations: Violation[]; quarantined: number; ledgerKeys: Set<string> } {
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
    if (isStalled(item, cutoff, leasesAbandoned)) violations.push({ kind: 'stalled_delivery', ...ids });
  }
  return { violations, quarantined, ledgerKeys };
}

/**
 * The deliveries the window's receipts expect (only receipts received in the window own expected
 * deliveries: one outside it is another window's) with no ledger row: in grace, or missing.
 */
async function checkExpectedDeliveries(
  deps: ReconcileDeps,
  receipts: readonly EventItem[],
  ledgerKeys: ReadonlySet<string>,
  cutoff: number,
): Promise<{ expectedDeliveries: number; inGrace: number; missing: Violation[] }> {
  let expectedDeliveries = 0;
  let inGrace = 0;
  const absent: { receipt: EventItem; consumerId: string; pk: string }[] = [];
  for (const receipt of receipts) {
    for (const consumerId of receipt.consumers ?? []) {
      expectedDeliveries++;
      const pk = ledgerKey(receipt.source, receipt.eventId, consumerId);
      if (!ledgerKeys.has(pk)) absent.push({ receipt, consumerId, pk });
    }
  }
  // A ledger item whose receivedAt copy is off (outside the window) still counts as present.
  const strays = await ledgerItemsByKey<Pick<LedgerItem, 'pk'>>(
    deps,
    absent.map((m) => m.pk),
    { projection: 'pk' },
  );
  const missing: Violation[] = [];
  for (const m of absent) {
    if (strays.has(m.pk)) continue;
    if (m.receipt.receivedAt > cutoff) {
      inGrace++;
      continue;
    }
    missing.push({
      kind: 'missing_delivery',
      source: m.receipt.source,
      eventId: m.receipt.eventId,
      consumerId: m.consumerId,
      ledgerKey: m.pk,
    });
  }
  return { expectedDeliveries, inGrace, missing };
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
export function isStalled(item: LedgerItem, cutoff: number, leasesAbandoned: boolean): boolean {
  if (item.state === 'leased') return leasesAbandoned || (item.leaseUntil ?? 0) < cutoff;
  if (item.state === 'retrying') {
    const lastFailure = item.errors?.at(-1)?.at ?? item.receivedAt;
    return lastFailure < cutoff;
  }
  return false;
}
