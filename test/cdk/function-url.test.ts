/**
 * `intake.endpoint`: the default keeps the HTTP API; `'function-url'` puts intake behind its own
 * Lambda function URL (auth NONE, the signature is the authentication), with no HTTP API, no stage,
 * no access log, the webhook URL output built from the function URL, and Api5xx on the URL's 5xx.
 */
import { Stack, Validations } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import { AwsSolutionsChecks, ServerlessChecks } from 'cdk-nag';
import { beforeAll, describe, expect, it } from 'vitest';
import type { HookledgerConfigInput } from '../../core/config/schema';
import { defineConfig } from '../../core/config/schema';
import { IngestApi } from '../../lib/constructs/ingest-api';
import { HookledgerStack } from '../../lib/hookledger-stack';
import { defaultConfig, functionWithEnv, type Json, resourcesOfType, type Synthesized, synth, testApp } from './support';

const functionUrlConfig: HookledgerConfigInput = { ...defaultConfig, intake: { endpoint: 'function-url' } };

function alarmNamed(json: Json, id: string): Json {
  const found = resourcesOfType(json, 'AWS::CloudWatch::Alarm').filter(([logicalId]) => logicalId.includes(id));
  expect(found).toHaveLength(1);
  return found[0]![1].Properties;
}

describe('intake.endpoint', () => {
  let byDefault: Synthesized;
  beforeAll(() => {
    byDefault = synth(defaultConfig);
  });

  it('defaults to http-api and refuses any other value, naming both', () => {
    expect(defineConfig(defaultConfig).intake).toEqual({ endpoint: 'http-api' });
    expect(() => defineConfig({ ...defaultConfig, intake: { endpoint: 'alb' as 'http-api' } })).toThrow(/"http-api".*"function-url"/);
  });

  describe('with the default (http-api)', () => {
    it('builds the HTTP API, its stage and access log, and no function URL', () => {
      const s = byDefault;
      s.template.resourceCountIs('AWS::ApiGatewayV2::Api', 1);
      s.template.resourceCountIs('AWS::ApiGatewayV2::Stage', 1);
      s.template.resourceCountIs('AWS::Lambda::Url', 0);
      expect(resourcesOfType(s.json, 'AWS::Lambda::Permission').some(([, p]) => p.Properties.Action === 'lambda:InvokeFunctionUrl')).toBe(
        false,
      );
      expect(alarmNamed(s.json, 'Api5xx')).toMatchObject({ Namespace: 'AWS/ApiGateway', MetricName: '5xx' });
      expect(resourcesOfType(s.json, 'AWS::Logs::LogGroup').filter(([id]) => id.startsWith('IngestAccessLogs'))).toHaveLength(1);
    });

    it('synthesizes the same template as http-api named explicitly', () => {
      const explicit = synth({ ...defaultConfig, intake: { endpoint: 'http-api' } });
      // As strings: a deep diff of two whole templates is slow, and any difference fails either way.
      expect(JSON.stringify(explicit.json)).toBe(JSON.stringify(byDefault.json));
    });
  });

  describe('with function-url', () => {
    let s: Synthesized;
    let intakeId: string;
    let urlId: string;
    beforeAll(() => {
      s = synth(functionUrlConfig);
      [intakeId] = functionWithEnv(s.json, 'SOURCE_SECRETS');
      [urlId] = resourcesOfType(s.json, 'AWS::Lambda::Url')[0]!;
    });

    it('gives intake one function URL with auth type NONE and no CORS', () => {
      s.template.resourceCountIs('AWS::Lambda::Url', 1);
      const url = resourcesOfType(s.json, 'AWS::Lambda::Url')[0]![1].Properties;
      expect(url).toEqual({ AuthType: 'NONE', TargetFunctionArn: { 'Fn::GetAtt': [intakeId, 'Arn'] } });
    });

    it('lets anyone invoke intake through that URL and only through it (InvokeFunctionUrl with auth NONE, InvokeFunction via the URL)', () => {
      const permissions = resourcesOfType(s.json, 'AWS::Lambda::Permission')
        .map(([, p]) => p.Properties)
        .filter((p) => JSON.stringify(p.FunctionName).includes(intakeId));
      const fn = { 'Fn::GetAtt': [intakeId, 'Arn'] };
      expect(permissions).toEqual([
        { Action: 'lambda:InvokeFunctionUrl', FunctionName: fn, Principal: '*', FunctionUrlAuthType: 'NONE' },
        { Action: 'lambda:InvokeFunction', FunctionName: fn, Principal: '*', InvokedViaFunctionUrl: true },
      ]);
    });

    it('builds no HTTP API, stage, route or access log group', () => {
      for (const type of [
        'AWS::ApiGatewayV2::Api',
        'AWS::ApiGatewayV2::Stage',
        'AWS::ApiGatewayV2::Route',
        'AWS::ApiGatewayV2::Integration',
      ]) {
        s.template.resourceCountIs(type, 0);
      }
      expect(resourcesOfType(s.json, 'AWS::Logs::LogGroup').filter(([id]) => id.startsWith('IngestAccessLogs'))).toEqual([]);
    });

    it('outputs WebhookUrl as the function URL followed by hooks/ (the CLI appends the source id)', () => {
      expect(s.json.Outputs.WebhookUrl.Value).toEqual({ 'Fn::Join': ['', [{ 'Fn::GetAtt': [urlId, 'FunctionUrl'] }, 'hooks/']] });
    });

    it('alarms Api5xx on the function URL 5xx count (AWS/Lambda Url5xxCount of intake)', () => {
      expect(alarmNamed(s.json, 'Api5xx')).toMatchObject({
        Namespace: 'AWS/Lambda',
        MetricName: 'Url5xxCount',
        Dimensions: [{ Name: 'FunctionName', Value: { Ref: intakeId } }],
        Statistic: 'Sum',
        Threshold: 0,
      });
    });

    it('refuses stage throttling limits on a function URL, naming both and the fix', () => {
      const stack = new Stack(testApp(), 'Throttled');
      const events = new dynamodb.Table(stack, 'Events', { partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING } });
      expect(
        () => new IngestApi(stack, 'Ingest', { endpoint: 'function-url', sourceIds: ['platform'], events, throttlingRateLimit: 50 }),
      ).toThrow(/throttlingRateLimit and throttlingBurstLimit apply to the HTTP API's stage.*got rate 50 and burst undefined.*remove them/);
    });

    it.each([
      ['AwsSolutions', () => new AwsSolutionsChecks(undefined, { verbose: true })],
      ['Serverless', () => new ServerlessChecks(undefined, { verbose: true })],
    ])('passes cdk-nag %s with no unacknowledged finding', (_name, make) => {
      const report = make().validateScope(s.stack);
      expect(report.violations.map((v) => `${v.ruleName}: ${v.violatingResources.map((r) => r.constructPath).join(', ')}`)).toEqual([]);
    });

    it('passes a full synth with both nag packs registered as plugins', () => {
      const app = testApp();
      new HookledgerStack(app, 'Hookledger', { config: functionUrlConfig });
      Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true }), new ServerlessChecks(app, { verbose: true }));
      expect(() => app.synth()).not.toThrow();
    });
  });
});
