// The twin (src/control/twin.ts) against arms whose truth is known: the nominal actuated arm itself
// (the residual and the observed torque stay near zero), an arm held still against gravity and an
// unmodelled torque (the observer finds that torque, the residual settles at T^2 (M_a + T B)^-1 dTau), a
// measurement that jumps (the alarm: hold time, one rising edge, clearing), gaps and bad duties.
import { describe, expect, it } from 'vitest';
import { loadRig, type Rig } from '../src/config/load.js';
import { Twin } from '../src/control/twin.js';
import {
  computeForwardDynamicsUnderDuty,
  computeGravity,
  computeMassMatrix,
  createActuatedArmData,
  createActuatedArmModel,
  motorDamping,
  motorDuty,
} from '../src/model/actuated.js';
import { FixedStepIntegrator } from '../src/model/integrate.js';

const DEG = Math.PI / 180;
const DT = 0.002;
const rig = (): Rig => loadRig('rigs/mock-arm.json');

/** Duties that hold the nominal arm still at q against gravity and `extra` joint torque [N m]. */
function holdingDuty(r: Rig, q: number[], extra: number[]): number[] {
  const model = createActuatedArmModel(r);
  const G = computeGravity(model, createActuatedArmData(model), q);
  return G.map((g, i) => motorDuty(model, i, g - extra[i]!, 0));
}

describe('Twin', () => {
  it('follows the nominal actuated arm itself with a negligible residual, no alarm and no unexplained torque', () => {
    const r = { ...rig(), friction: { viscous: [0.03, 0.015], coulomb: [0.06, 0.03] } };
    const model = createActuatedArmModel(r);
    const data = createActuatedArmData(model);
    const duty = [0, 0];
    const truth = new FixedStepIntegrator(
      2,
      'rk4',
      (_t, q, qd, out) => void computeForwardDynamicsUnderDuty(model, data, q, qd, duty, out),
    );
    const q = [-1.4, 0.4];
    const qd = [0, 0];
    const twin = new Twin(r);
    twin.reset(q, qd);
    let worstRes = 0;
    let worstExt = 0;
    let moved = 0;
    for (let k = 0; k < 1500; k++) {
      duty[0] = 0.35 + 0.2 * Math.sin(k * DT * 3);
      duty[1] = 0.1 * Math.sin(k * DT * 5);
      for (let s = 0; s < 20; s++) truth.step(0, q, qd, DT / 20);
      expect(twin.step(duty, DT, q, qd)).toBe(false);
      worstRes = Math.max(worstRes, ...twin.residual.map(Math.abs));
      moved = Math.max(moved, Math.abs(q[0]! + 1.4), Math.abs(q[1]! - 0.4));
      if (k > 200) worstExt = Math.max(worstExt, ...twin.tauExt.map(Math.abs));
    }
    expect(moved).toBeGreaterThan(0.2); // [rad]: it really moved
    expect(worstRes).toBeLessThan(1e-4); // [rad]: RK4 at 2 ms against 0.1 ms, 1/350 of the alarm
    expect(worstExt).toBeLessThan(0.02); // [N m]: the observer integrates at 2 ms; friction flips at reversals
    expect(twin.stats().alarms).toBe(0);
  });

  it('finds an unmodelled torque with its momentum observer, and the residual settles at T^2 (M_a + T B)^-1 dTau', () => {
    const r = rig();
    const q = [-1.2, 0.9];
    const dTau = [0.3, -0.1]; // [N m] acting on the real arm, unknown to the model
    // The real arm is held still by duties that balance gravity and dTau; the twin sees the duties only.
    const duty = holdingDuty(r, q, dTau);
    const twin = new Twin(r);
    twin.reset(q, [0, 0]);
    for (let k = 0; k < 1000; k++) twin.step(duty, DT, q, [0, 0]);
    expect(twin.tauExt[0]).toBeCloseTo(dTau[0]!, 6);
    expect(twin.tauExt[1]).toBeCloseTo(dTau[1]!, 6);
    // Re-anchoring with time constant T leaves the twin drifting at v = -(M_a / T + B)^-1 dTau, where
    // B is its motors' back-EMF damping, and a residual T v behind.
    const T = r.twin.anchorS;
    const model = createActuatedArmModel(r);
    const M = computeMassMatrix(model, createActuatedArmData(model), q).map((row) => row.slice());
    for (let i = 0; i < 2; i++) M[i]![i]! += T * motorDamping(model, i);
    const det = M[0]![0]! * M[1]![1]! - M[0]![1]! ** 2;
    const acc = [(M[1]![1]! * dTau[0]! - M[0]![1]! * dTau[1]!) / det, (M[0]![0]! * dTau[1]! - M[0]![1]! * dTau[0]!) / det];
    for (let i = 0; i < 2; i++) {
      const expected = T * T * acc[i]!;
      expect(Math.abs(twin.residual[i]! - expected)).toBeLessThan(0.15 * Math.abs(expected));
    }
  });
});

