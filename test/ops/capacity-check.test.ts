/**
 * Can the configured stack carry a rate (ops/capacity-check.ts, `hookledger doctor --rate`, docs/scale.md):
 * AWS's published limits against the load the shipped configuration puts on them, from the bench's
 * measured units (bench/results.json) and the batching ops/batching.ts models. Offline: no AWS call.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { defineConfig } from '../../core/config/schema';
import defaultConfig from '../../hookledger.config';
import { checkCapacity, rateChecks } from '../../ops/capacity-check';
import { benchFiles } from '../../ops/cost';

const files = benchFiles(path.resolve(import.meta.dirname, '../..'));
const shipped = defineConfig(defaultConfig);
const CONSUMERS = ['billing-meter', 'audit-writer', 'risk-evaluator'];

describe('checkCapacity: the shipped configuration (3 consumers, maxConcurrency 5, batches of 10, on-demand tables)', () => {
  it('carries 100/s steady: the most used limit is a consumer at 8% (5 batches of 10 in flight, 40 ms each: 1,250 deliveries/s)', () => {
    const c = checkCapacity(shipped, 100, files);
    expect(c.exceeded).toEqual([]);
    expect(c.first.steady).toMatchObject({ id: 'consumer:billing-meter', load: 100, capacity: 1250, utilization: 0.08 });
    expect(c.steady.find((r) => r.id === 'apiGateway')).toMatchObject({ load: 100, capacity: 10_000, utilization: 0.01 });
    // The Ledger: 2 write units per delivery, 3 deliveries, against the 40,000 WRU/s table quota.
    expect(c.steady.find((r) => r.id === 'table:ledger')).toMatchObject({ load: 600, capacity: 40_000 });
  });

  it("a 50x burst on 100/s first meets the on-demand Ledger's instant throughput: 30,000 WRU/s against a new table's 4,000", () => {
    const c = checkCapacity(shipped, 100, files);
    expect(c.burstFactor).toBe(50);
    expect(c.first.burst).toMatchObject({ id: 'burst:ledger', load: 30_000, capacity: 4_000, utilization: 7.5 });
    expect(c.first.burst.raisedBy).toContain('warm throughput');
    expect(c.burst.find((r) => r.id === 'burst:apiGateway')).toMatchObject({ load: 5_000, capacity: 15_000 });
  });

  it('carries 1,000/s steady with every consumer at 80% of its maxConcurrency', () => {
    const c = checkCapacity(shipped, 1000, files);
    expect(c.exceeded).toEqual([]);
    expect(c.first.steady.id).toBe('consumer:billing-meter');
    expect(c.first.steady.utilization).toBeCloseTo(0.8, 10);
    expect(c.steady.find((r) => r.id === 'table:ledger')!.utilization).toBeCloseTo(0.15, 10);
  });

  it("cannot carry 10,000/s: the consumers' maxConcurrency (8x), the Ledger's table quota (60,000 of 40,000 WRU/s) and API Gateway's account quota (met)", () => {
    const c = checkCapacity(shipped, 10_000, files);
    expect(c.exceeded.map((r) => r.id)).toEqual([...CONSUMERS.map((id) => `consumer:${id}`), 'table:ledger', 'apiGateway']);
    expect(c.first.steady.utilization).toBe(8);
    expect(c.exceeded.find((r) => r.id === 'apiGateway')).toMatchObject({ load: 10_000, capacity: 10_000, utilization: 1 });
    expect(c.exceeded.find((r) => r.id === 'table:ledger')).toMatchObject({ load: 60_000, capacity: 40_000, utilization: 1.5 });
    // One tenant fills its window-index partition (1 WRU per webhook, 1,000 WRU/s) unless hotTenants spreads it.
    expect(c.perTenantCeiling).toBe(1000);
  });

  it('reads the configured settings: maxConcurrency 50 carries 10,000 deliveries/s per consumer; a provisioned maxWrite caps the Ledger', () => {
    const cfg = defineConfig({
      ...defaultConfig,
      consumers: defaultConfig.consumers.map((c) => ({ ...c, maxConcurrency: 50 })),
      capacity: { ledger: { mode: 'provisioned', maxWrite: 5_000 } },
      windowIndex: { hotTenants: { tenant_204: 4 } },
    });
    const c = checkCapacity(cfg, 1000, files);
    expect(c.steady.find((r) => r.id === 'consumer:audit-writer')).toMatchObject({ capacity: 12_500, utilization: 0.08 });
    expect(c.exceeded).toEqual([expect.objectContaining({ id: 'table:ledger', load: 6_000, capacity: 5_000, utilization: 1.2 })]);
    expect(c.exceeded[0]!.raisedBy).toContain('capacity.ledger.maxWrite');
    expect(c.perTenantCeiling).toBe(4000);
  });
});

describe('rateChecks: the rows `hookledger doctor --rate` adds', () => {
  it('at 100/s: one ok row naming the most used limit, and an info row for the burst', () => {
    const rows = rateChecks(shipped, 100, files);
    expect(rows).toEqual([
      {
        id: 'rate',
        status: 'ok',
        message: expect.stringMatching(
          /^carries 100\/s steady: the most used limit is consumer billing-meter: maxConcurrency 5 .*100 of 1,250 deliveries\/s \(8%\)$/,
        ),
      },
      expect.objectContaining({
        id: 'rate:burst',
        status: 'warning',
        message: expect.stringContaining('a 50x burst (5,000/s at once) first meets Ledger writes'),
      }),
    ]);
  });

  it("at 10,000/s: a warning per limit met, naming API Gateway's account quota and the consumers' concurrency with what raises them", () => {
    const rows = rateChecks(shipped, 10_000, files);
    const api = rows.find((r) => r.id === 'rate:apiGateway')!;
    expect(api.status).toBe('warning');
    expect(api.message).toBe(
      "cannot carry 10000/s steady: API Gateway's account throttle (every API of the account in the Region): 10,000 of 10,000 requests/s (100%)",
    );
    expect(api.fix).toContain("a Service Quotas increase of API Gateway's throttle quota per account and Region (default 10,000 rps)");
    const consumer = rows.find((r) => r.id === 'rate:consumer:risk-evaluator')!;
    expect(consumer.message).toContain('10,000 of 1,250 deliveries/s (800%)');
    expect(consumer.fix).toBe(
      'raise consumers[risk-evaluator].maxConcurrency in hookledger.config.ts (up to 1000; reservedConcurrency with it when set)',
    );
    expect(rows.filter((r) => r.status === 'warning').map((r) => r.id)).toEqual([
      ...CONSUMERS.map((id) => `rate:consumer:${id}`),
      'rate:table:ledger',
      'rate:apiGateway',
      'rate:burst',
    ]);
  });
});
