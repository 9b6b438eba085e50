/**
 * `hookledger gaps` on the local stack against a Stripe stand-in serving `GET /v1/events` as Stripe
 * documents it, called through the `stripe` SDK: five events listed, three sent as signed webhooks;
 * the other two are found, recovered through intake's write path (origin provider_api), delivered to
 * every subscribed consumer once; reconcile is clean; a second run finds nothing; the webhook of a
 * recovered event is then a duplicate. Also a 429 waited out for its Retry-After, and a 401 naming
 * the credential (never its value). Recovery records only the event types a source declares it
 * receives (`events`): a listed type the endpoint does not receive is skipped and never charged. A list
 * that repeats its page forever stops at page 2, the command exiting 3 with the provider and page.
 */
import { createHmac } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineConfig, type HookledgerConfig } from '../../core/config/schema';
import type { GapReport } from '../../core/gaps';
import defaults from '../../hookledger.config';
import { type LocalStack, stackState } from '../../local/stack';
import { writeState } from '../../local/state';
import { waitFor } from '../local/support';
import { runCli } from '../support/cli';
import {
  githubApi,
  type HookDelivery,
  hookDelivery,
  type PaddleNotification,
  paddleApi,
  paddleNotification,
  type SquareEvent,
  type StandIn,
  type StripeEvent,
  squareApi,
  squareEvent,
  stripeApi,
  stripeEvent,
} from '../support/provider-apis';
import { ledgerRows, startTestStack } from '../support/stack';

const API_KEY = 'sk_test_51GapCheckStandInKey0000';
const GITHUB_TOKEN = 'ghp_GapCheckStandInToken000000000000000';
const HOOK = 'repos/octo-org/ledger/hooks/12';
let stack: LocalStack;
let api: StandIn;
let github: StandIn;
let paddle: StandIn;
let square: StandIn;
let notifications: PaddleNotification[] = [];
let squareEvents: SquareEvent[] = [];
const PADDLE_KEY = 'pdl_sdbx_apikey_01gapcheckstandin';
const SQUARE_TOKEN = 'EAAAgapCheckStandInAccessToken';
let deliveries: HookDelivery[] = [];
/** The body GitHub sent (and re-sends) for each delivery guid. */
const bodies = new Map<string, string>();
/** Redeliveries the stand-in made: each is a signed POST to the stack, as GitHub's. */
const redelivered: Promise<number>[] = [];
let config: HookledgerConfig;
let statePath: string;
let events: StripeEvent[] = [];
const now = Date.now();
const PAYMENTS_KEY = 'sk_test_51GapPaymentsStandInKey00';
let payments: StandIn;
/** A Stripe account's list: one type the endpoint receives, one it does not (billing-meter is subscribed to both). */
let paymentEvents: StripeEvent[] = [];
const LOOP_KEY = 'sk_test_51GapLoopStandInKey000000';
/** A Stripe stand-in gone wrong: every request answered with the same page and has_more: true. */
let loop: { url: string; requests: () => number; close(): Promise<void> };

const cli = (argv: string[]) => runCli(argv, config, { USER: 'e2e', HOOKLEDGER_STATE: statePath });

function setApiKey(value: string, source = 'stripe'): void {
  const file = JSON.parse(readFileSync(stack.secretsFile, 'utf8'));
  file.sources[source].apiKey = value;
  writeFileSync(stack.secretsFile, JSON.stringify(file), { mode: 0o600 });
}

