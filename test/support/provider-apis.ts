/**
 * Stand-ins of the providers' event-listing APIs (node:http on loopback) serving their documented
 * response shapes: Stripe `GET /v1/events` (list object, `has_more`, `starting_after`, `created[gte|lt]`),
 * GitHub hook deliveries (newest first, `cursor` in the Link header; redelivery `POST .../attempts`
 * 202), Paddle `GET /notifications` (`data`, `meta.pagination.next|has_more`), Square `POST /v2/events`
 * (`events`, `cursor`). Each checks the bearer key (401 in the provider's error shape otherwise) and
 * answers queued failures first (`fail(429, { 'retry-after': '1' })`).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SeenRequest {
  readonly method: string;
  readonly path: string;
  readonly query: URLSearchParams;
  readonly body: unknown;
  readonly at: number;
}

export interface StandIn {
  readonly url: string;
  readonly requests: SeenRequest[];
  /** The next request is answered with this status and headers (the provider's error body). */
  fail(status: number, headers?: Record<string, string>): void;
  close(): Promise<void>;
}

type Handler = (request: SeenRequest, url: string) => { status: number; body: unknown; headers?: Record<string, string> };

async function standIn(apiKey: string, errorBody: (status: number) => unknown, handle: Handler): Promise<StandIn> {
  const requests: SeenRequest[] = [];
  const failures: { status: number; headers: Record<string, string> }[] = [];
  let base = '';
  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const parsed = new URL(req.url ?? '/', base);
    const seen: SeenRequest = {
      method: req.method ?? 'GET',
      path: parsed.pathname,
      query: parsed.searchParams,
      body: text ? JSON.parse(text) : undefined,
      at: Date.now(),
    };
    requests.push(seen);
    const reply = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(body === undefined ? '' : JSON.stringify(body));
    };
    const failure = failures.shift();
    if (failure) return reply(failure.status, errorBody(failure.status), failure.headers);
    const auth = req.headers.authorization ?? '';
    if (auth !== `Bearer ${apiKey}` && auth !== `token ${apiKey}`) return reply(401, errorBody(401));
    const out = handle(seen, base);
    reply(out.status, out.body, out.headers);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: base,
    requests,
    fail: (status, headers = {}) => void failures.push({ status, headers }),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

// --- Stripe -----------------------------------------------------------------------------------------

export interface StripeEvent {
  readonly id: string;
  readonly object: 'event';
  readonly api_version: string;
  readonly created: number;
  readonly data: { readonly object: Record<string, unknown> };
  readonly livemode: boolean;
  readonly pending_webhooks: number;
  readonly request: { readonly id: string | null; readonly idempotency_key: string | null };
  readonly type: string;
  readonly account?: string;
}

export function stripeEvent(id: string, type: string, createdMs: number, account: string, objectId: string): StripeEvent {
  return {
    id,
    object: 'event',
    account,
    api_version: '2025-10-29.clover',
    created: Math.floor(createdMs / 1000),
    data: { object: { id: objectId, object: type.split('.')[0] ?? 'object', amount: 4200, currency: 'eur' } },
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type,
  };
}

/** `GET /v1/events`, newest first, `limit` per page (the SDK sends 100; `pageSize` forces smaller pages). */
export function stripeApi(apiKey: string, events: () => readonly StripeEvent[], pageSize = 100): Promise<StandIn> {
  const errorBody = (status: number) => ({
    error:
      status === 401
        ? { type: 'invalid_request_error', message: 'Invalid API Key provided: sk_test_****' }
        : status === 429
          ? { type: 'invalid_request_error', code: 'rate_limit', message: 'Too many requests hit the API too quickly.' }
          : { type: 'api_error', message: 'stand-in failure' },
  });
  return standIn(apiKey, errorBody, (req) => {
    if (req.method !== 'GET' || req.path !== '/v1/events') return { status: 404, body: errorBody(404) };
    const gte = Number(req.query.get('created[gte]') ?? 0);
    const lt = Number(req.query.get('created[lt]') ?? Number.MAX_SAFE_INTEGER);
    const limit = Math.min(pageSize, Number(req.query.get('limit') ?? 10));
    let list = [...events()]
      .filter((e) => e.created >= gte && e.created < lt)
      .sort((a, b) => b.created - a.created || (a.id < b.id ? 1 : -1));
    const after = req.query.get('starting_after');
    if (after) list = list.slice(list.findIndex((e) => e.id === after) + 1);
    return { status: 200, body: { object: 'list', url: '/v1/events', has_more: list.length > limit, data: list.slice(0, limit) } };
  });
}

