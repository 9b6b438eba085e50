/**
 * The window index: a window reads exactly its receipts and their ledger rows, never an item of
 * another hour, day or tenant, whatever history the tables hold. Counted item by item.
 */
import { DeleteCommand, ScanCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconcile } from '../../lambdas/reconcile/reconcile';
import { WindowReader } from '../../lambdas/shared/window-index';
import { usage } from '../../cli/ops/usage';
import { indexBackfill } from '../../cli/ops/index-backfill';
import { config, freshStack, HOUR, MIN, type OpsEnv, startOpsEnv, T0 } from './support';

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
