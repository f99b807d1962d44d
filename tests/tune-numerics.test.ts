// tune's pure numerics against analytic cases: Welch H1 on a known discrete plant, the margins of a
// known second-order plant with delay under a PID, the synthesis hitting its crossover and phase
// margin exactly, the bound it refuses beyond, the relay's describing function on a simulated
// relay loop, and the joint-model fit recovering the parameters it was generated with.
import { describe, expect, it } from 'vitest';
import { abs, arg, type C, div, expj, mul } from '../src/tune/complex.js';
import { diag, estimatorResponse, fitJointModel, jointResponse, type JointModel } from '../src/tune/joint-model.js';
import { logGrid, margins } from '../src/tune/margins.js';
import { gainSpread, loopResponse, maxCrossoverHz, pidForCrossover, pidResponse } from '../src/tune/pid-design.js';
import { analyzeRelay, cohenCoon, zieglerNichols } from '../src/tune/relay.js';
import { chirpTorque } from '../src/tune/experiments.js';
import { closedLoopResponse, logBands, logChirp, sweptBands, trusted, welchH1 } from '../src/tune/spectra.js';

const DEG = 180 / Math.PI;
/** A second-order plant with delay: 1 / (J s^2 + b s) e^{-sT}. */
const plant =
  (J: number, b: number, T: number) =>
  (w: number): C =>
    div(expj(-w * T), [-J * w * w, b * w]);

describe('spectra', () => {
  it('H1 of y_k = 0.5 y_{k-1} + u_{k-1} on white noise is z^-1 / (1 - 0.5 z^-1), coherence 1', () => {
    let seed = 7;
    const rnd = (): number => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648 - 0.5;
    const n = 16384;
    const u = Array.from({ length: n }, rnd);
    const y = new Array<number>(n).fill(0);
    for (let k = 1; k < n; k++) y[k] = 0.5 * y[k - 1]! + u[k - 1]!;
    const r = welchH1(u, y, 100, 512);
    for (const i of [10, 60, 200]) {
      const w = (2 * Math.PI * r.freqHz[i]!) / 100;
      const want = div(expj(-w), [1 - 0.5 * Math.cos(-w), -0.5 * Math.sin(-w)]);
      expect(abs(r.h[i]!) / abs(want)).toBeCloseTo(1, 1);
      expect(Math.abs(arg(div(r.h[i]!, want)))).toBeLessThan(0.05);
      expect(r.coherence[i]!).toBeGreaterThan(0.95);
    }
  });
  it("a chirp through a PD loop: the whole record's bands give the plant within 1 deg where Welch's 2 s segments scatter by 3 or more", () => {
    // tune's chirp (0.5-50 Hz, 12 s, faded in and out) on a discrete inertia with friction under a 2 Hz PD, at 500 Hz, noiseless:
    // P(z) = dt^2/J z^-1 / ((1 - a z^-1)(1 - z^-1)), a = 1 - dt b / J.
    const fs = 500;
    const dt = 1 / fs;
    const J = 0.1;
    const b = 0.05;
    const kp = J * (2 * Math.PI * 2) ** 2;
    const kd = 1.4 * J * 2 * Math.PI * 2;
    const chirp = { f0: 0.5, f1: 50, T: 12, amplitude: () => 1, fadeS: 0.3 };
    const r: number[] = [];
    const u: number[] = [];
    const y: number[] = [];
    let q = 0;
    let v = 0;
    for (let k = 0; k <= 12 * fs; k++) {
      const rk = chirpTorque(chirp, k * dt);
      const uk = rk - kp * q - kd * v;
      r.push(rk);
      u.push(uk);
      y.push(q);
      v = (1 - (dt * b) / J) * v + (dt / J) * uk;
      q += dt * v;
    }
    const a = 1 - (dt * b) / J;
    const P = (f: number): C => {
      const zi = expj((-2 * Math.PI * f) / fs);
      const one = (c: number): C => [1 - c * zi[0], -c * zi[1]];
      return div(mul([(dt * dt) / J, 0], zi), mul(one(a), one(1)));
    };
    const welch = closedLoopResponse(r, u, y, fs, 1024);
    const worst = (h: { freqHz: number[]; h: C[] }): [number, number] => {
      let db = 0;
      let deg = 0;
      h.freqHz.forEach((f, i) => {
        if (f < 1 || f > 20) return;
        const e = div(h.h[i]!, P(f));
        db = Math.max(db, Math.abs(20 * Math.log10(abs(e))));
        deg = Math.max(deg, Math.abs(arg(e) * DEG));
      });
      return [db, deg];
    };
    const whole = sweptBands(r, u, y, fs, welch, 0.8, 0.5, 50, 12);
    const segments = logBands(trusted(welch, 0.8, 0.5, 50), 12);
    expect(whole.freqHz.filter((f) => f >= 1 && f <= 20).length).toBeGreaterThan(10);
    const [wDb, wDeg] = worst(whole);
    const [sDb, sDeg] = worst(segments);
    // 0.07 dB, 0.5 deg (a band's P is its bins' mean) against 0.57 dB, 4.8 deg.
    expect(wDb).toBeLessThan(0.15);
    expect(wDeg).toBeLessThan(1);
    // What the whole record replaced: Welch's segments cut the sweep, and the loop's memory crosses the cuts.
    expect(sDeg).toBeGreaterThan(3);
    expect(sDb).toBeGreaterThan(wDb);
  });
  it('the log chirp sweeps from f0 to f1', () => {
    expect(logChirp(0, 0.5, 50, 10).freqHz).toBeCloseTo(0.5, 9);
    expect(logChirp(10, 0.5, 50, 10).freqHz).toBeCloseTo(50, 9);
    expect(logChirp(5, 0.5, 50, 10).freqHz).toBeCloseTo(5, 9);
  });
});

