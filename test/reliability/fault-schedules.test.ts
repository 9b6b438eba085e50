/**
 * Model-based fault injection: fast-check generates small schedules (3-8 events over two tenants and
 * their keys, each delivery with its own faults), runs them on one local pipeline, and compares the
 * ledger with what a model of the delivery protocol says must be there.
 *
 * Faults, per (event, consumer) delivery, in the order they hit its receives:
 *   crashBeforeClaim   the worker dies before the runtime runs (the batch fails, nothing is claimed)
 *   throwAfterClaim    the handler throws before any side effect
 *   throwAfterEffect   the handler performs its external side effect, then throws
 * and then one terminal behaviour:
 *   ok                 completes
 *   deleteFails        completes; the poller's DeleteMessageBatch loses that entry (ledger committed,
 *                      message not deleted: it comes back and must find the delivery done)
 *   crashAfterAck      completes; the function dies after the runtime returned (same consequence)
 *   slowTakeover       the worker outlives its lease; a second worker takes over and acknowledges,
 *                      the slow one finishes late and is fenced off
 *   quarantineRedrive  fails on every receive until quarantined and moved to the DLQ; the fix ships,
 *                      the operator redrives, it completes
 *   permanentRedrive   a PermanentError sends it to the DLQ at once; redriven after the fix, completes
 *   permanentLeft      PermanentError every time: after the redrive it goes back and stays quarantined
 * Per event: provider duplicates (concurrent, same-message resend, late), a targeted replay of one
 * consumer's done delivery; per schedule: revocation of key_42 and/or key_77 while risk-evaluator's
 * queue holds their events.
 *
 * Run longer:    HOOKLEDGER_FAULT_RUNS=200 npx vitest run test/reliability/fault-schedules.test.ts
 * Replay a case: HOOKLEDGER_FAULT_SEED=<seed> HOOKLEDGER_FAULT_PATH=<path> npx vitest run test/reliability/fault-schedules.test.ts
 * Shrink a case: add HOOKLEDGER_FAULT_SHRINK=1 (off by default: every shrink step is a pipeline run).
 *
 * All consumers run with a 6 s lease (visibilityTimeoutSeconds 6, timeoutSeconds 1), a budget of 4
 * receives and batches of 1. Batches of 1 keep every receive count a function of the delivery's own
 * faults: a crash fails its whole batch, so with batches of 10 a crashing message also spends its
 * siblings' receive budget (true on AWS too) and the model would have to know the batch composition.
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { subscribedConsumers } from '../../core/config/routing';
import { defineConfig } from '../../core/config/schema';
import { type KeyItem, keyRegistryKey, ledgerKey } from '../../core/model';
import baseConfig from '../../hookledger.config';
import { handle as auditHandle } from '../../lambdas/consumers/audit-writer';
import { handle as billingHandle, unitsFor } from '../../lambdas/consumers/billing-meter';
import { REVIEW_THRESHOLD, handle as riskHandle } from '../../lambdas/consumers/risk-evaluator';
import { PermanentError } from '../../lambdas/runtime/errors';
import type { ConsumerHandle, ConsumerLambdaHandler } from '../../lambdas/runtime/runtime';
import { revokeKey } from '../../ops/keys';
import { redrive } from '../../ops/redrive';
import { replay } from '../../ops/replay';
import { signedHeaders } from '../support/factories';
import { takeoverAcknowledged } from '../support/wait';
import { type FaultStack, ledgerItems, queueDepth, receipts, reconcileWindow, startFaultStack, takeAll } from './support';

const NUM_RUNS = Number(process.env.HOOKLEDGER_FAULT_RUNS ?? 6);
const SEED = Number(process.env.HOOKLEDGER_FAULT_SEED ?? 20_261_129);
const PATH = process.env.HOOKLEDGER_FAULT_PATH;
const SHRINK = process.env.HOOKLEDGER_FAULT_SHRINK === '1';
/** Prints each schedule as it runs. */
const VERBOSE = process.env.HOOKLEDGER_FAULT_VERBOSE === '1';

