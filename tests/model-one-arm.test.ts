// One arm model (issue 22, item 1): a user's controller sees the model the built-in controller uses
// (its context's model, in the test's thread and in the controller's own thread), and the mock's
// plant is that same model plus what a real arm has beyond it, so with nominal values they agree.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { loadRig, type Rig } from '../src/config/load.js';
import { Controller } from '../src/control/controller.js';
import { controllerModel } from '../src/control/controller-model.js';
import { controllerContext } from '../src/control/user-controller.js';
import {
  computeForwardDynamics,
  computeForwardDynamicsUnderDuty,
  computeFriction,
  computeGravity,
  computeInverseDynamics,
  computeMassMatrix,
  computeVelocityTerms,
  createActuatedArmData,
  NOMINAL_COULOMB_VELOCITY,
} from '../src/model/actuated.js';
import { gravityTerms, massMatrix, velocityTerms } from '../src/model/dynamics.js';
import type { TwoLinkParams } from '../src/model/types.js';
import { Plant } from '../src/mock/plant.js';
import { ControllerThread } from '../src/run/controller-thread.js';

const mock = loadRig('rigs/mock-arm.json');
const onelink = { ...mock, joints: 1 as const, arm: { L1: 0.3, d1: 0.15, m1: 0.5, I1: 0.004, g: 9.81 } };

const angle = fc.double({ min: -Math.PI, max: Math.PI, noNaN: true });
const speed = fc.double({ min: -8, max: 8, noNaN: true });
const accel = fc.double({ min: -50, max: 50, noNaN: true });
const duty = fc.double({ min: -1, max: 1, noNaN: true });
const pair = <T>(a: fc.Arbitrary<T>): fc.Arbitrary<T[]> => fc.tuple(a, a).map((t) => [...t]);
/** Nominal friction the rig file could give (the mock arm's file gives none). */
const friction = fc.record({
  viscous: pair(fc.double({ min: 0, max: 0.05, noNaN: true })),
  coulomb: pair(fc.double({ min: 0, max: 0.1, noNaN: true })),
});

function close(a: readonly number[], b: readonly number[], tol: number): void {
  expect(a.length).toBe(b.length);
  a.forEach((x, i) => expect(Math.abs(x - b[i]!)).toBeLessThanOrEqual(tol * (1 + Math.abs(b[i]!))));
}

describe("a user's ctx.model is the built-in controller's model", () => {
  it("on rigs/mock-arm.json joint 2's inertia includes the rotor: I2 + m2 d2^2 + N2^2 J_r2 = 0.0085 kg m^2", () => {
    const ctx = controllerContext(mock, 500);
    expect(ctx.model.massMatrix([0, 0])[1]![1]).toBeCloseTo(0.0025 + 0.35 * 0.1 ** 2 + 50 ** 2 * 1e-6, 12);
    expect(ctx.model.rotorInertia).toEqual([100 ** 2 * 1e-6, 50 ** 2 * 1e-6]);
    // The rigid arm is there only when asked for, and it is seed 000's M.
    expect(ctx.model.rigidView().massMatrix([0, 0])[1]![1]).toBeCloseTo(0.006, 12);
    expect(controllerModel(mock, { rigid: true }).rigid).toBe(true);
  });

  for (const [name, base] of [
    ['two links', mock],
    ['one link', onelink],
  ] as [string, Rig][]) {
    it(`${name}: M, C qd, G, friction, inverse and forward dynamics equal the controller's at random states and frictions`, () => {
      fc.assert(
        fc.property(friction, pair(angle), pair(speed), pair(accel), (f, q2, qd2, qdd2) => {
          const n = base.joints;
          const rig: Rig = { ...base, friction: { viscous: f.viscous.slice(0, n), coulomb: f.coulomb.slice(0, n) } };
          const [q, qd, qdd] = [q2.slice(0, n), qd2.slice(0, n), qdd2.slice(0, n)];
          const mine = controllerContext(rig, 500).model;
          const builtin = new Controller(rig, 'desired').model;
          const d = createActuatedArmData(builtin);
          const M = computeMassMatrix(builtin, d, q);
          mine.massMatrix(q).forEach((row, i) => close(row, M[i]!, 1e-12));
          close(mine.coriolis(q, qd), computeVelocityTerms(builtin, d, q, qd), 1e-12);
          close(mine.gravity(q), computeGravity(builtin, d, q), 1e-12);
          close(mine.friction(qd), computeFriction(builtin, d, qd), 1e-12);
          close(mine.inverseDynamics(q, qd, qdd), computeInverseDynamics(builtin, d, q, qd, qdd, new Array<number>(n)), 1e-12);
          const tau = qdd.map((x) => x / 10);
          close(mine.forwardDynamics(q, qd, tau), computeForwardDynamics(builtin, d, q, qd, tau, new Array<number>(n)), 1e-12);
        }),
        { numRuns: 200, seed: 22 },
      );
    });
  }

  it("in the controller's own thread (built there from the rig as plain data) M_a and the inverse dynamics are the controller's", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'twolink-one-arm-'));
    const file = join(dir, 'echo-model.js');
    // update returns two numbers a tick: on even ticks M11 and M22 at q, on odd ticks the inverse
    // dynamics at the plan's (q, qd, qdd).
    writeFileSync(
      file,
      `export default (ctx) => {
         let k = 0;
         return { update: (s) => {
           if (k++ % 2 === 1) return ctx.model.inverseDynamics(s.qDesired, s.qdDesired, s.qddDesired);
           const M = ctx.model.massMatrix(s.q);
           return [M[0][0], M[1][1]];
         } };
       };`,
    );
    const rig: Rig = { ...mock, friction: { viscous: [0.01, 0.02], coulomb: [0.03, 0.04] } };
    const thread = await ControllerThread.start(file, rig, 500, { deadlineMs: 60_000, loadDeadlineMs: 60_000 });
    try {
      const builtin = new Controller(rig, 'desired').model;
      const d = createActuatedArmData(builtin);
      const rnd = fc.sample(fc.tuple(pair(angle), pair(speed), pair(accel)), { numRuns: 20, seed: 7 });
      for (const [q, qd, qdd] of rnd) {
        const out = [0, 0];
        const sample = { t: 0, q, qd, qDesired: q, qdDesired: qd, qddDesired: qdd };
        expect(thread.step(sample, 0.002, out)).toEqual({ ok: true });
        const M = computeMassMatrix(builtin, d, q);
        close(out, [M[0]![0]!, M[1]![1]!], 1e-12);
        expect(thread.step(sample, 0.002, out)).toEqual({ ok: true });
        close(out, computeInverseDynamics(builtin, d, q, qd, qdd, [0, 0]), 1e-12);
      }
    } finally {
      await thread.close();
    }
  });
});

