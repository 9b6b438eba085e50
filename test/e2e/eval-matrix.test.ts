/**
 * The seeds' eval matrix on the local stack: real handlers, DynamoDB Local with Streams, fauxqs.
 * Each scenario uses its own event ids and asserts delivery counts and ledger totals per tenant.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import config from '../../hookledger.config';
import { handle as billingHandle } from '../../lambdas/consumers/billing-meter';
import type { ConsumerHandle } from '../../lambdas/runtime/runtime';
import type { LocalStack } from '../../local/stack';
import { platformEvent } from '../support/factories';
import { doneRows, ledgerRows, send, startTestStack, unitsByTenant } from '../support/stack';

/** Faults the tests switch on per event id. */
const faults = {
  crashBeforeAck: new Set<string>(),
  crashAfterEffect: new Set<string>(),
};
const attemptsSeen = new Map<string, number[]>();
/** An external system that dedupes on the idempotency key, like a payment API would. */
const external = { calls: [] as string[], applied: new Set<string>() };

const billing: ConsumerHandle = async (ctx) => {
  const id = ctx.attribution.eventId;
  attemptsSeen.set(id, [...(attemptsSeen.get(id) ?? []), ctx.attempt]);
  if (faults.crashBeforeAck.has(id) && ctx.attempt === 1) throw new Error('worker crashed before acknowledging');
  if (faults.crashAfterEffect.has(id)) {
    external.calls.push(ctx.idempotencyKey);
    external.applied.add(ctx.idempotencyKey);
    if (ctx.attempt === 1) throw new Error('worker crashed after the external side effect');
  }
  return billingHandle(ctx);
};

let stack: LocalStack;
beforeAll(async () => {
  stack = await startTestStack({ config, handles: { 'billing-meter': billing } });
});
afterAll(() => stack?.stop());

const rowsFor = async (eventId: string) => (await ledgerRows(stack)).filter((r) => r.eventId === eventId);

describe('eval matrix on the local stack', () => {
  it('first delivery: three consumers, three done rows, 7 units for tenant_204', async () => {
    expect((await send(stack, platformEvent({ id: 'evt_01J8K7M2Q4' }))).status).toBe(202);
    await stack.drain();
    const rows = await rowsFor('evt_01J8K7M2Q4');
    expect(rows.map((r) => `${r.consumerId}:${r.state}:${r.units}`).sort()).toEqual([
      'audit-writer:done:1',
      'billing-meter:done:5',
      'risk-evaluator:done:1',
    ]);
    expect(unitsByTenant(rows)).toEqual({ tenant_204: 7 });
  });

  it('duplicate sender delivery: the second POST answers 200 duplicate and creates nothing', async () => {
    const event = platformEvent({ id: 'evt_01J8K7M2R5', type: 'invoice.paid' });
    expect(await send(stack, event)).toEqual({ status: 202, body: { event_id: 'evt_01J8K7M2R5', deliveries: 2 } });
    await stack.drain();
    expect(await send(stack, event, { msgId: 'msg_retry_2' })).toEqual({
      status: 200,
      body: { status: 'duplicate', event_id: 'evt_01J8K7M2R5' },
    });
    await stack.drain();
    const rows = await rowsFor('evt_01J8K7M2R5');
    expect(rows).toHaveLength(2);
    expect(rows.every((r) => r.attempt === 1 && r.reads.length === 1)).toBe(true);
    expect(unitsByTenant(rows)).toEqual({ tenant_204: 2 });
  });

  it('crash before acknowledgement: the retry acknowledges once, on attempt 2', async () => {
    faults.crashBeforeAck.add('evt_01J8K7M2S6');
    await send(stack, platformEvent({ id: 'evt_01J8K7M2S6', type: 'payment.refunded' }));
    await stack.drain();
    expect(attemptsSeen.get('evt_01J8K7M2S6')).toEqual([1, 2]);
    const billingRow = (await rowsFor('evt_01J8K7M2S6')).find((r) => r.consumerId === 'billing-meter');
    expect(billingRow).toMatchObject({ state: 'done', units: 3, ackAttempt: 2, lastErrorCategory: 'error' });
    expect(billingRow?.errors?.map((e) => e.attempt)).toEqual([1]);
    expect(unitsByTenant(await rowsFor('evt_01J8K7M2S6'))).toEqual({ tenant_204: 5 });
  });

  it('crash after the external side effect: the retry passes the same idempotency key; one ledger row', async () => {
    faults.crashAfterEffect.add('evt_01J8K7M2T7');
    await send(stack, platformEvent({ id: 'evt_01J8K7M2T7' }));
    await stack.drain();
    expect(external.calls).toEqual(['platform:evt_01J8K7M2T7#billing-meter', 'platform:evt_01J8K7M2T7#billing-meter']);
    expect(external.applied.size).toBe(1);
    const billingRows = (await rowsFor('evt_01J8K7M2T7')).filter((r) => r.consumerId === 'billing-meter');
    expect(billingRows).toHaveLength(1);
    expect(billingRows[0]).toMatchObject({ state: 'done', units: 5, ackAttempt: 2 });
  });

  it('two tenants with two keys sending interleaved events: each total matches its own events', async () => {
    const plan = Array.from({ length: 11 }, (_, i) => ({
      id: `evt_01J8K7N${String(i).padStart(3, '0')}`,
      tenant_id: i % 2 === 0 ? 'tenant_204' : 'tenant_311',
      key_id: i % 2 === 0 ? 'key_42' : 'key_77',
      type: ['payment.succeeded', 'invoice.paid', 'scoped_key.created', 'payment.failed', 'customer.updated'][i % 5]!,
    }));
    const results = await Promise.all(plan.map((e) => send(stack, platformEvent(e))));
    expect(results.every((r) => r.status === 202)).toBe(true);
    await stack.drain();
    const rows = (await doneRows(stack)).filter((r) => plan.some((p) => p.id === r.eventId));
    // Expected from the model: billing by type + audit 1 + risk 1 for payment.* and scoped_key.*.
    const expected: Record<string, number> = {};
    for (const e of plan) {
      const billingUnits =
        e.type === 'payment.succeeded' ? 5 : e.type.startsWith('payment.') ? 3 : e.type.startsWith('scoped_key.') ? 2 : 1;
      const risk = e.type.startsWith('payment.') || e.type.startsWith('scoped_key.') ? 1 : 0;
      expected[e.tenant_id] = (expected[e.tenant_id] ?? 0) + billingUnits + 1 + risk;
    }
    expect(unitsByTenant(rows)).toEqual(expected);
    expect(expected).toEqual({ tenant_204: 27, tenant_311: 20 });
    expect(rows).toHaveLength(11 + 11 + 7);
    for (const row of rows) {
      const sent = plan.find((p) => p.id === row.eventId)!;
      expect([row.tenantId, row.keyId]).toEqual([sent.tenant_id, sent.key_id]);
    }
  });
});
