/**
 * Physical plausibility of a resolved rig, checked at load (in the main thread, before any loop or
 * worker starts): relations between fields that the schema cannot see one field at a time. A rig that
 * passes runs with finite numbers everywhere: its motors can hold the arm against gravity anywhere
 * within the joint limits and overcome its friction, its motor constants agree, and its joints are not
 * so stiffly damped that the twin's (2 ms) or the mock plant's integration step cannot follow them.
 * Each problem names the field and the reason.
 */
import { reflectedInertia, torqueForDuty } from '../model/motor.js';
import { driverLabel } from '../model/driver.js';
import { computeGravity, computeMassMatrix, createActuatedArmData, createRigidArmModel } from '../model/actuated.js';
import type { ArmParams } from '../model/types.js';
import type { JointLimits, Rig } from './load.js';
import type { MotorParams } from './rig.js';
import { outsideText } from '../model/beyond.js';

/** One implausible field: its dotted path and why. */
export interface PlausibilityIssue {
  path: string;
  message: string;
}

/** Largest step the twin integrates with (twin.ts sub-steps a tick at 2 ms) [s]. */
export const TWIN_STEP_S = 0.002;
/** Smoothing velocity of the nominal Coulomb friction in the twin and the controller [rad/s]. */
const NOMINAL_COULOMB_VELOCITY = 0.01;
/**
 * Largest b h / J the integrators are allowed: RK4 is stable on a decaying mode up to 2.78, and the
 * margin covers the coupling between the joints that a per-joint estimate leaves out.
 */
const MAX_STIFFNESS = 2;
/** kt [N m/A] and ke [V s/rad] are one constant in SI units; data sheets agree within a few %. */
const MAX_KT_KE_RATIO = 2;

const DEG = 180 / Math.PI;

/** Joint angles over the limits: a 10-degree grid plus both ends [rad] (the gravity torque it misses is under 0.4%). */
function grid(l: JointLimits): number[] {
  const out: number[] = [];
  const n = Math.max(2, Math.ceil(((l.max - l.min) * DEG) / 10));
  for (let k = 0; k <= n; k++) out.push(l.min + ((l.max - l.min) * k) / n);
  return out;
}

/** The arm with a point mass `payloadKg` at the endpoint (gravity depends on first moments only). */
function withPayload(arm: ArmParams, payloadKg: number): ArmParams {
  if (payloadKg <= 0) return arm;
  if ('L2' in arm) {
    const m2 = arm.m2 + payloadKg;
    return { ...arm, m2, d2: (arm.m2 * arm.d2 + payloadKg * arm.L2) / m2 };
  }
  const m1 = arm.m1 + payloadKg;
  return { ...arm, m1, d1: (arm.m1 * arm.d1 + payloadKg * arm.L1) / m1 };
}

interface Envelope {
  /** Largest |G_i| within the limits [N m], and where [rad]. */
  gravity: { torque: number; at: number[] }[];
  /** Smallest M_ii within the limits [kg m^2] (without the rotor). */
  inertia: number[];
}

/** Gravity torques and joint inertias over the joint limits (a grid; M_22 is constant). */
function envelope(arm: ArmParams, limits: readonly JointLimits[]): Envelope {
  const m = createRigidArmModel(arm);
  const data = createActuatedArmData(m);
  const n = m.joints;
  const gravity = Array.from({ length: n }, () => ({ torque: 0, at: new Array<number>(n).fill(0) }));
  const inertia = new Array<number>(n).fill(Number.POSITIVE_INFINITY);
  const g1 = grid(limits[0]!);
  const g2 = n === 2 ? grid(limits[1]!) : [0];
  for (const a1 of g1) {
    for (const a2 of g2) {
      const q = n === 2 ? [a1, a2] : [a1];
      const G = computeGravity(m, data, q);
      const M = computeMassMatrix(m, data, q);
      for (let i = 0; i < n; i++) {
        const t = Math.abs(G[i]!);
        if (!(t <= gravity[i]!.torque)) gravity[i] = { torque: t, at: q.slice() };
        inertia[i] = Math.min(inertia[i]!, M[i]![i]!);
      }
    }
  }
  return { gravity, inertia };
}

const fmt = (v: number): string => (Number.isFinite(v) ? Number(v.toPrecision(3)).toString() : String(v));
const degs = (q: readonly number[]): string => `[${q.map((a) => (a * DEG).toFixed(0)).join(', ')}] deg`;

