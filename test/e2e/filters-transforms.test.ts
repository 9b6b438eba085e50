/**
 * Consumer filters and HTTP transforms on the local stack, through HTTP: a filtered consumer gets
 * exactly the events its pattern matches (decided at intake: the receipt names it or not), reconcile
 * finds nothing missing, `filter test` says which part decided, a widened filter is given the past
 * events that now match by `backfill` once; an HTTP destination with a transform receives the
 * transformed body signed (verified with `standardwebhooks`), a transform that throws quarantines
 * the delivery with its message (which never quotes the body), and a transform result fetch could not
 * send ("Zoë ✓" in a header) is quarantined transform_invalid without touching the circuit breaker.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineConfig, type HookledgerConfig } from '../../core/config/schema';
import { breakerKey } from '../../core/model';
import defaultConfig from '../../hookledger.config';
import { reconcile } from '../../lambdas/reconcile/reconcile';
import type { ConsumerHandle } from '../../lambdas/runtime/runtime';
import { type LocalStack, stackState } from '../../local/stack';
import { writeState } from '../../local/state';
import { backfill } from '../../ops/backfill';
import { trace } from '../../ops/trace';
import { runCli } from '../support/cli';
import { platformEvent } from '../support/factories';
import { bodyOf, verifiedWith } from '../support/receiver';
import { ledgerRows, send, startTestStack } from '../support/stack';

interface Received {
  readonly verified: boolean;
  readonly body: unknown;
  readonly account: string | undefined;
  readonly reference?: string;
}
const received: Received[] = [];
let receiver: Server;
let stack: LocalStack;
let config: HookledgerConfig;
let statePath: string;
let crmSecret = '';
const t0 = Date.now();

const usdOver100 = { body: { data: { currency: ['usd'], amount: [{ numeric: ['>=', 100] }] } } };
const bigUsd: ConsumerHandle = async () => ({ units: 2 });
const everything: ConsumerHandle = async () => ({ units: 1 });

const cli = (argv: string[]) => runCli(argv, config, { USER: 'e2e', HOOKLEDGER_STATE: statePath });

/** The six payment events: amount below, at and above the bound, another currency, no amount, a string amount. */
const EVENTS = [
  ['evt_01J8F1LT99', { currency: 'usd', amount: 99 }],
  ['evt_01J8F1EQ00', { currency: 'usd', amount: 100 }],
  ['evt_01J8F1GT50', { currency: 'usd', amount: 250 }],
  ['evt_01J8F1EUR5', { currency: 'eur', amount: 500 }],
  ['evt_01J8F1NOAM', { currency: 'usd' }],
  ['evt_01J8F1STR1', { currency: 'usd', amount: '150' }],
] as const;