// --- GitHub -----------------------------------------------------------------------------------------

export interface HookDelivery {
  readonly id: number;
  readonly guid: string;
  readonly delivered_at: string;
  readonly redelivery: boolean;
  readonly duration: number;
  readonly status: string;
  readonly status_code: number;
  readonly event: string;
  readonly action: string | null;
  readonly installation_id: number | null;
  readonly repository_id: number | null;
}

export function hookDelivery(id: number, guid: string, event: string, deliveredMs: number, statusCode: number): HookDelivery {
  return {
    id,
    guid,
    delivered_at: new Date(deliveredMs).toISOString().replace(/\.\d{3}Z$/, 'Z'),
    redelivery: false,
    duration: 0.27,
    status: statusCode === 0 ? 'timed out' : statusCode < 300 ? 'OK' : 'Invalid HTTP Response: 503',
    status_code: statusCode,
    event,
    action: 'opened',
    installation_id: null,
    repository_id: 1296269,
  };
}

/** `GET /repos/{o}/{r}/hooks/{id}/deliveries` (newest first, `per_page`, Link cursor) and `POST .../deliveries/{id}/attempts`. */
export function githubApi(
  apiKey: string,
  hookPath: string,
  deliveries: () => readonly HookDelivery[],
  onRedeliver: (delivery: HookDelivery) => void,
  pageSize = 100,
): Promise<StandIn> {
  const errorBody = (status: number) => ({
    message: status === 401 ? 'Bad credentials' : status === 429 ? 'API rate limit exceeded' : 'stand-in failure',
    documentation_url: 'https://docs.github.com/rest',
    status: String(status),
  });
  return standIn(apiKey, errorBody, (req, base) => {
    if (req.method === 'GET' && req.path === `/${hookPath}/deliveries`) {
      const perPage = Math.min(pageSize, Number(req.query.get('per_page') ?? 30));
      const list = [...deliveries()].sort((a, b) => Date.parse(b.delivered_at) - Date.parse(a.delivered_at) || b.id - a.id);
      const start = Number(req.query.get('cursor') ?? 0);
      const page = list.slice(start, start + perPage);
      const next =
        start + perPage < list.length
          ? `<${base}/${hookPath}/deliveries?per_page=${perPage}&cursor=${start + perPage}>; rel="next"`
          : undefined;
      return { status: 200, body: page, ...(next ? { headers: { link: next } } : {}) };
    }
    const attempt = new RegExp(`^/${hookPath}/deliveries/(\\d+)/attempts$`).exec(req.path);
    if (req.method === 'POST' && attempt) {
      const delivery = deliveries().find((d) => d.id === Number(attempt[1]));
      if (!delivery) return { status: 404, body: errorBody(404) };
      onRedeliver(delivery);
      return { status: 202, body: {} };
    }
    return { status: 404, body: errorBody(404) };
  });
}

// --- Paddle -----------------------------------------------------------------------------------------

export interface PaddleNotification {
  readonly id: string;
  readonly type: string;
  readonly status: 'delivered' | 'failed' | 'needs_retry' | 'not_attempted';
  readonly payload: { event_id: string; event_type: string; occurred_at: string; notification_id: string; data: Record<string, unknown> };
  readonly occurred_at: string;
  readonly delivered_at: string | null;
  readonly replayed_at: string | null;
  readonly origin: 'event' | 'replay';
  readonly last_attempt_at: string | null;
  readonly retry_at: string | null;
  readonly times_attempted: number;
  readonly notification_setting_id: string;
}

export function paddleNotification(n: number, eventId: string, type: string, occurredMs: number, setting: string): PaddleNotification {
  const at = new Date(occurredMs).toISOString();
  const id = `ntf_01h${String(n).padStart(23, '0')}`;
  return {
    id,
    type,
    status: 'failed',
    payload: {
      event_id: eventId,
      event_type: type,
      occurred_at: at,
      notification_id: id,
      data: { id: `txn_${n}`, customer_id: 'ctm_204' },
    },
    occurred_at: at,
    delivered_at: null,
    replayed_at: null,
    origin: 'event',
    last_attempt_at: at,
    retry_at: null,
    times_attempted: 3,
    notification_setting_id: setting,
  };
}

