/**
 * The scheduled provider drift check beside the gap check: one function per source with `gapCheck`
 * and `events`, on the gap check's schedule, reading that source's API key and nothing else, given
 * the source's webhook URL on this stack; `Hookledger/ProviderDrift{Stack, Source}` alarmed above 0 on
 * the alarm topic, its description saying what drift means and the commands that show and fix it.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { actionsOf, GAP_CHECK_CONFIG, type Json, refTarget, resourcesOfType, resourceTargets, statementsOfRole, synth } from './support';

let json: Json;
const driftFunctions = () =>
  resourcesOfType(json, 'AWS::Lambda::Function').filter(
    ([, fn]) => fn.Properties.Environment?.Variables?.POWERTOOLS_SERVICE_NAME === 'hookledger-drift',
  );

beforeAll(() => {
  json = synth(GAP_CHECK_CONFIG).json;
});

describe('provider drift check on AWS', () => {
  it('builds one for the source with gapCheck and events (stripe-live), none for github-app, which declares no events', () => {
    expect(driftFunctions().map(([, fn]) => fn.Properties.Environment.Variables.GAP_SOURCE)).toEqual(['stripe-live']);
  });

  it("runs on the gap check's schedule, with its own dead-letter queue and retries", () => {
    const [[id]] = driftFunctions() as [[string, Json]];
    const rule = resourcesOfType(json, 'AWS::Events::Rule').find(
      ([, r]) => r.Properties.Description === 'Runs the hookledger gap check of source stripe-live',
    )![1];
    const target = rule.Properties.Targets.find((t: Json) => refTarget(t.Arn) === id);
    expect(rule.Properties.ScheduleExpression).toBe('rate(1 day)');
    expect(target.RetryPolicy.MaximumRetryAttempts).toBe(2);
    expect(target.DeadLetterConfig).toBeDefined();
  });

  it("is given the source's webhook URL on this stack and reads only its own source's API key", () => {
    const [[, fn]] = driftFunctions() as [[string, Json]];
    const env = fn.Properties.Environment.Variables;
    expect(JSON.stringify(env.DRIFT_WEBHOOK_URL)).toMatch(/hooks\/stripe-live"/);
    const apiKeySecret = refTarget(json.Outputs.GapApiKeySecretArnStripeLive.Value);
    expect(env.GAP_API_KEY_SECRET).toEqual({ Ref: apiKeySecret });
    const statements = statementsOfRole(json, refTarget(fn.Properties.Role)!);
    const actions = statements.flatMap(actionsOf);
    expect(actions.filter((a) => !a.startsWith('logs:') && !a.startsWith('sqs:')).sort()).toEqual([
      'secretsmanager:DescribeSecret',
      'secretsmanager:GetSecretValue',
    ]);
    const secretTargets = statements.filter((st) => actionsOf(st).includes('secretsmanager:GetSecretValue')).flatMap(resourceTargets);
    expect(secretTargets).toEqual([apiKeySecret]);
    expect(actions.some((a) => a.startsWith('dynamodb:'))).toBe(false);
  });

  it('alarms above 0 on Hookledger/ProviderDrift{Stack, Source}, notifying the alarm topic, saying what to run', () => {
    const alarms = resourcesOfType(json, 'AWS::CloudWatch::Alarm').filter(([, a]) => a.Properties.MetricName === 'ProviderDrift');
    expect(alarms).toHaveLength(1);
    const [[, alarm]] = alarms as [[string, Json]];
    expect(alarm.Properties).toMatchObject({
      Namespace: 'Hookledger',
      Threshold: 0,
      ComparisonOperator: 'GreaterThanThreshold',
      Statistic: 'Maximum',
      Period: 24 * 3600,
      TreatMissingData: 'ignore',
      Dimensions: [
        { Name: 'Source', Value: 'stripe-live' },
        { Name: 'Stack', Value: 'Hookledger' },
      ],
    });
    const topic = resourcesOfType(json, 'AWS::SNS::Topic').map(([id]) => id);
    expect(alarm.Properties.AlarmActions.map(refTarget)).toEqual([expect.toBeOneOf(topic)]);
    expect(alarm.Properties.OKActions.map(refTarget)).toEqual(alarm.Properties.AlarmActions.map(refTarget));
    expect(alarm.Properties.AlarmDescription).toContain('disabled by the provider');
    expect(alarm.Properties.AlarmDescription).toContain('`hookledger sources remote stripe-live --stack Hookledger`');
    expect(alarm.Properties.AlarmDescription).toContain('`hookledger sources connect stripe-live --stack Hookledger`');
  });
});
