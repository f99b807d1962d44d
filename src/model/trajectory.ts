/**
 * Minimum-jerk trajectories (seed 002) in joint space and in endpoint space, chained through via
 * points.
 *
 * Each segment is rest-to-rest: the quintic s(tau) = 10 tau^3 - 15 tau^4 + 6 tau^5 starts and ends
 * with zero velocity and acceleration, so segments join with continuous position, velocity and
 * acceleration. Endpoint-space segments go through inverse kinematics, and their joint velocities,
 * accelerations and jerks come from the Jacobian (solving J qd = v, J qdd = a - Jdot qd, and the jerk
 * equivalent), not from finite differences.
 *
 * The straight- and folded-elbow boundaries of the workspace (|p| = L1 + L2 and |p| = |L1 - L2|) are
 * singular: J loses rank there. A minimum-jerk path that leaves the outer boundary from rest (as
 * seed 002's reach does, from (L1 + L2, 0)) moves radially as t^3, so alpha2 grows as t^1.5 and the
 * joint acceleration grows without bound as t^-0.5 near the start. Such a path is refused with a
 * TrajectoryError naming the singularity and the time, before any sample is computed; a path that
 * only rests on the boundary (a hold) has the finite limit qd = qdd = 0.
 */
import { endpoint as fkEndpoint, inverseKinematics, REACH_TOLERANCE, type Elbow } from './kinematics.js';
import { asOutPair, asPair, isTwoLink, J, type ArmParams, type Pair, type ReadonlyPair, type TwoLinkParams } from './types.js';
import { SampledSegment, sampledDuration } from './sampled-path.js';

/** The desired state at one instant. Arrays have one entry per joint. */
export interface TrajectorySample {
  /** [s] */
  t: number;
  /** Joint angles [rad]. */
  q: number[];
  /** [rad/s] */
  qd: number[];
  /** [rad/s^2] */
  qdd: number[];
  /** [rad/s^3] */
  qddd: number[];
}

/** A trajectory that can be sampled at any time in [0, duration] (clamped outside). */
export interface Trajectory {
  readonly joints: number;
  /** [s] */
  readonly duration: number;
  /** One line for people: what the trajectory does. */
  readonly description: string;
  /** The desired state at time t [s], written into `out` when given. */
  sample(t: number, out?: TrajectorySample): TrajectorySample;
}

/** A trajectory that cannot be built: it names the time and, where it applies, the joint. */
export class TrajectoryError extends Error {
  override readonly name = 'TrajectoryError';
  constructor(
    message: string,
    /** Time of the problem on the trajectory [s]. */
    readonly t?: number,
    /** Joint index (0-based) concerned, if one. */
    readonly joint?: number,
    /** The part of the path at fault, when the problem is in the path's spec (the start or a step), and the problem without it. */
    readonly place?: { at: PathPlace; detail: string },
  ) {
    super(message);
  }
}

/** A part of a path's spec: its start, or its step `step` (0-based) of kind `kind`. */
export type PathPlace = { start: true } | { step: number; kind: PathStep['kind'] };

/** The problem `detail` at `at` of the path's spec, as people read it: `step 2 (line): ...`, `start: ...`. */
function placed(at: PathPlace, detail: string, t?: number, joint?: number): TrajectoryError {
  const where = 'start' in at ? 'start' : `step ${at.step + 1} (${at.kind})`;
  return new TrajectoryError(`${where}: ${detail}`, t, joint, { at, detail });
}

/** A minimum-jerk profile's value and its first three derivatives, [s, s', s'', s''']. */
export type MinJerk = [number, number, number, number];

/** An endpoint's state on a curve: [x, y, vx, vy, ax, ay, jx, jy] [m, m/s, m/s^2, m/s^3]. */
export type EndpointState = [number, number, number, number, number, number, number, number];

/** Normalised minimum-jerk profile at tau in [0, 1]: s and its derivatives with respect to tau. */
export function minJerkProfile(tau: number, out?: MinJerk): MinJerk;
export function minJerkProfile(tau: number, out: number[]): number[];
export function minJerkProfile(tau: number, out: number[] = [0, 0, 0, 0]): number[] {
  const x = tau <= 0 ? 0 : tau >= 1 ? 1 : tau;
  const x2 = x * x;
  const x3 = x2 * x;
  out[0] = x3 * (10 - 15 * x + 6 * x2);
  out[1] = 30 * x2 * (1 - 2 * x + x2);
  out[2] = 60 * x * (1 - 3 * x + 2 * x2);
  out[3] = 60 - 360 * x + 360 * x2;
  if (tau <= 0 || tau >= 1) {
    out[1] = 0;
    out[2] = 0;
    out[3] = 0;
  }
  return out;
}

