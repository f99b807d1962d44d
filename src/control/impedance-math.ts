/**
 * The arithmetic of impedance mode (impedance.ts) on 2x2 matrices: the endpoint inertia at a pose,
 * the damping that gives a spring a damping ratio with that inertia, the stiffness the loop's delay
 * keeps passive, and the force estimate from joint torques. Plain numbers, no state: each function
 * writes into an `out` (and scratch) its caller owns, as the model does (actuated.ts), so that the
 * law's tick allocates nothing; left out, they are allocated for the call.
 */
import { computeMassMatrix, motorDamping, type ActuatedArmData, type ActuatedArmModel } from '../model/actuated.js';
import { jacobian } from '../model/kinematics.js';
import { asMat2, asPair, type Mat2, type Pair, type TwoLinkParams, type Vec2 } from '../model/types.js';

/** A 2x2 matrix, row-major. */
export type M2 = Mat2;

export const zero2 = (): M2 => [
  [0, 0],
  [0, 0],
];

/** out = a b. */
export function mul2(a: M2, b: M2, out: M2 = zero2()): M2 {
  const r00 = a[0][0] * b[0][0] + a[0][1] * b[1][0];
  const r01 = a[0][0] * b[0][1] + a[0][1] * b[1][1];
  const r10 = a[1][0] * b[0][0] + a[1][1] * b[1][0];
  const r11 = a[1][0] * b[0][1] + a[1][1] * b[1][1];
  out[0][0] = r00;
  out[0][1] = r01;
  out[1][0] = r10;
  out[1][1] = r11;
  return out;
}

/** The inverse of a 2x2 matrix (non-finite entries when it is singular). */
export function inv2(a: M2, out: M2 = zero2()): M2 {
  const det = a[0][0] * a[1][1] - a[0][1] * a[1][0];
  const a00 = a[0][0];
  out[0][0] = a[1][1] / det;
  out[0][1] = -a[0][1] / det;
  out[1][0] = -a[1][0] / det;
  out[1][1] = a00 / det;
  return out;
}

/**
 * The square root of a symmetric positive-definite 2x2 matrix: sqrt(A) = (A + s I) / t with
 * s = sqrt(det A), t = sqrt(trace A + 2 s) (Cayley-Hamilton: X^2 - tr(X) X + det(X) I = 0 for X = sqrt(A)).
 */
export function sqrtm2(a: M2, out: M2 = zero2()): M2 {
  const s = Math.sqrt(Math.max(0, a[0][0] * a[1][1] - a[0][1] * a[1][0]));
  const t = Math.sqrt(a[0][0] + a[1][1] + 2 * s);
  out[0][0] = (a[0][0] + s) / t;
  out[0][1] = a[0][1] / t;
  out[1][0] = a[1][0] / t;
  out[1][1] = (a[1][1] + s) / t;
  return out;
}

/** The scratch of {@link endpointInertia}: M_a^-1, J M_a^-1, J^T and J M_a^-1 J^T. */
export interface InertiaScratch {
  readonly minv: M2;
  readonly jm: M2;
  readonly jt: M2;
  readonly li: M2;
}

/** A fresh InertiaScratch (a law keeps one, so that its tick allocates nothing). */
export const inertiaScratch = (): InertiaScratch => ({ minv: zero2(), jm: zero2(), jt: zero2(), li: zero2() });

/** out = a^T. */
export function transpose2(a: M2, out: M2 = zero2()): M2 {
  const a01 = a[0][1];
  out[0][0] = a[0][0];
  out[0][1] = a[1][0];
  out[1][0] = a01;
  out[1][1] = a[1][1];
  return out;
}

/**
 * The endpoint inertia Lambda = (J M_a^-1 J^T)^-1 [kg] at pose q, the arm's real inertia as a push
 * at the endpoint feels it (rotor inertia included). Near the straight elbow J M^-1 J^T is nearly
 * singular and Lambda grows without bound along the arm: its inverse is regularized by 1e-3 of its
 * trace, which caps Lambda at about 1000 times its lighter direction. Into `out`, with `work` as
 * scratch: allocation-free when both are given.
 */
export function endpointInertia(
  model: ActuatedArmModel,
  data: ActuatedArmData,
  q: readonly number[],
  J: M2,
  out: M2 = zero2(),
  work: InertiaScratch = inertiaScratch(),
): M2 {
  const M = asMat2(computeMassMatrix(model, data, q), 'the mass matrix');
  const Minv = inv2(M, work.minv);
  // J Minv J^T
  const JM = mul2(J, Minv, work.jm);
  const li = mul2(JM, transpose2(J, work.jt), work.li);
  const eps = 1e-3 * (li[0][0] + li[1][1]);
  li[0][0] += eps;
  li[1][1] += eps;
  return inv2(li, out);
}