interface Actuation {
  /** Where the motors are written ('motors' or 'plant.motors'). */
  motorsPath: string;
  frictionPath: { viscous: string; coulomb: string };
  arm: ArmParams;
  motors: readonly MotorParams[];
  supplyV: number;
  viscous: readonly number[];
  coulomb: readonly number[];
  coulombVelocity: number;
  /** Integration step of the simulation that runs this arm [s], and its name. */
  step: number;
  simulation: string;
  /** Check the motors against gravity and friction (false when the file gives no motors). */
  motorsGiven: boolean;
}

/** Checks one actuated arm (the nominal one the twin runs, or the mock's plant): at most one issue a joint. */
function checkActuation(a: Actuation, rig: Rig, env: Envelope, out: PlausibilityIssue[]): void {
  for (let i = 0; i < rig.joints; i++) {
    const issue = motorIssue(a, rig, env, i) ?? stiffnessIssue(a, env, i);
    if (issue) out.push(issue);
  }
}

/** Joint `i`'s motor and driver: units, the supply, and the torque against gravity and friction. */
function motorIssue(a: Actuation, rig: Rig, env: Envelope, i: number): PlausibilityIssue | undefined {
  const m = a.motors[i]!;
  const at = `${a.motorsPath}[${i}]`;
  const ratio = m.kt / m.ke;
  if (ratio > MAX_KT_KE_RATIO || ratio < 1 / MAX_KT_KE_RATIO) {
    return {
      path: `${at}.kt`,
      message:
        `kt ${fmt(m.kt)} N m/A and ke ${fmt(m.ke)} V s/rad differ by a factor ${fmt(Math.max(ratio, 1 / ratio))}: in SI units they are the same ` +
        `constant of a DC motor (check the units: ke in V/krpm is 104.7 times ke in V s/rad)`,
    };
  }
  const d = m.driver;
  if (d && d.dropV >= a.supplyV) {
    return {
      path: `${at}.driver.dropV`,
      message: `the ${driverLabel(d)} loses ${fmt(d.dropV)} V across its switches, no less than the ${fmt(a.supplyV)} V supply: the motor would get nothing`,
    };
  }
  if (d?.maxSupplyV !== undefined && a.supplyV > d.maxSupplyV) {
    return {
      path: `${at}.driver`,
      message: `the ${driverLabel(d)} takes at most ${fmt(d.maxSupplyV)} V (its datasheet), but the supply is ${fmt(a.supplyV)} V`,
    };
  }
  const stall = torqueForDuty(m, a.supplyV, rig.maxDuty, 0);
  if (a.motorsGiven) {
    const gv = env.gravity[i]!;
    if (gv.torque > stall) {
      return {
        path: at,
        message:
          `joint ${i + 1}'s motor gives at most ${fmt(stall)} N m at stall (eta N kt Vs maxDuty / R${d ? `, through the ${driverLabel(d)}` : ''}), but holding the arm against gravity ` +
          `within the joint limits takes ${fmt(gv.torque)} N m (at ${degs(gv.at)}): a stronger motor, a higher gear ratio or narrower limits`,
      };
    }
    const c = a.coulomb[i] ?? 0;
    if (c >= stall) {
      return {
        path: `${a.frictionPath.coulomb}[${i}]`,
        message: `Coulomb friction ${fmt(c)} N m is at least the motor's stall torque ${fmt(stall)} N m: the joint could never move`,
      };
    }
  }
  return undefined;
}

/** Joint `i`'s fastest mode (its damping over its smallest inertia) against the simulation's step. */
function stiffnessIssue(a: Actuation, env: Envelope, i: number): PlausibilityIssue | undefined {
  const m = a.motors[i]!;
  const at = `${a.motorsPath}[${i}]`;
  // Damping of the joint: back-EMF through the winding, viscous friction, and the slope of the
  // smoothed Coulomb friction at rest. With the smallest inertia the joint has, that is its fastest
  // mode, which the integration step must resolve.
  const electrical = (m.efficiency * m.gear * m.gear * m.kt * m.ke) / m.R;
  const viscous = a.viscous[i] ?? 0;
  const coulombSlope = (a.coulomb[i] ?? 0) / a.coulombVelocity;
  const b = electrical + viscous + coulombSlope;
  const J = env.inertia[i]! + reflectedInertia(m);
  if (!(J > 0) || (b * a.step) / J > MAX_STIFFNESS) {
    const biggest = Math.max(electrical, viscous, coulombSlope);
    const cause =
      biggest === electrical
        ? [`${at}`, `the motor's back-EMF damping eta N^2 kt ke / R = ${fmt(electrical)} N m s/rad`]
        : biggest === viscous
          ? [`${a.frictionPath.viscous}[${i}]`, `viscous friction ${fmt(viscous)} N m s/rad`]
          : [
              `${a.frictionPath.coulomb}[${i}]`,
              `Coulomb friction ${fmt(a.coulomb[i] ?? 0)} N m (smoothed over ${fmt(a.coulombVelocity)} rad/s: ${fmt(coulombSlope)} N m s/rad at rest)`,
            ];
    return {
      path: cause[0]!,
      message:
        `${cause[1]} on joint ${i + 1}, whose inertia is as small as ${fmt(J)} kg m^2, gives a time constant of ${fmt((1000 * J) / b)} ms: ` +
        `the ${a.simulation} (step ${fmt(a.step * 1000)} ms) cannot follow it and would diverge (check kt, ke, R, gear and rotorInertia, the friction, the masses)`,
    };
  }
  return undefined;
}

