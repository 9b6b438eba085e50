/**
 * Square's and Paddle's registrars (ops/connect/square.ts, paddle.ts) against stand-ins of their
 * registration APIs on loopback: list, create (the provider-issued secret returned), update, remove;
 * a refused key named by where it lives and never by value; a 429 waited out for its Retry-After; a
 * URL the provider refuses answered with the provider's own reason.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ProviderAuthError } from '../../adapters/provider-events';
import { SQUARE_API_VERSION } from '../../core/endpoint-drift';
import { ProviderPermissionError, ProviderRefusedError } from '../../ops/connect/http';
import { paddleRegistrar } from '../../ops/connect/paddle';
import { REGISTRARS } from '../../ops/connect/registrars';
import { squareRegistrar } from '../../ops/connect/square';
import { UsageError } from '../../ops/errors';
import {
  PADDLE_URL_REFUSAL,
  paddleRegistrations,
  type RegistrationStandIn,
  SQUARE_URL_REFUSAL,
  squareRegistrations,
} from '../support/provider-registrations-sq-paddle';

const SQUARE_KEY = 'EAAAl7Qm2xV9pLm4sq_204';
const PADDLE_KEY = 'pdl_live_apikey_01j9x7m2q4_204';
const SQUARE_CREDENTIAL = 'sources.square-shop.apiKey in .hookledger/secrets.json';
const PADDLE_CREDENTIAL = 'sources.paddle-billing.apiKey in .hookledger/secrets.json';
const HOOK_URL = 'https://hooks.example.com/hooks/square-shop';

const running: RegistrationStandIn<unknown>[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.close()));
});
async function started<E>(s: Promise<RegistrationStandIn<E>>): Promise<RegistrationStandIn<E>> {
  const api = await s;
  running.push(api as RegistrationStandIn<unknown>);
  return api;
}

/** Sleeps recorded, not waited. */
function sleeps() {
  const waits: number[] = [];
  return { waits, sleep: async (ms: number) => void waits.push(ms) };
}

async function rejection(promise: Promise<unknown>): Promise<Error> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(Error);
  return error as Error;
}

describe('the registrars map', () => {
  it('names square and paddle beside stripe and github', () => {
    expect(REGISTRARS.square).toBe(squareRegistrar);
    expect(REGISTRARS.paddle).toBe(paddleRegistrar);
  });
});

