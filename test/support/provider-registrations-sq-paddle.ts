/**
 * Stand-ins of Square's and Paddle's webhook registration APIs (node:http on loopback), serving the
 * shapes of their published API descriptions (Square's Webhook Subscriptions API, Paddle's
 * notification settings; checked against the providers' SDKs in test/providers/registrations.test.ts):
 *
 *   square  GET/POST /v2/webhooks/subscriptions, PUT/DELETE /v2/webhooks/subscriptions/{id};
 *           `subscription` with `signature_key` on create; errors `{ errors: [{ category, code, detail, field }] }`
 *   paddle  GET/POST /notification-settings, PATCH/DELETE /notification-settings/{id};
 *           `data` with `endpoint_secret_key`, `subscribed_events` as event type objects;
 *           errors `{ error: { type, code, detail, documentation_url, errors? }, meta }`
 *
 * Each checks the bearer key (Square 401 UNAUTHORIZED; Paddle 401 without a key, 403 invalid_token with
 * another) and answers queued failures first: `fail(429, { 'retry-after': '2' })`, or `refuseUrl()`
 * for the provider's refusal of a notification URL. `endpoints` is the provider's state: tests read it,
 * and change it to inject drift.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { SeenRequest } from './provider-apis';

export interface RegistrationRequest extends SeenRequest {
  readonly headers: IncomingMessage['headers'];
}

export interface RegistrationStandIn<E> {
  readonly url: string;
  readonly requests: RegistrationRequest[];
  /** The provider's endpoints, in creation order. */
  readonly endpoints: E[];
  /** The next request is answered with this status (the provider's error body for it) and headers. */
  fail(status: number, headers?: Record<string, string>): void;
  /** The next request is refused as a notification URL the provider will not call (its status and body). */
  refuseUrl(): void;
  close(): Promise<void>;
}

interface Reply {
  readonly status: number;
  readonly body?: unknown;
  readonly headers?: Record<string, string>;
}

type Route = (request: RegistrationRequest, base: string) => Reply;

