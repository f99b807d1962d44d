/**
 * Planar kinematics of the one- and two-link arm (seed 002): forward and inverse kinematics, the
 * Jacobian and its time derivative, the endpoint acceleration split into tangential, centripetal and
 * Coriolis terms, and the angle conventions.
 *
 * The two-link endpoint is the sum of two rotating vectors r1 = L1 (cos th1, sin th1) and
 * r2 = L2 (cos th2, sin th2) with the segment angles th1 = a1, th2 = a1 + a2. Each derivative of a
 * rotating vector is a rotation by 90 degrees (R90) and a scaling, which gives every formula here
 * without symbolic algebra: r' = th' R90 r, r'' = th'' R90 r - th'^2 r,
 * r''' = th''' R90 r - 3 th' th'' r - th'^3 R90 r.
 */
import {
  asPair,
  isTwoLink,
  type ArmParams,
  type Mat2,
  type OneLinkParams,
  type ReadonlyPair,
  type TwoLinkParams,
  type Vec2,
} from './types.js';

/** Segment angles theta (from the horizontal) from joint angles alpha: th1 = a1, th2 = a1 + a2. */
export function segmentAngles(alpha: readonly number[]): number[] {
  return alpha.length === 1 ? [alpha[0]!] : [alpha[0]!, alpha[0]! + alpha[1]!];
}

/** Joint angles alpha from segment angles theta: a1 = th1, a2 = th2 - th1. */
export function jointAngles(theta: readonly number[]): number[] {
  return theta.length === 1 ? [theta[0]!] : [theta[0]!, theta[1]! - theta[0]!];
}

/**
 * Joint angles alpha from seed 001's absolute angles phi, measured from the downward vertical
 * (x = l sin phi, y = -l cos phi): th_i = phi_i - pi/2, then alpha from theta. Works for angular
 * velocities too with `isRate` (no offset).
 */
export function fromDownwardVertical(phi: readonly number[], isRate = false): number[] {
  const off = isRate ? 0 : Math.PI / 2;
  return jointAngles(phi.map((v) => v - off));
}

/** Seed 001's absolute angles from the downward vertical, from joint angles alpha (inverse of the above). */
export function toDownwardVertical(alpha: readonly number[], isRate = false): number[] {
  const off = isRate ? 0 : Math.PI / 2;
  return segmentAngles(alpha).map((v) => v + off);
}

/** Endpoint position [m] of the two-link arm, allocation-free with `out`. */
export function endpoint(p: TwoLinkParams, q: readonly number[], out?: Vec2): Vec2;
export function endpoint(p: TwoLinkParams, q: readonly number[], out: number[]): number[];
export function endpoint(p: TwoLinkParams, q: readonly number[], out: number[] = [0, 0]): number[] {
  const qP = asPair(q);
  const a1 = qP[0];
  const a12 = a1 + qP[1];
  out[0] = p.L1 * Math.cos(a1) + p.L2 * Math.cos(a12);
  out[1] = p.L1 * Math.sin(a1) + p.L2 * Math.sin(a12);
  return out;
}

/** Endpoint position [m] of a one- or two-link arm, allocation-free with `out`. */
export function armEndpoint(p: ArmParams, q: readonly number[], out: number[] = [0, 0]): number[] {
  if (isTwoLink(p)) return endpoint(p, q, out);
  out[0] = p.L1 * Math.cos(q[0]!);
  out[1] = p.L1 * Math.sin(q[0]!);
  return out;
}

/** Positions, velocities and accelerations of the points of the arm. */
export interface PointKinematics {
  /** Position [m]. */
  position: Vec2;
  /** Velocity [m/s]. */
  velocity: Vec2;
  /** Acceleration [m/s^2]. */
  acceleration: Vec2;
}

/** Forward kinematics of every point that matters, for the calculator and the dashboard. */
export interface ForwardKinematics {
  /** Segment angles from the horizontal [rad]. */
  theta: number[];
  /** Joint 2 (absent for one link). */
  elbow?: PointKinematics;
  /** The tip of the last link. */
  endpoint: PointKinematics;
  /** Centres of mass of the links, in order. */
  com: PointKinematics[];
}

