/**
 * Batching windows in the configuration: `fanout.batchingWindowSeconds` (the stream event source) and
 * each consumer's `batchingWindowSeconds` (its SQS event source), both off (0) by default. The
 * consumer's rules live in the rule table (core/config/consumer-rules.ts), so defineConfig and
 * ConsumerWorker refuse the same things with the same words.
 */
import { describe, expect, it } from 'vitest';
import { type ConsumerSettings, checkConsumer, describeConsumerProblem } from '../../core/config/consumer-rules';
import { defineConfig, type HookledgerConfigInput } from '../../core/config/schema';
import config from '../../hookledger.config';

const base = (): HookledgerConfigInput => ({
  sources: [
    {
      id: 'platform',
      scheme: { type: 'standard-webhooks' },
      attribution: { eventId: { body: 'id' }, eventType: { body: 'type' }, tenantId: { body: 'tenant_id' }, keyId: { body: 'key_id' } },
    },
  ],
  consumers: [{ id: 'billing-meter', subscribes: ['*'], fields: ['id'], entry: 'lambdas/consumers/billing-meter.ts' }],
});

/** billing-meter as hookledger.config.ts configures it. */
const meter: ConsumerSettings = {
  id: 'billing-meter',
  visibilityTimeoutSeconds: 60,
  timeoutSeconds: 10,
  maxReceiveCount: 5,
  batchSize: 10,
  maxConcurrency: 5,
};
const refusals = (patch: Partial<ConsumerSettings>) => checkConsumer({ ...meter, ...patch }).map(describeConsumerProblem);

