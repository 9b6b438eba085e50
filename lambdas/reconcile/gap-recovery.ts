/**
 * Recovers the events a provider lists and no receipt names (provider-gaps.ts), through intake's own
 * write path: the same steps `lambdas/ingest/app.ts` runs after verification, called as it calls them
 * (`readBody` → `attribute` → `checkKey` → `claimBody` → `record`, lambdas/ingest/record.ts): the
 * source's attribution, the key registry, replay protection by body, the routing to the delivery set,
 * ordering keys and the one conditional write of receipt and payload. Nothing is verified (no webhook
 * came): the receipt records `origin: 'provider_api'` instead of a secret version. A webhook of the
 * same event arriving later is then a duplicate.
 *
 * Where the provider lists deliveries but not bodies (GitHub), it is asked to re-send instead, and the
 * signed webhook goes through intake like any other.
 */
import type { IntakeStore } from '../../adapters/event-stores';
import { payloadHmac as keyedHash } from '../../adapters/payload-hash';
import type { ListedEvent, ProviderEventsPort } from '../../adapters/provider-events';
import type { HookledgerConfig, SourceConfig } from '../../core/config/schema';
import { PROVIDER_API_ORIGIN, type RecoveredEvent } from '../../core/gaps';
import { InputError } from '../ingest/parse';
import { attribute, checkKey, claimBody, readBody, record } from '../ingest/record';
import type { IngestRequest } from '../ingest/request';

export interface GapRecoveryDeps {
  readonly config: HookledgerConfig;
  readonly store: IntakeStore;
  readonly payloadHashKey: () => Promise<Buffer>;
  readonly provider: ProviderEventsPort;
  readonly clock?: () => number;
}

/** intake's store, writing `origin: 'provider_api'` on the receipt in place of the secret version no webhook gave. */
export function providerApiStore(store: IntakeStore): IntakeStore {
  return {
    ...store,
    recordEvent: ({ secretVersion: _none, ...event }, rawBody) => store.recordEvent({ ...event, origin: PROVIDER_API_ORIGIN }, rawBody),
  };
}

export function gapRecovery(deps: GapRecoveryDeps, source: SourceConfig) {
  const clock = deps.clock ?? Date.now;
  return async (missing: readonly ListedEvent[]): Promise<RecoveredEvent[]> => {
    const out: RecoveredEvent[] = [];
    for (const event of missing) {
      try {
        out.push(await recoverOne(event));
      } catch (error) {
        // The reason only (a code or the provider's short message), never a body or a credential.
        const reason =
          error instanceof InputError ? `${error.code}: ${error.message}` : error instanceof Error ? error.message : String(error);
        out.push({ eventId: event.eventId, outcome: 'failed', reason });
      }
    }
    return out;
  };

  async function recoverOne(event: ListedEvent): Promise<RecoveredEvent> {
    if (!event.body) {
      if (!deps.provider.redeliver) throw new Error(`the ${deps.provider.api} API returned neither a body nor a redelivery`);
      await deps.provider.redeliver(event);
      return { eventId: event.eventId, outcome: 'redelivery_requested' };
    }
    const request: IngestRequest = {
      source,
      method: 'POST',
      headers: {},
      rawBody: event.body,
      query: new URLSearchParams(),
      url: '',
      receivedAt: clock(),
    };
    const body = readBody(request);
    const payloadHmac = keyedHash(await deps.payloadHashKey(), request.rawBody);
    const requested = attribute(request, body, payloadHmac);
    if (requested.eventId !== event.eventId) {
      // The source reads its event id elsewhere than the provider's list names it: recording would make a second event.
      throw new Error(`the source's attribution reads event id ${requested.eventId}, the ${deps.provider.api} API lists ${event.eventId}`);
    }
    await checkKey(request, requested, deps.store);
    const attribution = await claimBody(request, requested, payloadHmac, deps.store);
    // secretVersion is what record() takes from a verified webhook; the store writes the origin instead.
    const recorded = await record(
      request,
      { attribution, body, payloadHmac, secretVersion: 'current' },
      deps.config,
      providerApiStore(deps.store),
    );
    return { eventId: event.eventId, outcome: recorded.outcome };
  }
}
