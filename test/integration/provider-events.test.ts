/**
 * The gap check's provider clients (adapters/provider-events.ts) against stand-ins of each API on
 * loopback, and the `gapCheck` configuration: rate limits waited out for their Retry-After (seconds
 * or an HTTP date), credentials refused by name and never by value, page links to another origin
 * refused, base URLs other than https refused except loopback.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ProviderApiError, ProviderAuthError, providerEvents, retryAfterMs } from '../../adapters/provider-events';
import { defineConfig, type HookledgerConfigInput } from '../../core/config/schema';
import {
  githubApi,
  hookDelivery,
  paddleApi,
  paddleNotification,
  type StandIn,
  squareApi,
  squareEvent,
  stripeApi,
  stripeEvent,
} from '../support/provider-apis';

const NOW = Date.now();
const HOUR = 3_600_000;
const window = { from: NOW - HOUR, to: NOW };
const running: StandIn[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.close()));
});
const started = async (s: Promise<StandIn>) => {
  const api = await s;
  running.push(api);
  return api;
};

/** A client whose sleeps are recorded, not waited. */
function client(options: Parameters<typeof providerEvents>[0]) {
  const waits: number[] = [];
  const port = providerEvents({ ...options, sleep: async (ms) => void waits.push(ms) });
  return { port, waits };
}

