/** Nearest-rank percentile (p in 0..100) of unsorted samples. */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

export const median = (samples: readonly number[]) => percentile(samples, 50);

/** Rounds for reports: 2 decimals under 10, 1 under 100, else whole. */
export function round(n: number): number {
  if (!Number.isFinite(n)) return n;
  const digits = Math.abs(n) < 10 ? 2 : Math.abs(n) < 100 ? 1 : 0;
  return Number(n.toFixed(digits));
}

/** A seeded uniform generator in [0, 1) (mulberry32): the same draws for the same seed. */
export function seededUniform(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** The bootstrap's defaults: a 95% range from 4,000 resamples, one fixed seed (same samples, same range). */
export const BOOTSTRAP = { resamples: 4000, confidence: 0.95, seed: 0x5eed_0005 } as const;

/**
 * A percentile bootstrap range for `statistic` (the median by default) of `samples`: the samples
 * resampled with replacement `resamples` times from a seeded generator, and the middle `confidence`
 * of the statistic over the resamples (nearest rank). Each sample is one round of a paired
 * measurement, so resampling samples resamples rounds.
 */
export function bootstrapRange(
  samples: readonly number[],
  statistic: (samples: readonly number[]) => number = median,
  { resamples, confidence, seed }: { resamples: number; confidence: number; seed: number } = BOOTSTRAP,
): [number, number] {
  if (samples.length === 0) return [Number.NaN, Number.NaN];
  const draw = seededUniform(seed);
  const resample = new Array<number>(samples.length);
  const stats = Array.from({ length: resamples }, () => {
    for (let i = 0; i < samples.length; i++) resample[i] = samples[Math.floor(draw() * samples.length)]!;
    return statistic(resample);
  });
  const tail = (100 * (1 - confidence)) / 2;
  return [percentile(stats, tail), percentile(stats, 100 - tail)];
}