const LEASE_S = 6;
const MAX_RECEIVES = 4;

const config = defineConfig({
  ...baseConfig,
  consumers: baseConfig.consumers.map((c) => ({
    ...c,
    visibilityTimeoutSeconds: LEASE_S,
    timeoutSeconds: 1,
    maxReceiveCount: MAX_RECEIVES,
    batchSize: 1,
  })),
});

const SOURCE = 'platform';
const CONSUMERS = ['billing-meter', 'audit-writer', 'risk-evaluator'] as const;
type ConsumerId = (typeof CONSUMERS)[number];
const TENANT_KEYS = { tenant_204: 'key_42', tenant_311: 'key_77' } as const;
type Tenant = keyof typeof TENANT_KEYS;
const TYPES = ['payment.succeeded', 'payment.failed', 'scoped_key.revoked', 'invoice.paid', 'customer.updated'] as const;

type Step = 'crashBeforeClaim' | 'throwAfterClaim' | 'throwAfterEffect';
type Terminal = 'ok' | 'deleteFails' | 'crashAfterAck' | 'slowTakeover' | 'quarantineRedrive' | 'permanentRedrive' | 'permanentLeft';
type Duplicate = 'concurrent' | 'resend' | 'late';

interface DeliveryPlan {
  readonly steps: readonly Step[];
  readonly terminal: Terminal;
}
interface EventPlan {
  readonly tenant: Tenant;
  readonly type: (typeof TYPES)[number];
  readonly large: boolean;
  readonly duplicates: readonly Duplicate[];
  readonly faults: Readonly<Record<ConsumerId, DeliveryPlan | null>>;
  readonly replay: readonly ConsumerId[];
}
interface Schedule {
  readonly events: readonly EventPlan[];
  readonly revoke: readonly ('key_42' | 'key_77')[];
}

// --- the generator ---------------------------------------------------------------------------

const stepArb = fc.constantFrom<Step>('crashBeforeClaim', 'throwAfterClaim', 'throwAfterEffect');
const terminalArb = fc.oneof(
  { weight: 6, arbitrary: fc.constant<Terminal>('ok') },
  { weight: 2, arbitrary: fc.constant<Terminal>('deleteFails') },
  { weight: 1, arbitrary: fc.constant<Terminal>('crashAfterAck') },
  { weight: 2, arbitrary: fc.constant<Terminal>('slowTakeover') },
  { weight: 1, arbitrary: fc.constant<Terminal>('quarantineRedrive') },
  { weight: 1, arbitrary: fc.constant<Terminal>('permanentRedrive') },
  { weight: 1, arbitrary: fc.constant<Terminal>('permanentLeft') },
);
// At most 2 failing receives before the terminal one, so ok/deleteFails/slowTakeover end within
// the 4-receive budget (a lost delete or a takeover needs one more receive); quarantineRedrive
// spends the whole budget on its own.
const planArb: fc.Arbitrary<DeliveryPlan> = fc
  .record({ steps: fc.array(stepArb, { maxLength: 2 }), terminal: terminalArb })
  // One worker death per delivery: each costs a whole lease (6 s) of waiting.
  .filter((p) => p.steps.filter((s) => s === 'crashBeforeClaim').length <= 1)
  .map((p) => (p.terminal === 'quarantineRedrive' ? { steps: [], terminal: p.terminal } : p));
const faultArb = fc.oneof({ weight: 3, arbitrary: fc.constant(null) }, { weight: 2, arbitrary: planArb });
const eventArb: fc.Arbitrary<EventPlan> = fc.record({
  tenant: fc.constantFrom<Tenant>('tenant_204', 'tenant_311'),
  type: fc.constantFrom(...TYPES),
  large: fc.boolean(),
  duplicates: fc.array(fc.constantFrom<Duplicate>('concurrent', 'resend', 'late'), { maxLength: 2 }),
  faults: fc.record({ 'billing-meter': faultArb, 'audit-writer': faultArb, 'risk-evaluator': faultArb }),
  replay: fc.subarray([...CONSUMERS], { maxLength: 1 }),
});
const scheduleArb: fc.Arbitrary<Schedule> = fc.record({
  events: fc.array(eventArb, { minLength: 3, maxLength: 8 }),
  revoke: fc.subarray(['key_42', 'key_77'] as ('key_42' | 'key_77')[]),
});

