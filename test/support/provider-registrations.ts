/**
 * Stand-ins of the providers' webhook registration APIs (node:http on loopback) with the shapes their
 * published API descriptions give (stripe/openapi `webhook_endpoint`, github/rest-api-description
 * `hook`): Stripe `/v1/webhook_endpoints` (form-encoded requests as the `stripe` SDK sends them; the
 * `secret` only in the create answer; `status` enabled|disabled; `deleted: true`), GitHub
 * `/repos/{o}/{r}/hooks` and `/orgs/{org}/hooks` (JSON; `config.secret` kept and listed as `********`;
 * `last_response`; 201, 200, 204). Both refuse a URL that is not publicly reachable (loopback) with the
 * provider's own words, check the bearer (or `token`) key, and answer queued failures first
 * (`fail(429, { 'retry-after': '2' })`). `endpoints` is the provider's state: tests read it and
 * change it to inject drift.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RegistrationRequest {
  readonly method: string;
  readonly path: string;
  readonly query: URLSearchParams;
  /** JSON bodies parsed; form bodies (Stripe) as their fields, `a[0]=x&a[1]=y` as arrays. */
  readonly body: Record<string, unknown> | undefined;
}

export interface RegistrationStandIn<E> {
  readonly url: string;
  readonly requests: RegistrationRequest[];
  /** The provider's endpoints by id, as it keeps them. */
  readonly endpoints: Map<string, E>;
  /** The next request is answered with this status and headers (the provider's error body). */
  fail(status: number, headers?: Record<string, string>): void;
  close(): Promise<void>;
}

type Reply = { status: number; body?: unknown; headers?: Record<string, string> };

/** Form fields as Stripe's SDK encodes them: `enabled_events[0]=a&enabled_events[1]=b` is an array. */
function formFields(text: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of new URLSearchParams(text)) {
    const indexed = /^([^[]+)\[(\d*)\]$/.exec(key);
    if (!indexed) {
      out[key] = value;
      continue;
    }
    const list = (out[indexed[1]!] as string[] | undefined) ?? [];
    list.push(value);
    out[indexed[1]!] = list;
  }
  return out;
}

