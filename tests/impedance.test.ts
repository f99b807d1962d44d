// Impedance mode (issue 23) on the mock in virtual time: the spring's static deflection under a
// pushed endpoint (force=FX,FY@T+D), its settling against the damping ratio, no limit cycle at the
// stiffest accepted, a live stiffness change, the observer's force estimate, each safety limit, and a
// controller-free e-stop.
import { describe, expect, it } from 'vitest';
import { loadRig, type Rig } from '../src/config/load.js';
import { virtualRun, type VirtualRun } from '../src/run/virtual.js';
import { formatInjection, parseInjection } from '../src/mock/injections.js';
import { F } from '../src/telemetry/tick.js';
import { endpoint, jacobian } from '../src/model/kinematics.js';
import { computeInverseDynamics, createActuatedArmData, createActuatedArmModel, motorDamping } from '../src/model/actuated.js';
import { designDamping, endpointInertia, forceFromTorque, passiveStiffnessBound, passivityTimeS } from '../src/control/impedance-math.js';
import {
  checkImpedance,
  ImpedanceError,
  ImpedanceLaw,
  loopPassivity,
  singularScale,
  type ImpedanceSettings,
} from '../src/control/impedance.js';
import type { LawSample } from '../src/control/loop.js';
import type { PathSpec } from '../src/model/builtins.js';
import type { TwoLinkParams } from '../src/model/types.js';
import { hangGuardMs } from './helpers/hang-guard.js';

const D = Math.PI / 180;
const POSE = [-60 * D, 90 * D];
const FX = 2;

/** The mock at 1 kHz with no USB adapter in the path: answers 1 sample late, T/2 + t_d = 1.5 ms (the default mock's 16U2 at 500 Hz: 7 ms). */
function fastRig(o: { friction?: boolean } = {}): Rig {
  const rig = loadRig('rigs/mock-arm.json');
  rig.plant!.adapter = { kind: 'none', latencyMs: 1 };
  rig.control.rateHz = 1000;
  if (o.friction === false) {
    rig.plant!.viscous = [0, 0];
    rig.plant!.coulomb = [0, 0];
  }
  return rig;
}

const hold = (seconds: number, q = POSE): PathSpec => ({
  name: 'hold',
  description: 'hold a pose',
  start: { q },
  steps: [{ kind: 'hold', duration: seconds }],
});
const endpointX = (rig: Rig, row: Float64Array): number[] => endpoint(rig.arm as TwoLinkParams, [row[F.q0]!, row[F.q1]!]);
const rowAt = (r: VirtualRun, t: number): Float64Array => r.rows.find((row) => row[F.t]! >= t)!;
const mean = (a: number[]): number => a.reduce((s, v) => s + v, 0) / a.length;

/** A hold at POSE with a push of FX along x from `at` for `forS`. */
async function pushed(
  rig: Rig,
  k: number,
  at: number,
  forS: number,
  extra: { impedance?: ImpedanceSettings | ImpedanceLaw; pose?: readonly number[] } = {},
): Promise<VirtualRun> {
  return virtualRun(rig, [hold(at + forS + 1, [...(extra.pose ?? POSE)])], {
    impedance: extra.impedance ?? { space: 'endpoint', stiffness: k, dampingRatio: 1 },
    injections: [parseInjection(`force=${FX},0@${at}+${forS}`)],
    park: false,
    maxSeconds: at + forS + 6,
  });
}

/** The push's deflection along x [m] over time from its start, and at rest before it. */
function deflection(rig: Rig, r: VirtualRun, at: number, end: number): { t: number; dx: number }[] {
  const before = r.rows.filter((row) => row[F.t]! > at - 0.3 && row[F.t]! < at).map((row) => endpointX(rig, row)[0]!);
  const x0 = mean(before);
  return r.rows.filter((row) => row[F.t]! >= at && row[F.t]! < end).map((row) => ({ t: row[F.t]! - at, dx: endpointX(rig, row)[0]! - x0 }));
}

