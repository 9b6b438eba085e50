/**
 * The duplicate counts intake writes (`Receipts.countDuplicate`: one `dup#<source>#<hour>` item per
 * source and UTC hour, a counter per minute), read back for a window by key: one item per source and
 * hour the window touches, so the cost follows the window. Activity sums them per bucket.
 */
import { type DuplicateCountItem, duplicateCountHours, duplicateCountKey, MINUTE_MS } from '../core/model';
import { batchGet, type ScanDeps, type Window } from './table-scan';

/** The duplicates intake answered for one source in one minute (`minute`: its start, epoch ms). */
export interface DuplicateCount {
  readonly source: string;
  readonly minute: number;
  readonly count: number;
}

export interface DuplicateReadCounters {
  /** Hour items asked for: sources x hours the window touches. */
  duplicateKeysRequested: number;
  /** Hour items that exist (an hour without duplicates has none). */
  duplicateItemsRead: number;
}

/** Every minute with duplicates in the hours [from, to) touches, per source; the caller cuts them to the window. */
export async function readDuplicateCounts(
  deps: ScanDeps,
  sources: readonly string[],
  window: Window,
  counters: DuplicateReadCounters = { duplicateKeysRequested: 0, duplicateItemsRead: 0 },
): Promise<DuplicateCount[]> {
  const keys = sources.flatMap((source) => duplicateCountHours(window.from, window.to).map((hour) => duplicateCountKey(source, hour)));
  const items = await batchGet<DuplicateCountItem>(deps.ddb, deps.tables.events, keys);
  counters.duplicateKeysRequested += keys.length;
  counters.duplicateItemsRead += items.size;
  const counts: DuplicateCount[] = [];
  for (const item of items.values()) {
    for (const [name, value] of Object.entries(item)) {
      const minute = /^m(\d\d)$/.exec(name);
      if (minute && typeof value === 'number' && value > 0) {
        counts.push({ source: item.source, minute: item.hourStart + Number(minute[1]) * MINUTE_MS, count: value });
      }
    }
  }
  return counts;
}
