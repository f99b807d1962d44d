// The actuated arm (src/model/actuated.ts): the physics its terms must satisfy with one another and
// with the bare arm's dynamics, and the rule that src/model imports nothing outside src/model.
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  computeActuatorTorques,
  computeCoriolisMatrix,
  computeCoriolisTransposeVelocity,
  computeForwardDynamics,
  computeForwardDynamicsUnderDuty,
  computeFriction,
  computeGravity,
  computeInverseDynamics,
  computeMassMatrix,
  computeMomentum,
  computeVelocityTerms,
  createActuatedArmData,
  createActuatedArmModel,
  maxMassMatrixDiagonal,
  motorDamping,
  motorDuty,
  motorTorque,
  motorTorqueLimit,
  NOMINAL_COULOMB_VELOCITY,
  type ActuatedArmModel,
  type ActuatedArmSpec,
} from '../src/model/actuated.js';
import { gravityTerms, inverseDynamics, massMatrix, velocityTerms } from '../src/model/dynamics.js';
import type { MotorParams } from '../src/model/motor.js';
import type { TwoLinkParams } from '../src/model/types.js';
import { modelBaseParameters, predictTorque, regressorConstants, toVector } from '../src/identify/regressor.js';
import { mulberry32, randomArm, randomState } from './helpers/random.js';

function randomMotor(rnd: () => number): MotorParams {
  return {
    kt: 0.005 + 0.02 * rnd(),
    ke: 0.005 + 0.02 * rnd(),
    R: 0.5 + 3 * rnd(),
    gear: 10 + 200 * rnd(),
    efficiency: 0.5 + 0.5 * rnd(),
    rotorInertia: 1e-6 * rnd(),
  };
}

function randomSpec(rnd: () => number): ActuatedArmSpec {
  return {
    arm: randomArm(rnd),
    motors: [randomMotor(rnd), randomMotor(rnd)],
    friction: { viscous: [0.05 * rnd(), 0.05 * rnd()], coulomb: [0.1 * rnd(), 0.1 * rnd()] },
    supplyV: 6 + 18 * rnd(),
  };
}

const oneLink: ActuatedArmSpec = {
  arm: { L1: 0.3, d1: 0.15, m1: 0.5, I1: 0.004, g: 9.81 },
  motors: [{ kt: 0.01, ke: 0.01, R: 2, gear: 100, efficiency: 0.8, rotorInertia: 1e-6 }],
  friction: { viscous: [0.02], coulomb: [0.05] },
  supplyV: 12,
};

/** Random models: 40 two-link ones and the one-link arm. */
function models(seed: number): { model: ActuatedArmModel; rnd: () => number }[] {
  const rnd = mulberry32(seed);
  return [...Array.from({ length: 40 }, () => createActuatedArmModel(randomSpec(rnd))), createActuatedArmModel(oneLink)].map((model) => ({
    model,
    rnd,
  }));
}

function stateOf(model: ActuatedArmModel, rnd: () => number): { q: number[]; qd: number[]; qdd: number[] } {
  const s = randomState(rnd);
  const n = model.joints;
  return { q: s.q.slice(0, n), qd: s.qd.slice(0, n), qdd: [rnd() * 20 - 10, rnd() * 20 - 10].slice(0, n) };
}

