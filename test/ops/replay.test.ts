import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineConfig } from '../../core/config/schema';
import type { RequeueItem } from '../../core/model';
import { messagesFor } from '../../lambdas/fanout/app';
import { backfill } from '../../ops/backfill';
import { UsageError } from '../../ops/errors';
import { replay } from '../../ops/replay';
import { streamRecord } from '../support/factories';
import { config, freshStack, HOUR, items, MIN, OPERATOR, type OpsEnv, rawItems, startOpsEnv, T0 } from './support';

let env: OpsEnv;
beforeAll(async () => {
  env = await startOpsEnv();
});
afterAll(() => env?.stop());

const WINDOW = { from: T0, to: T0 + HOUR };
const NOW = T0 + 3 * HOUR;

/**
 * Three receipts in [T0, T0+1h), one after it:
 *   evt_01J8K7M2Q4  payment.succeeded  tenant_204  all three consumers done
 *   evt_01J8K7M2R5  payment.succeeded  tenant_204  billing + audit done, risk leased
 *   evt_01J8K7M2S6  customer.updated   tenant_311  billing not yet claimed (ready), audit done
 *   evt_01J8K7M2T7  payment.succeeded  tenant_204  at T0+2h: outside the window
 */
async function seeded() {
  const stack = await freshStack(env);
  const { seed } = stack;
  await seed.receipt({ eventId: 'evt_01J8K7M2Q4', receivedAt: T0 + 5 * MIN });
  await seed.receipt({ eventId: 'evt_01J8K7M2R5', receivedAt: T0 + 10 * MIN });
  await seed.receipt({ eventId: 'evt_01J8K7M2S6', receivedAt: T0 + 20 * MIN, type: 'customer.updated', tenant: 'tenant_311' });
  await seed.receipt({ eventId: 'evt_01J8K7M2T7', receivedAt: T0 + 2 * HOUR });
  await seed.deliver('evt_01J8K7M2Q4', 'billing-meter', 5, T0 + 6 * MIN);
  await seed.deliver('evt_01J8K7M2Q4', 'audit-writer', 1, T0 + 6 * MIN);
  await seed.deliver('evt_01J8K7M2Q4', 'risk-evaluator', 2, T0 + 6 * MIN);
  await seed.deliver('evt_01J8K7M2R5', 'billing-meter', 3, T0 + 11 * MIN);
  await seed.deliver('evt_01J8K7M2R5', 'audit-writer', 1, T0 + 11 * MIN);
  await seed.claim('evt_01J8K7M2R5', 'risk-evaluator', T0 + 11 * MIN);
  await seed.deliver('evt_01J8K7M2S6', 'audit-writer', 1, T0 + 21 * MIN);
  await seed.deliver('evt_01J8K7M2T7', 'billing-meter', 4, T0 + 2 * HOUR + MIN);
  const deps = { ddb: stack.ddb, tables: stack.tables, config, operator: OPERATOR, clock: () => NOW };
  return { ...stack, deps };
}

const requeues = async (table: string) => (await items(env, table)).filter((i) => i.kind === 'requeue') as unknown as RequeueItem[];
const audits = async (table: string) => (await items(env, table)).filter((i) => i.kind === 'audit');

