import { SendMessageCommand } from '@aws-sdk/client-sqs';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WindowReader } from '../../adapters/window-index';
import { formatStatus, statusWindow } from '../../cli/commands/status';
import { localPrincipal } from '../../local/wiring';
import { NotFoundError, UsageError } from '../../ops/errors';
import { DEFAULT_STATUS_SINCE_MS, type StatusReport, status } from '../../ops/status';
import type { Target } from '../../ops/target';
import { trace } from '../../ops/trace';
import { usage } from '../../ops/usage';
import { config, freshStack, HOUR, MIN, type OpsEnv, startOpsEnv, T0 } from './support';

let env: OpsEnv;
beforeAll(async () => {
  env = await startOpsEnv();
});
afterAll(() => env?.stop());

const NOW = T0 + 3 * HOUR;

describe('usage', () => {
  it('sums units by tenant and consumer over done rows of events received in [from, to)', async () => {
    const stack = await freshStack(env);
    const { seed } = stack;
    await seed.receipt({ eventId: 'evt_01J8K7M2Q4', receivedAt: T0 + 5 * MIN });
    await seed.receipt({ eventId: 'evt_01J8K7M2R5', receivedAt: T0 + 10 * MIN });
    await seed.receipt({ eventId: 'evt_01J8K7M2S6', receivedAt: T0 + 20 * MIN, tenant: 'tenant_311' });
    await seed.receipt({ eventId: 'evt_01J8K7M2T7', receivedAt: T0 + 2 * HOUR });
    await seed.deliver('evt_01J8K7M2Q4', 'billing-meter', 5, T0 + 6 * MIN);
    await seed.deliver('evt_01J8K7M2R5', 'billing-meter', 3, T0 + 11 * MIN);
    await seed.deliver('evt_01J8K7M2Q4', 'audit-writer', 0, T0 + 6 * MIN);
    await seed.deliver('evt_01J8K7M2S6', 'billing-meter', 2, T0 + 21 * MIN);
    await seed.claim('evt_01J8K7M2R5', 'risk-evaluator', T0 + 11 * MIN); // leased: no usage yet
    await seed.deliver('evt_01J8K7M2T7', 'billing-meter', 9, T0 + 2 * HOUR + MIN); // acknowledged after the window
    const deps = { ddb: stack.ddb, tables: stack.tables };

    const report = await usage(deps, { from: T0, to: T0 + HOUR });
    expect(report.rows).toEqual([
      { tenantId: 'tenant_204', consumerId: 'audit-writer', units: 0, deliveries: 1 },
      { tenantId: 'tenant_204', consumerId: 'billing-meter', units: 8, deliveries: 2 },
      { tenantId: 'tenant_311', consumerId: 'billing-meter', units: 2, deliveries: 1 },
    ]);
    expect(report.totalUnits).toBe(10);
    expect(report.attributedBy).toBe('receivedAt');
    // The scan (full-history audit, windowed on ackAt) gives the same answer here: every event of the
    // window was acknowledged in it too.
    const scanned = await usage(deps, { from: T0, to: T0 + HOUR, scan: true });
    expect({ rows: scanned.rows, attributedBy: scanned.attributedBy }).toEqual({ rows: report.rows, attributedBy: 'ackAt' });

    expect((await usage(deps, { from: T0, to: T0 + HOUR, tenant: 'tenant_204', consumer: 'billing-meter' })).rows).toEqual([
      { tenantId: 'tenant_204', consumerId: 'billing-meter', units: 8, deliveries: 2 },
    ]);
    // A replay of a done delivery is recorded under `replays`, never as units.
    const message = seed.message('evt_01J8K7M2Q4', 'billing-meter', { replayId: 'rpl_01JTEST' });
    const claim = await stack.ledger.claim({ message, now: T0 + 30 * MIN, leaseMs: 60_000, principal: localPrincipal('billing-meter') });
    if (claim.kind !== 'claimed') throw new Error(`replay claim was ${claim.kind}`);
    await stack.ledger.acknowledge({
      message,
      attempt: claim.attempt,
      replay: true,
      units: 5,
      principal: 'p',
      policyVersion: 'v',
      now: T0 + 31 * MIN,
    });
    expect((await usage(deps, { from: T0, to: T0 + HOUR, tenant: 'tenant_204', consumer: 'billing-meter' })).rows[0]?.units).toBe(8);
  });
});