describe('the actuated arm model: mass and Coriolis terms', () => {
  it('M_a is the bare arm M plus N^2 J_rotor on the diagonal, symmetric and positive definite', () => {
    const rnd = mulberry32(1);
    for (let k = 0; k < 200; k++) {
      const spec = randomSpec(rnd);
      const model = createActuatedArmModel(spec);
      const data = createActuatedArmData(model);
      const { q } = randomState(rnd);
      const M = computeMassMatrix(model, data, q);
      const bare = massMatrix(randomArmOf(spec), q);
      const rotor = spec.motors.map((m) => m.gear * m.gear * m.rotorInertia);
      expect(M[0]![0]).toBeCloseTo(bare[0][0] + rotor[0]!, 12);
      expect(M[1]![1]).toBeCloseTo(bare[1][1] + rotor[1]!, 12);
      expect(M[0]![1]).toBe(M[1]![0]);
      expect(M[0]![1]).toBeCloseTo(bare[0][1], 12);
      expect(M[0]![0]).toBeGreaterThan(0);
      expect(M[0]![0]! * M[1]![1]! - M[0]![1]! ** 2).toBeGreaterThan(0);
    }
  });

  it('V = C qd, and dM_a/dt = C + C^T (so dM/dt - 2C is skew-symmetric), by central differences', () => {
    const rnd = mulberry32(2);
    for (let k = 0; k < 100; k++) {
      const spec = randomSpec(rnd);
      const model = createActuatedArmModel(spec);
      const data = createActuatedArmData(model);
      const { q, qd } = randomState(rnd);
      const C = computeCoriolisMatrix(model, data, q, qd).map((r) => r.slice());
      const V = computeVelocityTerms(model, data, q, qd);
      for (let i = 0; i < 2; i++) expect(C[i]![0]! * qd[0] + C[i]![1]! * qd[1]).toBeCloseTo(V[i]!, 10);
      expect(V).toEqual(velocityTerms(randomArmOf(spec), q, qd));
      const h = 1e-6;
      const Mp = computeMassMatrix(model, data, [q[0] + h * qd[0], q[1] + h * qd[1]]).map((r) => r.slice());
      const Mm = computeMassMatrix(model, data, [q[0] - h * qd[0], q[1] - h * qd[1]]).map((r) => r.slice());
      for (let i = 0; i < 2; i++) {
        for (let j = 0; j < 2; j++) {
          const mdot = (Mp[i]![j]! - Mm[i]![j]!) / (2 * h);
          expect(Math.abs(mdot - (C[i]![j]! + C[j]![i]!))).toBeLessThan(1e-6 * (1 + Math.abs(mdot)));
        }
      }
    }
  });

  it("C^T qd is C's transpose times qd, and carries the momentum: dp/dt = tau + C^T qd - G - f along a simulated motion", () => {
    for (const { model, rnd } of models(3)) {
      const data = createActuatedArmData(model);
      const n = model.joints;
      const { q, qd } = stateOf(model, rnd);
      const C = computeCoriolisMatrix(model, data, q, qd).map((r) => r.slice());
      const ctq = computeCoriolisTransposeVelocity(model, data, q, qd).slice();
      for (let i = 0; i < n; i++) {
        let s = 0;
        for (let j = 0; j < n; j++) s += C[j]![i]! * qd[j]!;
        expect(ctq[i]).toBeCloseTo(s, 10);
      }
      // Under a constant duty: p at t +- h along the motion's Taylor expansion with the model's qdd
      // (the central difference is accurate to h^2).
      const duty = Array.from({ length: n }, () => rnd() - 0.5);
      const qdd = computeForwardDynamicsUnderDuty(model, data, q, qd, duty).slice();
      const h = 1e-5;
      const at = (s: number): number[] =>
        computeMomentum(
          model,
          data,
          q.map((v, i) => v + s * qd[i]! + 0.5 * s * s * qdd[i]!),
          qd.map((v, i) => v + s * qdd[i]!),
        ).slice();
      const pp = at(h);
      const pm = at(-h);
      const tau = computeActuatorTorques(model, data, qd, duty).slice();
      const G = computeGravity(model, data, q);
      for (let i = 0; i < n; i++) {
        const dp = (pp[i]! - pm[i]!) / (2 * h);
        expect(Math.abs(dp - (tau[i]! + ctq[i]! - G[i]!))).toBeLessThan(1e-5 * (1 + Math.abs(dp)));
      }
    }
  });
});

