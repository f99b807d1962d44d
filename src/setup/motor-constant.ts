/**
 * Setup's speed test: the back-EMF constant `ke` of each motor (and `kt`, equal to it in SI units for
 * a DC motor: V s/rad = N m/A) from the steady speed per volt, measured near hanging with small
 * bounded motion. The driver (driver.ts) servoes one joint along slow ramps through a small window
 * about hanging, back and forth at several speeds, the other joint held; this module gives the servo
 * law and turns what the board reported into `ke`. No I/O, no clock.
 *
 * Why not a quasi-static ramp of duty: near hanging a constant voltage does not give a steady speed,
 * gravity does (the arm is a pendulum), and the duty the joint needs depends on its angle (gravity,
 * the other link's weight) and on the direction (Coulomb friction, the dead band). A ramp's "speed
 * per volt" mixes all that in: joint 2's came out twice too large. Here, at steady speed the joint's
 * torque balance is
 *
 *   A (V - ke N w) = G(q) + fc sgn(w) + fv w,     A = eta N kt / R  [N m/V]
 *
 * so at the same angle and in the same direction, two speeds give
 *
 *   dV/dw = ke N + fv / A                                              [V s/rad]
 *
 * in which gravity, the other link, Coulomb friction and the dead band cancel. The samples are
 * binned by angle; within each (angle bin, direction), the mean voltage is regressed on the speed
 * across the passes (a within estimator). The voltage is the duty the board applied (the one its
 * sample acknowledges, in force until the next sample) times the rig file's supply.
 *
 * What cannot be separated without a current sensor: viscous friction fv acts like back-EMF here.
 * The rig file's viscous friction is taken out (fv / A with A from the rig file's R and efficiency,
 * and kt = ke); friction the file does not know counts into ke (on the mock arm, whose plant has
 * friction the nominal file lacks, some 5% on joint 1 and 15% on joint 2). `R` is not measured:
 * the duty-to-torque gain eta N kt / R and the links' masses scale together in anything a
 * position-sensing setup can measure (identification fits the masses in the rig's torque units).
 */
import type { Rig } from '../config/load.js';
import { computeMassMatrix, createActuatedArmData, createRigidArmModel } from '../model/actuated.js';
import { reflectedInertia } from '../model/motor.js';
import type { StepResult } from './steps.js';

/** One pass of the speed test: the joint servoed from `fromRad` to `toRad` at `speedRadS`. */
export interface SpeedPass {
  fromRad: number;
  toRad: number;
  /** [rad/s], > 0 */
  speedRadS: number;
}

/** The plan of one joint's test: passes back and forth about `centreRad`, slow moves between. */
export interface SpeedPlan {
  joint: number;
  centreRad: number;
  /** Half-width of the window [rad]. */
  halfWidthRad: number;
  passes: SpeedPass[];
}

/** Speeds of the passes [deg/s] and the window's half-width [deg]. */
export const TEST_SPEEDS_DEG_S = [12, 24, 36, 48];
export const WINDOW_DEG = 25;
/** Samples within this long after a pass's steady part starts are left out [s] (the driver marks only the cruise as steady). */
export const SETTLE_S = 0;
/** Angle bins of the within estimator [deg]. */
const BIN_DEG = 2;
/** A measured ke within this fraction of the rig file's passes; farther, it is a warning (and written either way). */
export const KE_TOLERANCE = 0.2;

const DEG = Math.PI / 180;

/** The passes: up and down through the window at each speed (the first one starts from the window's low end). */
export function speedPlan(joint: number, centreRad: number): SpeedPlan {
  const lo = centreRad - WINDOW_DEG * DEG;
  const hi = centreRad + WINDOW_DEG * DEG;
  const passes: SpeedPass[] = [];
  for (const s of TEST_SPEEDS_DEG_S) {
    passes.push({ fromRad: lo, toRad: hi, speedRadS: s * DEG });
    passes.push({ fromRad: hi, toRad: lo, speedRadS: s * DEG });
  }
  return { joint, centreRad, halfWidthRad: WINDOW_DEG * DEG, passes };
}

/**
 * Per joint: a PD with the nominal model's gravity and back-EMF as feedforward, in duty units. Gains
 * from the nominal inertia and drive gain at hanging: a 12 rad/s loop, damping 0.8; the motor's own
 * back-EMF damping is counted in.
 */
