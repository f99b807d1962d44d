// The physics that must hold for the arm model, checked against independent derivations (the seeds'
// own Newton-Euler equations, seed 001's matrix form) and public reference values (RBDL, Drake).
import { describe, expect, it } from 'vitest';
import { computeEnergy, createActuatedArmData, createRigidArmModel } from '../src/model/actuated.js';
import { simulate } from '../src/model/arm.js';
import {
  energy,
  externalTorques,
  forwardDynamics,
  forwardDynamics1,
  gravityTerms,
  inverseDynamics,
  inverseDynamics1,
  massMatrix,
  velocityTerms,
} from '../src/model/dynamics.js';
import { fromDownwardVertical } from '../src/model/kinematics.js';
import type { TwoLinkParams } from '../src/model/types.js';
import { mulberry32, randomArm, randomState } from './helpers/random.js';

describe('inverse and forward dynamics', () => {
  it('ID(q, qd, FD(q, qd, tau)) = tau to 1e-12 on random arms and states', () => {
    const rnd = mulberry32(42);
    let worst = 0;
    for (let k = 0; k < 2000; k++) {
      const p = randomArm(rnd);
      const { q, qd } = randomState(rnd);
      const tau = [rnd() * 20 - 10, rnd() * 10 - 5];
      const qdd = forwardDynamics(p, q, qd, tau);
      const back = inverseDynamics(p, q, qd, qdd);
      const scale = 1 + Math.abs(tau[0]!) + Math.abs(tau[1]!);
      worst = Math.max(worst, Math.abs(back[0] - tau[0]!) / scale, Math.abs(back[1] - tau[1]!) / scale);
    }
    expect(worst).toBeLessThan(1e-12);
  });

  it('FD(ID(qdd)) = qdd with rotor inertia added to M', () => {
    const rnd = mulberry32(7);
    for (let k = 0; k < 200; k++) {
      const p = randomArm(rnd);
      const { q, qd } = randomState(rnd);
      const qdd = [rnd() * 10 - 5, rnd() * 10 - 5];
      const rotor = [rnd() * 0.01, rnd() * 0.01];
      const tau = inverseDynamics(p, q, qd, qdd);
      tau[0] += rotor[0]! * qdd[0]!;
      tau[1] += rotor[1]! * qdd[1]!;
      const back = forwardDynamics(p, q, qd, tau, [0, 0], rotor);
      expect(back[0]).toBeCloseTo(qdd[0]!, 9);
      expect(back[1]).toBeCloseTo(qdd[1]!, 9);
    }
  });

  it("tau = M qdd + V + G with M, V, G from seed 000's Newton-Euler equations, solved link 2 then link 1", () => {
    // Seed 000, "Two-link system": the reaction forces of each link from its centre-of-mass
    // acceleration, then the moment equations about each centre of mass.
    const seedNewtonEuler = (p: TwoLinkParams, q: number[], qd: number[], qdd: number[]): number[] => {
      const [a1, a2] = q as [number, number];
      const [w1, w2] = qd as [number, number];
      const [b1, b2] = qdd as [number, number];
      const { L1, d1, d2, m1, m2, I1, I2, g } = p;
      // centre of mass accelerations (derivatives of x1 = d1 cos a1, x2 = L1 cos a1 + d2 cos(a1+a2), ...)
      const x1dd = -d1 * Math.sin(a1) * b1 - d1 * Math.cos(a1) * w1 * w1;
      const y1dd = d1 * Math.cos(a1) * b1 - d1 * Math.sin(a1) * w1 * w1;
      const a12 = a1 + a2;
      const w12 = w1 + w2;
      const b12 = b1 + b2;
      const x2dd = -L1 * Math.sin(a1) * b1 - L1 * Math.cos(a1) * w1 * w1 - d2 * Math.sin(a12) * b12 - d2 * Math.cos(a12) * w12 * w12;
      const y2dd = L1 * Math.cos(a1) * b1 - L1 * Math.sin(a1) * w1 * w1 + d2 * Math.cos(a12) * b12 - d2 * Math.sin(a12) * w12 * w12;
      const Fr2x = m2 * x2dd;
      const Fr2y = m2 * y2dd + m2 * g;
      const T2 = I2 * b12 - d2 * Fr2x * Math.sin(a12) + d2 * Fr2y * Math.cos(a12);
      const Fr1x = m1 * x1dd + Fr2x;
      const Fr1y = m1 * y1dd + Fr2y + m1 * g;
      const T1 =
        I1 * b1 +
        T2 -
        d1 * Fr1x * Math.sin(a1) +
        d1 * Fr1y * Math.cos(a1) -
        (L1 - d1) * Fr2x * Math.sin(a1) +
        (L1 - d1) * Fr2y * Math.cos(a1);
      return [T1, T2];
    };
    const rnd = mulberry32(3);
    for (let k = 0; k < 500; k++) {
      const p = randomArm(rnd);
      const { q, qd } = randomState(rnd);
      const qdd = [rnd() * 20 - 10, rnd() * 20 - 10];
      const ref = seedNewtonEuler(p, q, qd, qdd);
      const M = massMatrix(p, q);
      const V = velocityTerms(p, q, qd);
      const G = gravityTerms(p, q);
      const composed = [M[0][0] * qdd[0]! + M[0][1] * qdd[1]! + V[0] + G[0], M[1][0] * qdd[0]! + M[1][1] * qdd[1]! + V[1] + G[1]];
      const id = inverseDynamics(p, q, qd, qdd);
      for (let i = 0; i < 2; i++) {
        expect(composed[i]).toBeCloseTo(ref[i]!, 10);
        expect(id[i]).toBeCloseTo(ref[i]!, 10);
      }
      // M is what multiplies qdd (zero velocity, zero gravity), V what multiplies the velocities.
      const p0 = { ...p, g: 0 };
      const col0 = seedNewtonEuler(p0, q, [0, 0], [1, 0]);
      const col1 = seedNewtonEuler(p0, q, [0, 0], [0, 1]);
      expect(M[0][0]).toBeCloseTo(col0[0]!, 10);
      expect(M[1][0]).toBeCloseTo(col0[1]!, 10);
      expect(M[0][1]).toBeCloseTo(col1[0]!, 10);
      expect(M[1][1]).toBeCloseTo(col1[1]!, 10);
      const v = seedNewtonEuler(p0, q, qd, [0, 0]);
      expect(V[0]).toBeCloseTo(v[0]!, 10);
      expect(V[1]).toBeCloseTo(v[1]!, 10);
    }
  });

  it('RBDL TestCalcDynamicDoubleChain: q = 0, tau = 0 gives qdd = [-5.886, 3.924]', () => {
    const p: TwoLinkParams = { L1: 1, L2: 1, d1: 1, d2: 1, m1: 1, m2: 1, I1: 1, I2: 1, g: 9.81 };
    const qdd = forwardDynamics(p, [0, 0], [0, 0], [0, 0]);
    expect(qdd[0]).toBeCloseTo(-5.886, 12);
    expect(qdd[1]).toBeCloseTo(3.924, 12);
  });

  it("Drake's acrobot benchmark: M, C(q,v)v, tau_g, damping and energy in the closed form of acrobot.h", () => {
    // Drake measures theta1 from the downward vertical; theta2 is relative, like alpha2.
    const m1 = 1,
      m2 = 1,
      l1 = 1,
      lc1 = 0.5,
      lc2 = 0.5,
      Ic1 = 0.083,
      Ic2 = 0.33,
      b = 0.1,
      g = 9.81;
    const p: TwoLinkParams = { L1: l1, L2: 1, d1: lc1, d2: lc2, m1, m2, I1: Ic1, I2: Ic2, g };
    const rnd = mulberry32(11);
    for (let k = 0; k < 200; k++) {
      const th = [rnd() * 6 - 3, rnd() * 6 - 3];
      const v = [rnd() * 8 - 4, rnd() * 8 - 4];
      const c2 = Math.cos(th[1]!);
      const s1 = Math.sin(th[0]!);
      const s2 = Math.sin(th[1]!);
      const s12 = Math.sin(th[0]! + th[1]!);
      const I1 = Ic1 + m1 * lc1 * lc1;
      const I2 = Ic2 + m2 * lc2 * lc2;
      const m2l1lc2 = m2 * l1 * lc2;
      const H = [
        [I1 + I2 + m2 * l1 * l1 + 2 * m2l1lc2 * c2, I2 + m2l1lc2 * c2],
        [I2 + m2l1lc2 * c2, I2],
      ];
      const Cv = [-2 * m2l1lc2 * s2 * v[1]! * v[0]! - m2l1lc2 * s2 * v[1]! * v[1]!, m2l1lc2 * s2 * v[0]! * v[0]!];
      const tauG = [-m1 * g * lc1 * s1 - m2 * g * (l1 * s1 + lc2 * s12), -m2 * g * lc2 * s12];
      const q = [th[0]! - Math.PI / 2, th[1]!];
      const M = massMatrix(p, q);
      const V = velocityTerms(p, q, v);
      const G = gravityTerms(p, q);
      for (let i = 0; i < 2; i++) {
        for (let j = 0; j < 2; j++) expect(M[i]![j]).toBeCloseTo(H[i]![j]!, 12);
        expect(V[i]).toBeCloseTo(Cv[i]!, 12);
        expect(G[i]).toBeCloseTo(-tauG[i]!, 12);
      }
      // Damping b on both joints through the external loads: H qdd + C v - tau_g + b v = tau.
      const tau = [0, rnd() * 2 - 1];
      const e = externalTorques(p, q, v, { viscous: [b, b] }, [0, 0]);
      const qdd = forwardDynamics(p, q, v, [tau[0]! + e[0]!, tau[1]! + e[1]!]);
      const lhs = [0, 1].map((i) => H[i]![0]! * qdd[0] + H[i]![1]! * qdd[1] + Cv[i]! - tauG[i]! + b * v[i]!);
      expect(lhs[0]).toBeCloseTo(tau[0]!, 10);
      expect(lhs[1]).toBeCloseTo(tau[1]!, 10);
      // Energy: 1/2 v'Hv and -m1 g lc1 cos th1 - m2 g (l1 cos th1 + lc2 cos th12).
      const ke = 0.5 * (H[0]![0]! * v[0]! ** 2 + 2 * H[0]![1]! * v[0]! * v[1]! + H[1]![1]! * v[1]! ** 2);
      const pe = -m1 * g * lc1 * Math.cos(th[0]!) - m2 * g * (l1 * Math.cos(th[0]!) + lc2 * Math.cos(th[0]! + th[1]!));
      const en = energy(p, q, v);
      expect(en.kinetic).toBeCloseTo(ke, 12);
      expect(en.potential).toBeCloseTo(pe, 12);
    }
  });

  it("one-link inverted pendulum: T = Io a'' + m g d cos a, from the seed's free-body equations", () => {
    const p = { L1: 0.8, d1: 0.3, m1: 1.5, I1: 0.05, g: 9.81 };
    const rnd = mulberry32(5);
    for (let k = 0; k < 100; k++) {
      const a = rnd() * 6 - 3;
      const w = rnd() * 4 - 2;
      const b = rnd() * 10 - 5;
      // Seed 000: Frx = m x'', Fry - m g = m y'', T + d Frx sin a - d Fry cos a = I a''.
      const xdd = -p.d1 * Math.sin(a) * b - p.d1 * Math.cos(a) * w * w;
      const ydd = p.d1 * Math.cos(a) * b - p.d1 * Math.sin(a) * w * w;
      const T = p.I1 * b - p.d1 * p.m1 * xdd * Math.sin(a) + p.d1 * (p.m1 * ydd + p.m1 * p.g) * Math.cos(a);
      expect(inverseDynamics1(p, a, b)).toBeCloseTo(T, 12);
      expect(forwardDynamics1(p, a, T)).toBeCloseTo(b, 10);
    }
    // Holding it horizontal costs m g d; upright costs nothing.
    expect(inverseDynamics1(p, 0, 0)).toBeCloseTo(1.5 * 9.81 * 0.3, 12);
    expect(inverseDynamics1(p, Math.PI / 2, 0)).toBeCloseTo(0, 12);
  });

  it('the hanging pendulum is the same model with negative angles: it rests at alpha1 = -90 deg', () => {
    const p: TwoLinkParams = { L1: 0.5, L2: 0.4, d1: 0.25, d2: 0.2, m1: 1, m2: 0.8, I1: 0.02, I2: 0.01, g: 9.81 };
    const qdd = forwardDynamics(p, [-Math.PI / 2, 0], [0, 0], [0, 0]);
    expect(Math.abs(qdd[0])).toBeLessThan(1e-12);
    expect(Math.abs(qdd[1])).toBeLessThan(1e-12);
    // Displaced to the right (alpha1 > -90 deg), gravity swings it back (negative acceleration).
    expect(forwardDynamics(p, [-Math.PI / 2 + 0.1, 0], [0, 0], [0, 0])[0]).toBeLessThan(0);
  });

  it('an endpoint force enters as J^T F: a force along link 2 needs no elbow torque', () => {
    const p: TwoLinkParams = { L1: 0.3, L2: 0.25, d1: 0.15, d2: 0.1, m1: 0.6, m2: 0.4, I1: 0.005, I2: 0.002, g: 9.81 };
    const q = [0.3, 0.7];
    const dir = [Math.cos(1.0), Math.sin(1.0)];
    const e = externalTorques(p, q, [0, 0], { endpointForce: [3 * dir[0]!, 3 * dir[1]!] }, [0, 0]);
    expect(e[1]).toBeCloseTo(0, 12);
    // Pushing the endpoint straight up by F costs joint 1 F * x_endpoint.
    const x = 0.3 * Math.cos(0.3) + 0.25 * Math.cos(1.0);
    const up = externalTorques(p, q, [0, 0], { endpointForce: [0, 2] }, [0, 0]);
    expect(up[0]).toBeCloseTo(2 * x, 12);
  });
});

