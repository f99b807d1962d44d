// The `sines` trajectory step and the excitation designed with it: at rest at both ends, derivatives
// that are the derivatives, inside the rig's limits by the nominal model, and a well-conditioned
// regressor (much better than an ordinary point-to-point move).
import { describe, expect, it } from 'vitest';
import { loadRig } from '../src/config/load.js';
import { checkFeasible } from '../src/control/feasibility.js';
import { reflectedInertia, torqueForDuty } from '../src/control/motor.js';
import { designExcitation, trajectoryCondition } from '../src/identify/excitation.js';
import { baseParameters, HOST_COULOMB_VELOCITY, predictTorque, toVector } from '../src/identify/regressor.js';
import { builtinPath } from '../src/model/builtins.js';
import { buildPath, TrajectoryError } from '../src/model/trajectory.js';
import type { TwoLinkParams } from '../src/model/types.js';

const arm: TwoLinkParams = { L1: 0.3, L2: 0.25, d1: 0.17, d2: 0.1, m1: 0.6, m2: 0.35, I1: 0.006, I2: 0.0025, g: 9.81 };
const sines = [
  [
    { amplitude: 0.3, frequencyHz: 0.4, phase: 1 },
    { amplitude: 0.1, frequencyHz: 1.3, phase: -2 },
  ],
  [{ amplitude: 0.5, frequencyHz: 0.7, phase: 0.5 }],
];

describe('the sines step', () => {
  const q0 = [-1, 0.4];
  const traj = buildPath(arm, { q: q0 }, [{ kind: 'sines', sines, ramp: 1.5, duration: 8 }]);

  it('starts and ends at rest where it started, whatever the phases', () => {
    for (const t of [0, 8]) {
      const s = traj.sample(t);
      for (let i = 0; i < 2; i++) {
        expect(s.q[i]).toBeCloseTo(q0[i]!, 12);
        expect(s.qd[i]).toBeCloseTo(0, 12);
        expect(s.qdd[i]).toBeCloseTo(0, 12);
      }
    }
    expect(traj.duration).toBe(8);
  });

  it('has velocity, acceleration and jerk that are the derivatives of its angles', () => {
    const h = 1e-5;
    for (const t of [0.3, 1.2, 2.7, 4, 6.6, 7.9]) {
      const a = traj.sample(t - h);
      const b = traj.sample(t + h);
      const s = traj.sample(t);
      for (let i = 0; i < 2; i++) {
        const close = (x: number, y: number): void => expect(Math.abs(x - y)).toBeLessThan(1e-6 * (1 + Math.abs(y)));
        close(s.qd[i]!, (b.q[i]! - a.q[i]!) / (2 * h));
        close(s.qdd[i]!, (b.qd[i]! - a.qd[i]!) / (2 * h));
        close(s.qddd[i]!, (b.qdd[i]! - a.qdd[i]!) / (2 * h));
      }
    }
  });

  it('is the sum of sines in the middle, away from the ramps', () => {
    const t = 4;
    const s = traj.sample(t);
    const sum = sines.map((js) => js.reduce((acc, c) => acc + c.amplitude * Math.sin(2 * Math.PI * c.frequencyHz * t + c.phase), 0));
    expect(s.q[0]).toBeCloseTo(q0[0]! + sum[0]!, 12);
    expect(s.q[1]).toBeCloseTo(q0[1]! + sum[1]!, 12);
  });

  it('is refused with the step and the joint named when malformed', () => {
    expect(() => buildPath(arm, { q: q0 }, [{ kind: 'sines', sines: [sines[0]!], duration: 5 }])).toThrow(
      /step 1 \(sines\): expected sines for 2 joint/,
    );
    expect(() => buildPath(arm, { q: q0 }, [{ kind: 'sines', sines, ramp: 4, duration: 5 }])).toThrow(TrajectoryError);
    expect(() =>
      buildPath(arm, { q: q0 }, [{ kind: 'sines', sines: [sines[0]!, [{ amplitude: 0.1, frequencyHz: 0 }]], duration: 5 }]),
    ).toThrow(/joint 2, sine 1: frequencyHz/);
  });
});