describe('replay', () => {
  describe('one consumer over a window', () => {
    it("writes one requeue item per matching delivery of that consumer only, leaving other consumers' ledger items byte for byte", async () => {
      const stack = await seeded();
      const ledgerBefore = await rawItems(env, stack.tables.ledger);

      const result = await replay(stack.deps, { consumer: 'billing-meter', window: WINDOW });

      expect(result).toMatchObject({ consumer: 'billing-meter', matched: 3, requeued: 3, annotated: 2, dryRun: false });
      expect(result.byState).toEqual({ done: 2, ready: 1 });
      expect(result.replayId).toMatch(/^rpl_[0-9A-HJKMNP-TV-Z]{26}$/);

      const written = await requeues(stack.tables.events);
      expect(written.map((r) => r.pk).sort()).toEqual(
        ['evt_01J8K7M2Q4', 'evt_01J8K7M2R5', 'evt_01J8K7M2S6'].map((e) => `rq#${result.replayId}#platform:${e}#billing-meter`),
      );
      const q4 = written.find((r) => r.eventId === 'evt_01J8K7M2Q4');
      expect(q4).toEqual({
        pk: `rq#${result.replayId}#platform:evt_01J8K7M2Q4#billing-meter`,
        kind: 'requeue',
        source: 'platform',
        eventId: 'evt_01J8K7M2Q4',
        eventType: 'payment.succeeded',
        tenantId: 'tenant_204',
        keyId: 'key_42',
        consumerId: 'billing-meter',
        replayId: result.replayId,
        receivedAt: T0 + 5 * MIN,
        payloadHmac: expect.stringMatching(/^[0-9a-f]{64}$/),
        payloadExpiresAt: T0 + 5 * MIN + 30 * 86_400_000,
        createdAt: NOW,
        expiresAt: Math.floor(NOW / 1000) + 86_400,
      });

      const ledgerAfter = await rawItems(env, stack.tables.ledger);
      // No ledger row added (evt_01J8K7M2S6#billing-meter stays absent until the consumer claims it).
      expect([...ledgerAfter.keys()].sort()).toEqual([...ledgerBefore.keys()].sort());
      for (const [pk, before] of ledgerBefore) {
        if (pk.endsWith('#billing-meter')) continue;
        expect(ledgerAfter.get(pk), pk).toBe(before);
      }
      // The replayed consumer's items gain only the request note: state, attempt and units as they were.
      const billing = (await items(env, stack.tables.ledger)).filter((i) => String(i.pk).endsWith('#billing-meter'));
      for (const item of billing) {
        const before = JSON.parse(ledgerBefore.get(String(item.pk)) as string) as Record<string, unknown>;
        const after = JSON.parse(ledgerAfter.get(String(item.pk)) as string) as Record<string, unknown>;
        const { replayRequests, ...rest } = after;
        if (String(item.pk).includes('evt_01J8K7M2T7')) {
          expect(after).toEqual(before); // outside the window: untouched
          continue;
        }
        expect(rest).toEqual(before);
        expect(item.replayRequests).toEqual([{ replayId: result.replayId, at: NOW, operator: OPERATOR }]);
      }

      const [audit, ...more] = await audits(stack.tables.events);
      expect(more).toEqual([]);
      expect(audit).toMatchObject({
        pk: `audit#${new Date(NOW).toISOString()}#${result.replayId}`,
        kind: 'audit',
        action: 'replay',
        consumer: 'billing-meter',
        window: { from: new Date(WINDOW.from).toISOString(), to: new Date(WINDOW.to).toISOString() },
        count: 3,
        operator: OPERATOR,
      });
    });

    it('produces requeue items the fan-out routes to that consumer alone, and a done delivery replays without new units', async () => {
      const stack = await seeded();
      const result = await replay(stack.deps, { consumer: 'billing-meter', window: WINDOW });
      const item = (await requeues(stack.tables.events)).find((r) => r.eventId === 'evt_01J8K7M2Q4')!;

      const messages = messagesFor(streamRecord(item as unknown as Record<string, unknown>, '100'));
      expect(messages).toEqual([
        {
          v: 2,
          source: 'platform',
          eventId: 'evt_01J8K7M2Q4',
          eventType: 'payment.succeeded',
          tenantId: 'tenant_204',
          keyId: 'key_42',
          receivedAt: T0 + 5 * MIN,
          consumerId: 'billing-meter',
          replayId: result.replayId,
          payloadHmac: item.payloadHmac,
          payloadExpiresAt: T0 + 5 * MIN + 30 * 86_400_000,
        },
      ]);
      // The consumer runtime's ledger protocol on that message: a replay claim, then a replay ack.
      const message = messages[0]!;
      const claim = await stack.ledger.claim({
        message,
        now: NOW,
        leaseMs: 60_000,
        principal: 'arn:aws:iam::000000000000:role/hookledger-local-billing-meter',
      });
      expect(claim).toMatchObject({ kind: 'claimed', replay: true });
      if (claim.kind !== 'claimed') throw new Error('unreachable');
      await stack.ledger.acknowledge({
        message,
        attempt: claim.attempt,
        replay: true,
        units: 99,
        principal: 'p',
        policyVersion: 'units-2026-11',
        now: NOW + 1,
      });
      const row = await stack.ledger.get('platform', 'evt_01J8K7M2Q4', 'billing-meter');
      expect(row).toMatchObject({ state: 'done', units: 5 });
      expect(row?.replays).toEqual([expect.objectContaining({ replayId: result.replayId })]);
    });
  });

  it('--dry-run counts the matching deliveries and writes nothing to either table', async () => {
    const stack = await seeded();
    const events = await rawItems(env, stack.tables.events);
    const ledger = await rawItems(env, stack.tables.ledger);

    const result = await replay(stack.deps, { consumer: 'billing-meter', window: WINDOW, dryRun: true });

    expect(result).toEqual({
      consumer: 'billing-meter',
      matched: 3,
      expired: 0,
      erased: 0,
      byState: { done: 2, ready: 1 },
      dryRun: true,
      requeued: 0,
      annotated: 0,
    });
    expect(await rawItems(env, stack.tables.events)).toEqual(events);
    expect(await rawItems(env, stack.tables.ledger)).toEqual(ledger);
  });

  it('narrows by tenant and type, and replays one event with --event', async () => {
    const stack = await seeded();
    expect((await replay(stack.deps, { consumer: 'audit-writer', window: WINDOW, tenant: 'tenant_311', dryRun: true })).matched).toBe(1);
    expect((await replay(stack.deps, { consumer: 'audit-writer', window: WINDOW, type: 'payment.succeeded', dryRun: true })).matched).toBe(
      2,
    );

    const one = await replay(stack.deps, { consumer: 'risk-evaluator', event: { eventId: 'evt_01J8K7M2R5' } });
    expect(one).toMatchObject({ matched: 1, requeued: 1, annotated: 1, byState: { leased: 1 } });
    expect((await requeues(stack.tables.events)).map((r) => r.pk)).toEqual([`rq#${one.replayId}#platform:evt_01J8K7M2R5#risk-evaluator`]);
  });

  it("refuses an event outside the consumer's delivery set, pointing at backfill", async () => {
    const stack = await seeded();
    await expect(replay(stack.deps, { consumer: 'risk-evaluator', event: { eventId: 'evt_01J8K7M2S6' } })).rejects.toThrow(
      /never meant for risk-evaluator.*backfill/,
    );
    await expect(replay(stack.deps, { consumer: 'nobody', window: WINDOW })).rejects.toBeInstanceOf(UsageError);
  });

  it('asks for confirmation after counting, and writes nothing when declined', async () => {
    const stack = await seeded();
    const events = await rawItems(env, stack.tables.events);
    const plans: unknown[] = [];
    const result = await replay(stack.deps, {
      consumer: 'billing-meter',
      window: WINDOW,
      confirm: async (plan) => {
        plans.push(plan);
        return false;
      },
    });
    expect(plans).toEqual([{ consumer: 'billing-meter', matched: 3, expired: 0, erased: 0, byState: { done: 2, ready: 1 } }]);
    expect(result).toMatchObject({ declined: true, requeued: 0 });
    expect(await rawItems(env, stack.tables.events)).toEqual(events);
  });
});

