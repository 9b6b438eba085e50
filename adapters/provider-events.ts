/**
 * The providers' own lists of what they sent, for the gap check (`hookledger gaps`, core/gaps.ts):
 *
 *   stripe  GET /v1/events (created[gte|lt], starting_after), through the `stripe` SDK pointed at
 *           `baseUrl` (host, port, protocol); the event object is the webhook body.
 *   github  GET /<hook>/deliveries (cursor in the Link header) and POST .../deliveries/{id}/attempts
 *           (redelivery), through `@octokit/rest` with `baseUrl`; a delivery carries no body.
 *   paddle  GET /notifications (from, to, after; `meta.pagination.next`); a notification's `payload`
 *           is the webhook body. Plain fetch: the documented endpoint, no SDK in the main package.
 *   square  POST /v2/events (SearchEvents: created_at range, cursor); the event is the webhook body.
 *           Plain fetch, likewise.
 *
 * Every call is retried on 429 after the answer's Retry-After (seconds or an HTTP date), a few times;
 * 401 and 403 are a `ProviderAuthError` naming the credential by where it lives, never its value.
 *
 * Each run walks the pages through one `PageWalk`: events are kept once per id, and a list that does
 * not advance (a page of only events already seen that points to more, a next-page cursor already
 * followed) or goes on past `maxPages` pages or `maxEvents` events stops with a `ProviderPagingError`
 * naming the provider and the page. A misbehaving API or proxy answering the same page forever would
 * otherwise be paged without end, and its events held without end.
 */

import type { Octokit } from '@octokit/rest';
import { HookledgerError } from '../core/errors';
import { DEFAULT_GAP_MAX_EVENTS, DEFAULT_GAP_MAX_PAGES, GAP_APIS, type GapApi, type ProviderEvent } from '../core/gaps';
import { lazyOctokit, lazyStripe } from './provider-sdks';

/** An event as a provider's API lists it: the webhook body when the API returns it, else the delivery to re-send. */
export interface ListedEvent extends ProviderEvent {
  /** The webhook body's bytes, as the provider sends them (body recovery). */
  readonly body?: Buffer;
  /** The provider's delivery id to ask a redelivery of (redelivery recovery). */
  readonly deliveryId?: string;
}

export interface ProviderEventsPort {
  readonly api: GapApi;
  /** The events created in [from, to) (epoch ms), one per event id, oldest first. */
  list(window: { readonly from: number; readonly to: number }): Promise<ListedEvent[]>;
  /** Where the API re-sends instead of returning bodies (GitHub): asks it to re-send the event's delivery. */
  redeliver?(event: ListedEvent): Promise<void>;
}

export interface ProviderEventsOptions {
  readonly api: GapApi;
  readonly apiKey: string;
  /** Where the credential lives, for messages (`sources.stripe.apiKey in .hookledger/secrets.json`). Never its value. */
  readonly credential: string;
  /** @default - the provider's (core/gaps.ts) */
  readonly baseUrl?: string;
  /** GitHub: `repos/<owner>/<repo>/hooks/<id>` or `orgs/<org>/hooks/<id>`. */
  readonly hook?: string;
  /** Paddle: only this notification destination's notifications. */
  readonly destination?: string;
  /** 429s retried per call before giving up. @default 5 */
  readonly maxRateLimitRetries?: number;
  /** The longest Retry-After honoured; a longer one fails the run (the next run picks up). @default 120 s */
  readonly maxRetryAfterMs?: number;
  readonly sleep?: (ms: number) => Promise<void>;
  /** Told each 429 waited out: its Retry-After in ms. */
  readonly onRateLimited?: (waitMs: number) => void;
  /** Pages one run reads at most (`gapCheck.maxPages`). @default DEFAULT_GAP_MAX_PAGES (core/gaps.ts) */
  readonly maxPages?: number;
  /** Distinct events of the window one run holds at most (`gapCheck.maxEvents`). @default DEFAULT_GAP_MAX_EVENTS (core/gaps.ts) */
  readonly maxEvents?: number;
}

