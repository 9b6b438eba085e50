import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NotFoundError } from '../../cli/errors';
import { status } from '../../cli/ops/status';
import { trace } from '../../cli/ops/trace';
import { usage } from '../../cli/ops/usage';
import { localPrincipal } from '../../local/wiring';
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

    const empty = await freshStack(env);
    await empty.seed.receipt({ eventId: 'evt_01J8K7M2Q4', receivedAt: T0, secretVersion: 'current' });
    expect((await status({ ddb: empty.ddb, tables: empty.tables, config, clock: () => NOW })).intake.previousSecretLastVerified).toEqual(
      {},
    );
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