async function registrationStandIn<E>(
  endpoints: E[],
  authorize: (authorization: string | undefined) => Reply | undefined,
  errorReply: (status: number) => Reply,
  refusal: Reply,
  route: Route,
): Promise<RegistrationStandIn<E>> {
  const requests: RegistrationRequest[] = [];
  const queued: Reply[] = [];
  let base = '';
  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const parsed = new URL(req.url ?? '/', base);
    const seen: RegistrationRequest = {
      method: req.method ?? 'GET',
      path: parsed.pathname,
      query: parsed.searchParams,
      body: text ? JSON.parse(text) : undefined,
      headers: req.headers,
      at: Date.now(),
    };
    requests.push(seen);
    const reply = queued.shift() ?? authorize(req.headers.authorization) ?? route(seen, base);
    res.writeHead(reply.status, { ...(reply.body !== undefined ? { 'content-type': 'application/json' } : {}), ...reply.headers });
    res.end(reply.body === undefined ? '' : JSON.stringify(reply.body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: base,
    requests,
    endpoints,
    fail: (status, headers = {}) => void queued.push({ ...errorReply(status), headers }),
    refuseUrl: () => void queued.push(refusal),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const STAMP = '2026-12-02T06:40:00.000Z';

// --- Square -----------------------------------------------------------------------------------------

export interface SquareSubscription {
  id: string;
  name: string;
  enabled: boolean;
  event_types: string[];
  notification_url: string;
  api_version: string;
  signature_key: string;
  created_at: string;
  updated_at: string;
}

const squareError = (status: number, category: string, code: string, detail: string, field?: string): Reply => ({
  status,
  body: { errors: [{ category, code, detail, ...(field ? { field } : {}) }] },
});

function squareErrorReply(status: number): Reply {
  if (status === 401) return squareError(401, 'AUTHENTICATION_ERROR', 'UNAUTHORIZED', 'This request could not be authorized.');
  if (status === 403)
    return squareError(
      403,
      'AUTHENTICATION_ERROR',
      'INSUFFICIENT_SCOPES',
      'The merchant has not given your application sufficient permissions to do that.',
    );
  if (status === 429) return squareError(429, 'RATE_LIMIT_ERROR', 'RATE_LIMITED', 'Rate limit exceeded. Please retry after a while.');
  if (status === 404) return squareError(404, 'INVALID_REQUEST_ERROR', 'NOT_FOUND', 'Subscription not found.');
  return squareError(status, 'API_ERROR', 'INTERNAL_SERVER_ERROR', 'An internal error has occurred.');
}

/** The notification URL Square refuses (it calls HTTPS URLs on the public internet only). */
export const SQUARE_URL_REFUSAL = 'The notification URL must be an HTTPS URL that is reachable from the internet.';

/**
 * Square's webhook subscriptions for one application: `signatureKeys` are handed out in turn by
 * create (`signature_key`); `pageSize` forces smaller pages of the list.
 */
export function squareRegistrations(apiKey: string, signatureKeys: readonly string[], pageSize = 100) {
  const subscriptions: SquareSubscription[] = [];
  let created = 0;
  const collection = '/v2/webhooks/subscriptions';
  return registrationStandIn(
    subscriptions,
    (authorization) => (authorization === `Bearer ${apiKey}` ? undefined : squareErrorReply(401)),
    squareErrorReply,
    squareError(400, 'INVALID_REQUEST_ERROR', 'INVALID_VALUE', SQUARE_URL_REFUSAL, 'subscription.notification_url'),
    (req) => {
      if (req.path === collection && req.method === 'GET') {
        const all = req.query.get('include_disabled') === 'true';
        const listed = subscriptions.filter((s) => all || s.enabled);
        const offset = Number(req.query.get('cursor') ?? 0);
        const limit = Math.min(pageSize, Number(req.query.get('limit') ?? 100));
        // Square lists no signature key: it is shown on create, retrieve and rotation only.
        const page = listed.slice(offset, offset + limit).map(({ signature_key: _, ...rest }) => rest);
        return {
          status: 200,
          body: { subscriptions: page, ...(offset + limit < listed.length ? { cursor: String(offset + limit) } : {}) },
        };
      }
      if (req.path === collection && req.method === 'POST') {
        const input = (req.body as { subscription?: Partial<SquareSubscription> }).subscription ?? {};
        if (!input.notification_url)
          return squareError(
            400,
            'INVALID_REQUEST_ERROR',
            'MISSING_REQUIRED_PARAMETER',
            'Missing required parameter.',
            'subscription.notification_url',
          );
        created++;
        const subscription: SquareSubscription = {
          id: `wbhk_${String(created).padStart(22, '0')}`,
          name: input.name ?? '',
          enabled: input.enabled ?? true,
          event_types: [...(input.event_types ?? [])],
          notification_url: input.notification_url,
          api_version: input.api_version ?? (req.headers['square-version'] as string | undefined) ?? '2025-01-23',
          signature_key: signatureKeys[created - 1] ?? `sq0whk-${created}`,
          created_at: STAMP,
          updated_at: STAMP,
        };
        subscriptions.push(subscription);
        return { status: 200, body: { subscription } };
      }
      const one = /^\/v2\/webhooks\/subscriptions\/([^/]+)$/.exec(req.path);
      const index = one ? subscriptions.findIndex((s) => s.id === decodeURIComponent(one[1]!)) : -1;
      if (!one || index < 0) return squareErrorReply(404);
      if (req.method === 'PUT') {
        const input = (req.body as { subscription?: Partial<SquareSubscription> }).subscription ?? {};
        const { id: _, signature_key: __, ...changes } = input;
        subscriptions[index] = { ...subscriptions[index]!, ...changes, updated_at: STAMP };
        return { status: 200, body: { subscription: subscriptions[index] } };
      }
      if (req.method === 'DELETE') {
        subscriptions.splice(index, 1);
        return { status: 200, body: {} };
      }
      return squareErrorReply(404);
    },
  );
}

// --- Paddle -----------------------------------------------------------------------------------------

export interface PaddleSetting {
  id: string;
  description: string;
  type: 'url' | 'email';
  destination: string;
  active: boolean;
  api_version: number;
  include_sensitive_fields: boolean;
  traffic_source: 'platform' | 'simulation' | 'all';
  subscribed_events: { name: string; description: string; group: string; available_versions: number[] }[];
  endpoint_secret_key: string;
}

const paddleError = (status: number, code: string, detail: string, errors?: { field: string; message: string }[]): Reply => ({
  status,
  body: {
    error: {
      type: 'request_error',
      code,
      detail,
      documentation_url: `https://developer.paddle.com/errors/shared/${code}`,
      ...(errors ? { errors } : {}),
    },
    meta: { request_id: '7c3e9a51-0f2d-4b6e-9d1a-2f8c4e6b0a13' },
  },
});

function paddleErrorReply(status: number): Reply {
  if (status === 401) return paddleError(401, 'authentication_missing', 'Authentication header missing.');
  if (status === 403) return paddleError(403, 'forbidden', "You aren't permitted to perform this request.");
  if (status === 429) return paddleError(429, 'too_many_requests', 'Too many requests.');
  if (status === 404) return paddleError(404, 'not_found', 'Entity not found');
  return paddleError(status, 'internal_error', 'An internal error occurred.');
}

/** The destination Paddle refuses, field by field as its `invalid_field` error lists them. */
export const PADDLE_URL_REFUSAL = 'must be a valid https URL';

const eventType = (name: string) => ({ name, description: `${name} event`, group: name.split('.')[0] ?? name, available_versions: [1] });

/** Paddle's notification settings for one account: `secretKeys` are handed out in turn by create (`endpoint_secret_key`). */
export function paddleRegistrations(apiKey: string, secretKeys: readonly string[]) {
  const settings: PaddleSetting[] = [];
  let created = 0;
  return registrationStandIn(
    settings,
    (authorization) => {
      // Paddle's SDK sends `bearer`; its API takes either case.
      const key = /^bearer (.+)$/i.exec(authorization ?? '')?.[1];
      if (key === undefined) return paddleErrorReply(401);
      return key === apiKey ? undefined : paddleError(403, 'invalid_token', 'Invalid or revoked API key.');
    },
    paddleErrorReply,
    paddleError(400, 'invalid_field', 'Request does not pass validation.', [{ field: 'destination', message: PADDLE_URL_REFUSAL }]),
    (req, base) => {
      const meta = { request_id: '7c3e9a51-0f2d-4b6e-9d1a-2f8c4e6b0a13' };
      if (req.path === '/notification-settings' && req.method === 'GET') {
        return {
          status: 200,
          body: {
            data: settings,
            meta: {
              ...meta,
              pagination: {
                per_page: 200,
                next: `${base}/notification-settings?after=${settings.at(-1)?.id ?? ''}`,
                has_more: false,
                estimated_total: settings.length,
              },
            },
          },
        };
      }
      if (req.path === '/notification-settings' && req.method === 'POST') {
        const input = req.body as {
          description?: string;
          destination?: string;
          type?: 'url' | 'email';
          subscribed_events?: string[];
          traffic_source?: PaddleSetting['traffic_source'];
        };
        if (!input.destination)
          return paddleError(400, 'invalid_field', 'Request does not pass validation.', [
            { field: 'destination', message: 'must be provided as part of the request' },
          ]);
        created++;
        const setting: PaddleSetting = {
          id: `ntfset_01j${String(created).padStart(23, '0')}`,
          description: input.description ?? '',
          type: input.type ?? 'url',
          destination: input.destination,
          active: true,
          api_version: 1,
          include_sensitive_fields: false,
          traffic_source: input.traffic_source ?? 'platform',
          subscribed_events: (input.subscribed_events ?? []).map(eventType),
          endpoint_secret_key: secretKeys[created - 1] ?? `pdl_ntfset_${created}`,
        };
        settings.push(setting);
        return { status: 201, body: { data: setting, meta } };
      }
      const one = /^\/notification-settings\/([^/]+)$/.exec(req.path);
      const index = one ? settings.findIndex((s) => s.id === decodeURIComponent(one[1]!)) : -1;
      if (!one || index < 0) return paddleErrorReply(404);
      if (req.method === 'PATCH') {
        const input = req.body as { destination?: string; active?: boolean; subscribed_events?: string[]; description?: string };
        const current = settings[index]!;
        settings[index] = {
          ...current,
          ...(input.destination !== undefined ? { destination: input.destination } : {}),
          ...(input.active !== undefined ? { active: input.active } : {}),
          ...(input.description !== undefined ? { description: input.description } : {}),
          ...(input.subscribed_events ? { subscribed_events: input.subscribed_events.map(eventType) } : {}),
        };
        return { status: 200, body: { data: settings[index], meta } };
      }
      if (req.method === 'DELETE') {
        settings.splice(index, 1);
        return { status: 204 };
      }
      return paddleErrorReply(404);
    },
  );
}