async function sendWebhook(event: StripeEvent) {
  const payload = JSON.stringify(event, null, 2);
  const secret = (await stack.secrets.get('stripe')).current;
  const res = await fetch(stack.webhookUrl('stripe'), {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'stripe-signature': Stripe.webhooks.generateTestHeaderString({ payload, secret }) },
    body: payload,
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** A GitHub webhook as GitHub signs it: x-hub-signature-256 over the body, the delivery guid in x-github-delivery. */
async function sendGithubWebhook(delivery: HookDelivery): Promise<number> {
  const body = bodies.get(delivery.guid)!;
  const secret = (await stack.secrets.get('github')).current;
  const res = await fetch(stack.webhookUrl('github'), {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-github-delivery': delivery.guid,
      'x-github-event': delivery.event,
      'x-hub-signature-256': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
    },
    body,
  });
  await res.body?.cancel();
  return res.status;
}

beforeAll(async () => {
  const guid = (n: number) => `7a1c${n}e00-cf3a-11ef-8e2b-0c1a2b3c4d5e`;
  deliveries = [
    hookDelivery(9001, guid(1), 'issues', now - 45 * 60_000, 200),
    hookDelivery(9002, guid(2), 'issues', now - 35 * 60_000, 503),
    hookDelivery(9003, guid(3), 'push', now - 25 * 60_000, 200),
    hookDelivery(9004, guid(4), 'push', now - 15 * 60_000, 0),
    // guid 4 was redelivered by hand and failed again: the latest delivery is the one to re-send.
    { ...hookDelivery(9005, guid(4), 'push', now - 5 * 60_000, 503), redelivery: true },
  ];
  for (const [n, d] of deliveries.entries()) {
    bodies.set(d.guid, JSON.stringify({ action: 'opened', number: 40 + n, repository: { full_name: 'octo-org/ledger' } }));
  }
  github = await githubApi(
    GITHUB_TOKEN,
    HOOK,
    () => deliveries,
    (d) => void redelivered.push(sendGithubWebhook(d)),
    2,
  );
  notifications = [
    paddleNotification(1, 'evt_01gappaddle0001', 'transaction.completed', now - 40 * 60_000, 'ntfset_01gap'),
    // The same event for a second destination: one event, listed once.
    paddleNotification(2, 'evt_01gappaddle0001', 'transaction.completed', now - 40 * 60_000, 'ntfset_01other'),
    paddleNotification(3, 'evt_01gappaddle0002', 'subscription.created', now - 30 * 60_000, 'ntfset_01gap'),
    paddleNotification(4, 'evt_01gappaddle0003', 'transaction.completed', now - 20 * 60_000, 'ntfset_01gap'),
  ];
  paddle = await paddleApi(PADDLE_KEY, () => notifications, 1);
  squareEvents = [
    squareEvent('6a8f5f28-54a1-4eb0-a98a-3111513fd4fc', 'payment.updated', now - 50 * 60_000, 'MLEFBHHSJGVHD'),
    squareEvent('b3adf364-4937-436e-a833-49c72b4baee8', 'payment.created', now - 10 * 60_000, 'MLEFBHHSJGVHD'),
  ];
  square = await squareApi(SQUARE_TOKEN, () => squareEvents, 1);
  events = [
    stripeEvent('evt_1GapA01', 'invoice.paid', now - 50 * 60_000, 'acct_tenant_204', 'in_8Rt2Lm'),
    stripeEvent('evt_1GapB02', 'customer.created', now - 40 * 60_000, 'acct_tenant_204', 'cus_Q1'),
    stripeEvent('evt_1GapC03', 'invoice.paid', now - 30 * 60_000, 'acct_tenant_205', 'in_9Zk3'),
    stripeEvent('evt_1GapD04', 'invoice.payment_failed', now - 20 * 60_000, 'acct_tenant_205', 'in_7Yx1'),
    stripeEvent('evt_1GapE05', 'customer.created', now - 10 * 60_000, 'acct_tenant_204', 'cus_Q2'),
    // A type the endpoint does not enable (gapCheck.types): listed by Stripe, never sent, never missing.
    stripeEvent('evt_1GapBal0', 'balance.available', now - 55 * 60_000, 'acct_tenant_204', 'txn_1'),
    // Outside the window -1h: never listed by a run over the last hour.
    stripeEvent('evt_1GapOld0', 'invoice.paid', now - 3 * 3_600_000, 'acct_tenant_204', 'in_old'),
  ];
  // Pages of two: the check follows has_more / starting_after.
  api = await stripeApi(API_KEY, () => events, 2);
  paymentEvents = [
    stripeEvent('evt_3PayA01', 'payment_intent.succeeded', now - 30 * 60_000, 'acct_tenant_307', 'pi_3Q1'),
    stripeEvent('evt_3CusB02', 'customer.updated', now - 20 * 60_000, 'acct_tenant_307', 'cus_R2'),
  ];
  payments = await stripeApi(PAYMENTS_KEY, () => paymentEvents);
  loop = await repeatingStripeList(LOOP_KEY, [
    stripeEvent('evt_01J8K7M2Q4', 'invoice.paid', now - 10 * 60_000, 'acct_tenant_204', 'in_1'),
    stripeEvent('evt_01J8K7M2Q5', 'invoice.paid', now - 12 * 60_000, 'acct_tenant_204', 'in_2'),
  ]);
  const audit = defaults.consumers.find((c) => c.id === 'audit-writer')!;
  const billing = defaults.consumers.find((c) => c.id === 'billing-meter')!;
  config = defineConfig({
    sources: [
      {
        id: 'stripe',
        provider: 'stripe',
        attribution: { tenantId: { body: 'account' }, keyId: { body: 'data.object.id' } },
        // The types the endpoint receives: Stripe's list also holds balance.available, never sent here.
        events: ['invoice.paid', 'invoice.payment_failed', 'customer.created'],
        gapCheck: { api: 'stripe', baseUrl: api.url },
      },
      {
        id: 'github',
        provider: 'github',
        attribution: { tenantId: { value: 'octo-org' }, keyId: { value: 'hook_12' } },
        events: ['issues', 'push'],
        gapCheck: { api: 'github', baseUrl: github.url, hook: HOOK },
      },
      {
        id: 'paddle',
        provider: 'paddle',
        attribution: { tenantId: { body: 'data.customer_id' }, keyId: { value: 'paddle' } },
        events: ['transaction.completed', 'subscription.created'],
        gapCheck: { api: 'paddle', baseUrl: paddle.url, destination: 'ntfset_01gap' },
      },
      {
        id: 'square',
        provider: 'square',
        attribution: { keyId: { body: 'location_id' } },
        events: ['payment.updated', 'payment.created'],
        gapCheck: { api: 'square', baseUrl: square.url },
      },
      {
        id: 'stripe-payments',
        provider: 'stripe',
        attribution: { tenantId: { body: 'account' }, keyId: { body: 'data.object.id' } },
        events: ['payment_intent.succeeded'],
        gapCheck: { api: 'stripe', baseUrl: payments.url },
      },
      {
        id: 'stripe-loop',
        provider: 'stripe',
        attribution: { tenantId: { body: 'account' }, keyId: { body: 'data.object.id' } },
        events: ['invoice.paid'],
        gapCheck: { api: 'stripe', baseUrl: loop.url },
      },
    ],
    consumers: [
      { ...audit, subscribes: ['*'] },
      // customer.updated too: recording one the endpoint never received would charge it.
      { ...billing, subscribes: ['invoice.*', 'payment_intent.*', 'customer.updated'] },
    ],
  });
  stack = await startTestStack({ config });
  statePath = path.join(mkdtempSync(path.join(tmpdir(), 'hookledger-gaps-')), 'state.json');
  await writeState(statePath, stackState(stack, null));
  await stack.secrets.get('stripe');
  setApiKey(API_KEY);
  setApiKey(GITHUB_TOKEN, 'github');
  setApiKey(PADDLE_KEY, 'paddle');
  setApiKey(SQUARE_TOKEN, 'square');
  setApiKey(PAYMENTS_KEY, 'stripe-payments');
  setApiKey(LOOP_KEY, 'stripe-loop');
  for (const event of [events[0]!, events[2]!, events[4]!]) expect((await sendWebhook(event)).status).toBe(202);
}, 60_000);
afterAll(async () => {
  await stack?.stop();
  await api?.close();
  await github?.close();
  await paddle?.close();
  await square?.close();
  await payments?.close();
  await loop?.close();
});

/** `GET /v1/events` answering every request with the same page and has_more: true, counting requests. */
async function repeatingStripeList(apiKey: string, page: StripeEvent[]) {
  let requests = 0;
  const server = createServer((req, res) => {
    req.resume();
    requests++;
    const authorized = req.headers.authorization === `Bearer ${apiKey}`;
    res.writeHead(authorized ? 200 : 401, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify(
        authorized ? { object: 'list', url: '/v1/events', has_more: true, data: page } : { error: { type: 'invalid_request_error' } },
      ),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests: () => requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('hookledger gaps against the Stripe events API (stand-in, through the stripe SDK)', () => {
  it('lists exactly the two events Stripe sent that no receipt names (of the types the endpoint enables), and exits 1', async () => {
    const out = await cli(['gaps', '--source', 'stripe', '--from', '-1h', '--json']);
    expect(out.stderr).toBe('');
    expect(out.code).toBe(1);
    const report = JSON.parse(out.stdout) as GapReport;
    expect(report).toMatchObject({ source: 'stripe', api: 'stripe', providerEvents: 5, recovered: [] });
    // balance.available is listed by Stripe but not among the source's events: skipped, never missing.
    expect(report.skipped).toEqual({ events: 1, types: ['balance.available'] });
    expect(report.missing).toEqual([
      { eventId: 'evt_1GapB02', type: 'customer.created', createdAt: new Date(events[1]!.created * 1000).toISOString() },
      { eventId: 'evt_1GapD04', type: 'invoice.payment_failed', createdAt: new Date(events[3]!.created * 1000).toISOString() },
    ]);
    // Three pages of two, each through the SDK with the key as a bearer token.
    const listed = api.requests.filter((r) => r.path === '/v1/events');
    expect(listed.map((r) => r.query.get('starting_after'))).toEqual([null, 'evt_1GapD04', 'evt_1GapB02']);
  });

  it('--recover records both through intake (origin provider_api) and every subscribed consumer gets each once', async () => {
    const out = await cli(['gaps', '--source', 'stripe', '--from', '-1h', '--recover', '--json']);
    expect(out.stderr).toBe('');
    expect(out.code).toBe(0);
    const report = JSON.parse(out.stdout) as GapReport;
    expect(report.missing.map((m) => m.eventId)).toEqual(['evt_1GapB02', 'evt_1GapD04']);
    expect(report.recovered).toEqual([
      { eventId: 'evt_1GapB02', outcome: 'recorded' },
      { eventId: 'evt_1GapD04', outcome: 'recorded' },
    ]);

    // customer.created: audit-writer only; invoice.payment_failed: audit-writer and billing-meter.
    const expected = { evt_1GapB02: ['audit-writer'], evt_1GapD04: ['audit-writer', 'billing-meter'] };
    for (const [eventId, consumers] of Object.entries(expected)) {
      const traced = await waitFor(
        `${eventId} done for ${consumers.join(', ')}`,
        async () => {
          const t = JSON.parse((await cli(['trace', eventId, '--source', 'stripe', '--json'])).stdout);
          return t.deliveries.filter((d: { state: string }) => d.state === 'done').length === consumers.length ? t : undefined;
        },
        15_000,
      );
      expect(traced.receipt).toMatchObject({ source: 'stripe', eventId, origin: 'provider_api', consumers, payload: 'present' });
      expect(traced.receipt.secretVersion).toBeUndefined();
      expect(
        traced.deliveries.map((d: { consumer: string; state: string; attempts: number }) => [d.consumer, d.state, d.attempts]),
      ).toEqual(consumers.map((c) => [c, 'done', 1]));
    }
    const tenants = (await ledgerRows(stack)).filter((r) => r.eventId === 'evt_1GapD04').map((r) => r.tenantId);
    expect(tenants).toEqual(['acct_tenant_205', 'acct_tenant_205']);

    const reconciled = await cli(['reconcile', '--from', '-1h', '--grace', '0', '--json']);
    expect(reconciled.code).toBe(0);
    expect(JSON.parse(reconciled.stdout)).toMatchObject({ receipts: 5, expectedDeliveries: 8, violations: [] });

    const again = await cli(['gaps', '--source', 'stripe', '--from', '-1h', '--json']);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ providerEvents: 5, missing: [], recovered: [] });
  });

  it('a recovered event arriving later by webhook is a duplicate: 200, no second delivery', async () => {
    const before = (await ledgerRows(stack)).filter((r) => r.eventId === 'evt_1GapD04').length;
    const late = await sendWebhook(events[3]!);
    expect(late).toEqual({ status: 200, body: { status: 'duplicate', event_id: 'evt_1GapD04' } });
    expect((await ledgerRows(stack)).filter((r) => r.eventId === 'evt_1GapD04').length).toBe(before);
  });

  it('waits out a 429 for its Retry-After (1 s) and then lists the page', async () => {
    const first = api.requests.length;
    api.fail(429, { 'retry-after': '1' });
    const out = await cli(['gaps', '--source', 'stripe', '--from', '-1h', '--json']);
    expect(out.code).toBe(0);
    expect(out.stderr).toContain('retrying in 1 s (Retry-After)');
    const seen = api.requests.slice(first);
    expect(seen.length).toBe(4); // the 429, then the three pages
    expect(seen[1]!.at - seen[0]!.at).toBeGreaterThanOrEqual(1000);
  });

  it('exits 3 naming the credential, never its value, when Stripe refuses the key (401)', async () => {
    setApiKey('sk_test_revoked_9f8e7d6c5b4a');
    try {
      const out = await cli(['gaps', '--source', 'stripe', '--from', '-1h', '--json']);
      expect(out.code).toBe(3);
      expect(out.stdout).toBe('');
      expect(out.stderr).toContain('the stripe API refused the credential (401): check sources.stripe.apiKey in ');
      expect(out.stderr).not.toContain('sk_test_revoked');
    } finally {
      setApiKey(API_KEY);
    }
  });

  it('refuses a source without gapCheck with a usage error naming what to add (exit 2)', async () => {
    const out = await cli(['gaps', '--source', 'nope', '--from', '-1h']);
    expect(out.code).toBe(2);
    expect(out.stderr).toContain('unknown source "nope"');
  });
});

describe('hookledger gaps against GitHub hook deliveries (stand-in, through @octokit/rest)', () => {
  it('finds the deliveries no receipt names, asks GitHub to redeliver the latest of each, and the signed webhooks are recorded', async () => {
    for (const d of [deliveries[0]!, deliveries[2]!]) expect(await sendGithubWebhook(d)).toBe(202);

    const found = await cli(['gaps', '--source', 'github', '--from', '-1h', '--json']);
    expect(found.code).toBe(1);
    const report = JSON.parse(found.stdout) as GapReport;
    expect(report).toMatchObject({ api: 'github', providerEvents: 4, recovered: [] });
    expect(report.missing.map((m) => [m.eventId, m.type])).toEqual([
      [deliveries[1]!.guid, 'issues'],
      [deliveries[3]!.guid, 'push'],
    ]);

    const recovered = await cli(['gaps', '--source', 'github', '--from', '-1h', '--recover', '--json']);
    expect(recovered.stderr).toBe('');
    expect(recovered.code).toBe(0);
    expect((JSON.parse(recovered.stdout) as GapReport).recovered).toEqual([
      { eventId: deliveries[1]!.guid, outcome: 'redelivery_requested' },
      { eventId: deliveries[3]!.guid, outcome: 'redelivery_requested' },
    ]);
    const attempts = github.requests.filter((r) => r.method === 'POST').map((r) => r.path);
    expect(attempts).toEqual([`/${HOOK}/deliveries/9002/attempts`, `/${HOOK}/deliveries/9005/attempts`]);
    expect(await Promise.all(redelivered)).toEqual([202, 202]);

    // A redelivery is a signed webhook like any other: a receipt verified by the current secret.
    const traced = JSON.parse((await cli(['trace', deliveries[3]!.guid, '--source', 'github', '--json'])).stdout);
    expect(traced.receipt).toMatchObject({ eventType: 'push', tenantId: 'octo-org', origin: 'webhook', secretVersion: 'current' });

    const again = await cli(['gaps', '--source', 'github', '--from', '-1h', '--json']);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ providerEvents: 4, missing: [] });
  });
});

describe('hookledger gaps --recover against Paddle notifications and Square events (stand-ins of the documented endpoints)', () => {
  it.each([
    ['paddle', ['evt_01gappaddle0001', 'evt_01gappaddle0002', 'evt_01gappaddle0003'], 'ctm_204'],
    ['square', ['6a8f5f28-54a1-4eb0-a98a-3111513fd4fc', 'b3adf364-4937-436e-a833-49c72b4baee8'], 'MLEFBHHSJGVHD'],
  ])('%s: every listed event recovered once through intake, pages followed, the second run clean', async (source, ids, tenantId) => {
    const api = source === 'paddle' ? paddle : square;
    const out = await cli(['gaps', '--source', source, '--from', '-1h', '--recover', '--json']);
    expect(out.stderr).toBe('');
    expect(out.code).toBe(0);
    const report = JSON.parse(out.stdout) as GapReport;
    expect(report.providerEvents).toBe(ids.length);
    expect(report.missing.map((m) => m.eventId)).toEqual(ids);
    expect(report.recovered).toEqual(ids.map((eventId) => ({ eventId, outcome: 'recorded' })));
    for (const eventId of ids) {
      const traced = await waitFor(
        `${eventId} delivered`,
        async () => {
          const t = JSON.parse((await cli(['trace', eventId, '--source', source, '--json'])).stdout);
          return t.deliveries.length > 0 && t.deliveries.every((d: { state: string }) => d.state === 'done') ? t : undefined;
        },
        15_000,
      );
      expect(traced.receipt).toMatchObject({ source, eventId, tenantId, origin: 'provider_api', consumers: ['audit-writer'] });
      expect(traced.deliveries.map((d: { consumer: string; attempts: number }) => [d.consumer, d.attempts])).toEqual([['audit-writer', 1]]);
    }
    const again = await cli(['gaps', '--source', source, '--from', '-1h', '--json']);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ providerEvents: ids.length, missing: [] });
    // Pages of one: one request per event, per run.
    expect(api.requests.length).toBe(2 * ids.length);
    if (source === 'paddle') expect(api.requests.every((r) => r.query.get('notification_setting_id') === 'ntfset_01gap')).toBe(true);
  });
});

