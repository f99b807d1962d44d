/**
 * The excitation: a sum of sines per joint about a centre pose (the `sines` step of
 * src/model/trajectory.ts), windowed so that it starts and ends at rest, scaled so that the nominal
 * model keeps it inside a fraction of the rig's angle, speed and torque limits, with the phases and
 * the amplitude mix chosen (a seeded random search) for the best-conditioned regressor.
 *
 * Frequencies are spread over a decade and a half below `maxFrequencyHz` and interleaved between the
 * joints (joint 1 never shares a frequency with joint 2, so their motions do not correlate); each
 * sine's amplitude is inversely proportional to its frequency (every sine adds about the same speed),
 * times a random factor the search varies. The condition number is that of the regressor with its
 * columns scaled to unit norm (units do not matter then), along the designed trajectory.
 */
import { mulberry32 as prng } from '../model/random.js';
import { Matrix } from 'ml-matrix';
import type { Rig } from '../config/load.js';
import { twoLinkArm } from '../config/load.js';
import { createActuatedArmModel, motorTorqueLimit, type ActuatedArmModel } from '../model/actuated.js';
import type { PathSpec } from '../model/builtins.js';
import { asOutPair, asPair, J, mapPair, pairOf, type Pair, type PairOf, type ReadonlyPair } from '../model/types.js';
import { buildPath, type SineComponent, type Trajectory, type TrajectorySample } from '../model/trajectory.js';
import { conditionNumber } from './lsq.js';
import {
  modelBaseParameters,
  P,
  predictTorque,
  regressorConstants,
  regressorRows,
  toVector,
  type RegressorConstants,
} from './regressor.js';

const DEG = Math.PI / 180;

/** How to design an excitation. Angles [rad], times [s]. */
export interface ExcitationOptions {
  /**
   * Fraction (0..1] of the room between the centre and the nearer joint limit (less a 10 deg margin)
   * and of each joint's speed limit that the excitation may use. @default 0.6
   */
  amplitude?: number;
  /**
   * Fraction (0..1] of the torque available (the torque limit, and what the motor gives at that speed)
   * that the nominal model may need anywhere on the excitation; the rest is the PID's. @default 0.8
   */
  torque?: number;
  /** Length of the sum of sines [s], ramps included. @default 30 */
  duration?: number;
  /** Window ramps at both ends [s]. @default 2 */
  ramp?: number;
  /** Highest frequency [Hz]. @default 1.5 */
  maxFrequencyHz?: number;
  /** Sines per joint. @default 5 */
  harmonics?: number;
  /** Centre pose [rad]. @default joint 1 as near hanging (-90 deg) as leaves a quarter turn of room, joint 2 straight (0) */
  centre?: readonly number[];
  /** Seed of the search: another seed gives another trajectory. @default 1 */
  seed?: number;
  /** Candidates tried. @default 48 */
  candidates?: number;
  /** Name of the path. @default 'excitation' */
  name?: string;
}

/** A designed excitation. */
export interface Excitation {
  path: PathSpec;
  /** Condition number of the column-scaled regressor along the trajectory (nominal model, desired states). */
  condition: number;
  /** Largest excursion from the centre [rad], speed [rad/s] and nominal torque [N m] per joint. */
  peak: { angle: number[]; speed: number[]; torque: number[] };
  /** The centre pose [rad]. */
  centre: number[];
}

/** An ExcitationError: no excitation fits in the rig's limits (the message says which). */
export class ExcitationError extends Error {
  override readonly name = 'ExcitationError';
}

const MARGIN = 10 * DEG;

/** The default centre: joint 1 as near hanging as leaves a quarter turn of room each way, joint 2 straight; both inside the limits. */
export function defaultCentre(rig: Rig): number[] {
  return rig.limits.slice(0, 2).map((l, i) => {
    const lo = l.min + MARGIN;
    const hi = l.max - MARGIN;
    const room = Math.min(90 * DEG, (hi - lo) / 2);
    return Math.min(Math.max(i === 0 ? -90 * DEG : 0, lo + room), hi - room);
  });
}

interface Evaluated {
  angle: Pair;
  speed: Pair;
  /** Largest |tau| / available torque over the trajectory, per joint. */
  load: Pair;
  torque: Pair;
}

