/**
 * Checks a trajectory against the rig before the arm moves: joint limits, speed limits, and the
 * torque the nominal model says it needs against the torque limit and what the motor can give at that
 * speed. A trajectory that fails is refused with the time and the joint.
 *
 * One- and two-link rigs alike (`rig.joints`): samples, torques, limits and motors are indexed per
 * joint, so an index keeps its `!` (they are not Pairs).
 */
import type { FeasibilityPart } from '../config/parts.js';
import {
  computeInverseDynamics,
  createActuatedArmData,
  createActuatedArmModel,
  motorTorqueLimit,
  type ActuatedArmModel,
} from '../model/actuated.js';
import { scalePath, type PathSpec } from '../model/builtins.js';
import { driverLabel } from '../model/driver.js';
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
    /**
     * The fastest `--speed` at which the paths fit the motors with FEASIBLE_HEADROOM to spare
     * (`preflight` with `speed`), or null when none down to the slowest does; absent when not asked.
     */
    readonly feasibleSpeed?: number | null,
  ) {
    super(message);
  }
}

/**
 * The share of what a motor can give that a plan may ask for through a declared H-bridge, and at a
 * suggested `--speed`: the model is nominal (the mock arm's links are 12-15 % heavier than its rig
 * file says) and the PID needs room to correct, so a plan that needs all of the motor ends in a
 * following-error stop mid-motion instead of a refusal before it. Measured on rigs/mock-arm-l298n.json
 * (virtual time): the reach needing 0.91 of the nominal L298N's torque (--speed 0.8) stopped on a
 * following error, 0.875 to 0.90 (0.65 to 0.75) was done.
 */
export const FEASIBLE_HEADROOM = 0.88;

/** The `--speed` steps the suggestion searches, downwards from the speed asked [x]. */
const SPEED_STEP = 0.05;

const DEG = 180 / Math.PI;

/** The first sample that breaks a limit: its time on the trajectory [s], the joint, which limit, and what is wrong. */
interface Breach {
  t: number;
  joint: number;
  /** The joint's range (no speed helps), its speed limit, or the torque. */
  kind: 'angle' | 'speed' | 'torque';
  detail: string;
}

/**
 * The most samples one check takes. The check's cost grew with the trajectory's length: a rig file
 * whose limits made a move last ~forever (a speed limit of a hair above 0, found by the inputs bench's
 * fuzz) kept the loop's thread in checkFromPose for good. Beyond it the samples are spread evenly, which
 * for a minimum-jerk move (whose features scale with its duration) loses nothing; a path of more than
 * MAX_SAMPLES x stepS (1000 s at 1 kHz) is checked more coarsely than `stepS`.
 */
export const MAX_SAMPLES = 1_000_000;

/**
 * The first sample (every `stepS`, 1 kHz by default, at most `maxSamples` of them) of `traj` in
 * [from, to] [s] that breaks a limit of `rig`, or undefined; `headroom` (0..1) is the share of the
 * available torque it may use. A span that is not finite is a FeasibilityError.
 */
function firstBreach(
  rig: FeasibilityPart,
  traj: Trajectory,
  model: ActuatedArmModel,
  from = 0,
  to = traj.duration,
  stepS = 0.001,
  headroom = 1,
  maxSamples = MAX_SAMPLES,
): Breach | undefined {
  const n = rig.joints;
  const data = createActuatedArmData(model);
  if (!Number.isFinite(to - from))
    throw new FeasibilityError(`a trajectory from ${from} s to ${to} s: its length is not a finite number`, from, 0);
  const steps = Math.min(maxSamples, Math.max(1, Math.ceil((to - from) / stepS)));
  const s = {
    t: 0,
    q: new Array<number>(n).fill(0),
    qd: new Array<number>(n).fill(0),
    qdd: new Array<number>(n).fill(0),
    qddd: new Array<number>(n).fill(0),
  };
  for (let k = 0; k <= steps; k++) {
    const t = from + (k / steps) * (to - from);
    traj.sample(t, s);
    const tau = computeInverseDynamics(model, data, s.q, s.qd, s.qdd);
    for (let i = 0; i < n; i++) {
      const lim = rig.limits[i]!;
      const q = s.q[i]!;
      if (q < lim.min - 1e-9 || q > lim.max + 1e-9) {
        const o = outsideText(q * DEG, lim.min * DEG, lim.max * DEG);
        return { t, joint: i, kind: 'angle', detail: `angle ${o.value} deg is outside the joint limits ${o.range} deg` };
      }
      const v = s.qd[i]!;
      if (Math.abs(v) > lim.maxVel + 1e-9) {
        return {
          t,
          joint: i,
          kind: 'speed',
          detail: `speed ${beyondText(Math.abs(v) * DEG, lim.maxVel * DEG, 'above', 0)} deg/s is beyond the limit ${boundText(lim.maxVel * DEG)} deg/s (slow it down: a longer duration)`,
        };
      }
      const need = tau[i]!;
      const avail = Math.min(lim.maxTorque, motorTorqueLimit(model, i, rig.maxDuty, v, need));
      const share = hasDriver(rig, i) ? Math.min(headroom, FEASIBLE_HEADROOM) : headroom;
      if (Math.abs(need) > avail * share) return { t, joint: i, kind: 'torque', detail: torqueMessage(rig, i, need, avail, v, share) };
    }
  }
  return undefined;
}

