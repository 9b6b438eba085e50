/**
 * The lease agrees with the queue's visibility. A worker that starts slowly (a cold start before its
 * invocation), claims, and then dies (its invocation killed at the function timeout, nothing
 * recorded) leaves a lease that ends with its invocation: the message SQS shows again after the
 * visibility timeout is taken over on that very receive, never wasted on a live lease.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineConfig } from '../../core/config/schema';
import { ledgerKey } from '../../core/model';
import baseConfig from '../../hookledger.config';
import { handle as riskHandle } from '../../lambdas/consumers/risk-evaluator';
import { type ConsumerHandle, type ConsumerLambdaHandler, leaseMsFor } from '../../lambdas/runtime/runtime';
import type { LocalStack } from '../../local/stack';
import { platformEvent } from '../support/factories';
import { send, startTestStack } from '../support/stack';
import { ledgerRow, takeoverAcknowledged } from '../support/wait';

// risk-evaluator: a 1 s function in a 6 s visibility, 3 receives allowed.
const config = defineConfig({
  ...baseConfig,
  consumers: baseConfig.consumers.map((c) =>
    c.id === 'risk-evaluator' ? { ...c, visibilityTimeoutSeconds: 6, timeoutSeconds: 1, maxReceiveCount: 3 } : c,
  ),
});
const risk = config.consumers.find((c) => c.id === 'risk-evaluator')!;

const EVENT = 'evt_01J8K7LS01';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Each invocation of the risk worker: the receive count SQS gave the message, and how it ended. */
const invocations: { receiveCount: number; ended: 'crashed' | 'returned' }[] = [];
let hangOnce = true;
/** The worker's first invocation is a cold start (the stack wraps each invocation anew: module scope). */
let cold = true;

/** The first run never returns: the invocation is killed at the function timeout, as Lambda does. */
const hangingOnce: ConsumerHandle = async (ctx) => {
  if (ctx.attribution.eventId === EVENT && hangOnce) {
    hangOnce = false;
    return new Promise(() => {});
  }
  return riskHandle(ctx);
};

/** A slow first start (2.5 s before the function runs), then Lambda's timeout around the invocation. */
function asLambda(consumerId: string, inner: ConsumerLambdaHandler): ConsumerLambdaHandler {
  if (consumerId !== 'risk-evaluator') return inner;
  return async (event, context) => {
    const receiveCount = Number(event.Records[0]?.attributes.ApproximateReceiveCount ?? '0');
    if (cold) {
      cold = false;
      await sleep(2_500);
    }
    const timeout = sleep(risk.timeoutSeconds * 1000).then(() => 'timeout' as const);
    const result = await Promise.race([inner(event, context), timeout]);
    if (result === 'timeout') {
      invocations.push({ receiveCount, ended: 'crashed' });
      throw new Error(`Task timed out after ${risk.timeoutSeconds}.00 seconds`);
    }
    invocations.push({ receiveCount, ended: 'returned' });
    return result;
  };
}

let stack: LocalStack;
beforeAll(async () => {
  stack = await startTestStack({ config, handles: { 'risk-evaluator': hangingOnce }, wrapConsumer: asLambda, backoffBaseMs: 200 });
});
afterAll(() => stack?.stop());

describe('lease and visibility', () => {
  it('derives the lease from the function timeout: 1 s timeout -> 2 s lease, well inside the 6 s visibility', () => {
    expect(leaseMsFor(risk)).toBe(2_000);
    expect(leaseMsFor({ timeoutSeconds: 10 })).toBe(11_000);
  });

  it('takes over a slow-started, crashed worker on the first redelivery: 2 receives, attempt 2, one usage row', async () => {
    expect((await send(stack, platformEvent({ id: EVENT, type: 'payment.succeeded', tenant_id: 'tenant_204' }))).status).toBe(202);
    // Receive 1 at t=0, claim at ~2.5 s (lease to ~4.5 s), killed at ~3.5 s; SQS shows it again at ~6 s
    // (a lease derived from the visibility, 5 s, would still be live then: a wasted receive).
    const key = ledgerKey('platform', EVENT, 'risk-evaluator');
    await takeoverAcknowledged(stack, key, 1);
    await stack.drain();
    const row = await ledgerRow(stack, key);
    expect(invocations).toEqual([
      { receiveCount: 1, ended: 'crashed' },
      { receiveCount: 2, ended: 'returned' },
    ]);
    expect(row).toMatchObject({ state: 'done', attempt: 2, ackAttempt: 2, units: 1, tenantId: 'tenant_204' });
    expect(row?.reads).toHaveLength(2);
    expect(row?.errors ?? []).toEqual([]);
  }, 40_000);
});
