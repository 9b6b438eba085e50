/**
 * The scheduled provider gap check of one source (lib/constructs/gap-check.ts): each run checks the
 * last closed window (`gapCheck.everyHours` long, ending GAP_GRACE_MS ago so the provider's first
 * retries have landed), logs each missing event by ids, and publishes `ProviderGaps{Stack, Source}`:
 * the events still missing after the run (recovered ones do not count). A provider or storage failure
 * (a list that stopped paging too: ProviderPagingError, naming the provider and the page) is logged
 * with the source and window, and thrown: the invocation fails and the function's errors alarm sees it.
 */
import { ProviderApiError, ProviderPagingError } from '../../adapters/provider-events';
import { type GapReport, unrecovered } from '../../core/gaps';
import { HOUR_MS } from '../../core/model';
import type { Logger } from '../shared/logger';
import { lastClosedWindow } from './reconcile';

/** How long after its end a window is checked: providers' first retries land within minutes. */
export const GAP_GRACE_MS = HOUR_MS;

/** An explicit window for a manual run (`aws lambda invoke --payload '{"from":"...","to":"..."}'`); scheduled events carry none. */
export interface GapCheckInput {
  readonly from?: string;
  readonly to?: string;
}

export interface GapCheckHandlerDeps {
  readonly sourceId: string;
  /** The window length (`gapCheck.everyHours`), also the schedule's rate. */
  readonly windowMs: number;
  /** The check itself (provider-gaps.ts `checkGaps`, with the recovery when `gapCheck.recover`). */
  readonly run: (window: { readonly from: number; readonly to: number }) => Promise<GapReport>;
  /** createProviderGapsMetric (lambdas/shared/metrics.ts) in the Lambda. */
  readonly publish: (unrecovered: number) => void;
  readonly logger: Pick<Logger, 'info' | 'warn' | 'error'>;
  readonly clock?: () => number;
}

export function createGapCheckHandler(deps: GapCheckHandlerDeps) {
  const clock = deps.clock ?? Date.now;
  return async (input: GapCheckInput = {}): Promise<GapReport> => {
    const window =
      input.from !== undefined && input.to !== undefined
        ? { from: Date.parse(input.from), to: Date.parse(input.to) }
        : lastClosedWindow(clock(), { windowMs: deps.windowMs, graceMs: GAP_GRACE_MS });
    if (!(window.from < window.to)) throw new RangeError(`from must be before to, got ${input.from} .. ${input.to}`);
    const report = await deps.run(window).catch((error: unknown) => {
      deps.logger.error('gap check failed', {
        source: deps.sourceId,
        from: new Date(window.from).toISOString(),
        to: new Date(window.to).toISOString(),
        ...(error instanceof ProviderApiError ? { api: error.api } : {}),
        ...(error instanceof ProviderPagingError ? { page: error.page } : {}),
        error: error instanceof Error ? error.message : String(error),
      });
      throw error;
    });
    const recovery = new Map(report.recovered.map((r) => [r.eventId, r]));
    for (const m of report.missing) {
      const r = recovery.get(m.eventId);
      deps.logger.warn('provider event missing', {
        source: deps.sourceId,
        event_id: m.eventId,
        type: m.type,
        created_at: m.createdAt,
        recovery: r ? r.outcome : 'none',
        ...(r?.reason ? { reason: r.reason } : {}),
      });
    }
    const left = unrecovered(report);
    deps.publish(left);
    deps.logger.info('gap check', {
      source: deps.sourceId,
      from: report.from,
      to: report.to,
      provider_events: report.providerEvents,
      skipped: report.skipped.events,
      missing: report.missing.length,
      unrecovered: left,
    });
    return report;
  };
}