function emptySample(n: number): TrajectorySample {
  const zeros = (): number[] => new Array<number>(n).fill(0);
  return { t: 0, q: zeros(), qd: zeros(), qdd: zeros(), qddd: zeros() };
}

// ---------------------------------------------------------------------------------------------
// Segments

/** One piece of a piecewise trajectory, in its local time [0, duration]. */
interface Segment {
  readonly duration: number;
  readonly qStart: readonly number[];
  readonly qEnd: readonly number[];
  readonly what: string;
  /** Writes the state at local time t; `t0` is the segment's start on the whole trajectory (for errors). */
  sample(t: number, t0: number, out: TrajectorySample): void;
}

class JointSegment implements Segment {
  private readonly s: MinJerk = [0, 0, 0, 0];
  readonly what: string;
  constructor(
    readonly qStart: readonly number[],
    readonly qEnd: readonly number[],
    readonly duration: number,
  ) {
    this.what = `joint space to [${qEnd.map((v) => ((v * 180) / Math.PI).toFixed(1)).join(', ')}] deg`;
  }
  sample(t: number, _t0: number, out: TrajectorySample): void {
    const D = this.duration;
    const s: MinJerk = D > 0 ? minJerkProfile(t / D, this.s) : [1, 0, 0, 0];
    for (let i = 0; i < this.qStart.length; i++) {
      const dq = this.qEnd[i]! - this.qStart[i]!;
      out.q[i] = this.qStart[i]! + dq * s[0];
      out.qd[i] = D > 0 ? (dq * s[1]) / D : 0;
      out.qdd[i] = D > 0 ? (dq * s[2]) / (D * D) : 0;
      out.qddd[i] = D > 0 ? (dq * s[3]) / (D * D * D) : 0;
    }
  }
}

/** One sine of a joint's excitation: amplitude [rad], frequency [Hz], phase [rad]. */
export interface SineComponent {
  /** [rad] */
  amplitude: number;
  /** [Hz] */
  frequencyHz: number;
  /** [rad] @default 0 */
  phase?: number;
}

/**
 * A sum of sines per joint about the pose where the step starts, q(t) = q0 + w(t) sum a sin(2 pi f t + phi),
 * under a window w that rises from 0 to 1 over `ramp` with the minimum-jerk profile and falls back the
 * same way at the end: the step starts and ends at rest (qd = qdd = 0) at q0, whatever the phases. It
 * is the excitation of identification (src/identify): many frequencies per joint, bounded amplitude.
 */
class SinesSegment implements Segment {
  private readonly up: MinJerk = [0, 0, 0, 0];
  private readonly down: MinJerk = [0, 0, 0, 0];
  readonly qEnd: readonly number[];
  readonly what: string;
  constructor(
    readonly qStart: readonly number[],
    private readonly sines: readonly (readonly SineComponent[])[],
    private readonly ramp: number,
    readonly duration: number,
  ) {
    this.qEnd = qStart;
    const counts = sines.map((s) => s.length).join(' + ');
    this.what = `sum of sines (${counts}) about [${qStart.map((v) => ((v * 180) / Math.PI).toFixed(1)).join(', ')}] deg`;
  }
  sample(t: number, _t0: number, out: TrajectorySample): void {
    const D = this.duration;
    const R = this.ramp;
    const tc = t <= 0 ? 0 : t >= D ? D : t;
    // Window w and its derivatives: the product of a rising and a falling minimum-jerk ramp.
    const a = minJerkProfile(tc / R, this.up);
    const b = minJerkProfile((D - tc) / R, this.down);
    const r1 = 1 / R;
    const r2 = r1 * r1;
    const r3 = r2 * r1;
    const u0 = a[0],
      u1 = a[1] * r1,
      u2 = a[2] * r2,
      u3 = a[3] * r3;
    const d0 = b[0],
      d1 = -b[1] * r1,
      d2 = b[2] * r2,
      d3 = -b[3] * r3;
    const w0 = u0 * d0;
    const w1 = u1 * d0 + u0 * d1;
    const w2 = u2 * d0 + 2 * u1 * d1 + u0 * d2;
    const w3 = u3 * d0 + 3 * u2 * d1 + 3 * u1 * d2 + u0 * d3;
    for (let i = 0; i < this.qStart.length; i++) {
      let s0 = 0,
        s1 = 0,
        s2 = 0,
        s3 = 0;
      for (const c of this.sines[i] ?? []) {
        const w = 2 * Math.PI * c.frequencyHz;
        const ph = w * tc + (c.phase ?? 0);
        const sn = c.amplitude * Math.sin(ph);
        const cs = c.amplitude * Math.cos(ph);
        s0 += sn;
        s1 += w * cs;
        s2 -= w * w * sn;
        s3 -= w * w * w * cs;
      }
      out.q[i] = this.qStart[i]! + w0 * s0;
      out.qd[i] = w1 * s0 + w0 * s1;
      out.qdd[i] = w2 * s0 + 2 * w1 * s1 + w0 * s2;
      out.qddd[i] = w3 * s0 + 3 * w2 * s1 + 3 * w1 * s2 + w0 * s3;
    }
  }
}