beforeAll(async () => {
  receiver = createServer(async (req, res) => {
    const body = await bodyOf(req);
    const verified = verifiedWith([crmSecret], body, req.headers);
    received.push({
      verified,
      body: JSON.parse(body),
      account: req.headers['x-crm-account'] as string | undefined,
      ...(req.headers['x-crm-reference'] ? { reference: req.headers['x-crm-reference'] as string } : {}),
    });
    res.writeHead(verified ? 200 : 401).end();
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  config = defineConfig({
    sources: defaultConfig.sources,
    consumers: [
      { id: 'everything', subscribes: ['*'], fields: ['id'], entry: 'lambdas/consumers/audit-writer.ts' },
      {
        id: 'big-usd',
        subscribes: ['payment.*'],
        fields: ['id', 'data.amount'],
        entry: 'lambdas/consumers/audit-writer.ts',
        filter: usdOver100,
      },
      {
        id: 'crm-sync',
        kind: 'http',
        url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/deals`,
        subscribes: ['payment.*'],
        fields: ['id', 'data.amount', 'data.currency', 'data.reference'],
        transform: 'transforms/crm.ts',
        // Low, so that a handful of failures would pause it: the breaker test below relies on it.
        http: { ratePerSecond: 1000, breakAfterFailures: 3 },
      },
    ],
  });
  stack = await startTestStack({ config, handles: { 'big-usd': bigUsd, everything } });
  statePath = path.join(mkdtempSync(path.join(tmpdir(), 'hookledger-filters-')), 'state.json');
  await writeState(statePath, stackState(stack, null));
  crmSecret = (await stack.secrets.consumerSecrets().get('crm-sync')).current;
  for (const [id, data] of EVENTS) {
    expect((await send(stack, platformEvent({ id, tenant_id: 'tenant_204', data }))).status).toBe(202);
  }
  await stack.drain();
}, 45_000);
afterAll(async () => {
  await stack?.stop();
  await new Promise<void>((resolve) => receiver?.close(() => resolve()));
});

describe('a consumer filtered on { data: { currency: usd, amount >= 100 } }', () => {
  it('gets exactly the usd events of 100 and 250: not 99, eur 500, a missing amount or the string "150"', async () => {
    const rows = await ledgerRows(stack);
    expect(
      rows
        .filter((r) => r.consumerId === 'big-usd')
        .map((r) => [r.eventId, r.state, r.units])
        .sort(),
    ).toEqual([
      ['evt_01J8F1EQ00', 'done', 2],
      ['evt_01J8F1GT50', 'done', 2],
    ]);
    // The unfiltered consumer got all six.
    expect(rows.filter((r) => r.consumerId === 'everything')).toHaveLength(6);
    // The receipts name big-usd only where it matched: decided once, at intake.
    const deps = { ddb: stack.handlers.ddb, tables: stack.resources.tables, config };
    expect((await trace(deps, 'evt_01J8F1EQ00')).receipt.consumers).toEqual(['everything', 'big-usd', 'crm-sync']);
    expect((await trace(deps, 'evt_01J8F1STR1')).receipt.consumers).toEqual(['everything', 'crm-sync']);
  });

  it('reconcile over the window finds 6 receipts, 14 expected deliveries and no violations', async () => {
    const report = await reconcile(
      { ddb: stack.handlers.ddb, tables: stack.resources.tables },
      { from: t0 - 1000, to: Date.now() + 1, graceMs: 0 },
    );
    expect(report).toMatchObject({ receipts: 6, expectedDeliveries: 6 + 2 + 6, violations: [] });
  });

  it('`filter test` says match for evt_01J8F1EQ00 and names body.data.amount for the string "150" (exit 1)', async () => {
    const hit = await cli(['filter', 'test', '--consumer', 'big-usd', '--event', 'evt_01J8F1EQ00', '--json']);
    expect(hit.code).toBe(0);
    expect(JSON.parse(hit.stdout)).toMatchObject({
      matched: true,
      inDeliverySet: true,
      reason: 'body.data.currency: "usd" matches "usd"; body.data.amount: 100 matches {"numeric":[">=",100]}',
    });
    const miss = await cli(['filter', 'test', '--consumer', 'big-usd', '--event', 'evt_01J8F1STR1']);
    expect(miss.code).toBe(1);
    expect(miss.stdout).toContain('no match (decided by body.data.amount): big-usd on platform evt_01J8F1STR1 (payment.succeeded)');
    expect(miss.stdout).toContain('value "150" matches none of [{"numeric":[">=",100]}]');
    const unknown = await cli(['filter', 'test', '--consumer', 'nobody', '--event', 'evt_01J8F1EQ00']);
    expect(unknown.code).toBe(2);
  });

  it('after widening the filter to amount >= 50, backfill gives big-usd evt_01J8F1LT99 alone (dry run first), and never twice', async () => {
    const widened = defineConfig({
      ...config,
      consumers: config.consumers.map((c) =>
        c.id === 'big-usd' ? { ...c, filter: { body: { data: { currency: ['usd'], amount: [{ numeric: ['>=', 50] }] } } } } : c,
      ),
    } as Parameters<typeof defineConfig>[0]);
    const deps = { ddb: stack.handlers.ddb, tables: stack.resources.tables, config: widened, operator: 'e2e' };
    const window = { from: t0 - 1000, to: Date.now() + 1 };
    const dry = await backfill(deps, { consumer: 'big-usd', ...window, dryRun: true });
    // The 3 subscribed receipts lacking big-usd: 99 now matches; eur, missing and "150" still do not.
    expect(dry).toMatchObject({ dryRun: true, matched: 1, filteredOut: 3, added: 0 });
    const done = await backfill(deps, { consumer: 'big-usd', ...window });
    expect(done).toMatchObject({ matched: 1, added: 1, alreadyPresent: 0 });
    await stack.drain();
    const again = await backfill(deps, { consumer: 'big-usd', ...window });
    expect(again).toMatchObject({ matched: 0, added: 0 });
    const rows = (await ledgerRows(stack)).filter((r) => r.consumerId === 'big-usd');
    expect(rows.map((r) => [r.eventId, r.state, r.units]).sort()).toEqual([
      ['evt_01J8F1EQ00', 'done', 2],
      ['evt_01J8F1GT50', 'done', 2],
      ['evt_01J8F1LT99', 'done', 2],
    ]);
    const report = await reconcile({ ddb: stack.handlers.ddb, tables: stack.resources.tables }, { ...window, graceMs: 0 });
    expect(report).toMatchObject({ receipts: 6, expectedDeliveries: 15, violations: [] });
  });
});

describe('an HTTP destination with transforms/crm.ts', () => {
  it('receives the transformed deal, signed and verified with standardwebhooks, with the transform header', async () => {
    const deals = received.filter((r) => r.verified);
    expect(received.every((r) => r.verified)).toBe(true);
    const byId = new Map(deals.map((r) => [(r.body as { deal: { external_id: string } }).deal.external_id, r]));
    expect([...byId.keys()].sort()).toEqual(['evt_01J8F1EQ00', 'evt_01J8F1EUR5', 'evt_01J8F1GT50', 'evt_01J8F1LT99']);
    expect(byId.get('evt_01J8F1EUR5')).toEqual({
      verified: true,
      account: 'tenant_204',
      body: { deal: { external_id: 'evt_01J8F1EUR5', account: 'tenant_204', stage: 'won', value_cents: 500, currency: 'EUR' } },
    });
  });

  it('quarantines the deliveries whose transform threw, with its message in trace: the field and its kind, never the body value "150"', async () => {
    const rows = (await ledgerRows(stack)).filter((r) => r.consumerId === 'crm-sync');
    expect(
      rows
        .filter((r) => r.state === 'quarantined')
        .map((r) => [r.eventId, r.lastErrorCategory, r.attempt])
        .sort(),
    ).toEqual([
      ['evt_01J8F1NOAM', 'transform_failed', 1],
      ['evt_01J8F1STR1', 'transform_failed', 1],
    ]);
    const traced = await trace({ ddb: stack.handlers.ddb, tables: stack.resources.tables, config }, 'evt_01J8F1STR1');
    const crm = traced.deliveries.find((d) => d.consumer === 'crm-sync');
    expect(crm?.state).toBe('quarantined');
    expect(crm?.errors.map((e) => e.message)).toEqual([
      'transform threw: the CRM needs a numeric data.amount; event evt_01J8F1STR1 has a string',
    ]);
  });

  it('`transform test` prints what would be sent for evt_01J8F1GT50, and fails (exit 3) with the message for evt_01J8F1NOAM', async () => {
    const ok = await cli(['transform', 'test', '--consumer', 'crm-sync', '--event', 'evt_01J8F1GT50', '--json']);
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({
      payload: { id: 'evt_01J8F1GT50', data: { amount: 250, currency: 'usd' } },
      body: { deal: { external_id: 'evt_01J8F1GT50', value_cents: 250, currency: 'USD' } },
      headers: { 'x-crm-account': 'tenant_204' },
    });
    const bad = await cli(['transform', 'test', '--consumer', 'crm-sync', '--event', 'evt_01J8F1NOAM']);
    expect(bad.code).toBe(3);
    expect(bad.stderr).toContain('transform threw: the CRM needs a numeric data.amount; event evt_01J8F1NOAM has none');
  });

  it('quarantines events whose data.reference "Zoë ✓" the transform puts in a header as transform_invalid after one attempt; the breaker stays closed and tenant_204\'s next event is delivered', async () => {
    const zoe = ['evt_01J8F1ZOE1', 'evt_01J8F1ZOE2', 'evt_01J8F1ZOE3', 'evt_01J8F1ZOE4'];
    // One more than crm-sync's breakAfterFailures (3): were each a network failure, the breaker would open.
    for (const id of zoe) {
      const event = platformEvent({ id, tenant_id: 'tenant_317', data: { amount: 120, currency: 'eur', reference: 'Zoë ✓' } });
      expect((await send(stack, event)).status).toBe(202);
    }
    await stack.drain();
    const rows = (await ledgerRows(stack)).filter((r) => r.consumerId === 'crm-sync' && zoe.includes(r.eventId));
    expect(rows.map((r) => [r.eventId, r.state, r.lastErrorCategory, r.attempt]).sort()).toEqual(
      zoe.map((id) => [id, 'quarantined', 'transform_invalid', 1]),
    );
    expect(rows[0]?.errors?.[0]?.message).toBe(
      'transform header x-crm-reference: its value has a character above U+00FF at index 4; header values carry Latin-1 only ' +
        '(percent-encode it, e.g. encodeURIComponent, or send it in the body)',
    );
    const breaker = await stack.handlers.ddb.send(
      new GetCommand({ TableName: stack.resources.tables.ledger, Key: { pk: breakerKey('crm-sync') }, ConsistentRead: true }),
    );
    expect(breaker.Item?.failures ?? 0).toBe(0);
    expect(stack.paused()).toEqual([]);

    const ok = platformEvent({
      id: 'evt_01J8F1OK04',
      tenant_id: 'tenant_204',
      data: { amount: 300, currency: 'usd', reference: 'ord_7731' },
    });
    expect((await send(stack, ok)).status).toBe(202);
    await stack.drain();
    const delivered = received.filter((r) => (r.body as { deal: { external_id: string } }).deal.external_id === 'evt_01J8F1OK04');
    expect(delivered).toEqual([
      {
        verified: true,
        account: 'tenant_204',
        reference: 'ord_7731',
        body: { deal: { external_id: 'evt_01J8F1OK04', account: 'tenant_204', stage: 'won', value_cents: 300, currency: 'USD' } },
      },
    ]);
    expect(received.some((r) => zoe.includes((r.body as { deal: { external_id: string } }).deal.external_id))).toBe(false);
  });
});

describe('a body kept in the payload bucket', () => {
  it('`filter test` reads evt_01J8F1BIG0 from the bucket (40 KB incompressible note) and says match, as intake decided', async () => {
    // Random base64 does not gzip: the stored body passes payloads.inlineMaxBytes and goes to the bucket.
    const note = randomBytes(30_000).toString('base64');
    const data = { amount: 300, currency: 'usd', note };
    expect((await send(stack, platformEvent({ id: 'evt_01J8F1BIG0', tenant_id: 'tenant_204', data }))).status).toBe(202);
    await stack.drain();
    const deps = { ddb: stack.handlers.ddb, tables: stack.resources.tables, config };
    const receipt = (await trace(deps, 'evt_01J8F1BIG0')).receipt;
    expect(receipt.consumers).toEqual(['everything', 'big-usd', 'crm-sync']);
    const hit = await cli(['filter', 'test', '--consumer', 'big-usd', '--event', 'evt_01J8F1BIG0', '--json']);
    expect(hit.stderr).toBe('');
    expect(hit.code).toBe(0);
    expect(JSON.parse(hit.stdout)).toMatchObject({ eventId: 'evt_01J8F1BIG0', matched: true, inDeliverySet: true });
  });
});