/** The provider refused the credential (401) or its scope (403). */
export class ProviderAuthError extends HookledgerError {
  override readonly name = 'ProviderAuthError';
  constructor(
    readonly api: GapApi,
    readonly status: number,
    readonly credential: string,
  ) {
    super(
      status === 401
        ? `the ${api} API refused the credential (401): check ${credential}`
        : `the ${api} API refused the request (403): the credential ${credential} lacks the permission to list events (see README "Provider gap check")`,
    );
  }
}

/**
 * Paddle's `403 invalid_token`: a wrong or revoked key, so the credential refused (a `ProviderAuthError`,
 * as a 401 is elsewhere) rather than a permission missing; its message names the status Paddle sent.
 */
export class PaddleTokenRefusedError extends ProviderAuthError {
  constructor(credential: string) {
    super('paddle', 403, credential);
    this.message = `the paddle API refused the credential (403 invalid_token): check ${credential}`;
  }
}

/** Any other failure of the provider's API (after the 429 retries), with its status when it answered. */
export class ProviderApiError extends HookledgerError {
  override readonly name: string = 'ProviderApiError';
  constructor(
    readonly api: GapApi,
    message: string,
    readonly status?: number,
  ) {
    super(`the ${api} API: ${message}`);
  }
}

/**
 * A run stopped paging: the list did not advance, or went on past the run's bounds. Nothing was
 * compared or recovered; the message names the provider, the page and what to change.
 */
export class ProviderPagingError extends ProviderApiError {
  override readonly name = 'ProviderPagingError';
  constructor(
    api: GapApi,
    /** The page (1-based) whose answer stopped the run: the number of pages read. */
    readonly page: number,
    reason: string,
  ) {
    super(api, `paging stopped at page ${page}: ${reason}`);
  }
}

/** The longest cursor quoted in an error: a misbehaving API's cursor may be anything. */
const QUOTED_CURSOR_CHARS = 80;

/**
 * One run's walk through a provider's pages. Memory stays bounded: the ids seen are at most
 * `maxPages` pages of them, the cursors followed at most `maxPages`, the events kept at most `maxEvents`.
 */
class PageWalk {
  private pages = 0;
  /** Every item id seen on a page (event or delivery ids, inside the window or not): what "new" means. */
  private readonly seen = new Set<string>();
  /** Each next-page cursor followed, and the page that gave it. */
  private readonly followed = new Map<string, number>();
  /** The window's events, one per event id. */
  private readonly events = new Map<string, ListedEvent>();
  private readonly maxPages: number;
  private readonly maxEvents: number;

  constructor(
    private readonly api: GapApi,
    options: Pick<ProviderEventsOptions, 'maxPages' | 'maxEvents'>,
  ) {
    this.maxPages = options.maxPages ?? DEFAULT_GAP_MAX_PAGES;
    this.maxEvents = options.maxEvents ?? DEFAULT_GAP_MAX_EVENTS;
  }

  /** Keeps the event unless one with its id is kept already (or `replace` says this one wins). */
  keep(event: ListedEvent, replace?: (kept: ListedEvent) => boolean): void {
    const kept = this.events.get(event.eventId);
    if (kept === undefined || replace?.(kept)) this.events.set(event.eventId, event);
  }

  /**
   * After each page: the ids of its items and the cursor it points to next (undefined: the list ended).
   * Throws when the run must stop; otherwise the caller requests the page `next` names.
   */
  read(ids: readonly string[], next: string | undefined): void {
    this.pages++;
    let fresh = 0;
    for (const id of ids) {
      if (this.seen.has(id)) continue;
      this.seen.add(id);
      fresh++;
    }
    if (this.events.size > this.maxEvents) {
      this.stop(
        `more than gapCheck.maxEvents (${this.maxEvents}) events in the window; check a shorter window (--from/--to) or raise gapCheck.maxEvents`,
      );
    }
    if (next === undefined) return;
    if (ids.length > 0 && fresh === 0)
      this.stop('every event on it was on an earlier page, yet it points to a next one: the list does not advance');
    const after = this.followed.get(next);
    if (after !== undefined) {
      const quoted = next.length > QUOTED_CURSOR_CHARS ? `${next.slice(0, QUOTED_CURSOR_CHARS)}...` : next;
      this.stop(`its next-page cursor "${quoted}" was already followed after page ${after}: the list does not advance`);
    }
    if (this.pages >= this.maxPages) {
      this.stop(
        `the list goes on past gapCheck.maxPages (${this.maxPages} pages per run); check a shorter window (--from/--to) or raise gapCheck.maxPages`,
      );
    }
    this.followed.set(next, this.pages);
  }

