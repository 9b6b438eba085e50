/**
 * The window index: a window reads exactly its receipts and their ledger rows, never an item of
 * another hour, day or tenant, whatever history the tables hold. Counted item by item.
 */
import { DeleteCommand, ScanCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WindowReader } from '../../adapters/window-index';
import { reconcile } from '../../lambdas/reconcile/reconcile';
import { indexBackfill } from '../../ops/index-backfill';
import { replay } from '../../ops/replay';
import { status } from '../../ops/status';
import { usage } from '../../ops/usage';
import { config, freshStack, HOUR, items, MIN, OPERATOR, type OpsEnv, startOpsEnv, T0 } from './support';

let env: OpsEnv;
beforeAll(async () => {
  env = await startOpsEnv();
});
afterAll(() => env?.stop());

const DAY = 24 * HOUR;
const WINDOW = { from: T0, to: T0 + HOUR };
const NOW = T0 + 3 * DAY;

/**
 * The window [10:00, 11:00) on 2026-11-29 holds three receipts (two tenants). Around it: the same
 * tenants a minute before and exactly at its end, the day before and the day after, and a third
 * tenant later the same day; every receipt fully delivered.
 */
async function historyAroundTheWindow() {
  const stack = await freshStack(env);
  const { seed } = stack;
  const receipts: [string, number, string, string?][] = [
    ['evt_01J8K7M2Q4', T0 + 5 * MIN, 'tenant_204'],
    ['evt_01J8K7M2R5', T0 + 10 * MIN, 'tenant_204'],
    ['evt_01J8K7M2S6', T0 + 20 * MIN, 'tenant_311', 'customer.updated'],
    ['evt_01J8K7M1A1', T0 - MIN, 'tenant_204'],
    ['evt_01J8K7M1A2', T0 + HOUR, 'tenant_204'],
    ['evt_01J8K7M1B1', T0 - DAY, 'tenant_311'],
    ['evt_01J8K7M1B2', T0 - DAY + 5 * MIN, 'tenant_204'],
    ['evt_01J8K7M1C1', T0 + DAY, 'tenant_204'],
    ['evt_01J8K7M1D1', T0 + 3 * HOUR, 'tenant_888'],
    ['evt_01J8K7M1E1', Date.parse('2026-12-01T00:00:00Z'), 'tenant_204'],
  ];
  for (const [eventId, receivedAt, tenant, type] of receipts) {
    const receipt = await seed.receipt({ eventId, receivedAt, tenant, ...(type ? { type } : {}) });
    for (const consumer of receipt.consumers) await seed.deliver(eventId, consumer, 2, receivedAt + MIN);
  }
  return stack;
}

