/**
 * The providers' lists of webhook endpoints, read only, for the scheduled ProviderDrift check
 * (lambdas/reconcile/drift-check-handler.ts); `hookledger sources connect | remote` read and write them
 * through ops/connect's registrars. Plain fetch with the bearer key, every page:
 *
 *   stripe  GET /v1/webhook_endpoints (`has_more`, `starting_after`); `status` enabled | disabled
 *   github  GET /<repos/o/r | orgs/o>/hooks (Link rel="next"); `active`, `last_response` as the status
 *   square  GET /v2/webhooks/subscriptions?include_disabled=true (`cursor`), with Square-Version
 *   paddle  GET /notification-settings (`meta.pagination.next`); url destinations only
 *
 * 401 is a `ProviderAuthError` naming where the credential lives, never its value; 403 says the
 * permission to read webhook endpoints is missing; a 429 is waited out for its Retry-After a few times.
 */
import { type RemoteEndpoint, SQUARE_API_VERSION } from '../core/endpoint-drift';
import { GAP_APIS, type GapApi } from '../core/gaps';
import { PaddleTokenRefusedError, ProviderApiError, ProviderAuthError, retryAfterMs } from './provider-events';

export interface ProviderEndpointsOptions {
  readonly api: GapApi;
  readonly apiKey: string;
  /** Where the credential lives, for messages (`the secret <arn>`). Never its value. */
  readonly credential: string;
  /** @default - the provider's (core/gaps.ts) */
  readonly baseUrl?: string;
  /** GitHub: where the hooks are, `repos/<owner>/<repo>` or `orgs/<org>` (`gapCheck.hook` without `/hooks/<id>`). */
  readonly scope?: string;
  readonly sleep?: (ms: number) => Promise<void>;
}

/** Pages read at most: a provider account has a handful of endpoints; a list that never ends stops here. */
const MAX_PAGES = 20;
/** 429s waited out per request before the run fails (the next scheduled run tries again). */
const MAX_RATE_LIMIT_RETRIES = 3;
/** The longest Retry-After waited within a run. */
const MAX_RETRY_AFTER_MS = 60_000;
const REQUEST_TIMEOUT_MS = 30_000;

/** One page: its endpoints and the URL of the next, if any. */
type PageReader = (body: unknown, headers: Headers, baseUrl: string) => { endpoints: RemoteEndpoint[]; next?: string };

/** Every webhook endpoint the provider lists for this credential (and GitHub scope). */
export async function listProviderEndpoints(options: ProviderEndpointsOptions): Promise<RemoteEndpoint[]> {
  const baseUrl = (options.baseUrl ?? GAP_APIS[options.api].baseUrl).replace(/\/+$/, '');
  const { first, read } = LISTINGS[options.api](options, baseUrl);
  const endpoints: RemoteEndpoint[] = [];
  const followed = new Set<string>();
  let url: string | undefined = first;
  for (let page = 0; url !== undefined && page < MAX_PAGES; page++) {
    if (new URL(url).origin !== new URL(baseUrl).origin) {
      throw new ProviderApiError(options.api, `refused to follow a page link to another origin (${new URL(url).origin})`);
    }
    followed.add(url);
    const { body, headers } = await getJson(options, url);
    const out = read(body, headers, baseUrl);
    endpoints.push(...out.endpoints);
    url = out.next !== undefined && !followed.has(out.next) ? out.next : undefined;
  }
  return endpoints;
}

const LISTINGS: Record<GapApi, (options: ProviderEndpointsOptions, baseUrl: string) => { first: string; read: PageReader }> = {
  stripe: (_, baseUrl) => ({
    first: `${baseUrl}/v1/webhook_endpoints?limit=100`,
    read: (body) => {
      const page = body as { data: { id: string; url: string; status: string; enabled_events: string[] }[]; has_more: boolean };
      const last = page.data.at(-1);
      return {
        endpoints: page.data.map((e) => ({ id: e.id, url: e.url, enabled: e.status === 'enabled', events: e.enabled_events })),
        ...(page.has_more && last
          ? { next: `${baseUrl}/v1/webhook_endpoints?limit=100&starting_after=${encodeURIComponent(last.id)}` }
          : {}),
      };
    },
  }),
  github: (options, baseUrl) => {
    if (!options.scope) throw new ProviderApiError('github', 'no repository or organization to list hooks of (gapCheck.hook)');
    return {
      first: `${baseUrl}/${options.scope}/hooks?per_page=100`,
      read: (body, headers) => ({
        endpoints: (body as GithubHook[]).map(githubEndpoint),
        ...nextLink(headers.get('link')),
      }),
    };
  },
  square: (_, baseUrl) => {
    const pageUrl = (cursor?: string) =>
      `${baseUrl}/v2/webhooks/subscriptions?${new URLSearchParams({ include_disabled: 'true', limit: '100', ...(cursor ? { cursor } : {}) })}`;
    return {
      first: pageUrl(),
      read: (body) => {
        const page = body as { subscriptions?: SquareSubscription[]; cursor?: string };
        return {
          endpoints: (page.subscriptions ?? []).map((s) => ({
            id: s.id,
            url: s.notification_url ?? '',
            enabled: s.enabled ?? false,
            events: s.event_types ?? [],
          })),
          ...(page.cursor ? { next: pageUrl(page.cursor) } : {}),
        };
      },
    };
  },
  paddle: (_, baseUrl) => ({
    first: `${baseUrl}/notification-settings?per_page=200`,
    read: (body) => {
      const page = body as { data: PaddleSetting[]; meta?: { pagination?: { next?: string; has_more?: boolean } } };
      return {
        endpoints: page.data
          .filter((s) => s.type === 'url')
          .map((s) => ({ id: s.id, url: s.destination, enabled: s.active, events: s.subscribed_events.map((e) => e.name) })),
        ...(page.meta?.pagination?.has_more && page.meta.pagination.next ? { next: page.meta.pagination.next } : {}),
      };
    },
  }),
};

