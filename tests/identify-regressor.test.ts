// The identification's regressor against the model it linearizes: Y(q, qd, qdd) theta must be the
// inverse dynamics of src/model (TwoLinkDynamics), the reflected rotor inertia on M's diagonal, and the
// friction of externalTorques, and an arm rebuilt from base parameters must have those parameters.
import { describe, expect, it } from 'vitest';
import { parseRigFile } from '../src/config/rig.js';
import {
  BASE_PARAMETERS,
  baseParameters,
  predictTorque,
  regressorRows,
  toVector,
  HOST_COULOMB_VELOCITY,
} from '../src/identify/regressor.js';
import { realizeArm } from '../src/identify/rigfile.js';
import { externalTorques, TwoLinkDynamics } from '../src/model/dynamics.js';
import type { Pair } from '../src/model/types.js';
import { mulberry32, randomArm, randomState } from './helpers/random.js';

const noFriction = { viscous: [0, 0], coulomb: [0, 0] };

describe('regressor', () => {
  it('Y theta equals TwoLinkDynamics.inverseDynamics to 1e-12 on random arms and states', () => {
    const rnd = mulberry32(8);
    let worst = 0;
    for (let k = 0; k < 5000; k++) {
      const arm = randomArm(rnd);
      const { q, qd } = randomState(rnd);
      const qdd: Pair = [rnd() * 40 - 20, rnd() * 40 - 20];
      const theta = toVector(baseParameters(arm, [0, 0], noFriction));
      const tau = predictTorque({ L1: arm.L1, g: arm.g, coulombVelocity: HOST_COULOMB_VELOCITY }, theta, q, qd, qdd);
      const ref = new TwoLinkDynamics(arm).inverseDynamics(q, qd, qdd);
      for (let j = 0; j < 2; j++) worst = Math.max(worst, Math.abs(tau[j]! - ref[j]!) / (1 + Math.abs(ref[j]!)));
    }
    expect(worst).toBeLessThan(1e-12);
  });

  it('the rotor terms add N^2 Jrotor qdd on the diagonal (joint 1 lumped into J1, joint 2 its own column)', () => {
    const rnd = mulberry32(9);
    for (let k = 0; k < 500; k++) {
      const arm = randomArm(rnd);
      const { q, qd } = randomState(rnd);
      const qdd: Pair = [rnd() * 40 - 20, rnd() * 40 - 20];
      const rotor: Pair = [rnd() * 0.02, rnd() * 0.02];
      const theta = toVector(baseParameters(arm, rotor, noFriction));
      const tau = predictTorque({ L1: arm.L1, g: arm.g, coulombVelocity: HOST_COULOMB_VELOCITY }, theta, q, qd, qdd);
      const ref = new TwoLinkDynamics(arm).inverseDynamics(q, qd, qdd);
      expect(Math.abs(tau[0]! - (ref[0] + rotor[0] * qdd[0]))).toBeLessThan(1e-12 * (1 + Math.abs(ref[0])));
      expect(Math.abs(tau[1]! - (ref[1] + rotor[1] * qdd[1]))).toBeLessThan(1e-12 * (1 + Math.abs(ref[1])));
      // Forward dynamics with the rotor on M's diagonal (the plant's model) undoes it.
      const back = new TwoLinkDynamics(arm).forwardDynamics(q, qd, [tau[0]!, tau[1]!], [0, 0], rotor);
      expect(back[0]).toBeCloseTo(qdd[0], 8);
      expect(back[1]).toBeCloseTo(qdd[1], 8);
    }
  });

  it('the friction columns give the torque that overcomes externalTorques viscous and smoothed Coulomb friction', () => {
    const rnd = mulberry32(10);
    const zeroArm = { L1: 0.3, L2: 0.2, d1: 0, d2: 0, m1: 1, m2: 1, I1: 0, I2: 0, g: 9.81 };
    for (let k = 0; k < 500; k++) {
      const { q, qd } = randomState(rnd);
      if (k % 5 === 0) qd[k % 2] = (rnd() - 0.5) * 0.05; // near a reversal, where tanh is not yet a sign
      const viscous = [rnd(), rnd()];
      const coulomb = [rnd(), rnd()];
      const theta = toVector({
        J1: 0,
        J2: 0,
        mL: 0,
        mG: 0,
        Jm2: 0,
        fv1: viscous[0]!,
        fv2: viscous[1]!,
        fc1: coulomb[0]!,
        fc2: coulomb[1]!,
      });
      const tau = predictTorque({ L1: zeroArm.L1, g: zeroArm.g, coulombVelocity: HOST_COULOMB_VELOCITY }, theta, q, qd, [rnd(), rnd()]);
      const ext = externalTorques(zeroArm, q, qd, { viscous, coulomb, coulombVelocity: HOST_COULOMB_VELOCITY }, [0, 0]);
      expect(tau[0]).toBeCloseTo(-ext[0]!, 12);
      expect(tau[1]).toBeCloseTo(-ext[1]!, 12);
    }
  });

  it('has one column per base parameter, and the columns a joint cannot see are zero', () => {
    const rows = regressorRows({ L1: 0.3, g: 9.81, coulombVelocity: 0.01 }, [0.3, -0.7], [1.1, -0.4], [2, 3]);
    expect(rows).toHaveLength(2 * BASE_PARAMETERS.length);
    const col = (j: number, key: string): number => rows[j * BASE_PARAMETERS.length + BASE_PARAMETERS.findIndex((b) => b.key === key)]!;
    for (const k of ['J1', 'mG', 'fv1', 'fc1']) expect(col(1, k)).toBe(0);
    for (const k of ['Jm2', 'fv2', 'fc2']) expect(col(0, k)).toBe(0);
  });
});

describe('an arm rebuilt from base parameters', () => {
  it('has the same base parameters and passes the rig schema, on random arms', () => {
    const rnd = mulberry32(11);
    for (let k = 0; k < 300; k++) {
      const truth = randomArm(rnd);
      // The nominal guess: centres of mass elsewhere on the links.
      const nominal = { ...truth, d1: truth.L1 * (0.1 + 0.8 * rnd()), d2: truth.L2 * (0.1 + 0.8 * rnd()) };
      const rotor = [rnd() * 0.01, rnd() * 0.01];
      const p = baseParameters(truth, rotor, noFriction);
      const arm = realizeArm(nominal, p, rotor[0]!);
      const back = baseParameters(arm, rotor, noFriction);
      for (const b of BASE_PARAMETERS) expect(back[b.key]).toBeCloseTo(p[b.key], 9);
      expect(() => parseRigFile({ arm }, 'rebuilt')).not.toThrow();
    }
  });
});
