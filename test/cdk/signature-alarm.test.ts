/**
 * One SignatureFailures alarm per source (issue 43 item 2): Hookledger/SignatureFailures{Source, Stack}
 * summed over `alarms.signatureFailures.windowMinutes`, ALARM at `threshold`, to the alarm topic (and
 * back to OK), the source in its construct path (so in the name CloudFormation gives it) and a
 * description that says what usually causes it and what to run. cdk-nag covers these alarms with
 * every config in nag.test.ts (GAP_CHECK_CONFIG has three sources).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { GAP_CHECK_CONFIG, type Json, resourcesOfType, synth } from './support';

function signatureAlarms(json: Json): [string, Json][] {
  return resourcesOfType(json, 'AWS::CloudWatch::Alarm').filter(([, a]) => a.Properties.MetricName === 'SignatureFailures');
}

const sourceOf = (alarm: Json): string => alarm.Properties.Dimensions.find((d: Json) => d.Name === 'Source').Value;

describe('SignatureFailures alarms with the default threshold (10 within 15 minutes)', () => {
  let topic: string;
  let alarms: [string, Json][];

  beforeAll(() => {
    const { json } = synth(GAP_CHECK_CONFIG, 'HookledgerSig');
    topic = json.Outputs.AlarmTopicArn.Value.Ref;
    alarms = signatureAlarms(json);
  });

  it('builds one alarm per source, on that source’s series of this stack', () => {
    expect(alarms.map(([, a]) => sourceOf(a)).sort()).toEqual(['github-app', 'platform', 'stripe-live']);
    for (const [id, alarm] of alarms) {
      expect(alarm.Properties.Dimensions, id).toEqual(
        expect.arrayContaining([
          { Name: 'Source', Value: sourceOf(alarm) },
          { Name: 'Stack', Value: 'HookledgerSig' },
        ]),
      );
      expect(alarm.Properties.Dimensions, id).toHaveLength(2);
    }
  });

  it('alarms at 10 or more failures summed over one 15-minute period, and notifies the topic when it fires and clears', () => {
    expect(alarms).toHaveLength(3);
    for (const [id, alarm] of alarms) {
      expect(alarm.Properties, id).toMatchObject({
        Namespace: 'Hookledger',
        Statistic: 'Sum',
        Period: 900,
        EvaluationPeriods: 1,
        Threshold: 10,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        // No failure published is no failure: a healthy source writes no SignatureFailures line.
        TreatMissingData: 'notBreaching',
        AlarmActions: [{ Ref: topic }],
        OKActions: [{ Ref: topic }],
      });
    }
  });

  it('carries the source id in its logical id, which CloudFormation puts in the alarm name', () => {
    const idOf = (source: string) => alarms.find(([, a]) => sourceOf(a) === source)![0];
    expect(idOf('stripe-live')).toMatch(/^ObservabilitySourcesstripeliveSignatureFailures[0-9A-F]{8}$/);
    expect(idOf('platform')).toMatch(/^ObservabilitySourcesplatformSignatureFailures[0-9A-F]{8}$/);
  });

  it('says what usually causes it and what to run, for its own source', () => {
    const stripe = alarms.find(([, a]) => sourceOf(a) === 'stripe-live')![1].Properties.AlarmDescription as string;
    expect(stripe).toContain('Intake refused 10 or more requests to source stripe-live within 15 min');
    expect(stripe).toContain('rotated on one side only');
    expect(stripe).toContain('disables the endpoint');
    expect(stripe).toContain('`hookledger sources remote stripe-live`');
    expect(stripe).toContain('`hookledger secrets rotate stripe-live');
    // CloudWatch takes at most 1024 characters.
    expect(stripe.length).toBeLessThanOrEqual(1024);
  });
});

describe('SignatureFailures alarms with alarms.signatureFailures set', () => {
  it('takes its threshold and its window as the period: 3 within 2 minutes', () => {
    const { json } = synth({ ...GAP_CHECK_CONFIG, alarms: { signatureFailures: { threshold: 3, windowMinutes: 2 } } });
    const alarms = signatureAlarms(json);
    expect(alarms).toHaveLength(3);
    for (const [id, alarm] of alarms) expect(alarm.Properties, id).toMatchObject({ Threshold: 3, Period: 120, EvaluationPeriods: 1 });
  });
});