describe('status', () => {
  it('counts deliveries by state per consumer, queue and DLQ depth, oldest pending, paused, and intake', async () => {
    const stack = await freshStack(env);
    const { seed } = stack;
    await seed.receipt({ eventId: 'evt_01J8K7M2Q4', receivedAt: T0 + 5 * MIN });
    await seed.receipt({ eventId: 'evt_01J8K7M2R5', receivedAt: T0 + 10 * MIN, secretVersion: 'previous' });
    await seed.receipt({ eventId: 'evt_01J8K7M2S6', receivedAt: T0 + 20 * MIN, type: 'customer.updated' });
    await seed.deliver('evt_01J8K7M2Q4', 'billing-meter', 5, T0 + 6 * MIN);
    await seed.claim('evt_01J8K7M2R5', 'billing-meter', NOW - 10_000); // live lease
    await seed.claim('evt_01J8K7M2Q4', 'audit-writer', T0 + 6 * MIN); // lease long expired
    await seed.fail('evt_01J8K7M2R5', 'audit-writer', T0 + 11 * MIN, false); // retrying
    await seed.fail('evt_01J8K7M2Q4', 'risk-evaluator', T0 + 6 * MIN, true); // quarantined
    // ready: R5 risk, S6 billing, S6 audit
    await env.sqs.send(new SendMessageCommand({ QueueUrl: stack.queues['audit-writer']!.url, MessageBody: '{}' }));
    await env.sqs.send(new SendMessageCommand({ QueueUrl: stack.queues['risk-evaluator']!.dlqUrl, MessageBody: '{}' }));

    const progress: number[] = [];
    const report = await status(
      { ddb: stack.ddb, tables: stack.tables, config, sqs: env.sqs, queues: stack.queues, clock: () => NOW },
      { paused: new Set(['risk-evaluator']), onProgress: (done) => progress.push(done) },
    );

    expect(report.consumers).toEqual([
      {
        consumer: 'billing-meter',
        paused: false,
        ready: 1,
        leased: 1,
        expiredLeases: 0,
        retrying: 0,
        quarantined: 0,
        done: 1,
        queue: { visible: 0, inFlight: 0 },
        dlq: { visible: 0, inFlight: 0 },
        oldestPendingAt: T0 + 10 * MIN,
        oldestPendingAgeMs: NOW - (T0 + 10 * MIN),
      },
      {
        consumer: 'audit-writer',
        paused: false,
        ready: 1,
        leased: 0,
        expiredLeases: 1,
        retrying: 1,
        quarantined: 0,
        done: 0,
        queue: { visible: 1, inFlight: 0 },
        dlq: { visible: 0, inFlight: 0 },
        oldestPendingAt: T0 + 5 * MIN,
        oldestPendingAgeMs: NOW - (T0 + 5 * MIN),
      },
      {
        consumer: 'risk-evaluator',
        paused: true,
        ready: 1,
        leased: 0,
        expiredLeases: 0,
        retrying: 0,
        quarantined: 1,
        done: 0,
        queue: { visible: 0, inFlight: 0 },
        dlq: { visible: 1, inFlight: 0 },
        oldestPendingAt: T0 + 10 * MIN,
        oldestPendingAgeMs: NOW - (T0 + 10 * MIN),
      },
    ]);
    expect(report.intake).toEqual({
      events: 3,
      byType: { 'customer.updated': 1, 'payment.succeeded': 2 },
      bySecretVersion: { current: 2, previous: 1 },
      previousSecretLastVerified: { platform: T0 + 10 * MIN },
    });
    expect(progress.length).toBeGreaterThan(0);
    // By default the last 7 days, read through the window index; here that covers every event, so
    // the whole-history scan gives the same answer.
    expect(report.window).toEqual({ from: NOW - DEFAULT_STATUS_SINCE_MS, to: NOW });
    // Q4 and R5 name three consumers each, S6 (customer.updated) two; five of those rows exist.
    expect(report.read).toMatchObject({ receiptsRead: 3, ledgerKeysRequested: 8, ledgerRowsRead: 5 });
    const scanned = await status(
      { ddb: stack.ddb, tables: stack.tables, config, sqs: env.sqs, queues: stack.queues, clock: () => NOW },
      { paused: new Set(['risk-evaluator']), scan: true },
    );
    expect(scanned.window).toBeUndefined();
    expect(scanned.read).toBeUndefined();
    expect(withoutScope(scanned)).toEqual(withoutScope(report));
  });

  it('shows per source when the previous secret last verified a request: the newest such receipt', async () => {
    const stack = await freshStack(env);
    const { seed } = stack;
    await seed.receipt({ eventId: 'evt_01J8K7M2Q4', receivedAt: T0 + 5 * MIN, secretVersion: 'previous' });
    await seed.receipt({ eventId: 'evt_01J8K7M2R5', receivedAt: T0 + 25 * MIN, secretVersion: 'previous' });
    await seed.receipt({ eventId: 'evt_01J8K7M2S6', receivedAt: T0 + 15 * MIN, secretVersion: 'previous' });
    await seed.receipt({ eventId: 'evt_01J8K7M2T7', receivedAt: T0 + 40 * MIN, secretVersion: 'current' });

    const report = await status({ ddb: stack.ddb, tables: stack.tables, config, clock: () => NOW });
    expect(report.intake.previousSecretLastVerified).toEqual({ platform: T0 + 25 * MIN });
    const scanned = await status({ ddb: stack.ddb, tables: stack.tables, config, clock: () => NOW }, { scan: true });
    expect(withoutScope(scanned)).toEqual(withoutScope(report));

    const empty = await freshStack(env);
    await empty.seed.receipt({ eventId: 'evt_01J8K7M2Q4', receivedAt: T0, secretVersion: 'current' });
    expect((await status({ ddb: empty.ddb, tables: empty.tables, config, clock: () => NOW })).intake.previousSecretLastVerified).toEqual(
      {},
    );
  });
});

