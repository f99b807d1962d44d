// The signal tools under the figures and the run-vs-run comparison: Savitzky-Golay derivatives are
// exact on polynomials of their degree (edges included), resampling is exact on lines, and the time of
// a reading is recovered from the board's timestamps through tick jitter.
import { describe, expect, it } from 'vitest';
import { interpAt, readingTimes, resampleLinear, savitzkyGolay, strideIndices, uniformGrid } from '../src/record/signal.js';

describe('Savitzky-Golay', () => {
  const dt = 0.002;
  const t = uniformGrid(0, 0.5, dt);
  const p = (x: number): number => 2 - 3 * x + 5 * x * x - 7 * x ** 3;
  const y = Float64Array.from(t, p);

  it('differentiates a cubic exactly, at every sample including the ends', () => {
    const d = [1, 2, 3].map((deriv) => savitzkyGolay(y, dt, { window: 21, order: 3, deriv }));
    t.forEach((x, i) => {
      expect(d[0]![i]).toBeCloseTo(-3 + 10 * x - 21 * x * x, 6);
      expect(d[1]![i]).toBeCloseTo(10 - 42 * x, 5);
      expect(d[2]![i]).toBeCloseTo(-42, 3);
    });
    const s = savitzkyGolay(y, dt, { window: 21, order: 3, deriv: 0 });
    t.forEach((x, i) => expect(s[i]).toBeCloseTo(p(x), 9));
  });

  it('smooths noise: the acceleration of a noisy sine is close to the true one', () => {
    let seed = 7;
    const noise = (): number => ((seed = (seed * 16807) % 2147483647) / 2147483647 - 0.5) * 2e-3;
    const w = 2 * Math.PI;
    const ys = Float64Array.from(t, (x) => Math.sin(w * x) + noise());
    const a = savitzkyGolay(ys, dt, { window: 41, order: 3, deriv: 2 });
    let err = 0;
    for (let i = 20; i < t.length - 20; i++) err = Math.max(err, Math.abs(a[i]! + w * w * Math.sin(w * t[i]!)));
    expect(err).toBeLessThan(0.05 * w * w);
  });

  it('filters runs between NaN separately and leaves short runs NaN', () => {
    const ys = Float64Array.from(y);
    ys[100] = Number.NaN;
    const d = savitzkyGolay(ys, dt, { window: 11, order: 3, deriv: 1 });
    expect(Number.isNaN(d[100]!)).toBe(true);
    expect(d[99]).toBeCloseTo(-3 + 10 * t[99]! - 21 * t[99]! ** 2, 6);
    expect(d[101]).toBeCloseTo(-3 + 10 * t[101]! - 21 * t[101]! ** 2, 6);
    expect(() => savitzkyGolay(ys, dt, { window: 3, order: 3, deriv: 1 })).toThrow(RangeError);
  });
});

describe('resampling', () => {
  it('is exact on a line, NaN outside and across NaN', () => {
    const xs = [0, 0.13, 0.2, 0.55, 1];
    const ys = xs.map((x) => 3 * x - 1);
    const g = uniformGrid(-0.1, 1.1, 0.05);
    const r = resampleLinear(xs, ys, g);
    g.forEach((x, i) => {
      if (x < 0 || x > 1) expect(Number.isNaN(r[i]!)).toBe(true);
      else expect(r[i]).toBeCloseTo(3 * x - 1, 12);
    });
    expect(interpAt(xs, ys, 0.4)).toBeCloseTo(0.2, 12);
    expect(Number.isNaN(resampleLinear([0, 1, 2], [0, Number.NaN, 2], [0.5])[0]!)).toBe(true);
  });

  it('thins to at most the asked number of points, keeping the ends', () => {
    const k = strideIndices(1001, 100);
    expect(k.length).toBeLessThanOrEqual(101);
    expect(k[0]).toBe(0);
    expect(k[k.length - 1]).toBe(1000);
    expect(strideIndices(5, 100)).toEqual([0, 1, 2, 3, 4]);
  });
});

describe('reading times', () => {
  it("recover when the board sampled, on the loop's clock, from jittered pick-up times", () => {
    // The board samples every 2 ms on its own clock (offset 5 s); each sample waits 0.1 to 3 ms before a tick takes it.
    const n = 2000;
    const sample = Float64Array.from({ length: n }, (_, i) => 0.01 + i * 0.002);
    const boardT = Float64Array.from(sample, (s) => s + 5);
    const wait = Float64Array.from({ length: n }, (_, i) => 0.0001 + ((i * 37) % 30) * 0.0001);
    const t = Float64Array.from(sample, (s, i) => s + wait[i]!);
    const m = readingTimes(t, boardT, 1);
    for (let i = 0; i < n; i++) expect(Math.abs(m[i]! - sample[i]!)).toBeLessThan(0.00011);
  });
});
