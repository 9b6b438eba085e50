/** Bad configuration fails synth with a message naming the value; outputs are named after config ids. */
import { Stack } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import { describe, expect, it } from 'vitest';
import { type ConsumerConfig, type HookledgerConfigInput, defineConfig } from '../../core/config/schema';
import { ConsumerWorker } from '../../lib/constructs/consumer-worker';
import { addHookledgerStack } from '../../lib/hookledger-stack';
import { pascalCase } from '../../core/outputs';
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
      'consumer billing-meter: visibilityTimeoutSeconds 30 is less than 6x timeoutSeconds 10; set visibilityTimeoutSeconds to at least 60 or lower timeoutSeconds',
    );
  });

  it('refuses a reservation below maxConcurrency in ConsumerWorker itself', () => {
    const stack = new Stack(testApp(), 'Direct');
    const table = new dynamodb.Table(stack, 'T', { partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING } });
    const consumer = { ...defineConfig(defaultConfig).consumers[0]!, maxConcurrency: 5, reservedConcurrency: 4 };
    expect(() => new ConsumerWorker(stack, 'Bad', { consumer, events: table, ledger: table })).toThrow(
      'consumer billing-meter: reservedConcurrency must be an integer of at least maxConcurrency (5), got 4; raise it or leave it unset',
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