describe('the actuated arm model: dynamics', () => {
  it('ID(q, qd, FD(q, qd, tau)) = tau to 1e-12, rotors and friction included, one and two links', () => {
    let worst = 0;
    for (const { model, rnd } of models(5)) {
      const data = createActuatedArmData(model);
      for (let k = 0; k < 50; k++) {
        const { q, qd } = stateOf(model, rnd);
        const tau = [rnd() * 20 - 10, rnd() * 10 - 5].slice(0, model.joints);
        const qdd = computeForwardDynamics(model, data, q, qd, tau).slice();
        const back = computeInverseDynamics(model, data, q, qd, qdd);
        for (let i = 0; i < model.joints; i++) worst = Math.max(worst, Math.abs(back[i]! - tau[i]!) / (1 + Math.abs(tau[i]!)));
      }
    }
    expect(worst).toBeLessThan(1e-12);
  });

  it('inverse dynamics = bare-arm ID + N^2 J_rotor qdd + friction; gravity is the bare arm G', () => {
    const rnd = mulberry32(6);
    for (let k = 0; k < 100; k++) {
      const spec = randomSpec(rnd);
      const model = createActuatedArmModel(spec);
      const data = createActuatedArmData(model);
      const { q, qd } = randomState(rnd);
      const qdd = [rnd() * 10 - 5, rnd() * 10 - 5];
      const tau = computeInverseDynamics(model, data, q, qd, qdd).slice();
      const bare = inverseDynamics(randomArmOf(spec), q, qd, qdd);
      for (let i = 0; i < 2; i++) {
        const m = spec.motors[i]!;
        const f = spec.friction!.viscous[i]! * qd[i]! + spec.friction!.coulomb[i]! * Math.tanh(qd[i]! / NOMINAL_COULOMB_VELOCITY);
        expect(tau[i]).toBeCloseTo(bare[i]! + m.gear * m.gear * m.rotorInertia * qdd[i]! + f, 10);
      }
      expect(computeGravity(model, data, q)).toEqual(gravityTerms(randomArmOf(spec), q));
    }
  });

  it('the forward dynamics under a duty is the forward dynamics under the motor torque the duty gives (plus any extra torque)', () => {
    for (const { model, rnd } of models(7)) {
      const data = createActuatedArmData(model);
      const { q, qd } = stateOf(model, rnd);
      const duty = [rnd() * 2 - 1, rnd() * 2 - 1].slice(0, model.joints);
      const tm = duty.map((d, i) => motorTorque(model, i, d, qd[i]!));
      const a = computeForwardDynamicsUnderDuty(model, data, q, qd, duty).slice();
      const b = computeForwardDynamics(model, data, q, qd, tm).slice();
      for (let i = 0; i < model.joints; i++) expect(a[i]).toBeCloseTo(b[i]!, 10);
      // An extra (unmodelled) torque adds to the motors'.
      const extra = [rnd() - 0.5, rnd() - 0.5].slice(0, model.joints);
      const c = computeForwardDynamicsUnderDuty(model, data, q, qd, duty, [0, 0], extra).slice();
      const d = computeForwardDynamics(
        model,
        data,
        q,
        qd,
        tm.map((t, i) => t + extra[i]!),
      );
      for (let i = 0; i < model.joints; i++) expect(c[i]).toBeCloseTo(d[i]!, 10);
    }
  });
});

describe('the actuated arm model: motors, friction, momentum', () => {
  it('motor duty and torque are inverses; back-EMF damps the speed; the limit is the torque at full duty', () => {
    for (const { model, rnd } of models(8)) {
      for (let i = 0; i < model.joints; i++) {
        const qd = rnd() * 20 - 10;
        const tau = rnd() * 4 - 2;
        expect(motorTorque(model, i, motorDuty(model, i, tau, qd), qd)).toBeCloseTo(tau, 10);
        // At zero duty a joint turning forwards is braked (the motor is a generator into the bridge).
        expect(Math.sign(motorTorque(model, i, 0, qd))).toBe(-Math.sign(qd));
        // The back-EMF damping is the slope of the torque against the speed at any duty.
        const d = rnd() * 2 - 1;
        expect(motorTorque(model, i, d, qd + 1) - motorTorque(model, i, d, qd)).toBeCloseTo(-motorDamping(model, i), 10);
        expect(motorTorqueLimit(model, i, 0.9, qd, 1)).toBe(motorTorque(model, i, 0.9, qd));
        expect(motorTorqueLimit(model, i, 0.9, qd, -1)).toBe(-motorTorque(model, i, -0.9, qd));
      }
    }
  });

  it('friction is odd in the speed, smoothed by tanh(qd / v_c), a pure sign when v_c = 0', () => {
    const smooth = createActuatedArmModel(oneLink);
    const sharp = createActuatedArmModel({ ...oneLink, coulombVelocity: 0 });
    const ds = createActuatedArmData(smooth);
    const dh = createActuatedArmData(sharp);
    for (const w of [-3, -0.02, -0.001, 0.001, 0.02, 3]) {
      const f = computeFriction(smooth, ds, [w])[0]!;
      expect(computeFriction(smooth, ds, [-w])[0]).toBeCloseTo(-f, 14);
      expect(f).toBeCloseTo(0.02 * w + 0.05 * Math.tanh(w / NOMINAL_COULOMB_VELOCITY), 14);
      expect(computeFriction(sharp, dh, [w])[0]).toBeCloseTo(0.02 * w + 0.05 * Math.sign(w), 14);
    }
    expect(computeFriction(smooth, ds, [0])[0]).toBe(0);
  });

  it("the momentum is M_a qd, and the largest diagonal over all poses is M_a's at a straight elbow", () => {
    for (const { model, rnd } of models(9)) {
      const data = createActuatedArmData(model);
      const { q, qd } = stateOf(model, rnd);
      const M = computeMassMatrix(model, data, q).map((r) => r.slice());
      const p = computeMomentum(model, data, q, qd);
      for (let i = 0; i < model.joints; i++) {
        let s = 0;
        for (let j = 0; j < model.joints; j++) s += M[i]![j]! * qd[j]!;
        expect(p[i]).toBeCloseTo(s, 10);
      }
      const peak = maxMassMatrixDiagonal(model);
      let seen = 0;
      for (let k = 0; k <= 360; k++) {
        const Mk = computeMassMatrix(model, data, [0, (k * Math.PI) / 180].slice(0, model.joints));
        for (let i = 0; i < model.joints; i++) expect(Mk[i]![i]).toBeLessThanOrEqual(peak[i]! * (1 + 1e-12));
        seen = Math.max(seen, Mk[0]![0]!);
      }
      expect(seen).toBeCloseTo(peak[0]!, 12);
    }
  });
});

