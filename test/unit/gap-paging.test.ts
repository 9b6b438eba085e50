/**
 * Paging through a provider's list (adapters/provider-events.ts) against misbehaving stand-ins on
 * loopback, one per provider and its cursor style (Stripe: `starting_after` the last id; GitHub: the
 * Link header's cursor; Paddle: the `next` URL; Square: `cursor`): a page that repeats itself, a cursor
 * that does not move, a list that never ends. Each run stops at its bound with a ProviderPagingError
 * naming the provider and the page, after a counted number of requests; events seen twice are listed once.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ProviderApiError, ProviderPagingError, providerEvents } from '../../adapters/provider-events';
import { DEFAULT_GAP_MAX_PAGES, type GapApi } from '../../core/gaps';
import { hookDelivery, paddleNotification, squareEvent, stripeEvent } from '../support/provider-apis';

const NOW = Date.now();
const window = { from: NOW - 3_600_000, to: NOW };
const HOOK = 'repos/octo-org/ledger/hooks/12';
/** Event n of every provider: created n seconds ago, so a higher n is older. */
const eventId = (api: GapApi, n: number) =>
  api === 'github' ? `7a1c0e00-cf3a-11ef-8e2b-0000000000${String(n).padStart(2, '0')}` : `evt_01J8K7M2Q${n}`;

/** One page as each provider answers it: these items, and a pointer to the next page when `next` is given. */
function page(api: GapApi, base: string, items: readonly number[], next: string | undefined) {
  const at = (n: number) => NOW - n * 1000;
  switch (api) {
    case 'stripe':
      // The cursor is the last event's id, sent back as starting_after: `next` only says whether there is more.
      return {
        body: {
          object: 'list',
          url: '/v1/events',
          has_more: next !== undefined,
          data: items.map((n) => stripeEvent(eventId(api, n), 'payment_intent.succeeded', at(n), 'acct_tenant_204', `pi_${n}`)),
        },
      };
    case 'github':
      return {
        body: items.map((n) => hookDelivery(9000 + n, eventId(api, n), 'push', at(n), 502)),
        headers: next === undefined ? {} : { link: `<${base}/${HOOK}/deliveries?per_page=100&cursor=${next}>; rel="next"` },
      };
    case 'paddle':
      return {
        body: {
          data: items.map((n) => paddleNotification(n, eventId(api, n), 'transaction.completed', at(n), 'ntfset_01a')),
          meta: { pagination: { per_page: 200, next: `${base}/notifications?after=${next ?? ''}`, has_more: next !== undefined } },
        },
      };
    case 'square':
      return {
        body: {
          events: items.map((n) => squareEvent(eventId(api, n), 'payment.created', at(n), 'MLEFBHHSJGVHD')),
          ...(next ? { cursor: next } : {}),
        },
      };
  }
}

/** The items and next-page pointer of the n-th request (1-based). */
type Script = (request: number) => { items: readonly number[]; next?: string };

