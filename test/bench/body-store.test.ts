import { describe, expect, it } from 'vitest';
import { breakEvenStoredBytes, loadStoragePrices, storeCost } from '../../bench/body-store';
import { repoRelative } from '../../bench/report';
import { DEFAULT_INLINE_PAYLOAD_BYTES } from '../../core/blobs';
import { loadPrices } from '../../ops/cost-model';

const table = loadPrices();
const storage = loadStoragePrices();

describe('where a stored body costs least (bench/body-store.ts)', () => {
  it('prices a 64 KiB stored body: 65 WRU + 17 RRU + storage in the item, one PUT and one GET in the bucket', () => {
    const item = storeCost(65_536, 'item', table, storage, { retentionDays: 30 });
    const bucket = storeCost(65_536, 'bucket', table, storage, { retentionDays: 30 });
    expect(item).toMatchObject({ writeUnits: 65, readUnits: 17, s3Puts: 0, s3Gets: 0 });
    expect(bucket).toMatchObject({ writeUnits: 1, readUnits: 1, s3Puts: 1, s3Gets: 1 });
    // 65 x $0.625 + 17 x $0.125 + (65,664 B x 1e6 / 2^30) GB x 30/30.4375 months x $0.25
    expect(item.usdPerMillion).toBeCloseTo(65 * 0.625 + 17 * 0.125 + ((65_664 * 1e6) / 2 ** 30) * (30 / 30.4375) * 0.25, 6);
    // $0.625 + $0.125 + $5.00 + $0.40 + storage: the reference item in DynamoDB, the body in S3
    expect(bucket.usdPerMillion).toBeCloseTo(
      6.15 + ((256 * 1e6) / 2 ** 30) * (30 / 30.4375) * 0.25 + ((65_536 * 1e6) / 2 ** 30) * (30 / 30.4375) * 0.023,
      6,
    );
  });

  it('puts the break-even at 7,040 stored bytes for the default 30-day retention, lower for longer retention', () => {
    expect(breakEvenStoredBytes(table, storage, { retentionDays: 30 })).toBe(7040);
    expect(breakEvenStoredBytes(table, storage, { retentionDays: 7 })).toBe(8064);
    expect(breakEvenStoredBytes(table, storage, { retentionDays: 365 })).toBe(1920);
  });

  it('keeps the default inlineMaxBytes within one write unit under the break-even (a price change must move it)', () => {
    const breakEven = breakEvenStoredBytes(table, storage, { retentionDays: 30 });
    expect(DEFAULT_INLINE_PAYLOAD_BYTES).toBeLessThanOrEqual(breakEven);
    expect(DEFAULT_INLINE_PAYLOAD_BYTES).toBeGreaterThan(breakEven - 1024);
  });
});

describe('file names in bench results', () => {
  it('rewrites compareWith.source from /work/shared/AWS-FACTS.md to ../shared/AWS-FACTS.md, leaving URLs and numbers', () => {
    const compareWith = { ...table.compareWith, source: '/work/shared/AWS-FACTS.md worked example (N = 3, 1 KB items, HTTP API, arm64)' };
    expect(repoRelative({ compareWith, url: 'https://aws.amazon.com/s3/pricing/' }, '/work/main')).toEqual({
      compareWith: { ...compareWith, source: '../shared/AWS-FACTS.md worked example (N = 3, 1 KB items, HTTP API, arm64)' },
      url: 'https://aws.amazon.com/s3/pricing/',
    });
    expect(repoRelative({ entry: '/work/main/lambdas/ingest/handler.ts' }, '/work/main')).toEqual({ entry: 'lambdas/ingest/handler.ts' });
  });
});