describe('integration', () => {
  const p: TwoLinkParams = { L1: 1, L2: 0.5, d1: 0.5, d2: 0.25, m1: 1, m2: 1, I1: 1 / 12, I2: 0.25 / 12, g: 9.81 };
  const m = createRigidArmModel(p);
  const data = createActuatedArmData(m);
  // Seed 001's initial state, from its absolute angles (downward vertical) to joint angles.
  const q0 = fromDownwardVertical([Math.PI / 10, Math.PI / 3]);
  const qd0 = fromDownwardVertical([2 * Math.PI, -6 * Math.PI], true);

  const drift = (integrator: 'rk4' | 'semi-implicit' | 'euler', duration: number): number => {
    const e0 = computeEnergy(m, data, q0, qd0).total;
    let worst = 0;
    simulate(m, {
      q0,
      qd0,
      duration,
      dt: 1e-4,
      integrator,
      every: 100,
      onSample: (_t, q, qd) => {
        worst = Math.max(worst, Math.abs(computeEnergy(m, data, q, qd).total - e0));
      },
    });
    return worst / Math.abs(e0);
  };

  it('RK4 conserves energy without torque and friction (seed 001 double pendulum, 20 s at 1e-4)', () => {
    const rk4 = drift('rk4', 20);
    expect(rk4).toBeLessThan(1e-7);
  });

  it("explicit Euler (seed 001's integrator) drifts by orders of magnitude more than RK4; semi-implicit stays bounded", () => {
    const rk4 = drift('rk4', 5);
    const euler = drift('euler', 5);
    const semi = drift('semi-implicit', 5);
    expect(euler).toBeGreaterThan(1000 * rk4);
    expect(semi).toBeLessThan(euler);
    expect(semi).toBeLessThan(0.05);
  });

  it("matches seed 001's printed equations of motion (with m2 l1 g sin th1, not the code's m2 g l2 sin th1)", () => {
    // Seed 001 in its own variables: absolute angles from the downward vertical, thin rods.
    const l1 = 1,
      l2 = 0.5,
      m1 = 1,
      m2 = 1,
      g = 9.81;
    const seedAccel = (th: number[], om: number[], buggyGravity: boolean): number[] => {
      const dth = th[0]! - th[1]!;
      const M = [
        [(m1 * l1 ** 2) / 3 + m2 * l1 ** 2, (m2 * l1 * l2 * Math.cos(dth)) / 2],
        [(m2 * l1 * l2 * Math.cos(dth)) / 2, (m2 * l2 ** 2) / 3],
      ];
      const C = [(-m2 * l1 * l2 * Math.sin(dth) * om[1]! ** 2) / 2, (m2 * l1 * l2 * Math.sin(dth) * om[0]! ** 2) / 2];
      const G = [
        (-m1 * g * l1 * Math.sin(th[0]!)) / 2 - m2 * g * (buggyGravity ? l2 : l1) * Math.sin(th[0]!),
        (-m2 * g * l2 * Math.sin(th[1]!)) / 2,
      ];
      const r = [C[0]! + G[0]!, C[1]! + G[1]!];
      const det = M[0]![0]! * M[1]![1]! - M[0]![1]! * M[1]![0]!;
      return [(M[1]![1]! * r[0]! - M[0]![1]! * r[1]!) / det, (M[0]![0]! * r[1]! - M[1]![0]! * r[0]!) / det];
    };
    const rnd = mulberry32(9);
    let buggyWorst = 0;
    for (let k = 0; k < 200; k++) {
      const th = [rnd() * 6 - 3, rnd() * 6 - 3];
      const om = [rnd() * 10 - 5, rnd() * 10 - 5];
      const ref = seedAccel(th, om, false);
      const q = fromDownwardVertical(th);
      const qd = fromDownwardVertical(om, true);
      const qdd = forwardDynamics(p, q, qd, [0, 0]);
      // seed 001's angles are absolute: th1'' = a1'', th2'' = a1'' + a2''
      expect(qdd[0]).toBeCloseTo(ref[0]!, 9);
      expect(qdd[0] + qdd[1]).toBeCloseTo(ref[1]!, 9);
      const bug = seedAccel(th, om, true);
      buggyWorst = Math.max(buggyWorst, Math.abs(bug[0]! - ref[0]!));
    }
    // The code's gravity term is not the physics: it differs by whole rad/s^2.
    expect(buggyWorst).toBeGreaterThan(1);
  });
});
