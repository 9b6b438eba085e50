/**
 * The scheduled provider gap check (`gapCheck` on a source): one function, schedule, API-key secret
 * (created empty, retained, named in the outputs) and alarm per such source; each role reads its own
 * source's API key and no other secret; only a check that recovers may write, and only what intake writes.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import {
  actionsOf,
  GAP_CHECK_CONFIG,
  type Json,
  refTarget,
  resourcesOfType,
  resourceTargets,
  type Statement,
  statementsOfRole,
  synth,
} from './support';

const config = GAP_CHECK_CONFIG;

let json: Json;
const gapFunctions = () =>
  resourcesOfType(json, 'AWS::Lambda::Function').filter(
    ([, fn]) => fn.Properties.Environment?.Variables?.POWERTOOLS_SERVICE_NAME === 'hookledger-gaps',
  );
const functionOf = (source: string): [string, Json] =>
  gapFunctions().find(([, fn]) => fn.Properties.Environment.Variables.GAP_SOURCE === source)!;
const statementsOf = (source: string): Statement[] => statementsOfRole(json, refTarget(functionOf(source)[1].Properties.Role)!);
const secretOutput = (source: string) => refTarget(json.Outputs[`GapApiKeySecretArn${source}`].Value);

beforeAll(() => {
  json = synth(config).json;
});

describe('gap check on AWS', () => {
  it('builds one function per source with gapCheck (none for the others), scheduled every gapCheck.everyHours', () => {
    expect(
      gapFunctions()
        .map(([, fn]) => fn.Properties.Environment.Variables.GAP_SOURCE)
        .sort(),
    ).toEqual(['github-app', 'stripe-live']);
    const rules = resourcesOfType(json, 'AWS::Events::Rule').filter(([, r]) => /gap check/.test(r.Properties.Description ?? ''));
    expect(rules.map(([, r]) => [r.Properties.Description, r.Properties.ScheduleExpression]).sort()).toEqual([
      ['Runs the hookledger gap check of source github-app', 'rate(6 hours)'],
      ['Runs the hookledger gap check of source stripe-live', 'rate(1 day)'],
    ]);
    for (const [, rule] of rules) {
      const target = rule.Properties.Targets[0];
      expect(gapFunctions().map(([id]) => id)).toContain(refTarget(target.Arn));
      expect(target.DeadLetterConfig).toBeDefined();
    }
  });

  it('creates each API-key secret empty and retained, and names it in the outputs', () => {
    for (const source of ['StripeLive', 'GithubApp']) {
      const id = secretOutput(source)!;
      const secret = json.Resources[id];
      expect(secret.Type).toBe('AWS::SecretsManager::Secret');
      // No value at all: neither a SecretString nor a generated placeholder the check would send as a key.
      expect(secret.Properties.SecretString).toBeUndefined();
      expect(secret.Properties.GenerateSecretString).toBeUndefined();
      expect(secret.DeletionPolicy).toBe('Retain');
      expect(secret.UpdateReplacePolicy).toBe('Retain');
    }
    expect(json.Outputs.GapApiKeySecretArnPlatform).toBeUndefined();
  });

  it("reads its own source's API key and no other secret (not the signing secrets, not the other source's key)", () => {
    for (const [source, own, other] of [
      ['stripe-live', 'StripeLive', 'GithubApp'],
      ['github-app', 'GithubApp', 'StripeLive'],
    ] as const) {
      const secretReads = statementsOf(source).filter((st) => actionsOf(st).includes('secretsmanager:GetSecretValue'));
      const targets = secretReads.flatMap(resourceTargets);
      expect(targets).toContain(secretOutput(own));
      expect(targets).not.toContain(secretOutput(other));
      for (const signing of ['SecretArnPlatform', 'SecretArnStripeLive', 'SecretArnGithubApp']) {
        expect(targets, signing).not.toContain(refTarget(json.Outputs[signing].Value));
      }
      expect(functionOf(source)[1].Properties.Environment.Variables.GAP_API_KEY_SECRET).toEqual({ Ref: secretOutput(own) });
    }
    // Only the recovering check reads the payload-hash key (intake's write path keys the stored body with it).
    const hashKey = refTarget(json.Outputs.PayloadHashKeySecretArn.Value);
    expect(statementsOf('stripe-live').flatMap(resourceTargets)).toContain(hashKey);
    expect(statementsOf('github-app').flatMap(resourceTargets)).not.toContain(hashKey);
  });

  it('writes nothing unless it recovers, and then only what intake writes (evt#, pay#, bdy#, cfl#, tday#, dup#), never the Ledger', () => {
    const writes = (source: string) =>
      statementsOf(source).filter((st) => actionsOf(st).some((a) => /^dynamodb:(Put|Update|Delete|BatchWrite|TransactWrite)/.test(a)));
    expect(writes('github-app')).toEqual([]);
    const ledgerId = refTarget(json.Outputs.LedgerTableName.Value);
    expect(JSON.stringify(statementsOf('stripe-live'))).not.toContain(ledgerId);
    expect(
      writes('stripe-live').map((st) => [actionsOf(st).join(','), st.Condition?.['ForAllValues:StringLike']?.['dynamodb:LeadingKeys']]),
    ).toEqual([
      ['dynamodb:PutItem', ['evt#*', 'pay#*', 'bdy#*']],
      ['dynamodb:UpdateItem', ['cfl#*', 'tday#*', 'dup#*']],
      ['dynamodb:DeleteItem', ['pay#*']],
    ]);
    expect(
      statementsOf('github-app')
        .flatMap(actionsOf)
        .filter((a) => a === 'dynamodb:Scan'),
    ).toEqual([]);
  });

  it('alarms above 0 on Hookledger/ProviderGaps{Stack, Source}, notifying the alarm topic', () => {
    const alarms = resourcesOfType(json, 'AWS::CloudWatch::Alarm').filter(([, a]) => a.Properties.MetricName === 'ProviderGaps');
    expect(
      alarms
        .map(([, a]) => ({
          namespace: a.Properties.Namespace,
          threshold: a.Properties.Threshold,
          comparison: a.Properties.ComparisonOperator,
          dimensions: a.Properties.Dimensions,
          period: a.Properties.Period,
        }))
        .sort((x, y) => x.period - y.period),
    ).toEqual([
      {
        namespace: 'Hookledger',
        threshold: 0,
        comparison: 'GreaterThanThreshold',
        dimensions: [
          { Name: 'Source', Value: 'github-app' },
          { Name: 'Stack', Value: 'Hookledger' },
        ],
        period: 6 * 3600,
      },
      {
        namespace: 'Hookledger',
        threshold: 0,
        comparison: 'GreaterThanThreshold',
        dimensions: [
          { Name: 'Source', Value: 'stripe-live' },
          { Name: 'Stack', Value: 'Hookledger' },
        ],
        period: 24 * 3600,
      },
    ]);
    const topic = refTarget(json.Outputs.AlarmTopicArn.Value);
    for (const [, alarm] of alarms) expect(alarm.Properties.AlarmActions.map(refTarget)).toEqual([topic]);
  });
});
