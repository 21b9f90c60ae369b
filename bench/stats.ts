/**
 * Small statistics and timing helpers for the benchmarks: percentiles of samples, a timer, and
 * least-squares lines: the slope of log(y) against log(x) (the growth exponent), and cost per event.
 */

export interface Summary {
  n: number;
  p50: number;
  p95: number;
  p99: number;
  mean: number;
  min: number;
  max: number;
}

/** The `q` quantile (0..1) of sorted values, nearest-rank. */
function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank] ?? Number.NaN;
}

/** Percentiles, mean and range of samples. */
export function summarize(samples: readonly number[]): Summary {
  const sorted = [...samples].sort((a, b) => a - b);
  const mean = sorted.reduce((n, v) => n + v, 0) / Math.max(1, sorted.length);
  return {
    n: sorted.length,
    p50: quantile(sorted, 0.5),
    p95: quantile(sorted, 0.95),
    p99: quantile(sorted, 0.99),
    mean,
    min: sorted[0] ?? Number.NaN,
    max: sorted[sorted.length - 1] ?? Number.NaN,
  };
}

/** Milliseconds since an arbitrary origin, sub-millisecond resolution. */
export function now(): number {
  return performance.now();
}

/** Runs `fn` and returns its result with the elapsed milliseconds. */
export async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const start = now();
  const value = await fn();
  return { value, ms: now() - start };
}

/** Runs `fn` `reps` times (after `warmup` untimed runs) and returns the elapsed ms of each run. */
export function repeatSync(fn: () => unknown, reps: number, warmup = 1): number[] {
  for (let i = 0; i < warmup; i++) fn();
  const out: number[] = [];
  for (let i = 0; i < reps; i++) {
    const start = now();
    fn();
    out.push(now() - start);
  }
  return out;
}

/** Least-squares line through the points (x, y): y ≈ intercept + slope · x. NaN with fewer than 2. */
export function fitLine(xs: readonly number[], ys: readonly number[]): { slope: number; intercept: number } {
  const points = xs
    .map((x, i) => [x, ys[i] ?? Number.NaN] as const)
    .filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y));
  if (points.length < 2) return { slope: Number.NaN, intercept: Number.NaN };
  const mx = points.reduce((n, [x]) => n + x, 0) / points.length;
  const my = points.reduce((n, [, y]) => n + y, 0) / points.length;
  let num = 0;
  let den = 0;
  for (const [x, y] of points) {
    num += (x - mx) * (y - my);
    den += (x - mx) ** 2;
  }
  const slope = den === 0 ? Number.NaN : num / den;
  return { slope, intercept: my - slope * mx };
}

/** Least-squares slope of log(y) on log(x): 1 is linear growth, 2 quadratic. */
export function logLogSlope(xs: readonly number[], ys: readonly number[]): number {
  return fitLine(
    xs.map((x) => Math.log(x)),
    ys.map((y) => Math.log(y)),
  ).slope;
}

/** A number rounded for a table: `digits` decimals below 10, fewer above. */
export function fmt(value: number, digits = 2): string {
  if (!Number.isFinite(value)) return 'n/a';
  if (Math.abs(value) >= 1000) return Math.round(value).toLocaleString('en-US');
  if (Math.abs(value) >= 10) return value.toFixed(Math.max(0, digits - 1));
  return value.toFixed(digits);
}

/** Bytes as KB with one decimal. */
export function kb(bytes: number): string {
  return `${(bytes / 1024).toFixed(1)} KB`;
}

/** A ratio as `×1.23`. */
export function ratio(a: number, b: number): string {
  return b === 0 || !Number.isFinite(a / b) ? 'n/a' : `×${(a / b).toFixed(2)}`;
}

/** The figures of a load run: how many conversations and rounds, how long, how fast. */
export interface LoadFigures {
  conversations: number;
  rounds: number;
  seconds: number;
  roundsPerSecond: number;
  /** Round latency percentiles, in ms. */
  p50: number;
  p99: number;
}
