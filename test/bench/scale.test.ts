import { describe, expect, it } from 'vitest';
import { BenchSetupError } from '../../bench/errors';
import { latencyByClass, partitionSpread, splitTraffic } from '../../bench/scale';

describe('bench scale: who sends what', () => {
  it('gives tenant_000 a third of 20,000 webhooks and spreads the rest round robin over the other 999 tenants', () => {
    const { heavy, others } = splitTraffic(20_000, 1_000, 1 / 3);
    expect(heavy).toBe(6_667);
    expect(others).toHaveLength(13_333);
    expect([others[0], others[998], others[999]]).toEqual(['tenant_001', 'tenant_999', 'tenant_001']);
    const perTenant = new Map<string, number>();
    for (const t of others) perTenant.set(t, (perTenant.get(t) ?? 0) + 1);
    expect(perTenant.size).toBe(999);
    // 13,333 = 999 x 13 + 346: the first 346 tenants send one more.
    expect([perTenant.get('tenant_346'), perTenant.get('tenant_347'), perTenant.has('tenant_000')]).toEqual([14, 13, false]);
  });

  it('refuses 1,001 tenants (ids past tenant_999 would change the payload size)', () => {
    expect(() => splitTraffic(20_000, 1_001, 1 / 3)).toThrow(BenchSetupError);
  });
});

describe('bench scale: delivery latency per tenant class', () => {
  it('reports nearest-rank p50 and p99 for the heavy tenant apart from all the others', () => {
    const heavy = Array.from({ length: 100 }, (_, i) => ({ tenantId: 'tenant_000', latencyMs: i + 1 }));
    const others = [
      { tenantId: 'tenant_204', latencyMs: 7 },
      { tenantId: 'tenant_311', latencyMs: 400 },
      { tenantId: 'tenant_204', latencyMs: 5 },
      { tenantId: 'tenant_311', latencyMs: 11 },
      { tenantId: 'tenant_311', latencyMs: 9 },
    ];
    expect(latencyByClass([...others, ...heavy], 'tenant_000')).toEqual({
      heavy: { deliveries: 100, p50Ms: 50, p99Ms: 99, maxMs: 100 },
      others: { deliveries: 5, p50Ms: 9, p99Ms: 400, maxMs: 400 },
    });
  });

  it('reports a class without deliveries as none, not as zero latency', () => {
    const { heavy } = latencyByClass([{ tenantId: 'tenant_204', latencyMs: 12 }], 'tenant_000');
    expect(heavy.deliveries).toBe(0);
    expect(heavy.p50Ms).toBeNaN();
  });
});

describe('bench scale: partition spread', () => {
  it('names the largest partition key and its share of the total', () => {
    const spread = partitionSpread(
      new Map([
        ['tenant_204#2026-12-02', 3],
        ['tenant_000#2026-12-02', 6],
        ['tenants#2026-12-02', 1],
      ]),
    );
    expect(spread).toEqual({ partitions: 3, total: 10, largest: 'tenant_000#2026-12-02', largestCount: 6, largestShare: 0.6 });
  });

  it('takes the first key in key order among equals, so an even spread reads as 1 / partitions', () => {
    const spread = partitionSpread(
      new Map([
        ['tday#2026-12-02#tenant_311', 1],
        ['tday#2026-12-02#tenant_204', 1],
      ]),
    );
    expect(spread).toMatchObject({ largest: 'tday#2026-12-02#tenant_204', largestShare: 0.5 });
  });

  it('gives an empty table a share of 0', () => {
    expect(partitionSpread(new Map())).toEqual({ partitions: 0, total: 0, largest: '', largestCount: 0, largestShare: 0 });
  });
});
