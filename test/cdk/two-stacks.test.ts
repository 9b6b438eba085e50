/**
 * Two copies in one account (`cdk deploy -c stackName=Other`): synthesized side by side in one app,
 * nothing account-wide may collide: no physical name, no export, no alarm or dashboard reading the
 * other copy's metrics.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { HookledgerStack } from '../../lib/hookledger-stack';
import { asArray, CONFIGS, type Json, refTarget, resolvePseudo, resourcesOfType, testApp } from './support';

const NAMES = ['Hookledger', 'Other'] as const;

/** Property names that set an account- or region-wide physical name (or a name shown as one). */
function physicalNames(json: Json): Map<string, string> {
  const names = new Map<string, string>();
  for (const [id, r] of Object.entries<Json>(json.Resources)) {
    for (const [key, value] of Object.entries<Json>(r.Properties ?? {})) {
      // Scoped to their parent (a stage to its API, an inline policy to its role), or not identifiers.
      if (!/Name$/.test(key) || ['StageName', 'PolicyName', 'DisplayName', 'MetricName', 'AttributeName'].includes(key)) continue;
      if (typeof value !== 'string' && !value?.['Fn::Join']) continue;
      names.set(`${r.Type} ${key} (${id})`, resolvePseudo(value));
    }
  }
  return names;
}

/** What an alarm watches; a dimension on a resource of this stack is told apart by the stack. */
function metricIdentity(stackName: string, alarm: Json): string {
  const dims = asArray<Json>(alarm.Dimensions).map((d) => {
    const target = refTarget(d.Value);
    return `${d.Name}=${target ? `${stackName}/${target}` : JSON.stringify(d.Value)}`;
  });
  return `${alarm.Namespace} ${alarm.MetricName} {${dims.sort().join(',')}}`;
}

describe.each(CONFIGS)('two stacks in one app with the $name', ({ config }) => {
  const json: Record<string, Json> = {};
  beforeAll(() => {
    const app = testApp();
    const stacks = NAMES.map((name) => new HookledgerStack(app, name, { config }));
    const assembly = app.synth();
    for (const stack of stacks) json[stack.stackName] = assembly.getStackByName(stack.stackName).template;
  });

  it('gives no two resources the same physical name, and names the API after its stack', () => {
    const [a, b] = NAMES.map((n) => physicalNames(json[n]));
    // The API's name and the consumer queues' fixed names (see ConsumerWorker); all else is generated.
    expect([...a!.keys()].map((k) => k.split(' (')[0]).sort()).toEqual(
      ['AWS::ApiGatewayV2::Api Name', ...Array<string>(b!.size - 1).fill('AWS::SQS::Queue QueueName')].sort(),
    );
    const taken = new Map([...a!].map(([where, name]) => [name, where]));
    for (const [where, name] of b!) expect(taken.get(name), `${where} = ${name}`).toBeUndefined();
    for (const name of NAMES) {
      const apis = resourcesOfType(json[name], 'AWS::ApiGatewayV2::Api');
      expect(apis.map(([, api]) => api.Properties.Name)).toEqual([`${name}-intake`]);
    }
  });

  it('exports nothing (exports are unique per account and region)', () => {
    for (const name of NAMES) {
      for (const [key, output] of Object.entries<Json>(json[name].Outputs)) expect(output.Export, key).toBeUndefined();
    }
  });

  it('has no alarm on a metric the other copy also publishes', () => {
    const identities = NAMES.map((name) =>
      resourcesOfType(json[name], 'AWS::CloudWatch::Alarm').map(([id, { Properties: alarm }]) => {
        // Every alarm watches one metric of its own, with at least one dimension that names this copy.
        expect(alarm.Metrics, id).toBeUndefined();
        expect(asArray(alarm.Dimensions).length, id).toBeGreaterThan(0);
        expect(alarm.AlarmName, id).toBeUndefined();
        return metricIdentity(name, alarm);
      }),
    );
    const [a, b] = identities;
    expect(a!.length).toBeGreaterThan(0);
    expect(b!.filter((id) => a!.includes(id))).toEqual([]);
    // The custom metric carries the stack's own name as its Stack dimension.
    for (const name of NAMES) {
      expect(identities[NAMES.indexOf(name)]).toContain(`Hookledger ReconcileViolations {Stack="${name}"}`);
    }
  });

  it("reads only its own stack's custom metrics on the dashboard", () => {
    for (const name of NAMES) {
      const [[, dashboard]] = resourcesOfType(json[name], 'AWS::CloudWatch::Dashboard') as [[string, Json]];
      expect(dashboard.Properties.DashboardName).toBeUndefined();
      const body = JSON.stringify(dashboard.Properties.DashboardBody);
      const searches = body.match(/SEARCH\(.*?, 'Sum', 60\)/g) ?? [];
      // Intake outcomes and fan-out skipped deliveries.
      expect(searches).toHaveLength(2);
      for (const search of searches) expect(search).toContain(`Stack=\\\\\\"${name}\\\\\\"`);
      // Literal metrics of the Hookledger namespace name the stack too.
      const stackValues = [...body.matchAll(/\\"Stack\\",\\"([A-Za-z0-9-]+)\\"/g)].map((m) => m[1]);
      expect(stackValues.length).toBeGreaterThan(0);
      expect(new Set(stackValues)).toEqual(new Set([name]));
    }
  });

  it("tells each copy's functions which stack they publish for", () => {
    for (const name of NAMES) {
      const withStack = resourcesOfType(json[name], 'AWS::Lambda::Function')
        .map(([, fn]) => fn.Properties.Environment.Variables)
        .filter((vars) => vars.STACK_NAME !== undefined);
      // Intake (IntakeRequests), fan-out (FanOutSkippedDeliveries) and reconcile (ReconcileViolations).
      expect(withStack.map((vars) => vars.POWERTOOLS_SERVICE_NAME).sort()).toEqual([
        'hookledger-fanout',
        'hookledger-ingest',
        'hookledger-reconcile',
      ]);
      for (const vars of withStack) expect(vars.STACK_NAME).toBe(name);
    }
  });
});