describe('impedance: the passivity bound (pinned)', () => {
  it("the mock arm's motors damp its joints by eta N^2 kt ke / R: 0.4 and 0.1 N m s/rad", () => {
    const m = createActuatedArmModel(loadRig('rigs/mock-arm.json'));
    expect(motorDamping(m, 0)).toBeCloseTo((0.8 * 100 ** 2 * 0.01 * 0.01) / 2, 12);
    expect(motorDamping(m, 1)).toBeCloseTo((0.8 * 50 ** 2 * 0.01 * 0.01) / 2, 12);
  });

  it('T/2 + t_d: 7 ms at 500 Hz with answers 3 samples late, 1.5 ms at 1 kHz 1 sample late', () => {
    expect(passivityTimeS(500, 3)).toBeCloseTo(0.007, 12);
    expect(passivityTimeS(1000, 1)).toBeCloseTo(0.0015, 12);
  });

  it('at a right-angle elbow the endpoint bound is 1 / (tau lambda_max(B^-1/2 J^T J B^-1/2)): 170.4 N/m on the 16U2 mock', () => {
    const arm = loadRig('rigs/mock-arm.json').arm as TwoLinkParams;
    // J^T J at alpha2 = 90 deg: L1^2 + L2^2, L2^2 off the diagonal and L2^2.
    const a = 0.3 ** 2 + 0.25 ** 2;
    const c = 0.25 ** 2;
    const s00 = a / 0.4;
    const s01 = c / Math.sqrt(0.4 * 0.1);
    const s11 = c / 0.1;
    const lmax = (s00 + s11) / 2 + Math.sqrt(((s00 - s11) / 2) ** 2 + s01 ** 2);
    const bound = passiveStiffnessBound(arm, [0.4, 0.1], 90 * D, 0.007, 'endpoint');
    expect(bound).toBeCloseTo(1 / (0.007 * lmax), 9);
    expect(bound).toBeCloseTo(170.4, 1);
    expect(passiveStiffnessBound(arm, [0.4, 0.1], 90 * D, 0.007, 'joint')).toBeCloseTo(0.1 / 0.007, 9);
  });

  it('the default mock (16U2, 500 Hz) refuses 500 N/m before motion, with the bound and where', () => {
    const rig = loadRig('rigs/mock-arm.json');
    const p = loopPassivity(rig, true, rig.control.rateHz);
    expect(p).toEqual({ rateHz: 500, answerDelaySamples: 3 });
    let err: unknown;
    try {
      checkImpedance(rig, { space: 'endpoint', stiffness: 500, dampingRatio: 1 }, p, [POSE]);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ImpedanceError);
    expect((err as ImpedanceError).bound).toBeCloseTo(170.4, 1);
    expect((err as Error).message).toMatch(
      /stiffness 500\.0 N\/m is more than the loop keeps passive at alpha = \(-60\.0, 90\.0\) deg: at most 170\.4 N\/m/,
    );
    expect(() => checkImpedance(rig, { space: 'endpoint', stiffness: 150, dampingRatio: 1 }, p, [POSE])).not.toThrow();
  });
});

