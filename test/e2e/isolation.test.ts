/**
 * Failure isolation on the local stack: an expired lease taken over while the first worker finishes
 * late; one consumer offline while its siblings finish; a poison event that exhausts one consumer's
 * retry budget, lands in that consumer's DLQ with its history, and completes once after redrive.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineConfig } from '../../core/config/schema';
import baseConfig from '../../hookledger.config';
import { handle as riskHandle } from '../../lambdas/consumers/risk-evaluator';
import type { ConsumerHandle } from '../../lambdas/runtime/runtime';
import type { LocalStack } from '../../local/stack';
import { redrive } from '../../ops/redrive';
import { platformEvent } from '../support/factories';
import { ledgerRows, queueDepth, send, startTestStack } from '../support/stack';
import { takeoverAcknowledged, waitFor } from '../support/wait';

// risk-evaluator gets a 6 s visibility (a 2 s lease) and a budget of 3 receives so the scenarios run in seconds.
const config = defineConfig({
  ...baseConfig,
  consumers: baseConfig.consumers.map((c) =>
    c.id === 'risk-evaluator' ? { ...c, visibilityTimeoutSeconds: 6, timeoutSeconds: 1, maxReceiveCount: 3 } : c,
  ),
});

const slowOnFirstAttempt = new Set<string>();
const poison = new Set<string>();
const finishedLate: { eventId: string; attempt: number }[] = [];

const risk: ConsumerHandle = async (ctx) => {
  const id = ctx.attribution.eventId;
  if (slowOnFirstAttempt.has(id) && ctx.attempt === 1) {
    // Outlives its lease: SQS hands the message to another worker after the 6 s visibility, and this
    // one finishes only once that worker has acknowledged.
    await takeoverAcknowledged(stack, ctx.idempotencyKey, ctx.attempt);
    finishedLate.push({ eventId: id, attempt: ctx.attempt });
  }
  if (poison.has(id)) throw new RangeError(`risk model cannot score ${id}`);
  return riskHandle(ctx);
};

let stack: LocalStack;
beforeAll(async () => {
  stack = await startTestStack({ config, handles: { 'risk-evaluator': risk }, backoffBaseMs: 200 });
});
afterAll(() => stack?.stop());

const row = async (eventId: string, consumerId: string) =>
  (await ledgerRows(stack)).find((r) => r.eventId === eventId && r.consumerId === consumerId);

describe('failure isolation on the local stack', () => {
  it('fences off a worker whose lease expired and was taken over: one row, acknowledged by attempt 2', async () => {
    slowOnFirstAttempt.add('evt_01J8K7P001');
    await send(stack, platformEvent({ id: 'evt_01J8K7P001', type: 'payment.succeeded' }));
    await waitFor('the fenced worker to finish late', () => (finishedLate.length > 0 ? true : undefined), 30_000);
    await stack.drain();
    expect(finishedLate).toEqual([{ eventId: 'evt_01J8K7P001', attempt: 1 }]);
    const risk = await row('evt_01J8K7P001', 'risk-evaluator');
    expect(risk).toMatchObject({ state: 'done', units: 1, ackAttempt: 2, attempt: 2 });
    expect(risk?.reads).toHaveLength(2);
    expect((await ledgerRows(stack)).filter((r) => r.eventId === 'evt_01J8K7P001')).toHaveLength(3);
  }, 40_000);

  it('keeps siblings going while one consumer is offline, then drains its backlog without redoing theirs', async () => {
    await stack.pause('risk-evaluator');
    const ids = ['evt_01J8K7P101', 'evt_01J8K7P102', 'evt_01J8K7P103'];
    for (const id of ids)
      expect((await send(stack, platformEvent({ id, type: 'payment.failed', tenant_id: 'tenant_311', key_id: 'key_77' }))).status).toBe(
        202,
      );
    await stack.drain();
    let rows = (await ledgerRows(stack)).filter((r) => ids.includes(r.eventId));
    expect(
      rows
        .filter((r) => r.state === 'done')
        .map((r) => r.consumerId)
        .sort(),
    ).toEqual(['audit-writer', 'audit-writer', 'audit-writer', 'billing-meter', 'billing-meter', 'billing-meter']);
    expect(rows.some((r) => r.consumerId === 'risk-evaluator')).toBe(false);
    expect(await queueDepth(stack, stack.resources.queues['risk-evaluator']!.url)).toBe(3);
    const siblingsBefore = rows.map((r) => JSON.stringify(r)).sort();

    stack.resume('risk-evaluator');
    await stack.drain();
    rows = (await ledgerRows(stack)).filter((r) => ids.includes(r.eventId));
    expect(rows.filter((r) => r.consumerId === 'risk-evaluator' && r.state === 'done')).toHaveLength(3);
    expect(
      rows
        .filter((r) => r.consumerId !== 'risk-evaluator')
        .map((r) => JSON.stringify(r))
        .sort(),
    ).toEqual(siblingsBefore);
    expect(rows.reduce((sum, r) => sum + (r.tenantId === 'tenant_311' ? (r.units ?? 0) : 0), 0)).toBe(3 * (3 + 1 + 1));
  }, 40_000);

  it('sends a poison event to that consumer’s DLQ after 3 receives with its history, then completes once after redrive', async () => {
    const id = 'evt_01J8K7P201';
    poison.add(id);
    await send(stack, platformEvent({ id, type: 'payment.disputed' }));
    const queues = stack.resources.queues['risk-evaluator']!;
    await waitFor('the poison message in the DLQ', async () => ((await queueDepth(stack, queues.dlqUrl)) > 0 ? true : undefined), 30_000);
    await stack.drain();
    let risk = await row(id, 'risk-evaluator');
    expect(risk).toMatchObject({ state: 'quarantined', attempt: 3, lastErrorCategory: 'RangeError' });
    expect(risk?.errors?.map((e) => e.attempt)).toEqual([1, 2, 3]);
    expect((await row(id, 'billing-meter'))?.state).toBe('done');
    expect((await row(id, 'audit-writer'))?.state).toBe('done');
    expect(await queueDepth(stack, queues.dlqUrl)).toBe(1);

    // The fix ships; the operator redrives the DLQ (`hookledger redrive risk-evaluator`; fauxqs has no
    // StartMessageMoveTask, so the command falls back to receive / send back / delete).
    poison.delete(id);
    const result = await redrive({ config, sqs: stack.handlers.sqs, queues: stack.resources.queues }, { consumer: 'risk-evaluator' });
    expect(result).toMatchObject({ consumer: 'risk-evaluator', method: 'receive-send-delete', moved: 1, toMove: 1 });
    await stack.drain();
    risk = await row(id, 'risk-evaluator');
    expect(risk).toMatchObject({ state: 'done', units: 1, ackAttempt: 4 });
    expect(risk?.errors).toHaveLength(3);
    expect((await ledgerRows(stack)).filter((r) => r.eventId === id)).toHaveLength(3);
    expect(await queueDepth(stack, queues.dlqUrl)).toBe(0);
  }, 60_000);
});