async function registrationServer<E>(
  apiKey: string,
  errorBody: (status: number) => unknown,
  handle: (request: RegistrationRequest, endpoints: Map<string, E>) => Reply,
): Promise<RegistrationStandIn<E>> {
  const requests: RegistrationRequest[] = [];
  const endpoints = new Map<string, E>();
  const failures: { status: number; headers: Record<string, string> }[] = [];
  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const parsed = new URL(req.url ?? '/', 'http://127.0.0.1');
    const json = (req.headers['content-type'] ?? '').includes('json');
    const seen: RegistrationRequest = {
      method: req.method ?? 'GET',
      path: parsed.pathname,
      query: parsed.searchParams,
      body: text === '' ? undefined : json ? (JSON.parse(text) as Record<string, unknown>) : formFields(text),
    };
    requests.push(seen);
    const reply = ({ status, body, headers = {} }: Reply) => {
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(body === undefined ? '' : JSON.stringify(body));
    };
    const failure = failures.shift();
    if (failure) return reply({ status: failure.status, body: errorBody(failure.status), headers: failure.headers });
    const auth = req.headers.authorization ?? '';
    if (auth !== `Bearer ${apiKey}` && auth !== `token ${apiKey}`) return reply({ status: 401, body: errorBody(401) });
    reply(handle(seen, endpoints));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    endpoints,
    fail: (status, headers = {}) => void failures.push({ status, headers }),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A URL the providers refuse: not reachable from the public Internet. */
const isPrivateUrl = (url: string) => !URL.canParse(url) || /^(localhost|127\.|\[::1\])/.test(new URL(url).hostname);

// --- Stripe -----------------------------------------------------------------------------------------

export interface StripeWebhookEndpoint {
  id: string;
  object: 'webhook_endpoint';
  api_version: string | null;
  application: string | null;
  created: number;
  description: string | null;
  enabled_events: string[];
  livemode: boolean;
  metadata: Record<string, string>;
  /** Only in the create answer; kept here so a test can sign as Stripe would. */
  secret: string;
  status: 'enabled' | 'disabled';
  url: string;
}

/** Stripe refuses a loopback URL with these words (the Dashboard and the API alike). */
export const STRIPE_PRIVATE_URL_MESSAGE =
  'Invalid URL: URL must be publicly accessible. Consider using a tool like the Stripe CLI to test webhooks locally.';

const stripeError = (status: number, message?: string, param?: string) => ({
  error: {
    type:
      status === 401
        ? 'invalid_request_error'
        : status === 429
          ? 'invalid_request_error'
          : status === 404
            ? 'invalid_request_error'
            : 'api_error',
    message:
      message ??
      (status === 401
        ? 'Invalid API Key provided: sk_test_****'
        : status === 429
          ? 'Too many requests hit the API too quickly.'
          : 'stand-in failure'),
    ...(status === 429 ? { code: 'rate_limit' } : {}),
    ...(param ? { param } : {}),
  },
});

/** What a list or retrieve shows: never the secret. */
const listed = ({ secret: _secret, ...endpoint }: StripeWebhookEndpoint) => endpoint;

export function stripeRegistrationApi(apiKey: string): Promise<RegistrationStandIn<StripeWebhookEndpoint>> {
  let next = 0;
  return registrationServer<StripeWebhookEndpoint>(
    apiKey,
    (status) => stripeError(status),
    (req, endpoints) => {
      const id = /^\/v1\/webhook_endpoints\/([^/]+)$/.exec(req.path)?.[1];
      const body = req.body ?? {};
      if (req.path === '/v1/webhook_endpoints' && req.method === 'GET') {
        const data = [...endpoints.values()].reverse().map(listed);
        return { status: 200, body: { object: 'list', url: '/v1/webhook_endpoints', has_more: false, data } };
      }
      if (req.path === '/v1/webhook_endpoints' && req.method === 'POST') {
        const url = String(body.url ?? '');
        if (isPrivateUrl(url)) return { status: 400, body: stripeError(400, STRIPE_PRIVATE_URL_MESSAGE, 'url') };
        next += 1;
        const endpoint: StripeWebhookEndpoint = {
          id: `we_1Reg${String(next).padStart(4, '0')}StandIn`,
          object: 'webhook_endpoint',
          api_version: null,
          application: null,
          created: Math.floor(Date.now() / 1000),
          description: null,
          enabled_events: (body.enabled_events as string[]) ?? [],
          livemode: false,
          metadata: {},
          secret: `whsec_${randomBytes(24).toString('hex')}`,
          status: 'enabled',
          url,
        };
        endpoints.set(endpoint.id, endpoint);
        return { status: 200, body: endpoint };
      }
      const endpoint = id === undefined ? undefined : endpoints.get(id);
      if (!endpoint) return { status: 404, body: stripeError(404, `No such webhook endpoint: '${id}'`, 'id') };
      if (req.method === 'POST') {
        if (body.url !== undefined && isPrivateUrl(String(body.url)))
          return { status: 400, body: stripeError(400, STRIPE_PRIVATE_URL_MESSAGE, 'url') };
        if (body.url !== undefined) endpoint.url = String(body.url);
        if (body.enabled_events !== undefined) endpoint.enabled_events = body.enabled_events as string[];
        if (body.disabled !== undefined) endpoint.status = body.disabled === 'true' ? 'disabled' : 'enabled';
        return { status: 200, body: listed(endpoint) };
      }
      if (req.method === 'DELETE') {
        endpoints.delete(endpoint.id);
        return { status: 200, body: { id: endpoint.id, object: 'webhook_endpoint', deleted: true } };
      }
      return { status: 200, body: listed(endpoint) };
    },
  );
}

// --- GitHub -----------------------------------------------------------------------------------------

export interface GithubHook {
  type: 'Repository' | 'Organization';
  id: number;
  name: 'web';
  active: boolean;
  events: string[];
  config: { content_type: string; insecure_ssl: string; url: string; secret?: string };
  updated_at: string;
  created_at: string;
  url: string;
  ping_url: string;
  deliveries_url: string;
  last_response: { code: number | null; status: string; message: string | null };
}

const githubError = (status: number) => ({
  message:
    status === 401 ? 'Bad credentials' : status === 429 ? 'API rate limit exceeded' : status === 404 ? 'Not Found' : 'stand-in failure',
  documentation_url: 'https://docs.github.com/rest/repos/webhooks',
  status: String(status),
});

/** GitHub lists a hook's secret masked. */
const masked = (hook: GithubHook) => ({ ...hook, config: { ...hook.config, ...(hook.config.secret ? { secret: '********' } : {}) } });

/** `scope`: `repos/<owner>/<repo>` or `orgs/<org>`. */
export function githubRegistrationApi(apiKey: string, scope: string): Promise<RegistrationStandIn<GithubHook>> {
  let next = 494_000_000;
  const base = `/${scope}/hooks`;
  return registrationServer<GithubHook>(apiKey, githubError, (req, hooks) => {
    const body = (req.body ?? {}) as Partial<Pick<GithubHook, 'active' | 'events'>> & { config?: Partial<GithubHook['config']> };
    const refused = (url: string | undefined): Reply | undefined =>
      url !== undefined && isPrivateUrl(url)
        ? {
            status: 422,
            body: {
              message: 'Validation Failed',
              errors: [
                {
                  resource: 'Hook',
                  code: 'custom',
                  message: "url is not supported because it isn't reachable over the public Internet (localhost)",
                },
              ],
              documentation_url: 'https://docs.github.com/rest/repos/webhooks#create-a-repository-webhook',
              status: '422',
            },
          }
        : undefined;
    if (req.path === base && req.method === 'GET') return { status: 200, body: [...hooks.values()].map(masked) };
    if (req.path === base && req.method === 'POST') {
      const denied = refused(body.config?.url);
      if (denied) return denied;
      next += 1;
      const at = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
      const hook: GithubHook = {
        type: scope.startsWith('orgs/') ? 'Organization' : 'Repository',
        id: next,
        name: 'web',
        active: body.active ?? true,
        events: body.events ?? ['push'],
        config: { content_type: 'form', insecure_ssl: '0', url: '', ...body.config } as GithubHook['config'],
        updated_at: at,
        created_at: at,
        url: `https://api.github.com${base}/${next}`,
        ping_url: `https://api.github.com${base}/${next}/pings`,
        deliveries_url: `https://api.github.com${base}/${next}/deliveries`,
        last_response: { code: null, status: 'unused', message: null },
      };
      hooks.set(String(hook.id), hook);
      return { status: 201, body: masked(hook) };
    }
    const hook = hooks.get(req.path.startsWith(`${base}/`) ? req.path.slice(base.length + 1) : '');
    if (!hook) return { status: 404, body: githubError(404) };
    if (req.method === 'PATCH') {
      const denied = refused(body.config?.url);
      if (denied) return denied;
      // As GitHub: a config without a secret drops the one the hook had.
      if (body.config)
        hook.config = { content_type: 'form', insecure_ssl: '0', url: hook.config.url, ...body.config } as GithubHook['config'];
      if (body.events) hook.events = body.events;
      if (body.active !== undefined) hook.active = body.active;
      return { status: 200, body: masked(hook) };
    }
    if (req.method === 'DELETE') {
      hooks.delete(String(hook.id));
      return { status: 204 };
    }
    return { status: 200, body: masked(hook) };
  });
}