export interface ServoGains {
  /** [duty/rad] */
  kp: number[];
  /** [duty s/rad] */
  kv: number[];
  /** Duty per joint torque [1/(N m)], nominal. */
  dutyPerNm: number[];
  /** Duty per joint speed (back-EMF) [s/rad], nominal. */
  dutyPerRadS: number[];
  /** The joint's own inertia at hanging with its rotor [kg m^2], nominal. */
  inertia: number[];
}

export function servoGains(rig: Rig, hangRad: readonly number[]): ServoGains {
  const arm = createRigidArmModel(rig.arm);
  const M = computeMassMatrix(arm, createActuatedArmData(arm), hangRad);
  const W = 12; // [rad/s]
  const ZETA = 0.8;
  const out: ServoGains = { kp: [], kv: [], dutyPerNm: [], dutyPerRadS: [], inertia: [] };
  rig.motors.slice(0, rig.joints).forEach((m, j) => {
    const A = (m.efficiency * m.gear * m.kt) / m.R; // [N m/V]
    const torquePerDuty = A * rig.supplyV;
    const J = M[j]![j]! + reflectedInertia(m);
    const b = A * m.ke * m.gear; // back-EMF damping [N m s/rad]
    out.kp.push((J * W * W) / torquePerDuty);
    out.kv.push(Math.max(0, 2 * ZETA * J * W - b) / torquePerDuty);
    out.dutyPerNm.push(1 / torquePerDuty);
    out.dutyPerRadS.push((m.ke * m.gear) / rig.supplyV);
    out.inertia.push(J);
  });
  return out;
}

/** Duty for joint j of the servo: torque (gravity, inertia) and back-EMF feedforward, then PD on the reference. */
export function servoDuty(g: ServoGains, j: number, torqueNm: number, qRef: number, wRef: number, q: number, w: number): number {
  return g.dutyPerNm[j]! * torqueNm + g.dutyPerRadS[j]! * wRef + g.kp[j]! * (qRef - q) + g.kv[j]! * (wRef - w);
}

/** What the board reported during one joint's test: per interval between two samples. */
export interface SpeedEvidence {
  joint: number;
  /** Pass index of each interval (-1: between passes). */
  pass: number[];
  /** [s] since the pass started, at the interval's start. */
  tInPass: number[];
  /** Joint angle at the interval's start [rad]. */
  q: number[];
  /** The reference speed over the interval [rad/s] (the instrument of the estimate). */
  refW: number[];
  /** Change of the joint angle over the interval [rad]. */
  dq: number[];
  /** Length of the interval [s]. */
  dt: number[];
  /** Duty the board applied over the interval, on the joint's motor, in the joint's sense (-1..1). */
  duty: number[];
  /** Largest duty any sample needed, in magnitude. */
  peakDuty: number;
  /** Why the test ended early, or null. */
  aborted: string | null;
}

/** The estimate: dV/dw [V s/rad] at the joint, from the within estimator, and what it rests on. */
export interface SlopeEstimate {
  /** dV/dw [V s/rad], or NaN when the data do not determine it. */
  slope: number;
  /** Standard error [V s/rad]. */
  std: number;
  /** Intervals used. */
  samples: number;
  /** Groups (angle bin, direction) with samples from two or more passes. */
  groups: number;
  /** Speeds reached per pass [rad/s] (mean over its steady part). */
  passSpeeds: number[];
}

/** Half-width of the local quadratic fit that gives each interval's acceleration [intervals]. */
const FIT_HALF = 6;

/** Acceleration [rad/s^2] at the middle of interval k: a quadratic through the angles of its neighbours in the same pass. */
function localAcceleration(ev: SpeedEvidence, T: readonly number[], k: number): number | undefined {
  const lo = k - FIT_HALF;
  const hi = k + FIT_HALF + 1;
  if (lo < 0 || hi >= ev.q.length) return undefined;
  for (let i = lo; i <= hi; i++) if (ev.pass[i] !== ev.pass[k]) return undefined;
  const m = T[k]! + ev.dt[k]! / 2;
  // Normal equations of q = c0 + c1 x + c2 x^2, x = t - m; the acceleration is 2 c2.
  // S[e] = sum x^e (e = 0..4), R[e] = sum q x^e (e = 0..2).
  const S: [number, number, number, number, number] = [0, 0, 0, 0, 0];
  const R: Vec3 = [0, 0, 0];
  for (let i = lo; i <= hi; i++) {
    const x = T[i]! - m;
    const x2 = x * x;
    const x3 = x2 * x;
    S[0] += 1;
    S[1] += x;
    S[2] += x2;
    S[3] += x3;
    S[4] += x3 * x;
    const q = ev.q[i]!;
    R[0] += q;
    R[1] += q * x;
    R[2] += q * x * x;
  }
  const M: Mat3 = [
    [S[0], S[1], S[2]],
    [S[1], S[2], S[3]],
    [S[2], S[3], S[4]],
  ];
  const d = det3(M);
  if (!(Math.abs(d) > 0)) return undefined;
  const col = ([a, b]: Vec3, r: number): Vec3 => [a, b, r];
  return (2 * det3([col(M[0], R[0]), col(M[1], R[1]), col(M[2], R[2])])) / d;
}