/** A report without what says how it was read (the window, the reader's counters). */
const withoutScope = ({ window: _window, read: _read, ...rest }: StatusReport) => rest;

describe('status by window', () => {
  /**
   * NOW = 2026-11-29T13:00Z; the default window is [2026-11-22T13:00Z, NOW). In it: evt_01J8K7M2Q4
   * (tenant_204, today) and evt_01J8K7M2R5 (tenant_311, two days ago). Before it: evt_01J8K7M1A1
   * (tenant_204, a minute before the window starts, on its first day) and evt_01J8K7M1B1 (tenant_888,
   * 30 days ago, verified by the previous secret), each with work still pending.
   */
  async function windowAndOlder() {
    const stack = await freshStack(env);
    const { seed } = stack;
    const from = NOW - DEFAULT_STATUS_SINCE_MS;
    await seed.receipt({ eventId: 'evt_01J8K7M2Q4', receivedAt: T0 + 5 * MIN, tenant: 'tenant_204' });
    await seed.receipt({ eventId: 'evt_01J8K7M2R5', receivedAt: T0 - 48 * HOUR, tenant: 'tenant_311' });
    await seed.receipt({ eventId: 'evt_01J8K7M1A1', receivedAt: from - MIN, tenant: 'tenant_204' });
    await seed.receipt({ eventId: 'evt_01J8K7M1B1', receivedAt: T0 - 30 * 24 * HOUR, tenant: 'tenant_888', secretVersion: 'previous' });
    await seed.deliver('evt_01J8K7M2Q4', 'billing-meter', 5, T0 + 6 * MIN);
    await seed.claim('evt_01J8K7M2R5', 'billing-meter', T0 - 48 * HOUR + MIN); // lease long expired
    await seed.fail('evt_01J8K7M1A1', 'billing-meter', from, false); // retrying, before the window
    await seed.deliver('evt_01J8K7M1A1', 'audit-writer', 1, from);
    return stack;
  }

  it('counts only the events received in the window and their deliveries, and reads nothing older', async () => {
    const stack = await windowAndOlder();
    // Every response DynamoDB sends back, to show no item of an older event is in any of them.
    const responses: string[] = [];
    const ddb = {
      send: async (command: Parameters<DynamoDBDocumentClient['send']>[0]) => {
        const out = await stack.ddb.send(command as never);
        responses.push(JSON.stringify(out));
        return out;
      },
    } as unknown as DynamoDBDocumentClient;
    const reader = new WindowReader({ ddb, tables: stack.tables });
    const report = await status({ ddb, tables: stack.tables, config, clock: () => NOW }, { reader });

    expect(report.window).toEqual({ from: Date.parse('2026-11-22T13:00:00Z'), to: NOW });
    expect(report.consumers.map((c) => [c.consumer, c.ready, c.leased, c.expiredLeases, c.retrying, c.done, c.oldestPendingAt])).toEqual([
      ['billing-meter', 0, 0, 1, 0, 1, T0 - 48 * HOUR],
      ['audit-writer', 2, 0, 0, 0, 0, T0 - 48 * HOUR],
      ['risk-evaluator', 2, 0, 0, 0, 0, T0 - 48 * HOUR],
    ]);
    expect(report.intake).toEqual({
      events: 2,
      byType: { 'payment.succeeded': 2 },
      bySecretVersion: { current: 2 },
      previousSecretLastVerified: {},
    });
    expect(reader.counters).toMatchObject({
      // One Query of tenants#<day> per day 2026-11-22 .. 2026-11-29; they list tenant_204 (22nd and
      // 29th) and tenant_311 (27th). tenant_888's day is not in the window: never listed.
      registryQueries: 8,
      registryItems: 3,
      // tenant_204's partition of the 22nd is queried from 13:00 on: evt_01J8K7M1A1 (12:59) is not returned.
      receiptQueries: 3,
      receiptsRead: 2,
      ledgerKeysRequested: 6,
      ledgerRowsRead: 2,
    });
    expect(report.read).toEqual(reader.counters);
    const seen = responses.join('\n');
    expect(seen).toContain('evt_01J8K7M2Q4');
    expect(seen).toContain('evt_01J8K7M2R5');
    expect(seen).not.toContain('evt_01J8K7M1A1');
    expect(seen).not.toContain('evt_01J8K7M1B1');
    expect(seen).not.toContain('tenant_888');

    // The scan counts all history: the older events' deliveries too.
    const scanned = await status({ ddb: stack.ddb, tables: stack.tables, config, clock: () => NOW }, { scan: true });
    expect(scanned.consumers.map((c) => [c.consumer, c.ready, c.expiredLeases, c.retrying, c.done, c.oldestPendingAt])).toEqual([
      ['billing-meter', 1, 1, 1, 1, T0 - 30 * 24 * HOUR],
      ['audit-writer', 3, 0, 0, 1, T0 - 30 * 24 * HOUR],
      ['risk-evaluator', 4, 0, 0, 0, T0 - 30 * 24 * HOUR],
    ]);
    expect(scanned.intake).toMatchObject({ events: 4, previousSecretLastVerified: { platform: T0 - 30 * 24 * HOUR } });

    // A window that reaches back over every event gives the scan's answer.
    const wide = await status(
      { ddb: stack.ddb, tables: stack.tables, config, clock: () => NOW },
      { window: { from: T0 - 31 * 24 * HOUR, to: NOW } },
    );
    expect(withoutScope(wide)).toEqual(withoutScope(scanned));
    expect(wide.read).toMatchObject({ registryQueries: 32, receiptsRead: 4, ledgerKeysRequested: 12, ledgerRowsRead: 4 });
  });

  it("an hour's window reads that hour's receipts only, and the text says what is not counted", async () => {
    const stack = await windowAndOlder();
    const reader = new WindowReader({ ddb: stack.ddb, tables: stack.tables });
    const report = await status(
      { ddb: stack.ddb, tables: stack.tables, config, clock: () => NOW },
      { window: { from: T0, to: T0 + HOUR }, reader },
    );
    expect(report.intake.events).toBe(1);
    expect(report.consumers.map((c) => [c.consumer, c.ready, c.expiredLeases, c.done])).toEqual([
      ['billing-meter', 0, 0, 1],
      ['audit-writer', 1, 0, 0],
      ['risk-evaluator', 1, 0, 0],
    ]);
    expect(reader.counters).toMatchObject({ registryQueries: 1, registryItems: 1, receiptsRead: 1, ledgerKeysRequested: 3 });

    const target = { label: 'local stack' } as Target;
    const text = formatStatus(report, target);
    expect(text).toContain(
      'deliveries and intake of events received in [2026-11-29T10:00:00.000Z, 2026-11-29T11:00:00.000Z); events received before 2026-11-29T10:00:00.000Z are not counted; --scan counts all history',
    );
    expect(text).toContain('intake: 1 events in the window');
    expect(text).toContain('previous secret last verified a request: not since 2026-11-29T10:00:00.000Z');
    const all = formatStatus(await status({ ddb: stack.ddb, tables: stack.tables, config, clock: () => NOW }, { scan: true }), target);
    expect(all).toContain('deliveries and intake of all history (--scan)');
    expect(all).toContain('intake: 4 events\n');
    expect(all).toContain('previous secret last verified a request: platform 2026-10-30T10:00:00.000Z');
  });

  it('takes --since, or --from/--to, or --scan, and refuses them mixed (exit 2)', () => {
    const now = NOW;
    expect(statusWindow({}, now)).toEqual({ from: now - 7 * 24 * HOUR, to: now });
    expect(statusWindow({ since: '24h' }, now)).toEqual({ from: now - 24 * HOUR, to: now });
    expect(statusWindow({ from: '2026-11-29T10:00:00Z', to: '2026-11-29T11:00:00Z' }, now)).toEqual({ from: T0, to: T0 + HOUR });
    expect(statusWindow({ scan: true }, now)).toBeUndefined();
    for (const bad of [{ scan: true, since: '1d' }, { since: '1d', from: '-2d' }, { to: 'now' }, { since: 'week' }, { since: '0' }]) {
      expect(() => statusWindow(bad, now)).toThrow(UsageError);
    }
  });
});