/**
 * Damping for stiffness diag(kx, ky) [N/m] with inertia Lambda and damping ratio zeta [N s/m]: the
 * factorization design of Albu-Schaeffer, Ott, Frese and Hirzinger, "Cartesian impedance control of
 * redundant robots: recent results with the DLR-light-weight-arms", ICRA 2003, eq. (13):
 * D = zeta (A K1 + K1 A), A = sqrt(Lambda), K1 = sqrt(K). For K = k I it is 2 zeta sqrt(k) sqrt(Lambda):
 * each principal direction of Lambda is then a mass-spring-damper with exactly that ratio. The same
 * formula gives the joint-space damping with M_a in place of Lambda. `sqrtOut` is the scratch for
 * sqrt(Lambda): allocation-free with `out` and `sqrtOut` given.
 */
export function designDamping(lambda: M2, kx: number, ky: number, zeta: number, out: M2 = zero2(), sqrtOut: M2 = zero2()): M2 {
  const A = sqrtm2(lambda, sqrtOut);
  const s0 = Math.sqrt(kx);
  const s1 = Math.sqrt(ky);
  out[0][0] = zeta * 2 * A[0][0] * s0;
  out[0][1] = zeta * A[0][1] * (s0 + s1);
  out[1][0] = zeta * A[1][0] * (s0 + s1);
  out[1][1] = zeta * 2 * A[1][1] * s1;
  return out;
}

/**
 * The physical damping of each joint [N m s/rad]: the motor's back-EMF damping eta N^2 kt ke / R,
 * which acts on the motion itself while the board holds a duty between two answers (the model's
 * viscous friction is not counted: impedance mode cancels it along the plan).
 */
export function jointDamping(model: ActuatedArmModel): number[] {
  return Array.from({ length: model.joints }, (_, i) => motorDamping(model, i));
}

/**
 * The loop's passivity time [s]: T/2 + t_d, the zero-order hold's half period and the delay from a
 * sample to the instant its answer applies. A spring K rendered by a sampled loop with delay stays
 * passive while the device's own damping b > K (T/2 + t_d): Colgate and Schenkel, "Passivity of a
 * class of sampled-data systems: application to haptic interfaces", J. Robotic Systems 14(1), 1997
 * (b > K T/2 without delay), with the delay term of Diolaiti, Niemeyer, Barbagli and Salisbury,
 * "Stability of haptic rendering: discretization, quantization, time delay, and Coulomb effects",
 * IEEE Trans. Robotics 22(2), 2006.
 *
 * What the bound leaves out (checked for issue 23; it makes the bound optimistic, not conservative):
 * Colgate and Schenkel's condition for a virtual wall K + B (backward-difference damper) is
 * b > K T/2 + |B|: the rendered damper counts against the device's damping too. Here the law's damper
 * D (J^T D J in joint space, larger than b at every stiffness with zeta = 1) and the duty's back-EMF
 * term (motor.ts dutyForTorque adds ke N qd at the predicted speed, a rendered damper of -b) are not
 * counted, so strictly no stiffness is passive by that condition. The mock at the accepted stiffnesses
 * shows no limit cycle (tests/impedance.test.ts); a stiffness above this bound is beyond what the
 * delay keeps passive even so (K (T/2 + t_d) alone exceeds b), which is why refusing it is sound.
 */
export function passivityTimeS(rateHz: number, answerDelaySamples: number): number {
  const T = 1 / rateHz;
  return T / 2 + answerDelaySamples * T;
}

/** Where {@link writeStiffnessBound} works: the pose (0, q2) and its Jacobian; and its answer. */
export interface BoundScratch {
  readonly q: Pair;
  readonly J: M2;
  /** The bound last written [N/m or N m/rad]. */
  bound: number;
}

/** A fresh BoundScratch. */
export const boundScratch = (): BoundScratch => ({ q: [0, 0], J: zero2(), bound: 0 });

/**
 * The largest stiffness the loop keeps passive at elbow angle q2 (the bound depends on the pose only
 * through J^T J, a function of q2): in joint space min_i b_i / tau [N m/rad]; at the endpoint, for
 * K = k I, the matrix form of the same condition, diag(b) - tau k J^T J >= 0, gives
 * k <= 1 / (tau lambda_max(B^-1/2 J^T J B^-1/2)) [N/m]. `tau` from passivityTimeS.
 */