describe('impedance: a 2 N push on the mock (virtual time, 1 kHz, no adapter)', () => {
  for (const [k, forS] of [
    [50, 8],
    [200, 3],
    [500, 2],
  ] as const) {
    it(
      `K = ${k} N/m: static deflection within 10 % of F/K, force estimate within 15 % of the push`,
      async () => {
        const rig = fastRig();
        const at = 3;
        const r = await pushed(rig, k, at, forS);
        expect(r.summary.stop).toEqual({ kind: 'done' });
        const d = deflection(rig, r, at, at + forS);
        const rest = mean(d.filter((p) => p.t > forS - 0.3).map((p) => p.dx));
        expect(Math.abs(rest - FX / k) / (FX / k)).toBeLessThan(0.1);
        const last = rowAt(r, at + forS - 0.01);
        expect(last[F.stiffness]).toBeCloseTo(k, 6);
        expect(Math.abs(last[F.fEst0]! - FX) / FX).toBeLessThan(0.15);
        expect(Math.abs(last[F.fEst1]!)).toBeLessThan(0.15 * FX);
        expect(r.summary.impedance?.space).toBe('endpoint');
        expect(r.summary.impedance?.forceEstimateN).not.toBeNull();
      },
      hangGuardMs(30_000),
    );
  }

  it(
    "settles as the damping ratio says on the standard mock (16U2, 500 Hz, the identified model's friction compensated): the time to half the deflection within 20 % of the ideal spring-damper's with the arm's endpoint inertia",
    async () => {
      // The plant as rigs/mock-arm.json has it (friction, heavier links, encoder noise, the 16U2 at 500 Hz),
      // the law on its identified model. 200 N/m is within the bound only with the elbow past 110 deg.
      // At (-60, 120) deg the push runs along the arm's light direction (4.7 Hz at 200 N/m): with the
      // damper on the loop's 25 Hz tracker (a 12.7 ms lag, a negative mass against the damper) it settled
      // 23 % faster than the ideal; on the model-aided estimate (impedance.velocityObserverHz) 13 %.
      const rig = loadRig('rigs/mock-arm-identified.json');
      expect(rig.plant!.adapter.kind).toBe('16u2');
      expect(rig.control.rateHz).toBe(500);
      const model = createActuatedArmModel(rig);
      for (const [k, zeta, pose, forS] of [
        [50, 1, POSE, 4],
        [50, 0.5, POSE, 4],
        [200, 1, [-90 * D, 120 * D], 2],
        [200, 1, [-60 * D, 120 * D], 2],
      ] as const) {
        const J = jacobian(rig.arm as TwoLinkParams, pose);
        const lambda = endpointInertia(model, createActuatedArmData(model), pose, J);
        const at = 3;
        const r = await pushed(rig, k, at, forS, { impedance: { space: 'endpoint', stiffness: k, dampingRatio: zeta }, pose });
        expect(r.summary.stop).toEqual({ kind: 'done' });
        const d = deflection(rig, r, at, at + forS);
        const fin = mean(d.filter((p) => p.t > forS - 0.3).map((p) => p.dx));
        const measured = d.find((p) => p.dx >= fin / 2)!.t;
        const ideal = idealHalfTime(lambda, k, zeta);
        expect(Math.abs(measured - ideal) / ideal).toBeLessThan(0.2);
        // The light direction: 50 ms against 57.4 (-12.9 %); it was 44 (-23.4 %) behind the tracker.
        if (pose[0] === -60 * D && pose[1] === 120 * D) expect(Math.abs(measured - ideal) / ideal).toBeLessThan(0.15);
        // Overshoot as the ratio says: little at 1, some at 0.5.
        const peak = Math.max(...d.map((p) => p.dx));
        if (zeta === 1) expect(peak / fin).toBeLessThan(1.08);
        else expect(peak / fin).toBeGreaterThan(1.05);
      }
    },
    hangGuardMs(80_000),
  );

  it('the standard mock (16U2, 500 Hz) refuses 500 N/m at every pose of the soft range clear of the straight elbow: its largest bound, 228.5 N/m, is near a 150 deg elbow', () => {
    const rig = loadRig('rigs/mock-arm-identified.json');
    const p = loopPassivity(rig, true, rig.control.rateHz);
    const tau = passivityTimeS(p.rateHz, p.answerDelaySamples);
    let best = 0;
    for (let deg = -160; deg <= 160; deg += 1)
      best = Math.max(best, passiveStiffnessBound(rig.arm as TwoLinkParams, [0.4, 0.1], deg * D, tau, 'endpoint'));
    expect(best).toBeCloseTo(228.5, 0);
    // Within 15 deg of the straight elbow the law scales the stiffness down (to 50 N/m at 0 deg): asked for there, 500 is accepted as that.
    const poses = Array.from({ length: 33 }, (_, i) => [-60 * D, (-160 + 10 * i) * D]).filter((q) => Math.abs(q[1]!) >= 20 * D);
    for (const q of poses)
      expect(() => checkImpedance(rig, { space: 'endpoint', stiffness: 500, dampingRatio: 1 }, p, [q])).toThrow(ImpedanceError);
  });

  it(
    'no limit cycle at the largest stiffness it accepts at the pose: the arm itself within one encoder count over a second at rest',
    async () => {
      const rig = fastRig();
      const p = loopPassivity(rig, true, 1000);
      const bound = passiveStiffnessBound(
        rig.arm as TwoLinkParams,
        [0.4, 0.1],
        POSE[1]!,
        passivityTimeS(p.rateHz, p.answerDelaySamples),
        'endpoint',
      );
      const k = Math.floor(bound);
      expect(() => checkImpedance(rig, { space: 'endpoint', stiffness: k, dampingRatio: 1 }, p, [POSE])).not.toThrow();
      expect(() => checkImpedance(rig, { space: 'endpoint', stiffness: k + 2, dampingRatio: 1 }, p, [POSE])).toThrow(ImpedanceError);
      // The arm as it really is (the plant's angles, not the quantized encoders: 0.65 mm a count on joint 2).
      const tail: number[][] = [];
      const r = await virtualRun(rig, [hold(5)], {
        impedance: { space: 'endpoint', stiffness: k, dampingRatio: 1 },
        injections: [parseInjection(`force=${FX},0@2+3`)],
        park: false,
        maxSeconds: 10,
        onTick: (core, _clock, mock) => {
          const t = core.row[F.t]!;
          if (t > 4 && t < 5) tail.push(endpoint(rig.arm as TwoLinkParams, mock.plant.q));
        },
      });
      expect(r.summary.stop).toEqual({ kind: 'done' });
      expect(tail.length).toBeGreaterThan(500);
      const spread = (i: number): number => Math.max(...tail.map((x) => x[i]!)) - Math.min(...tail.map((x) => x[i]!));
      // Within one count of joint 2's encoder at the endpoint (0.65 mm): what the loop can see at all.
      const count = (0.25 * 2 * Math.PI) / 2400;
      expect(spread(0)).toBeLessThan(count);
      expect(spread(1)).toBeLessThan(count);
    },
    hangGuardMs(30_000),
  );

  it(
    'a live change from 50 to 500 N/m under the push moves the endpoint at most 1 mm beyond its new static deflection',
    async () => {
      const rig = fastRig();
      const law = new ImpedanceLaw(rig, { space: 'endpoint', stiffness: 50, dampingRatio: 1 }, loopPassivity(rig, true, 1000));
      const at = 3;
      const change = 9;
      let changed = false;
      const r = await virtualRun(rig, [hold(15)], {
        impedance: law,
        injections: [parseInjection(`force=${FX},0@${at}+10`)],
        park: false,
        maxSeconds: 22,
        onTick: (core) => {
          if (!changed && core.row[F.t]! >= change) {
            changed = true;
            law.setStiffness(500);
          }
        },
      });
      expect(changed).toBe(true);
      // The static deflection at 500 N/m: pushed (before the push ends at 13 s) less unpushed (after it).
      const xs = (from: number, to: number): number[] =>
        r.rows.filter((row) => row[F.t]! > from && row[F.t]! < to).map((row) => endpointX(rig, row)[0]!);
      const pushedX = mean(xs(12.5, 13));
      const restX = mean(xs(14.5, 15));
      expect(Math.abs(pushedX - restX - FX / 500) / (FX / 500)).toBeLessThan(0.1);
      // From 40 mm to 4 mm: never more than 1 mm past the new deflection.
      expect(Math.min(...xs(change, 13))).toBeGreaterThan(pushedX - 1e-3);
      // Filtered: the stiffness in force climbs over about 0.2 s, it does not jump.
      const k1 = rowAt(r, change + 0.01)[F.stiffness]!;
      expect(k1).toBeLessThan(100);
      expect(rowAt(r, change + 1.2)[F.stiffness]).toBeGreaterThan(495);
    },
    hangGuardMs(30_000),
  );
});

