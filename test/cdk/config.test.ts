/** Bad configuration fails synth with a message naming the value; outputs are named after config ids. */
import { Stack } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import { describe, expect, it } from 'vitest';
import { type ConsumerConfig, defineConfig, type HookledgerConfigInput } from '../../core/config/schema';
import { pascalCase } from '../../core/outputs';
import { ConsumerWorker } from '../../lib/constructs/consumer-worker';
import { addHookledgerStack } from '../../lib/hookledger-stack';
import { CONFIGS, defaultConfig, fourConsumerConfig, synth, testApp } from './support';

function withConsumer(patch: Partial<ConsumerConfig>): HookledgerConfigInput {
  const [first, ...rest] = fourConsumerConfig.consumers;
  return { ...fourConsumerConfig, consumers: [{ ...first!, ...patch }, ...rest] };
}

describe('configuration errors', () => {
  it('refuses a visibility timeout under 6x the function timeout, naming the consumer and the value', () => {
    expect(() => synth(withConsumer({ visibilityTimeoutSeconds: 30, timeoutSeconds: 10 }))).toThrow(
      /billing-meter.*visibilityTimeoutSeconds.*30/,
    );
  });

  it('refuses the same in ConsumerWorker itself, for configs that did not go through defineConfig', () => {
    const stack = new Stack(testApp(), 'Direct');
    const table = new dynamodb.Table(stack, 'T', { partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING } });
    const consumer = { ...defineConfig(defaultConfig).consumers[0]!, visibilityTimeoutSeconds: 30, timeoutSeconds: 10 };
    expect(() => new ConsumerWorker(stack, 'Bad', { consumer, events: table, ledger: table })).toThrow(
      'consumer billing-meter: visibilityTimeoutSeconds must be at least 6x timeoutSeconds (60), got 30; raise it to 60 or lower timeoutSeconds',
    );
  });

  it('refuses a reservation below maxConcurrency in ConsumerWorker itself', () => {
    const stack = new Stack(testApp(), 'Direct');
    const table = new dynamodb.Table(stack, 'T', { partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING } });
    const consumer = { ...defineConfig(defaultConfig).consumers[0]!, maxConcurrency: 5, reservedConcurrency: 4 };
    expect(() => new ConsumerWorker(stack, 'Bad', { consumer, events: table, ledger: table })).toThrow(
      'consumer billing-meter: reservedConcurrency must be at least maxConcurrency (5) so the event source is never throttled, got 4; raise it, lower maxConcurrency, or remove it to use the shared pool',
    );
  });

  // One rule table (core/config/consumer-rules.ts): defineConfig and ConsumerWorker say the same thing.
  it.each([
    [{ visibilityTimeoutSeconds: 30, timeoutSeconds: 10 }, 'visibilityTimeoutSeconds', 30],
    [{ maxReceiveCount: 1001 }, 'maxReceiveCount', 1001],
    [{ batchSize: 11 }, 'batchSize', 11],
    [{ maxConcurrency: 1 }, 'maxConcurrency', 1],
    [{ maxConcurrency: 5, reservedConcurrency: 4 }, 'reservedConcurrency', 4],
  ] as const)('refuses %o with the same message through defineConfig and in ConsumerWorker itself', (patch, field, value) => {
    const schemaError = (() => {
      try {
        defineConfig(withConsumer(patch));
      } catch (error) {
        return (error as Error).message;
      }
      throw new Error('defineConfig accepted it');
    })();
    const prefix = `consumers[id=billing-meter].${field} (value ${value}): `;
    const line = schemaError.split('\n').find((l) => l.trim().startsWith(prefix));
    expect(line, schemaError).toBeDefined();
    const message = line!.trim().slice(prefix.length);
    expect(message).toContain(`got ${value}`);

    const stack = new Stack(testApp(), 'Direct');
    const table = new dynamodb.Table(stack, 'T', { partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING } });
    const consumer = { ...defineConfig(defaultConfig).consumers[0]!, ...patch };
    expect(() => new ConsumerWorker(stack, 'Bad', { consumer, events: table, ledger: table })).toThrow(
      `consumer billing-meter: ${field} ${message}`,
    );
  });

  it('refuses two consumer ids that would share an output id', () => {
    const config = {
      ...fourConsumerConfig,
      consumers: [
        { ...fourConsumerConfig.consumers[0]!, id: 'meter-2' },
        { ...fourConsumerConfig.consumers[1]!, id: 'meter2' },
      ],
    };
    expect(() => synth(config)).toThrow(/"meter-2" and "meter2".*"Meter2"/);
  });

  it('refuses unknown fields and duplicate ids through defineConfig', () => {
    expect(() => synth(withConsumer({ id: 'audit-writer' }))).toThrow(/duplicate consumer id "audit-writer"/);
  });
});

describe.each(CONFIGS)('stack outputs with the $name', ({ config }) => {
  it('has exactly the documented outputs, with ids derived from config ids', () => {
    const parsed = defineConfig(config);
    const { json } = synth(config);
    const expected = [
      'WebhookUrl',
      'EventStoreTableName',
      'LedgerTableName',
      'AlarmTopicArn',
      'FanoutFailureQueueUrl',
      'PayloadHashKeySecretArn',
      'PayloadBucketName',
      ...parsed.consumers.flatMap((c) => [`QueueUrl${pascalCase(c.id)}`, `DlqUrl${pascalCase(c.id)}`]),
      ...parsed.sources.map((s) => `SecretArn${pascalCase(s.id)}`),
    ];
    expect(Object.keys(json.Outputs).sort()).toEqual(expected.sort());
  });
});

describe('pascalCase', () => {
  it('turns config ids into readable output suffixes', () => {
    expect(pascalCase('billing-meter')).toBe('BillingMeter');
    expect(pascalCase('churn-model-v2')).toBe('ChurnModelV2');
    expect(pascalCase('platform')).toBe('Platform');
  });
});

describe('the app entry (bin/app.ts calls addHookledgerStack)', () => {
  it('names the stack from the stackName context, defaulting to Hookledger', () => {
    expect(addHookledgerStack(testApp(), defaultConfig).stackName).toBe('Hookledger');
    expect(addHookledgerStack(testApp({ stackName: 'HookledgerStaging' }), defaultConfig).stackName).toBe('HookledgerStaging');
  });

  it('refuses a stackName CloudFormation would reject', () => {
    expect(() => addHookledgerStack(testApp({ stackName: 'bad_name' }), defaultConfig)).toThrow(/"bad_name"/);
  });
});
