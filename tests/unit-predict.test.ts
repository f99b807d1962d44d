// The delay compensation's prediction (src/control/predict.ts): the nominal actuated arm stepped over
// the horizon under the duty in force, plus the observer's unmodelled torque when given.
import { describe, expect, it } from 'vitest';
import { loadRig } from '../src/config/load.js';
import { Predictor } from '../src/control/predict.js';
import { SentDuties } from '../src/transport/joints.js';
import { computeForwardDynamicsUnderDuty, createActuatedArmData, createActuatedArmModel } from '../src/model/actuated.js';
import { FixedStepIntegrator } from '../src/model/integrate.js';

const rig = { ...loadRig('rigs/mock-arm.json'), friction: { viscous: [0.03, 0.015], coulomb: [0.06, 0.03] } };

/** The model integrated finely (RK4 at 10 us) for `horizon` [s]. */
function truth(q0: number[], qd0: number[], duty: number[], horizon: number, extra?: number[]): { q: number[]; qd: number[] } {
  const model = createActuatedArmModel(rig);
  const data = createActuatedArmData(model);
  const integ = new FixedStepIntegrator(
    2,
    'rk4',
    (_t, q, qd, out) => void computeForwardDynamicsUnderDuty(model, data, q, qd, duty, out, extra),
  );
  const q = q0.slice();
  const qd = qd0.slice();
  const steps = Math.round(horizon / 1e-5);
  for (let k = 0; k < steps; k++) integ.step(0, q, qd, horizon / steps);
  return { q, qd };
}

describe('Predictor', () => {
  const q0 = [-1.3, 0.7];
  const qd0 = [0.8, -1.5];
  const duty = [0.4, -0.2];

  it("is the nominal actuated arm's state after the horizon under the duty in force", () => {
    const p = new Predictor(rig);
    for (const horizon of [0.002, 0.0047, 0.012]) {
      expect(p.predict(q0, qd0, duty, horizon)).toBe(true);
      const t = truth(q0, qd0, duty, horizon);
      for (let i = 0; i < 2; i++) {
        expect(Math.abs(p.q[i]! - t.q[i]!)).toBeLessThan(1e-9);
        expect(Math.abs(p.qd[i]! - t.qd[i]!)).toBeLessThan(1e-6);
      }
    }
  });

  it("adds the observer's unmodelled torque to the motors'", () => {
    const p = new Predictor(rig);
    const extra = [0.3, -0.2];
    p.predict(q0, qd0, duty, 0.01, extra);
    const withExtra = { q: p.q.slice(), qd: p.qd.slice() };
    const t = truth(q0, qd0, duty, 0.01, extra);
    for (let i = 0; i < 2; i++) expect(Math.abs(withExtra.qd[i]! - t.qd[i]!)).toBeLessThan(1e-6);
    p.predict(q0, qd0, duty, 0.01);
    expect(Math.abs(withExtra.qd[0]! - p.qd[0]!)).toBeGreaterThan(1e-3); // it made a difference
  });

  it('returns the measured state for no horizon, and a non-finite duty counts as zero', () => {
    const p = new Predictor(rig);
    expect(p.predict(q0, qd0, duty, 0)).toBe(true);
    expect(p.q).toEqual(q0);
    expect(p.qd).toEqual(qd0);
    p.predict(q0, qd0, [NaN, 0], 0.004);
    const nan = p.qd.slice();
    p.predict(q0, qd0, [0, 0], 0.004);
    expect(nan).toEqual(p.qd);
  });
});

describe('the answers in flight (a 4-5 sample delay behind a 16U2)', () => {
  const q0 = [-1.3, 0.7];
  const qd0 = [0.8, -1.5];

  it('the joint layer (SentDuties) lists the commands sent after the acknowledged one that apply within the horizon, oldest first', () => {
    const f = new SentDuties(2);
    // Answers to samples 10..14 (1 kHz), each applying 4 samples later.
    for (let k = 0; k < 5; k++) f.sent(100 + k, [0.1 * k, -0.1 * k], 0.01 + k * 0.001 + 0.004);
    // The sample at 0.015 s acknowledges command 101 (applied at 0.015): 102, 103 apply within 0.004 s.
    const c = f.changesAfter(101, 0.015, 0.004);
    expect(c.map((x) => x.afterS)).toEqual([expect.closeTo(0.001, 12), expect.closeTo(0.002, 12), expect.closeTo(0.003, 12)]);
    expect(c.map((x) => x.duty[0])).toEqual([expect.closeTo(0.2, 12), expect.closeTo(0.3, 12), expect.closeTo(0.4, 12)]);
    expect(f.changesAfter(104, 0.015, 0.004)).toHaveLength(0);
    expect(f.duty(103)).toEqual([expect.closeTo(0.3, 12), expect.closeTo(-0.3, 12)]);
    expect(f.duty(99)).toEqual([0, 0]);
  });

  it('the prediction steps through each change of duty: the same as predicting piece by piece', () => {
    const p = new Predictor(rig);
    const a = [0.4, -0.2];
    const b = [-0.3, 0.5];
    expect(p.predict(q0, qd0, a, 0.0047, undefined, [{ afterS: 0.0021, duty: b }])).toBe(true);
    const whole = { q: p.q.slice(), qd: p.qd.slice() };
    const first = truth(q0, qd0, a, 0.0021);
    const second = truth(first.q, first.qd, b, 0.0047 - 0.0021);
    for (let i = 0; i < 2; i++) {
      expect(whole.q[i]).toBeCloseTo(second.q[i]!, 7);
      expect(whole.qd[i]).toBeCloseTo(second.qd[i]!, 5);
    }
    // and differs from holding the first duty throughout
    p.predict(q0, qd0, a, 0.0047);
    expect(Math.abs(p.qd[1]! - whole.qd[1]!)).toBeGreaterThan(1e-3);
  });
});
