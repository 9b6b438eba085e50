/**
 * Square's webhook subscriptions (`/v2/webhooks/subscriptions`, Square's Webhook Subscriptions API):
 *
 *   list    GET    /v2/webhooks/subscriptions?include_disabled=true (`subscriptions`, `cursor`)
 *   create  POST   /v2/webhooks/subscriptions { idempotency_key, subscription } -> `subscription`,
 *                  whose `signature_key` is the secret Square signs with (the provider issues it)
 *   update  PUT    /v2/webhooks/subscriptions/{id} { subscription: notification_url, event_types, enabled }
 *   remove  DELETE /v2/webhooks/subscriptions/{id}
 *
 * Every request carries `Square-Version`: the subscription's payload shape follows the version it
 * was created with, so one pinned version keeps what we register and what intake reads in step.
 * Plain fetch through ops/connect/http.ts: no Square SDK in the main package.
 */
import { randomUUID } from 'node:crypto';
import { SQUARE_API_VERSION } from '../../core/endpoint-drift';
import { EVERY_EVENT_TYPE, GAP_APIS } from '../../core/gaps';
import { UsageError } from '../errors';
import { requestJson } from './http';
import type { EndpointInput, ProviderRegistrar, RegistrarOptions, RemoteEndpoint } from './types';

/** Square's largest page of subscriptions. */
const SQUARE_PAGE_LIMIT = 100;
/** Pages of subscriptions read at most: an application has a handful; a cursor that never ends stops here. */
const SQUARE_MAX_PAGES = 20;
/** The subscription's name as the Developer Console shows it (Square allows 64 characters). */
const SQUARE_SUBSCRIPTION_NAME = 'hookledger';

/** A webhook subscription as Square's API returns it (the fields read here). */
interface SquareSubscription {
  readonly id: string;
  readonly name?: string;
  readonly enabled?: boolean;
  readonly event_types?: readonly string[];
  readonly notification_url?: string;
  readonly signature_key?: string;
}

export const squareRegistrar = (options: RegistrarOptions): ProviderRegistrar => new SquareRegistrar(options);

class SquareRegistrar implements ProviderRegistrar {
  readonly provider = 'square';
  readonly secretFrom = 'provider' as const;
  private readonly options: RegistrarOptions & { readonly baseUrl: string };

  constructor(options: RegistrarOptions) {
    this.options = { ...options, baseUrl: options.baseUrl ?? GAP_APIS.square.baseUrl };
  }

  async list(): Promise<RemoteEndpoint[]> {
    const endpoints: RemoteEndpoint[] = [];
    const followed = new Set<string>();
    let cursor: string | undefined;
    for (let page = 0; page < SQUARE_MAX_PAGES; page++) {
      const query = new URLSearchParams({ include_disabled: 'true', limit: String(SQUARE_PAGE_LIMIT), ...(cursor ? { cursor } : {}) });
      const answer = (await this.request('GET', `/v2/webhooks/subscriptions?${query}`)) as {
        subscriptions?: SquareSubscription[];
        cursor?: string;
      };
      endpoints.push(...(answer.subscriptions ?? []).map(endpointOf));
      cursor = answer.cursor || undefined;
      // A cursor already followed would list the same page again.
      if (cursor === undefined || followed.has(cursor)) return endpoints;
      followed.add(cursor);
    }
    return endpoints;
  }

  async create(input: EndpointInput): Promise<{ endpoint: RemoteEndpoint; secret?: string }> {
    const answer = (await this.request('POST', '/v2/webhooks/subscriptions', {
      // A retried create (after a 429) is the same create: Square answers it once.
      idempotency_key: randomUUID(),
      subscription: {
        name: SQUARE_SUBSCRIPTION_NAME,
        enabled: true,
        event_types: namedEventTypes(input.events),
        notification_url: input.url,
        api_version: SQUARE_API_VERSION,
      },
    })) as { subscription: SquareSubscription };
    const secret = answer.subscription.signature_key;
    return { endpoint: endpointOf(answer.subscription), ...(secret ? { secret } : {}) };
  }

  async update(id: string, input: EndpointInput): Promise<{ endpoint: RemoteEndpoint }> {
    const answer = (await this.request('PUT', `/v2/webhooks/subscriptions/${encodeURIComponent(id)}`, {
      subscription: { enabled: true, event_types: namedEventTypes(input.events), notification_url: input.url },
    })) as { subscription: SquareSubscription };
    return { endpoint: endpointOf(answer.subscription) };
  }

  async remove(id: string): Promise<void> {
    await this.request('DELETE', `/v2/webhooks/subscriptions/${encodeURIComponent(id)}`);
  }

  private request(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, body?: unknown): Promise<unknown> {
    return requestJson('square', this.options, {
      method,
      path,
      headers: { 'Square-Version': SQUARE_API_VERSION },
      ...(body !== undefined ? { body } : {}),
    });
  }
}

function endpointOf(s: SquareSubscription): RemoteEndpoint {
  return { id: s.id, url: s.notification_url ?? '', enabled: s.enabled ?? false, events: [...(s.event_types ?? [])] };
}

/** Square subscribes to named event types only: `*` is refused here, before any request. */
function namedEventTypes(events: readonly string[]): string[] {
  if (events.includes(EVERY_EVENT_TYPE)) {
    throw new UsageError('square subscribes a webhook to named event types only: list them in the source\'s events (no "*")');
  }
  return [...events];
}
