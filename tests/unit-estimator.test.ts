// The joint velocity estimator (src/control/estimator.ts): an alpha-beta tracker, optionally aided
// by the planned acceleration, fed with encoder angles at the board's (jittery) sample times.
import { describe, expect, it } from 'vitest';
import { ModelAidedEstimator, VelocityEstimator } from '../src/control/estimator.js';
import { mulberry32 } from './helpers/random.js';

const HZ = 30;

describe('VelocityEstimator', () => {
  it('starts at the first reading with zero velocity and ignores readings without a positive dt', () => {
    const est = new VelocityEstimator(2, HZ);
    est.update([0.5, -0.25], 0.002);
    expect(est.q).toEqual([0.5, -0.25]);
    expect(est.qd).toEqual([0, 0]);
    est.update([0.7, 0.1], 0);
    est.update([0.7, 0.1], -0.001);
    est.update([0.7, 0.1], NaN);
    expect(est.q).toEqual([0.5, -0.25]);
    expect(est.qd).toEqual([0, 0]);
  });

  it('converges to the exact speed of a ramp, with jittery sample intervals', () => {
    const rnd = mulberry32(5);
    const est = new VelocityEstimator(2, HZ);
    const v = [1.5, -0.7];
    let t = 0;
    est.reset([0, 0]);
    for (let k = 0; k < 1000; k++) {
      const dt = 0.002 * (0.5 + rnd());
      t += dt;
      est.update([v[0]! * t, v[1]! * t], dt);
    }
    expect(est.qd[0]).toBeCloseTo(v[0]!, 9);
    expect(est.qd[1]).toBeCloseTo(v[1]!, 9);
    expect(est.q[0]).toBeCloseTo(v[0]! * t, 9);
  });

  it('lags a constant acceleration a by about a / wn^2 without the plan, and not at all with it', () => {
    const a = 20; // [rad/s^2]
    const dt = 0.002;
    const plain = new VelocityEstimator(1, HZ);
    const aided = new VelocityEstimator(1, HZ);
    plain.reset([0]);
    aided.reset([0]);
    let t = 0;
    for (let k = 0; k < 2000; k++) {
      t += dt;
      const q = [0.5 * a * t * t];
      plain.update(q, dt);
      aided.update(q, dt, [a]);
    }
    const wn = 2 * Math.PI * HZ;
    const lag = a * t - plain.qd[0]!; // [rad/s] behind the true speed
    expect(lag).toBeGreaterThan(0);
    // The velocity lag of the continuous tracker is 2 zeta a / wn (zeta = 1): within 20 % at wn dt = 0.38.
    expect(lag).toBeGreaterThan(0.8 * ((2 * a) / wn));
    expect(lag).toBeLessThan(1.2 * ((2 * a) / wn));
    expect(Math.abs(aided.qd[0]! - a * t)).toBeLessThan(1e-9 * a * t);
  });
});

describe('VelocityEstimator on real signals', () => {
  it('turns quantized counts into a velocity far smoother than differencing them', () => {
    const rnd = mulberry32(9);
    const count = (2 * Math.PI) / 4800; // one encoder count [rad]
    const est = new VelocityEstimator(1, HZ);
    const v = 0.37; // [rad/s]: a count every ~3.4 samples
    let t = 0;
    let prev = 0;
    let errEst = 0;
    let errDiff = 0;
    let n = 0;
    est.reset([0]);
    for (let k = 0; k < 3000; k++) {
      const dt = 0.002 * (0.9 + 0.2 * rnd());
      t += dt;
      const q = Math.round((v * t) / count) * count;
      est.update([q], dt);
      if (k > 500) {
        errEst += (est.qd[0]! - v) ** 2;
        errDiff += ((q - prev) / dt - v) ** 2;
        n++;
      }
      prev = q;
    }
    const rmsEst = Math.sqrt(errEst / n);
    const rmsDiff = Math.sqrt(errDiff / n);
    expect(rmsEst).toBeLessThan(rmsDiff / 5);
    expect(rmsEst).toBeLessThan(0.1 * v);
  });

  it('stays stable when a long gap makes wn dt large (the gains are kept inside the stable region)', () => {
    const est = new VelocityEstimator(1, HZ);
    est.reset([0]);
    let t = 0;
    for (let k = 0; k < 200; k++) {
      const dt = k % 10 === 0 ? 0.1 : 0.002; // a 100 ms stall every tenth reading
      t += dt;
      est.update([Math.sin(t)], dt);
      expect(Number.isFinite(est.qd[0]!)).toBe(true);
      expect(Math.abs(est.qd[0]!)).toBeLessThan(3);
    }
  });
});