/** A curve in the plane, rest to rest: position and its first three time derivatives. */
interface EndpointCurve {
  readonly duration: number;
  readonly start: ReadonlyPair;
  readonly end: ReadonlyPair;
  /** Writes [x, y, vx, vy, ax, ay, jx, jy] at local time t. */
  at(t: number, out: EndpointState): void;
  /** Smallest and largest distance from joint 1 along the curve, with the local times they occur. */
  distanceRange(): { min: number; tMin: number; max: number; tMax: number };
  readonly what: string;
}

/** A straight line with minimum-jerk timing (seed 002's reach). */
class LineCurve implements EndpointCurve {
  private readonly s: MinJerk = [0, 0, 0, 0];
  readonly what: string;
  constructor(
    readonly start: ReadonlyPair,
    readonly end: ReadonlyPair,
    readonly duration: number,
  ) {
    this.what = `line to (${end[0].toFixed(3)}, ${end[1].toFixed(3)}) m`;
  }
  at(t: number, out: EndpointState): void {
    const D = this.duration;
    const s = minJerkProfile(t / D, this.s);
    for (const i of J) {
      const d = this.end[i] - this.start[i];
      out[i] = this.start[i] + d * s[0];
      out[2 + i] = (d * s[1]) / D;
      out[4 + i] = (d * s[2]) / (D * D);
      out[6 + i] = (d * s[3]) / (D * D * D);
    }
  }
  distanceRange(): { min: number; tMin: number; max: number; tMax: number } {
    const [x0, y0] = this.start;
    const dx = this.end[0] - x0;
    const dy = this.end[1] - y0;
    const r0 = Math.hypot(x0, y0);
    const r1 = Math.hypot(this.end[0], this.end[1]);
    const len2 = dx * dx + dy * dy;
    // Closest point of the segment to the origin, as a fraction u of the way along it.
    const u = len2 > 0 ? Math.min(1, Math.max(0, -(x0 * dx + y0 * dy) / len2)) : 0;
    const rMin = Math.hypot(x0 + u * dx, y0 + u * dy);
    return {
      min: rMin,
      tMin: timeAtFraction(u, this.duration),
      max: Math.max(r0, r1),
      tMax: r1 > r0 ? this.duration : 0,
    };
  }
}