describe('impedance in joint space (--space joint)', () => {
  it(
    'a 2 N push at the endpoint deflects each joint by (J^T F)_i / K within 15 %, and the force estimate is within 15 %',
    async () => {
      const rig = loadRig('rigs/mock-arm.json');
      const k = 5;
      const r = await virtualRun(rig, [hold(8)], {
        impedance: { space: 'joint', stiffness: k, dampingRatio: 1 },
        injections: [parseInjection(`force=${FX},0@4+4`)],
        park: false,
        maxSeconds: 14,
      });
      expect(r.summary.stop).toEqual({ kind: 'done' });
      const jointMean = (from: number, to: number, f: number): number =>
        mean(r.rows.filter((row) => row[F.t]! > from && row[F.t]! < to).map((row) => row[f]!));
      const J = jacobian(rig.arm as TwoLinkParams, POSE);
      for (const i of [0, 1] as const) {
        const dq = jointMean(7.7, 8, F.q0 + i) - jointMean(3.7, 4, F.q0 + i);
        const want = (J[0][i] * FX) / k;
        expect(Math.abs(dq - want) / Math.abs(want)).toBeLessThan(0.15);
      }
      expect(Math.abs(jointMean(7.7, 8, F.fEst0) - FX) / FX).toBeLessThan(0.15);
      expect(r.summary.impedance?.space).toBe('joint');
    },
    hangGuardMs(15_000),
  );
});