describe('provider clients against stand-ins', () => {
  it('paddle: waits out a 429 whose Retry-After is an HTTP date, then lists one event per event id across pages', async () => {
    const api = await started(
      paddleApi(
        'pdl_key_1',
        () => [
          paddleNotification(1, 'evt_01p1', 'transaction.completed', NOW - 30 * 60_000, 'ntfset_01a'),
          paddleNotification(2, 'evt_01p1', 'transaction.completed', NOW - 30 * 60_000, 'ntfset_01b'),
          paddleNotification(3, 'evt_01p2', 'transaction.paid', NOW - 20 * 60_000, 'ntfset_01a'),
        ],
        1,
      ),
    );
    api.fail(429, { 'retry-after': new Date(Date.now() + 3000).toUTCString() });
    const { port, waits } = client({ api: 'paddle', apiKey: 'pdl_key_1', credential: 'sources.paddle.apiKey', baseUrl: api.url });
    const listed = await port.list(window);
    expect(listed.map((e) => [e.eventId, e.type])).toEqual([
      ['evt_01p1', 'transaction.completed'],
      ['evt_01p2', 'transaction.paid'],
    ]);
    // The webhook body Paddle sends is the notification's payload.
    expect(JSON.parse(listed[0]!.body!.toString())).toMatchObject({
      event_id: 'evt_01p1',
      notification_id: 'ntf_01h00000000000000000000001',
    });
    expect(waits).toHaveLength(1);
    expect(waits[0]).toBeGreaterThan(1000);
    expect(waits[0]).toBeLessThanOrEqual(3000);
    expect(api.requests.map((r) => r.query.get('after'))).toEqual([
      null,
      null,
      'ntf_01h00000000000000000000001',
      'ntf_01h00000000000000000000002',
    ]);
  });

  it('paddle: refuses to follow a next link to another origin (the key would go with it)', async () => {
    let requests = 0;
    const server = createServer((_req, res) => {
      requests++;
      res.writeHead(200, { 'content-type': 'application/json' });
      const page = [paddleNotification(1, 'evt_01p1', 'transaction.paid', NOW - 60_000, 'ntfset_01a')];
      res.end(
        JSON.stringify({
          data: page,
          meta: { pagination: { per_page: 1, next: 'http://127.0.0.2:9/notifications?after=ntf_1', has_more: true } },
        }),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = client({
        api: 'paddle',
        apiKey: 'pdl_key_1',
        credential: 'x',
        baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      });
      await expect(port.list(window)).rejects.toThrow(
        'the paddle API: refused to follow a page link to another origin (http://127.0.0.2:9)',
      );
      expect(requests).toBe(1);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('square: 403 names the credential and its scope, never the token', async () => {
    const api = await started(squareApi('EAAA_token_ok', () => []));
    api.fail(403);
    const { port } = client({
      api: 'square',
      apiKey: 'EAAA_token_ok',
      credential: 'sources.square.apiKey in /tmp/s.json',
      baseUrl: api.url,
    });
    const error = await port.list(window).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProviderAuthError);
    expect((error as Error).message).toBe(
      'the square API refused the request (403): the credential sources.square.apiKey in /tmp/s.json lacks the permission to list events (see README "Provider gap check")',
    );
    expect((error as Error).message).not.toContain('EAAA_token_ok');
  });

  it('square: a 429 without Retry-After backs off 1 s, 2 s; created_at range and cursor sent as documented', async () => {
    const api = await started(
      squareApi(
        'EAAA_t',
        () => [squareEvent('e-1', 'payment.created', NOW - 60_000, 'M1'), squareEvent('e-2', 'payment.updated', NOW - 30_000, 'M1')],
        1,
      ),
    );
    api.fail(429);
    api.fail(429);
    const { port, waits } = client({ api: 'square', apiKey: 'EAAA_t', credential: 'x', baseUrl: api.url });
    expect((await port.list(window)).map((e) => e.eventId)).toEqual(['e-1', 'e-2']);
    expect(waits).toEqual([1000, 2000]);
    const sent = api.requests.at(-1)!.body as { cursor: string; query: { filter: { created_at: { start_at: string; end_at: string } } } };
    expect(sent.cursor).toBe('1');
    expect(sent.query.filter.created_at).toEqual({
      start_at: new Date(window.from).toISOString(),
      end_at: new Date(window.to).toISOString(),
    });
  });

  it('github: a spent rate limit (403, x-ratelimit-remaining: 0, Retry-After: 2) is waited out; 401 names the credential', async () => {
    const hook = 'orgs/octo-org/hooks/7';
    const api = await started(
      githubApi(
        'ghp_ok',
        hook,
        () => [hookDelivery(1, 'guid-1', 'push', NOW - 60_000, 502)],
        () => {},
      ),
    );
    api.fail(403, { 'x-ratelimit-remaining': '0', 'retry-after': '2' });
    const { port, waits } = client({ api: 'github', apiKey: 'ghp_ok', credential: 'sources.gh.apiKey', baseUrl: api.url, hook });
    expect((await port.list(window)).map((e) => [e.eventId, e.deliveryId])).toEqual([['guid-1', '1']]);
    expect(waits).toEqual([2000]);

    const refused = providerEvents({ api: 'github', apiKey: 'ghp_revoked', credential: 'sources.gh.apiKey', baseUrl: api.url, hook });
    await expect(refused.list(window)).rejects.toThrow('the github API refused the credential (401): check sources.gh.apiKey');
  });

  it('stripe: a Retry-After beyond the longest honoured fails the run instead of sleeping for it', async () => {
    const api = await started(stripeApi('sk_test_ok', () => [stripeEvent('evt_1', 'invoice.paid', NOW - 60_000, 'acct_1', 'in_1')]));
    api.fail(429, { 'retry-after': '3600' });
    const { port, waits } = client({ api: 'stripe', apiKey: 'sk_test_ok', credential: 'x', baseUrl: api.url, maxRetryAfterMs: 60_000 });
    const error = await port.list(window).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProviderApiError);
    expect((error as Error).message).toBe('the stripe API: rate limited (429) with Retry-After 3600 s; run again after that');
    expect(waits).toEqual([]);
  });

  it('reads Retry-After as seconds or an HTTP date', () => {
    expect(retryAfterMs('7')).toBe(7000);
    expect(retryAfterMs('Wed, 21 Oct 2026 07:28:00 GMT', Date.parse('2026-10-21T07:27:30Z'))).toBe(30_000);
    expect(retryAfterMs('soon')).toBeUndefined();
    expect(retryAfterMs(undefined)).toBeUndefined();
  });
});

describe('gapCheck configuration', () => {
  const withGap = (gapCheck: Record<string, unknown>): HookledgerConfigInput => ({
    sources: [
      {
        id: 'stripe',
        provider: 'stripe',
        attribution: { tenantId: { body: 'account' }, keyId: { body: 'data.object.id' } },
        gapCheck: gapCheck as never,
      },
    ],
    consumers: [{ id: 'audit-writer', subscribes: ['*'], fields: ['id'], entry: 'lambdas/consumers/audit-writer.ts' }],
  });

  it('refuses an http:// baseUrl to a host other than loopback (the API key would travel in the clear)', () => {
    expect(() => defineConfig(withGap({ api: 'stripe', baseUrl: 'http://stripe.internal.example:8080' }))).toThrow(
      /gapCheck\.baseUrl.*"http:\/\/stripe\.internal\.example:8080" must be https:\/\//,
    );
  });

  it('accepts https:// anywhere and http:// on 127.0.0.1 and localhost; defaults recover false, every 24 h, 500 pages, 50,000 events', () => {
    for (const baseUrl of ['https://stripe-proxy.example.com', 'http://127.0.0.1:4010', 'http://localhost:4010']) {
      expect(defineConfig(withGap({ api: 'stripe', baseUrl })).sources[0]!.gapCheck).toEqual({
        api: 'stripe',
        baseUrl,
        recover: false,
        everyHours: 24,
        maxPages: 500,
        maxEvents: 50_000,
      });
    }
  });

  it('refuses a github gap check without the hook whose deliveries it lists, and an api it does not know', () => {
    expect(() => defineConfig(withGap({ api: 'github' }))).toThrow(/gapCheck\.hook.*repos\/<owner>\/<repo>\/hooks\/<id>/);
    expect(() => defineConfig(withGap({ api: 'stripe', hook: 'repos/a/b/hooks/1' }))).toThrow(/hook is for the github gap check only/);
    expect(() => defineConfig(withGap({ api: 'chargebee' }))).toThrow(/gapCheck\.api/);
    expect(() => defineConfig(withGap({ api: 'stripe', baseUrl: 'https://proxy.example.com/stripe' }))).toThrow(
      /the stripe SDK takes a host, port and protocol, no path: "https:\/\/proxy\.example\.com\/stripe" would lose "\/stripe"/,
    );
  });
});