  /** The events kept, oldest first. */
  list(): ListedEvent[] {
    return sortOldestFirst([...this.events.values()]);
  }

  private stop(reason: string): never {
    throw new ProviderPagingError(this.api, this.pages, reason);
  }
}

/** A 429 seen by a client: waited out by `withRetries` for `retryAfterMs`; never leaves this module. */
class RateLimited extends HookledgerError {
  override readonly name = 'RateLimited';
  constructor(readonly retryAfterMs: number | undefined) {
    super('rate limited');
  }
}

export function providerEvents(options: ProviderEventsOptions): ProviderEventsPort {
  const baseUrl = (options.baseUrl ?? GAP_APIS[options.api].baseUrl).replace(/\/+$/, '');
  switch (options.api) {
    case 'stripe':
      return stripeEvents(options, baseUrl);
    case 'github':
      return githubDeliveries(options, baseUrl);
    case 'paddle':
      return paddleNotifications(options, baseUrl);
    case 'square':
      return squareEvents(options, baseUrl);
  }
}

/** Retry-After as ms: delta-seconds or an HTTP date; undefined when absent or unreadable. */
export function retryAfterMs(value: string | null | undefined, now = Date.now()): number | undefined {
  if (value === null || value === undefined || value.trim() === '') return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

async function withRetries<T>(options: ProviderEventsOptions, call: () => Promise<T>): Promise<T> {
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const max = options.maxRateLimitRetries ?? 5;
  const longest = options.maxRetryAfterMs ?? 120_000;
  for (let attempt = 0; ; attempt++) {
    try {
      return await call();
    } catch (error) {
      if (!(error instanceof RateLimited)) throw error;
      // Without a Retry-After: 1 s, 2 s, 4 s...
      const wait = error.retryAfterMs ?? 1000 * 2 ** attempt;
      if (attempt >= max) throw new ProviderApiError(options.api, `still rate limited (429) after ${max} retries; run again later`, 429);
      if (wait > longest) {
        throw new ProviderApiError(
          options.api,
          `rate limited (429) with Retry-After ${Math.ceil(wait / 1000)} s; run again after that`,
          429,
        );
      }
      options.onRateLimited?.(wait);
      await sleep(wait);
    }
  }
}

/** 401/403 and 429 by status; anything else a ProviderApiError with the provider's short message. */
function failure(options: ProviderEventsOptions, status: number, retryAfter: string | null | undefined, detail: string): Error {
  if (status === 429) return new RateLimited(retryAfterMs(retryAfter));
  if (status === 401 || status === 403) return new ProviderAuthError(options.api, status, options.credential);
  return new ProviderApiError(options.api, `${status}: ${detail.slice(0, 200)}`, status);
}

const sortOldestFirst = (events: ListedEvent[]) => events.sort((a, b) => a.createdAt - b.createdAt || a.eventId.localeCompare(b.eventId));

// --- Stripe ---------------------------------------------------------------------------------------

function stripeEvents(options: ProviderEventsOptions, baseUrl: string): ProviderEventsPort {
  const sdk = lazyStripe(options.apiKey, baseUrl);
  return {
    api: 'stripe',
    async list({ from, to }) {
      const walk = new PageWalk('stripe', options);
      let startingAfter: string | undefined;
      for (;;) {
        const { stripe, StripeError } = await sdk();
        const page = await withRetries(options, async () => {
          try {
            return await stripe.events.list({
              created: { gte: Math.floor(from / 1000), lt: Math.ceil(to / 1000) },
              limit: 100,
              ...(startingAfter ? { starting_after: startingAfter } : {}),
            });
          } catch (error) {
            if (error instanceof StripeError && error.statusCode !== undefined) {
              throw failure(options, error.statusCode, error.headers?.['retry-after'], error.message);
            }
            throw new ProviderApiError('stripe', error instanceof Error ? error.message : String(error));
          }
        });
        for (const event of page.data) {
          const createdAt = event.created * 1000;
          if (createdAt < from || createdAt >= to) continue;
          // Stripe sends the event object as the webhook body, pretty-printed with two spaces.
          walk.keep({ eventId: event.id, type: event.type, createdAt, body: Buffer.from(JSON.stringify(event, null, 2)) });
        }
        // The cursor is the page's last id: a page repeating itself repeats it.
        const last = page.data.at(-1);
        startingAfter = page.has_more && last ? last.id : undefined;
        walk.read(
          page.data.map((e) => e.id),
          startingAfter,
        );
        if (startingAfter === undefined) break;
      }
      return walk.list();
    },
  };
}

// --- GitHub ---------------------------------------------------------------------------------------

interface HookDelivery {
  readonly id: number;
  readonly guid: string;
  readonly delivered_at: string;
  readonly redelivery: boolean;
  readonly event: string;
  readonly action: string | null;
}

function githubDeliveries(options: ProviderEventsOptions, baseUrl: string): ProviderEventsPort {
  const hook = options.hook;
  if (!hook) throw new ProviderApiError('github', 'no hook configured (gapCheck.hook: repos/<owner>/<repo>/hooks/<id>)');
  const octokit = lazyOctokit(options.apiKey, baseUrl, 'hookledger-gap-check');
  const call = <T>(run: (sdk: Octokit) => Promise<T>) =>
    withRetries(options, async () => {
      try {
        return await run(await octokit());
      } catch (error) {
        const status = (error as { status?: number }).status;
        if (typeof status !== 'number') throw new ProviderApiError('github', error instanceof Error ? error.message : String(error));
        const headers = (error as { response?: { headers?: Record<string, string | undefined> } }).response?.headers ?? {};
        // GitHub answers a spent rate limit with 403 (or 429) and Retry-After or x-ratelimit-remaining: 0.
        if (status === 403 && (headers['retry-after'] !== undefined || headers['x-ratelimit-remaining'] === '0')) {
          throw new RateLimited(retryAfterMs(headers['retry-after']) ?? resetWait(headers['x-ratelimit-reset']));
        }
        throw failure(options, status, headers['retry-after'], error instanceof Error ? error.message : '');
      }
    });
  return {
    api: 'github',
    async list({ from, to }) {
      // Newest first; a redelivery repeats its event's guid. The latest delivery of each guid is the one to re-send.
      const walk = new PageWalk('github', options);
      let cursor: string | undefined;
      for (;;) {
        const response = await call((sdk) => sdk.request(`GET /${hook}/deliveries`, { per_page: 100, ...(cursor ? { cursor } : {}) }));
        const deliveries = response.data as HookDelivery[];
        let older = false;
        for (const d of deliveries) {
          const at = Date.parse(d.delivered_at);
          if (at < from) older = true;
          if (at < from || at >= to) continue;
          walk.keep({ eventId: d.guid, type: d.event, createdAt: at, deliveryId: String(d.id) }, (kept) => at > kept.createdAt);
        }
        // Deliveries, not events, are what a page lists: a redelivery is a new delivery id of an old guid.
        cursor = older || deliveries.length === 0 ? undefined : nextCursor(response.headers.link);
        walk.read(
          deliveries.map((d) => String(d.id)),
          cursor,
        );
        if (cursor === undefined) break;
      }
      return walk.list();
    },
    async redeliver(event) {
      if (!event.deliveryId) throw new ProviderApiError('github', `no delivery id for ${event.eventId}`);
      await call((sdk) => sdk.request(`POST /${hook}/deliveries/{delivery_id}/attempts`, { delivery_id: Number(event.deliveryId) }));
    },
  };
}

function resetWait(reset: string | undefined): number | undefined {
  if (reset === undefined || !/^\d+$/.test(reset)) return undefined;
  return Math.max(0, Number(reset) * 1000 - Date.now());
}

/** The `cursor` of the Link header's rel="next" URL. */
function nextCursor(link: string | undefined): string | undefined {
  const next = link?.split(',').find((part) => /rel="next"/.test(part));
  const url = next?.match(/<([^>]+)>/)?.[1];
  return url ? (new URL(url).searchParams.get('cursor') ?? undefined) : undefined;
}

// --- Paddle and Square (documented endpoints over fetch) ------------------------------------------

/** One JSON request with the bearer key; `next` URLs are followed only on the configured origin. */
async function requestJson(
  options: ProviderEventsOptions,
  baseUrl: string,
  url: string,
  init: { method: 'GET' | 'POST'; body?: unknown },
): Promise<unknown> {
  if (new URL(url).origin !== new URL(baseUrl).origin) {
    throw new ProviderApiError(options.api, `refused to follow a page link to another origin (${new URL(url).origin})`);
  }
  return withRetries(options, async () => {
    let response: Response;
    try {
      response = await fetch(url, {
        method: init.method,
        headers: {
          authorization: `Bearer ${options.apiKey}`,
          accept: 'application/json',
          ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
        signal: AbortSignal.timeout(30_000),
      });
    } catch (error) {
      throw new ProviderApiError(options.api, `unreachable (${error instanceof Error ? error.message : String(error)})`);
    }
    const text = await response.text();
    if (!response.ok) throw failure(options, response.status, response.headers.get('retry-after'), text);
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new ProviderApiError(options.api, `answered ${response.status} with a body that is not JSON`, response.status);
    }
  });
}

interface PaddleNotification {
  readonly id: string;
  readonly type: string;
  readonly occurred_at: string;
  readonly payload: { readonly event_id: string; readonly event_type: string; readonly occurred_at: string };
}

function paddleNotifications(options: ProviderEventsOptions, baseUrl: string): ProviderEventsPort {
  return {
    api: 'paddle',
    async list({ from, to }) {
      const query = new URLSearchParams({
        from: new Date(from).toISOString(),
        to: new Date(to).toISOString(),
        per_page: '200',
        order_by: 'id[ASC]',
        ...(options.destination ? { notification_setting_id: options.destination } : {}),
      });
      // One event makes one notification per destination: one entry per event id.
      const walk = new PageWalk('paddle', options);
      let url: string | undefined = `${baseUrl}/notifications?${query}`;
      while (url) {
        const page = (await requestJson(options, baseUrl, url, { method: 'GET' })) as {
          data: PaddleNotification[];
          meta: { pagination: { next?: string; has_more: boolean } };
        };
        for (const n of page.data) {
          const createdAt = Date.parse(n.payload.occurred_at ?? n.occurred_at);
          if (createdAt < from || createdAt >= to) continue;
          walk.keep({
            eventId: n.payload.event_id,
            type: n.payload.event_type ?? n.type,
            createdAt,
            body: Buffer.from(JSON.stringify(n.payload)),
          });
        }
        // The next page's URL is its cursor (`after` the last notification id).
        url = page.meta.pagination.has_more ? page.meta.pagination.next : undefined;
        walk.read(
          page.data.map((n) => n.id),
          url,
        );
      }
      return walk.list();
    },
  };
}

interface SquareEvent {
  readonly event_id: string;
  readonly type: string;
  readonly created_at: string;
}

function squareEvents(options: ProviderEventsOptions, baseUrl: string): ProviderEventsPort {
  return {
    api: 'square',
    async list({ from, to }) {
      const walk = new PageWalk('square', options);
      const query = {
        filter: { created_at: { start_at: new Date(from).toISOString(), end_at: new Date(to).toISOString() } },
        sort: { sort_field: 'DEFAULT', order: 'ASC' },
      };
      let cursor: string | undefined;
      do {
        const page = (await requestJson(options, baseUrl, `${baseUrl}/v2/events`, {
          method: 'POST',
          body: { limit: 100, query, ...(cursor ? { cursor } : {}) },
        })) as { events?: SquareEvent[]; cursor?: string };
        for (const event of page.events ?? []) {
          const createdAt = Date.parse(event.created_at);
          if (createdAt < from || createdAt >= to) continue;
          // The event as listed is the webhook body (merchant_id, type, event_id, created_at, data).
          walk.keep({ eventId: event.event_id, type: event.type, createdAt, body: Buffer.from(JSON.stringify(event)) });
        }
        cursor = page.cursor || undefined;
        walk.read(
          (page.events ?? []).map((e) => e.event_id),
          cursor,
        );
      } while (cursor);
      return walk.list();
    },
  };
}
