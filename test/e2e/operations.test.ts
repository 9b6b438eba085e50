/**
 * Operations on the running local stack, through the real fan-out and consumers: a targeted replay
 * of one consumer, payload retention, and reconcile over the whole window.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import config from '../../hookledger.config';
import { reconcile } from '../../lambdas/reconcile/reconcile';
import type { LocalStack } from '../../local/stack';
import { replay } from '../../ops/replay';
import { status } from '../../ops/status';
import { iso } from '../../ops/time';
import { trace } from '../../ops/trace';
import { formatUsageCsv, usage } from '../../ops/usage';
import { platformEvent } from '../support/factories';
import { ledgerRows, send, startTestStack } from '../support/stack';

let stack: LocalStack;
let t0: number;
const deps = () => ({ ddb: stack.handlers.ddb, tables: stack.resources.tables, config, operator: 'e2e' });

beforeAll(async () => {
  stack = await startTestStack();
  t0 = Date.now();
  for (const [id, tenant] of [
    ['evt_01J8K7R001', 'tenant_204'],
    ['evt_01J8K7R002', 'tenant_311'],
    ['evt_01J8K7R003', 'tenant_204'],
  ] as const) {
    expect(
      (await send(stack, platformEvent({ id, tenant_id: tenant, key_id: tenant === 'tenant_204' ? 'key_42' : 'key_77' }))).status,
    ).toBe(202);
  }
  await stack.drain();
});
afterAll(() => stack?.stop());

describe('operations on the local stack', () => {
  it('replays audit-writer over the window through the fan-out: no sibling changes, no new ledger row, usage unchanged', async () => {
    const before = await ledgerRows(stack);
    const siblingsBefore = before
      .filter((r) => r.consumerId !== 'audit-writer')
      .map((r) => JSON.stringify(r))
      .sort();
    const usageBefore = await usage(deps(), { from: t0 - 60_000, to: Date.now() + 60_000 });

    const result = await replay(deps(), { consumer: 'audit-writer', window: { from: t0 - 60_000, to: Date.now() + 1 } });
    expect(result).toMatchObject({ consumer: 'audit-writer', matched: 3, requeued: 3, byState: { done: 3 } });
    await stack.drain();

    const after = await ledgerRows(stack);
    expect(after).toHaveLength(before.length);
    expect(
      after
        .filter((r) => r.consumerId !== 'audit-writer')
        .map((r) => JSON.stringify(r))
        .sort(),
    ).toEqual(siblingsBefore);
    const audit = after.filter((r) => r.consumerId === 'audit-writer');
    expect(audit).toHaveLength(3);
    for (const row of audit) {
      expect(row).toMatchObject({ state: 'done', units: 1, ackAttempt: 1 });
      expect(row.replays?.map((r) => r.replayId)).toEqual([result.replayId]);
      expect(row.replays?.[0]?.policyVersion).toBe('audit-v1');
      expect(row.reads).toHaveLength(2);
    }
    const usageAfter = await usage(deps(), { from: t0 - 60_000, to: Date.now() + 60_000 });
    expect(usageAfter.rows).toEqual(usageBefore.rows);
    expect(usageAfter.totalUnits).toBe(3 * 7);
  });

  it('counts intake requests by outcome, including refusals that stored nothing', async () => {
    expect((await send(stack, platformEvent({ id: 'evt_01J8K7R001' }))).status).toBe(200);
    const refused = await fetch(stack.webhookUrl('platform'), {
      method: 'POST',
      body: '{}',
      headers: { 'content-type': 'application/json' },
    });
    expect(refused.status).toBe(401);
    const admin = (await (
      await fetch(`${stack.adminUrl}/intake`, { headers: { authorization: `Bearer ${stack.credentials.adminToken}` } })
    ).json()) as { outcomes: Record<string, number> };
    expect(admin.outcomes).toEqual({ duplicate: 1, missing_signature: 1, recorded: 3 });
    const report = await status({ ...deps(), sqs: stack.handlers.sqs, queues: stack.resources.queues }, { intakeOutcomes: admin.outcomes });
    expect(report.intake).toMatchObject({ events: 3, outcomes: { recorded: 3, duplicate: 1, missing_signature: 1 } });
    expect(report.consumers.map((c) => [c.consumer, c.done, c.ready])).toEqual([
      ['billing-meter', 3, 0],
      ['audit-writer', 3, 0],
      ['risk-evaluator', 3, 0],
    ]);
    // The default window (the last 7 days, through the window index) holds every event here: the
    // whole-history scan gives the same counts.
    expect(report.window?.to).toBeGreaterThanOrEqual(t0);
    expect(report.read).toMatchObject({ receiptsRead: 3, ledgerRowsRead: 9 });
    const scanned = await status(
      { ...deps(), sqs: stack.handlers.sqs, queues: stack.resources.queues },
      { intakeOutcomes: admin.outcomes, scan: true },
    );
    expect(scanned.window).toBeUndefined();
    expect(scanned.consumers).toEqual(report.consumers);
    expect(scanned.intake).toEqual(report.intake);
  });

  it('reconcile finds no violation over the window', async () => {
    const report = await reconcile(
      { ddb: stack.handlers.ddb, tables: stack.resources.tables },
      { from: t0 - 60_000, to: Date.now() + 1, graceMs: 0 },
    );
    expect(report).toMatchObject({ receipts: 3, expectedDeliveries: 9, quarantined: 0, violations: [] });
  });

  it('reads the same answers through the window index as the full-history scans, and usage as CSV', async () => {
    const window = { from: t0 - 60_000, to: Date.now() + 1 };
    const consumers = config.consumers.map((c) => c.id);
    const ddbDeps = { ddb: stack.handlers.ddb, tables: stack.resources.tables };
    const indexed = await reconcile(ddbDeps, { ...window, graceMs: 0, consumers });
    const scanned = await reconcile(ddbDeps, { ...window, graceMs: 0, scan: true });
    expect({ ...indexed, checkedAt: 0 }).toEqual({ ...scanned, checkedAt: 0 });
    expect(indexed).toMatchObject({ receipts: 3, expectedDeliveries: 9, ledgerItems: 9, violations: [] });

    const all = await usage(deps(), window);
    expect(all.rows).toEqual((await usage(deps(), { ...window, scan: true })).rows);
    const tenant = await usage(deps(), { ...window, tenant: 'tenant_204' });
    expect(tenant.rows).toEqual([
      { tenantId: 'tenant_204', consumerId: 'audit-writer', units: 2, deliveries: 2 },
      { tenantId: 'tenant_204', consumerId: 'billing-meter', units: 10, deliveries: 2 },
      { tenantId: 'tenant_204', consumerId: 'risk-evaluator', units: 2, deliveries: 2 },
    ]);
    // Only tenant_204's two receipts and their six rows were read.
    expect(tenant.read).toMatchObject({ registryQueries: 0, receiptsRead: 2, ledgerRowsRead: 6 });
    expect(formatUsageCsv(tenant).split('\r\n').slice(1, 4)).toEqual([
      `${iso(window.from)},${iso(window.to)},tenant_204,audit-writer,2,2`,
      `${iso(window.from)},${iso(window.to)},tenant_204,billing-meter,10,2`,
      `${iso(window.from)},${iso(window.to)},tenant_204,risk-evaluator,2,2`,
    ]);

    const dry = await replay(deps(), { consumer: 'billing-meter', window, tenant: 'tenant_311', dryRun: true });
    expect(dry).toMatchObject({ matched: 1 });
  });

  it('after retention only the payload is gone: trace says expired; receipt, hash and trail remain', async () => {
    const thirtyOneDays = 31 * 86_400_000;
    const swept = await stack.ttlSweeper.sweepOnce(Date.now() + thirtyOneDays);
    expect(swept.deleted).toBeGreaterThanOrEqual(3);
    const report = await trace(deps(), 'evt_01J8K7R002');
    expect(report.receipt).toMatchObject({
      eventId: 'evt_01J8K7R002',
      tenantId: 'tenant_311',
      keyId: 'key_77',
      payload: 'expired',
      secretVersion: 'current',
    });
    expect(report.receipt.payloadHash).toMatch(/^hmac-sha256:[0-9a-f]{64}$/);
    expect(report.deliveries.map((d) => [d.consumer, d.state, d.units])).toEqual([
      ['billing-meter', 'done', 5],
      ['audit-writer', 'done', 1],
      ['risk-evaluator', 'done', 1],
    ]);
    expect(report.deliveries.every((d) => d.reads.length >= 1 && d.principal?.startsWith('arn:aws:iam::'))).toBe(true);
    const check = await reconcile(
      { ddb: stack.handlers.ddb, tables: stack.resources.tables },
      { from: t0 - 60_000, to: Date.now() + 1, graceMs: 0 },
    );
    expect(check.violations).toEqual([]);
  });
});