describe('the actuated arm model: its users, its data, its errors', () => {
  it("identification's Y theta, with the model's own base parameters, is the model's inverse dynamics", () => {
    const rnd = mulberry32(10);
    for (let k = 0; k < 100; k++) {
      const model = createActuatedArmModel(randomSpec(rnd));
      const data = createActuatedArmData(model);
      const { q, qd } = randomState(rnd);
      const qdd = [rnd() * 10 - 5, rnd() * 10 - 5];
      const y = predictTorque(regressorConstants(model), toVector(modelBaseParameters(model)), q, qd, qdd);
      const tau = computeInverseDynamics(model, data, q, qd, qdd);
      expect(y[0]).toBeCloseTo(tau[0]!, 10);
      expect(y[1]).toBeCloseTo(tau[1]!, 10);
    }
    expect(() => modelBaseParameters(createActuatedArmModel(oneLink))).toThrow(/two-link/);
  });

  it('writes into its data (no allocation per call) and keeps a snapshot of the spec', () => {
    const spec = randomSpec(mulberry32(11));
    const model = createActuatedArmModel(spec);
    const data = createActuatedArmData(model);
    const q = [0.3, -0.4];
    const qd = [1, 2];
    expect(computeMassMatrix(model, data, q)).toBe(data.M);
    expect(computeGravity(model, data, q)).toBe(data.G);
    expect(computeInverseDynamics(model, data, q, qd, [0, 0])).toBe(data.tau);
    expect(computeForwardDynamicsUnderDuty(model, data, q, qd, [0.1, 0.1])).toBe(data.qdd);
    const before = computeInverseDynamics(model, data, q, qd, [1, 1]).slice();
    (spec.arm as { m1: number }).m1 *= 2;
    (spec.friction!.viscous as number[])[0] = 5;
    (spec.motors[0] as { R: number }).R = 100;
    expect(computeInverseDynamics(model, data, q, qd, [1, 1])).toEqual(before);
  });

  it('refuses a non-finite or missing value with a RangeError that names the field', () => {
    expect(() => createActuatedArmModel({ ...oneLink, arm: { ...oneLink.arm, m1: NaN } })).toThrow(
      /arm\.m1 must be a finite number \(got NaN\)/,
    );
    expect(() => createActuatedArmModel({ ...oneLink, motors: [{ ...oneLink.motors[0]!, R: Infinity }] })).toThrow(/motors\[0\]\.R/);
    expect(() => createActuatedArmModel({ ...oneLink, motors: [] })).toThrow(/needs 1 motors/);
    expect(() => createActuatedArmModel({ ...oneLink, supplyV: 0 })).toThrow(/supplyV/);
    expect(() => createActuatedArmModel({ ...oneLink, friction: { viscous: [], coulomb: [0] } })).toThrow(
      /friction\.viscous needs 1 entries/,
    );
    expect(() => createActuatedArmModel({ ...oneLink, coulombVelocity: -1 })).toThrow(/coulombVelocity/);
  });
});

describe('src/model', () => {
  it('imports nothing outside src/model (no node:*, no other folder, no package)', () => {
    const dir = new URL('../src/model/', import.meta.url);
    const bad: string[] = [];
    for (const f of readdirSync(dir).filter((x) => x.endsWith('.ts'))) {
      const text = readFileSync(new URL(f, dir), 'utf8');
      for (const m of text.matchAll(/\b(?:import|export)\b[^'";]*?from\s*['"]([^'"]+)['"]/g)) {
        if (!/^\.\/[^/]+$/.test(m[1]!)) bad.push(`${f}: ${m[1]}`);
      }
      for (const m of text.matchAll(/\bimport\s*\(\s*['"]([^'"]+)['"]/g)) bad.push(`${f}: dynamic ${m[1]}`);
    }
    expect(bad).toEqual([]);
  });
});

function randomArmOf(spec: ActuatedArmSpec): TwoLinkParams {
  return spec.arm as TwoLinkParams;
}