describe("the mock's plant is the actuated model plus what a real arm has beyond it", () => {
  /** A plant whose true values are the rig's nominal ones: no payload, no stops, no noise, wired as the file says. */
  function nominalPlant(rig: Rig): Plant {
    return new Plant(
      {
        ...rig.plant!,
        arm: rig.arm,
        motors: rig.motors,
        viscous: rig.friction.viscous,
        coulomb: rig.friction.coulomb,
        coulombVelocity: NOMINAL_COULOMB_VELOCITY,
        supplyV: rig.supplyV,
        payloadKg: 0,
        noiseCounts: 0,
        stops: undefined,
      },
      rig.encoders,
    );
  }

  /** The nominal plant at the state (q, qd) [rad, rad/s] under duty u. */
  function nominalPlantAt(rig: Rig, q: number[], qd: number[], u: number[]): Plant {
    const plant = nominalPlant(rig);
    plant.q.splice(0, 2, ...q);
    plant.qd.splice(0, 2, ...qd);
    plant.setDuty(u);
    return plant;
  }

  it("with nominal values, its accelerations are the nominal model's under the same duty at random states", () => {
    fc.assert(
      fc.property(friction, pair(angle), pair(speed), pair(duty), (f, q, qd, u) => {
        const rig: Rig = { ...mock, friction: f };
        const plant = nominalPlantAt(rig, q, qd, u);
        const nominal = new Controller(rig, 'desired').model;
        close(plant.accelerations(), computeForwardDynamicsUnderDuty(nominal, createActuatedArmData(nominal), q, qd, u, [0, 0]), 1e-9);
      }),
      { numRuns: 300, seed: 2201 },
    );
  });

  it("and both are seed 000's rigid arm with the motor and friction written out: (M + diag(N^2 J_r)) qdd = tm - f - V - G", () => {
    fc.assert(
      fc.property(friction, pair(angle), pair(speed), pair(duty), (f, q, qd, u) => {
        const rig: Rig = { ...mock, friction: f };
        const plant = nominalPlantAt(rig, q, qd, u);
        const p = rig.arm as TwoLinkParams;
        const M = massMatrix(p, q);
        const V = velocityTerms(p, q, qd);
        const G = gravityTerms(p, q);
        const rhs = [0, 1].map((i) => {
          const m = rig.motors[i]!;
          const amps = (u[i]! * rig.supplyV - m.ke * m.gear * qd[i]!) / m.R;
          const tm = m.efficiency * m.gear * m.kt * amps;
          const fr = f.viscous[i]! * qd[i]! + f.coulomb[i]! * Math.tanh(qd[i]! / NOMINAL_COULOMB_VELOCITY);
          return tm - fr - V[i]! - G[i]!;
        });
        const a = M[0][0] + rig.motors[0]!.gear ** 2 * rig.motors[0]!.rotorInertia;
        const b = M[0][1];
        const c = M[1][1] + rig.motors[1]!.gear ** 2 * rig.motors[1]!.rotorInertia;
        const det = a * c - b * b;
        const expected = [(c * rhs[0]! - b * rhs[1]!) / det, (a * rhs[1]! - b * rhs[0]!) / det];
        close(plant.accelerations(), expected, 1e-9);
      }),
      { numRuns: 300, seed: 2202 },
    );
  });

  it("a payload, a dead motor and a sagging supply are the plant's own: each moves it away from the nominal model", () => {
    const q = [-0.7, 0.9];
    const qd = [0.5, -0.3];
    const u = [0.4, -0.2];
    const nominal = new Controller(mock, 'desired').model;
    const expected = computeForwardDynamicsUnderDuty(nominal, createActuatedArmData(nominal), q, qd, u, [0, 0]);
    const variants: ((p: Plant) => void)[] = [
      (p) => p.setPayload(0.2),
      (p) => (p.injected.motorDead[1] = true),
      (p) => (p.injected.supplyScale = 0.7),
    ];
    for (const vary of variants) {
      const plant = nominalPlant(mock);
      plant.q.splice(0, 2, ...q);
      plant.qd.splice(0, 2, ...qd);
      plant.setDuty(u);
      close(plant.accelerations(), expected, 1e-9);
      vary(plant);
      const a = plant.accelerations();
      expect(Math.max(Math.abs(a[0]! - expected[0]!), Math.abs(a[1]! - expected[1]!))).toBeGreaterThan(1e-3);
    }
  });
});