describe('the excitation', () => {
  const rig = loadRig('rigs/mock-arm-far.json');
  const amplitude = 0.5;
  const ex = designExcitation(rig, { amplitude, duration: 20 });
  const traj = buildPath(rig.arm, ex.path.start, ex.path.steps);

  it('stays inside the allowed share of the angle room, the speed limits and the torque available', () => {
    const a = rig.arm as TwoLinkParams;
    const theta = toVector(baseParameters(a, rig.motors.map(reflectedInertia), rig.friction));
    const c = { L1: a.L1, g: a.g, coulombVelocity: HOST_COULOMB_VELOCITY };
    const room = ex.centre.map((q, i) => Math.min(q - rig.limits[i]!.min, rig.limits[i]!.max - q) - (10 * Math.PI) / 180);
    for (let k = 0; k <= traj.duration * 1000; k++) {
      const s = traj.sample(k / 1000);
      const tau = predictTorque(c, theta, s.q, s.qd, s.qdd);
      for (let i = 0; i < 2; i++) {
        expect(Math.abs(s.q[i]! - ex.centre[i]!)).toBeLessThanOrEqual(amplitude * room[i]! * 1.001);
        expect(Math.abs(s.qd[i]!)).toBeLessThanOrEqual(amplitude * rig.limits[i]!.maxVel * 1.001);
        const m = rig.motors[i]!;
        const motor =
          tau[i]! >= 0 ? torqueForDuty(m, rig.supplyV, rig.maxDuty, s.qd[i]!) : -torqueForDuty(m, rig.supplyV, -rig.maxDuty, s.qd[i]!);
        expect(Math.abs(tau[i]!)).toBeLessThanOrEqual(0.8 * Math.min(rig.limits[i]!.maxTorque, motor) * 1.01);
      }
    }
    expect(() => checkFeasible(rig, traj, 'the excitation')).not.toThrow();
  });

  it('uses most of what it may (the scaling is not needlessly timid)', () => {
    const used = [0, 1].map((i) =>
      Math.max(
        ex.peak.angle[i]! /
          (amplitude * (Math.min(ex.centre[i]! - rig.limits[i]!.min, rig.limits[i]!.max - ex.centre[i]!) - (10 * Math.PI) / 180)),
        ex.peak.speed[i]! / (amplitude * rig.limits[i]!.maxVel),
      ),
    );
    for (const u of used) expect(u).toBeGreaterThan(0.9);
  });

  it('gives a well-conditioned regressor, better than the point-to-point built-in; a move of one joint alone cannot identify', () => {
    const a = rig.arm as TwoLinkParams;
    const c = { L1: a.L1, g: a.g, coulombVelocity: HOST_COULOMB_VELOCITY };
    expect(ex.condition).toBeLessThan(10);
    // The design's figure is that of the sines alone; the path adds half a second of rest at each end.
    expect(Math.abs(trajectoryCondition(traj, c) / ex.condition - 1)).toBeLessThan(0.01);
    const point = builtinPath(rig.arm, 'point')!;
    const pt = trajectoryCondition(buildPath(rig.arm, point.start, point.steps), c);
    expect(pt).toBeGreaterThan(1.5 * ex.condition);
    // Joint 2 never accelerates: its rotor inertia and friction leave no trace.
    const oneJoint = buildPath(rig.arm, { q: ex.centre }, [
      { kind: 'sines', sines: [ex.path.steps[1]!.kind === 'sines' ? ex.path.steps[1]!.sines[0]! : [], []], duration: 20 },
    ]);
    expect(trajectoryCondition(oneJoint, c)).toBeGreaterThan(1e6);
  });

  it('is reproducible from its seed, and another seed gives another trajectory', () => {
    expect(designExcitation(rig, { amplitude, duration: 20 }).path).toEqual(ex.path);
    expect(designExcitation(rig, { amplitude, duration: 20, seed: 2 }).path).not.toEqual(ex.path);
  });
});
