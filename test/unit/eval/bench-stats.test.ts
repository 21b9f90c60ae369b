import { describe, expect, it } from 'vitest';
import { fitLine, logLogSlope, summarize } from '../../../bench/stats';

describe('benchmark statistics', () => {
  it('fits a line through points exactly on it', () => {
    const line = fitLine([0, 0.1, 0.25], [30, 40, 55]);
    expect(line.slope).toBeCloseTo(100, 9);
    expect(line.intercept).toBeCloseTo(30, 9);
  });

  it('fits the least-squares line through scattered points', () => {
    // y = 1 + 2x with residuals +1, -1, -1, +1: symmetric, so the fit is the line itself.
    const line = fitLine([0, 1, 2, 3], [2, 2, 4, 8]);
    expect(line.slope).toBeCloseTo(2, 9);
    expect(line.intercept).toBeCloseTo(1, 9);
  });

  it('gives NaN with fewer than two usable points, or all at one x', () => {
    expect(fitLine([1], [2]).slope).toBeNaN();
    expect(fitLine([1, 2], [3, Number.NaN]).intercept).toBeNaN();
    expect(fitLine([2, 2], [1, 5]).slope).toBeNaN();
  });

  it('measures the growth exponent on a log-log scale', () => {
    const xs = [10, 100, 1000, 10_000];
    expect(
      logLogSlope(
        xs,
        xs.map((x) => 3 * x),
      ),
    ).toBeCloseTo(1, 9);
    expect(
      logLogSlope(
        xs,
        xs.map((x) => x * x),
      ),
    ).toBeCloseTo(2, 9);
    // Zero and negative values have no logarithm and are left out.
    expect(logLogSlope([0, 10, 100], [5, 10, 100])).toBeCloseTo(1, 9);
  });

  it('summarizes samples by nearest-rank percentiles', () => {
    const s = summarize([5, 1, 4, 2, 3]);
    expect([s.n, s.p50, s.p95, s.min, s.max, s.mean]).toEqual([5, 3, 5, 1, 5, 3]);
  });
});
