/**
 * A consumer added to a running deployment: events stored before it existed reach it through
 * `backfill`, which adds it to their delivery sets and re-queues them; nothing else changes.
 * The stack is file-backed and restarted with the new configuration, as a redeploy would.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { defineConfig } from '../../core/config/schema';
import baseConfig from '../../hookledger.config';
import { reconcile } from '../../lambdas/reconcile/reconcile';
import type { ConsumerHandle } from '../../lambdas/runtime/runtime';
import type { LocalStack } from '../../local/stack';
import { backfill } from '../../ops/backfill';
import { platformEvent } from '../support/factories';
import { ledgerRows, send, startTestStack } from '../support/stack';

const dataDir = mkdtempSync(path.join(tmpdir(), 'hookledger-backfill-'));
const secretsFile = path.join(dataDir, 'secrets.json');
const withFraudGraph = defineConfig({
  ...baseConfig,
  consumers: [
    ...baseConfig.consumers,
    {
      id: 'fraud-graph',
      subscribes: ['payment.*'],
      fields: ['id', 'tenant_id'],
      entry: 'lambdas/consumers/audit-writer.ts',
      policyVersion: 'graph-1',
    },
  ],
});
const fraudGraph: ConsumerHandle = async () => ({ units: 4 });

let stack: LocalStack | undefined;
afterAll(() => stack?.stop());

describe('backfill of a newly added consumer', () => {
  it('gives fraud-graph exactly the past payment.* events and leaves every other row as it was', async () => {
    const t0 = Date.now();
    stack = await startTestStack({ dataDir, secretsFile });
    const events = [
      ['evt_01J8K7S001', 'payment.succeeded', 'tenant_204'],
      ['evt_01J8K7S002', 'invoice.paid', 'tenant_204'],
      ['evt_01J8K7S003', 'payment.failed', 'tenant_311'],
    ] as const;
    for (const [id, type, tenant] of events) expect((await send(stack, platformEvent({ id, type, tenant_id: tenant }))).status).toBe(202);
    await stack.drain();
    const before = (await ledgerRows(stack)).map((r) => JSON.stringify(r)).sort();
    expect(before).toHaveLength(3 + 2 + 3);
    await stack.stop();

    // Redeploy with the new consumer: same data, new configuration.
    stack = await startTestStack({ dataDir, secretsFile, config: withFraudGraph, handles: { 'fraud-graph': fraudGraph } });
    const deps = { ddb: stack.handlers.ddb, tables: stack.resources.tables, config: withFraudGraph, operator: 'e2e' };
    const window = { from: t0 - 1000, to: Date.now() + 1 };
    const result = await backfill(deps, { consumer: 'fraud-graph', ...window });
    expect(result).toMatchObject({ consumer: 'fraud-graph', matched: 2, added: 2, alreadyPresent: 0 });
    await stack.drain();

    const rows = await ledgerRows(stack);
    const graph = rows.filter((r) => r.consumerId === 'fraud-graph');
    expect(graph.map((r) => [r.eventId, r.tenantId, r.state, r.units]).sort()).toEqual([
      ['evt_01J8K7S001', 'tenant_204', 'done', 4],
      ['evt_01J8K7S003', 'tenant_311', 'done', 4],
    ]);
    expect(
      rows
        .filter((r) => r.consumerId !== 'fraud-graph')
        .map((r) => JSON.stringify(r))
        .sort(),
    ).toEqual(before);
    const report = await reconcile({ ddb: stack.handlers.ddb, tables: stack.resources.tables }, { ...window, graceMs: 0 });
    expect(report).toMatchObject({ receipts: 3, expectedDeliveries: 10, violations: [] });
  }, 90_000);
});