describe('gap recovery records only the event types the source declares (events)', () => {
  it('--recover records payment_intent.succeeded, skips customer.updated the endpoint never receives, and billing-meter charges only evt_3PayA01', async () => {
    const out = await cli(['gaps', '--source', 'stripe-payments', '--from', '-1h', '--recover', '--json']);
    expect(out.stderr).toBe('');
    expect(out.code).toBe(0);
    const report = JSON.parse(out.stdout) as GapReport;
    expect(report).toMatchObject({ source: 'stripe-payments', providerEvents: 1, skipped: { events: 1, types: ['customer.updated'] } });
    expect(report.missing.map((m) => [m.eventId, m.type])).toEqual([['evt_3PayA01', 'payment_intent.succeeded']]);
    expect(report.recovered).toEqual([{ eventId: 'evt_3PayA01', outcome: 'recorded' }]);

    await waitFor(
      'evt_3PayA01 done for audit-writer and billing-meter',
      async () => {
        const t = JSON.parse((await cli(['trace', 'evt_3PayA01', '--source', 'stripe-payments', '--json'])).stdout);
        return t.deliveries.filter((d: { state: string }) => d.state === 'done').length === 2 ? t : undefined;
      },
      15_000,
    );
    const never = await cli(['trace', 'evt_3CusB02', '--source', 'stripe-payments', '--json']);
    expect(never.code).toBe(1);
    expect((await ledgerRows(stack)).filter((r) => r.eventId === 'evt_3CusB02')).toEqual([]);

    const usage = await cli(['usage', '--from', '-1h', '--tenant', 'acct_tenant_307', '--consumer', 'billing-meter', '--json']);
    expect(usage.code).toBe(0);
    expect(JSON.parse(usage.stdout)).toMatchObject({
      rows: [{ tenantId: 'acct_tenant_307', consumerId: 'billing-meter', units: 1, deliveries: 1 }],
      totalUnits: 1,
    });

    const human = await cli(['gaps', '--source', 'stripe-payments', '--from', '-1h']);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain('skipped 1 listed event of types the source does not declare (events): customer.updated');
  });
});

describe('hookledger gaps against a list that does not advance', () => {
  it('exits 3 naming the provider and the page when Stripe answers the same page with has_more forever: 2 requests, nothing recorded', async () => {
    const out = await cli(['gaps', '--source', 'stripe-loop', '--from', '-1h', '--recover', '--json']);
    expect(out.stdout).toBe('');
    expect(out.stderr).toBe(
      'error: the stripe API: paging stopped at page 2: every event on it was on an earlier page, yet it points to a next one: the list does not advance\n',
    );
    expect(out.code).toBe(3);
    expect(loop.requests()).toBe(2);
    expect((await ledgerRows(stack)).filter((r) => r.eventId.startsWith('evt_01J8K7M2Q'))).toEqual([]);
  });
});
