/**
 * `hookledger gaps`: the provider's list of sent events against the source's receipts
 * (lambdas/reconcile/provider-gaps.ts, the check the scheduled run makes). `--recover` records what is
 * missing as the scheduled run does (lambdas/reconcile/gap-recovery.ts: intake's write steps from
 * lambdas/recording/, or the provider's redelivery).
 */
import { eventStores, intakeStore } from '../adapters/event-stores';
import { ProviderApiError, ProviderAuthError, providerEvents } from '../adapters/provider-events';
import type { HookledgerConfig, SourceConfig } from '../core/config/schema';
import { EVERY_EVENT_TYPE, type GapReport, recoverableTypes } from '../core/gaps';
import { gapRecovery } from '../lambdas/reconcile/gap-recovery';
import { checkGaps } from '../lambdas/reconcile/provider-gaps';
import { OperationFailedError, UsageError } from './errors';
import type { Target } from './target';

export interface GapsOptions {
  readonly source: string;
  readonly from: number;
  readonly to: number;
  readonly recover: boolean;
  readonly clock?: () => number;
  /** Told each 429 waited out (the CLI prints a line on stderr). */
  readonly onRateLimited?: (waitMs: number) => void;
}

/** The source's gap check settings, or a usage error saying what to add. */
export function gapCheckOf(config: HookledgerConfig, sourceId: string): SourceConfig & { gapCheck: NonNullable<SourceConfig['gapCheck']> } {
  const source = config.sources.find((s) => s.id === sourceId);
  if (!source) throw new UsageError(`unknown source "${sourceId}"; configured: ${config.sources.map((s) => s.id).join(', ')}`);
  if (!source.gapCheck) {
    const with_ = config.sources.filter((s) => s.gapCheck).map((s) => s.id);
    throw new UsageError(
      `source "${sourceId}" has no gapCheck; add gapCheck: { api: 'stripe' | 'github' | 'paddle' | 'square' } to it in the configuration` +
        (with_.length > 0 ? ` (sources with one: ${with_.join(', ')})` : ''),
    );
  }
  return source as SourceConfig & { gapCheck: NonNullable<SourceConfig['gapCheck']> };
}

/**
 * `--recover` records what the provider lists as received: refused (a usage error, before anything is
 * connected) unless the source declares the event types its endpoint receives, by name.
 */
export function requireRecoverable(source: SourceConfig & { gapCheck: NonNullable<SourceConfig['gapCheck']> }): void {
  if (recoverableTypes(source)) return;
  const why = `--recover records what the ${source.gapCheck.api} API lists as if source "${source.id}" had received it, and the list holds every event type`;
  throw new UsageError(
    source.events?.includes(EVERY_EVENT_TYPE)
      ? `${why}: the source declares events ["*"]; list the types its endpoint receives by name in the configuration`
      : `${why}: the source declares no events; add events: ['invoice.paid', ...] (the types its endpoint receives) to it in the configuration`,
  );
}

export async function gaps(target: Target, config: HookledgerConfig, options: GapsOptions): Promise<GapReport> {
  const source = gapCheckOf(config, options.source);
  if (options.recover) requireRecoverable(source);
  const { gapCheck } = source;
  const credential = target.apiKeyLocation(source.id);
  const provider = providerEvents({
    api: gapCheck.api,
    apiKey: await target.providerApiKey(source.id),
    credential,
    ...(gapCheck.baseUrl ? { baseUrl: gapCheck.baseUrl } : {}),
    ...(gapCheck.hook ? { hook: gapCheck.hook } : {}),
    ...(gapCheck.destination ? { destination: gapCheck.destination } : {}),
    maxPages: gapCheck.maxPages,
    maxEvents: gapCheck.maxEvents,
    ...(options.onRateLimited ? { onRateLimited: options.onRateLimited } : {}),
  });
  const deps = { ddb: target.ddb, tables: target.tables, provider, ...(options.clock ? { clock: options.clock } : {}) };
  let recover: Parameters<typeof checkGaps>[1]['recover'];
  if (options.recover) {
    // As intake builds its store: hot tenants' receipts spread over their window-index shards.
    const stores = eventStores({
      client: target.ddb,
      tableName: target.tables.events,
      shardsOf: (tenantId) => config.windowIndex.hotTenants[tenantId] ?? 1,
      // A body over the threshold goes to the payload bucket, as intake stores it.
      inlineMaxBytes: config.payloads.inlineMaxBytes,
      ...(target.payloadBucket ? { blobs: target.payloadBucket } : {}),
    });
    recover = gapRecovery({ config, store: intakeStore(stores), payloadHashKey: () => target.payloadHashKey(), provider }, source);
  }
  try {
    return await checkGaps(deps, { source, from: options.from, to: options.to, ...(recover ? { recover } : {}) });
  } catch (error) {
    if (error instanceof ProviderAuthError || error instanceof ProviderApiError) {
      throw new OperationFailedError(error.message, { cause: error });
    }
    throw error;
  }
}
