/**
 * Checks a trajectory against the rig before the arm moves: joint limits, speed limits, and the
 * torque the nominal model says it needs against the torque limit and what the motor can give at that
 * speed. A trajectory that fails is refused with the time and the joint.
 *
 * One- and two-link rigs alike (`rig.joints`): samples, torques, limits and motors are indexed per
 * joint, so an index keeps its `!` (they are not Pairs).
 */
import type { FeasibilityPart } from '../config/parts.js';
import { computeInverseDynamics, createActuatedArmData, createActuatedArmModel, motorTorqueLimit, type ActuatedArmModel } from '../model/actuated.js';
import type { PathSpec } from '../model/builtins.js';
import type { Trajectory } from '../model/trajectory.js';
import type { PlannedPhase } from './events.js';
import { planPath, type PlannedPath } from './plan.js';
import { beyondText, boundText, outsideText } from '../model/beyond.js';

export class FeasibilityError extends Error {
  override readonly name = 'FeasibilityError';
  constructor(
    message: string,
    /** [s] on the trajectory */
    readonly t: number,
    /** 0-based joint */
    readonly joint: number,
    /** The phase of the run's trajectory (`preflight`): the approach, the path proper, the way back. */
    readonly phase?: PlannedPhase,
    /** The path's name (`preflight`). */
    readonly trajectory?: string,
  ) {
    super(message);
  }
}

const DEG = 180 / Math.PI;

/** The first sample that breaks a limit: its time on the trajectory [s], the joint, and what is wrong. */
interface Breach {
  t: number;
  joint: number;
  detail: string;
}

/** The first sample (every `stepS`, 1 kHz by default) of `traj` in [from, to] [s] that breaks a limit of `rig`, or undefined. */
function firstBreach(rig: FeasibilityPart, traj: Trajectory, model: ActuatedArmModel, from = 0, to = traj.duration, stepS = 0.001): Breach | undefined {
  const n = rig.joints;
  const data = createActuatedArmData(model);
  const steps = Math.max(1, Math.ceil((to - from) / stepS));
  const s = { t: 0, q: new Array<number>(n).fill(0), qd: new Array<number>(n).fill(0), qdd: new Array<number>(n).fill(0), qddd: new Array<number>(n).fill(0) };
  for (let k = 0; k <= steps; k++) {
    const t = from + (k / steps) * (to - from);
    traj.sample(t, s);
    const tau = computeInverseDynamics(model, data, s.q, s.qd, s.qdd);
    for (let i = 0; i < n; i++) {
      const lim = rig.limits[i]!;
      const q = s.q[i]!;
      if (q < lim.min - 1e-9 || q > lim.max + 1e-9) {
        const o = outsideText(q * DEG, lim.min * DEG, lim.max * DEG);
        return { t, joint: i, detail: `angle ${o.value} deg is outside the joint limits ${o.range} deg` };
      }
      const v = s.qd[i]!;
      if (Math.abs(v) > lim.maxVel + 1e-9) {
        return { t, joint: i, detail: `speed ${beyondText(Math.abs(v) * DEG, lim.maxVel * DEG, 'above', 0)} deg/s is beyond the limit ${boundText(lim.maxVel * DEG)} deg/s (slow it down: a longer duration)` };
      }
      const need = tau[i]!;
      const avail = Math.min(lim.maxTorque, motorTorqueLimit(model, i, rig.maxDuty, v, need));
      if (Math.abs(need) > avail) return { t, joint: i, detail: torqueMessage(rig, i, need, avail, v) };
    }
  }
  return undefined;
}

/**
 * Throws a FeasibilityError at the first sample (1 kHz) that breaks a limit. The torque needed is the
 * inverse dynamics of `model` (default: the rig's nominal actuated arm, rotors and friction included).
 */
export function checkFeasible(rig: FeasibilityPart, traj: Trajectory, what = 'the trajectory', model: ActuatedArmModel = createActuatedArmModel(rig)): void {
  const b = firstBreach(rig, traj, model);
  if (b) throw new FeasibilityError(`${what} at t = ${b.t.toFixed(3)} s, joint ${b.joint + 1}: ${b.detail}`, b.t, b.joint);
}

/** The rig file's parts `preflight` reads: the feasibility check's, and the mock's power-on pose. */
export type PreflightPart = FeasibilityPart & { plant?: { start: number[] } };

/**
 * Where the arm is when a run starts, as far as the host knows before it connects: the mock's
 * power-on pose (the rig file's `plant.startDeg`), else hanging (joint 1 at -90 deg from horizontal,
 * the others straight), where an arm whose motors are off comes to rest.
 */
export function startPose(rig: Pick<PreflightPart, 'joints' | 'plant'>): number[] {
  return rig.plant ? rig.plant.start.slice(0, rig.joints) : Array.from({ length: rig.joints }, (_, i) => (i === 0 ? -Math.PI / 2 : 0));
}

export interface PreflightOptions {
  /** Where the arm starts [rad]. @default startPose(rig) */
  from?: readonly number[];
  /** The way back to the start after each path, as the runner asks for it. @default true */
  park?: boolean;
  /** The run starts again with the first path when the last is done (checked once round). */
  cycle?: boolean;
  /** What to call a path in a message. @default `trajectory "<name>"` */
  what?: (path: PathSpec) => string;
  model?: ActuatedArmModel;
}

const fmtPose = (q: readonly number[]): string => `${q.map((x) => (x * DEG).toFixed(1)).join(', ')} deg`;