describe('trace', () => {
  it('shows the receipt and every delivery with state, attempts, errors, usage and access log', async () => {
    const stack = await freshStack(env);
    const { seed } = stack;
    const receipt = await seed.receipt({ eventId: 'evt_01J8K7M2Q4', receivedAt: T0 + 5 * MIN });
    await seed.deliver('evt_01J8K7M2Q4', 'billing-meter', 5, T0 + 6 * MIN);
    await seed.fail('evt_01J8K7M2Q4', 'risk-evaluator', T0 + 6 * MIN, false);
    const deps = { ddb: stack.ddb, tables: stack.tables, config, clock: () => NOW };

    const report = await trace(deps, 'evt_01J8K7M2Q4');

    expect(report.receipt).toEqual({
      source: 'platform',
      eventId: 'evt_01J8K7M2Q4',
      tenantId: 'tenant_204',
      keyId: 'key_42',
      eventType: 'payment.succeeded',
      receivedAt: T0 + 5 * MIN,
      secretVersion: 'current',
      origin: 'webhook',
      payloadHash: `hmac-sha256:${receipt.payloadHmac}`,
      payloadBytes: receipt.payloadBytes,
      payload: 'present',
      payloadExpiresAt: receipt.payloadExpiresAt,
      consumers: ['billing-meter', 'audit-writer', 'risk-evaluator'],
    });
    expect(report.conflicts).toEqual({ count: 0, entries: [] });
    const [billing, audit, risk] = report.deliveries;
    expect(billing).toMatchObject({
      consumer: 'billing-meter',
      expected: true,
      state: 'done',
      attempts: 1,
      units: 5,
      tenantId: 'tenant_204',
      principal: localPrincipal('billing-meter'),
      policyVersion: 'units-2026-11',
      outcome: 'ok',
      reads: [{ principal: localPrincipal('billing-meter'), at: T0 + 6 * MIN }],
      errors: [],
    });
    expect(audit).toMatchObject({ consumer: 'audit-writer', expected: true, state: 'ready', attempts: 0, reads: [] });
    expect(risk).toMatchObject({
      consumer: 'risk-evaluator',
      state: 'retrying',
      attempts: 1,
      lastErrorCategory: 'TimeoutError',
      errors: [{ attempt: 1, category: 'TimeoutError', message: 'downstream timed out', at: T0 + 6 * MIN + 500 }],
    });
    expect(risk).not.toHaveProperty('units');
  });

  it('says when the payload has expired and shows a delivery outside the delivery set as unexpected', async () => {
    const stack = await freshStack(env);
    const { seed } = stack;
    await seed.receipt({ eventId: 'evt_01J8K7M2S6', receivedAt: T0, type: 'customer.updated', payloadDays: 1 });
    await seed.deliver('evt_01J8K7M2S6', 'risk-evaluator', 1, T0 + MIN);
    const report = await trace({ ddb: stack.ddb, tables: stack.tables, config, clock: () => T0 + 2 * 86_400_000 }, 'evt_01J8K7M2S6', {
      source: 'platform',
    });
    expect(report.receipt.payload).toBe('expired');
    expect(report.deliveries.map((d) => [d.consumer, d.expected, d.state])).toEqual([
      ['billing-meter', true, 'ready'],
      ['audit-writer', true, 'ready'],
      ['risk-evaluator', false, 'done'],
    ]);
    await expect(trace({ ddb: stack.ddb, tables: stack.tables, config }, 'evt_nope')).rejects.toBeInstanceOf(NotFoundError);
  });
});