describe('square webhook subscriptions', () => {
  it('creates a subscription to the source events, returns its signature key, and lists it', async () => {
    const api = await started(squareRegistrations(SQUARE_KEY, ['sq0wss-Kf8b2Qx9Lm4']));
    const square = squareRegistrar({ apiKey: SQUARE_KEY, credential: SQUARE_CREDENTIAL, baseUrl: api.url });
    const { endpoint, secret } = await square.create({ url: HOOK_URL, events: ['payment.created', 'payment.updated'] });
    expect(secret).toBe('sq0wss-Kf8b2Qx9Lm4');
    expect(endpoint).toEqual({
      id: 'wbhk_0000000000000000000001',
      url: HOOK_URL,
      enabled: true,
      events: ['payment.created', 'payment.updated'],
    });
    const post = api.requests.at(-1)!;
    expect(post.headers['square-version']).toBe(SQUARE_API_VERSION);
    expect(post.body).toMatchObject({
      subscription: { name: 'hookledger', notification_url: HOOK_URL, event_types: ['payment.created', 'payment.updated'] },
    });
    expect(typeof (post.body as { idempotency_key: string }).idempotency_key).toBe('string');
    expect(await square.list()).toEqual([endpoint]);
  });

  it('lists disabled subscriptions too, across pages', async () => {
    const api = await started(squareRegistrations(SQUARE_KEY, [], 1));
    const square = squareRegistrar({ apiKey: SQUARE_KEY, credential: SQUARE_CREDENTIAL, baseUrl: api.url });
    await square.create({ url: 'https://a.example.com/hooks/a', events: ['order.created'] });
    await square.create({ url: 'https://b.example.com/hooks/b', events: ['order.updated'] });
    api.endpoints[1]!.enabled = false;
    const listed = await square.list();
    expect(listed.map((e) => [e.url, e.enabled])).toEqual([
      ['https://a.example.com/hooks/a', true],
      ['https://b.example.com/hooks/b', false],
    ]);
    const gets = api.requests.filter((r) => r.method === 'GET');
    expect(gets.map((r) => [r.query.get('include_disabled'), r.query.get('cursor')])).toEqual([
      ['true', null],
      ['true', '1'],
    ]);
  });

  it('updates the URL and events and enables it again, then removes it', async () => {
    const api = await started(squareRegistrations(SQUARE_KEY, ['sq0wss-Kf8b2Qx9Lm4']));
    const square = squareRegistrar({ apiKey: SQUARE_KEY, credential: SQUARE_CREDENTIAL, baseUrl: api.url });
    const { endpoint } = await square.create({ url: 'https://old.example.com/hooks/square-shop', events: ['payment.created'] });
    api.endpoints[0]!.enabled = false;
    const updated = await square.update(endpoint.id, { url: HOOK_URL, events: ['payment.created', 'refund.created'] });
    expect(updated.endpoint).toEqual({ id: endpoint.id, url: HOOK_URL, enabled: true, events: ['payment.created', 'refund.created'] });
    expect(api.requests.at(-1)!.method).toBe('PUT');
    await square.remove(endpoint.id);
    expect(api.endpoints).toEqual([]);
    expect(api.requests.at(-1)!.path).toBe(`/v2/webhooks/subscriptions/${endpoint.id}`);
  });

  it('names where a refused access token lives, never its value (401)', async () => {
    const api = await started(squareRegistrations(SQUARE_KEY, []));
    const square = squareRegistrar({ apiKey: 'EAAAwrong_token_204', credential: SQUARE_CREDENTIAL, baseUrl: api.url });
    const error = await rejection(square.list());
    expect(error).toBeInstanceOf(ProviderAuthError);
    expect(error.message).toContain(SQUARE_CREDENTIAL);
    expect(error.message).not.toContain('EAAAwrong_token_204');
  });

  it('says a token without the webhook scope lacks the permission (403)', async () => {
    const api = await started(squareRegistrations(SQUARE_KEY, []));
    api.fail(403);
    const square = squareRegistrar({ apiKey: SQUARE_KEY, credential: SQUARE_CREDENTIAL, baseUrl: api.url });
    const error = await rejection(square.list());
    expect(error).toBeInstanceOf(ProviderPermissionError);
    expect(error.message).toContain('docs/providers/square.md');
  });

  it('waits out a 429 for its Retry-After, then creates exactly one subscription', async () => {
    const api = await started(squareRegistrations(SQUARE_KEY, ['sq0wss-Kf8b2Qx9Lm4']));
    api.fail(429, { 'retry-after': '2' });
    const { waits, sleep } = sleeps();
    const square = squareRegistrar({ apiKey: SQUARE_KEY, credential: SQUARE_CREDENTIAL, baseUrl: api.url, sleep });
    const { secret } = await square.create({ url: HOOK_URL, events: ['payment.created'] });
    expect(waits).toEqual([2000]);
    expect(secret).toBe('sq0wss-Kf8b2Qx9Lm4');
    expect(api.endpoints).toHaveLength(1);
  });

  it("quotes Square's reason for a notification URL it refuses (400)", async () => {
    const api = await started(squareRegistrations(SQUARE_KEY, []));
    api.refuseUrl();
    const square = squareRegistrar({ apiKey: SQUARE_KEY, credential: SQUARE_CREDENTIAL, baseUrl: api.url });
    const error = await rejection(square.create({ url: 'http://10.0.0.7/hooks/square-shop', events: ['payment.created'] }));
    expect(error).toBeInstanceOf(ProviderRefusedError);
    expect((error as ProviderRefusedError).reason).toContain(SQUARE_URL_REFUSAL);
    expect(error.message).toContain(`"${SQUARE_URL_REFUSAL}`);
    expect(api.endpoints).toEqual([]);
  });

  it('refuses "*" before any request: Square subscribes named event types only', async () => {
    const api = await started(squareRegistrations(SQUARE_KEY, []));
    const square = squareRegistrar({ apiKey: SQUARE_KEY, credential: SQUARE_CREDENTIAL, baseUrl: api.url });
    const error = await rejection(square.create({ url: HOOK_URL, events: ['*'] }));
    expect(error).toBeInstanceOf(UsageError);
    expect(api.requests).toEqual([]);
  });
});

