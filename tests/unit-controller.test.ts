// The control law of one tick (src/control/controller.ts): the feedforward is the actuated arm's
// inverse dynamics, and the command is saturated by the torque limit (scaled by the ramps) and by
// what the motor can give at the joint's speed, with anti-windup, duty clamping and no NaN out.
import { describe, expect, it } from 'vitest';
import { loadRig, type Rig } from '../src/config/load.js';
import { Controller } from '../src/control/controller.js';
import { computeInverseDynamics, createActuatedArmData, createActuatedArmModel, motorDuty, motorTorque } from '../src/model/actuated.js';
import type { TrajectorySample } from '../src/model/trajectory.js';

/** mock-arm with a duty limit below 1, so that the duty clamp and the motor's torque at full duty differ. */
function rig(o: Partial<Rig['control']['pid']> = {}): Rig {
  const r = loadRig('rigs/mock-arm.json');
  return {
    ...r,
    maxDuty: 0.9,
    friction: { viscous: [0.03, 0.015], coulomb: [0.06, 0.03] },
    control: { ...r.control, pid: { ...r.control.pid, ...o } },
  };
}

const sample = (q: number[], qd: number[] = [0, 0], qdd: number[] = [0, 0]): TrajectorySample => ({ t: 0, q, qd, qdd, qddd: [0, 0] });
const DT = 0.002;

describe('Controller feedforward', () => {
  it("is the actuated arm's inverse dynamics on the plan (desired), on the measured state (measured), or nothing (none)", () => {
    const r = rig();
    const model = createActuatedArmModel(r);
    const data = createActuatedArmData(model);
    const d = sample([-1.2, 0.8], [0.5, -0.3], [2, -1]);
    const q = [-1.21, 0.79];
    const qd = [0.45, -0.35];
    const desired = new Controller(r, 'desired').update(d, d, q, qd, DT, 1).out.tauFf.slice();
    expect(desired).toEqual(computeInverseDynamics(model, data, d.q, d.qd, d.qdd).slice());
    const measured = new Controller(r, 'measured').update(d, d, q, qd, DT, 1).out.tauFf.slice();
    expect(measured).toEqual(computeInverseDynamics(model, data, q, qd, d.qdd).slice());
    expect(new Controller(r, 'none').update(d, d, q, qd, DT, 1).out.tauFf).toEqual([0, 0]);
  });

  it("subtracts the disturbance observer's torque, and uses the model it is given", () => {
    const r = rig();
    const d = sample([-1.2, 0.8], [0.5, -0.3], [2, -1]);
    const plain = new Controller(r, 'desired').update(d, d, d.q, d.qd, DT, 1).out.tauFf.slice();
    const dob = new Controller(r, 'desired').update(d, d, d.q, d.qd, DT, 1, [0.2, -0.1]).out.tauFf;
    expect(dob[0]).toBeCloseTo(plain[0]! - 0.2, 12);
    expect(dob[1]).toBeCloseTo(plain[1]! + 0.1, 12);
    const frictionless = createActuatedArmModel({ ...r, friction: { viscous: [0, 0], coulomb: [0, 0] } });
    const other = new Controller(r, 'desired', frictionless).update(d, d, d.q, d.qd, DT, 1).out.tauFf;
    const f = [0.03 * 0.5 + 0.06 * Math.tanh(0.5 / 0.01), 0.015 * -0.3 + 0.03 * Math.tanh(-0.3 / 0.01)];
    expect(other[0]).toBeCloseTo(plain[0]! - f[0]!, 12);
    expect(other[1]).toBeCloseTo(plain[1]! - f[1]!, 12);
    expect(
      () => new Controller(r, 'desired', createActuatedArmModel({ ...r, arm: { L1: 0.3, d1: 0.1, m1: 1, I1: 0.01, g: 9.81 } })),
    ).toThrow(/joints/);
  });
});

