/**
 * Recovers the events a provider lists and no receipt names (provider-gaps.ts), through intake's own
 * write path: the same steps `lambdas/ingest/app.ts` runs after verification, called as it calls them
 * (`readBody` → `attribute` → `checkKey` → `claimBody` → `record`, lambdas/recording/record.ts): the
 * source's attribution, the key registry, replay protection by body, the routing to the delivery set,
 * ordering keys and the one conditional write of receipt and payload. Nothing is verified (no webhook
 * came): the receipt records `origin: 'provider_api'` instead of a secret version. A webhook of the
 * same event arriving later is then a duplicate.
 *
 * Where the provider lists deliveries but not bodies (GitHub), it is asked to re-send instead, and the
 * signed webhook goes through intake like any other.
 *
 * Only the event types the source declares by name (`events`) are ever recorded: the check hands over
 * only those (provider-gaps.ts), and each body's own type, as the source's attribution reads it, is
 * checked again here, so an event the endpoint never receives is never routed or charged.
 */
import type { IntakeStore } from '../../adapters/event-stores';
import { payloadHmac as keyedHash } from '../../adapters/payload-hash';
import type { ListedEvent, ProviderEventsPort } from '../../adapters/provider-events';
import type { HookledgerConfig, SourceConfig } from '../../core/config/schema';
import { ConfigurationError, HookledgerError } from '../../core/errors';
import { PROVIDER_API_ORIGIN, type RecoveredEvent, recoverableTypes } from '../../core/gaps';
import { InputError } from '../recording/parse';
import { attribute, checkKey, claimBody, readBody, record } from '../recording/record';
import type { IngestRequest } from '../recording/request';

export interface GapRecoveryDeps {
  readonly config: HookledgerConfig;
  readonly store: IntakeStore;
  readonly payloadHashKey: () => Promise<Buffer>;
  readonly provider: ProviderEventsPort;
  readonly clock?: () => number;
}

/** Recovery asked of a source that does not declare its event types by name (the configuration and the CLI refuse it first). */
export class UndeclaredEventsError extends ConfigurationError {
  override readonly name = 'UndeclaredEventsError';
}

/** One listed event that cannot be recovered: the reason is recorded as the event's `failed` outcome. */
export class GapRecoveryError extends HookledgerError {
  override readonly name = 'GapRecoveryError';
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
  const types = recoverableTypes(source);
  if (!types) {
    throw new UndeclaredEventsError(
      `source "${source.id}" does not declare the event types its endpoint receives by name (events): recovery would record every type the provider lists`,
    );
  }
  const declared: ReadonlySet<string> = types;
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
      if (!deps.provider.redeliver) throw new GapRecoveryError(`the ${deps.provider.api} API returned neither a body nor a redelivery`);
      // The provider re-sends what it sent this endpoint; still, only a declared type is asked for.
      if (!declared.has(event.type)) throw new GapRecoveryError(notDeclared(event.type));
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
      throw new GapRecoveryError(
        `the source's attribution reads event id ${requested.eventId}, the ${deps.provider.api} API lists ${event.eventId}`,
      );
    }
    // The type routing and billing will see: the body's, as the source reads it, not the list's.
    if (!declared.has(requested.eventType)) throw new GapRecoveryError(notDeclared(requested.eventType));
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

const notDeclared = (type: string) => `type "${type}" is not among the source's events (the types its endpoint receives): not recorded`;
