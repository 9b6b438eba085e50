/**
 * Intake out of concurrency: the IntakeThrottles alarm on the intake function's AWS/Lambda Throttles
 * (on a function URL a throttled request is answered 429 and counted in Url4xxCount, so Api5xx never
 * sees it), its dashboard graph, and `intake.reservedConcurrency`, the intake function's reservation.
 */
import { Stack } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import { beforeAll, describe, expect, it } from 'vitest';
import { lowCost } from '../../core/config/low-cost';
import { defineConfig, type HookledgerConfigInput, INTAKE_ENDPOINTS, type IntakeEndpoint } from '../../core/config/schema';
import { IngestApi } from '../../lib/constructs/ingest-api';
import { defaultConfig, functionWithEnv, type Json, resourcesOfType, type Synthesized, synth, testApp } from './support';

/** The documented pairing: the function URL (no stage throttling) with a reservation of 40. */
const reservedFunctionUrl: HookledgerConfigInput = { ...defaultConfig, intake: { endpoint: 'function-url', reservedConcurrency: 40 } };

/** Every alarm on AWS/Lambda Throttles, as [logical id, properties]. */
function throttleAlarms(json: Json): [string, Json][] {
  return resourcesOfType(json, 'AWS::CloudWatch::Alarm')
    .filter(([, a]) => a.Properties.MetricName === 'Throttles')
    .map(([id, a]) => [id, a.Properties]);
}

/** The intake function (the one holding the sources' secret ARNs): its logical id and properties. */
function intakeFunction(json: Json): [string, Json] {
  const [id, fn] = functionWithEnv(json, 'SOURCE_SECRETS');
  return [id, fn.Properties];
}

describe('IntakeThrottles and intake.reservedConcurrency', () => {
  // One template per endpoint: the function URL with a reservation, the default HTTP API without.
  const synthesized = new Map<IntakeEndpoint, Synthesized>();
  beforeAll(() => {
    synthesized.set('function-url', synth(reservedFunctionUrl));
    synthesized.set('http-api', synth(defaultConfig));
  });
  const templateOf = (endpoint: IntakeEndpoint): Json => synthesized.get(endpoint)!.json;

  describe.each(INTAKE_ENDPOINTS)('with endpoint %s', (endpoint) => {
    it("alarms IntakeThrottles on the intake function's first throttled request in a minute, to the alarm topic", () => {
      const json = templateOf(endpoint);
      const [intakeId] = intakeFunction(json);
      const topicId = json.Outputs.AlarmTopicArn.Value.Ref;
      const alarms = throttleAlarms(json);
      expect(alarms).toHaveLength(1);
      const [logicalId, alarm] = alarms[0]!;
      expect(logicalId).toMatch(/^ObservabilityIntakeThrottles/);
      expect(alarm).toMatchObject({
        Namespace: 'AWS/Lambda',
        MetricName: 'Throttles',
        Dimensions: [{ Name: 'FunctionName', Value: { Ref: intakeId } }],
        Statistic: 'Sum',
        Period: 60,
        EvaluationPeriods: 1,
        Threshold: 0,
        ComparisonOperator: 'GreaterThanThreshold',
        // No invocations, no datapoint: a quiet minute is not a refusal.
        TreatMissingData: 'notBreaching',
        AlarmActions: [{ Ref: topicId }],
        OKActions: [{ Ref: topicId }],
      });
      expect(alarm.AlarmDescription).toContain('reservedConcurrency');
    });

    it("graphs the intake function's throttles and concurrency beside the intake graphs", () => {
      const json = templateOf(endpoint);
      const [intakeId] = intakeFunction(json);
      const [[, dashboard]] = resourcesOfType(json, 'AWS::CloudWatch::Dashboard') as [[string, Json]];
      const body = JSON.stringify(dashboard.Properties.DashboardBody);
      const titles = [...body.matchAll(/\\"title\\":\\"([^\\]+)\\"/g)].map((m) => m[1]);
      // In the first row, after requests, 4xx / 5xx and latency.
      expect(titles.slice(0, 4)).toEqual([
        'Intake requests',
        'Intake 4xx / 5xx',
        'Intake latency (ms)',
        'Intake throttled requests and concurrency',
      ]);
      expect(body).toContain(`\\"AWS/Lambda\\",\\"Throttles\\",\\"FunctionName\\",\\"`);
      expect(body).toContain(`\\"AWS/Lambda\\",\\"ConcurrentExecutions\\",\\"FunctionName\\",\\"`);
      expect(body).toContain(intakeId);
    });
  });

  describe('reservedConcurrency', () => {
    it('reserves the configured concurrency for the intake function on a function URL, and for no other function', () => {
      const json = templateOf('function-url');
      const [intakeId, intake] = intakeFunction(json);
      expect(intake.ReservedConcurrentExecutions).toBe(40);
      const others = resourcesOfType(json, 'AWS::Lambda::Function').filter(([id]) => id !== intakeId);
      for (const [id, fn] of others) expect(fn.Properties.ReservedConcurrentExecutions, id).toBeUndefined();
    });

    it('leaves intake in the shared pool when none is configured', () => {
      const [, intake] = intakeFunction(templateOf('http-api'));
      expect(intake.ReservedConcurrentExecutions).toBeUndefined();
      expect(defineConfig(defaultConfig).intake).toEqual({ endpoint: 'http-api' });
    });

    it('reserves it behind the HTTP API too', () => {
      const stack = new Stack(testApp(), 'ReservedHttpApi');
      const events = new dynamodb.Table(stack, 'Events', { partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING } });
      const ingest = new IngestApi(stack, 'Ingest', { endpoint: 'http-api', sourceIds: ['platform'], events, reservedConcurrency: 25 });
      expect(ingest.api).toBeDefined();
      expect((ingest.handler.function.node.defaultChild as lambda.CfnFunction).reservedConcurrentExecutions).toBe(25);
    });

    it('is kept by the lower-cost configuration, which moves intake to its function URL', () => {
      const reserved = defineConfig({ ...defaultConfig, intake: { reservedConcurrency: 40 } });
      expect(lowCost(reserved).intake).toEqual({ endpoint: 'function-url', reservedConcurrency: 40 });
    });

    it.each([
      ['0', 0, '0'],
      ['1.5', 1.5, '1.5'],
      ['a string', '40', '"40"'],
    ])('refuses %s, naming intake.reservedConcurrency and the fix', (_name, value, shown) => {
      const config = { ...defaultConfig, intake: { reservedConcurrency: value as number } };
      expect(() => defineConfig(config)).toThrow(
        `intake.reservedConcurrency (value ${shown}): must be an integer of at least 1 (concurrent executions reserved for intake); remove it to use the account's shared pool`,
      );
    });

    it('refuses a reservation below 1 on the construct too, quoting the value', () => {
      const stack = new Stack(testApp(), 'BadReservation');
      const events = new dynamodb.Table(stack, 'Events', { partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING } });
      expect(
        () => new IngestApi(stack, 'Ingest', { endpoint: 'function-url', sourceIds: ['platform'], events, reservedConcurrency: 0 }),
      ).toThrow(/reservedConcurrency must be an integer of at least 1, got 0; omit it/);
    });
  });
});
