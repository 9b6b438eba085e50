/**
 * Section 5's ratio to the floor and how sure it is (bench/bundles.ts pairedRatio, ratioVerdict;
 * bench/stats.ts bootstrapRange): the median over the rounds of each load against the floor's load in
 * the same round, a 95% range for it by a seeded bootstrap over the rounds, and the verdict against the
 * function's goal: met at or under it, NOT met when the whole range is above it, not settled between.
 */
import { describe, expect, it } from 'vitest';
import { bundleGoal, pairedRatio, ratioVerdict } from '../../bench/bundles';
import { bootstrapRange, median, seededUniform } from '../../bench/stats';

/** `rounds` per-round ratios around 1.06, spread as a shared 2-core machine spreads them (seeded). */
function roundRatios(rounds: number, seed: number): number[] {
  const draw = seededUniform(seed);
  return Array.from({ length: rounds }, () => 1.06 + 0.3 * (draw() - 0.5) + 0.2 * draw() ** 4);
}

describe('the bootstrap range of a ratio over the rounds', () => {
  const ratios = roundRatios(41, 7);

  it('is the same range for the same samples', () => {
    expect(bootstrapRange(ratios)).toEqual(bootstrapRange([...ratios]));
  });

  it('contains the median it is the range of, and lies within the samples', () => {
    const [lo, hi] = bootstrapRange(ratios);
    expect(lo).toBeLessThanOrEqual(median(ratios));
    expect(hi).toBeGreaterThanOrEqual(median(ratios));
    expect(lo).toBeGreaterThanOrEqual(Math.min(...ratios));
    expect(hi).toBeLessThanOrEqual(Math.max(...ratios));
    expect(hi - lo).toBeGreaterThan(0);
  });

  it('narrows as the rounds grow from 41 to 328', () => {
    const [lo41, hi41] = bootstrapRange(ratios);
    const [lo328, hi328] = bootstrapRange(roundRatios(328, 7));
    expect(hi328 - lo328).toBeLessThan((hi41 - lo41) * 0.6);
  });

  it('is a single point when every round gave the same ratio', () => {
    expect(bootstrapRange(Array.from({ length: 41 }, () => 1.063))).toEqual([1.063, 1.063]);
  });
});

describe("a function's paired ratio to the floor", () => {
  it('is the median of its per-round ratios, with their bootstrap range', () => {
    const floorMs = [40, 50, 44, 60, 42];
    const ingestMs = [44, 50, 44, 63, 50.4]; // per round: 1.1, 1, 1, 1.05, 1.2
    const { ratio, range } = pairedRatio(ingestMs, floorMs);
    expect(ratio).toBeCloseTo(1.05, 12);
    expect(range).toEqual(bootstrapRange(ingestMs.map((ms, round) => ms / floorMs[round]!)));
  });
});

describe('the verdict against the goal', () => {
  it('holds intake and the consumers to 1.10, the fan-out and reconcile to 1.25', () => {
    expect(['ingest', 'billing-meter', 'audit-writer', 'risk-evaluator'].map(bundleGoal)).toEqual([1.1, 1.1, 1.1, 1.1]);
    expect(['fanout', 'reconcile'].map(bundleGoal)).toEqual([1.25, 1.25]);
  });

  it('is met when the ratio is at or under the goal, however wide the range', () => {
    expect(ratioVerdict(1.063, [1.01, 1.12], 1.1)).toBe('met');
    expect(ratioVerdict(1.1, [1.04, 1.17], 1.1)).toBe('met');
    expect(ratioVerdict(0.957, [0.9, 1.02], 1.1)).toBe('met');
  });

  it('is not settled when the ratio is over the goal but the range reaches it', () => {
    expect(ratioVerdict(1.168, [1.06, 1.24], 1.1)).toBe('not settled');
    expect(ratioVerdict(1.118, [1.1, 1.2], 1.1)).toBe('not settled');
    expect(ratioVerdict(1.29, [1.22, 1.35], 1.25)).toBe('not settled');
  });

  it('is NOT met when the whole range is over the goal', () => {
    expect(ratioVerdict(1.168, [1.12, 1.22], 1.1)).toBe('NOT met');
    expect(ratioVerdict(1.101, [1.1001, 1.11], 1.1)).toBe('NOT met');
    expect(ratioVerdict(1.3, [1.26, 1.34], 1.25)).toBe('NOT met');
  });
});
