/** Where alarms go besides e-mail: a Slack channel through AWS Chatbot, and HTTPS endpoints (a pager's). */
import { AwsSolutionsChecks, ServerlessChecks } from 'cdk-nag';
import { beforeAll, describe, expect, it } from 'vitest';
import type { HookledgerConfigInput } from '../../core/config/schema';
import { HookledgerStack } from '../../lib/hookledger-stack';
import { defaultConfig, type Json, resourcesOfType, type Synthesized, synth, testApp } from './support';

const SLACK = { workspaceId: 'T07EA123LEP', channelId: 'C07EZ1ABC23' } as const;
const PAGER_URL = 'https://events.pagerduty.com/integration/0123456789abcdef0123456789abcdef/enqueue';
const OPSGENIE_URL = 'https://api.opsgenie.com/v1/json/cloudwatch?apiKey=key_204';

function withAlarms(alarms: HookledgerConfigInput['alarms']): HookledgerConfigInput {
  return { ...defaultConfig, alarms: { ...defaultConfig.alarms, ...alarms } };
}

function keyStatements(json: Json): Json[] {
  const keys = resourcesOfType(json, 'AWS::KMS::Key').filter(([id]) => id.startsWith('ObservabilityAlarmTopicKey'));
  expect(keys).toHaveLength(1);
  return keys[0]![1].Properties.KeyPolicy.Statement;
}

function subscriptionsOf(json: Json, protocol: string): Json[] {
  return resourcesOfType(json, 'AWS::SNS::Subscription')
    .map(([, s]) => s.Properties)
    .filter((p) => p.Protocol === protocol);
}

describe('alarm destinations', () => {
  let plain: Synthesized;
  let topicId: string;
  beforeAll(() => {
    plain = synth(defaultConfig, 'HookledgerAlerts');
    topicId = plain.json.Outputs.AlarmTopicArn.Value.Ref;
  });

  it('adds no Slack channel and no HTTPS subscription when neither is configured', () => {
    expect(resourcesOfType(plain.json, 'AWS::Chatbot::SlackChannelConfiguration')).toEqual([]);
    expect(subscriptionsOf(plain.json, 'https')).toEqual([]);
  });

  describe('with alarms.slack', () => {
    let json: Json;
    beforeAll(() => {
      json = synth(withAlarms({ slack: SLACK }), 'HookledgerAlerts').json;
    });

    it('maps the alarm topic to the configured Slack workspace and channel', () => {
      const channels = resourcesOfType(json, 'AWS::Chatbot::SlackChannelConfiguration');
      expect(channels).toHaveLength(1);
      expect(channels[0]![1].Properties).toMatchObject({
        ConfigurationName: 'HookledgerAlerts-alarms',
        SlackWorkspaceId: 'T07EA123LEP',
        SlackChannelId: 'C07EZ1ABC23',
        SnsTopicArns: [{ Ref: topicId }],
      });
    });

    it('gives the channel a role with no permissions and a read-only CloudWatch guardrail, not AdministratorAccess', () => {
      const channel = resourcesOfType(json, 'AWS::Chatbot::SlackChannelConfiguration')[0]![1].Properties;
      expect(JSON.stringify(channel.GuardrailPolicies)).toContain('CloudWatchReadOnlyAccess');
      expect(JSON.stringify(channel.GuardrailPolicies)).not.toContain('AdministratorAccess');
      const roleId = channel.IamRoleArn['Fn::GetAtt'][0];
      const role = json.Resources[roleId].Properties;
      expect(role.AssumeRolePolicyDocument.Statement[0].Principal).toEqual({ Service: 'chatbot.amazonaws.com' });
      expect(role.ManagedPolicyArns).toBeUndefined();
      expect(role.Policies).toBeUndefined();
      expect(resourcesOfType(json, 'AWS::IAM::Policy').filter(([, p]) => JSON.stringify(p.Properties.Roles).includes(roleId))).toEqual([]);
    });

    it('leaves the topic key policy as it was: SNS decrypts before delivering to Chatbot, only the publisher needs the key', () => {
      expect(keyStatements(json)).toEqual(keyStatements(plain.json));
    });
  });

  describe('with alarms.https', () => {
    let json: Json;
    beforeAll(() => {
      json = synth(withAlarms({ https: [PAGER_URL, OPSGENIE_URL] }), 'HookledgerAlerts').json;
    });

    it('subscribes each URL to the alarm topic over HTTPS, once', () => {
      const subs = subscriptionsOf(json, 'https');
      expect(subs).toHaveLength(2);
      expect(subs).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ Protocol: 'https', Endpoint: PAGER_URL, TopicArn: { Ref: topicId } }),
          expect.objectContaining({ Protocol: 'https', Endpoint: OPSGENIE_URL, TopicArn: { Ref: topicId } }),
        ]),
      );
    });

    it('leaves the topic key policy as it was: SNS decrypts before an HTTPS delivery', () => {
      expect(keyStatements(json)).toEqual(keyStatements(plain.json));
    });
  });

  describe.each([
    { name: 'alarms.slack', alarms: { slack: SLACK } },
    { name: 'alarms.https', alarms: { https: [PAGER_URL] } },
  ])('cdk-nag with $name', ({ alarms }) => {
    it.each([
      { pack: 'AwsSolutions', make: () => new AwsSolutionsChecks(undefined, { verbose: true }) },
      { pack: 'Serverless', make: () => new ServerlessChecks(undefined, { verbose: true }) },
    ])('$pack reports no unacknowledged findings', ({ make }) => {
      const stack = new HookledgerStack(testApp(), 'Hookledger', { config: withAlarms(alarms) });
      const report = make().validateScope(stack);
      expect(report.violations.map((v) => `${v.ruleName}: ${v.violatingResources.map((r) => r.constructPath).join(', ')}`)).toEqual([]);
    });
  });
});