describe('backfill', () => {
  const withFraud = defineConfig({
    ...config,
    consumers: [
      ...config.consumers,
      {
        id: 'fraud-scanner',
        subscribes: ['payment.*'],
        fields: ['id', 'type', 'tenant_id', 'data.amount'],
        entry: 'lambdas/consumers/risk-evaluator.ts',
      },
    ],
  });

  it('adds exactly the new consumer to the matching receipts of the window and requeues them; twice is a no-op', async () => {
    const stack = await seeded();
    const ledger = await rawItems(env, stack.tables.ledger);
    const deps = { ...stack.deps, config: withFraud };

    expect(await backfill(deps, { consumer: 'fraud-scanner', ...WINDOW, dryRun: true })).toMatchObject({ matched: 2, added: 0 });
    const result = await backfill(deps, { consumer: 'fraud-scanner', ...WINDOW });
    expect(result).toMatchObject({ consumer: 'fraud-scanner', matched: 2, added: 2, alreadyPresent: 0, dryRun: false });

    const receipts = Object.fromEntries(
      (await items(env, stack.tables.events)).filter((i) => i.kind === 'event').map((i) => [i.eventId, i.consumers]),
    );
    expect(receipts).toEqual({
      evt_01J8K7M2Q4: ['billing-meter', 'audit-writer', 'risk-evaluator', 'fraud-scanner'],
      evt_01J8K7M2R5: ['billing-meter', 'audit-writer', 'risk-evaluator', 'fraud-scanner'],
      evt_01J8K7M2S6: ['billing-meter', 'audit-writer'], // customer.updated: not subscribed
      evt_01J8K7M2T7: ['billing-meter', 'audit-writer', 'risk-evaluator'], // outside the window
    });
    expect((await requeues(stack.tables.events)).map((r) => `${r.eventId}#${r.consumerId}`).sort()).toEqual([
      'evt_01J8K7M2Q4#fraud-scanner',
      'evt_01J8K7M2R5#fraud-scanner',
    ]);
    expect(await audits(stack.tables.events)).toEqual([
      expect.objectContaining({ action: 'backfill', consumer: 'fraud-scanner', count: 2, replayId: result.replayId, operator: OPERATOR }),
    ]);
    expect(await rawItems(env, stack.tables.ledger)).toEqual(ledger);

    expect(await backfill(deps, { consumer: 'fraud-scanner', ...WINDOW })).toMatchObject({ matched: 0, added: 0 });
    expect(await requeues(stack.tables.events)).toHaveLength(2);
  });

  it('refuses a consumer that is not configured', async () => {
    const stack = await seeded();
    await expect(backfill(stack.deps, { consumer: 'fraud-scanner', ...WINDOW })).rejects.toThrow(/add it to hookledger.config.ts/);
  });
});
