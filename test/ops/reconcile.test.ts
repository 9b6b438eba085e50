import { DeleteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CarryState, createReconcileHandler } from '../../lambdas/reconcile/app';
import { createReconcileMetrics } from '../../lambdas/reconcile/metrics';
import { lastClosedWindow, reconcile } from '../../lambdas/reconcile/reconcile';
import { arrivalRange } from '../../lambdas/reconcile/repair';
import { capturingLogger } from '../support/logs';
import { config, freshStack, HOUR, items, MIN, type OpsEnv, startOpsEnv, T0 } from './support';

let env: OpsEnv;
beforeAll(async () => {
  env = await startOpsEnv();
});
afterAll(() => env?.stop());

const WINDOW = { from: T0, to: T0 + HOUR };
const NOW = T0 + 3 * HOUR;

/** A clean window: two payment events delivered to all three consumers, one customer event to two. */
async function cleanWindow() {
  const stack = await freshStack(env);
  const { seed } = stack;
  await seed.receipt({ eventId: 'evt_01J8K7M2Q4', receivedAt: T0 + 5 * MIN });
  await seed.receipt({ eventId: 'evt_01J8K7M2R5', receivedAt: T0 + 10 * MIN });
  await seed.receipt({ eventId: 'evt_01J8K7M2S6', receivedAt: T0 + 20 * MIN, type: 'customer.updated', tenant: 'tenant_311' });
  for (const c of ['billing-meter', 'audit-writer', 'risk-evaluator']) {
    await seed.deliver('evt_01J8K7M2Q4', c, 5, T0 + 6 * MIN);
    await seed.deliver('evt_01J8K7M2R5', c, 3, T0 + 11 * MIN);
  }
  await seed.deliver('evt_01J8K7M2S6', 'billing-meter', 1, T0 + 21 * MIN);
  // Quarantined: parked in the DLQ on purpose, counted but not a violation.
  await seed.fail('evt_01J8K7M2S6', 'audit-writer', T0 + 21 * MIN, true);
  const deps = { ddb: stack.ddb, tables: stack.tables, clock: () => NOW };
  return { ...stack, deps };
}

