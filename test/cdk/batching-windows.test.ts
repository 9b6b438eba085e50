/**
 * Batching windows on the template: `fanout.batchingWindowSeconds` becomes the stream mapping's
 * MaximumBatchingWindowInSeconds and a consumer's `batchingWindowSeconds` its SQS mapping's; at 0
 * (the default) the property is left out, so the shipped template is unchanged. What a window does
 * to delivery is proven on the local stack (test/e2e/batching-windows.test.ts); that Lambda honours
 * the property, only on AWS.
 */
import { Duration, Stack } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { beforeAll, describe, expect, it } from 'vitest';
import { defineConfig, type HookledgerConfigInput } from '../../core/config/schema';
import { ConsumerWorker } from '../../lib/constructs/consumer-worker';
import { FanOut } from '../../lib/constructs/fan-out';
import { defaultConfig, fourConsumerConfig, functionWithEnv, type Json, mappingsOf, synth, testApp, workers } from './support';

/** The one event source mapping of the fan-out, and of each consumer's worker by consumer id. */
function mappings(json: Json): { fanOut: Json; consumers: Record<string, Json> } {
  const [fanOutId] = functionWithEnv(json, 'QUEUE_URLS');
  const only = (functionId: string) => {
    const found = mappingsOf(json, functionId);
    expect(found).toHaveLength(1);
    return found[0];
  };
  return {
    fanOut: only(fanOutId),
    consumers: Object.fromEntries(workers(json).map((w) => [w.consumerId, only(w.functionId)])),
  };
}

/** The four-consumer config with a 5 s window on the fan-out, 2 s on billing-meter and 20 s on churn-model-v2. */
const windowed: HookledgerConfigInput = {
  ...fourConsumerConfig,
  fanout: { batchingWindowSeconds: 5 },
  consumers: fourConsumerConfig.consumers.map((c) => {
    if (c.id === 'billing-meter') return { ...c, batchingWindowSeconds: 2, visibilityTimeoutSeconds: 62 };
    if (c.id === 'churn-model-v2') return { ...c, batchingWindowSeconds: 20, visibilityTimeoutSeconds: 320 };
    return c;
  }),
};

describe('batching windows on the event source mappings', () => {
  describe('off, as shipped (hookledger.config.ts)', () => {
    let found: ReturnType<typeof mappings>;
    beforeAll(() => {
      found = mappings(synth(defaultConfig).json);
    });

    it('leaves MaximumBatchingWindowInSeconds out of the stream mapping of the fan-out', () => {
      expect(found.fanOut).not.toHaveProperty('MaximumBatchingWindowInSeconds');
    });

    it("leaves it out of every consumer's SQS mapping", () => {
      expect(Object.keys(found.consumers).sort()).toEqual(['audit-writer', 'billing-meter', 'risk-evaluator']);
      for (const mapping of Object.values(found.consumers)) expect(mapping).not.toHaveProperty('MaximumBatchingWindowInSeconds');
    });
  });

  describe('set: 5 s on the fan-out, 2 s on billing-meter, 20 s on churn-model-v2', () => {
    let found: ReturnType<typeof mappings>;
    beforeAll(() => {
      found = mappings(synth(windowed).json);
    });

    it('gives the stream mapping of the fan-out MaximumBatchingWindowInSeconds 5, its other settings kept', () => {
      expect(found.fanOut.MaximumBatchingWindowInSeconds).toBe(5);
      expect(found.fanOut.BatchSize).toBe(100);
      expect(found.fanOut.BisectBatchOnFunctionError).toBe(true);
    });

    it("gives each consumer's SQS mapping its own window, and none to the consumers left at 0", () => {
      expect(found.consumers['billing-meter']?.MaximumBatchingWindowInSeconds).toBe(2);
      expect(found.consumers['churn-model-v2']?.MaximumBatchingWindowInSeconds).toBe(20);
      expect(found.consumers['audit-writer']).not.toHaveProperty('MaximumBatchingWindowInSeconds');
      expect(found.consumers['risk-evaluator']).not.toHaveProperty('MaximumBatchingWindowInSeconds');
      expect(found.consumers['billing-meter']?.BatchSize).toBe(10);
      expect(found.consumers['billing-meter']?.FunctionResponseTypes).toEqual(['ReportBatchItemFailures']);
    });
  });

  describe('refused at synth', () => {
    it('refuses a window on an ordered consumer, naming the consumer and the fix', () => {
      const config: HookledgerConfigInput = {
        ...fourConsumerConfig,
        consumers: fourConsumerConfig.consumers.map((c) =>
          c.id === 'audit-writer' ? { ...c, ordering: { key: 'tenant' }, batchingWindowSeconds: 1, visibilityTimeoutSeconds: 121 } : c,
        ),
      };
      expect(() => synth(config)).toThrow(
        /consumers\[id=audit-writer\]\.batchingWindowSeconds \(value 1\): must be 0 on an ordered consumer, got 1: its queue is FIFO/,
      );
    });

    it('synthesizes an ordered consumer left at 0 with no window on its FIFO mapping', () => {
      const config: HookledgerConfigInput = {
        ...fourConsumerConfig,
        consumers: fourConsumerConfig.consumers.map((c) => (c.id === 'audit-writer' ? { ...c, ordering: { key: 'tenant' } } : c)),
      };
      expect(mappings(synth(config).json).consumers['audit-writer']).not.toHaveProperty('MaximumBatchingWindowInSeconds');
    });

    it('refuses the same in ConsumerWorker itself, for a consumer that did not go through defineConfig', () => {
      const stack = new Stack(testApp(), 'Direct');
      const table = new dynamodb.Table(stack, 'T', { partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING } });
      const consumer = { ...defineConfig(defaultConfig).consumers[0]!, batchingWindowSeconds: 5 };
      expect(() => new ConsumerWorker(stack, 'Bad', { consumer, events: table, ledger: table })).toThrow(
        'consumer billing-meter: visibilityTimeoutSeconds must be at least 6x timeoutSeconds plus batchingWindowSeconds (6 x 10 + 5 = 65), got 60',
      );
    });

    it.each([301, 1.5])('refuses a FanOut maxBatchingWindow of %s seconds, quoting it', (seconds) => {
      const stack = new Stack(testApp(), 'Direct');
      const events = new dynamodb.Table(stack, 'T', {
        partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING },
        stream: dynamodb.StreamViewType.NEW_IMAGE,
      });
      const queue = new sqs.Queue(stack, 'Q');
      expect(
        () =>
          new FanOut(stack, 'FanOut', {
            events,
            consumerQueues: [{ consumerId: 'billing-meter', queue }],
            maxBatchingWindow: Duration.millis(seconds * 1000),
          }),
      ).toThrow(`maxBatchingWindow must be whole seconds from 0 to 300, got ${seconds} seconds; omit it for none`);
    });
  });
});
