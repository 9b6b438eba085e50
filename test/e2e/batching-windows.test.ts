/**
 * Batching windows end to end on the local stack: a 1 s window on the fan-out's stream and on each
 * consumer's queue (`fanout.batchingWindowSeconds`, `consumers[].batchingWindowSeconds`). The windows
 * fill batches, so a burst takes fewer invocations, and the drain still waits for what a window holds.
 * Invocations are counted by wrapping the fan-out's handler and each consumer's (as its poller calls it).
 */
import type { DynamoDBStreamEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineConfig, type HookledgerConfigInput } from '../../core/config/schema';
import baseConfig from '../../hookledger.config';
import type { FanoutHandler } from '../../lambdas/fanout/app';
import type { ConsumerLambdaHandler } from '../../lambdas/runtime/runtime';
import type { LocalStack } from '../../local/stack';
import { platformEvent } from '../support/factories';
import { doneRows, send, startTestStack } from '../support/stack';

const WINDOW_SECONDS = 1;

/** The shipped consumers with a 1 s window each, their leases raised to cover it (6x timeout + window). */
const config = defineConfig({
  ...baseConfig,
  fanout: { batchingWindowSeconds: WINDOW_SECONDS },
  consumers: baseConfig.consumers.map((c) => ({
    ...c,
    batchingWindowSeconds: WINDOW_SECONDS,
    visibilityTimeoutSeconds: Math.max(c.visibilityTimeoutSeconds, 6 * c.timeoutSeconds + WINDOW_SECONDS),
  })),
} as HookledgerConfigInput);

/** One invocation: how many records it was given, and how long after the first of them was written or sent. */
interface Batch {
  readonly size: number;
  readonly heldMs: number;
}
const fanoutBatches: Batch[] = [];
const consumerBatches: Record<string, Batch[]> = {};

/** Timers may fire a few milliseconds early, and intake's clock reads just before its write. */
const TIMER_SLACK_MS = 20;
const WINDOW_MS = WINDOW_SECONDS * 1000;

function counting(consumerId: string, inner: ConsumerLambdaHandler): ConsumerLambdaHandler {
  return async (event, context) => {
    const firstSent = Math.min(...event.Records.map((r) => Number(r.attributes.SentTimestamp)));
    const batches = consumerBatches[consumerId] ?? [];
    consumerBatches[consumerId] = batches;
    batches.push({ size: event.Records.length, heldMs: Date.now() - firstSent });
    return inner(event, context);
  };
}

function resetCounts(): void {
  fanoutBatches.length = 0;
  for (const id of Object.keys(consumerBatches)) delete consumerBatches[id];
}

let stack: LocalStack;
beforeAll(async () => {
  stack = await startTestStack({ config, wrapConsumer: counting });
  // The pipeline looks the fan-out's handler up per call: this wrapper counts every invocation.
  const handlers = stack.handlers as { fanout: FanoutHandler };
  const fanout = handlers.fanout;
  handlers.fanout = async (event: DynamoDBStreamEvent) => {
    // The receipts' recordedAt: intake's clock just before it wrote each one.
    const firstWritten = Math.min(...event.Records.map((r) => Number(r.dynamodb?.NewImage?.recordedAt?.N)));
    fanoutBatches.push({ size: event.Records.length, heldMs: Date.now() - firstWritten });
    return fanout(event);
  };
});
afterAll(() => stack?.stop());

const doneFor = async (eventIds: readonly string[]) => (await doneRows(stack)).filter((r) => eventIds.includes(r.eventId));

describe('batching windows of 1 s on the fan-out and on every consumer (local stack)', () => {
  it('drains evt_01J8K7M2Q4 only once its three deliveries are done, after both windows held it', async () => {
    resetCounts();
    const sentAt = Date.now();
    expect((await send(stack, platformEvent({ id: 'evt_01J8K7M2Q4', tenant_id: 'tenant_204' }))).status).toBe(202);
    await stack.drain();
    const drainedAfter = Date.now() - sentAt;

    const rows = await doneFor(['evt_01J8K7M2Q4']);
    expect(rows.map((r) => r.consumerId).sort()).toEqual(['audit-writer', 'billing-meter', 'risk-evaluator']);
    // Held a window on the stream, then a window on each queue, before any delivery ran.
    expect(fanoutBatches.map((b) => b.size)).toEqual([1]);
    expect(fanoutBatches[0]!.heldMs).toBeGreaterThanOrEqual(WINDOW_MS - TIMER_SLACK_MS);
    expect(Object.keys(consumerBatches).sort()).toEqual(['audit-writer', 'billing-meter', 'risk-evaluator']);
    for (const batch of Object.values(consumerBatches).flat()) {
      expect(batch.size).toBe(1);
      expect(batch.heldMs).toBeGreaterThanOrEqual(WINDOW_MS - TIMER_SLACK_MS);
    }
    expect(drainedAfter).toBeGreaterThanOrEqual(2 * WINDOW_MS - TIMER_SLACK_MS);
  });

  it('delivers a burst of 20 webhooks for tenant_204 in fewer fan-out and consumer invocations than webhooks and deliveries', async () => {
    resetCounts();
    const ids = Array.from({ length: 20 }, (_, i) => `evt_01J8K7W${String(i).padStart(3, '0')}`);
    const answers = await Promise.all(ids.map((id) => send(stack, platformEvent({ id, tenant_id: 'tenant_204' }))));
    expect(answers.map((a) => a.status)).toEqual(ids.map(() => 202));
    await stack.drain();

    const rows = await doneFor(ids);
    expect(rows).toHaveLength(60);
    expect(new Set(rows.map((r) => `${r.eventId}#${r.consumerId}`)).size).toBe(60);
    expect(fanoutBatches.reduce((sum, b) => sum + b.size, 0)).toBe(20);
    expect(fanoutBatches.length).toBeLessThan(20);
    const consumerInvocations = Object.values(consumerBatches).flat();
    expect(consumerInvocations.reduce((sum, b) => sum + b.size, 0)).toBe(60);
    expect(consumerInvocations.length).toBeLessThan(60);
    // Every batch was full, or held for its window: none handed over at the first read or receive.
    for (const batch of fanoutBatches) expect(batch.heldMs).toBeGreaterThanOrEqual(WINDOW_MS - TIMER_SLACK_MS);
    for (const [consumerId, batches] of Object.entries(consumerBatches)) {
      const batchSize = config.consumers.find((c) => c.id === consumerId)!.batchSize;
      for (const batch of batches) {
        if (batch.size < batchSize) expect(batch.heldMs, consumerId).toBeGreaterThanOrEqual(WINDOW_MS - TIMER_SLACK_MS);
      }
    }
  });
});
