/**
 * Newton-Euler dynamics of the planar one- and two-link arm in the form of seed 000:
 *
 *   tau = M(alpha) alpha'' + V(alpha, alpha') + G(alpha)
 *
 * and the forward dynamics of seed 001 with external terms:
 *
 *   alpha'' = M^-1 (tau - V - G + E)
 *
 * The closed forms below are what seed 000's sympy derivation collects (M, V, G); for two links:
 *
 *   M11 = I1 + I2 + m1 d1^2 + m2 (L1^2 + d2^2 + 2 L1 d2 cos a2)
 *   M12 = M21 = I2 + m2 (d2^2 + L1 d2 cos a2)
 *   M22 = I2 + m2 d2^2
 *   V1 = -m2 L1 d2 sin a2 (2 a1' a2' + a2'^2)
 *   V2 =  m2 L1 d2 sin a2 a1'^2
 *   G1 = g ((m1 d1 + m2 L1) cos a1 + m2 d2 cos(a1 + a2))
 *   G2 = g m2 d2 cos(a1 + a2)
 *
 * Every function writes into an optional `out` and allocates nothing when it is given: they run
 * thousands of times a second in the control loop, the twin and the mock rig's plant.
 */
import {
  asOutPair,
  asPair,
  type Energy,
  type ExternalLoads,
  type Mat2,
  type OneLinkParams,
  type Pair,
  type ReadonlyPair,
  type TwoLinkParams,
} from './types.js';

// ---------------------------------------------------------------------------------------------
// Two links

/**
 * The two-link dynamics with the parameter combinations precomputed (k = m2 L1 d2, the constant parts
 * of M, the gravity coefficients): a third faster than evaluating them on every call. Holds a snapshot
 * of the parameters: build a new one when they change. The combinations are public so that the
 * actuated arm (actuated.ts) builds its terms from the same numbers.
 */
export class TwoLinkDynamics {
  /** m2 L1 d2 [kg m^2] */
  readonly k: number;
  /** M22 = I2 + m2 d2^2 [kg m^2] */
  readonly m22: number;
  /** M11 without the cos(a2) term [kg m^2] */
  readonly m11c: number;
  /** g (m1 d1 + m2 L1) [N m] */
  readonly g1c: number;
  /** g m2 d2 [N m] */
  readonly g2c: number;
  private readonly snap: number[];

  constructor(readonly p: TwoLinkParams) {
    this.k = p.m2 * p.L1 * p.d2;
    this.m22 = p.I2 + p.m2 * p.d2 * p.d2;
    this.m11c = p.I1 + p.m1 * p.d1 * p.d1 + p.m2 * p.L1 * p.L1 + this.m22;
    this.g1c = p.g * (p.m1 * p.d1 + p.m2 * p.L1);
    this.g2c = p.g * p.m2 * p.d2;
    this.snap = [p.L1, p.L2, p.d1, p.d2, p.m1, p.m2, p.I1, p.I2, p.g];
  }

  /** True while `p` still has the values this was built from. */
  matches(p: TwoLinkParams): boolean {
    const s = this.snap;
    return (
      s[0] === p.L1 &&
      s[1] === p.L2 &&
      s[2] === p.d1 &&
      s[3] === p.d2 &&
      s[4] === p.m1 &&
      s[5] === p.m2 &&
      s[6] === p.I1 &&
      s[7] === p.I2 &&
      s[8] === p.g
    );
  }

  massMatrix(
    q: ReadonlyPair,
    out: Mat2 = [
      [0, 0],
      [0, 0],
    ],
  ): Mat2 {
    const kc = this.k * Math.cos(q[1]);
    out[0][0] = this.m11c + 2 * kc;
    out[0][1] = this.m22 + kc;
    out[1][0] = out[0][1];
    out[1][1] = this.m22;
    return out;
  }

  velocityTerms(q: ReadonlyPair, qd: ReadonlyPair, out: Pair = [0, 0]): Pair {
    const h = this.k * Math.sin(q[1]);
    const w1 = qd[0];
    const w2 = qd[1];
    out[0] = -h * (2 * w1 * w2 + w2 * w2);
    out[1] = h * w1 * w1;
    return out;
  }

  gravityTerms(q: ReadonlyPair, out: Pair = [0, 0]): Pair {
    out[1] = this.g2c * Math.cos(q[0] + q[1]);
    out[0] = this.g1c * Math.cos(q[0]) + out[1];
    return out;
  }