const servers: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/** A provider API on loopback that answers each request from the script, counting them. */
async function misbehaving(api: GapApi, script: Script) {
  let requests = 0;
  let base = '';
  const server = createServer((req, res) => {
    req.resume();
    requests++;
    const { items, next } = script(requests);
    const answer = page(api, base, items, next);
    res.writeHead(200, { 'content-type': 'application/json', ...(answer.headers ?? {}) });
    res.end(JSON.stringify(answer.body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  servers.push({ close: () => new Promise<void>((resolve) => server.close(() => resolve())) });
  return { base, requests: () => requests };
}

function port(api: GapApi, baseUrl: string, limits: { maxPages?: number; maxEvents?: number } = {}) {
  return providerEvents({
    api,
    apiKey: 'key_standin',
    credential: `sources.${api}.apiKey`,
    baseUrl,
    ...(api === 'github' ? { hook: HOOK } : {}),
    ...limits,
  });
}

async function failure(run: Promise<unknown>): Promise<ProviderPagingError> {
  const error = await run.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ProviderPagingError);
  // A provider failure like any other: the CLI's translation and the scheduled run's errors see it as one.
  expect(error).toBeInstanceOf(ProviderApiError);
  return error as ProviderPagingError;
}

const APIS: GapApi[] = ['stripe', 'github', 'paddle', 'square'];

describe('paging a provider list that does not advance', () => {
  it.each(APIS)('%s: the same page forever (has more, the same last id) stops at page 2 after 2 requests', async (api) => {
    const stand = await misbehaving(api, () => ({ items: [1, 2], next: 'c1' }));
    const error = await failure(port(api, stand.base).list(window));
    expect(error.message).toBe(
      `the ${api} API: paging stopped at page 2: every event on it was on an earlier page, yet it points to a next one: the list does not advance`,
    );
    expect(error).toMatchObject({ api, page: 2 });
    expect(stand.requests()).toBe(2);
  });

  it.each(['github', 'paddle', 'square'] as const)(
    '%s: new events behind a next-page cursor that never changes stop at page 2 after 2 requests',
    async (api) => {
      const stand = await misbehaving(api, (n) => ({ items: [2 * n - 1, 2 * n], next: 'c1' }));
      const error = await failure(port(api, stand.base).list(window));
      expect(error.message).toMatch(
        new RegExp(
          `^the ${api} API: paging stopped at page 2: its next-page cursor ".*c1" was already followed after page 1: the list does not advance$`,
        ),
      );
      expect(error).toMatchObject({ api, page: 2 });
      expect(stand.requests()).toBe(2);
    },
  );
});

describe('paging a provider list that never ends', () => {
  it.each(APIS)('%s: stops at gapCheck.maxPages (5): 5 requests, the error naming page 5 and the setting', async (api) => {
    const stand = await misbehaving(api, (n) => ({ items: [2 * n - 1, 2 * n], next: `c${n}` }));
    const error = await failure(port(api, stand.base, { maxPages: 5 }).list(window));
    expect(error.message).toBe(
      `the ${api} API: paging stopped at page 5: the list goes on past gapCheck.maxPages (5 pages per run); check a shorter window (--from/--to) or raise gapCheck.maxPages`,
    );
    expect(error).toMatchObject({ api, page: 5 });
    expect(stand.requests()).toBe(5);
  });

  it.each(APIS)('%s: stops once more than gapCheck.maxEvents (3) distinct events are listed: page 2, 2 requests', async (api) => {
    const stand = await misbehaving(api, (n) => ({ items: [2 * n - 1, 2 * n], next: `c${n}` }));
    const error = await failure(port(api, stand.base, { maxEvents: 3 }).list(window));
    expect(error.message).toBe(
      `the ${api} API: paging stopped at page 2: more than gapCheck.maxEvents (3) events in the window; check a shorter window (--from/--to) or raise gapCheck.maxEvents`,
    );
    expect(stand.requests()).toBe(2);
  });

  it(`square: without a configured bound, stops at the default of ${DEFAULT_GAP_MAX_PAGES} pages`, async () => {
    const stand = await misbehaving('square', (n) => ({ items: [n], next: `c${n}` }));
    const error = await failure(port('square', stand.base).list(window));
    expect(error.page).toBe(DEFAULT_GAP_MAX_PAGES);
    expect(stand.requests()).toBe(DEFAULT_GAP_MAX_PAGES);
  });
});

describe('paging a list whose pages overlap', () => {
  it.each(APIS)('%s: an event on two pages is listed once', async (api) => {
    const stand = await misbehaving(api, (n) => (n === 1 ? { items: [1, 2], next: 'c1' } : { items: [2, 3] }));
    const listed = await port(api, stand.base).list(window);
    // Oldest first: event 3 was created 3 s ago.
    expect(listed.map((e) => e.eventId)).toEqual([eventId(api, 3), eventId(api, 2), eventId(api, 1)]);
    expect(stand.requests()).toBe(2);
  });
});