/**
 * Everything implausible in a resolved rig (an empty list when it is fine). The nominal model is
 * checked as the twin runs it; the plant, when there is one, as the mock rig runs it.
 */
export function plausibilityIssues(rig: Rig): PlausibilityIssue[] {
  const out: PlausibilityIssue[] = [];
  const src = rig.source;
  const env = envelope(rig.arm, rig.limits);
  checkActuation(
    {
      motorsPath: 'motors',
      frictionPath: { viscous: 'friction.viscous', coulomb: 'friction.coulomb' },
      arm: rig.arm,
      motors: rig.motors,
      supplyV: rig.supplyV,
      viscous: rig.friction.viscous,
      coulomb: rig.friction.coulomb,
      coulombVelocity: NOMINAL_COULOMB_VELOCITY,
      step: TWIN_STEP_S,
      simulation: "twin's integration",
      motorsGiven: src.motors !== undefined,
    },
    rig,
    env,
    out,
  );
  for (let i = 0; i < rig.joints; i++) {
    const c = rig.friction.coulomb[i] ?? 0;
    const lim = rig.limits[i]!;
    if (c >= lim.maxTorque) {
      out.push({
        path: `limits[${i}].maxTorqueNm`,
        message: `${fmt(lim.maxTorque)} N m is no more than the joint's Coulomb friction ${fmt(c)} N m (friction.coulomb[${i}]): the controller could never move it`,
      });
    }
  }
  const p = rig.plant;
  if (p) {
    const plantEnv = envelope(withPayload(p.arm, p.payloadKg), rig.limits);
    const inertia = envelope(p.arm, rig.limits).inertia;
    checkActuation(
      {
        motorsPath: src.plant?.motors ? 'plant.motors' : 'motors',
        frictionPath: { viscous: 'plant.viscous', coulomb: 'plant.coulomb' },
        arm: p.arm,
        motors: p.motors,
        supplyV: p.supplyV,
        viscous: p.viscous,
        coulomb: p.coulomb,
        coulombVelocity: p.coulombVelocity,
        step: p.step,
        simulation: "mock plant's integration",
        motorsGiven: true,
      },
      rig,
      { gravity: plantEnv.gravity, inertia },
      out,
    );
    p.start.forEach((a, i) => {
      const lim = rig.limits[i]!;
      if (a < lim.min - 1e-9 || a > lim.max + 1e-9) {
        const o = outsideText(a * DEG, lim.min * DEG, lim.max * DEG, 0);
        out.push({ path: `plant.startDeg[${i}]`, message: `${o.value} deg is outside the joint limits ${o.range} deg (limits[${i}])` });
      }
    });
  }
  const rate = rateIssue(rig, rig.control.rateHz);
  if (rate) out.push(rate);
  return out;
}

/**
 * The loop rate against the rig's estimator bandwidths: the momentum observer's discrete update is
 * well behaved only while 2 pi observerHz / rate <= 1. Undefined when the rate is fine.
 */
export function rateIssue(rig: Rig, rateHz: number): PlausibilityIssue | undefined {
  const k = (2 * Math.PI * rig.twin.observerHz) / rateHz;
  if (k <= 1) return undefined;
  return {
    path: 'twin.observerHz',
    message: `${fmt(rig.twin.observerHz)} Hz is too fast for a loop at ${fmt(rateHz)} Hz: the momentum observer needs 2 pi observerHz <= the rate (at most ${fmt(rateHz / (2 * Math.PI))} Hz)`,
  };
}