/** The message defineConfig throws for `input`, or a failure when it accepts it. */
function refusalOf(input: HookledgerConfigInput): string {
  try {
    defineConfig(input);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('defineConfig accepted it');
}

describe('batching windows in the configuration', () => {
  describe('defaults', () => {
    it('leaves both windows off: fanout.batchingWindowSeconds 0 when fanout is absent, 0 on every shipped consumer', () => {
      const parsed = defineConfig(base());
      expect(parsed.fanout).toEqual({ batchingWindowSeconds: 0 });
      expect(parsed.consumers[0]?.batchingWindowSeconds).toBe(0);
      expect(config.fanout.batchingWindowSeconds).toBe(0);
      expect(config.consumers.map((c) => c.batchingWindowSeconds)).toEqual([0, 0, 0]);
    });

    it('fills the default into a fanout block given without it', () => {
      expect(defineConfig({ ...base(), fanout: {} }).fanout.batchingWindowSeconds).toBe(0);
    });

    it('keeps a window of 5 s on the fan-out and of 2 s on billing-meter (its 62 s lease covers 6 x 10 + 2)', () => {
      const input = base();
      input.consumers[0] = { ...input.consumers[0]!, batchingWindowSeconds: 2, visibilityTimeoutSeconds: 62 };
      const parsed = defineConfig({ ...input, fanout: { batchingWindowSeconds: 5 } });
      expect(parsed.fanout.batchingWindowSeconds).toBe(5);
      expect(parsed.consumers[0]?.batchingWindowSeconds).toBe(2);
    });
  });

  describe("the fan-out's window", () => {
    it.each([-1, 301, 1.5])('refuses %s, naming the path, the value and the range', (bad) => {
      expect(refusalOf({ ...base(), fanout: { batchingWindowSeconds: bad } })).toContain(
        `fanout.batchingWindowSeconds (value ${bad}): batchingWindowSeconds must be an integer from 0 to 300 (seconds the stream's batches may gather before the fan-out runs; 0: none)`,
      );
    });

    it('refuses an unknown key in fanout', () => {
      expect(refusalOf({ ...base(), fanout: { batchWindow: 1 } as never })).toMatch(/fanout.*batchWindow/);
    });
  });

  describe("a consumer's window", () => {
    it.each([-1, 301, 2.5])('refuses %s, naming the consumer, the value and the range', (bad) => {
      expect(refusals({ batchingWindowSeconds: bad })).toEqual([
        `consumer billing-meter: batchingWindowSeconds must be an integer from 0 to 300 (seconds a batch may gather before the worker runs; 0: none), got ${bad}`,
      ]);
    });

    it('refuses one on an ordered consumer: Lambda takes no batching window on a FIFO queue', () => {
      expect(refusals({ batchingWindowSeconds: 1, visibilityTimeoutSeconds: 61, ordering: { key: 'tenant' } })).toEqual([
        'consumer billing-meter: batchingWindowSeconds must be 0 on an ordered consumer, got 1: its queue is FIFO and Lambda takes no batching window on a FIFO queue; remove batchingWindowSeconds, or remove ordering',
      ]);
      expect(refusals({ batchingWindowSeconds: 0, ordering: { key: 'tenant' } })).toEqual([]);
    });

    it('refuses a lease under 6x the timeout plus the window: messages stay in flight while a batch gathers', () => {
      expect(refusals({ batchingWindowSeconds: 5 })).toEqual([
        'consumer billing-meter: visibilityTimeoutSeconds must be at least 6x timeoutSeconds plus batchingWindowSeconds (6 x 10 + 5 = 65), got 60: ' +
          'messages stay in flight while a batch gathers; raise it to 65, or lower timeoutSeconds or batchingWindowSeconds',
      ]);
      expect(refusals({ batchingWindowSeconds: 5, visibilityTimeoutSeconds: 65 })).toEqual([]);
    });

    it('keeps the message of a lease under 6x the timeout as it was when no window is set', () => {
      expect(refusals({ visibilityTimeoutSeconds: 59, batchingWindowSeconds: 0 })).toEqual([
        'consumer billing-meter: visibilityTimeoutSeconds must be at least 6x timeoutSeconds (60), got 59; raise it to 60 or lower timeoutSeconds',
      ]);
    });

    it('reports the same refusals through defineConfig, at the consumer path', () => {
      const input = base();
      input.consumers[0] = { ...input.consumers[0]!, batchingWindowSeconds: 5 };
      expect(refusalOf(input)).toContain(
        'consumers[id=billing-meter].visibilityTimeoutSeconds (value default 60): must be at least 6x timeoutSeconds plus batchingWindowSeconds (6 x 10 + 5 = 65), got 60',
      );
      input.consumers[0] = { ...input.consumers[0]!, batchingWindowSeconds: 1, visibilityTimeoutSeconds: 61, ordering: { key: 'tenant' } };
      expect(refusalOf(input)).toContain(
        'consumers[id=billing-meter].batchingWindowSeconds (value 1): must be 0 on an ordered consumer, got 1',
      );
      input.consumers[0] = { ...input.consumers[0]!, batchingWindowSeconds: 301, visibilityTimeoutSeconds: 400, ordering: undefined };
      expect(refusalOf(input)).toContain('consumers[id=billing-meter].batchingWindowSeconds (value 301): must be an integer from 0 to 300');
    });

    it("counts the window in the retry budget's largest lease it suggests", () => {
      // 200 receives x 2 h: too long for the queue's retention; the suggested lease must still cover 6 x 600 + 300.
      const problems = refusals({ maxReceiveCount: 200, visibilityTimeoutSeconds: 7200, timeoutSeconds: 600, batchingWindowSeconds: 300 });
      expect(problems).toHaveLength(1);
      expect(problems[0]).toMatch(/Lower maxReceiveCount to at most 144 or visibilityTimeoutSeconds to at most 5184$/);
      const tight = refusals({ maxReceiveCount: 200, visibilityTimeoutSeconds: 7200, timeoutSeconds: 860, batchingWindowSeconds: 300 });
      // 6 x 860 + 300 = 5460 > 5184: no lease short enough is long enough, so only the receives are offered.
      expect(tight[0]).toMatch(/Lower maxReceiveCount to at most 144$/);
    });
  });
});