type Vec3 = [number, number, number];
type Mat3 = [Vec3, Vec3, Vec3];

function det3(m: Mat3): number {
  return (
    m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) -
    m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
    m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0])
  );
}

/**
 * Regresses the voltage of each steady interval on its speed within each (angle bin, direction)
 * group, V - (J/A) qdd = c(bin, dir) + (dV/dw) w, with the reference speed as the instrument. The
 * group's constant takes gravity, the other link, Coulomb friction and the dead band; the nominal
 * J/A [V s^2/rad] takes out what is left of the servo's transients (the joint catching up with its
 * reference after the ramp: a deceleration whose mean grows as the speed squared, 5% of dV/dw on
 * joint 1 at 48 deg/s when left in). The instrument matters:
 * the servo answers each wobble of the speed with the opposite voltage, so plain least squares on
 * the measured speed is pulled low by the feedback (by some 8% on joint 1); the reference speed
 * moves the speed without being moved by it.
 */
export function speedPerVolt(ev: SpeedEvidence, supplyV: number, inertialVs2: number): SlopeEstimate {
  const T: number[] = [];
  let t = 0;
  for (const dt of ev.dt) {
    T.push(t);
    t += dt;
  }
  const passDq = new Map<number, { dq: number; dt: number }>();
  const groups = new Map<string, { v: number; w: number; z: number; pass: number }[]>();
  for (let k = 0; k < ev.q.length; k++) {
    const p = ev.pass[k]!;
    if (p < 0 || ev.tInPass[k]! < SETTLE_S || !(ev.dt[k]! > 0)) continue;
    const pd = passDq.get(p) ?? { dq: 0, dt: 0 };
    pd.dq += ev.dq[k]!;
    pd.dt += ev.dt[k]!;
    passDq.set(p, pd);
    const a = localAcceleration(ev, T, k);
    if (a === undefined) continue;
    const key = `${Math.floor((ev.q[k]! + ev.dq[k]! / 2) / (BIN_DEG * DEG))}:${Math.sign(ev.refW[k]!)}`;
    const list = groups.get(key) ?? [];
    list.push({ v: ev.duty[k]! * supplyV - inertialVs2 * a, w: ev.dq[k]! / ev.dt[k]!, z: ev.refW[k]!, pass: p });
    groups.set(key, list);
  }
  let szv = 0;
  let szw = 0;
  let szz = 0;
  let used = 0;
  let nGroups = 0;
  const kept: { v: number; w: number }[] = [];
  for (const list of groups.values()) {
    if (new Set(list.map((x) => x.pass)).size < 2) continue;
    nGroups++;
    const mean = (f: (x: (typeof list)[number]) => number): number => list.reduce((s, x) => s + f(x), 0) / list.length;
    const mv = mean((x) => x.v);
    const mw = mean((x) => x.w);
    const mz = mean((x) => x.z);
    for (const x of list) {
      szv += (x.z - mz) * (x.v - mv);
      szw += (x.z - mz) * (x.w - mw);
      szz += (x.z - mz) ** 2;
      kept.push({ v: x.v - mv, w: x.w - mw });
      used++;
    }
  }
  const passSpeeds = [...passDq.keys()].sort((a, b) => a - b).map((p) => passDq.get(p)!.dq / passDq.get(p)!.dt);
  if (!(Math.abs(szw) > 0) || !(szz > 0) || nGroups < 2)
    return { slope: Number.NaN, std: Number.NaN, samples: used, groups: nGroups, passSpeeds };
  const slope = szv / szw;
  const dof = Math.max(1, used - nGroups - 1);
  const s2 = kept.reduce((s, x) => s + (x.v - slope * x.w) ** 2, 0) / dof;
  return { slope, std: Math.sqrt((s2 * szz) / (szw * szw)), samples: used, groups: nGroups, passSpeeds };
}

