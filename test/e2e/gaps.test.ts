/**
 * `hookledger gaps` on the local stack against a Stripe stand-in serving `GET /v1/events` as Stripe
 * documents it, called through the `stripe` SDK: five events listed, three sent as signed webhooks;
 * the other two are found, recovered through intake's write path (origin provider_api), delivered to
 * every subscribed consumer once; reconcile is clean; a second run finds nothing; the webhook of a
 * recovered event is then a duplicate. Also a 429 waited out for its Retry-After, and a 401 naming
 * the credential (never its value).
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
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
import { type StandIn, type StripeEvent, stripeApi, stripeEvent } from '../support/provider-apis';
import { ledgerRows, startTestStack } from '../support/stack';

const API_KEY = 'sk_test_51GapCheckStandInKey0000';
let stack: LocalStack;
let api: StandIn;
let config: HookledgerConfig;
let statePath: string;
let events: StripeEvent[] = [];
const now = Date.now();

const cli = (argv: string[]) => runCli(argv, config, { USER: 'e2e', HOOKLEDGER_STATE: statePath });

function setApiKey(value: string): void {
  const file = JSON.parse(readFileSync(stack.secretsFile, 'utf8'));
  file.sources.stripe.apiKey = value;
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

beforeAll(async () => {
  events = [
    stripeEvent('evt_1GapA01', 'invoice.paid', now - 50 * 60_000, 'acct_tenant_204', 'in_8Rt2Lm'),
    stripeEvent('evt_1GapB02', 'customer.created', now - 40 * 60_000, 'acct_tenant_204', 'cus_Q1'),
    stripeEvent('evt_1GapC03', 'invoice.paid', now - 30 * 60_000, 'acct_tenant_205', 'in_9Zk3'),
    stripeEvent('evt_1GapD04', 'invoice.payment_failed', now - 20 * 60_000, 'acct_tenant_205', 'in_7Yx1'),
    stripeEvent('evt_1GapE05', 'customer.created', now - 10 * 60_000, 'acct_tenant_204', 'cus_Q2'),
    // Outside the window -1h: never listed by a run over the last hour.
    stripeEvent('evt_1GapOld0', 'invoice.paid', now - 3 * 3_600_000, 'acct_tenant_204', 'in_old'),
  ];
  // Pages of two: the check follows has_more / starting_after.
  api = await stripeApi(API_KEY, () => events, 2);
  const audit = defaults.consumers.find((c) => c.id === 'audit-writer')!;
  const billing = defaults.consumers.find((c) => c.id === 'billing-meter')!;
  config = defineConfig({
    sources: [
      {
        id: 'stripe',
        provider: 'stripe',
        attribution: { tenantId: { body: 'account' }, keyId: { body: 'data.object.id' } },
        gapCheck: { api: 'stripe', baseUrl: api.url },
      },
    ],
    consumers: [
      { ...audit, subscribes: ['*'] },
      { ...billing, subscribes: ['invoice.*'] },
    ],
  });
  stack = await startTestStack({ config });
  statePath = path.join(mkdtempSync(path.join(tmpdir(), 'hookledger-gaps-')), 'state.json');
  await writeState(statePath, stackState(stack, null));
  await stack.secrets.get('stripe');
  setApiKey(API_KEY);
  for (const event of [events[0]!, events[2]!, events[4]!]) expect((await sendWebhook(event)).status).toBe(202);
}, 60_000);
afterAll(async () => {
  await stack?.stop();
  await api?.close();
});

describe('hookledger gaps against the Stripe events API (stand-in, through the stripe SDK)', () => {
  it('lists exactly the two events Stripe sent that no receipt names, and exits 1', async () => {
    const out = await cli(['gaps', '--source', 'stripe', '--from', '-1h', '--json']);
    expect(out.stderr).toBe('');
    expect(out.code).toBe(1);
    const report = JSON.parse(out.stdout) as GapReport;
    expect(report).toMatchObject({ source: 'stripe', api: 'stripe', providerEvents: 5, recovered: [] });
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