/** `GET /notifications` (id order, `per_page`, `after`, `from`, `to`, `notification_setting_id`). */
export function paddleApi(apiKey: string, notifications: () => readonly PaddleNotification[], pageSize = 200): Promise<StandIn> {
  const errorBody = (status: number) => ({
    error: {
      type: 'request_error',
      code: status === 401 ? 'authentication_malformed' : status === 429 ? 'too_many_requests' : 'internal_error',
      detail: 'stand-in',
      documentation_url: 'https://developer.paddle.com/errors/shared/',
    },
    meta: { request_id: 'req_standin' },
  });
  return standIn(apiKey, errorBody, (req, base) => {
    if (req.method !== 'GET' || req.path !== '/notifications') return { status: 404, body: errorBody(404) };
    const from = Date.parse(req.query.get('from') ?? '1970-01-01T00:00:00Z');
    const to = Date.parse(req.query.get('to') ?? '2999-01-01T00:00:00Z');
    const setting = req.query.get('notification_setting_id');
    const perPage = Math.min(pageSize, Number(req.query.get('per_page') ?? 50));
    let list = [...notifications()]
      .filter(
        (n) => Date.parse(n.occurred_at) >= from && Date.parse(n.occurred_at) < to && (!setting || n.notification_setting_id === setting),
      )
      .sort((a, b) => (a.id < b.id ? -1 : 1));
    const after = req.query.get('after');
    if (after) list = list.filter((n) => n.id > after);
    const page = list.slice(0, perPage);
    const hasMore = list.length > perPage;
    const next = new URL(`${base}/notifications`);
    for (const [k, v] of req.query) if (k !== 'after') next.searchParams.set(k, v);
    next.searchParams.set('after', page.at(-1)?.id ?? '');
    return {
      status: 200,
      body: {
        data: page,
        meta: {
          request_id: 'req_standin',
          pagination: { per_page: perPage, next: next.toString(), has_more: hasMore, estimated_total: list.length },
        },
      },
    };
  });
}

// --- Square -----------------------------------------------------------------------------------------

export interface SquareEvent {
  readonly merchant_id: string;
  readonly location_id: string;
  readonly type: string;
  readonly event_id: string;
  readonly created_at: string;
  readonly data: { readonly type: string; readonly id: string; readonly object: Record<string, unknown> };
}

export function squareEvent(eventId: string, type: string, createdMs: number, merchant: string): SquareEvent {
  return {
    merchant_id: merchant,
    location_id: 'L1',
    type,
    event_id: eventId,
    created_at: new Date(createdMs).toISOString(),
    data: { type: type.split('.')[0] ?? 'object', id: `obj_${eventId.slice(0, 8)}`, object: { status: 'COMPLETED' } },
  };
}

/** `POST /v2/events` (SearchEvents: `query.filter.created_at`, `limit`, `cursor`). */
export function squareApi(apiKey: string, events: () => readonly SquareEvent[], pageSize = 100): Promise<StandIn> {
  const errorBody = (status: number) => ({
    errors: [
      {
        category: status === 401 ? 'AUTHENTICATION_ERROR' : status === 429 ? 'RATE_LIMIT_ERROR' : 'API_ERROR',
        code: status === 401 ? 'UNAUTHORIZED' : status === 429 ? 'RATE_LIMITED' : 'INTERNAL_SERVER_ERROR',
        detail: 'stand-in',
      },
    ],
  });
  return standIn(apiKey, errorBody, (req) => {
    if (req.method !== 'POST' || req.path !== '/v2/events') return { status: 404, body: errorBody(404) };
    const body = (req.body ?? {}) as {
      cursor?: string;
      limit?: number;
      query?: { filter?: { created_at?: { start_at?: string; end_at?: string } } };
    };
    const start = Date.parse(body.query?.filter?.created_at?.start_at ?? '1970-01-01T00:00:00Z');
    const end = Date.parse(body.query?.filter?.created_at?.end_at ?? '2999-01-01T00:00:00Z');
    const limit = Math.min(pageSize, body.limit ?? 100);
    const list = [...events()].filter((e) => Date.parse(e.created_at) >= start && Date.parse(e.created_at) < end);
    const offset = Number(body.cursor ?? 0);
    const page = list.slice(offset, offset + limit);
    const cursor = offset + limit < list.length ? String(offset + limit) : undefined;
    return {
      status: 200,
      body: {
        events: page,
        metadata: page.map((e) => ({ event_id: e.event_id, api_version: '2025-01-23' })),
        ...(cursor ? { cursor } : {}),
      },
    };
  });
}
