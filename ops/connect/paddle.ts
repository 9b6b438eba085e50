/**
 * Paddle's notification settings (a "notification destination" in the dashboard, Paddle Billing API):
 *
 *   list    GET    /notification-settings (`data`; `meta.pagination.next` while `has_more`)
 *   create  POST   /notification-settings { description, type: url, destination, subscribed_events }
 *                  -> `data.endpoint_secret_key`, the secret Paddle signs with (the provider issues it)
 *   update  PATCH  /notification-settings/{id} { destination, subscribed_events, active }
 *   remove  DELETE /notification-settings/{id} (204)
 *
 * Plain fetch with the 429 loop of ops/connect/http.ts. Paddle's errors are read here: a field it
 * refuses is named in `error.errors[]` (`destination: ...`), which the reason quotes; and a wrong or
 * revoked key is `403 invalid_token`, the credential refused rather than a permission missing.
 */
import { PaddleTokenRefusedError, ProviderApiError } from '../../adapters/provider-events';
import { EVERY_EVENT_TYPE, GAP_APIS } from '../../core/gaps';
import { UsageError } from '../errors';
import { CONNECT_REQUEST_TIMEOUT_MS, providerFailure, withRateLimitRetries } from './http';
import type { EndpointInput, ProviderRegistrar, RegistrarOptions, RemoteEndpoint } from './types';

/** Pages of notification settings read at most: an account has a handful; a list that never ends stops here. */
const PADDLE_MAX_PAGES = 20;
/** Paddle's largest page of notification settings. */
const PADDLE_PAGE_SIZE = 200;
/** The destination's description as the dashboard shows it. */
const PADDLE_DESCRIPTION = 'hookledger';

/** A notification setting as Paddle's API returns it (the fields read here). */
interface PaddleSetting {
  readonly id: string;
  readonly type: 'url' | 'email';
  readonly destination: string;
  readonly active: boolean;
  /** Event type objects (`name`, `description`, `group`, `available_versions`), though a request sends names. */
  readonly subscribed_events: readonly { readonly name: string }[];
  readonly endpoint_secret_key?: string;
}

interface PaddleErrorBody {
  readonly error?: { readonly code?: string; readonly detail?: string; readonly errors?: readonly { field?: string; message?: string }[] };
}

export const paddleRegistrar = (options: RegistrarOptions): ProviderRegistrar => new PaddleRegistrar(options);

class PaddleRegistrar implements ProviderRegistrar {
  readonly provider = 'paddle';
  readonly secretFrom = 'provider' as const;
  private readonly baseUrl: string;

  constructor(private readonly options: RegistrarOptions) {
    this.baseUrl = (options.baseUrl ?? GAP_APIS.paddle.baseUrl).replace(/\/+$/, '');
  }

  async list(): Promise<RemoteEndpoint[]> {
    const endpoints: RemoteEndpoint[] = [];
    const followed = new Set<string>();
    let url: string | undefined = `${this.baseUrl}/notification-settings?per_page=${PADDLE_PAGE_SIZE}`;
    for (let page = 0; url !== undefined && page < PADDLE_MAX_PAGES; page++) {
      followed.add(url);
      const answer = (await this.request('GET', url)) as {
        data: PaddleSetting[];
        meta?: { pagination?: { next?: string; has_more?: boolean } };
      };
      // Email destinations are no webhook endpoint.
      endpoints.push(...answer.data.filter((s) => s.type === 'url').map(endpointOf));
      const next = answer.meta?.pagination?.has_more ? answer.meta.pagination.next : undefined;
      url = next !== undefined && !followed.has(next) ? next : undefined;
    }
    return endpoints;
  }

  async create(input: EndpointInput): Promise<{ endpoint: RemoteEndpoint; secret?: string }> {
    const answer = (await this.request('POST', `${this.baseUrl}/notification-settings`, {
      description: PADDLE_DESCRIPTION,
      type: 'url',
      destination: input.url,
      subscribed_events: namedEventTypes(input.events),
    })) as { data: PaddleSetting };
    const secret = answer.data.endpoint_secret_key;
    return { endpoint: endpointOf(answer.data), ...(secret ? { secret } : {}) };
  }

  async update(id: string, input: EndpointInput): Promise<{ endpoint: RemoteEndpoint }> {
    const answer = (await this.request('PATCH', `${this.baseUrl}/notification-settings/${encodeURIComponent(id)}`, {
      destination: input.url,
      subscribed_events: namedEventTypes(input.events),
      active: true,
    })) as { data: PaddleSetting };
    return { endpoint: endpointOf(answer.data) };
  }

  async remove(id: string): Promise<void> {
    await this.request('DELETE', `${this.baseUrl}/notification-settings/${encodeURIComponent(id)}`);
  }

  /** One JSON request with the bearer key, 429s waited out; page links are followed on the configured origin only. */
  private request(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, body?: unknown): Promise<unknown> {
    if (new URL(url).origin !== new URL(this.baseUrl).origin) {
      throw new ProviderApiError('paddle', `refused to follow a page link to another origin (${new URL(url).origin})`);
    }
    return withRateLimitRetries('paddle', this.options, async () => {
      let response: Response;
      try {
        response = await fetch(url, {
          method,
          headers: {
            authorization: `Bearer ${this.options.apiKey}`,
            accept: 'application/json',
            ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
          },
          ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
          signal: AbortSignal.timeout(CONNECT_REQUEST_TIMEOUT_MS),
        });
      } catch (error) {
        throw new ProviderApiError('paddle', `unreachable (${error instanceof Error ? error.message : String(error)})`);
      }
      const text = await response.text();
      const parsed = parseJson(text);
      if (response.ok) {
        if (text !== '' && parsed === undefined)
          throw new ProviderApiError('paddle', `answered ${response.status} with a body that is not JSON`);
        return parsed;
      }
      throw paddleFailure(this.options.credential, response, parsed as PaddleErrorBody | undefined, text);
    });
  }
}

/** Paddle's error as ops/connect/http.ts's typed errors, its reason with each refused field. */
function paddleFailure(credential: string, response: Response, body: PaddleErrorBody | undefined, text: string) {
  const error = body?.error;
  const fields = (error?.errors ?? []).map((e) => [e.field, e.message].filter(Boolean).join(': ')).filter((e) => e !== '');
  const reason = [error?.detail, ...fields].filter(Boolean).join(' ') || text || response.statusText;
  // A wrong or revoked key: the credential refused, not a permission missing (which is `forbidden`).
  if (response.status === 403 && error?.code === 'invalid_token') return new PaddleTokenRefusedError(credential);
  return providerFailure('paddle', credential, { status: response.status, retryAfter: response.headers.get('retry-after'), reason });
}

function parseJson(text: string): unknown {
  try {
    return text === '' ? undefined : (JSON.parse(text) as unknown);
  } catch {
    return undefined;
  }
}

function endpointOf(s: PaddleSetting): RemoteEndpoint {
  return { id: s.id, url: s.destination, enabled: s.active, events: s.subscribed_events.map((e) => e.name) };
}

/** Paddle subscribes to named event types only: `*` is refused here, before any request. */
function namedEventTypes(events: readonly string[]): string[] {
  if (events.includes(EVERY_EVENT_TYPE)) {
    throw new UsageError('paddle subscribes a destination to named event types only: list them in the source\'s events (no "*")');
  }
  return [...events];
}