// --- the model -------------------------------------------------------------------------------

const deliverySet = (type: string) => subscribedConsumers(config, type) as ConsumerId[];
const settlesDone = (plan: DeliveryPlan | null) => plan?.terminal !== 'permanentLeft';
const goesToDlq = (plan: DeliveryPlan | null) =>
  plan !== null && ['quarantineRedrive', 'permanentRedrive', 'permanentLeft'].includes(plan.terminal);

/** Units and outcome of a completed delivery, from the consumers' own rules. */
function expectedResult(consumer: ConsumerId, event: EventPlan, revoked: boolean): { units: number; outcome: string } {
  if (consumer === 'billing-meter') return { units: unitsFor(event.type), outcome: 'ok' };
  if (consumer === 'audit-writer') return { units: 1, outcome: 'ok' };
  if (!event.type.startsWith('payment.')) return { units: 1, outcome: 'observed' };
  if (!event.large) return { units: 1, outcome: 'scored' };
  return revoked ? { units: 1, outcome: 'action_declined_key_revoked' } : { units: 2, outcome: 'hold_placed' };
}

/** Claims (the fencing attempt) and recorded failures the protocol makes for a plan. */
function expectedCounts(plan: DeliveryPlan | null, replayed: boolean): { attempt: number; errors: number; ackAttempt?: number } {
  const throws = (plan?.steps ?? []).filter((s) => s !== 'crashBeforeClaim').length;
  const replays = replayed ? 1 : 0;
  switch (plan?.terminal ?? 'ok') {
    case 'slowTakeover':
      return { attempt: throws + 2 + replays, errors: throws, ackAttempt: throws + 2 };
    case 'quarantineRedrive':
      return { attempt: MAX_RECEIVES + 1 + replays, errors: MAX_RECEIVES, ackAttempt: MAX_RECEIVES + 1 };
    case 'permanentRedrive':
      return { attempt: throws + 2 + replays, errors: throws + 1, ackAttempt: throws + 2 };
    case 'permanentLeft':
      return { attempt: throws + 2, errors: throws + 2 };
    default:
      return { attempt: throws + 1 + replays, errors: throws, ackAttempt: throws + 1 };
  }
}

// --- fault injection -------------------------------------------------------------------------

interface LiveDelivery {
  readonly plan: DeliveryPlan;
  steps: Step[];
  fixed: boolean;
  slowStarted: boolean;
  deleteFailed: boolean;
  crashedAfterAck: boolean;
}
/** Keyed `<eventId>#<consumerId>`. */
const live = new Map<string, LiveDelivery>();
/** Every external side effect performed, with the idempotency key it carried. */
const effects: { eventId: string; consumerId: string; key: string; attempt: number; replayId?: string }[] = [];
const failingDeletes = new Set<string>();
const faultCounts: Record<string, number> = {};
const count = (name: string) => {
  faultCounts[name] = (faultCounts[name] ?? 0) + 1;
};

class DownstreamOutage extends Error {
  override readonly name = 'DownstreamOutage';
}

const realHandles: Record<ConsumerId, ConsumerHandle> = {
  'billing-meter': billingHandle,
  'audit-writer': auditHandle,
  'risk-evaluator': riskHandle,
};

