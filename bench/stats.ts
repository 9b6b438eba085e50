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