/** Samples a trajectory at `rateHz` and measures what the nominal model says it needs. */
function evaluate(
  rig: Rig,
  model: ActuatedArmModel,
  traj: Trajectory,
  centre: ReadonlyPair,
  theta: readonly number[],
  c: RegressorConstants,
  rateHz: number,
): Evaluated {
  const e: Evaluated = { angle: [0, 0], speed: [0, 0], load: [0, 0], torque: [0, 0] };
  const q: Pair = [0, 0];
  const qd: Pair = [0, 0];
  const s: TrajectorySample = { t: 0, q, qd, qdd: [0, 0], qddd: [0, 0] };
  const tau: Pair = [0, 0];
  const limits = asPair(rig.limits, `${rig.file}: limits`);
  const rows = new Array<number>(2 * P).fill(0);
  const n = Math.ceil(traj.duration * rateHz);
  for (let k = 0; k <= n; k++) {
    traj.sample((k / n) * traj.duration, s);
    predictTorque(c, theta, s.q, s.qd, s.qdd, tau, rows);
    for (const i of J) {
      e.angle[i] = Math.max(e.angle[i], Math.abs(q[i] - centre[i]));
      e.speed[i] = Math.max(e.speed[i], Math.abs(qd[i]));
      e.torque[i] = Math.max(e.torque[i], Math.abs(tau[i]));
      const motor = motorTorqueLimit(model, i, rig.maxDuty, qd[i], tau[i]);
      const avail = Math.max(1e-9, Math.min(limits[i].maxTorque, motor));
      e.load[i] = Math.max(e.load[i], Math.abs(tau[i]) / avail);
    }
  }
  return e;
}

/** Condition number of the column-scaled regressor along `traj` sampled at `rateHz` (desired states). */
export function trajectoryCondition(traj: Trajectory, c: RegressorConstants, rateHz = 50): number {
  const n = Math.ceil(traj.duration * rateHz);
  const A = new Matrix(2 * (n + 1), P);
  const s: TrajectorySample = { t: 0, q: [0, 0], qd: [0, 0], qdd: [0, 0], qddd: [0, 0] };
  const rows = new Array<number>(2 * P).fill(0);
  for (let k = 0; k <= n; k++) {
    traj.sample((k / n) * traj.duration, s);
    regressorRows(c, s.q, s.qd, s.qdd, rows);
    for (const j of J) for (let p = 0; p < P; p++) A.set(2 * k + j, p, rows[j * P + p]!);
  }
  for (let p = 0; p < P; p++) {
    const norm = Math.hypot(...A.getColumn(p));
    if (norm > 0) for (let r = 0; r < A.rows; r++) A.set(r, p, A.get(r, p) / norm);
  }
  return conditionNumber(A).condition;
}

/** Room [rad] each joint has about `centre` inside its limits less the margin; none is an ExcitationError. */
function roomAbout(rig: Rig, centre: ReadonlyPair): Pair {
  const limits = asPair(rig.limits, `${rig.file}: limits`);
  const room = mapPair(centre, (q, i) => Math.min(q - (limits[i].min + MARGIN), limits[i].max - MARGIN - q));
  for (const i of J) {
    if (!(room[i] > 2 * DEG)) {
      throw new ExcitationError(
        `joint ${i + 1}: the centre ${(centre[i] / DEG).toFixed(1)} deg leaves no room inside the limits (less a ${MARGIN / DEG} deg margin)`,
      );
    }
  }
  return room;
}

/** What scaleIntoLimits needs of the design: the rig, its model and the allowed fractions. */
interface Scaling {
  rig: Rig;
  model: ActuatedArmModel;
  theta: ReturnType<typeof toVector>;
  c: RegressorConstants;
  rate: number;
  centre: Pair;
  room: Pair;
  /** Fraction of the angle room and speed limits. */
  f: number;
  /** Fraction of the torque available. */
  ft: number;
  build: (sines: SineComponent[][], name: string) => Trajectory;
}

/**
 * One candidate `shape` scaled so that each joint's angle and speed use the allowed fraction of the
 * limits, then both shrunk (bisection) until the torque fits too; an ExcitationError when holding the
 * centre alone takes more torque than allowed.
 */