function faultyHandle(consumerId: ConsumerId): ConsumerHandle {
  return async (ctx) => {
    const eventId = ctx.attribution.eventId;
    const delivery = live.get(`${eventId}#${consumerId}`);
    const effect = () => effects.push({ eventId, consumerId, key: ctx.idempotencyKey, attempt: ctx.attempt, replayId: ctx.replayId });
    if (delivery && delivery.steps.length > 0) {
      const step = delivery.steps.shift();
      if (step === 'throwAfterClaim') {
        count(step);
        throw new Error(`worker crashed after claiming ${eventId}`);
      }
      if (step === 'throwAfterEffect') {
        count(step);
        effect();
        throw new Error(`worker crashed after the side effect of ${eventId}`);
      }
      throw new Error(`harness bug: step ${String(step)} reached the handler`);
    }
    const terminal = delivery?.plan.terminal;
    if (terminal === 'quarantineRedrive' && !delivery?.fixed)
      throw new DownstreamOutage(`downstream unavailable while handling ${eventId}`);
    if (terminal === 'permanentLeft' || (terminal === 'permanentRedrive' && !delivery?.fixed)) {
      throw new PermanentError(`payload of ${eventId} cannot be processed`, 'poison');
    }
    if (terminal === 'slowTakeover' && delivery && !delivery.slowStarted) {
      delivery.slowStarted = true;
      count('slowTakeover');
      // Finishes only once the worker that took over has acknowledged. Should that never happen, it
      // finishes anyway when the wait gives up, and the model reports the delivery's attempts.
      await takeoverAcknowledged(stack, ctx.idempotencyKey, ctx.attempt, 60_000).catch(() => undefined);
    }
    effect();
    return realHandles[consumerId](ctx);
  };
}

/** Crashes outside the runtime: before it runs (no claim) or after it returned (ledger committed). */
function wrapConsumer(consumerId: string, inner: ConsumerLambdaHandler): ConsumerLambdaHandler {
  return async (event, context) => {
    const deliveries = event.Records.map((record) => {
      const body = JSON.parse(record.body) as { eventId?: string };
      return { record, delivery: live.get(`${body.eventId}#${consumerId}`) };
    });
    if (deliveries.some(({ delivery }) => delivery?.steps[0] === 'crashBeforeClaim')) {
      for (const { delivery } of deliveries) if (delivery?.steps[0] === 'crashBeforeClaim') delivery.steps.shift();
      count('crashBeforeClaim');
      throw new Error('worker crashed before claiming');
    }
    const result = await inner(event, context);
    const failed = new Set(result.batchItemFailures.map((f) => f.itemIdentifier));
    let crash = false;
    for (const { record, delivery } of deliveries) {
      if (!delivery || failed.has(record.messageId) || delivery.steps.length > 0) continue;
      if (delivery.plan.terminal === 'deleteFails' && !delivery.deleteFailed) {
        delivery.deleteFailed = true;
        failingDeletes.add(record.receiptHandle);
        count('deleteFails');
      }
      if (delivery.plan.terminal === 'crashAfterAck' && !delivery.crashedAfterAck) {
        delivery.crashedAfterAck = true;
        crash = true;
        count('crashAfterAck');
      }
    }
    if (crash) throw new Error('worker crashed after acknowledging, before returning');
    return result;
  };
}

// --- running a schedule ----------------------------------------------------------------------

let stack: FaultStack;
const ops = () => ({ ddb: stack.handlers.ddb, tables: stack.resources.tables, config, operator: 'reliability-test' });
const totals = { runs: 0, events: 0, sends: 0, accepted: 0, duplicates: 0, deliveries: 0, dlq: 0, replays: 0, revocations: 0, ms: 0 };
let runCounter = 0;

beforeAll(async () => {
  stack = await startFaultStack({
    config,
    handles: Object.fromEntries(CONSUMERS.map((id) => [id, faultyHandle(id)])),
    wrapConsumer,
    failDelete: (_queue, receiptHandle) => failingDeletes.delete(receiptHandle),
  });
});
afterAll(() => stack?.stop());