export function passiveStiffnessBound(
  arm: TwoLinkParams,
  b: readonly number[],
  q2: number,
  tauS: number,
  space: 'endpoint' | 'joint',
): number {
  return writeStiffnessBound(arm, b, q2, tauS, space, boundScratch()).bound;
}

/**
 * passiveStiffnessBound into `work.bound`, allocation-free: the law's tick calls this one (a number
 * returned from a call V8 does not inline is a new heap number; one written into a field is not).
 */
export function writeStiffnessBound(
  arm: TwoLinkParams,
  b: readonly number[],
  q2: number,
  tauS: number,
  space: 'endpoint' | 'joint',
  work: BoundScratch,
): BoundScratch {
  if (space === 'joint') {
    // Math.min(...b), without the spread.
    let min = Infinity;
    for (let i = 0; i < b.length; i++) min = Math.min(min, b[i]!);
    work.bound = min / tauS;
    return work;
  }
  work.q[1] = q2;
  const J = jacobian(arm, work.q, work.J);
  const jtj00 = J[0][0] * J[0][0] + J[1][0] * J[1][0];
  const jtj01 = J[0][0] * J[0][1] + J[1][0] * J[1][1];
  const jtj11 = J[0][1] * J[0][1] + J[1][1] * J[1][1];
  const bj = asPair(b);
  const s0 = 1 / Math.sqrt(bj[0]);
  const s1 = 1 / Math.sqrt(bj[1]);
  // S = B^-1/2 J^T J B^-1/2 (symmetric), and its largest eigenvalue m + sqrt(d^2 + s01^2).
  const s00 = jtj00 * s0 * s0;
  const s01 = jtj01 * s0 * s1;
  const s11 = jtj11 * s1 * s1;
  const m = 0.5 * (s00 + s11);
  const d = 0.5 * (s00 - s11);
  work.bound = 1 / (tauS * (m + Math.sqrt(d * d + s01 * s01)));
  return work;
}

/**
 * Scales `v` in place to |v| <= max, with |v| exactly as Math.hypot(v[0], v[1]) gives it, without
 * the builtin's allocation: V8's (v8/src/builtins/math.tq, MathHypot) copies its arguments' absolute
 * values into a new array and returns a new number at every call. Its algorithm for two arguments:
 * Infinity if either is infinite, NaN if either is NaN, 0 if both are zero, else
 * max sqrt(sum (|v_i| / max)^2) with the sum taken by Kahan summation in argument order. Returns `v`.
 * tests/impedance-alloc.test.ts checks it against Math.hypot.
 */
export function capNorm(v: Vec2, max: number): Vec2 {
  const ax = Math.abs(v[0]);
  const ay = Math.abs(v[1]);
  let mag: number;
  if (ax === Infinity || ay === Infinity) mag = Infinity;
  else if (Number.isNaN(ax) || Number.isNaN(ay)) mag = NaN;
  else {
    const top = ax > ay ? ax : ay;
    let sum = 0;
    let compensation = 0;
    for (let i = 0; i < 2; i++) {
      const n = (i === 0 ? ax : ay) / top;
      const summand = n * n - compensation;
      const preliminary = sum + summand;
      compensation = preliminary - sum - summand;
      sum = preliminary;
    }
    mag = top === 0 ? 0 : Math.sqrt(sum) * top;
  }
  if (mag > max) {
    v[0] *= max / mag;
    v[1] *= max / mag;
  }
  return v;
}

/**
 * The endpoint force [N] that explains joint torques tau [N m] at Jacobian J: F = J^-T tau, as damped
 * least squares F = J (J^T J + mu^2 I)^-1 tau (mu = 1 mm) so that it stays finite at a straight elbow.
 */
export function forceFromTorque(J: M2, tau: readonly number[], out: number[] = [0, 0]): number[] {
  const mu2 = 1e-6;
  const a00 = J[0][0] * J[0][0] + J[1][0] * J[1][0] + mu2;
  const a01 = J[0][0] * J[0][1] + J[1][0] * J[1][1];
  const a11 = J[0][1] * J[0][1] + J[1][1] * J[1][1] + mu2;
  const det = a00 * a11 - a01 * a01;
  const t = asPair(tau);
  const y0 = (a11 * t[0] - a01 * t[1]) / det;
  const y1 = (-a01 * t[0] + a00 * t[1]) / det;
  out[0] = J[0][0] * y0 + J[0][1] * y1;
  out[1] = J[1][0] * y0 + J[1][1] * y1;
  return out;
}