describe('reconcile', () => {
  it('passes a clean window and counts quarantined deliveries separately', async () => {
    const { deps } = await cleanWindow();
    const report = await reconcile(deps, WINDOW);
    expect(report.violations).toEqual([]);
    expect(report).toMatchObject({ receipts: 3, expectedDeliveries: 8, ledgerItems: 8, quarantined: 1, inGrace: 0 });
  });

  it('names every planted violation by its ids', async () => {
    const stack = await cleanWindow();
    const { seed, ddb, tables } = stack;
    // missing_delivery: a ledger row of an old receipt deleted.
    await ddb.send(new DeleteCommand({ TableName: tables.ledger, Key: { pk: 'platform:evt_01J8K7M2R5#audit-writer' } }));
    // tenant_mismatch: a second tenant planted on a ledger row.
    await ddb.send(
      new UpdateCommand({
        TableName: tables.ledger,
        Key: { pk: 'platform:evt_01J8K7M2Q4#billing-meter' },
        UpdateExpression: 'SET tenantId = :t',
        ExpressionAttributeValues: { ':t': 'tenant_999' },
      }),
    );
    // usage_without_event: a usage row whose receipt does not exist.
    await seed.deliver('evt_01J8K7M2Z9', 'billing-meter', 7, T0 + 30 * MIN, { receivedAt: T0 + 29 * MIN });
    // unexpected_delivery: risk-evaluator does not subscribe to customer.updated.
    await seed.deliver('evt_01J8K7M2S6', 'risk-evaluator', 1, T0 + 22 * MIN);
    // done_without_usage: a done row whose units were lost.
    await ddb.send(
      new UpdateCommand({
        TableName: tables.ledger,
        Key: { pk: 'platform:evt_01J8K7M2R5#risk-evaluator' },
        UpdateExpression: 'REMOVE units',
      }),
    );

    // Scan mode (both tables, all history): the only one that can name a row no receipt names.
    const report = await reconcile(stack.deps, { ...WINDOW, scan: true });

    const planted = [
      {
        kind: 'done_without_usage',
        source: 'platform',
        eventId: 'evt_01J8K7M2R5',
        consumerId: 'risk-evaluator',
        ledgerKey: 'platform:evt_01J8K7M2R5#risk-evaluator',
      },
      {
        kind: 'missing_delivery',
        source: 'platform',
        eventId: 'evt_01J8K7M2R5',
        consumerId: 'audit-writer',
        ledgerKey: 'platform:evt_01J8K7M2R5#audit-writer',
      },
      {
        kind: 'tenant_mismatch',
        source: 'platform',
        eventId: 'evt_01J8K7M2Q4',
        consumerId: 'billing-meter',
        ledgerKey: 'platform:evt_01J8K7M2Q4#billing-meter',
        receiptTenantId: 'tenant_204',
        ledgerTenantId: 'tenant_999',
      },
      {
        kind: 'unexpected_delivery',
        source: 'platform',
        eventId: 'evt_01J8K7M2S6',
        consumerId: 'risk-evaluator',
        ledgerKey: 'platform:evt_01J8K7M2S6#risk-evaluator',
      },
      {
        kind: 'usage_without_event',
        source: 'platform',
        eventId: 'evt_01J8K7M2Z9',
        consumerId: 'billing-meter',
        ledgerKey: 'platform:evt_01J8K7M2Z9#billing-meter',
      },
    ];
    expect(report.violations).toEqual(planted);
    expect(report.counts).toEqual({
      missing_delivery: 1,
      unexpected_delivery: 1,
      done_without_usage: 1,
      tenant_mismatch: 1,
      usage_without_event: 1,
      stalled_delivery: 0,
    });

    // Window mode (the index; every configured consumer's row looked up): all but usage_without_event.
    const consumers = config.consumers.map((c) => c.id);
    const indexed = await reconcile(stack.deps, { ...WINDOW, consumers });
    expect(indexed.violations).toEqual(planted.filter((v) => v.kind !== 'usage_without_event'));
    expect(indexed.counts).toMatchObject({ unexpected_delivery: 1, usage_without_event: 0 });
    // Without the consumer list, only the delivery sets' rows are read: the unexpected row is not seen.
    const deliverySetsOnly = await reconcile(stack.deps, WINDOW);
    expect(deliverySetsOnly.violations.map((v) => v.kind)).toEqual(['done_without_usage', 'missing_delivery', 'tenant_mismatch']);
  });

  it('names a delivery left retrying or under an expired lease past the grace period as stalled', async () => {
    const stack = await cleanWindow();
    await stack.seed.receipt({ eventId: 'evt_01J8K7M2V7', receivedAt: T0 + 30 * MIN, type: 'invoice.paid' });
    // A worker failed once, then died on its last allowed receive: the message is in the DLQ.
    await stack.seed.fail('evt_01J8K7M2V7', 'billing-meter', T0 + 31 * MIN, false);
    // A worker claimed and vanished: its 60 s lease ended long ago.
    await stack.seed.claim('evt_01J8K7M2V7', 'audit-writer', T0 + 31 * MIN);
    const report = await reconcile(stack.deps, WINDOW);
    expect(report.violations).toEqual([
      {
        kind: 'stalled_delivery',
        source: 'platform',
        eventId: 'evt_01J8K7M2V7',
        consumerId: 'audit-writer',
        ledgerKey: 'platform:evt_01J8K7M2V7#audit-writer',
      },
      {
        kind: 'stalled_delivery',
        source: 'platform',
        eventId: 'evt_01J8K7M2V7',
        consumerId: 'billing-meter',
        ledgerKey: 'platform:evt_01J8K7M2V7#billing-meter',
      },
    ]);
    // Within the grace period the same items are still someone's work in progress.
    const early = await reconcile({ ...stack.deps, clock: () => T0 + 40 * MIN }, WINDOW);
    expect(early.violations).toEqual([]);
  });

  it('does not count a delivery missing from a receipt younger than the grace period', async () => {
    const stack = await cleanWindow();
    await stack.seed.receipt({ eventId: 'evt_01J8K7M2W8', receivedAt: T0 + 50 * MIN });
    const young = await reconcile({ ...stack.deps, clock: () => T0 + 55 * MIN }, WINDOW);
    expect(young.violations).toEqual([]);
    expect(young.inGrace).toBe(3);
    const old = await reconcile(stack.deps, WINDOW);
    expect(old.violations.map((v) => v.ledgerKey)).toEqual([
      'platform:evt_01J8K7M2W8#audit-writer',
      'platform:evt_01J8K7M2W8#billing-meter',
      'platform:evt_01J8K7M2W8#risk-evaluator',
    ]);
  });

  it('still finds a ledger row whose receivedAt copy is outside the window', async () => {
    const stack = await cleanWindow();
    await stack.ddb.send(
      new UpdateCommand({
        TableName: stack.tables.ledger,
        Key: { pk: 'platform:evt_01J8K7M2Q4#audit-writer' },
        UpdateExpression: 'SET receivedAt = :r',
        ExpressionAttributeValues: { ':r': T0 - HOUR },
      }),
    );
    expect((await reconcile(stack.deps, WINDOW)).violations).toEqual([]);
  });

  it('refuses an empty window', async () => {
    const { deps } = await cleanWindow();
    await expect(reconcile(deps, { from: T0, to: T0 })).rejects.toThrow(/from < to/);
  });
});

