/** Provisioned capacity: Application Auto Scaling on every table and every index, or synth fails naming what is unscaled. */
import { Stack } from 'aws-cdk-lib';
import { beforeAll, describe, expect, it } from 'vitest';
import type { CapacityConfig } from '../../core/config/capacity';
import type { HookledgerConfigInput } from '../../core/config/schema';
import { Storage } from '../../lib/constructs/storage';
import { defaultConfig, type Json, resourcesOfType, type Synthesized, synth, testApp } from './support';

const EVENT_STORE = { mode: 'provisioned', minWrite: 25, maxWrite: 900, minRead: 10, maxRead: 300, targetUtilization: 70 } as const;
const LEDGER = { mode: 'provisioned', minWrite: 40, maxWrite: 1200, minRead: 5, maxRead: 50, targetUtilization: 60 } as const;

/** "table/<logical id of the table>[/index/<name>]", from the scalable target's Fn::Join. */
function resourceIdOf(target: Json): string {
  const parts: Json[] = target.Properties.ResourceId['Fn::Join'][1];
  return parts.map((p) => (typeof p === 'string' ? p : p.Ref)).join('');
}

/** Every scalable target with its target-tracking policy, keyed "resource id|dimension". */
function scaling(s: Synthesized): Map<string, { min: number; max: number; metric: string; target: number }> {
  const policies = resourcesOfType(s.json, 'AWS::ApplicationAutoScaling::ScalingPolicy');
  const out = new Map<string, { min: number; max: number; metric: string; target: number }>();
  for (const [id, t] of resourcesOfType(s.json, 'AWS::ApplicationAutoScaling::ScalableTarget')) {
    expect(t.Properties.ServiceNamespace).toBe('dynamodb');
    const mine = policies.filter(([, p]) => p.Properties.ScalingTargetId?.Ref === id);
    expect(mine, `one policy for ${id}`).toHaveLength(1);
    const policy = mine[0]![1].Properties;
    expect(policy.PolicyType).toBe('TargetTrackingScaling');
    out.set(`${resourceIdOf(t)}|${t.Properties.ScalableDimension}`, {
      min: t.Properties.MinCapacity,
      max: t.Properties.MaxCapacity,
      metric: policy.TargetTrackingScalingPolicyConfiguration.PredefinedMetricSpecification.PredefinedMetricType,
      target: policy.TargetTrackingScalingPolicyConfiguration.TargetValue,
    });
  }
  return out;
}

const tableIds = (s: Synthesized) => {
  const tables = resourcesOfType(s.json, 'AWS::DynamoDB::Table');
  const events = tables.find(([, t]) => t.Properties.StreamSpecification)![0];
  const ledger = tables.find(([, t]) => !t.Properties.StreamSpecification)![0];
  return { events, ledger };
};

describe('a provisioned stack (EventStore and Ledger each with their own bounds)', () => {
  let s: Synthesized;
  beforeAll(() => {
    s = synth({ ...defaultConfig, capacity: { eventStore: EVENT_STORE, ledger: LEDGER } } as HookledgerConfigInput);
  });

  it('provisions both tables and the window index at their minimum capacity', () => {
    const { events, ledger } = tableIds(s);
    const table = (id: string) => s.json.Resources[id].Properties;
    expect(table(events).BillingMode ?? 'PROVISIONED').toBe('PROVISIONED');
    expect(table(events).ProvisionedThroughput).toEqual({ ReadCapacityUnits: 10, WriteCapacityUnits: 25 });
    expect(table(events).GlobalSecondaryIndexes[0].IndexName).toBe('byTenantDay');
    expect(table(events).GlobalSecondaryIndexes[0].ProvisionedThroughput).toEqual({ ReadCapacityUnits: 10, WriteCapacityUnits: 25 });
    expect(table(ledger).BillingMode ?? 'PROVISIONED').toBe('PROVISIONED');
    expect(table(ledger).ProvisionedThroughput).toEqual({ ReadCapacityUnits: 5, WriteCapacityUnits: 40 });
  });

  it('scales reads and writes of both tables and of byTenantDay by target tracking, each within its bounds', () => {
    const { events, ledger } = tableIds(s);
    const w = 'DynamoDBWriteCapacityUtilization';
    const r = 'DynamoDBReadCapacityUtilization';
    expect(Object.fromEntries(scaling(s))).toEqual({
      [`table/${events}|dynamodb:table:WriteCapacityUnits`]: { min: 25, max: 900, metric: w, target: 70 },
      [`table/${events}|dynamodb:table:ReadCapacityUnits`]: { min: 10, max: 300, metric: r, target: 70 },
      [`table/${events}/index/byTenantDay|dynamodb:index:WriteCapacityUnits`]: { min: 25, max: 900, metric: w, target: 70 },
      [`table/${events}/index/byTenantDay|dynamodb:index:ReadCapacityUnits`]: { min: 10, max: 300, metric: r, target: 70 },
      [`table/${ledger}|dynamodb:table:WriteCapacityUnits`]: { min: 40, max: 1200, metric: w, target: 60 },
      [`table/${ledger}|dynamodb:table:ReadCapacityUnits`]: { min: 5, max: 50, metric: r, target: 60 },
    });
  });

  it('leaves no table and no index of the template without both scaled dimensions', () => {
    const scaled = scaling(s);
    for (const [id, t] of resourcesOfType(s.json, 'AWS::DynamoDB::Table')) {
      for (const dim of ['Write', 'Read']) {
        expect(scaled.has(`table/${id}|dynamodb:table:${dim}CapacityUnits`), `${id} ${dim}`).toBe(true);
        for (const gsi of t.Properties.GlobalSecondaryIndexes ?? []) {
          expect(scaled.has(`table/${id}/index/${gsi.IndexName}|dynamodb:index:${dim}CapacityUnits`), `${id}/${gsi.IndexName} ${dim}`).toBe(
            true,
          );
        }
      }
    }
  });
});

describe('capacity per table', () => {
  it('provisions only the Ledger when only the Ledger asks, and scales its two dimensions', () => {
    const s = synth({ ...defaultConfig, capacity: { ledger: LEDGER } } as HookledgerConfigInput);
    const { events, ledger } = tableIds(s);
    expect(s.json.Resources[events].Properties.BillingMode).toBe('PAY_PER_REQUEST');
    expect(s.json.Resources[events].Properties.GlobalSecondaryIndexes[0].ProvisionedThroughput).toBeUndefined();
    expect([...scaling(s).keys()].sort()).toEqual([
      `table/${ledger}|dynamodb:table:ReadCapacityUnits`,
      `table/${ledger}|dynamodb:table:WriteCapacityUnits`,
    ]);
  });

  it('fails synth naming the table, the index and the field when an index of a provisioned table has no scaling', () => {
    const stack = new Stack(testApp(), 'Unscaled');
    const { indexes: _, ...table } = EVENT_STORE as unknown as { indexes: unknown } & typeof EVENT_STORE;
    const capacity = {
      eventStore: { ...table, indexes: {} },
      ledger: { mode: 'on-demand' },
    } as unknown as CapacityConfig;
    expect(() => new Storage(stack, 'EventStore', { capacity })).toThrow(
      /index byTenantDay of the EventStore table is provisioned without auto scaling: capacity\.eventStore\.indexes\.byTenantDay is missing/,
    );
  });
});