describe('Twin alarm and gaps', () => {
  it('raises the alarm once when the residual stays over alarmDeg for holdMs, and clears it when it falls back', () => {
    const r = rig();
    const q0 = [-1.2, 0.9];
    const duty = holdingDuty(r, q0, [0, 0]);
    const twin = new Twin(r);
    twin.reset(q0, [0, 0]);
    const jumped = [q0[0]! + 4 * DEG, q0[1]!]; // the encoder slips 4 deg
    const raised: number[] = [];
    const on: boolean[] = [];
    for (let k = 0; k < 100; k++) {
      if (twin.step(duty, DT, jumped, [0, 0])) raised.push(k);
      on.push(twin.alarm[0]!);
    }
    const hold = r.twin.holdMs / 1000;
    // Once, after holdMs over the threshold (the step that completes it):
    expect(raised).toHaveLength(1);
    expect((raised[0]! + 1) * DT).toBeGreaterThanOrEqual(hold - 1e-9);
    expect(raised[0]! * DT).toBeLessThan(hold + 1e-9);
    expect(on.slice(0, raised[0]).some(Boolean)).toBe(false);
    expect(on.at(-1)).toBe(false); // re-anchoring pulled the twin to the new reading
    const first = on.indexOf(true);
    const last = on.lastIndexOf(true);
    expect(on.slice(first, last + 1).every(Boolean)).toBe(true);
    expect(twin.alarm[1]).toBe(false);
    const s = twin.stats();
    expect(s.alarms).toBe(1);
    expect(s.n).toBe(100);
    expect(s.max[0]).toBeCloseTo(4 * DEG, 3);
  });

  it('starts again from the measurement after a gap (dt <= 0, not a number, or over 0.5 s)', () => {
    const r = rig();
    const twin = new Twin(r);
    const q0 = [-1.2, 0.9];
    twin.reset(q0, [0, 0]);
    for (const dt of [0, -0.01, NaN, 0.6]) {
      for (let k = 0; k < 10; k++) twin.step([0, 0], DT, q0, [0, 0]); // the twin falls away from q0
      expect(twin.step([0, 0], dt, [-1, 1], [0.5, -0.5])).toBe(false);
      expect(twin.q).toEqual([-1, 1]);
      expect(twin.qd).toEqual([0.5, -0.5]);
      expect(twin.residual).toEqual([0, 0]);
      twin.reset(q0, [0, 0]);
    }
  });

  it('steps and observes a non-finite duty as zero, and stays finite', () => {
    const r = rig();
    const a = new Twin(r);
    const b = new Twin(r);
    a.reset([-1.2, 0.9], [0, 0]);
    b.reset([-1.2, 0.9], [0, 0]);
    for (let k = 0; k < 50; k++) {
      a.step([NaN, Infinity], DT, [-1.2, 0.9], [0, 0]);
      b.step([0, 0], DT, [-1.2, 0.9], [0, 0]);
    }
    expect(a.q).toEqual(b.q);
    expect(a.qd).toEqual(b.qd);
    expect(a.tauExt).toEqual(b.tauExt);
    expect([...a.q, ...a.qd, ...a.tauExt].every(Number.isFinite)).toBe(true);
  });
});
