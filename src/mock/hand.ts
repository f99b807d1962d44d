/**
 * A scripted hand for the mock rig (`--inject hand=circle|line|FILE@T`, `twolink teach --mock --hand`):
 * it takes the endpoint where it is, leads it to the start of a path, along the path, holds a moment
 * and lets go. It is a spring-damper between the endpoint and where the hand is (a hand holding the
 * arm's tip), F = g(t) (K (x_h - x) + D (v_h - v)), applied as joint torques J^T F by the plant, with
 * the grip g ramping in and out so that taking and letting go are not blows.
 *
 * Paths are in the arm's plane [m], scaled to its reach R = L1 + L2: the `circle` is one turn of
 * radius 0.15 R about (0.35 R, -0.35 R) in HAND_PATH_S; the `line` goes from (0.25 R, -0.65 R) to
 * (0.65 R, -0.1 R) and back. A FILE is JSON `{ "points": [[x, y], ...], "seconds": S }`: the hand goes
 * through the points in S seconds. Every path is timed by a minimum-jerk profile over its length, so
 * the hand starts and ends at rest.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { endpoint, jacobian } from '../model/kinematics.js';
import { minJerkProfile, type MinJerk } from '../model/trajectory.js';
import { asPair, type TwoLinkParams, type Vec2 } from '../model/types.js';

/** A point on a polyline and the unit tangent there: [x, y, tx, ty]. */
type PointTangent = [number, number, number, number];
/** The hand's position and velocity: [x, y, vx, vy] [m, m/s]. */
type HandState = [number, number, number, number];

/**
 * The hand's grip stiffness [N/m] and damping [N s/m]: a firm hold on a 0.5 kg endpoint. A human
 * hand holding a posture is 200-700 N/m stiff (Mussa-Ivaldi, Hogan and Bizzi, "Neural, mechanical,
 * and geometric factors subserving arm posture in humans", J. Neurosci. 5(10):2732-2743, 1985);
 * pinned in tests/teach-replay.test.ts.
 */
export const HAND_STIFFNESS = 300;
export const HAND_DAMPING = 25;
/** Time to take hold and to let go [s]; to lead the endpoint to the path's start [s]; to hold at its end [s]. */
export const HAND_GRIP_S = 0.3;
export const HAND_REACH_S = 2;
export const HAND_HOLD_S = 0.5;
/** The built-in paths' length in time [s]. */
export const HAND_PATH_S = 10;

/** A hand's path: its points [m] (a polyline, or a closed circle) and its duration [s]. */
export interface HandPath {
  name: string;
  /** Points the hand goes through in order [m]. */
  points: [number, number][];
  seconds: number;
}

const handFileSchema = z.strictObject({
  points: z
    .array(z.tuple([z.number().finite(), z.number().finite()]))
    .min(2)
    .max(100_000),
  seconds: z.number().finite().positive().max(3600),
});

/** The built-in paths and the file form; throws an Error naming the file and the field. */
export function handPath(name: string, arm: Pick<TwoLinkParams, 'L1' | 'L2'>): HandPath {
  const R = arm.L1 + arm.L2;
  if (name === 'circle') {
    const c: Vec2 = [0.35 * R, -0.35 * R];
    const r = 0.15 * R;
    const points: [number, number][] = [];
    for (let k = 0; k <= 360; k++) points.push([c[0] + r * Math.cos((k * Math.PI) / 180), c[1] + r * Math.sin((k * Math.PI) / 180)]);
    return { name, points, seconds: HAND_PATH_S };
  }
  if (name === 'line') {
    const a: [number, number] = [0.25 * R, -0.65 * R];
    const b: [number, number] = [0.65 * R, -0.1 * R];
    return { name, points: [a, b, a], seconds: HAND_PATH_S };
  }
  if (!name.endsWith('.json')) throw new Error(`hand path "${name}": circle, line, or a .json file of points`);
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(name, 'utf8'));
  } catch (e) {
    throw new Error(`hand path ${name}: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
  }
  const r = handFileSchema.safeParse(raw);
  if (!r.success) {
    const i = r.error.issues[0]!;
    throw new Error(`hand path ${name}: ${i.path.join('.') || '(file)'}: ${i.message}`);
  }
  for (const [k, p] of r.data.points.entries()) {
    if (Math.hypot(p[0], p[1]) > R)
      throw new Error(`hand path ${name}: points.${k} (${p[0]}, ${p[1]}) m is beyond the arm's reach ${R.toFixed(3)} m`);
  }
  return { name, points: r.data.points, seconds: r.data.seconds };
}

/** The time from taking hold to letting go entirely [s]. */
export function handDuration(path: HandPath): number {
  return HAND_GRIP_S + HAND_REACH_S + path.seconds + HAND_HOLD_S + HAND_GRIP_S;
}