describe('lastClosedWindow', () => {
  it('is the latest whole hour that closed at least the grace period ago', () => {
    const at = (iso: string) => Date.parse(iso);
    expect(lastClosedWindow(at('2026-11-29T13:05:00Z'))).toEqual({ from: at('2026-11-29T11:00:00Z'), to: at('2026-11-29T12:00:00Z') });
    expect(lastClosedWindow(at('2026-11-29T13:20:00Z'))).toEqual({ from: at('2026-11-29T12:00:00Z'), to: at('2026-11-29T13:00:00Z') });
    expect(lastClosedWindow(at('2026-11-29T13:20:00Z'), { windowMs: 15 * MIN, graceMs: 0 })).toEqual({
      from: at('2026-11-29T13:00:00Z'),
      to: at('2026-11-29T13:15:00Z'),
    });
  });
});

describe('reconcile for a restart (leasesAbandoned)', () => {
  it('counts a live lease as stalled only when every lease is declared abandoned', async () => {
    const stack = await cleanWindow();
    await stack.seed.receipt({ eventId: 'evt_01J8K7M2L1', receivedAt: T0 + 40 * MIN, type: 'invoice.paid' });
    await stack.seed.deliver('evt_01J8K7M2L1', 'audit-writer', 1, T0 + 41 * MIN);
    // Leased at NOW - 1 min for 60 min: live by its leaseUntil.
    await stack.seed.claim('evt_01J8K7M2L1', 'billing-meter', NOW - MIN, HOUR);
    const live = await reconcile(stack.deps, { ...WINDOW, graceMs: 0 });
    expect(live.violations).toEqual([]);
    const restarted = await reconcile(stack.deps, { ...WINDOW, graceMs: 0, leasesAbandoned: true });
    expect(restarted.violations.map((v) => [v.kind, v.ledgerKey])).toEqual([['stalled_delivery', 'platform:evt_01J8K7M2L1#billing-meter']]);
  });
});

describe('arrivalRange (fan-out on-failure records)', () => {
  it('widens the approximate arrival times of the batch, and refuses a record without them', () => {
    const body = JSON.stringify({
      DDBStreamBatchInfo: {
        approximateArrivalOfFirstRecord: '2026-11-29T10:05:00Z',
        approximateArrivalOfLastRecord: '2026-11-29T10:07:00Z',
        batchSize: 4,
      },
    });
    expect(arrivalRange(body)).toEqual({ from: T0 + 4 * MIN, to: T0 + 9 * MIN });
    expect(arrivalRange(JSON.stringify({ requestContext: {} }))).toBeUndefined();
    expect(arrivalRange('not json')).toBeUndefined();
  });
});

