/**
 * Activity: a window cut into buckets, per source the events received in each, per consumer the
 * deliveries done, retrying and quarantined in each and their latency (received -> acknowledged,
 * p50 and p99). The console's Activity view draws it.
 *
 * Attribution is status's and usage's: a delivery counts in the bucket of its event's receipt
 * (receivedAt), read through the window index (adapters/window-index.ts): the window's receipts,
 * then their ledger rows by key. So the window's totals are `hookledger status`'s done, retrying and
 * quarantined for the same window, `usage`'s done deliveries summed over tenants, and `sources`'s
 * events; the cost follows the window, never the history kept.
 *
 * Duplicates: a request answered as a duplicate (`duplicate`, `duplicate_body`, `duplicate_conflict`:
 * an event id already recorded) stores no receipt; intake adds 1 to its source's counter for that UTC
 * minute instead (adapters/receipts.ts `countDuplicate`, `dup#` items: one per source and hour). A
 * minute counts in the bucket its start falls in: exact whenever the window starts on a whole minute,
 * as the presets do (their buckets are whole minutes too). A from/to that cuts a minute counts all of
 * that minute's duplicates (the first minute in bucket 0), so nothing of the window is left out.
 * Read by key, one item per source and hour of the window, on AWS and locally alike.
 */
import { type DuplicateCount, type DuplicateReadCounters, readDuplicateCounts } from '../adapters/duplicate-counts';
import type { Window } from '../adapters/table-scan';
import { type WindowReadCounters, WindowReader } from '../adapters/window-index';
import { DAY_MS, LEDGER_CONSUMER_SEPARATOR, ledgerKey } from '../core/model';
import type { ConfigDeps, Progress, StoreDeps } from './deps';
import { UsageError } from './errors';
import { iso } from './time';

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;

/** The windows the view offers, each ending now. */
export const ACTIVITY_PRESETS = { '1h': HOUR_MS, '24h': DAY_MS, '7d': 7 * DAY_MS } as const;
export type ActivityPreset = keyof typeof ACTIVITY_PRESETS;

/** Bucket sizes a window is cut into: the smallest that gives at most MAX_BUCKETS buckets. */
export const BUCKET_SIZES_MS: readonly number[] = [
  MINUTE_MS,
  5 * MINUTE_MS,
  15 * MINUTE_MS,
  30 * MINUTE_MS,
  HOUR_MS,
  3 * HOUR_MS,
  6 * HOUR_MS,
  12 * HOUR_MS,
  DAY_MS,
];
/** Bars a chart can show side by side and stay readable. */
export const MAX_BUCKETS = 60;

/**
 * A preset's window: its span, ending at the end of `now`'s minute, so that every bucket starts on a
 * whole minute and holds whole minutes of duplicate counts.
 */
export function activityPresetWindow(preset: ActivityPreset, now: number): Window {
  const to = Math.floor(now / MINUTE_MS) * MINUTE_MS + MINUTE_MS;
  return { from: to - ACTIVITY_PRESETS[preset], to };
}

/** The smallest bucket size giving at most MAX_BUCKETS buckets (a day each beyond that). */
export function bucketSizeFor(window: Window): number {
  const span = window.to - window.from;
  return BUCKET_SIZES_MS.find((size) => Math.ceil(span / size) <= MAX_BUCKETS) ?? (BUCKET_SIZES_MS.at(-1) as number);
}

/** The bucket `at` falls in, counted from the window's start; -1 outside [from, to). */
export function bucketIndex(at: number, window: Window, bucketMs: number): number {
  if (!(at >= window.from && at < window.to)) return -1;
  return Math.floor((at - window.from) / bucketMs);
}

/** The bucket of a minute's duplicate counts: the one it starts in, bucket 0 for a minute begun before the window; -1 outside. */
export function minuteBucketIndex(minute: number, window: Window, bucketMs: number): number {
  return minute + MINUTE_MS > window.from ? bucketIndex(Math.max(minute, window.from), window, bucketMs) : -1;
}

/** The nearest-rank percentile (`p` in 0..100) of the values, in any order; undefined for none. */
export function percentile(values: readonly number[], p: number): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(rank, sorted.length) - 1];
}

export interface SourceActivity {
  readonly source: string;
  /** Events received per bucket. */
  readonly received: number[];
  readonly total: number;
  /** Requests answered as duplicates per bucket (by the minute intake counted them in). */
  readonly duplicates: number[];
  readonly duplicateTotal: number;
}

export interface LatencySummary {
  readonly p50?: number;
  readonly p99?: number;
  /** Done deliveries with an acknowledgement time. */
  readonly samples: number;
}

export interface ConsumerActivity {
  readonly consumer: string;
  readonly done: number[];
  readonly retrying: number[];
  readonly quarantined: number[];
  readonly totals: { readonly done: number; readonly retrying: number; readonly quarantined: number };
  /** Per bucket, received -> acknowledged of its done deliveries; null where none was done. */
  readonly p50: (number | null)[];
  readonly p99: (number | null)[];
  /** Over the window. */
  readonly latencyMs: LatencySummary;
}

export interface ActivityTally {
  readonly sources: SourceActivity[];
  readonly consumers: ConsumerActivity[];
}

export interface ActivityReport extends ActivityTally {
  readonly from: number;
  readonly to: number;
  readonly bucketMs: number;
  /** Each bucket's start. */
  readonly buckets: number[];
  /** What the window index read, and the duplicate counts' hour items. */
  readonly read: Readonly<WindowReadCounters & DuplicateReadCounters>;
}