describe('margins and synthesis', () => {
  it('a pure integrator k/s with delay T: crossover k, PM 90 - k T, GM at pi/(2T)', () => {
    const k = 10;
    const T = 0.02;
    const f = logGrid(0.1, 100, 4000);
    const L = f.map((x) => mul([0, -k / (2 * Math.PI * x)], expj(-2 * Math.PI * x * T)));
    const m = margins(f, L);
    expect(m.crossoverHz).toBeCloseTo(k / (2 * Math.PI), 3);
    expect(m.phaseMarginDeg).toBeCloseTo(90 - k * T * DEG, 1);
    const wpc = Math.PI / (2 * T);
    expect(m.phaseCrossoverHz).toBeCloseTo(wpc / (2 * Math.PI), 2);
    expect(m.gainMarginDb).toBeCloseTo(-20 * Math.log10(k / wpc), 2);
  });
  it('the PID for a second-order plant with delay puts the crossover and phase margin where asked', () => {
    const P = plant(0.09, 0.05, 0.003);
    const V = (w: number): C => [0, w];
    for (const fc of [5, 12.5]) {
      const wc = 2 * Math.PI * fc;
      const g = pidForCrossover(wc, P(wc), V(wc), 50)!;
      expect(g.kp).toBeGreaterThan(0);
      const f = logGrid(0.2, 200, 3000);
      const m = margins(
        f,
        loopResponse(
          g,
          f,
          f.map((x) => P(2 * Math.PI * x)),
          V,
        ),
      );
      expect(m.crossoverHz).toBeCloseTo(fc, 2);
      expect(m.phaseMarginDeg).toBeCloseTo(50, 1);
      expect(abs(mul(pidResponse(g, wc), P(wc)))).toBeCloseTo(1, 9);
    }
  });
  it('refuses a crossover beyond the delay: the bound falls as the delay grows (PM 45 deg, GM 6 dB)', () => {
    const f = logGrid(0.2, 1000, 2000);
    const bound = (T: number): number => {
      const P = plant(0.09, 0.05, T);
      const gm = (g: Parameters<typeof pidResponse>[0]): number =>
        margins(
          f,
          loopResponse(
            g,
            f,
            f.map((x) => P(2 * Math.PI * x)),
            (w) => [0, w],
          ),
        ).gainMarginDb;
      return maxCrossoverHz(1, 500, 45, 6, P, (w) => [0, w], gm);
    };
    const b1 = bound(0.003);
    const b2 = bound(0.006);
    expect(b1).toBeGreaterThan(5);
    expect(b2).toBeLessThan(b1 * 0.6);
    // With the D term on a 25 Hz estimator the lead is bounded: no PID reaches 100 Hz.
    const w = 2 * Math.PI * 100;
    expect(pidForCrossover(w, plant(0.09, 0.05, 0.003)(w), estimatorResponse(w, 25, 0.002), 45)).toBeNull();
  });
  it('gainSpread is the largest relative spread', () => {
    expect(
      gainSpread([
        { kp: 1, ki: 2, kd: 3 },
        { kp: 1.1, ki: 2, kd: 3 },
      ]),
    ).toBeCloseTo(0.1 / 1.05, 9);
  });
});