describe('window reads', () => {
  it('reconcile of an hour reads its 3 receipts and their 8 ledger rows, nothing of the 7 receipts around it', async () => {
    const stack = await historyAroundTheWindow();
    const reader = new WindowReader({ ddb: stack.ddb, tables: stack.tables });
    const report = await reconcile({ ddb: stack.ddb, tables: stack.tables, clock: () => NOW, reader }, WINDOW);

    expect(report).toMatchObject({ receipts: 3, expectedDeliveries: 8, ledgerItems: 8, violations: [] });
    expect(reader.counters).toMatchObject({
      // One day: one Query of tenants#2026-11-29, which lists tenant_204, tenant_311, tenant_888.
      registryQueries: 1,
      registryItems: 3,
      // One Query per tenant-day partition; tenant_888's returns nothing (its receipt is at 13:00).
      receiptQueries: 3,
      receiptsRead: 3,
      ledgerKeysRequested: 8,
      ledgerRowsRead: 8,
    });
    // The scan reads every item of both tables for the same answer.
    const scanned = await reconcile({ ddb: stack.ddb, tables: stack.tables, clock: () => NOW }, { ...WINDOW, scan: true });
    expect({ ...scanned, checkedAt: 0 }).toEqual({ ...report, checkedAt: 0 });
  });

  it('names exactly the receipts of the window, by id', async () => {
    const stack = await historyAroundTheWindow();
    const reader = new WindowReader({ ddb: stack.ddb, tables: stack.tables });
    const receipts = await reader.receipts({ window: WINDOW });
    expect(receipts.map((r) => r.eventId).sort()).toEqual(['evt_01J8K7M2Q4', 'evt_01J8K7M2R5', 'evt_01J8K7M2S6']);
    const rows = await reader.ledgerRows(receipts);
    expect([...rows.keys()].sort()).toEqual([
      'platform:evt_01J8K7M2Q4#audit-writer',
      'platform:evt_01J8K7M2Q4#billing-meter',
      'platform:evt_01J8K7M2Q4#risk-evaluator',
      'platform:evt_01J8K7M2R5#audit-writer',
      'platform:evt_01J8K7M2R5#billing-meter',
      'platform:evt_01J8K7M2R5#risk-evaluator',
      'platform:evt_01J8K7M2S6#audit-writer',
      'platform:evt_01J8K7M2S6#billing-meter',
    ]);
    expect(reader.counters.receiptsRead).toBe(3);
  });

  it("usage of one tenant for a month reads that tenant's November receipts and rows only", async () => {
    const stack = await historyAroundTheWindow();
    const reader = new WindowReader({ ddb: stack.ddb, tables: stack.tables });
    const november = { from: Date.parse('2026-11-01T00:00:00Z'), to: Date.parse('2026-12-01T00:00:00Z') };
    const report = await usage({ ddb: stack.ddb, tables: stack.tables }, { ...november, tenant: 'tenant_204', reader });

    // tenant_204 in November: Q4, R5, A1, A2 (29th), B2 (28th), C1 (30th): 6 events x 3 consumers x 2 units.
    expect(report.rows).toEqual([
      { tenantId: 'tenant_204', consumerId: 'audit-writer', units: 12, deliveries: 6 },
      { tenantId: 'tenant_204', consumerId: 'billing-meter', units: 12, deliveries: 6 },
      { tenantId: 'tenant_204', consumerId: 'risk-evaluator', units: 12, deliveries: 6 },
    ]);
    expect(reader.counters).toMatchObject({
      // 30 registry keys asked for by key, 3 exist (28th, 29th, 30th); no day is listed whole.
      registryQueries: 0,
      registryItems: 3,
      receiptQueries: 3,
      receiptsRead: 6,
      ledgerKeysRequested: 18,
      ledgerRowsRead: 18,
    });
  });

  it('puts receipts written before the index into it (index backfill), once', async () => {
    const stack = await historyAroundTheWindow();
    // As if written before the index: strip the attributes and the registry.
    const all = (await stack.ddb.send(new ScanCommand({ TableName: stack.tables.events }))).Items ?? [];
    for (const item of all) {
      if (item.kind === 'tenantDay') await stack.ddb.send(new DeleteCommand({ TableName: stack.tables.events, Key: { pk: item.pk } }));
      if (item.kind === 'event') {
        await stack.ddb.send(
          new UpdateCommand({ TableName: stack.tables.events, Key: { pk: item.pk }, UpdateExpression: 'REMOVE wpk, wsk' }),
        );
      }
    }
    const before = await reconcile({ ddb: stack.ddb, tables: stack.tables, clock: () => NOW }, WINDOW);
    expect(before.receipts).toBe(0);

    const deps = { ddb: stack.ddb, tables: stack.tables, config };
    expect(await indexBackfill(deps, { dryRun: true })).toEqual({ found: 10, indexed: 0, tenantDays: 7 });
    expect(await indexBackfill(deps)).toEqual({ found: 10, indexed: 10, tenantDays: 7 });
    expect(await indexBackfill(deps)).toEqual({ found: 0, indexed: 0, tenantDays: 0 });

    const after = await reconcile({ ddb: stack.ddb, tables: stack.tables, clock: () => NOW }, WINDOW);
    expect(after).toMatchObject({ receipts: 3, expectedDeliveries: 8, ledgerItems: 8, violations: [] });
  });
});