/** Kinematics of a point at distance `r` along a chain of rotating vectors. */
function chainPoint(
  lengths: readonly number[],
  theta: readonly number[],
  thetaD: readonly number[],
  thetaDD: readonly number[],
): PointKinematics {
  const k: PointKinematics = { position: [0, 0], velocity: [0, 0], acceleration: [0, 0] };
  for (let i = 0; i < lengths.length; i++) {
    const l = lengths[i]!;
    const c = Math.cos(theta[i]!);
    const s = Math.sin(theta[i]!);
    const w = thetaD[i]!;
    const b = thetaDD[i]!;
    k.position[0] += l * c;
    k.position[1] += l * s;
    k.velocity[0] += -l * s * w;
    k.velocity[1] += l * c * w;
    k.acceleration[0] += -l * s * b - l * c * w * w;
    k.acceleration[1] += l * c * b - l * s * w * w;
  }
  return k;
}

/**
 * Forward kinematics of a one- or two-link arm: elbow, endpoint and centres of mass with their
 * velocities and accelerations (zero rates when qd, qdd are omitted).
 */
export function forwardKinematics(
  p: OneLinkParams | TwoLinkParams,
  q: readonly number[],
  qd?: readonly number[],
  qdd?: readonly number[],
): ForwardKinematics {
  const n = q.length;
  const zero = n === 1 ? [0] : [0, 0];
  const th = segmentAngles(q);
  const thd = segmentAngles(qd ?? zero);
  const thdd = segmentAngles(qdd ?? zero);
  if (n === 1) {
    return {
      theta: th,
      endpoint: chainPoint([p.L1], th, thd, thdd),
      com: [chainPoint([p.d1], th, thd, thdd)],
    };
  }
  const t = p as TwoLinkParams;
  return {
    theta: th,
    elbow: chainPoint([t.L1], th, thd, thdd),
    endpoint: chainPoint([t.L1, t.L2], th, thd, thdd),
    com: [chainPoint([t.d1], th, thd, thdd), chainPoint([t.L1, t.d2], th, thd, thdd)],
  };
}

/** Endpoint Jacobian J = d(x, y)/d(alpha1, alpha2) of the two-link arm [m/rad]. */
export function jacobian(
  p: TwoLinkParams,
  q: readonly number[],
  out: Mat2 = [
    [0, 0],
    [0, 0],
  ],
): Mat2 {
  const qP = asPair(q);
  const a1 = qP[0];
  const a12 = a1 + qP[1];
  const l2s = p.L2 * Math.sin(a12);
  const l2c = p.L2 * Math.cos(a12);
  out[0][0] = -p.L1 * Math.sin(a1) - l2s;
  out[0][1] = -l2s;
  out[1][0] = p.L1 * Math.cos(a1) + l2c;
  out[1][1] = l2c;
  return out;
}

/** Time derivative of the Jacobian at (q, qd) [m/(rad s)]. */
export function jacobianDot(
  p: TwoLinkParams,
  q: readonly number[],
  qd: readonly number[],
  out: Mat2 = [
    [0, 0],
    [0, 0],
  ],
): Mat2 {
  const qP = asPair(q);
  const qdP = asPair(qd);
  const a1 = qP[0];
  const a12 = a1 + qP[1];
  const w1 = qdP[0];
  const w12 = w1 + qdP[1];
  const l2cw = p.L2 * Math.cos(a12) * w12;
  const l2sw = p.L2 * Math.sin(a12) * w12;
  out[0][0] = -p.L1 * Math.cos(a1) * w1 - l2cw;
  out[0][1] = -l2cw;
  out[1][0] = -p.L1 * Math.sin(a1) * w1 - l2sw;
  out[1][1] = -l2sw;
  return out;
}

/** Endpoint velocity v = J qd [m/s]. */
export function endpointVelocity(p: TwoLinkParams, q: readonly number[], qd: readonly number[]): Vec2 {
  const qdP = asPair(qd);
  const j = jacobian(p, q);
  return [j[0][0] * qdP[0] + j[0][1] * qdP[1], j[1][0] * qdP[0] + j[1][1] * qdP[1]];
}

/**
 * Endpoint acceleration a = Jdot qd + J qdd [m/s^2] and seed 002's split of it: tangential (the
 * terms in alpha''), centripetal (in alpha1'^2 and alpha2'^2) and Coriolis (in alpha1' alpha2').
 * total = tangential + centripetal + coriolis.
 */
