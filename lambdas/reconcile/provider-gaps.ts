/**
 * The provider gap check: the provider's own list of the events it sent in [from, to) (by their
 * creation time, adapters/provider-events.ts) against the source's receipts (the window index,
 * adapters/window-index.ts). An event the provider lists and no receipt names is missing: lost before
 * intake (intake down or refusing longer than the provider retries). With `recover`, each missing
 * event is handed to `recover` (gap-recovery.ts: intake's own write path, or the provider's
 * redelivery); the CLI loads that lazily, so checking alone never loads intake.
 *
 * Only the event types the source declares (`events`) are compared and handed to recovery: a provider's
 * list holds every type (a Stripe account's), and its endpoint gets only those it is subscribed to. The
 * others are counted as skipped in the report, never recorded.
 *
 * Receipts are read from `from - RECEIPT_SKEW_MS` until now: a webhook arrives after its event was
 * created (retries last days), and a recovered receipt is stamped when it was recovered.
 */
import type { ListedEvent, ProviderEventsPort } from '../../adapters/provider-events';
import type { ScanDeps } from '../../adapters/table-scan';
import { WindowReader } from '../../adapters/window-index';
import type { SourceConfig } from '../../core/config/schema';
import { type GapReport, type RecoveredEvent, receivesType } from '../../core/gaps';

/** Provider clocks and ours may differ by this much: receipts this long before `from` still count. */
export const RECEIPT_SKEW_MS = 5 * 60_000;

export interface GapCheckDeps extends ScanDeps {
  readonly provider: ProviderEventsPort;
  readonly clock?: () => number;
}

export interface GapCheckOptions {
  readonly source: SourceConfig;
  readonly from: number;
  readonly to: number;
  /** Recovers the missing events (gap-recovery.ts); absent: report only. */
  readonly recover?: (missing: readonly ListedEvent[]) => Promise<RecoveredEvent[]>;
}

export async function checkGaps(deps: GapCheckDeps, options: GapCheckOptions): Promise<GapReport> {
  const { source, from, to } = options;
  const listed: ListedEvent[] = [];
  const skippedTypes = new Set<string>();
  let skipped = 0;
  for (const event of await deps.provider.list({ from, to })) {
    if (receivesType(source, event.type)) {
      listed.push(event);
    } else {
      skipped++;
      skippedTypes.add(event.type);
    }
  }
  const now = (deps.clock ?? Date.now)();
  const reader = new WindowReader(deps);
  const receipts = await reader.receipts({
    window: { from: from - RECEIPT_SKEW_MS, to: Math.max(now, to) + RECEIPT_SKEW_MS },
    source: source.id,
  });
  const received = new Set(receipts.map((r) => r.eventId));
  const missing = listed.filter((e) => !received.has(e.eventId));
  const recovered = missing.length > 0 && options.recover ? await options.recover(missing) : [];
  return {
    source: source.id,
    api: deps.provider.api,
    from: new Date(from).toISOString(),
    to: new Date(to).toISOString(),
    providerEvents: listed.length,
    skipped: { events: skipped, types: [...skippedTypes].sort() },
    missing: missing.map((e) => ({ eventId: e.eventId, type: e.type, createdAt: new Date(e.createdAt).toISOString() })),
    recovered,
  };
}