describe('relay', () => {
  it('a relay on 1/(J s^2 + b s + k) e^{-sT} oscillates where the phase is -180 deg, with Ku = 1/|P| there', () => {
    const J = 0.09,
      b = 0.2,
      k = 2,
      T = 0.004,
      d = 0.5,
      eps = 0.002,
      dt = 1e-4;
    let q = 0,
      v = 0,
      sgn = 1;
    const hist: number[] = [];
    const t: number[] = [],
      y: number[] = [],
      s: number[] = [];
    const lag = Math.round(T / dt);
    for (let i = 0; i < 200000; i++) {
      if (q > eps) sgn = -1;
      else if (q < -eps) sgn = 1;
      hist.push(sgn * d);
      const u = hist.length > lag ? hist[hist.length - 1 - lag]! : 0;
      v += ((u - b * v - k * q) / J) * dt;
      q += v * dt;
      if (i % 10 === 0) {
        t.push(i * dt);
        y.push(q);
        s.push(sgn);
      }
    }
    const r = analyzeRelay(t, y, s, d, eps, 5)!;
    // The describing function is approximate (harmonics): within 10 % of the exact ultimate point.
    const P = (w: number): C => div(expj(-w * T), [k - J * w * w, b * w]);
    // With hysteresis the relay sits where arg P = -pi + asin(eps/a): the exact point of that phase.
    const target = (r.phaseDeg * Math.PI) / 180;
    let wu = 1;
    while (arg(P(wu)) > target && arg(P(wu)) < 0) wu *= 1.0005;
    expect((2 * Math.PI) / r.tu / wu).toBeGreaterThan(0.95);
    expect((2 * Math.PI) / r.tu / wu).toBeLessThan(1.05);
    expect(r.dutyHigh).toBeCloseTo(0.5, 2);
    expect(r.ku * abs(P(wu))).toBeGreaterThan(0.9);
    expect(r.ku * abs(P(wu))).toBeLessThan(1.1);
    const zn = zieglerNichols(r.ku, r.tu);
    expect(zn.kp).toBeCloseTo(0.6 * r.ku, 9);
    const cc = cohenCoon(r.ku, r.tu, 1 / k)!;
    expect(cc.theta).toBeGreaterThan(0);
    expect(cc.kp).toBeGreaterThan(0);
  });
});

describe('joint model', () => {
  it('recovers J, b and k from its own response with noise-free data', () => {
    const m: JointModel = { J: 0.092, b: 0.05, B: 0.4, k: 2.4, delayS: 0.0032 };
    const V = (w: number): C => estimatorResponse(w, 60, 0.002);
    const f = logGrid(0.5, 40, 60);
    const P = f.map((x) => jointResponse(m, 2 * Math.PI * x, V(2 * Math.PI * x)));
    const fit = fitJointModel(
      f,
      P,
      f.map(() => 0.99),
      { B: m.B, delayS: m.delayS },
      V,
    );
    expect(fit.J).toBeCloseTo(m.J, 6);
    expect(fit.b).toBeCloseTo(m.b, 6);
    expect(fit.k).toBeCloseTo(m.k, 6);
  });
  it("the estimator's response is a derivative at low frequency", () => {
    const w = 2 * Math.PI * 0.5;
    const V = estimatorResponse(w, 25, 0.002);
    expect(V[1] / w).toBeCloseTo(1, 2);
  });
  it('diag reads a joint of a 1x1 or 2x2 model matrix, and names a joint the matrix does not have', () => {
    const M2 = [
      [0.09, 0.01],
      [0.01, 0.02],
    ];
    expect([diag(M2, 0), diag(M2, 1)]).toEqual([0.09, 0.02]);
    expect(diag([[0.05]], 0)).toBe(0.05);
    expect(() => diag([[0.05]], 1, "the rig's mass matrix")).toThrow("the rig's mass matrix is 1x1: it has no joint 2");
  });
});
