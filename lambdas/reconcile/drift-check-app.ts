/**
 * The scheduled provider drift check of one source (lib/constructs/gap-check.ts, beside its gap
 * check): the provider's webhook endpoints (adapters/provider-endpoints.ts) against the source's
 * webhook URL and `events`, compared as `hookledger sources remote` compares them
 * (core/endpoint-drift.ts). Each difference is logged; `ProviderDrift{Stack, Source}` is their number
 * (0 when the endpoint matches). A provider failure (the key unset or refused, the provider
 * unreachable) is logged with the source and thrown: the invocation fails and its errors alarm sees it.
 */
import { ProviderApiError, ProviderAuthError } from '../../adapters/provider-events';
import { type DesiredEndpoint, type Drift, describeDrift, driftOf, findEndpoint, type RemoteEndpoint } from '../../core/endpoint-drift';
import type { Logger } from '../shared/logger';

export interface DriftReport {
  readonly source: string;
  readonly expected: DesiredEndpoint;
  /** The source's endpoint as the provider lists it; absent when it has none. */
  readonly endpoint?: RemoteEndpoint;
  readonly drift: readonly Drift[];
}

export interface DriftCheckDeps {
  readonly sourceId: string;
  /** The source's webhook URL on this stack and its `events`. */
  readonly expected: DesiredEndpoint;
  /** The provider's endpoints (listProviderEndpoints in the Lambda). */
  readonly list: () => Promise<RemoteEndpoint[]>;
  /** createProviderDriftMetric (lambdas/shared/metrics.ts) in the Lambda. */
  readonly publish: (differences: number) => void;
  readonly logger: Pick<Logger, 'info' | 'warn' | 'error'>;
}

export function createDriftCheckHandler(deps: DriftCheckDeps) {
  return async (): Promise<DriftReport> => {
    const endpoints = await deps.list().catch((error: unknown) => {
      deps.logger.error('drift check failed', {
        source: deps.sourceId,
        ...(error instanceof ProviderApiError || error instanceof ProviderAuthError ? { api: error.api } : {}),
        error: error instanceof Error ? error.message : String(error),
      });
      throw error;
    });
    const endpoint = findEndpoint(endpoints, deps.expected.url);
    const drift = driftOf(endpoint, deps.expected);
    for (const d of drift) {
      deps.logger.warn('provider endpoint drifted', {
        source: deps.sourceId,
        kind: d.kind,
        detail: describeDrift(d),
        ...(endpoint ? { endpoint_id: endpoint.id } : {}),
      });
    }
    deps.publish(drift.length);
    deps.logger.info('drift check', {
      source: deps.sourceId,
      endpoint_id: endpoint?.id ?? null,
      endpoints_listed: endpoints.length,
      drift: drift.length,
    });
    return { source: deps.sourceId, expected: deps.expected, ...(endpoint ? { endpoint } : {}), drift };
  };
}