  inverseDynamics(q: ReadonlyPair, qd: ReadonlyPair, qdd: ReadonlyPair, out: Pair = [0, 0]): Pair {
    const q1 = q[0];
    const q2 = q[1];
    const w1 = qd[0];
    const w2 = qd[1];
    const a1 = qdd[0];
    const a2 = qdd[1];
    const kc = this.k * Math.cos(q2);
    const ks = this.k * Math.sin(q2);
    const m12 = this.m22 + kc;
    const g2 = this.g2c * Math.cos(q1 + q2);
    out[0] = (this.m11c + 2 * kc) * a1 + m12 * a2 - ks * (2 * w1 * w2 + w2 * w2) + this.g1c * Math.cos(q1) + g2;
    out[1] = m12 * a1 + this.m22 * a2 + ks * w1 * w1 + g2;
    return out;
  }

  forwardDynamics(q: ReadonlyPair, qd: ReadonlyPair, tau: ReadonlyPair, out: Pair = [0, 0], rotorInertia?: ReadonlyPair): Pair {
    const q1 = q[0];
    const q2 = q[1];
    const w1 = qd[0];
    const w2 = qd[1];
    const kc = this.k * Math.cos(q2);
    const ks = this.k * Math.sin(q2);
    const m12 = this.m22 + kc;
    let m11 = this.m11c + 2 * kc;
    let m22 = this.m22;
    if (rotorInertia !== undefined) {
      m11 += rotorInertia[0];
      m22 += rotorInertia[1];
    }
    const g2 = this.g2c * Math.cos(q1 + q2);
    // Right-hand side tau - V - G, then a 2x2 solve by Cramer's rule (M is symmetric positive definite).
    const r1 = tau[0] + ks * (2 * w1 * w2 + w2 * w2) - this.g1c * Math.cos(q1) - g2;
    const r2 = tau[1] - ks * w1 * w1 - g2;
    const det = m11 * m22 - m12 * m12;
    out[0] = (m22 * r1 - m12 * r2) / det;
    out[1] = (m11 * r2 - m12 * r1) / det;
    return out;
  }

  energy(q: ReadonlyPair, qd: ReadonlyPair): Energy {
    const kc = this.k * Math.cos(q[1]);
    const w1 = qd[0];
    const w2 = qd[1];
    const kinetic = 0.5 * ((this.m11c + 2 * kc) * w1 * w1 + 2 * (this.m22 + kc) * w1 * w2 + this.m22 * w2 * w2);
    const p = this.p;
    const s1 = Math.sin(q[0]);
    const potential = p.g * (p.m1 * p.d1 * s1 + p.m2 * (p.L1 * s1 + p.d2 * Math.sin(q[0] + q[1])));
    return { kinetic, potential, total: kinetic + potential };
  }
}

const cache = new WeakMap<TwoLinkParams, TwoLinkDynamics>();

/** The precomputed dynamics of `p`, rebuilt if `p` was changed since. */
export function twoLinkDynamics(p: TwoLinkParams): TwoLinkDynamics {
  let d = cache.get(p);
  if (d === undefined || !d.matches(p)) {
    d = new TwoLinkDynamics(p);
    cache.set(p, d);
  }
  return d;
}

/** Inertia matrix M(alpha) [kg m^2]. */
export function massMatrix(p: TwoLinkParams, q: readonly number[], out?: Mat2): Mat2 {
  return twoLinkDynamics(p).massMatrix(asPair(q), out);
}

/** Centripetal and Coriolis torques V(alpha, alpha') [N m]. */
export function velocityTerms(p: TwoLinkParams, q: readonly number[], qd: readonly number[], out?: number[]): Pair {
  return twoLinkDynamics(p).velocityTerms(asPair(q), asPair(qd), out && asOutPair(out));
}

/** Gravitational torques G(alpha) [N m]. */
export function gravityTerms(p: TwoLinkParams, q: readonly number[], out?: number[]): Pair {
  return twoLinkDynamics(p).gravityTerms(asPair(q), out && asOutPair(out));
}

/** Inverse dynamics: the joint torques [N m] that produce qdd at (q, qd). */
export function inverseDynamics(
  p: TwoLinkParams,
  q: readonly number[],
  qd: readonly number[],
  qdd: readonly number[],
  out?: number[],
): Pair {
  return twoLinkDynamics(p).inverseDynamics(asPair(q), asPair(qd), asPair(qdd), out && asOutPair(out));
}