/**
 * Tenant ids are the provider's (printable ASCII without spaces): `tenants` (the word the day's
 * tenant list is kept under), ids holding `#` (the keys' separator) or `%` (the escape), and the
 * escaped spelling of another id are all legal, and each must read as itself: no receipt counted
 * twice, none lost, whatever the ids spell.
 */
describe('tenant ids that spell key parts', () => {
  const TENANTS: [string, string, string][] = [
    ['evt_01J8K7M3A1', 'tenants', 'payment.succeeded'],
    ['evt_01J8K7M3A2', 'tenants', 'payment.succeeded'],
    ['evt_01J8K7M3B1', 'tenant#204', 'payment.succeeded'],
    ['evt_01J8K7M3C1', 'tenant_204', 'payment.succeeded'],
    ['evt_01J8K7M3C2', 'tenant_204', 'customer.updated'],
    ['evt_01J8K7M3D1', '%74enants', 'payment.succeeded'],
    ['evt_01J8K7M3E1', 'tenant%23204', 'payment.succeeded'],
  ];

  async function lookalikeTenants() {
    const stack = await freshStack(env);
    for (const [i, [eventId, tenant, type]] of TENANTS.entries()) {
      const receipt = await stack.seed.receipt({ eventId, receivedAt: T0 + (i + 1) * MIN, tenant, type });
      for (const consumer of receipt.consumers) await stack.seed.deliver(eventId, consumer, 2, receipt.receivedAt + MIN);
    }
    return stack;
  }

  it("a tenant named 'tenants' is not listed as the day's tenants: reconcile, status and replay count 7 receipts, not 11", async () => {
    const stack = await lookalikeTenants();
    const reader = new WindowReader({ ddb: stack.ddb, tables: stack.tables });
    const report = await reconcile({ ddb: stack.ddb, tables: stack.tables, clock: () => NOW, reader }, WINDOW);
    // 6 payment.succeeded x 3 consumers + 1 customer.updated x 2 consumers.
    expect(report).toMatchObject({ receipts: 7, expectedDeliveries: 20, ledgerItems: 20, violations: [] });
    expect(reader.counters).toMatchObject({ registryQueries: 1, registryItems: 5, receiptQueries: 5, receiptsRead: 7 });
    const scanned = await reconcile({ ddb: stack.ddb, tables: stack.tables, clock: () => NOW }, { ...WINDOW, scan: true });
    expect({ ...scanned, checkedAt: 0 }).toEqual({ ...report, checkedAt: 0 });

    const st = await status({ ddb: stack.ddb, tables: stack.tables, config, clock: () => NOW }, { window: WINDOW });
    expect(st.intake.events).toBe(7);
    expect(st.consumers.map((c) => [c.consumer, c.done, c.ready])).toEqual([
      ['billing-meter', 7, 0],
      ['audit-writer', 7, 0],
      ['risk-evaluator', 6, 0],
    ]);

    const deps = { ddb: stack.ddb, tables: stack.tables, config, operator: OPERATOR, clock: () => NOW };
    const replayed = await replay(deps, { consumer: 'risk-evaluator', window: WINDOW });
    expect(replayed).toMatchObject({ matched: 6, requeued: 6, annotated: 6, byState: { done: 6 } });
    const requeued = (await items(env, stack.tables.events)).filter((i) => i.kind === 'requeue').map((i) => i.eventId);
    expect(requeued.sort()).toEqual([
      'evt_01J8K7M3A1',
      'evt_01J8K7M3A2',
      'evt_01J8K7M3B1',
      'evt_01J8K7M3C1',
      'evt_01J8K7M3D1',
      'evt_01J8K7M3E1',
    ]);
  });

  it("each look-alike tenant reads exactly its own receipts: 'tenants', '%74enants', 'tenant#204', 'tenant%23204', 'tenant_204'", async () => {
    const stack = await lookalikeTenants();
    const reader = new WindowReader({ ddb: stack.ddb, tables: stack.tables });
    const byTenant: Record<string, string[]> = {};
    for (const tenant of ['tenants', '%74enants', 'tenant#204', 'tenant%23204', 'tenant_204']) {
      byTenant[tenant] = (await reader.receipts({ window: WINDOW, tenant })).map((r) => r.eventId).sort();
    }
    expect(byTenant).toEqual({
      tenants: ['evt_01J8K7M3A1', 'evt_01J8K7M3A2'],
      '%74enants': ['evt_01J8K7M3D1'],
      'tenant#204': ['evt_01J8K7M3B1'],
      'tenant%23204': ['evt_01J8K7M3E1'],
      tenant_204: ['evt_01J8K7M3C1', 'evt_01J8K7M3C2'],
    });
    const all = await usage(
      { ddb: stack.ddb, tables: stack.tables },
      { ...WINDOW, reader: new WindowReader({ ddb: stack.ddb, tables: stack.tables }) },
    );
    const billed = Object.fromEntries(
      all.rows.filter((r) => r.consumerId === 'billing-meter').map((r) => [r.tenantId, [r.units, r.deliveries]]),
    );
    expect(billed).toEqual({
      tenants: [4, 2],
      '%74enants': [2, 1],
      'tenant#204': [2, 1],
      'tenant%23204': [2, 1],
      tenant_204: [4, 2],
    });
  });

  it('re-keys receipts written before tenant ids were escaped (index backfill), and reads none of them as another tenant meanwhile', async () => {
    const stack = await lookalikeTenants();
    // As written before the escape: the raw tenant id in `wpk`. `tenants` then sat in the day's tenant
    // list, `%74enants` in the partition `tenants` escapes to now, `tenant%23204` in `tenant#204`'s.
    const all = (await stack.ddb.send(new ScanCommand({ TableName: stack.tables.events }))).Items ?? [];
    for (const item of all.filter((i) => i.kind === 'event' && i.tenantId !== 'tenant_204')) {
      await stack.ddb.send(
        new UpdateCommand({
          TableName: stack.tables.events,
          Key: { pk: item.pk },
          UpdateExpression: 'SET wpk = :wpk',
          ExpressionAttributeValues: { ':wpk': `${item.tenantId}#2026-11-29` },
        }),
      );
    }
    const before = await reconcile({ ddb: stack.ddb, tables: stack.tables, clock: () => NOW }, WINDOW);
    expect(before).toMatchObject({ receipts: 2, expectedDeliveries: 5, violations: [] });
    const reader = new WindowReader({ ddb: stack.ddb, tables: stack.tables });
    expect(await reader.receipts({ window: WINDOW, tenant: 'tenant#204' })).toEqual([]);
    expect(await reader.receipts({ window: WINDOW, tenant: 'tenants' })).toEqual([]);

    const deps = { ddb: stack.ddb, tables: stack.tables, config };
    expect(await indexBackfill(deps, { dryRun: true })).toEqual({ found: 5, indexed: 0, tenantDays: 4 });
    expect(await indexBackfill(deps)).toEqual({ found: 5, indexed: 5, tenantDays: 4 });
    expect(await indexBackfill(deps)).toEqual({ found: 0, indexed: 0, tenantDays: 0 });

    const after = await reconcile({ ddb: stack.ddb, tables: stack.tables, clock: () => NOW }, WINDOW);
    expect(after).toMatchObject({ receipts: 7, expectedDeliveries: 20, ledgerItems: 20, violations: [] });
    const wpks = (await stack.ddb.send(new ScanCommand({ TableName: stack.tables.events }))).Items?.filter((i) => i.kind === 'event')
      .map((i) => [i.tenantId, i.wpk])
      .sort();
    expect(wpks).toEqual([
      ['%74enants', '%2574enants#2026-11-29'],
      ['tenant#204', 'tenant%23204#2026-11-29'],
      ['tenant%23204', 'tenant%2523204#2026-11-29'],
      ['tenant_204', 'tenant_204#2026-11-29'],
      ['tenant_204', 'tenant_204#2026-11-29'],
      ['tenants', '%74enants#2026-11-29'],
      ['tenants', '%74enants#2026-11-29'],
    ]);
  });
});