/**
 * Checks the trajectories the loop will run, before anything moves: each path as LoopCore plans it
 * (plan.ts), the approach from where the arm is and (with park) the way back included, from the start
 * pose in turn. Throws a FeasibilityError naming the path, the phase, the time and the joint.
 */
export function preflight(rig: PreflightPart, paths: readonly PathSpec[], o: PreflightOptions = {}): void {
  const model = o.model ?? createActuatedArmModel(rig);
  const park = o.park ?? true;
  const what = o.what ?? ((p: PathSpec) => `trajectory "${p.name}"`);
  let q0 = (o.from ?? startPose(rig)).slice();
  const order = o.cycle && !park && paths.length ? [...paths, paths[0]!] : paths;
  for (const spec of order) {
    const plan = planPath(rig.arm, rig.limits, spec, q0, park);
    const b = firstBreach(rig, plan.traj, model);
    if (b) throw breachError(b, plan, spec.name, what(spec), q0, park, 'the start pose');
    q0 = plan.endQ;
  }
}

/** A planned path's trajectory and where its phases end. */
type PlannedSpan = Pick<PlannedPath, 'traj' | 'approachEnd' | 'trackEnd'>;

/** The FeasibilityError of breach `b` of `plan`: the path, its phase, the time in the phase, the joint. */
function breachError(b: Breach, plan: PlannedSpan, name: string, what: string, q0: readonly number[], park: boolean, from: string): FeasibilityError {
  const phase: PlannedPhase = b.t < plan.approachEnd ? 'approach' : b.t <= plan.trackEnd || !park ? 'track' : 'park';
  const at = (t: number): string => `at t = ${t.toFixed(3)} s`;
  const where =
    phase === 'approach'
      ? `${what}: its approach from ${from} (${fmtPose(q0)}) ${at(b.t)} of the approach`
      : phase === 'park'
        ? `${what}: its way back to ${from} (${fmtPose(q0)}, park) ${at(b.t - plan.trackEnd)} of the way back`
        : `${what} ${at(b.t - plan.approachEnd)}`;
  return new FeasibilityError(`${where}, joint ${b.joint + 1}: ${b.detail}`, b.t - (phase === 'track' ? plan.approachEnd : phase === 'park' ? plan.trackEnd : 0), b.joint, phase, name);
}

/**
 * At a trajectory's start in the loop: the parts of `plan` that depend on where the arm really is
 * (the approach from the measured pose `q0`, and with park the way back to it), which `preflight`
 * checked from the pose it assumed (on a port, before the board said where the arm is). Every 10 ms:
 * the approach and the way back are minimum-jerk moves of 0.5 s or more (plan.ts moveTime), smooth
 * enough that a 100 Hz sampling meets their peak torque within about 0.1 %, and the loop's thread
 * spends well under a millisecond on it, not the tens a 1 kHz check of a whole path takes. Throws a
 * FeasibilityError naming the phase and the joint.
 */
export function checkFromPose(rig: FeasibilityPart, plan: PlannedSpan, name: string, q0: readonly number[], park: boolean, model: ActuatedArmModel): void {
  const what = `trajectory "${name}"`;
  const a = plan.approachEnd > 0 ? firstBreach(rig, plan.traj, model, 0, plan.approachEnd, 0.01) : undefined;
  if (a) throw breachError(a, plan, name, what, q0, park, 'where the arm is');
  const p = park && plan.trackEnd < plan.traj.duration ? firstBreach(rig, plan.traj, model, plan.trackEnd, plan.traj.duration, 0.01) : undefined;
  if (p) throw breachError(p, plan, name, what, q0, park, 'where the arm was');
}

/** A torque for a message: two decimals, or two significant digits below 0.01 N m (never "0.00"). */
function nm(x: number): string {
  const a = Math.abs(x);
  return a === 0 || a >= 0.01 ? a.toFixed(2) : a.toPrecision(2);
}

/**
 * Why joint `i` cannot have the torque `need` [N m] at speed `v` [rad/s]: the torque limit or the motor
 * (`avail` [N m] is the smaller); when the motor gives nothing in that direction (its back-EMF at that
 * speed is above the supply), the joint is faster than the motor's no-load speed, and that is said.
 */
function torqueMessage(rig: FeasibilityPart, i: number, need: number, avail: number, v: number): string {
  const lim = rig.limits[i]!;
  const dir = need >= 0 ? 'positive' : 'negative';
  if (avail <= 0) {
    const m = rig.motors[i]!;
    const noLoad = (rig.maxDuty * rig.supplyV) / (m.ke * m.gear);
    return (
      `needs ${nm(need)} N m (${dir}) at ${(v * DEG).toFixed(0)} deg/s, where the motor gives no ${dir} torque at all: ` +
      `the joint moves faster than the motor's no-load speed ${(noLoad * DEG).toFixed(0)} deg/s (maxDuty Vs / (ke N)): slow it down`
    );
  }
  // Enough digits that what is needed and what is available never read the same.
  let digits = 2;
  while (digits < 6 && Math.abs(need).toFixed(digits) === avail.toFixed(digits)) digits++;
  const show = (x: number): string => (digits === 2 ? nm(x) : Math.abs(x).toFixed(digits));
  const by = avail < lim.maxTorque ? `the motor at ${(v * DEG).toFixed(0)} deg/s` : `the torque limit limits[${i}].maxTorqueNm`;
  return `needs ${show(need)} N m but only ${show(avail)} N m is available (${by}; torque limit ${lim.maxTorque} N m): slow it down or lighten the load`;
}