async function sendEvent(event: EventPlan & { id: string }, msgId: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const payload = {
    id: event.id,
    type: event.type,
    tenant_id: event.tenant,
    key_id: TENANT_KEYS[event.tenant],
    created: Math.floor(Date.now() / 1000),
    data: { amount: event.large ? REVIEW_THRESHOLD * 2.5 : 4200, currency: 'eur', card_last4: '4242' },
  };
  const body = JSON.stringify(payload);
  const secret = (await stack.secrets.get(SOURCE)).current;
  const res = await fetch(stack.webhookUrl(SOURCE), {
    method: 'POST',
    headers: signedHeaders(body, { secret, msgId, at: Date.now() }),
    body,
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** Puts both keys back to active: each schedule starts from the same registry. */
async function resetKeys(): Promise<void> {
  for (const [tenantId, keyId] of Object.entries(TENANT_KEYS)) {
    const item: KeyItem = { pk: keyRegistryKey(keyId), kind: 'key', keyId, tenantId, status: 'active', createdAt: Date.now() };
    await stack.handlers.ddb.send(new PutCommand({ TableName: stack.resources.tables.events, Item: item }));
  }
}

/** Leaves the pipeline as a schedule expects it even after a failed one: running, queues empty. */
async function resetPipeline(): Promise<void> {
  for (const id of CONSUMERS) stack.resume(id);
  for (const d of live.values()) d.fixed = true;
  await stack.drain({ timeoutMs: 120_000 });
  for (const id of CONSUMERS) await takeAll(stack.handlers.sqs, stack.resources.queues[id]!.dlqUrl);
}

async function runSchedule(schedule: Schedule): Promise<void> {
  const run = ++runCounter;
  const started = Date.now();
  await resetPipeline();
  await resetKeys();
  const events = schedule.events.map((e, n) => ({ ...e, id: `evt_${run}_${n}` }));
  if (VERBOSE) console.log(`[fault-schedules] run ${run}: ${describeSchedule(schedule)}`);
  for (const e of events) {
    for (const consumerId of deliverySet(e.type)) {
      const plan = e.faults[consumerId];
      if (!plan) continue;
      live.set(`${e.id}#${consumerId}`, {
        plan,
        steps: [...plan.steps],
        fixed: false,
        slowStarted: false,
        deleteFailed: false,
        crashedAfterAck: false,
      });
      if (['quarantineRedrive', 'permanentRedrive', 'permanentLeft'].includes(plan.terminal)) count(plan.terminal);
    }
  }
  const revoking = schedule.revoke.length > 0;
  if (revoking) await stack.pause('risk-evaluator');

  // Intake: originals with their concurrent duplicates, then same-message resends.
  const responses = new Map<string, { status: number; body: Record<string, unknown> }[]>();
  await Promise.all(
    events.map(async (e) => {
      const concurrent = e.duplicates.filter((d) => d === 'concurrent').map((_, i) => sendEvent(e, `msg_${e.id}_dup${i}`));
      const out = await Promise.all([sendEvent(e, `msg_${e.id}`), ...concurrent]);
      for (const d of e.duplicates) if (d === 'resend') out.push(await sendEvent(e, `msg_${e.id}`));
      responses.set(e.id, out);
    }),
  );
  await stack.drain();
  if (revoking) {
    // Their events wait in risk-evaluator's stopped queue while the keys are revoked.
    for (const keyId of schedule.revoke) await revokeKey(ops(), { keyId });
    stack.resume('risk-evaluator');
    await stack.drain();
  }
  for (const e of events) {
    for (const d of e.duplicates) if (d === 'late') responses.get(e.id)!.push(await sendEvent(e, `msg_${e.id}_late`));
  }
  await stack.drain();

  // Quarantine: exactly the planned deliveries sit in their consumer's DLQ; the fix ships; redrive.
  const planned = (consumerId: ConsumerId, test: (p: DeliveryPlan | null) => boolean) =>
    events
      .filter((e) => deliverySet(e.type).includes(consumerId) && test(e.faults[consumerId]))
      .map((e) => e.id)
      .sort();
  let dlqTotal = 0;
  for (const consumerId of CONSUMERS) {
    const expected = planned(consumerId, goesToDlq).length;
    dlqTotal += expected;
    expect(await queueDepth(stack.handlers.sqs, stack.resources.queues[consumerId]!.dlqUrl), `${consumerId} DLQ depth`).toBe(expected);
  }
  if (dlqTotal > 0) {
    for (const key of live.keys()) if (key.startsWith(`evt_${run}_`)) live.get(key)!.fixed = true;
    for (const consumerId of CONSUMERS) {
      if (planned(consumerId, goesToDlq).length === 0) continue;
      const moved = await redrive({ config, sqs: stack.handlers.sqs, queues: stack.resources.queues }, { consumer: consumerId });
      expect(moved.moved, `${consumerId} redriven`).toBe(planned(consumerId, goesToDlq).length);
    }
    await stack.drain();
  }
  for (const consumerId of CONSUMERS) {
    const left = await takeAll(stack.handlers.sqs, stack.resources.queues[consumerId]!.dlqUrl);
    expect(left.map((m) => m.eventId).sort(), `${consumerId} DLQ after redrive`).toEqual(
      planned(consumerId, (p) => p?.terminal === 'permanentLeft'),
    );
  }

  // Targeted replay of one consumer's done delivery: re-runs the handler, never re-bills.
  const replayIds = new Map<string, string>();
  for (const e of events) {
    for (const consumerId of e.replay) {
      if (!deliverySet(e.type).includes(consumerId) || !settlesDone(e.faults[consumerId])) continue;
      const result = await replay(ops(), { consumer: consumerId, event: { eventId: e.id, source: SOURCE } });
      expect(result.requeued).toBe(1);
      replayIds.set(`${e.id}#${consumerId}`, result.replayId!);
    }
  }
  if (replayIds.size > 0) await stack.drain();

  // --- what must hold after quiescence ---
  const ids = new Set(events.map((e) => e.id));
  const receiptById = new Map((await receipts(stack)).filter((r) => ids.has(r.eventId)).map((r) => [r.eventId, r]));
  const rows = (await ledgerItems(stack)).filter((r) => ids.has(r.eventId));
  const expectedTotals: Record<string, number> = {};
  let deliveries = 0;
  for (const e of events) {
    // Every 2xx-acknowledged event exists once, with its exact delivery set; one 202, the rest duplicates.
    const statuses = responses.get(e.id)!.map((r) => r.status);
    expect(
      statuses.filter((s) => s === 202),
      `${e.id} answers ${statuses}`,
    ).toHaveLength(1);
    expect(
      statuses.filter((s) => s !== 202).every((s) => s === 200),
      `${e.id} answers ${statuses}`,
    ).toBe(true);
    const receipt = receiptById.get(e.id);
    expect(receipt, `receipt of ${e.id}`).toMatchObject({ tenantId: e.tenant, keyId: TENANT_KEYS[e.tenant], eventType: e.type });
    expect(receipt!.consumers).toEqual(deliverySet(e.type));

    const revoked = schedule.revoke.includes(TENANT_KEYS[e.tenant]);
    const eventRows = rows.filter((r) => r.eventId === e.id);
    expect(eventRows.map((r) => r.consumerId).sort(), `ledger items of ${e.id}`).toEqual([...deliverySet(e.type)].sort());
    for (const consumerId of deliverySet(e.type)) {
      deliveries++;
      const plan = e.faults[consumerId];
      const key = `${e.id}#${consumerId}`;
      const row = eventRows.find((r) => r.consumerId === consumerId)!;
      const counts = expectedCounts(plan, replayIds.has(key));
      const where = `${key} plan=${JSON.stringify(plan)}`;
      expect(row.tenantId, where).toBe(e.tenant);
      expect(row.keyId, where).toBe(TENANT_KEYS[e.tenant]);
      expect(row.attempt, `${where} attempt`).toBe(counts.attempt);
      expect(row.reads, `${where} reads`).toHaveLength(counts.attempt);
      expect(row.errors ?? [], `${where} errors`).toHaveLength(counts.errors);
      if (settlesDone(plan)) {
        const { units, outcome } = expectedResult(consumerId, e, revoked);
        expect(row, where).toMatchObject({ state: 'done', units, outcome, ackAttempt: counts.ackAttempt });
        expectedTotals[e.tenant] = (expectedTotals[e.tenant] ?? 0) + units;
      } else {
        expect(row.state, where).toBe('quarantined');
        expect(row.units, where).toBeUndefined();
      }
      const replayId = replayIds.get(key);
      if (replayId)
        expect(
          row.replays?.map((r) => r.replayId),
          `${where} replays`,
        ).toEqual([replayId]);

      // Every side effect of this delivery carried the same idempotency key, on every attempt and replay.
      const done = effects.filter((x) => x.eventId === e.id && x.consumerId === consumerId);
      expect(new Set(done.map((x) => x.key)), `${where} idempotency keys`).toEqual(
        settlesDone(plan) || done.length > 0 ? new Set([ledgerKey(SOURCE, e.id, consumerId)]) : new Set(),
      );
      const repeated =
        (plan?.steps.filter((step) => step === 'throwAfterEffect').length ?? 0) +
        (plan?.terminal === 'slowTakeover' ? 1 : 0) +
        (replayId ? 1 : 0);
      if (settlesDone(plan)) expect(done.length, `${where} side effects`).toBe(1 + repeated);
    }
  }
  const actualTotals: Record<string, number> = {};
  for (const r of rows) if (r.state === 'done') actualTotals[r.tenantId] = (actualTotals[r.tenantId] ?? 0) + (r.units ?? 0);
  expect(actualTotals, 'units per tenant').toEqual(expectedTotals);

  const report = await reconcileWindow(stack, { from: started, to: Date.now() + 1 });
  expect(report.violations, 'reconcile violations').toEqual([]);
  expect(report.receipts).toBe(events.length);
  expect(report.expectedDeliveries).toBe(deliveries);
  expect(report.quarantined).toBe(
    events.reduce((n, e) => n + deliverySet(e.type).filter((c) => e.faults[c]?.terminal === 'permanentLeft').length, 0),
  );
  for (const consumerId of CONSUMERS) expect(await queueDepth(stack.handlers.sqs, stack.resources.queues[consumerId]!.url)).toBe(0);
  expect(await queueDepth(stack.handlers.sqs, stack.resources.fanoutFailureQueue.url), 'fan-out on-failure queue').toBe(0);

  totals.runs++;
  totals.events += events.length;
  const all = [...responses.values()].flat();
  totals.sends += all.length;
  totals.accepted += all.filter((r) => r.status === 202).length;
  totals.duplicates += all.filter((r) => r.status === 200).length;
  totals.deliveries += deliveries;
  totals.dlq += dlqTotal;
  totals.replays += replayIds.size;
  totals.revocations += schedule.revoke.length;
  totals.ms += Date.now() - started;
}

/** One line per schedule: `tenant type[L] dup:... billing-meter:steps>terminal ... replay:...`. */
function describeSchedule(schedule: Schedule): string {
  const events = schedule.events.map((e) => {
    const faults = deliverySet(e.type)
      .filter((c) => e.faults[c])
      .map((c) => `${c}:${[...e.faults[c]!.steps, e.faults[c]!.terminal].join('>')}`);
    return [
      `${e.tenant}/${e.type}${e.large ? '/large' : ''}`,
      ...e.duplicates.map((d) => `dup:${d}`),
      ...faults,
      ...e.replay.map((c) => `replay:${c}`),
    ].join(' ');
  });
  return `revoke=[${schedule.revoke.join(',')}] | ${events.join(' | ')}`;
}

describe('fault schedules on the local pipeline', () => {
  it(
    'keeps one done ledger row per completed delivery, the model’s units per tenant and one idempotency key per delivery under every generated schedule',
    async () => {
      const started = Date.now();
      const details = await fc.check(fc.asyncProperty(scheduleArb, runSchedule), {
        // With a path, fast-check starts at that case: one run replays it.
        numRuns: PATH ? 1 : NUM_RUNS,
        seed: SEED,
        ...(PATH ? { path: PATH } : {}),
        endOnFailure: !SHRINK,
      });
      console.log(
        `[fault-schedules] seed=${SEED}${PATH ? ` path=${PATH}` : ''} runs=${totals.runs}/${PATH ? 1 : NUM_RUNS} events=${totals.events} sends=${totals.sends} ` +
          `(202=${totals.accepted}, 200-duplicate=${totals.duplicates}) deliveries=${totals.deliveries} ` +
          `faults=${JSON.stringify(faultCounts)} dlq=${totals.dlq} replays=${totals.replays} revocations=${totals.revocations} ` +
          `side-effects=${effects.length} avg-run=${Math.round(totals.ms / Math.max(1, totals.runs))}ms total=${Date.now() - started}ms`,
      );
      if (details.failed) {
        const cause = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
        throw new Error(
          `${fc.defaultReportMessage(details) ?? 'property failed'}\n\nfailed check: ${cause}\n\n` +
            `schedule: ${details.counterexample ? describeSchedule(details.counterexample[0]) : '?'}\n\n` +
            `replay it: HOOKLEDGER_FAULT_SEED=${details.seed} HOOKLEDGER_FAULT_PATH=${details.counterexamplePath ?? ''} ` +
            'npx vitest run test/reliability/fault-schedules.test.ts',
          { cause: details.errorInstance },
        );
      }
    },
    NUM_RUNS * 120_000 + 60_000,
  );

  // A delivery whose last allowed receive dies before the runtime runs (a crash or a Lambda timeout)
  // is moved to the DLQ by SQS, not quarantined by the runtime: its ledger item stays `retrying`.
  describe('a delivery dead-lettered by SQS without the runtime quarantining it', () => {
    const id = 'evt_gap_1';
    let report: Awaited<ReturnType<typeof reconcileWindow>> | undefined;

    it('ends in the DLQ with its ledger item still retrying', async () => {
      await resetPipeline();
      const started = Date.now();
      const plan: DeliveryPlan = { steps: ['throwAfterClaim', 'throwAfterClaim', 'throwAfterClaim', 'crashBeforeClaim'], terminal: 'ok' };
      live.set(`${id}#audit-writer`, {
        plan,
        steps: [...plan.steps],
        fixed: false,
        slowStarted: false,
        deleteFailed: false,
        crashedAfterAck: false,
      });
      const res = await sendEvent(
        {
          id,
          tenant: 'tenant_204',
          type: 'invoice.paid',
          large: false,
          duplicates: [],
          faults: { 'billing-meter': null, 'audit-writer': plan, 'risk-evaluator': null },
          replay: [],
        },
        `msg_${id}`,
      );
      expect(res.status).toBe(202);
      await stack.drain();
      const row = (await ledgerItems(stack)).find((r) => r.eventId === id && r.consumerId === 'audit-writer');
      expect(row).toMatchObject({ state: 'retrying', attempt: 3 });
      expect((await takeAll(stack.handlers.sqs, stack.resources.queues['audit-writer']!.dlqUrl)).map((m) => m.eventId)).toEqual([id]);
      report = await reconcileWindow(stack, { from: started, to: Date.now() + 1 });
      console.log(
        `[fault-schedules] dead-lettered without quarantine: reconcile violations=${report.violations.length} quarantined=${report.quarantined}`,
      );
    }, 60_000);

    // A worker that dies on its last allowed receive never marks the delivery quarantined; SQS
    // dead-letters the message and the ledger item stays `retrying`. Reconcile names it.
    it('is named by reconcile as a stalled delivery', () => {
      expect(report).toBeDefined();
      expect(report!.violations.filter((v) => v.eventId === id)).toEqual([
        expect.objectContaining({ kind: 'stalled_delivery', consumerId: 'audit-writer', ledgerKey: `platform:${id}#audit-writer` }),
      ]);
    });
  });
});
