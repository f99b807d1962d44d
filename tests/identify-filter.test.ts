// The identification's numerics: the Butterworth design against its closed form, forward-backward
// filtering (no lag, no ringing at the ends), differentiation, and non-negative least squares against
// brute force and the KKT conditions, with honest covariances.
import { Matrix, solve } from 'ml-matrix';
import { describe, expect, it } from 'vitest';
import { butterworthLowpass, derivatives, filtfilt, gainAt, zeroPhaseLowpass } from '../src/identify/filter.js';
import { conditionNumber, nnls } from '../src/identify/lsq.js';
import { mulberry32 } from './helpers/random.js';

const fs = 500;

/** A standard normal from a uniform source (Box-Muller). */
function gaussian(rnd: () => number): number {
  return Math.sqrt(-2 * Math.log(Math.max(rnd(), 1e-300))) * Math.cos(2 * Math.PI * rnd());
}

describe('Butterworth low-pass', () => {
  it('has the bilinear-transformed Butterworth magnitude 1 / sqrt(1 + (tan(pi f/fs) / tan(pi fc/fs))^(2N))', () => {
    for (const order of [1, 2, 3, 4, 5, 8]) {
      for (const fc of [2, 10, 60]) {
        const sos = butterworthLowpass(order, fc, fs);
        for (const f of [0, 0.3 * fc, fc, 2 * fc, 100, 240]) {
          const r = Math.tan((Math.PI * f) / fs) / Math.tan((Math.PI * fc) / fs);
          expect(gainAt(sos, f, fs)).toBeCloseTo(1 / Math.sqrt(1 + r ** (2 * order)), 10);
        }
      }
    }
  });

  it('refuses a cutoff at or above Nyquist and a bad order, naming the argument', () => {
    expect(() => butterworthLowpass(4, 250, fs)).toThrow(/"cutoffHz"/);
    expect(() => butterworthLowpass(0, 10, fs)).toThrow(/"order"/);
  });
});

describe('zero-phase filtering', () => {
  it('passes a sine below the cutoff with the squared gain and no lag', () => {
    const f = 1.5;
    const fc = 10;
    const n = 5000;
    const x = Float64Array.from({ length: n }, (_, i) => Math.sin((2 * Math.PI * f * i) / fs + 0.3));
    const y = zeroPhaseLowpass(x, fc, fs);
    const g2 = gainAt(butterworthLowpass(4, fc, fs), f, fs) ** 2;
    let worst = 0;
    for (let i = 500; i < n - 500; i++) worst = Math.max(worst, Math.abs(y[i]! - g2 * x[i]!));
    expect(worst).toBeLessThan(1e-6);
    // A one-way pass of the same filter lags by tens of milliseconds: the comparison is not trivial.
    expect(g2).toBeGreaterThan(0.999);
  });

  it('keeps a constant exactly and a ramp up to the ends (odd extension, steady-state start)', () => {
    const n = 800;
    const x = Float64Array.from({ length: n }, (_, i) => -1.5 + 0.002 * i); // 1 rad/s from -86 deg
    const y = zeroPhaseLowpass(x, 5, fs);
    // A zero-state start would be off by the whole 1.5 rad at the ends.
    for (let i = 0; i < n; i++) expect(Math.abs(y[i]! - x[i]!)).toBeLessThan(3e-5);
    for (let i = 300; i < n - 300; i++) expect(Math.abs(y[i]! - x[i]!)).toBeLessThan(2e-8); // the start-up dies out
    const c = zeroPhaseLowpass(new Float64Array(100).fill(-1.57), 5, fs);
    for (const v of c) expect(v).toBeCloseTo(-1.57, 11);
  });

  it('removes white noise above the cutoff', () => {
    const rnd = mulberry32(3);
    const x = Float64Array.from({ length: 20000 }, () => gaussian(rnd));
    const y = filtfilt(butterworthLowpass(4, 10, fs), x, 150);
    const rms = (a: Float64Array): number => Math.sqrt(a.reduce((s, v) => s + v * v, 0) / a.length);
    // The noise power left is about the share of the band below the cutoff: 10 / 250.
    expect(rms(y) / rms(x)).toBeGreaterThan(0.15);
    expect(rms(y) / rms(x)).toBeLessThan(0.25);
  });

  it('central differences of a smooth signal give its derivatives', () => {
    const h = 1 / fs;
    const w = 2 * Math.PI * 1.2;
    const x = Float64Array.from({ length: 2000 }, (_, i) => Math.sin(w * i * h));
    const { d1, d2 } = derivatives(x, h);
    for (let i = 1; i < 1999; i += 37) {
      expect(d1[i]).toBeCloseTo(w * Math.cos(w * i * h), 3);
      expect(d2[i]! / (w * w)).toBeCloseTo(-Math.sin(w * i * h), 3);
    }
  });
});