describe('Controller saturation', () => {
  it('cuts the command at the torque limit times the ramp scale, sets the joint bit, and drives the motor model with it', () => {
    const r = rig();
    const model = createActuatedArmModel(r);
    const c = new Controller(r, 'none');
    for (const scale of [0.8, 0.5, 0.1]) {
      c.reset();
      const qd = [0.2, -0.1];
      // (Where the torque limit, not the motor, is what binds.)
      expect(r.limits[0]!.maxTorque * scale).toBeLessThan(motorTorque(model, 0, r.maxDuty, qd[0]!));
      expect(-r.limits[1]!.maxTorque * scale).toBeGreaterThan(motorTorque(model, 1, -r.maxDuty, qd[1]!));
      const { out, ok } = c.update(sample([0, 0]), sample([1, -1]), [-0.5, 0.5], qd, DT, scale);
      expect(ok).toBe(true);
      expect(out.sat).toBe(0b11);
      expect(out.tauCmd[0]).toBeCloseTo(r.limits[0]!.maxTorque * scale, 12);
      expect(out.tauCmd[1]).toBeCloseTo(-r.limits[1]!.maxTorque * scale, 12);
      for (let i = 0; i < 2; i++) {
        expect(out.tauPid[i]! * out.tauCmd[i]!).toBeGreaterThan(out.tauCmd[i]! ** 2); // the PID asked for more
        expect(out.duty[i]).toBeCloseTo(motorDuty(model, i, out.tauCmd[i]!, qd[i]!), 12);
        expect(motorTorque(model, i, out.duty[i]!, qd[i]!)).toBeCloseTo(out.tauCmd[i]!, 12);
      }
    }
  });

  it('within the limits the command passes through unchanged', () => {
    const r = rig();
    const c = new Controller(r, 'desired');
    const d = sample([-1.4, 0.3], [0.1, 0.2], [0.5, 0.5]);
    const { out } = c.update(d, d, [-1.401, 0.301], [0.1, 0.2], DT, 1);
    expect(out.sat).toBe(0);
    for (let i = 0; i < 2; i++) expect(out.tauCmd[i]).toBeCloseTo(out.tauFf[i]! + out.tauPid[i]!, 12);
  });

  it("at speed, the motor's torque at full duty (back-EMF) is the limit, and the duty stays within maxDuty", () => {
    const r = rig();
    const model = createActuatedArmModel(r);
    const c = new Controller(r, 'none');
    // Joint 1 turning forwards fast enough that the motor gives less than the torque limit.
    let qd1 = 0;
    while (motorTorque(model, 0, r.maxDuty, qd1) > 0.5 * r.limits[0]!.maxTorque) qd1 += 0.1;
    const { out } = c.update(sample([0, 0]), sample([1, 0]), [0, 0], [qd1, 0], DT, 1);
    expect(out.sat & 1).toBe(1);
    expect(out.tauCmd[0]).toBeCloseTo(motorTorque(model, 0, r.maxDuty, qd1), 12);
    expect(out.tauCmd[0]).toBeLessThan(r.limits[0]!.maxTorque);
    expect(out.duty[0]).toBeCloseTo(r.maxDuty, 12);
    expect(Math.abs(out.duty[0]!)).toBeLessThanOrEqual(r.maxDuty);
  });

  it('brakes with zero torque when back-EMF leaves no torque inside the limit, and clamps the duty that needs', () => {
    const r = rig();
    const model = createActuatedArmModel(r);
    const c = new Controller(r, 'none');
    // So fast that full duty forwards gives less than minus the limit: lo > hi.
    let qd1 = 0;
    while (motorTorque(model, 0, r.maxDuty, qd1) >= -r.limits[0]!.maxTorque) qd1 += 1;
    for (const target of [1, -1]) {
      c.reset();
      const { out, ok } = c.update(sample([0, 0]), sample([target, 0]), [0, 0], [qd1, 0], DT, 1);
      expect(ok).toBe(true);
      expect(out.tauCmd[0]).toBe(0);
      expect(out.sat & 1).toBe(1);
      expect(out.duty[0]).toBe(r.maxDuty); // zero torque at this speed needs more than maxDuty
    }
  });
});

describe('Controller.drive (a control law other than ours)', () => {
  it('puts its torques through the same limits, ramps and motor model, with no PID', () => {
    const r = rig();
    const model = createActuatedArmModel(r);
    const c = new Controller(r, 'desired');
    const qd = [0.3, -0.2];
    const small = c.drive([0.5, -0.2], qd, 1).out;
    expect(small.tauCmd).toEqual([0.5, -0.2]);
    expect(small.tauPid).toEqual([0, 0]);
    expect(small.sat).toBe(0);
    for (let i = 0; i < 2; i++) expect(small.duty[i]).toBeCloseTo(motorDuty(model, i, small.tauCmd[i]!, qd[i]!), 12);
    const big = c.drive([100, -100], qd, 0.5).out;
    expect(big.sat).toBe(0b11);
    expect(big.tauFf).toEqual([100, -100]);
    expect(big.tauCmd[0]).toBeCloseTo(0.5 * r.limits[0]!.maxTorque, 12);
    expect(big.tauCmd[1]).toBeCloseTo(-0.5 * r.limits[1]!.maxTorque, 12);
    const { out, ok } = c.drive([NaN, 0.1], qd, 1);
    expect(ok).toBe(false);
    expect(out.duty[0]).toBe(0);
  });
});

describe('Controller anti-windup and faults', () => {
  it('clamping anti-windup: the integral holds while the joint stays saturated, and integrates again once free', () => {
    const r = rig({ antiWindup: 'clamp', ki: [50, 50] });
    const c = new Controller(r, 'none');
    c.update(sample([0, 0]), sample([1, 0]), [0, 0], [0, 0], DT, 1); // saturates; integrates this once
    const held = c.pid[0]!.integral;
    for (let k = 0; k < 100; k++) c.update(sample([0, 0]), sample([1, 0]), [0, 0], [0, 0], DT, 1);
    expect(c.pid[0]!.integral).toBe(held);
    // A small error the limit does not cut: integrating resumes.
    c.update(sample([0, 0]), sample([0.001, 0]), [0, 0], [0, 0], DT, 1);
    c.update(sample([0, 0]), sample([0.001, 0]), [0, 0], [0, 0], DT, 1);
    expect(c.pid[0]!.integral).toBeGreaterThan(held);
  });

  it('back-calculation anti-windup: a long saturation does not wind the integral up to its limit', () => {
    const r = rig({ antiWindup: 'backcalc', ki: [50, 50] });
    const c = new Controller(r, 'none');
    for (let k = 0; k < 2000; k++) c.update(sample([0, 0]), sample([1, 0]), [0, 0], [0, 0], DT, 1);
    expect(c.out.sat & 1).toBe(1);
    expect(c.pid[0]!.integral).toBeLessThan(0.5 * r.control.pid.iLimitNm[0]!);
  });

  it('a non-finite input gives zero duty and zero torque and says so; the other joint is unaffected', () => {
    const r = rig();
    const c = new Controller(r, 'desired');
    const d = sample([-1.4, 0.3]);
    for (const bad of [NaN, Infinity]) {
      const { out, ok } = c.update(d, d, [bad, 0.3], [0, 0], DT, 1);
      expect(ok).toBe(false);
      expect(out.duty[0]).toBe(0);
      expect(out.tauCmd[0]).toBe(0);
      expect(Number.isFinite(out.duty[1])).toBe(true);
      c.reset();
    }
    expect(c.idle().duty).toEqual([0, 0]);
  });
});