/**
 * Forward dynamics without external loads: the accelerations [rad/s^2] that tau [N m] produces.
 * `rotorInertia` [kg m^2 at the joint] is added to the diagonal of M (a geared motor's reflected
 * rotor inertia, N^2 J_rotor); omit it for the bare arm.
 */
export function forwardDynamics(
  p: TwoLinkParams,
  q: readonly number[],
  qd: readonly number[],
  tau: readonly number[],
  out?: number[],
  rotorInertia?: readonly number[],
): Pair {
  return twoLinkDynamics(p).forwardDynamics(
    asPair(q),
    asPair(qd),
    asPair(tau),
    out && asOutPair(out),
    rotorInertia && asPair(rotorInertia),
  );
}

/**
 * The joint torques [N m] of the external loads E at (q, qd): extra torques, J^T F of an endpoint
 * force, viscous and Coulomb friction and springs. Works for one or two joints (`L2` absent = one).
 */
export function externalTorques(
  p: TwoLinkParams | OneLinkParams,
  q: readonly number[],
  qd: readonly number[],
  ext: ExternalLoads,
  out: number[],
): number[] {
  const n = (p as TwoLinkParams).L2 === undefined ? 1 : 2;
  const vs = ext.coulombVelocity ?? 0;
  for (let i = 0; i < n; i++) {
    let e = ext.tau ? ext.tau[i]! : 0;
    if (ext.viscous) e -= ext.viscous[i]! * qd[i]!;
    if (ext.coulomb) {
      const w = qd[i]!;
      e -= ext.coulomb[i]! * (vs > 0 ? Math.tanh(w / vs) : Math.sign(w));
    }
    if (ext.spring) e -= ext.spring.k[i]! * (q[i]! - ext.spring.q0[i]!);
    out[i] = e;
  }
  if (ext.endpointForce) {
    const [fx, fy] = asPair(ext.endpointForce, 'the endpoint force');
    if (n === 1) {
      const a = q[0]!;
      out[0]! += p.L1 * (-Math.sin(a) * fx + Math.cos(a) * fy);
    } else {
      const t = p as TwoLinkParams;
      const a = asPair(q);
      const a1 = a[0];
      const a12 = a1 + a[1];
      const s12 = Math.sin(a12);
      const c12 = Math.cos(a12);
      const j21x = -t.L2 * s12; // dx/da2
      const j21y = t.L2 * c12; // dy/da2
      const o = asOutPair(out);
      o[0] += (-t.L1 * Math.sin(a1) + j21x) * fx + (t.L1 * Math.cos(a1) + j21y) * fy;
      o[1] += j21x * fx + j21y * fy;
    }
  }
  return out;
}

/** Kinetic and potential energy of the two-link arm [J]. */
export function energy(p: TwoLinkParams, q: readonly number[], qd: readonly number[]): Energy {
  return twoLinkDynamics(p).energy(asPair(q), asPair(qd));
}

// ---------------------------------------------------------------------------------------------
// One link: T = Io alpha'' + m g d cos(alpha), Io = I + m d^2 (seed 000)

/** Moment of inertia about the joint, Io = I + m d^2 [kg m^2]. */
export function jointInertia1(p: OneLinkParams): number {
  return p.I1 + p.m1 * p.d1 * p.d1;
}

/** One-link inverse dynamics [N m]. */
export function inverseDynamics1(p: OneLinkParams, q: number, qdd: number): number {
  return jointInertia1(p) * qdd + p.m1 * p.g * p.d1 * Math.cos(q);
}

/** One-link forward dynamics [rad/s^2]; `rotorInertia` as for two links. */
export function forwardDynamics1(p: OneLinkParams, q: number, tau: number, rotorInertia = 0): number {
  return (tau - p.m1 * p.g * p.d1 * Math.cos(q)) / (jointInertia1(p) + rotorInertia);
}

/** One-link energy [J]. */
export function energy1(p: OneLinkParams, q: number, qd: number): Energy {
  const kinetic = 0.5 * jointInertia1(p) * qd * qd;
  const potential = p.m1 * p.g * p.d1 * Math.sin(q);
  return { kinetic, potential, total: kinetic + potential };
}