describe('non-negative least squares', () => {
  it('is ordinary least squares when the solution is inside the constraints', () => {
    const rnd = mulberry32(4);
    const A = Matrix.rand(200, 5, { random: rnd });
    const xTrue = [1, 2, 0.5, 3, 0.1];
    const b = A.mmul(Matrix.columnVector(xTrue))
      .getColumn(0)
      .map((v) => v + 1e-3 * gaussian(rnd));
    const r = nnls(A, b);
    const ls = solve(A, Matrix.columnVector(b)).getColumn(0);
    r.x.forEach((v, k) => expect(v).toBeCloseTo(ls[k]!, 10));
    expect(r.atBound.every((a) => !a)).toBe(true);
  });

  it('finds the best feasible point (brute force over the active sets) and meets the KKT conditions', () => {
    const rnd = mulberry32(5);
    for (let trial = 0; trial < 30; trial++) {
      const p = 4;
      const A = new Matrix(40, p);
      for (let i = 0; i < 40; i++) for (let k = 0; k < p; k++) A.set(i, k, gaussian(rnd));
      const b = Array.from({ length: 40 }, () => gaussian(rnd));
      const r = nnls(A, b);
      const cost = (x: number[]): number => {
        const ax = A.mmul(Matrix.columnVector(x)).getColumn(0);
        return ax.reduce((s, v, i) => s + (v - b[i]!) ** 2, 0);
      };
      // Brute force: every subset of free columns, keep the feasible least-squares solutions.
      let best = Infinity;
      for (let mask = 0; mask < 1 << p; mask++) {
        const cols = [...Array(p).keys()].filter((k) => mask & (1 << k));
        const x = new Array<number>(p).fill(0);
        if (cols.length) {
          const s = solve(A.subMatrixColumn(cols), Matrix.columnVector(b)).getColumn(0);
          if (s.some((v) => v < 0)) continue;
          cols.forEach((c, i) => (x[c] = s[i]!));
        }
        best = Math.min(best, cost(x));
      }
      expect(r.x.every((v) => v >= 0)).toBe(true);
      expect(cost(r.x)).toBeCloseTo(best, 9);
      // KKT: gradient A^T (b - A x) is zero on free parameters and <= 0 on those at the bound.
      const res = b.map((v, i) => v - A.mmul(Matrix.columnVector(r.x)).get(i, 0));
      const g = A.transpose().mmul(Matrix.columnVector(res)).getColumn(0);
      g.forEach((gk, k) => (r.atBound[k] ? expect(gk).toBeLessThan(1e-9) : expect(Math.abs(gk)).toBeLessThan(1e-9)));
    }
  });

  it('reports a covariance that matches the scatter of repeated fits', () => {
    const rnd = mulberry32(6);
    const A = new Matrix(300, 3);
    for (let i = 0; i < 300; i++) for (let k = 0; k < 3; k++) A.set(i, k, gaussian(rnd) + (k === 0 ? 1 : 0));
    const xTrue = [2, 1, 3];
    const clean = A.mmul(Matrix.columnVector(xTrue)).getColumn(0);
    const sigma = 0.2;
    const draws: number[][] = [];
    let reported: number[] = [];
    for (let d = 0; d < 400; d++) {
      const r = nnls(
        A,
        clean.map((v) => v + sigma * gaussian(rnd)),
      );
      draws.push(r.x);
      reported = r.covariance.map((row, k) => Math.sqrt(row[k]!));
    }
    for (let k = 0; k < 3; k++) {
      const mean = draws.reduce((s, x) => s + x[k]!, 0) / draws.length;
      const sd = Math.sqrt(draws.reduce((s, x) => s + (x[k]! - mean) ** 2, 0) / (draws.length - 1));
      expect(mean).toBeCloseTo(xTrue[k]!, 1);
      expect(sd / reported[k]!).toBeGreaterThan(0.85);
      expect(sd / reported[k]!).toBeLessThan(1.15);
    }
  });

  it('condition number is the ratio of the extreme singular values', () => {
    const A = Matrix.diag([10, 2, 0.5]);
    expect(conditionNumber(A).condition).toBeCloseTo(20, 10);
  });
});