/** What the tally is given: the window cut, and the configured ids (rows of others are not counted, as in status). */
export interface TallyShape {
  readonly window: Window;
  readonly bucketMs: number;
  readonly sources: readonly string[];
  readonly consumers: readonly string[];
}

type ActivityReceipt = {
  readonly source: string;
  readonly eventId: string;
  readonly receivedAt: number;
  readonly consumers?: readonly string[];
};
type ActivityRow = { readonly pk: string; readonly consumerId?: string; readonly state?: string; readonly ackAt?: number };

/**
 * The window's receipts, ledger rows and duplicate counts per bucket (pure: the unit tests give it
 * rows). A minute's duplicates count in the bucket the minute starts in; a minute begun before the
 * window's start, in bucket 0.
 */
export function tallyActivity(
  shape: TallyShape,
  receipts: readonly ActivityReceipt[],
  rows: readonly ActivityRow[],
  duplicateCounts: readonly DuplicateCount[] = [],
): ActivityTally {
  const n = Math.ceil((shape.window.to - shape.window.from) / shape.bucketMs);
  const zeros = () => new Array<number>(n).fill(0);
  const sources = new Map(shape.sources.map((id) => [id, { received: zeros(), duplicates: zeros() }]));
  const receivedAt = new Map<string, number>();
  for (const r of receipts) {
    const i = bucketIndex(r.receivedAt, shape.window, shape.bucketMs);
    if (i < 0) continue;
    const counts = sources.get(r.source)?.received;
    if (counts) counts[i] = (counts[i] ?? 0) + 1;
    for (const c of r.consumers ?? []) receivedAt.set(ledgerKey(r.source, r.eventId, c), r.receivedAt);
  }
  for (const d of duplicateCounts) {
    const i = minuteBucketIndex(d.minute, shape.window, shape.bucketMs);
    const counts = sources.get(d.source)?.duplicates;
    if (i >= 0 && counts) counts[i] = (counts[i] ?? 0) + d.count;
  }
  const consumers = new Map(
    shape.consumers.map((id) => [id, { done: zeros(), retrying: zeros(), quarantined: zeros(), latency: zeros().map((): number[] => []) }]),
  );
  for (const row of rows) {
    const c = consumers.get(row.consumerId ?? row.pk.slice(row.pk.lastIndexOf(LEDGER_CONSUMER_SEPARATOR) + 1));
    const at = receivedAt.get(row.pk);
    if (!c || at === undefined) continue;
    const i = bucketIndex(at, shape.window, shape.bucketMs);
    if (row.state === 'done' || row.state === 'retrying' || row.state === 'quarantined') c[row.state][i] = (c[row.state][i] ?? 0) + 1;
    if (row.state === 'done' && typeof row.ackAt === 'number') c.latency[i]?.push(row.ackAt - at);
  }
  return {
    sources: [...sources].map(([source, { received, duplicates }]) => ({
      source,
      received,
      total: sum(received),
      duplicates,
      duplicateTotal: sum(duplicates),
    })),
    consumers: [...consumers].map(([consumer, c]) => consumerActivity(consumer, c)),
  };
}

function consumerActivity(
  consumer: string,
  c: { done: number[]; retrying: number[]; quarantined: number[]; latency: number[][] },
): ConsumerActivity {
  const all = c.latency.flat();
  const p50 = percentile(all, 50);
  const p99 = percentile(all, 99);
  return {
    consumer,
    done: c.done,
    retrying: c.retrying,
    quarantined: c.quarantined,
    totals: { done: sum(c.done), retrying: sum(c.retrying), quarantined: sum(c.quarantined) },
    p50: c.latency.map((values) => percentile(values, 50) ?? null),
    p99: c.latency.map((values) => percentile(values, 99) ?? null),
    latencyMs: { ...(p50 !== undefined ? { p50 } : {}), ...(p99 !== undefined ? { p99 } : {}), samples: all.length },
  };
}

export interface ActivityRequest extends Window {
  readonly reader?: WindowReader;
  readonly onProgress?: Progress;
}

export async function activity(deps: StoreDeps & ConfigDeps, request: ActivityRequest): Promise<ActivityReport> {
  if (!(request.from < request.to)) {
    throw new UsageError(`from must be before to (got ${iso(request.from)} .. ${iso(request.to)})`);
  }
  const window = { from: request.from, to: request.to };
  const bucketMs = bucketSizeFor(window);
  const reader = request.reader ?? new WindowReader(deps);
  const sources = deps.config.sources.map((s) => s.id);
  const duplicateRead: DuplicateReadCounters = { duplicateKeysRequested: 0, duplicateItemsRead: 0 };
  const [receipts, duplicates] = await Promise.all([
    reader.receipts({ window }, request.onProgress),
    readDuplicateCounts(deps, sources, window, duplicateRead),
  ]);
  const rows = await reader.ledgerRows<ActivityRow & { pk: string }>(receipts, {
    projection: 'pk, consumerId, #state, ackAt',
    names: { '#state': 'state' },
  });
  const tally = tallyActivity(
    { window, bucketMs, sources, consumers: deps.config.consumers.map((c) => c.id) },
    receipts,
    [...rows.values()],
    duplicates,
  );
  return {
    ...window,
    bucketMs,
    buckets: Array.from({ length: Math.ceil((window.to - window.from) / bucketMs) }, (_, i) => window.from + i * bucketMs),
    ...tally,
    read: { ...reader.counters, ...duplicateRead },
  };
}

const sum = (values: readonly number[]) => values.reduce((n, v) => n + v, 0);