/** A full circle (or several turns) about `centre`, starting and ending at `start`, min-jerk in angle. */
class CircleCurve implements EndpointCurve {
  private readonly s: MinJerk = [0, 0, 0, 0];
  private readonly r: number;
  private readonly phi0: number;
  readonly end: ReadonlyPair;
  readonly what: string;
  constructor(
    readonly centre: ReadonlyPair,
    readonly start: ReadonlyPair,
    readonly turns: number,
    readonly duration: number,
  ) {
    this.r = Math.hypot(start[0] - centre[0], start[1] - centre[1]);
    this.phi0 = Math.atan2(start[1] - centre[1], start[0] - centre[0]);
    this.end = start;
    this.what = `circle of radius ${this.r.toFixed(3)} m about (${centre[0].toFixed(3)}, ${centre[1].toFixed(3)}) m`;
  }
  at(t: number, out: EndpointState): void {
    const D = this.duration;
    const s = minJerkProfile(t / D, this.s);
    const span = 2 * Math.PI * this.turns;
    const phi = this.phi0 + span * s[0];
    const w = (span * s[1]) / D;
    const b = (span * s[2]) / (D * D);
    const j = (span * s[3]) / (D * D * D);
    const c = this.r * Math.cos(phi);
    const sn = this.r * Math.sin(phi);
    // Rotating vector u = r (cos phi, sin phi): u' = w R90 u, u'' = b R90 u - w^2 u,
    // u''' = j R90 u - 3 w b u - w^3 R90 u, with R90 (c, s) = (-s, c).
    out[0] = this.centre[0] + c;
    out[1] = this.centre[1] + sn;
    out[2] = -w * sn;
    out[3] = w * c;
    out[4] = -b * sn - w * w * c;
    out[5] = b * c - w * w * sn;
    out[6] = -j * sn - 3 * w * b * c + w * w * w * sn;
    out[7] = j * c - 3 * w * b * sn - w * w * w * c;
  }
  distanceRange(): { min: number; tMin: number; max: number; tMax: number } {
    const dc = Math.hypot(this.centre[0], this.centre[1]);
    const toward = Math.atan2(-this.centre[1], -this.centre[0]);
    const tAt = (angle: number): number => {
      const span = 2 * Math.PI * this.turns;
      let d = (angle - this.phi0) % (2 * Math.PI);
      if (d < 0) d += 2 * Math.PI;
      return timeAtFraction(Math.min(1, d / span), this.duration);
    };
    return {
      min: Math.abs(dc - this.r),
      tMin: tAt(toward),
      max: dc + this.r,
      tMax: tAt(toward + Math.PI),
    };
  }
}

/** Time at which a min-jerk profile of the given duration reaches the fraction u (bisection). */
function timeAtFraction(u: number, duration: number): number {
  let lo = 0;
  let hi = 1;
  const s: MinJerk = [0, 0, 0, 0];
  for (let i = 0; i < 60; i++) {
    const mid = (lo + hi) / 2;
    if (minJerkProfile(mid, s)[0] < u) lo = mid;
    else hi = mid;
  }
  return ((lo + hi) / 2) * duration;
}

/** An endpoint-space segment: the curve, followed through IK and the Jacobian. */
class EndpointSegment implements Segment {
  private readonly k: EndpointState = [0, 0, 0, 0, 0, 0, 0, 0];
  readonly qStart: readonly number[];
  readonly qEnd: readonly number[];
  readonly duration: number;
  readonly what: string;
  constructor(
    private readonly p: TwoLinkParams,
    private readonly curve: EndpointCurve,
    private readonly elbow: Elbow,
    t0: number,
  ) {
    this.duration = curve.duration;
    // Named before validate(), whose messages say what the segment is ("the line to (0.5, 0.5) m").
    this.what = curve.what;
    this.validate(t0);
    this.qStart = inverseKinematics(p, curve.start, elbow);
    this.qEnd = inverseKinematics(p, curve.end, elbow);
  }

  /** Refuses curves that leave the workspace or touch its singular boundary (before sampling). */
  private validate(t0: number): void {
    const p = this.p;
    const outer = p.L1 + p.L2;
    const inner = Math.abs(p.L1 - p.L2);
    const tol = REACH_TOLERANCE * outer;
    const { min, tMin, max, tMax } = this.curve.distanceRange();
    const at = (t: number): string => `t = ${(t0 + t).toFixed(3)} s`;
    if (max > outer + tol) {
      throw new TrajectoryError(
        `the ${this.what} leaves the workspace at ${at(tMax)}: it reaches ${max.toFixed(4)} m from joint 1, ` +
          `beyond the arm's reach L1 + L2 = ${outer.toFixed(4)} m`,
        t0 + tMax,
      );
    }
    if (min < inner - tol) {
      throw new TrajectoryError(
        `the ${this.what} enters the unreachable disc at ${at(tMin)}: it comes within ${min.toFixed(4)} m of ` +
          `joint 1, closer than |L1 - L2| = ${inner.toFixed(4)} m`,
        t0 + tMin,
      );
    }
    const moves =
      Math.hypot(this.curve.end[0] - this.curve.start[0], this.curve.end[1] - this.curve.start[1]) > tol ||
      this.curve instanceof CircleCurve;
    if (!moves) return;
    if (max >= outer - tol) {
      throw new TrajectoryError(
        `straight-elbow singularity at ${at(tMax)}: the ${this.what} starts or ends with the elbow straight ` +
          `(${max.toFixed(4)} m = L1 + L2), where the Jacobian is singular and a minimum-jerk start needs ` +
          `unbounded joint acceleration; start or end inside the reach (for example at ${(0.98 * outer).toFixed(3)} m) ` +
          `or plan this segment in joint space`,
        t0 + tMax,
      );
    }
    if (min <= inner + tol) {
      throw new TrajectoryError(
        `folded-elbow singularity at ${at(tMin)}: the ${this.what} passes ${min.toFixed(4)} m from joint 1 ` +
          `(|L1 - L2| = ${inner.toFixed(4)} m), where the Jacobian is singular; keep the path away from joint 1`,
        t0 + tMin,
      );
    }
  }