/** Time for the ideal Lambda xdd + D xd + k x = F e_x (frozen at the pose) to reach half its final x [s]. */
function idealHalfTime(lambda: number[][], k: number, zeta: number): number {
  const Dm = designDamping(lambda as [[number, number], [number, number]], k, k, zeta);
  const det = lambda[0]![0]! * lambda[1]![1]! - lambda[0]![1]! * lambda[1]![0]!;
  const Li = [
    [lambda[1]![1]! / det, -lambda[0]![1]! / det],
    [-lambda[1]![0]! / det, lambda[0]![0]! / det],
  ];
  let x = [0, 0];
  let v = [0, 0];
  const h = 1e-5;
  for (let t = 0; t < 5; t += h) {
    const f = [FX - k * x[0]! - Dm[0][0] * v[0]! - Dm[0][1] * v[1]!, -k * x[1]! - Dm[1][0] * v[0]! - Dm[1][1] * v[1]!];
    const a = [Li[0]![0]! * f[0]! + Li[0]![1]! * f[1]!, Li[1]![0]! * f[0]! + Li[1]![1]! * f[1]!];
    v = [v[0]! + h * a[0]!, v[1]! + h * a[1]!];
    x = [x[0]! + h * v[0]!, x[1]! + h * v[1]!];
    if (x[0]! >= FX / k / 2) return t;
  }
  throw new Error('the ideal response never reached half its deflection');
}

/** One step of a law on a pose and plan, as the loop gives it. */
function sample(q: number[], qDes: number[], qd = [0, 0]): LawSample {
  return { t: 0, q, qd, qDesired: qDes, qdDesired: [0, 0], qddDesired: [0, 0] };
}