describe('reconcile Lambda', () => {
  function fakeMetrics() {
    const added: [string, string, number][] = [];
    let published = 0;
    return {
      added,
      published: () => published,
      metrics: {
        addMetric: (name: string, unit: string, value: number) => void added.push([name, unit, value]),
        publishStoredMetrics: () => void published++,
      },
    };
  }

  it('checks the last closed hour, logs each violation by ids only and publishes the count', async () => {
    const stack = await cleanWindow();
    await stack.ddb.send(new DeleteCommand({ TableName: stack.tables.ledger, Key: { pk: 'platform:evt_01J8K7M2R5#audit-writer' } }));
    const { logger, lines } = capturingLogger('hookledger-reconcile');
    const m = fakeMetrics();
    // 11:20 -> the window [10:00, 11:00), where the seeded receipts are.
    const handler = createReconcileHandler({ ...stack.deps, logger, metrics: m.metrics as never, clock: () => T0 + HOUR + 20 * MIN });

    const report = await handler({ 'detail-type': 'Scheduled Event', source: 'aws.events' });

    expect(report).toMatchObject({ from: T0, to: T0 + HOUR });
    expect(m.added).toEqual([
      ['ReconcileViolations', 'Count', 1],
      ['ReconcileIncomplete', 'Count', 0],
    ]);
    expect(m.published()).toBe(1);
    const logged = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    const violation = logged.find((l) => l.message === 'reconcile violation');
    expect(violation).toMatchObject({
      kind: 'missing_delivery',
      source: 'platform',
      event_id: 'evt_01J8K7M2R5',
      consumer_id: 'audit-writer',
    });
    expect(logged.find((l) => l.message === 'reconcile finished')).toMatchObject({ violations: 1, receipts: 3, quarantined: 1 });
    // Ids only: no payload, no tenant data beyond ids.
    expect(lines.join('\n')).not.toMatch(/amount|4200/);
  });

  it('takes an explicit window from a manual invocation and publishes 0 on a clean one', async () => {
    const stack = await cleanWindow();
    const { logger } = capturingLogger();
    const m = fakeMetrics();
    const handler = createReconcileHandler({ ...stack.deps, logger, metrics: m.metrics as never });
    const report = await handler({ from: new Date(T0).toISOString(), to: new Date(T0 + HOUR).toISOString() });
    expect(report.receipts).toBe(3);
    expect(m.added).toEqual([
      ['ReconcileViolations', 'Count', 0],
      ['ReconcileIncomplete', 'Count', 0],
    ]);
    await expect(handler({ from: new Date(T0).toISOString() })).rejects.toThrow(/both "from" and "to"/);
  });

  it('repairs what it finds, bounded per run: publishes violations and repairs, skips paused consumers', async () => {
    const stack = await cleanWindow();
    for (const id of ['evt_01J8K7M2T1', 'evt_01J8K7M2T2', 'evt_01J8K7M2T3']) {
      await stack.seed.receipt({ eventId: id, receivedAt: T0 + 30 * MIN, type: 'invoice.paid' });
    }
    // evt_..T1: nothing delivered; T2: audit-writer delivered, billing-meter's lease abandoned at 10:31.
    await stack.seed.deliver('evt_01J8K7M2T2', 'audit-writer', 1, T0 + 31 * MIN);
    await stack.seed.claim('evt_01J8K7M2T2', 'billing-meter', T0 + 31 * MIN, 60_000);
    for (const c of ['billing-meter', 'audit-writer']) await stack.seed.deliver('evt_01J8K7M2T3', c, 1, T0 + 31 * MIN);
    const { logger, lines } = capturingLogger('hookledger-reconcile');
    const m = fakeMetrics();
    const handler = createReconcileHandler({
      ...stack.deps,
      logger,
      metrics: m.metrics as never,
      clock: () => T0 + HOUR + 20 * MIN,
      repair: { maxPerRun: 2, pausedConsumers: async () => new Set(['audit-writer']) },
    });

    const result = await handler({ 'detail-type': 'Scheduled Event', source: 'aws.events' });

    // Found: T1 billing-meter + audit-writer missing, T2 billing-meter stalled. Paused: audit-writer.
    expect(result.counts).toMatchObject({ missing_delivery: 2, stalled_delivery: 1 });
    expect(result.repair).toMatchObject({ candidates: 3, repaired: 2, unrepaired: 1, unrepairedByReason: { paused: 1, limit: 0 } });
    expect(m.added).toEqual([
      ['ReconcileViolations', 'Count', 3],
      ['ReconcileIncomplete', 'Count', 0],
      ['ReconcileRepairs', 'Count', 2],
      // The paused consumer's delivery is carried to the next run.
      ['ReconcileCarried', 'Count', 1],
      ['ReconcileCarryDropped', 'Count', 0],
    ]);
    const requeues = (await items(env, stack.tables.events)).filter((i) => i.kind === 'requeue');
    expect(requeues.map((r) => `${r.eventId}#${r.consumerId}`).sort()).toEqual([
      'evt_01J8K7M2T1#billing-meter',
      'evt_01J8K7M2T2#billing-meter',
    ]);
    expect(requeues.every((r) => r.repairId === result.repair?.repairId && r.replayId === undefined)).toBe(true);
    const audits = (await items(env, stack.tables.events)).filter((i) => i.kind === 'audit');
    expect(audits).toEqual([expect.objectContaining({ action: 'repair', operator: 'reconciler', trigger: 'schedule', count: 2 })]);
    const logged = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(logged.find((l) => l.message === 'not repaired')).toMatchObject({
      reason: 'paused',
      event_id: 'evt_01J8K7M2T1',
      consumer_id: 'audit-writer',
    });
    expect(logged.find((l) => l.message === 'repair finished')).toMatchObject({ repaired: 2, unrepaired: 1, paused: 1 });

    // Over the limit: the next run takes the rest (here: none left but the paused one).
    const limited = createReconcileHandler({
      ...stack.deps,
      logger,
      metrics: fakeMetrics().metrics as never,
      clock: () => T0 + HOUR + 20 * MIN,
      repair: { maxPerRun: 1, pausedConsumers: async () => new Set() },
    });
    const second = await limited({ 'detail-type': 'Scheduled Event', source: 'aws.events' });
    expect(second.repair).toMatchObject({ candidates: 3, repaired: 1, unrepaired: 2, unrepairedByReason: { paused: 0, limit: 2 } });
  });

  it('carries forward what a run could not repair (paused consumer, over its limit); later scheduled runs repair it without a manual run', async () => {
    const stack = await cleanWindow();
    // Three invoice.paid receipts at 10:30, 10:31, 10:32, nothing delivered: six missing deliveries.
    const ids = ['evt_01J8K7M4C1', 'evt_01J8K7M4C2', 'evt_01J8K7M4C3'];
    for (const [i, id] of ids.entries()) await stack.seed.receipt({ eventId: id, receivedAt: T0 + (30 + i) * MIN, type: 'invoice.paid' });
    const { logger, lines } = capturingLogger('hookledger-reconcile');
    const m = fakeMetrics();
    let now = T0 + HOUR + 20 * MIN;
    let paused = new Set(['audit-writer']);
    const handler = createReconcileHandler({
      ...stack.deps,
      logger,
      metrics: m.metrics as never,
      clock: () => now,
      repair: { maxPerRun: 2, pausedConsumers: async () => paused },
    });
    const scheduled = { 'detail-type': 'Scheduled Event', source: 'aws.events' };
    const requeued = async () =>
      (await items(env, stack.tables.events))
        .filter((i) => i.kind === 'requeue')
        .map((r) => `${r.eventId}#${r.consumerId}`)
        .sort();

    // Run 1 (window 10:00-11:00): audit-writer paused (3), billing-meter over the limit of 2 (1).
    const first = await handler(scheduled);
    expect(first.repair).toMatchObject({ repaired: 2, unrepaired: 4, unrepairedByReason: { paused: 3, limit: 1 } });
    expect(await requeued()).toEqual(['evt_01J8K7M4C1#billing-meter', 'evt_01J8K7M4C2#billing-meter']);
    const carryItem = async () =>
      (await items(env, stack.tables.events)).find((i) => i.pk === 'ckpt#reconcile-carry') as { state: CarryState } | undefined;
    const carry = await carryItem();

    // Resumed. Meanwhile C1's original message reached audit-writer (done); C2's is being handled now.
    paused = new Set();
    now = T0 + 2 * HOUR + 20 * MIN;
    await stack.seed.deliver('evt_01J8K7M4C1', 'audit-writer', 1, now - 10 * MIN);
    await stack.seed.claim('evt_01J8K7M4C2', 'audit-writer', now, 60_000);

    // Run 2 (window 11:00-12:00, empty): the carried deliveries only.
    const second = await handler(scheduled);
    expect(second).toMatchObject({ from: T0 + HOUR, to: T0 + 2 * HOUR, receipts: 0 });
    expect(second.repair).toMatchObject({ repaired: 2, unrepaired: 0, carried: 1, carryDropped: 0 });
    expect(await requeued()).toEqual([
      'evt_01J8K7M4C1#billing-meter',
      'evt_01J8K7M4C2#billing-meter',
      'evt_01J8K7M4C3#audit-writer',
      'evt_01J8K7M4C3#billing-meter',
    ]);

    // Run 3: C2's worker never finished (its lease ended past the grace): re-queued; nothing left to carry.
    now = T0 + 3 * HOUR + 20 * MIN;
    const third = await handler(scheduled);
    expect(third.repair).toMatchObject({ repaired: 1, unrepaired: 0, carried: 0 });
    expect((await requeued()).filter((k) => k === 'evt_01J8K7M4C2#audit-writer')).toHaveLength(1);
    expect((await carryItem())?.state.deliveries).toEqual([]);

    // What run 1 carried: the paused consumer's three and the one over the limit, since run 1.
    expect(first.repair).toMatchObject({ carried: 4, carryDropped: 0 });
    expect(carry?.state.deliveries.map((d) => [d.ledgerKey, d.reason, d.since, d.runs])).toEqual([
      ['platform:evt_01J8K7M4C1#audit-writer', 'paused', T0 + HOUR + 20 * MIN, 1],
      ['platform:evt_01J8K7M4C2#audit-writer', 'paused', T0 + HOUR + 20 * MIN, 1],
      ['platform:evt_01J8K7M4C3#audit-writer', 'paused', T0 + HOUR + 20 * MIN, 1],
      ['platform:evt_01J8K7M4C3#billing-meter', 'limit', T0 + HOUR + 20 * MIN, 1],
    ]);
    expect(m.added.filter(([name]) => name === 'ReconcileCarried').map(([, , v]) => v)).toEqual([4, 1, 0]);
    expect(m.added.filter(([name]) => name === 'ReconcileRepairs').map(([, , v]) => v)).toEqual([2, 2, 1]);
    const logged = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(logged.filter((l) => l.message === 'carried forward').map((l) => [l.carried, l.paused, l.limit, l.in_progress])).toEqual([
      [4, 3, 1, 0],
      [1, 0, 0, 1],
      [0, 0, 0, 0],
    ]);
  });

  it('works through a window in pages within its time budget, checkpoints, and resumes to the same report', async () => {
    const stack = await cleanWindow();
    // Two more tenants and a planted fault per tenant, so the pages span several partitions.
    await stack.seed.receipt({ eventId: 'evt_01J8K7M3A1', receivedAt: T0 + 30 * MIN, type: 'invoice.paid', tenant: 'tenant_412' });
    await stack.seed.receipt({ eventId: 'evt_01J8K7M3A2', receivedAt: T0 + 31 * MIN, type: 'invoice.paid', tenant: 'tenant_412' });
    await stack.seed.deliver('evt_01J8K7M3A1', 'billing-meter', 2, T0 + 32 * MIN);
    await stack.seed.receipt({ eventId: 'evt_01J8K7M3B1', receivedAt: T0 + 40 * MIN, type: 'customer.updated', tenant: 'tenant_515' });
    await stack.ddb.send(new DeleteCommand({ TableName: stack.tables.ledger, Key: { pk: 'platform:evt_01J8K7M2R5#audit-writer' } }));
    const consumers = config.consumers.map((c) => c.id);
    const clock = () => T0 + HOUR + 20 * MIN;
    const base = { ...stack.deps, clock, consumers, logger: capturingLogger().logger, pageSize: 1, marginMs: 1000 };

    const unbounded = await createReconcileHandler({ ...base, metrics: fakeMetrics().metrics as never })({
      from: new Date(T0).toISOString(),
      to: new Date(T0 + HOUR).toISOString(),
    });
    // A page per partition's Query page: 4 partitions, 6 receipts, one receipt a page, and the last
    // page of each partition comes back empty (a Limit-sized page always carries a LastEvaluatedKey).
    expect(unbounded).toMatchObject({ complete: true, runs: 1, receipts: 6, pages: 10 });

    // A budget of four pages per invocation: the first page is always taken, then the remaining time
    // drops below the margin on the fourth ask.
    const budget = (pagesAllowed: number) => {
      let asked = 0;
      return { getRemainingTimeInMillis: () => (asked++ < pagesAllowed ? 900_000 : 500) };
    };
    const metrics = fakeMetrics();
    const handler = createReconcileHandler({ ...base, metrics: metrics.metrics as never });
    const scheduled = { 'detail-type': 'Scheduled Event', source: 'aws.events' };
    const runs: Awaited<ReturnType<typeof handler>>[] = [];
    for (let i = 0; i < 5; i++) {
      const run = await handler(scheduled, budget(3));
      runs.push(run);
      if (run.complete) break;
    }
    expect(runs.map((r) => [r.complete, r.runs, r.pages, r.receiptsChecked])).toEqual([
      [false, 1, 4, 3],
      [false, 2, 4, 5],
      [true, 3, 2, 6],
    ]);
    expect(runs[0]?.resumeAt).toBe('tenant_311#2026-11-29');
    expect(runs[1]?.resumeAt).toBe('tenant_515#2026-11-29');
    const { checkedAt: _a, ...one } = unbounded;
    const { checkedAt: _b, ...last } = runs[2]!;
    expect({ ...last, runs: 1, pages: 10 }).toEqual(one);
    expect(last.violations.map((v) => [v.kind, v.ledgerKey])).toEqual([
      ['missing_delivery', 'platform:evt_01J8K7M2R5#audit-writer'],
      ['missing_delivery', 'platform:evt_01J8K7M3A1#audit-writer'],
      ['missing_delivery', 'platform:evt_01J8K7M3A2#audit-writer'],
      ['missing_delivery', 'platform:evt_01J8K7M3A2#billing-meter'],
      ['missing_delivery', 'platform:evt_01J8K7M3B1#audit-writer'],
      ['missing_delivery', 'platform:evt_01J8K7M3B1#billing-meter'],
    ]);
    // Each violation was published once, by the run that found it; two runs said "incomplete".
    const added = metrics.added.filter(([name]) => name === 'ReconcileViolations').map(([, , v]) => v);
    expect(added.reduce((a, b) => a + b, 0)).toBe(6);
    expect(metrics.added.filter(([name]) => name === 'ReconcileIncomplete').map(([, , v]) => v)).toEqual([1, 1, 0]);
    const checkpoint = (await items(env, stack.tables.events)).find((i) => i.pk === 'ckpt#reconcile');
    expect(checkpoint).toMatchObject({ kind: 'checkpoint', state: { from: T0, to: T0 + HOUR, complete: true, runs: 3 } });
    // The manual window kept its own checkpoint: the schedule's never overwrote it, nor it the schedule's.
    const manual = (await items(env, stack.tables.events)).find(
      (i) => i.pk === 'ckpt#reconcile#2026-11-29T10:00:00.000Z#2026-11-29T11:00:00.000Z',
    );
    expect(manual).toMatchObject({ state: { complete: true, runs: 1, scheduled: false } });
  });

  it('emits Hookledger/ReconcileViolations with the Stack dimension alone, as the alarm names it', () => {
    const metrics = createReconcileMetrics('Hookledger-prod');
    metrics.addMetric('ReconcileViolations', 'Count', 2);
    const emf = metrics.serializeMetrics() as unknown as {
      _aws: { CloudWatchMetrics: { Namespace: string; Dimensions: string[][]; Metrics: { Name: string }[] }[] };
      Stack: string;
      ReconcileViolations: number;
    };
    const [directive] = emf._aws.CloudWatchMetrics;
    expect(directive).toMatchObject({ Namespace: 'Hookledger', Dimensions: [['Stack']], Metrics: [{ Name: 'ReconcileViolations' }] });
    expect(emf.Stack).toBe('Hookledger-prod');
    expect(emf.ReconcileViolations).toBe(2);
    metrics.clearMetrics();
  });
});
