/**
 * Types of the arm model, in the notation of the seed notebooks on planar one- and two-link
 * kinematics and Newton-Euler dynamics:
 * alpha1 is joint 1's angle from the horizontal, alpha2 is joint 2's angle relative to link 1,
 * counter-clockwise positive, gravity along -y. A hanging arm is alpha1 = -pi/2.
 *
 * Units are SI throughout: lengths [m], masses [kg], inertias [kg m^2], angles [rad],
 * torques [N m], forces [N], time [s].
 */

/** A 2-vector: [x, y] or [joint 1, joint 2]. */
export type Vec2 = [number, number];

/**
 * A value per joint of a two-link arm, [joint 1, joint 2] (angles, velocities, torques, duties): a
 * tuple, so that `p[0]` and `p[1]` need no `!`. Loop over both joints with `for (const j of J)`.
 */
export type Pair = [number, number];
/** A Pair that is only read. */
export type ReadonlyPair = readonly [number, number];
/** A joint index of a two-link arm: indexing a Pair with it needs no `!`. */
export type Joint = 0 | 1;
/** The joints of a two-link arm, for loops over a Pair (`for (const j of J)`: `j` is a Joint). */
export const J = [0, 1] as const satisfies readonly Joint[];

/** A value of any type per joint, [joint 1, joint 2]. */
export type PairOf<T> = [T, T];

/** [f(0), f(1)]: a Pair (or a PairOf) built joint by joint. */
export function pairOf<T>(f: (j: Joint) => T): PairOf<T> {
  return [f(0), f(1)];
}

/** `pairOf(j => f(a[j], j))`: a Pair mapped joint by joint. */
export function mapPair<A, T>(a: readonly [A, A], f: (v: A, j: Joint) => T): PairOf<T> {
  return [f(a[0], 0), f(a[1], 1)];
}

/** Thrown when an array given as a per-joint pair does not have two entries. */
export class PairLengthError extends RangeError {
  constructor(what: string, length: number) {
    super(`${what} has ${length} ${length === 1 ? 'entry' : 'entries'}; a two-link arm needs exactly 2 (joint 1, joint 2)`);
    this.name = 'PairLengthError';
  }
}

/**
 * A per-joint array of an arm known to have two joints (a TwoLinkParams, `joints === 2`: its arrays
 * are built with two entries) as a Pair: the one place that tells the type checker so, in place of a
 * `!` on every `[0]` and `[1]`. Checked: an array of any other length throws a PairLengthError naming
 * `what` (one comparison, cheap enough for the loop's hot path; values are not inspected here, see
 * `finitePair`).
 */
export function asPair<T = number>(v: readonly T[], what = 'a per-joint array'): readonly [T, T] {
  if (v.length !== 2) throw new PairLengthError(what, v.length);
  return v as readonly [T, T];
}

/** `asPair` for an array written to. */
export function asOutPair<T = number>(v: T[], what = 'a per-joint output array'): PairOf<T> {
  if (v.length !== 2) throw new PairLengthError(what, v.length);
  return v as PairOf<T>;
}

/**
 * `asPair` that also requires both values to be finite (for values from outside: a non-finite number
 * is a fault wherever it appears). Throws a RangeError naming `what` and the joint.
 */
export function finitePair(v: readonly number[], what: string): ReadonlyPair {
  const p = asPair(v, what);
  for (const j of J) if (!Number.isFinite(p[j])) throw new RangeError(`${what}: joint ${j + 1} is ${p[j]}, not a finite number`);
  return p;
}

/** A 2x2 matrix, row-major: m[row][col]. */
export type Mat2 = [[number, number], [number, number]];

/** A 2x2 matrix of a two-link arm built as number[][] (rows of two) as a Mat2, checked like `asPair`. */
export function asMat2(m: number[][], what = 'a 2x2 matrix'): Mat2 {
  // The shape first, the messages only for a bad one: this runs on the loop's tick, and a template string allocates.
  if (m.length === 2 && m[0]?.length === 2 && m[1]?.length === 2) return m as Mat2;
  const [r0, r1] = asOutPair(m, `${what}'s rows`);
  asOutPair(r0, `${what}'s row 1`);
  asOutPair(r1, `${what}'s row 2`);
  return m as Mat2;
}

/** Parameters of a planar two-link arm (seed 000, "double inverted pendulum"). */
export interface TwoLinkParams {
  /** Length of link 1, joint 1 to joint 2 [m]. */
  L1: number;
  /** Length of link 2, joint 2 to the endpoint [m]. */
  L2: number;
  /** Joint 1 to the centre of mass of link 1 [m]. */
  d1: number;
  /** Joint 2 to the centre of mass of link 2 [m]. */
  d2: number;
  /** Mass of link 1 [kg]. */
  m1: number;
  /** Mass of link 2 [kg]. */
  m2: number;
  /** Moment of inertia of link 1 about its centre of mass [kg m^2]. */
  I1: number;
  /** Moment of inertia of link 2 about its centre of mass [kg m^2]. */
  I2: number;
  /** Gravitational acceleration, positive, acting along -y [m/s^2]. */
  g: number;
}

/** Parameters of a planar one-link arm (seed 000, "inverted pendulum"). */
export interface OneLinkParams {
  /** Length of the link [m]. */
  L1: number;
  /** Joint to the centre of mass [m]. */
  d1: number;
  /** Mass [kg]. */
  m1: number;
  /** Moment of inertia about the centre of mass [kg m^2]. */
  I1: number;
  /** Gravitational acceleration, positive, acting along -y [m/s^2]. */
  g: number;
}

/** Either arm. A two-link arm is recognised by its `L2`. */
export type ArmParams = OneLinkParams | TwoLinkParams;

/** True when the parameters describe a two-link arm. */
export function isTwoLink(p: ArmParams): p is TwoLinkParams {
  return (p as TwoLinkParams).L2 !== undefined;
}

/**
 * External loads acting on the arm besides the joint torques (seed 001's E term). All optional;
 * per-joint arrays have one entry per joint.
 */
export interface ExternalLoads {
  /** Extra joint torques [N m] (for example a disturbance). */
  tau?: readonly number[];
  /** Force applied at the endpoint in the world frame [N]; it enters as J^T F. */
  endpointForce?: readonly number[];
  /** Viscous joint friction coefficients: torque -b * qd [N m s/rad]. */
  viscous?: readonly number[];
  /** Coulomb joint friction levels: torque -c * sign(qd) [N m]. */
  coulomb?: readonly number[];
  /**
   * Velocity below which Coulomb friction is smoothed as c * tanh(qd / v) [rad/s]. 0 (the default)
   * is a pure sign function; a small positive value keeps fixed-step integration from chattering.
   */
  coulombVelocity?: number;
  /** Joint springs: torque -k * (q - q0); k [N m/rad], q0 [rad]. */
  spring?: { k: readonly number[]; q0: readonly number[] };
}

/** Kinetic, potential and total mechanical energy [J]. Potential energy is zero at y = 0. */
export interface Energy {
  kinetic: number;
  potential: number;
  total: number;
}
