/**
 * The consumer rule table (core/config/consumer-rules.ts): one rule per check, each naming the
 * consumer, the field, the bad value and the fix. The zod schema and ConsumerWorker both report
 * these messages (test/cdk/config.test.ts proves they agree).
 */
import { describe, expect, it } from 'vitest';
import { CONSUMER_RULES, type ConsumerSettings, checkConsumer, describeConsumerProblem } from '../../core/config/consumer-rules';

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

describe('consumer rules', () => {
  it('accepts billing-meter as configured (60 s lease over a 10 s timeout, 5 receives, batches of 10, 5 at once)', () => {
    expect(checkConsumer(meter)).toEqual([]);
  });

  it('refuses a lease shorter than 6x the timeout: a message would reappear while its first attempt still runs', () => {
    expect(refusals({ visibilityTimeoutSeconds: 59 })).toEqual([
      'consumer billing-meter: visibilityTimeoutSeconds must be at least 6x timeoutSeconds (60), got 59; raise it to 60 or lower timeoutSeconds',
    ]);
    expect(refusals({ visibilityTimeoutSeconds: 60 })).toEqual([]);
  });

  it('refuses a retry budget of 0 receives, of 1001 (past SQS maxReceiveCount) and of 2.5', () => {
    for (const bad of [0, 1001, 2.5]) {
      expect(refusals({ maxReceiveCount: bad })).toEqual([
        `consumer billing-meter: maxReceiveCount must be an integer from 1 to 1000 (receives before a message moves to the DLQ), got ${bad}`,
      ]);
    }
    expect(refusals({ maxReceiveCount: 1000 })).toEqual([]);
  });

  it('refuses a batch of 0 or of 11 messages (SQS receives at most 10)', () => {
    for (const bad of [0, 11]) {
      expect(refusals({ batchSize: bad })).toEqual([
        `consumer billing-meter: batchSize must be an integer from 1 to 10 (messages per SQS receive), got ${bad}`,
      ]);
    }
  });

  it('refuses a maximum concurrency of 1 or 1001 (the SQS event source allows 2 to 1000)', () => {
    for (const bad of [1, 1001]) {
      expect(refusals({ maxConcurrency: bad })).toEqual([
        `consumer billing-meter: maxConcurrency must be an integer from 2 to 1000 (batches of this consumer running at once), got ${bad}`,
      ]);
    }
  });

  it('refuses a reservation of 0 or 1001 functions', () => {
    for (const bad of [0, 1001]) {
      expect(refusals({ reservedConcurrency: bad })).toEqual([
        `consumer billing-meter: reservedConcurrency must be an integer from 1 to 1000, got ${bad}; or remove it to use the shared pool`,
      ]);
    }
  });

  it('refuses a reservation of 4 below maxConcurrency 5: throttled receives would push messages into the DLQ early', () => {
    expect(refusals({ reservedConcurrency: 4 })).toEqual([
      'consumer billing-meter: reservedConcurrency must be at least maxConcurrency (5) so the event source is never throttled, got 4; raise it, lower maxConcurrency, or remove it to use the shared pool',
    ]);
    expect(refusals({ reservedConcurrency: 5 })).toEqual([]);
  });

  it('reports every broken field once, in table order, with its path', () => {
    const problems = checkConsumer({ ...meter, visibilityTimeoutSeconds: 30, batchSize: 11, reservedConcurrency: 0 });
    expect(problems.map((p) => [p.consumerId, p.path])).toEqual([
      ['billing-meter', ['visibilityTimeoutSeconds']],
      ['billing-meter', ['batchSize']],
      ['billing-meter', ['reservedConcurrency']],
    ]);
  });

  it('does not blame the reservation for an out-of-range maxConcurrency of 5000', () => {
    expect(refusals({ maxConcurrency: 5000, reservedConcurrency: 1000 }).map((m) => m.split(' ')[2])).toEqual(['maxConcurrency']);
  });

  it('holds one rule per check: the lease, the retry budget (its bounds, then the retention it needs), the batch, the concurrency, the batching window (its bounds, then FIFO) and the reservation (twice)', () => {
    expect(CONSUMER_RULES.map((r) => r.field)).toEqual([
      'visibilityTimeoutSeconds',
      'maxReceiveCount',
      'maxReceiveCount',
      'batchSize',
      'maxConcurrency',
      'batchingWindowSeconds',
      'batchingWindowSeconds',
      'reservedConcurrency',
      'reservedConcurrency',
    ]);
  });
});