function scaleIntoLimits(d: Scaling, shape: PairOf<SineComponent[]>): { sines: PairOf<SineComponent[]>; e: Evaluated } {
  const { rig, model, theta, c, rate, centre, room, f, ft, build } = d;
  // Scale each joint so that its angle and speed use the allowed fraction of the limits...
  const unit = evaluate(rig, model, build(shape, 'probe'), centre, theta, c, rate);
  const limits = asPair(rig.limits, `${rig.file}: limits`);
  let scale = pairOf((i) => Math.min((f * room[i]) / unit.angle[i], (f * limits[i].maxVel) / unit.speed[i]));
  const scaled = (k: number): PairOf<SineComponent[]> =>
    mapPair(shape, (js, i) => js.map((s) => ({ ...s, amplitude: s.amplitude * scale[i] * k })));
  // ... then shrink both (bisection) until the torque fits too.
  let e = evaluate(rig, model, build(scaled(1), 'probe'), centre, theta, c, rate);
  if (Math.max(...e.load) > ft) {
    const still = evaluate(rig, model, build(scaled(0), 'probe'), centre, theta, c, rate);
    if (Math.max(...still.load) > ft) {
      const j = still.load[0] > ft ? 0 : 1;
      throw new ExcitationError(
        `joint ${j + 1}: holding the centre pose [${centre.map((v) => (v / DEG).toFixed(0)).join(', ')}] deg takes ${(still.load[j] * 100).toFixed(0)}% of the torque available, more than the ${(ft * 100).toFixed(0)}% allowed: choose another centre (nearer hanging)`,
      );
    }
    let lo = 0;
    let hi = 1;
    for (let it = 0; it < 14; it++) {
      const mid = (lo + hi) / 2;
      if (Math.max(...evaluate(rig, model, build(scaled(mid), 'probe'), centre, theta, c, rate).load) > ft) hi = mid;
      else lo = mid;
    }
    scale = mapPair(scale, (s) => s * lo);
    e = evaluate(rig, model, build(scaled(1), 'probe'), centre, theta, c, rate);
  }
  return { sines: scaled(1), e };
}

/**
 * Designs the excitation for a two-link rig: the best of `candidates` random phase and amplitude
 * mixes, each scaled into the limits. Throws an ExcitationError when no motion fits (gravity alone
 * needs more than the allowed torque at the centre, or the joint range is too small).
 */
export function designExcitation(rig: Rig, o: ExcitationOptions = {}): Excitation {
  const arm = twoLinkArm(rig);
  const f = o.amplitude ?? 0.6;
  if (!(f > 0 && f <= 1)) throw new RangeError(`"amplitude" must be in (0, 1], got ${f}`);
  const ft = o.torque ?? 0.8;
  if (!(ft > 0 && ft <= 1)) throw new RangeError(`"torque" must be in (0, 1], got ${ft}`);
  const duration = o.duration ?? 30;
  const ramp = Math.min(o.ramp ?? 2, duration / 4);
  const fmax = o.maxFrequencyHz ?? 1.5;
  const H = o.harmonics ?? 5;
  const centre = asOutPair((o.centre ?? defaultCentre(rig)).slice(0, 2), 'the excitation centre');
  const rnd = prng(o.seed ?? 1);
  const model = createActuatedArmModel(rig);
  const c = regressorConstants(model);
  const theta = toVector(modelBaseParameters(model));
  const room = roomAbout(rig, centre);
  // 2H frequencies, log-spaced from fmax / 12 to fmax, dealt alternately to the joints.
  const freqs = Array.from({ length: 2 * H }, (_, k) => fmax * Math.pow(12, (k - (2 * H - 1)) / (2 * H - 1)));
  const perJoint = pairOf((j) => freqs.filter((_, k) => k % 2 === j));
  const build = (sines: SineComponent[][], name: string): Trajectory =>
    buildPath(arm, { q: centre }, [{ kind: 'sines', sines, ramp, duration }], name);
  const rate = Math.max(100, 20 * fmax);
  let best: { sines: SineComponent[][]; condition: number; e: Evaluated } | undefined;
  const tries = o.candidates ?? 48;
  for (let cand = 0; cand < tries; cand++) {
    const shape = mapPair(perJoint, (fs) =>
      fs.map((fk) => ({ amplitude: (0.5 + rnd()) / fk, frequencyHz: fk, phase: 2 * Math.PI * rnd() })),
    );
    const { sines, e } = scaleIntoLimits({ rig, model, theta, c, rate, centre, room, f, ft, build }, shape);
    const condition = trajectoryCondition(build(sines, 'probe'), c);
    if (!best || condition < best.condition) best = { sines, condition, e };
  }
  const b = best!;
  const name = o.name ?? 'excitation';
  const description =
    `${name === 'excitation' ? 'identification excitation' : `${name} trajectory`}: ${H} sines per joint from ${freqs[0]!.toFixed(2)} to ${fmax.toFixed(2)} Hz about ` +
    `[${centre.map((v) => (v / DEG).toFixed(0)).join(', ')}] deg, ${duration} s, within ${(f * 100).toFixed(0)}% of the angle and speed limits and ${(ft * 100).toFixed(0)}% of the torque ` +
    `(regressor condition number ${b.condition.toFixed(1)})`;
  return {
    path: {
      name,
      description,
      start: { q: centre },
      steps: [
        { kind: 'hold', duration: 0.5 },
        { kind: 'sines', sines: b.sines, ramp, duration },
        { kind: 'hold', duration: 0.5 },
      ],
    },
    condition: b.condition,
    peak: { angle: b.e.angle, speed: b.e.speed, torque: b.e.torque },
    centre,
  };
}