describe('impedance: each safety limit', () => {
  const rig = fastRig();
  const arm = rig.arm as TwoLinkParams;
  const p = loopPassivity(rig, true, 1000);
  const model = createActuatedArmModel(rig);
  /** The spring's endpoint force in `out` [N]: the torque less the model's gravity, through J^-T. */
  const springForce = (q: number[], out: number[]): number[] => {
    const g = computeInverseDynamics(model, createActuatedArmData(model), q, [0, 0], [0, 0], [0, 0]);
    return forceFromTorque(jacobian(arm, q), [out[0]! - g[0]!, out[1]! - g[1]!]);
  };

  it('the torque-rate limit: from rest a step changes no joint torque by more than maxTorqueNm per 12 ms', () => {
    const law = new ImpedanceLaw(rig, { space: 'endpoint', stiffness: 200, dampingRatio: 1 }, p);
    const out = [0, 0];
    expect(law.step(sample(POSE, POSE), 0.001, out)).toEqual({ ok: true });
    expect(Math.abs(out[0]!)).toBeCloseTo((rig.limits[0]!.maxTorque / 0.012) * 0.001, 9);
    expect(Math.abs(out[1]!)).toBeLessThanOrEqual((rig.limits[1]!.maxTorque / 0.012) * 0.001 + 1e-12);
  });

  it('the force cap: 20 cm from the equilibrium at 200 N/m, the spring pushes with maxForceN (10 N), not 40 N', () => {
    const law = new ImpedanceLaw(rig, { space: 'endpoint', stiffness: 200, dampingRatio: 1 }, p);
    const qDes = [-40 * D, 60 * D];
    const out = [0, 0];
    for (let i = 0; i < 200; i++) law.step(sample(POSE, qDes), 0.001, out);
    const f = springForce(POSE, out);
    expect(Math.hypot(f[0]!, f[1]!)).toBeCloseTo(10, 3);
  });

  it('the workspace box: the equilibrium is kept inside, and inside the barrier band the endpoint is pushed back', () => {
    const x = endpoint(arm, POSE);
    // A box whose right wall is 1 cm right of the endpoint: the endpoint is 1 cm into the 2 cm barrier band.
    const boxed: Rig = { ...rig, impedance: { ...rig.impedance!, workspace: { xMin: -0.6, xMax: x[0] + 0.01, yMin: -0.6, yMax: 0.6 } } };
    const law = new ImpedanceLaw(boxed, { space: 'endpoint', stiffness: 100, dampingRatio: 1 }, p);
    const out = [0, 0];
    for (let i = 0; i < 200; i++) law.step(sample(POSE, POSE), 0.001, out);
    const f = springForce(POSE, out);
    // The barrier (10 N over 2 cm: 500 N/m) and the spring toward the clamped equilibrium both push left.
    expect(f[0]).toBeLessThan(-5);
    expect(Math.abs(f[1]!)).toBeLessThan(0.5);
  });

  it('the straight elbow: stiffness scaled by |sin q2| / sin 15 deg, down to 10 %', () => {
    expect(singularScale(0, 15)).toBe(0.1);
    expect(singularScale(90 * D, 15)).toBe(1);
    expect(singularScale(7.5 * D, 15)).toBeCloseTo(Math.sin(7.5 * D) / Math.sin(15 * D), 12);
    const law = new ImpedanceLaw(rig, { space: 'endpoint', stiffness: 100, dampingRatio: 1 }, p);
    const q = [-60 * D, 3 * D];
    law.step(sample(q, q), 0.001, [0, 0]);
    expect(law.kEff).toBeCloseTo(100 * singularScale(3 * D, 15), 9);
  });

  it('above the bound: refused at the first step (nothing driven), and a live change is capped at the bound', () => {
    const tau = passivityTimeS(p.rateHz, p.answerDelaySamples);
    const bound = passiveStiffnessBound(arm, [0.4, 0.1], POSE[1]!, tau, 'endpoint');
    const stiff = new ImpedanceLaw(rig, { space: 'endpoint', stiffness: 2 * bound, dampingRatio: 1 }, p);
    const r = stiff.step(sample(POSE, POSE), 0.001, [0, 0]);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.reason).toMatch(/more than the loop keeps passive/);
    const law = new ImpedanceLaw(rig, { space: 'endpoint', stiffness: 100, dampingRatio: 1 }, p);
    law.step(sample(POSE, POSE), 0.001, [0, 0]);
    law.setStiffness(10 * bound);
    for (let i = 0; i < 3000; i++) law.step(sample(POSE, POSE), 0.001, [0, 0]);
    expect(law.kEff).toBeCloseTo(bound, 6);
    expect(law.capped).toBeGreaterThan(0);
  });

  it(
    'the torque-rate limit does not start again from zero at the next trajectory: the arm is held through it',
    async () => {
      const starts: number[] = [];
      const r = await virtualRun(rig, [hold(1.5), hold(1.5)], {
        impedance: { space: 'endpoint', stiffness: 100, dampingRatio: 1 },
        park: false,
        maxSeconds: 10,
        onTick: (core) => {
          const p = core.progress;
          if (p && p.t < 0.01 && (starts.length === 0 || core.row[F.t]! - starts.at(-1)! > 0.5)) starts.push(core.row[F.t]!);
        },
      });
      expect(r.summary.stop).toEqual({ kind: 'done' });
      expect(starts.length).toBe(2);
      const second = starts[1]!;
      const held = rowAt(r, second - 0.05)[F.tauCmd0]!;
      expect(Math.abs(held)).toBeGreaterThan(0.5);
      // A start from zero would take the whole held torque away for the first few ms. The band is the
      // damper's noise at rest: on the model-aided velocity (estimator.ts) joint 1's torque varies by
      // up to 0.3 N m at rest on this mock at 1 kHz (quantized, noisy encoders), against under 0.28 on the 25 Hz tracker.
      for (const row of r.rows.filter((w) => w[F.t]! > second && w[F.t]! < second + 0.3))
        expect(Math.abs(row[F.tauCmd0]! - held)).toBeLessThan(0.35 * Math.abs(held));
    },
    hangGuardMs(10_000),
  );

  it(
    'a stiffness above the bound at the pose the arm is in when the run starts: a fault before any torque',
    async () => {
      const rig16 = loadRig('rigs/mock-arm.json');
      const r = await virtualRun(rig16, [hold(1)], {
        impedance: { space: 'endpoint', stiffness: 2000, dampingRatio: 1 },
        park: false,
        maxSeconds: 3,
      });
      expect(r.summary.stop).toMatchObject({ kind: 'fault', fault: { kind: 'controller' } });
      expect(r.summary.stopReason).toMatch(/more than the loop keeps passive/);
      for (const row of r.rows) expect(row[F.duty0] === 0 && row[F.duty1] === 0).toBe(true);
    },
    hangGuardMs(10_000),
  );

  it(
    'an e-stop in impedance mode zeroes the motors at once without the law: no step after it',
    async () => {
      const law = new ImpedanceLaw(rig, { space: 'endpoint', stiffness: 100, dampingRatio: 1 }, p);
      let steps = 0;
      let stopped = false;
      let stepsAtStop = -1;
      const counting = Object.assign(Object.create(law) as ImpedanceLaw, {
        step: (s: LawSample, dt: number, out: number[]) => {
          steps++;
          return law.step(s, dt, out);
        },
      });
      const r = await virtualRun(rig, [hold(5)], {
        impedance: counting,
        injections: [parseInjection('force=1,1@1+3')],
        park: false,
        maxSeconds: 8,
        onTick: (core) => {
          if (!stopped && core.row[F.t]! >= 2) {
            stopped = true;
            stepsAtStop = steps;
            core.command({ kind: 'estop', reason: { kind: 'estop', by: 'test' } });
          }
        },
      });
      expect(r.summary.stop).toEqual({ kind: 'estop', by: 'test' });
      expect(stepsAtStop).toBeGreaterThan(0);
      expect(steps).toBe(stepsAtStop);
      // The halt's row and the board: zero duty, with the push still on.
      const last = r.rows.at(-1)!;
      expect(last[F.duty0] === 0 && last[F.duty1] === 0).toBe(true);
      expect(r.mock.plant.duty).toEqual([0, 0]);
    },
    hangGuardMs(10_000),
  );
});