export function endpointAcceleration(
  p: TwoLinkParams,
  q: readonly number[],
  qd: readonly number[],
  qdd: readonly number[],
): { total: Vec2; tangential: Vec2; centripetal: Vec2; coriolis: Vec2 } {
  const qP = asPair(q);
  const qdP = asPair(qd);
  const qddP = asPair(qdd);
  const a1 = qP[0];
  const a12 = a1 + qP[1];
  const c1 = p.L1 * Math.cos(a1);
  const s1 = p.L1 * Math.sin(a1);
  const c12 = p.L2 * Math.cos(a12);
  const s12 = p.L2 * Math.sin(a12);
  const w1 = qdP[0];
  const w2 = qdP[1];
  const b1 = qddP[0];
  const b2 = qddP[1];
  const tangential: Vec2 = [(-s1 - s12) * b1 - s12 * b2, (c1 + c12) * b1 + c12 * b2];
  const centripetal: Vec2 = [(-c1 - c12) * w1 * w1 - c12 * w2 * w2, (-s1 - s12) * w1 * w1 - s12 * w2 * w2];
  const coriolis: Vec2 = [-2 * c12 * w1 * w2, -2 * s12 * w1 * w2];
  return {
    total: [tangential[0] + centripetal[0] + coriolis[0], tangential[1] + centripetal[1] + coriolis[1]],
    tangential,
    centripetal,
    coriolis,
  };
}

/** Which of the two inverse-kinematics solutions: `down` has alpha2 >= 0 (seed 002's), `up` alpha2 <= 0. */
export type Elbow = 'up' | 'down';

/** A point the arm cannot reach. */
export class ReachError extends Error {
  override readonly name = 'ReachError';
  constructor(
    readonly point: ReadonlyPair,
    /** Distance of the point from joint 1 [m]. */
    readonly distance: number,
    /** Smallest reachable distance |L1 - L2| [m]. */
    readonly innerReach: number,
    /** Largest reachable distance L1 + L2 [m]. */
    readonly outerReach: number,
  ) {
    super(
      `point (${fmt(point[0])}, ${fmt(point[1])}) m is out of reach: it is ${fmt(distance)} m from joint 1, ` +
        `and the arm reaches from ${fmt(innerReach)} m (|L1 - L2|) to ${fmt(outerReach)} m (L1 + L2)`,
    );
  }
}

function fmt(v: number): string {
  return Number(v.toPrecision(6)).toString();
}

/** Relative tolerance on the reach: points this close outside the boundary count as on it. */
export const REACH_TOLERANCE = 1e-9;

/**
 * cos(alpha2) of the two-link IK at (x, y), clamped to [-1, 1] at the boundary of the workspace so
 * that a straight or folded elbow gives alpha2 = 0 or pi, not NaN. Throws ReachError outside.
 */
export function elbowCosine(p: TwoLinkParams, x: number, y: number): number {
  const r2 = x * x + y * y;
  const c = (r2 - p.L1 * p.L1 - p.L2 * p.L2) / (2 * p.L1 * p.L2);
  if (c > 1 + REACH_TOLERANCE || c < -1 - REACH_TOLERANCE || !Number.isFinite(c)) {
    throw new ReachError([x, y], Math.sqrt(r2), Math.abs(p.L1 - p.L2), p.L1 + p.L2);
  }
  return c > 1 ? 1 : c < -1 ? -1 : c;
}

/**
 * Analytic inverse kinematics of the two-link arm (seed 002 with atan2 in both places: the seed's
 * atan(L2 sin a2 / (L1 + L2 cos a2)) picks the wrong branch when L1 + L2 cos a2 < 0).
 * Returns [alpha1, alpha2] in (-pi, pi]. At joint 1 itself (L1 = L2, x = y = 0) alpha1 is arbitrary
 * and 0 is returned.
 */
export function inverseKinematics(p: TwoLinkParams, xy: readonly number[], elbow: Elbow = 'down'): Vec2 {
  const xyP = asPair(xy);
  const x = xyP[0];
  const y = xyP[1];
  const c2 = elbowCosine(p, x, y);
  const a2 = elbow === 'down' ? Math.acos(c2) : -Math.acos(c2);
  const a1 = Math.atan2(y, x) - Math.atan2(p.L2 * Math.sin(a2), p.L1 + p.L2 * c2);
  return [wrapAngle(a1), a2];
}

/** One-link inverse kinematics: the angle of a point at distance L1 [rad]. */
export function inverseKinematics1(p: OneLinkParams, xy: readonly number[]): number {
  const xyP = asPair(xy);
  const r = Math.hypot(xyP[0], xyP[1]);
  if (Math.abs(r - p.L1) > REACH_TOLERANCE * p.L1) throw new ReachError(xyP, r, p.L1, p.L1);
  return Math.atan2(xyP[1], xyP[0]);
}

/** Wraps an angle to (-pi, pi]. */
export function wrapAngle(a: number): number {
  let w = a % (2 * Math.PI);
  if (w > Math.PI) w -= 2 * Math.PI;
  else if (w <= -Math.PI) w += 2 * Math.PI;
  return w;
}
