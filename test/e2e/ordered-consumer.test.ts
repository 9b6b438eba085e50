/**
 * An ordered consumer on the local stack (FIFO queue and DLQ in fauxqs): 200 events for 5 keys
 * interleaved are handled in intake order per key; a poison event holds back its own key only,
 * until it is quarantined; an event older than one already acknowledged for its key is recorded as
 * `stale` with 0 units and never handled.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineConfig, type HookledgerConfig } from '../../core/config/schema';
import defaultConfig from '../../hookledger.config';
import type { DeliveryContext } from '../../lambdas/runtime/runtime';
import type { LocalStack } from '../../local/stack';
import { redrive } from '../../ops/redrive';
import { platformEvent } from '../support/factories';
import { ledgerRows, queueDepth, send, startTestStack } from '../support/stack';

interface Handled {
  readonly eventId: string;
  readonly account: string;
  readonly seq: number;
  readonly at: number;
}

const POISON = 'evt_01J8K7P052';
const handled: Handled[] = [];
const poisonAttempts: number[] = [];
let poisonFixed = false;
let stack: LocalStack;
let config: HookledgerConfig;

const ACCOUNTS = ['acct_1', 'acct_2', 'acct_3', 'acct_4', 'acct_5'];
/** Event i: account acct_(i % 5 + 1), its seq-th event on that account (1-based). */
const planned = Array.from({ length: 200 }, (_, i) => ({
  eventId: `evt_01J8K7P${String(i).padStart(3, '0')}`,
  account: ACCOUNTS[i % 5]!,
  seq: Math.floor(i / 5) + 1,
  tenant: i % 2 === 0 ? 'tenant_204' : 'tenant_311',
}));

async function handle(delivery: DeliveryContext) {
  const data = delivery.payload.data as { account: string; seq: number };
  if (delivery.attribution.eventId === POISON && !poisonFixed) {
    poisonAttempts.push(Date.now());
    throw new Error('cannot apply this ledger entry');
  }
  handled.push({ eventId: delivery.attribution.eventId, account: data.account, seq: data.seq, at: Date.now() });
  return { units: 2 };
}

beforeAll(async () => {
  config = defineConfig({
    sources: defaultConfig.sources,
    consumers: [
      {
        id: 'ledger-sync',
        subscribes: ['*'],
        fields: ['id', 'data.account', 'data.seq'],
        entry: 'lambdas/consumers/audit-writer.ts',
        ordering: { key: { body: 'data.account' }, version: { body: 'data.seq' } },
        maxReceiveCount: 3,
        visibilityTimeoutSeconds: 6,
        timeoutSeconds: 1,
        batchSize: 10,
      },
    ],
  });
  stack = await startTestStack({ config, handles: { 'ledger-sync': handle } });
});
afterAll(() => stack?.stop());

describe('ordered consumer ledger-sync (key data.account, version data.seq)', () => {
  it('provisions a FIFO queue and a FIFO DLQ', () => {
    expect(stack.resources.queues['ledger-sync']!.url).toMatch(/hookledger-ledger-sync\.fifo$/);
    expect(stack.resources.queues['ledger-sync']!.dlqUrl).toMatch(/hookledger-ledger-sync-dlq\.fifo$/);
  });

  it('handles 200 interleaved events in intake order per key; the poison event holds back acct_3 only', async () => {
    for (const p of planned) {
      const res = await send(
        stack,
        platformEvent({ id: p.eventId, tenant_id: p.tenant, data: { account: p.account, seq: p.seq, amount: 100 } }),
      );
      expect(res.status).toBe(202);
    }
    await stack.drain({ timeoutMs: 90_000 });

    const poison = planned.find((p) => p.eventId === POISON)!;
    expect(poison).toEqual({ eventId: POISON, account: 'acct_3', seq: 11, tenant: 'tenant_204' });
    // Every other event handled exactly once, and per key in intake order.
    expect(handled).toHaveLength(199);
    for (const account of ACCOUNTS) {
      const seqs = handled.filter((h) => h.account === account).map((h) => h.seq);
      const expected = planned.filter((p) => p.account === account && p.eventId !== POISON).map((p) => p.seq);
      expect(seqs).toEqual(expected);
    }
    // The poison was tried maxReceiveCount times, then quarantined into the FIFO DLQ.
    expect(poisonAttempts).toHaveLength(3);
    const released = poisonAttempts[2]!;
    const laterOnAcct3 = handled.filter((h) => h.account === 'acct_3' && h.seq > 11);
    expect(laterOnAcct3).toHaveLength(29);
    expect(laterOnAcct3.every((h) => h.at > released)).toBe(true);
    // Meanwhile the other keys went on.
    const othersWhileBlocked = handled.filter((h) => h.account !== 'acct_3' && h.at > poisonAttempts[0]! && h.at < released);
    expect(othersWhileBlocked.length).toBeGreaterThan(0);

    const rows = (await ledgerRows(stack)).filter((r) => r.consumerId === 'ledger-sync');
    expect(rows).toHaveLength(200);
    expect(rows.filter((r) => r.state === 'done')).toHaveLength(199);
    expect(rows.find((r) => r.eventId === POISON)).toMatchObject({ state: 'quarantined', tenantId: 'tenant_204', attempt: 3 });
    expect(rows.filter((r) => r.state === 'done').reduce((sum, r) => sum + (r.units ?? 0), 0)).toBe(398);
    expect(await queueDepth(stack, stack.resources.queues['ledger-sync']!.dlqUrl)).toBe(1);
  });

  it('acknowledges an event older than one already acknowledged for its key as stale with 0 units, never handled', async () => {
    const before = handled.length;
    // acct_1 has acknowledged seq 40; seq 7 arrives late, seq 41 in order.
    await send(stack, platformEvent({ id: 'evt_01J8K7S007', tenant_id: 'tenant_204', data: { account: 'acct_1', seq: 7 } }));
    await send(stack, platformEvent({ id: 'evt_01J8K7S041', tenant_id: 'tenant_204', data: { account: 'acct_1', seq: 41 } }));
    await stack.drain();
    expect(handled.slice(before).map((h) => [h.eventId, h.seq])).toEqual([['evt_01J8K7S041', 41]]);
    const rows = await ledgerRows(stack);
    expect(rows.find((r) => r.eventId === 'evt_01J8K7S007')).toMatchObject({
      state: 'done',
      units: 0,
      outcome: 'stale',
      tenantId: 'tenant_204',
    });
    expect(rows.find((r) => r.eventId === 'evt_01J8K7S041')).toMatchObject({ state: 'done', units: 2, outcome: 'ok' });
  });

  it('redrives the quarantined poison back into its FIFO group once fixed: done once, after the events that overtook it', async () => {
    poisonFixed = true;
    const result = await redrive({ config, sqs: stack.handlers.sqs, queues: stack.resources.queues }, { consumer: 'ledger-sync' });
    expect(result).toMatchObject({ consumer: 'ledger-sync', method: 'receive-send-delete', moved: 1, toMove: 1 });
    await stack.drain();
    const row = (await ledgerRows(stack)).find((r) => r.eventId === POISON);
    // seq 11 of acct_3 is older than the acknowledged seq 40: stale, 0 units, never handled.
    expect(row).toMatchObject({ state: 'done', units: 0, outcome: 'stale', ackAttempt: 4 });
    expect(handled.some((h) => h.eventId === POISON)).toBe(false);
    expect(await queueDepth(stack, stack.resources.queues['ledger-sync']!.dlqUrl)).toBe(0);
  });
});