/**
 * Throws a FeasibilityError at the first sample (1 kHz) that breaks a limit. The torque needed is the
 * inverse dynamics of `model` (default: the rig's nominal actuated arm, rotors and friction included).
 */
export function checkFeasible(
  rig: FeasibilityPart,
  traj: Trajectory,
  what = 'the trajectory',
  model: ActuatedArmModel = createActuatedArmModel(rig),
): void {
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
  /**
   * The paths run at `--speed` `at` (they are scaled already): a refusal that a slower speed, down to
   * `min`, would cure names the fastest such speed (with FEASIBLE_HEADROOM) in its message and in
   * FeasibilityError.feasibleSpeed, or says that none does.
   */
  speed?: { at: number; min: number };
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
  const hit = scanPaths(rig, paths, model, o, 1);
  if (!hit) return;
  const e = breachError(hit.b, hit.plan, hit.spec.name, what(hit.spec), hit.q0, park, 'the start pose');
  if (!o.speed || hit.b.kind === 'angle') throw e;
  const speed = fastestFeasibleSpeed(rig, paths, model, o, o.speed.at, o.speed.min);
  const advice =
    speed !== null
      ? `; at --speed ${speed} it fits, with ${Math.round((1 - FEASIBLE_HEADROOM) * 100)} % of the torque to spare`
      : `; no --speed down to ${o.speed.min} fits it${hit.b.t < hit.plan.approachEnd ? ' (the approach does not slow down with --speed)' : ''}: a stronger driver or motor, a higher supply, or a lighter load`;
  throw new FeasibilityError(`${e.message}${advice}`, e.t, e.joint, e.phase, e.trajectory, speed);
}

/** The first breach of `paths` run `factor` times as fast as given (with `headroom`), from the start pose in turn, and where. */
function scanPaths(
  rig: PreflightPart,
  paths: readonly PathSpec[],
  model: ActuatedArmModel,
  o: PreflightOptions,
  factor: number,
  headroom = 1,
): { b: Breach; plan: PlannedPath; spec: PathSpec; q0: number[] } | undefined {
  const park = o.park ?? true;
  let q0 = (o.from ?? startPose(rig)).slice();
  const order = o.cycle && !park && paths.length ? [...paths, paths[0]!] : paths;
  for (const given of order) {
    const spec = factor === 1 ? given : scalePath(given, factor);
    const plan = planPath(rig.arm, rig.limits, spec, q0, park);
    const b = firstBreach(rig, plan.traj, model, 0, plan.traj.duration, 0.001, headroom);
    if (b) return { b, plan, spec: given, q0 };
    q0 = plan.endQ;
  }
  return undefined;
}

/**
 * The fastest --speed below `at`, in SPEED_STEP steps down to `min`, at which every path fits the
 * motors with FEASIBLE_HEADROOM to spare (the search a person would do by hand, run by run), or null.
 */
function fastestFeasibleSpeed(
  rig: PreflightPart,
  paths: readonly PathSpec[],
  model: ActuatedArmModel,
  o: PreflightOptions,
  at: number,
  min: number,
): number | null {
  for (let k = Math.ceil(at / SPEED_STEP - 1e-9) - 1; k * SPEED_STEP >= min - 1e-9; k--) {
    const speed = Number((k * SPEED_STEP).toFixed(2));
    if (!scanPaths(rig, paths, model, o, speed / at, FEASIBLE_HEADROOM)) return speed;
  }
  return null;
}

