/** Percentile by nearest rank over unsorted samples (sorts a copy). `p` in 0..100. */
export function percentiles(samples: Float64Array, ps: readonly number[]): number[] {
  if (samples.length === 0) return ps.map(() => NaN);
  const sorted = Float64Array.from(samples).sort();
  return ps.map((p) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!);
}

export function median(values: readonly number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}
