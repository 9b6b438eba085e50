/**
 * The Square and Paddle registration stand-ins (test/support/provider-registrations-sq-paddle.ts)
 * checked with the providers' own SDKs (`square`, `@paddle/paddle-node-sdk`) pointed at them: each
 * SDK lists, creates, updates and deletes through the stand-in and reads its answers (and its errors)
 * as it reads the provider's; and what our registrars send has the shape the SDK sends.
 */
import { type Environment, Paddle, ApiError as PaddleApiError } from '@paddle/paddle-node-sdk';
import { SquareClient, SquareError } from 'square';
import { afterEach, describe, expect, it } from 'vitest';
import { paddleRegistrar } from '../../ops/connect/paddle';
import { squareRegistrar } from '../../ops/connect/square';
import { paddleRegistrations, type RegistrationStandIn, squareRegistrations } from '../support/provider-registrations-sq-paddle';

const SQUARE_KEY = 'EAAAl7Qm2xV9pLm4sq_204';
const PADDLE_KEY = 'pdl_live_apikey_01j9x7m2q4_204';
const HOOK_URL = 'https://hooks.example.com/hooks/shop_204';

const running: RegistrationStandIn<unknown>[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.close()));
});
async function started<E>(s: Promise<RegistrationStandIn<E>>): Promise<RegistrationStandIn<E>> {
  const api = await s;
  running.push(api as RegistrationStandIn<unknown>);
  return api;
}

const keysOf = (value: unknown): unknown =>
  typeof value === 'object' && value !== null && !Array.isArray(value)
    ? Object.fromEntries(
        Object.entries(value)
          .sort(([a], [b]) => a.localeCompare(b))
          .map(([k, v]) => [k, keysOf(v)]),
      )
    : typeof value;

describe('square SDK against the webhook subscriptions stand-in', () => {
  it('creates, lists (disabled included), updates and deletes a subscription as Square answers them', async () => {
    const api = await started(squareRegistrations(SQUARE_KEY, ['sq0wss-Kf8b2Qx9Lm4']));
    const square = new SquareClient({ token: SQUARE_KEY, baseUrl: api.url, maxRetries: 0 });
    const created = await square.webhooks.subscriptions.create({
      idempotencyKey: '63f84c6c-2200-4c99-846c-2670a1311fbf',
      subscription: { name: 'hookledger', eventTypes: ['payment.created'], notificationUrl: HOOK_URL, apiVersion: '2025-01-23' },
    });
    expect(created.subscription).toMatchObject({
      id: 'wbhk_0000000000000000000001',
      enabled: true,
      eventTypes: ['payment.created'],
      notificationUrl: HOOK_URL,
      signatureKey: 'sq0wss-Kf8b2Qx9Lm4',
    });
    const id = created.subscription!.id!;
    await square.webhooks.subscriptions.update({ subscriptionId: id, subscription: { enabled: false } });
    const listed: string[] = [];
    for await (const s of await square.webhooks.subscriptions.list({ includeDisabled: true })) listed.push(`${s.id} ${s.enabled}`);
    expect(listed).toEqual([`${id} false`]);
    await square.webhooks.subscriptions.delete({ subscriptionId: id });
    expect(api.endpoints).toEqual([]);
  });

  it('reads the stand-in errors as SquareError with Square codes (401, a refused notification URL)', async () => {
    const api = await started(squareRegistrations(SQUARE_KEY, []));
    const wrong = new SquareClient({ token: 'EAAAwrong_token_204', baseUrl: api.url, maxRetries: 0 });
    const unauthorized = await wrong.webhooks.subscriptions.list().catch((e: unknown) => e);
    expect(unauthorized).toBeInstanceOf(SquareError);
    expect((unauthorized as SquareError).statusCode).toBe(401);
    expect((unauthorized as SquareError).errors[0]?.code).toBe('UNAUTHORIZED');
    api.refuseUrl();
    const square = new SquareClient({ token: SQUARE_KEY, baseUrl: api.url, maxRetries: 0 });
    const refused = await square.webhooks.subscriptions
      .create({ subscription: { eventTypes: ['payment.created'], notificationUrl: 'http://10.0.0.7/hooks/shop_204' } })
      .catch((e: unknown) => e);
    expect((refused as SquareError).statusCode).toBe(400);
    expect((refused as SquareError).errors[0]).toMatchObject({ code: 'INVALID_VALUE', field: 'subscription.notification_url' });
  });

  it('our registrar sends the create body the SDK sends, and lists what the SDK created', async () => {
    const api = await started(squareRegistrations(SQUARE_KEY, []));
    const square = new SquareClient({ token: SQUARE_KEY, baseUrl: api.url, maxRetries: 0 });
    await square.webhooks.subscriptions.create({
      idempotencyKey: '63f84c6c-2200-4c99-846c-2670a1311fbf',
      subscription: {
        name: 'hookledger',
        enabled: true,
        eventTypes: ['order.created'],
        notificationUrl: HOOK_URL,
        apiVersion: '2025-01-23',
      },
    });
    const ours = squareRegistrar({ apiKey: SQUARE_KEY, credential: 'sources.shop_204.apiKey', baseUrl: api.url });
    await ours.create({ url: HOOK_URL, events: ['order.updated'] });
    const [sdkBody, ourBody] = api.requests.filter((r) => r.method === 'POST').map((r) => keysOf(r.body));
    expect(ourBody).toEqual(sdkBody);
    expect((await ours.list()).map((e) => e.events)).toEqual([['order.created'], ['order.updated']]);
  });
});