/**
 * ke [V s/rad] at the motor shaft from dV/dw at the joint: dV/dw = ke N + fv R / (eta N kt) with
 * kt = ke, so N ke^2 - (dV/dw) ke + fv R / (eta N) = 0; the larger root (the back-EMF, not the friction).
 */
export function keFromSlope(slope: number, gear: number, viscousNmS: number, R: number, efficiency: number): number {
  const c = (viscousNmS * R) / efficiency;
  const disc = slope * slope - 4 * c;
  if (!(disc >= 0)) return Number.NaN;
  return (slope + Math.sqrt(disc)) / (2 * gear);
}

const sig3 = (v: number): number => Number(v.toPrecision(3));

/** Joint j's motor constant from its speed test; writes `ke[j]` into the findings' array when measured. */
export function checkMotorConstant(ev: SpeedEvidence, rig: Rig, ke: number[]): StepResult {
  const j = ev.joint;
  const m = rig.motors[j]!;
  const name = `motor ${j + 1} constant`;
  const gains = servoGains(rig, rig.joints === 2 ? [-Math.PI / 2, 0] : [-Math.PI / 2]);
  const est = speedPerVolt(ev, rig.supplyV, gains.inertia[j]! * gains.dutyPerNm[j]! * rig.supplyV);
  const fv = rig.friction.viscous[j] ?? 0;
  const value = keFromSlope(est.slope, m.gear, fv, m.R, m.efficiency);
  const evidence: Record<string, unknown> = {
    joint: j + 1,
    windowDeg: WINDOW_DEG,
    passSpeedsDegS: est.passSpeeds.map((w) => Math.round((w / DEG) * 10) / 10),
    peakDuty: Math.round(ev.peakDuty * 1000) / 1000,
    voltsPerRadS: Number.isFinite(est.slope) ? sig3(est.slope) : null,
    voltsPerRadSStd: Number.isFinite(est.std) ? sig3(est.std) : null,
    samples: est.samples,
    groups: est.groups,
    supplyV: rig.supplyV,
    gear: m.gear,
    viscousTakenOut: fv,
    rigKe: m.ke,
    measuredKe: Number.isFinite(value) ? sig3(value) : null,
    method:
      'within (angle bin, direction), the reference speed as instrument: dV/dw = ke N + fv/A; gravity, the other link, Coulomb friction and the dead band cancel; kt = ke (SI); R not measured (it scales with the masses)',
  };
  if (ev.aborted || !Number.isFinite(value) || !(value > 0) || est.std > 0.1 * est.slope) {
    return {
      name,
      status: 'warn',
      summary: `joint ${j + 1}: the speed test ${ev.aborted ? `ended early (${ev.aborted})` : `did not determine ke (dV/dw ${Number.isFinite(est.slope) ? sig3(est.slope) : 'none'} +- ${Number.isFinite(est.std) ? sig3(est.std) : '-'} V s/rad from ${est.groups} groups)`}: the rig file's ke ${m.ke} is kept`,
      evidence,
      fix: `let the joint move freely through +-${WINDOW_DEG} deg about hanging (nothing in the way, the other joint held by its motor) and run setup again; or take ke from the motor datasheet`,
      corrected: false,
    };
  }
  const off = value / m.ke - 1;
  // Written when it is off by more than the measurement can tell (two standard errors, and 3%).
  if (Math.abs(off) > Math.max(0.03, (2 * est.std) / est.slope)) ke[j] = sig3(value);
  const base = `joint ${j + 1}: ${sig3(est.slope)} V per rad/s at the joint (+-${sig3(est.std)}), gear ${m.gear}: ke = kt = ${sig3(value)} V s/rad (rig file ${m.ke}, ${off >= 0 ? '+' : ''}${Math.round(off * 100)}%)`;
  if (Math.abs(off) <= KE_TOLERANCE) return { name, status: 'pass', summary: base, evidence, fix: null, corrected: false };
  return {
    name,
    status: 'warn',
    summary: `${base}: more than ${KE_TOLERANCE * 100}% off`,
    evidence,
    fix: `motors[${j}].ke and kt = ${sig3(value)} (written); if the datasheet disagrees, check supplyV (${rig.supplyV} V: setup's volts are duty times it), the gear ratio (${m.gear}), and friction.viscous[${j}] (unknown viscous friction counts into ke)`,
    corrected: true,
  };
}