/** A planned path's trajectory and where its phases end. */
type PlannedSpan = Pick<PlannedPath, 'traj' | 'approachEnd' | 'trackEnd'>;

/** The FeasibilityError of breach `b` of `plan`: the path, its phase, the time in the phase, the joint. */
function breachError(
  b: Breach,
  plan: PlannedSpan,
  name: string,
  what: string,
  q0: readonly number[],
  park: boolean,
  from: string,
): FeasibilityError {
  const phase: PlannedPhase = b.t < plan.approachEnd ? 'approach' : b.t <= plan.trackEnd || !park ? 'track' : 'park';
  const at = (t: number): string => `at t = ${t.toFixed(3)} s`;
  const where =
    phase === 'approach'
      ? `${what}: its approach from ${from} (${fmtPose(q0)}) ${at(b.t)} of the approach`
      : phase === 'park'
        ? `${what}: its way back to ${from} (${fmtPose(q0)}, park) ${at(b.t - plan.trackEnd)} of the way back`
        : `${what} ${at(b.t - plan.approachEnd)}`;
  return new FeasibilityError(
    `${where}, joint ${b.joint + 1}: ${b.detail}`,
    b.t - (phase === 'track' ? plan.approachEnd : phase === 'park' ? plan.trackEnd : 0),
    b.joint,
    phase,
    name,
  );
}

/** The most samples checkFromPose takes of each move (on the loop's thread): 20 s of move at 100 Hz, a longer move more coarsely. */
export const FROM_POSE_SAMPLES = 2000;

/**
 * At a trajectory's start in the loop: the parts of `plan` that depend on where the arm really is
 * (the approach from the measured pose `q0`, and with park the way back to it), which `preflight`
 * checked from the pose it assumed (on a port, before the board said where the arm is). Every 10 ms:
 * the approach and the way back are minimum-jerk moves of 0.5 s or more (plan.ts moveTime), smooth
 * enough that a 100 Hz sampling meets their peak torque within about 0.1 %, and the loop's thread
 * spends well under a millisecond on it, not the tens a 1 kHz check of a whole path takes. Throws a
 * FeasibilityError naming the phase and the joint.
 */
export function checkFromPose(
  rig: FeasibilityPart,
  plan: PlannedSpan,
  name: string,
  q0: readonly number[],
  park: boolean,
  model: ActuatedArmModel,
): void {
  const what = `trajectory "${name}"`;
  const a = plan.approachEnd > 0 ? firstBreach(rig, plan.traj, model, 0, plan.approachEnd, 0.01, 1, FROM_POSE_SAMPLES) : undefined;
  if (a) throw breachError(a, plan, name, what, q0, park, 'where the arm is');
  const p =
    park && plan.trackEnd < plan.traj.duration
      ? firstBreach(rig, plan.traj, model, plan.trackEnd, plan.traj.duration, 0.01, 1, FROM_POSE_SAMPLES)
      : undefined;
  if (p) throw breachError(p, plan, name, what, q0, park, 'where the arm was');
}

/** Joint `i`'s motor has a declared H-bridge (not the ideal one). */
function hasDriver(rig: FeasibilityPart, i: number): boolean {
  const d = rig.motors[i]?.driver;
  return d !== undefined && d.preset !== 'ideal';
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
function torqueMessage(rig: FeasibilityPart, i: number, need: number, avail: number, v: number, share = 1): string {
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
  const d = rig.motors[i]?.driver;
  const motor = d && d.preset !== 'ideal' ? `the motor through its ${driverLabel(d)} on the ${rig.supplyV} V supply` : 'the motor';
  const by = avail < lim.maxTorque ? `${motor} at ${(v * DEG).toFixed(0)} deg/s` : `the torque limit limits[${i}].maxTorqueNm`;
  if (Math.abs(need) <= avail) {
    return (
      `needs ${nm(need)} N m of the ${nm(avail)} N m available (${by}; torque limit ${lim.maxTorque} N m): more than the ` +
      `${Math.round(share * 100)} % twolink plans with through a declared H-bridge (the rest is for the model's errors): slow it down or lighten the load`
    );
  }
  return `needs ${show(need)} N m but only ${show(avail)} N m is available (${by}; torque limit ${lim.maxTorque} N m): slow it down or lighten the load`;
}