describe('paddle SDK against the notification settings stand-in', () => {
  const sdk = (url: string, key = PADDLE_KEY) => new Paddle(key, { environment: url as Environment });

  it('creates, lists, updates and deletes a notification setting as Paddle answers them', async () => {
    const api = await started(paddleRegistrations(PADDLE_KEY, ['pdl_ntfset_01j9x7m2q4_Kf8b2Qx9Lm4']));
    const paddle = sdk(api.url);
    const created = await paddle.notificationSettings.create({
      description: 'hookledger',
      destination: HOOK_URL,
      subscribedEvents: ['transaction.completed'],
      type: 'url',
    });
    expect(created.endpointSecretKey).toBe('pdl_ntfset_01j9x7m2q4_Kf8b2Qx9Lm4');
    expect(created.subscribedEvents.map((e) => e.name)).toEqual(['transaction.completed']);
    await paddle.notificationSettings.update(created.id, { active: false, subscribedEvents: ['transaction.paid'] });
    const listed = await paddle.notificationSettings.list();
    expect(listed.map((s) => [s.id, s.destination, s.active, s.subscribedEvents.map((e) => e.name)])).toEqual([
      [created.id, HOOK_URL, false, ['transaction.paid']],
    ]);
    await paddle.notificationSettings.delete(created.id);
    expect(api.endpoints).toEqual([]);
  });

  it('reads the stand-in errors as the SDK ApiError with Paddle codes (invalid_token, invalid_field)', async () => {
    const api = await started(paddleRegistrations(PADDLE_KEY, []));
    const revoked = await sdk(api.url, 'pdl_live_apikey_revoked_204')
      .notificationSettings.list()
      .catch((e: unknown) => e);
    expect(revoked).toBeInstanceOf(PaddleApiError);
    expect((revoked as PaddleApiError).code).toBe('invalid_token');
    api.refuseUrl();
    const refused = await sdk(api.url)
      .notificationSettings.create({ description: 'hookledger', destination: 'http://10.0.0.7/x', subscribedEvents: [], type: 'url' })
      .catch((e: unknown) => e);
    expect((refused as PaddleApiError).code).toBe('invalid_field');
    expect((refused as PaddleApiError).errors?.[0]?.field).toBe('destination');
  });

  it('our registrar sends the create body the SDK sends, and lists what the SDK created', async () => {
    const api = await started(paddleRegistrations(PADDLE_KEY, []));
    await sdk(api.url).notificationSettings.create({
      description: 'hookledger',
      destination: HOOK_URL,
      subscribedEvents: ['transaction.completed'],
      type: 'url',
    });
    const ours = paddleRegistrar({ apiKey: PADDLE_KEY, credential: 'sources.billing_204.apiKey', baseUrl: api.url });
    await ours.create({ url: HOOK_URL, events: ['transaction.paid'] });
    const [sdkBody, ourBody] = api.requests.filter((r) => r.method === 'POST').map((r) => keysOf(r.body));
    expect(ourBody).toEqual(sdkBody);
    expect((await ours.list()).map((e) => e.events)).toEqual([['transaction.completed'], ['transaction.paid']]);
  });
});