interface GithubHook {
  readonly id: number;
  readonly active: boolean;
  readonly events: string[];
  readonly config: { readonly url?: string };
  readonly last_response?: { readonly code: number | null; readonly status: string | null };
}

interface SquareSubscription {
  readonly id: string;
  readonly enabled?: boolean;
  readonly event_types?: string[];
  readonly notification_url?: string;
}

interface PaddleSetting {
  readonly id: string;
  readonly type: 'url' | 'email';
  readonly destination: string;
  readonly active: boolean;
  readonly subscribed_events: readonly { readonly name: string }[];
}

function githubEndpoint(hook: GithubHook): RemoteEndpoint {
  const last = hook.last_response;
  const status = last?.status ? `${last.status}${last.code ? ` (${last.code})` : ''}` : undefined;
  return { id: String(hook.id), url: hook.config.url ?? '', enabled: hook.active, events: hook.events, ...(status ? { status } : {}) };
}

function nextLink(link: string | null): { next?: string } {
  const next = link?.split(',').find((part) => /rel="next"/.test(part));
  const url = next?.match(/<([^>]+)>/)?.[1];
  return url ? { next: url } : {};
}

async function getJson(options: ProviderEndpointsOptions, url: string): Promise<{ body: unknown; headers: Headers }> {
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  for (let attempt = 0; ; attempt++) {
    let response: Response;
    try {
      response = await fetch(url, { headers: requestHeaders(options), signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
    } catch (error) {
      throw new ProviderApiError(options.api, `unreachable (${error instanceof Error ? error.message : String(error)})`);
    }
    const text = await response.text();
    if (response.ok) {
      try {
        return { body: JSON.parse(text) as unknown, headers: response.headers };
      } catch {
        throw new ProviderApiError(options.api, `answered ${response.status} with a body that is not JSON`, response.status);
      }
    }
    const wait = rateLimitWait(options.api, response, attempt);
    if (wait === undefined) throw listFailure(options, response.status, text);
    await sleep(wait);
  }
}

/** How long to wait before asking again, or undefined when the answer is no rate limit (or one to give up on). */
function rateLimitWait(api: GapApi, response: Response, attempt: number): number | undefined {
  const limited =
    response.status === 429 || (api === 'github' && response.status === 403 && response.headers.get('x-ratelimit-remaining') === '0');
  if (!limited) return undefined;
  const wait = retryAfterMs(response.headers.get('retry-after')) ?? 1000 * 2 ** attempt;
  if (attempt >= MAX_RATE_LIMIT_RETRIES || wait > MAX_RETRY_AFTER_MS) {
    throw new ProviderApiError(api, `rate limited (429) with Retry-After ${Math.ceil(wait / 1000)} s; the next run tries again`, 429);
  }
  return wait;
}

function requestHeaders(options: ProviderEndpointsOptions): Record<string, string> {
  return {
    authorization: `Bearer ${options.apiKey}`,
    accept: options.api === 'github' ? 'application/vnd.github+json' : 'application/json',
    // GitHub refuses a request without a User-Agent.
    'user-agent': 'hookledger-drift-check',
    ...(options.api === 'square' ? { 'Square-Version': SQUARE_API_VERSION } : {}),
  };
}

function listFailure(options: ProviderEndpointsOptions, status: number, text: string): Error {
  // Paddle answers a wrong or revoked key with 403 invalid_token: the credential refused, not a permission missing.
  if (options.api === 'paddle' && status === 403 && text.includes('"invalid_token"'))
    return new PaddleTokenRefusedError(options.credential);
  if (status === 401) {
    return new ProviderAuthError(options.api, 401, options.credential);
  }
  if (status === 403) {
    return new ProviderApiError(
      options.api,
      `refused the request (403): the credential ${options.credential} lacks the permission to read webhook endpoints (see docs/providers/${options.api}.md)`,
      403,
    );
  }
  return new ProviderApiError(options.api, `${status}: ${text.slice(0, 200)}`, status);
}