describe('the force injection: force=FX,FY@T+D', () => {
  it('parses, round-trips and says what is wrong', () => {
    const i = parseInjection('force=2,0@1+2');
    expect(i).toEqual({ name: 'force', value: '2,0', at: 1, for: 2 });
    expect(formatInjection(i)).toBe('force=2,0@1+2');
    expect(parseInjection('force=-1.5,3@0.5')).toEqual({ name: 'force', value: '-1.5,3', at: 0.5 });
    expect(() => parseInjection('force=2@1+2')).toThrow(/--inject "force=2@1\+2": write force=FX,FY/);
    expect(() => parseInjection('force=2,x@1+2')).toThrow(/the force y "x" is not a number of N/);
    expect(() => parseInjection('force=2,500@1')).toThrow(/the force y 500 N is out of range/);
    expect(() => parseInjection('force=2,0@1+0')).toThrow(/the duration after \+ 0 s is out of range/);
    expect(() => parseInjection('stall=1@1+2')).toThrow(/stall takes no duration \(only force/);
    expect(() => parseInjection('force=2,0@1', 1)).toThrow(/pushes the endpoint of a two-link arm/);
  });

  it(
    'the mock plant pushes for D seconds: tau = J^T F, and then stops',
    async () => {
      const rig = fastRig();
      const r = await pushed(rig, 200, 3, 1);
      const mean2 = (from: number, to: number, f: number): number =>
        mean(r.rows.filter((row) => row[F.t]! > from && row[F.t]! < to).map((row) => row[f]!));
      const J = jacobian(rig.arm as TwoLinkParams, POSE);
      // The observer sees J^T F at rest during the push (less what it saw before), and nothing after it.
      for (const i of [0, 1] as const) {
        const seen = mean2(3.7, 4, F.tauExt0 + i) - mean2(2.6, 3, F.tauExt0 + i);
        expect(Math.abs(seen - J[0][i] * FX)).toBeLessThan(0.15 * Math.abs(J[0][i] * FX) + 0.01);
      }
      expect(Math.abs(mean2(4.7, 5, F.fEst0))).toBeLessThan(0.3);
    },
    hangGuardMs(10_000),
  );
});