  sample(t: number, t0: number, out: TrajectorySample): void {
    const p = this.p;
    const k = this.k;
    this.curve.at(Math.min(Math.max(t, 0), this.duration), k);
    const q = inverseKinematics(p, [k[0], k[1]], this.elbow);
    const a1 = q[0];
    const a12 = q[0] + q[1];
    // Rotating link vectors r1, r2 and J = [R90(r1 + r2), R90 r2].
    const r1x = p.L1 * Math.cos(a1);
    const r1y = p.L1 * Math.sin(a1);
    const r2x = p.L2 * Math.cos(a12);
    const r2y = p.L2 * Math.sin(a12);
    const j00 = -(r1y + r2y);
    const j01 = -r2y;
    const j10 = r1x + r2x;
    const j11 = r2x;
    const det = j00 * j11 - j01 * j10; // = L1 L2 sin(alpha2)
    const qd = asOutPair(out.qd, "the sample's qd");
    const qdd = asOutPair(out.qdd, "the sample's qdd");
    const qddd = asOutPair(out.qddd, "the sample's qddd");
    out.q[0] = q[0];
    out.q[1] = q[1];
    if (Math.abs(det) <= 1e-12 * p.L1 * p.L2) {
      // Only a resting point can be here (validate() refuses moving curves on the boundary): the
      // limit of every rate is zero.
      for (const i of J) qd[i] = qdd[i] = qddd[i] = 0;
      return;
    }
    const solve = (bx: number, by: number, o: Pair): void => {
      o[0] = (j11 * bx - j01 * by) / det;
      o[1] = (j00 * by - j10 * bx) / det;
    };
    solve(k[2], k[3], qd);
    const w1 = qd[0];
    const w12 = w1 + qd[1];
    // J qdd = a - Jdot qd = a + sum th'^2 r
    solve(k[4] + w1 * w1 * r1x + w12 * w12 * r2x, k[5] + w1 * w1 * r1y + w12 * w12 * r2y, qdd);
    const b1 = qdd[0];
    const b12 = b1 + qdd[1];
    // J qddd = j + sum (3 th' th'' r + th'^3 R90 r)
    const c1 = 3 * w1 * b1;
    const c2 = 3 * w12 * b12;
    const e1 = w1 * w1 * w1;
    const e2 = w12 * w12 * w12;
    solve(k[6] + c1 * r1x + c2 * r2x - e1 * r1y - e2 * r2y, k[7] + c1 * r1y + c2 * r2y + e1 * r1x + e2 * r2x, qddd);
    for (const i of J) {
      if (!Number.isFinite(qd[i]) || !Number.isFinite(qdd[i]) || !Number.isFinite(qddd[i])) {
        throw new TrajectoryError(`elbow singularity at t = ${(t0 + t).toFixed(3)} s: joint ${i + 1} rates are not finite`, t0 + t, i);
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Building trajectories

/** One step of a path description. Angles [rad], points [m], durations [s]. */
export type PathStep =
  | { kind: 'joint'; to: readonly number[]; duration: number }
  | { kind: 'line'; to: readonly number[]; duration: number }
  | { kind: 'circle'; centre: readonly number[]; turns?: number; duration: number }
  | { kind: 'hold'; duration: number }
  /**
   * A sum of sines per joint about where the step starts (`sines[joint]`), windowed by minimum-jerk
   * ramps of `ramp` [s] (default a quarter of the duration, at most 2 s) so that it starts and ends at
   * rest there. Its amplitudes are the caller's to keep within the limits (src/identify/excitation.ts).
   */
  | { kind: 'sines'; sines: readonly (readonly SineComponent[])[]; ramp?: number; duration: number }
  /** A dense joint path: `q` every `dt` [s] from where the step starts (sampled-path.ts); duration (N + 1) dt. */
  | { kind: 'samples'; dt: number; q: readonly (readonly number[])[]; duration: number };

/** Where a path starts and how it is followed. */
export interface PathStart {
  /** Start in joint space [rad] ... */
  q?: readonly number[];
  /** ... or in endpoint space [m] (two links only; resolved with `elbow`). */
  xy?: readonly number[];
  /** IK branch for endpoint steps. @default 'down' */
  elbow?: Elbow;
}

class PiecewiseTrajectory implements Trajectory {
  readonly duration: number;
  private readonly starts: number[] = [];
  constructor(
    readonly joints: number,
    private readonly segments: readonly Segment[],
    readonly description: string,
  ) {
    let t = 0;
    for (const s of segments) {
      this.starts.push(t);
      t += s.duration;
    }
    this.duration = t;
  }
  sample(t: number, out: TrajectorySample = emptySample(this.joints)): TrajectorySample {
    const tc = t <= 0 ? 0 : t >= this.duration ? this.duration : t;
    let i = this.segments.length - 1;
    while (i > 0 && tc < this.starts[i]!) i--;
    const seg = this.segments[i]!;
    const t0 = this.starts[i]!;
    seg.sample(tc - t0, t0, out);
    out.t = t;
    if (t >= this.duration || t < 0) {
      for (let j = 0; j < this.joints; j++) out.qd[j] = out.qdd[j] = out.qddd[j] = 0;
    }
    return out;
  }
}

function checkDuration(d: number, what: PathPlace): void {
  if (!(d >= 0) || !Number.isFinite(d)) throw placed(what, `duration must be a finite number >= 0 s, got ${d}`);
}

function samePose(a: readonly number[], b: readonly number[]): boolean {
  return a.every((v, i) => Math.abs(v - b[i]!) < 1e-9);
}

function sinesSegment(q: readonly number[], step: Extract<PathStep, { kind: 'sines' }>, where: PathPlace, t0: number, n: number): Segment {
  const D = step.duration;
  if (D <= 0) throw placed(where, `a sines step needs a duration > 0 s`, t0);
  if (step.sines.length !== n) throw placed(where, `expected sines for ${n} joint(s), got ${step.sines.length}`, t0);
  const ramp = step.ramp ?? Math.min(2, D / 4);
  if (!(ramp > 0 && ramp <= D / 2)) throw placed(where, `ramp must be > 0 s and at most half the duration (${D / 2} s), got ${ramp}`, t0);
  step.sines.forEach((js, j) =>
    js.forEach((c, k) => {
      const bad = !Number.isFinite(c.amplitude)
        ? 'amplitude'
        : !(c.frequencyHz > 0 && Number.isFinite(c.frequencyHz))
          ? 'frequencyHz'
          : !Number.isFinite(c.phase ?? 0)
            ? 'phase'
            : undefined;
      if (bad)
        throw placed(where, `joint ${j + 1}, sine ${k + 1}: ${bad} must be a finite number${bad === 'frequencyHz' ? ' > 0' : ''}`, t0, j);
    }),
  );
  return new SinesSegment(q, step.sines, ramp, D);
}

function sampledSegment(q: readonly number[], step: Extract<PathStep, { kind: 'samples' }>, at: PathPlace, t0: number, n: number): Segment {
  const bad = step.q.findIndex((p) => p.length !== n || !p.every(Number.isFinite));
  if (!(step.dt > 0) || step.q.length < 2 || bad >= 0)
    throw placed(at, `needs dt > 0 and at least 2 samples of ${n} finite joint angles${bad >= 0 ? ` (sample ${bad + 1} is not)` : ''}`, t0);
  if (Math.abs(step.duration - sampledDuration(step.q.length, step.dt)) > 1e-9)
    throw placed(at, `duration must be (samples + 1) x dt = ${sampledDuration(step.q.length, step.dt)} s`, t0);
  if (!samePose(step.q[0]!, q)) throw placed(at, `the first sample must be where the step starts`, t0);
  return new SampledSegment(step.q, step.dt);
}

/**
 * Builds a trajectory from a start and a list of steps. Endpoint steps (line, circle) need a two-link
 * arm and begin where the previous step ended; a joint step may go anywhere.
 */
export function buildPath(arm: ArmParams, start: PathStart, steps: readonly PathStep[], description?: string): Trajectory {
  const two = isTwoLink(arm);
  const n = two ? 2 : 1;
  const elbow = start.elbow ?? 'down';
  let q: readonly number[];
  if (start.q) {
    if (start.q.length !== n) throw placed({ start: true }, `expected ${n} joint angles, got ${start.q.length}`);
    q = start.q;
  } else if (start.xy) {
    if (!two) throw placed({ start: true }, 'an endpoint start needs a two-link arm');
    q = inverseKinematics(arm, start.xy, elbow);
  } else {
    throw placed({ start: true }, 'give q (joint angles) or xy (an endpoint position)');
  }
  const segments: Segment[] = [];
  let t0 = 0;
  steps.forEach((step, idx) => {
    const where: PathPlace = { step: idx, kind: step.kind };
    checkDuration(step.duration, where);
    let seg: Segment;
    if (step.kind === 'joint') {
      if (step.to.length !== n) throw placed(where, `expected ${n} joint angles, got ${step.to.length}`, t0);
      seg = new JointSegment(q, step.to, step.duration);
    } else if (step.kind === 'hold') {
      seg = new JointSegment(q, q, step.duration);
    } else if (step.kind === 'sines') {
      seg = sinesSegment(q, step, where, t0, n);
    } else if (step.kind === 'samples') {
      seg = sampledSegment(q, step, where, t0, n);
    } else {
      if (!two) throw placed(where, `endpoint steps need a two-link arm`, t0);
      if (step.duration <= 0) throw placed(where, `an endpoint step needs a duration > 0 s`, t0);
      if (step.kind === 'circle' && !(Number.isInteger(step.turns ?? 1) && (step.turns ?? 1) >= 1)) {
        throw placed(where, `turns must be a whole number >= 1, got ${step.turns}`, t0);
      }
      const from = fkEndpoint(arm, q);
      const curve: EndpointCurve =
        step.kind === 'line'
          ? new LineCurve(asPair(from), asPair(step.to), step.duration)
          : new CircleCurve(asPair(step.centre), asPair(from), step.turns ?? 1, step.duration);
      const es = new EndpointSegment(arm, curve, elbow, t0);
      if (!samePose(es.qStart, q)) {
        throw placed(
          where,
          `the arm is in the other elbow configuration at t = ${t0.toFixed(3)} s ` +
            `(alpha2 = ${((q[1]! * 180) / Math.PI).toFixed(1)} deg, elbow '${elbow}' needs the other sign); ` +
            `add a joint step to change elbow first`,
          t0,
        );
      }
      seg = es;
    }
    segments.push(seg);
    q = seg.qEnd;
    t0 += step.duration;
  });
  const desc = description ?? segments.map((s) => s.what).join(', then ');
  return new PiecewiseTrajectory(n, segments, desc);
}

/** Minimum-jerk from one joint configuration to another [rad] over `duration` [s]. */
export function jointMinJerk(arm: ArmParams, from: readonly number[], to: readonly number[], duration: number): Trajectory {
  return buildPath(arm, { q: from }, [{ kind: 'joint', to, duration }]);
}

/** Minimum-jerk straight line of the endpoint from one point to another [m] over `duration` [s]. */
export function endpointMinJerk(
  arm: TwoLinkParams,
  from: readonly number[],
  to: readonly number[],
  duration: number,
  elbow: Elbow = 'down',
): Trajectory {
  return buildPath(arm, { xy: from, elbow }, [{ kind: 'line', to, duration }]);
}

/** Samples a trajectory at a fixed rate [Hz] from 0 to its duration inclusive. */
export function* sampleAt(traj: Trajectory, rateHz: number): Generator<TrajectorySample> {
  const n = Math.round(traj.duration * rateHz);
  for (let k = 0; k <= n; k++) yield traj.sample(k / rateHz);
}