describe('ModelAidedEstimator (the velocity impedance mode damps with)', () => {
  // A mass pushed by a spring the model knows: qdd = -w^2 q + duty (duty as an acceleration).
  const W2 = 400;
  const model = (q: readonly number[], _qd: readonly number[], duty: readonly number[], out: number[]): void => {
    out[0] = -W2 * q[0]! + duty[0]!;
  };
  /** The true motion over `n` samples of dt with an unmodelled acceleration `dist` from sample `from`; calls `each` per sample. */
  function run(
    dist: number,
    from: number,
    n: number,
    each: (t: number, q: number, qd: number, est: ModelAidedEstimator, plain: VelocityEstimator) => void,
  ): void {
    const dt = 0.002;
    const est = new ModelAidedEstimator(1, 30, model);
    const plain = new VelocityEstimator(1, 30);
    let q = 0.01;
    let qd = 0;
    est.reset([q], [qd]);
    plain.reset([q]);
    const duty = [1];
    for (let k = 1; k <= n; k++) {
      // The truth, finely integrated over the sample (semi-implicit Euler, 100 steps).
      for (let s = 0; s < 100; s++) {
        const a = -W2 * q + duty[0]! + (k > from ? dist : 0);
        qd += (a * dt) / 100;
        q += (qd * dt) / 100;
      }
      est.update([q], dt, duty);
      plain.update([q], dt);
      each(k * dt, q, qd, est, plain);
    }
  }

  it('follows what the model explains with no lag: an oscillation of 3.2 Hz within 1 % of its speed, where the 30 Hz tracker lags', () => {
    let worstAided = 0;
    let worstPlain = 0;
    run(0, Infinity, 500, (t, _q, qd, est, plain) => {
      if (t < 0.2) return;
      worstAided = Math.max(worstAided, Math.abs(est.qd[0]! - qd));
      worstPlain = Math.max(worstPlain, Math.abs(plain.qd[0]! - qd));
    });
    const peak = 0.01 * Math.sqrt(W2); // [rad/s] about the oscillation's speed amplitude
    expect(worstAided).toBeLessThan(0.01 * peak);
    expect(worstPlain).toBeGreaterThan(0.1 * peak);
  });

  it('finds a constant unmodelled acceleration (a push) as its disturbance (within 5 %), and then the speed with no steady lag', () => {
    const push = 8; // [rad/s^2]
    let last = { err: 0, d: 0 };
    run(push, 100, 600, (_t, _q, qd, est) => {
      last = { err: est.qd[0]! - qd, d: est.disturbance[0]! };
    });
    // Within 5 %: the model's acceleration is taken at the start of each 2 ms sample, the rest shows as disturbance.
    expect(Math.abs(last.d - push) / push).toBeLessThan(0.05);
    // The plain tracker would lag such a push by 2 a / wn (42 mrad/s here; a spring turns it into an oscillation's lag).
    expect(Math.abs(last.err)).toBeLessThan(0.002);
  });

  it('starts again from the measurement after a gap in the data, and ignores a non-positive dt', () => {
    const est = new ModelAidedEstimator(1, 30, model);
    est.update([0.2], 0.002, [0]);
    expect(est.q).toEqual([0.2]);
    est.update([0.3], 0, [0]);
    expect(est.q).toEqual([0.2]);
    est.update([0.5], 1, [0]);
    expect(est.q).toEqual([0.5]);
    expect(est.qd).toEqual([0]);
    expect(est.disturbance).toEqual([0]);
  });
});