/** When the hand is on its path, from taking hold [s]: after the reach to its start, until the end of the hold there. */
export function handPathSpan(path: HandPath): { fromS: number; toS: number } {
  return { fromS: HAND_GRIP_S + HAND_REACH_S, toS: HAND_GRIP_S + HAND_REACH_S + path.seconds + HAND_HOLD_S };
}

/** A polyline with its cumulative lengths, sampled by arc length. */
class Polyline {
  readonly cum: number[] = [0];
  constructor(readonly points: [number, number][]) {
    for (let k = 1; k < points.length; k++)
      this.cum.push(this.cum[k - 1]! + Math.hypot(points[k]![0] - points[k - 1]![0], points[k]![1] - points[k - 1]![1]));
  }
  get length(): number {
    return this.cum.at(-1)!;
  }
  /** The point at arc length `s` and the unit tangent, into out = [x, y, tx, ty]. */
  at(s: number, out: PointTangent): void {
    const c = this.cum;
    let k = 1;
    while (k < c.length - 1 && c[k]! < s) k++;
    const a = this.points[k - 1]!;
    const b = this.points[k]!;
    const seg = c[k]! - c[k - 1]! || 1e-12;
    const u = Math.max(0, Math.min(1, (s - c[k - 1]!) / seg));
    out[0] = a[0] + u * (b[0] - a[0]);
    out[1] = a[1] + u * (b[1] - a[1]);
    out[2] = (b[0] - a[0]) / seg;
    out[3] = (b[1] - a[1]) / seg;
  }
}

/** One hand's hold on the arm from `t0` [s, plant time]. */
export class Hand {
  private readonly line: Polyline;
  private readonly reach: Polyline;
  private readonly prof: MinJerk = [0, 0, 0, 0];
  private readonly pt: PointTangent = [0, 0, 0, 0];
  private readonly p: Vec2 = [0, 0];
  private readonly h: HandState = [0, 0, 0, 0];

  /** `q0`: the joint angles where the hand takes hold [rad]. */
  constructor(
    private readonly arm: TwoLinkParams,
    readonly path: HandPath,
    readonly t0: number,
    q0: readonly number[],
  ) {
    this.line = new Polyline(path.points);
    const grab = endpoint(arm, q0);
    this.reach = new Polyline([grab, path.points[0]!]);
  }

  /** True once the hand has let go. */
  done(t: number): boolean {
    return t - this.t0 >= handDuration(this.path);
  }

  /** The hand's position and velocity at time t [m, m/s] into out = [x, y, vx, vy]. */
  where(t: number, out: HandState): void {
    const s = t - this.t0 - HAND_GRIP_S;
    const on = (pl: Polyline, u: number, T: number): void => {
      minJerkProfile(Math.max(0, Math.min(1, u / T)), this.prof);
      const v = u > 0 && u < T ? (this.prof[1] * pl.length) / T : 0;
      pl.at(this.prof[0] * pl.length, this.pt);
      out[0] = this.pt[0];
      out[1] = this.pt[1];
      out[2] = v * this.pt[2];
      out[3] = v * this.pt[3];
    };
    if (s < HAND_REACH_S) on(this.reach, s, HAND_REACH_S);
    else on(this.line, s - HAND_REACH_S, this.path.seconds);
  }

  /** The grip 0..1: ramps in over HAND_GRIP_S, out over HAND_GRIP_S after the hold. */
  grip(t: number): number {
    const u = t - this.t0;
    const end = handDuration(this.path);
    if (u <= 0 || u >= end) return 0;
    return Math.min(1, u / HAND_GRIP_S, (end - u) / HAND_GRIP_S);
  }

  /** The joint torques [N m] the hand puts on the arm at (q, qd), into `out`. */
  torque(t: number, q: readonly number[], qd: readonly number[], out: number[]): void {
    const g = this.grip(t);
    if (g <= 0) {
      out[0] = 0;
      out[1] = 0;
      return;
    }
    const h = this.h;
    this.where(t, h);
    const x = endpoint(this.arm, q, this.p);
    const J = jacobian(this.arm, q);
    const w = asPair(qd, 'qd');
    const vx = J[0][0] * w[0] + J[0][1] * w[1];
    const vy = J[1][0] * w[0] + J[1][1] * w[1];
    const fx = g * (HAND_STIFFNESS * (h[0] - x[0]) + HAND_DAMPING * (h[2] - vx));
    const fy = g * (HAND_STIFFNESS * (h[1] - x[1]) + HAND_DAMPING * (h[3] - vy));
    out[0] = J[0][0] * fx + J[1][0] * fy;
    out[1] = J[0][1] * fx + J[1][1] * fy;
  }
}