describe('paddle notification settings', () => {
  const DESTINATION = 'https://hooks.example.com/hooks/paddle-billing';

  it('creates a url destination for the source events, returns its endpoint secret key, and lists it', async () => {
    const api = await started(paddleRegistrations(PADDLE_KEY, ['pdl_ntfset_01j9x7m2q4_Kf8b2Qx9Lm4']));
    const paddle = paddleRegistrar({ apiKey: PADDLE_KEY, credential: PADDLE_CREDENTIAL, baseUrl: api.url });
    const { endpoint, secret } = await paddle.create({ url: DESTINATION, events: ['transaction.completed', 'subscription.created'] });
    expect(secret).toBe('pdl_ntfset_01j9x7m2q4_Kf8b2Qx9Lm4');
    expect(endpoint).toEqual({
      id: 'ntfset_01j00000000000000000000001',
      url: DESTINATION,
      enabled: true,
      events: ['transaction.completed', 'subscription.created'],
    });
    expect(api.requests.at(-1)!.body).toEqual({
      description: 'hookledger',
      type: 'url',
      destination: DESTINATION,
      subscribed_events: ['transaction.completed', 'subscription.created'],
    });
    expect(await paddle.list()).toEqual([endpoint]);
  });

  it('lists url destinations only: an email destination is no endpoint', async () => {
    const api = await started(paddleRegistrations(PADDLE_KEY, []));
    const paddle = paddleRegistrar({ apiKey: PADDLE_KEY, credential: PADDLE_CREDENTIAL, baseUrl: api.url });
    await paddle.create({ url: DESTINATION, events: ['transaction.completed'] });
    api.endpoints.push({ ...api.endpoints[0]!, id: 'ntfset_01jemail', type: 'email', destination: 'billing@example.com' });
    expect((await paddle.list()).map((e) => e.id)).toEqual(['ntfset_01j00000000000000000000001']);
  });

  it('updates destination and events and activates it again (PATCH), then removes it (204)', async () => {
    const api = await started(paddleRegistrations(PADDLE_KEY, []));
    const paddle = paddleRegistrar({ apiKey: PADDLE_KEY, credential: PADDLE_CREDENTIAL, baseUrl: api.url });
    const { endpoint } = await paddle.create({ url: 'https://old.example.com/hooks/paddle-billing', events: ['transaction.completed'] });
    api.endpoints[0]!.active = false;
    const updated = await paddle.update(endpoint.id, { url: DESTINATION, events: ['transaction.paid'] });
    expect(updated.endpoint).toEqual({ id: endpoint.id, url: DESTINATION, enabled: true, events: ['transaction.paid'] });
    expect(api.requests.at(-1)!.method).toBe('PATCH');
    await paddle.remove(endpoint.id);
    expect(api.endpoints).toEqual([]);
  });

  it('names where a wrong or revoked key lives (403 invalid_token), never its value', async () => {
    const api = await started(paddleRegistrations(PADDLE_KEY, []));
    const paddle = paddleRegistrar({ apiKey: 'pdl_live_apikey_revoked_204', credential: PADDLE_CREDENTIAL, baseUrl: api.url });
    const error = await rejection(paddle.list());
    expect(error).toBeInstanceOf(ProviderAuthError);
    expect(error.message).toContain(PADDLE_CREDENTIAL);
    expect(error.message).not.toContain('pdl_live_apikey_revoked_204');
  });

  it('says the key was refused with the status Paddle answered (403 invalid_token), not a 401 it never sent', async () => {
    const api = await started(paddleRegistrations(PADDLE_KEY, []));
    const paddle = paddleRegistrar({ apiKey: 'pdl_live_apikey_revoked_204', credential: PADDLE_CREDENTIAL, baseUrl: api.url });
    const error = await rejection(paddle.list());
    expect(error.message).toBe(`the paddle API refused the credential (403 invalid_token): check ${PADDLE_CREDENTIAL}`);
    expect((error as ProviderAuthError).status).toBe(403);
  });

  it('says a key without notification settings write lacks the permission (403 forbidden)', async () => {
    const api = await started(paddleRegistrations(PADDLE_KEY, []));
    api.fail(403);
    const paddle = paddleRegistrar({ apiKey: PADDLE_KEY, credential: PADDLE_CREDENTIAL, baseUrl: api.url });
    const error = await rejection(paddle.create({ url: DESTINATION, events: ['transaction.completed'] }));
    expect(error).toBeInstanceOf(ProviderPermissionError);
    expect(error.message).toContain(PADDLE_CREDENTIAL);
  });

  it('waits out a 429 whose Retry-After is in seconds, then lists', async () => {
    const api = await started(paddleRegistrations(PADDLE_KEY, []));
    api.fail(429, { 'retry-after': '7' });
    const { waits, sleep } = sleeps();
    const paddle = paddleRegistrar({ apiKey: PADDLE_KEY, credential: PADDLE_CREDENTIAL, baseUrl: api.url, sleep });
    expect(await paddle.list()).toEqual([]);
    expect(waits).toEqual([7000]);
  });

  it("quotes Paddle's reason for a destination it refuses, with the field (400 invalid_field)", async () => {
    const api = await started(paddleRegistrations(PADDLE_KEY, []));
    api.refuseUrl();
    const paddle = paddleRegistrar({ apiKey: PADDLE_KEY, credential: PADDLE_CREDENTIAL, baseUrl: api.url });
    const error = await rejection(paddle.create({ url: 'http://10.0.0.7/hooks/paddle-billing', events: ['transaction.completed'] }));
    expect(error).toBeInstanceOf(ProviderRefusedError);
    expect((error as ProviderRefusedError).reason).toBe(`Request does not pass validation. destination: ${PADDLE_URL_REFUSAL}`);
    expect(api.endpoints).toEqual([]);
  });

  it('refuses "*" before any request: Paddle subscribes named event types only', async () => {
    const api = await started(paddleRegistrations(PADDLE_KEY, []));
    const paddle = paddleRegistrar({ apiKey: PADDLE_KEY, credential: PADDLE_CREDENTIAL, baseUrl: api.url });
    expect(await rejection(paddle.update('ntfset_01j0', { url: DESTINATION, events: ['*'] }))).toBeInstanceOf(UsageError);
    expect(api.requests).toEqual([]);
  });
});
