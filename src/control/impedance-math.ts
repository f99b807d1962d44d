/**
 * The arithmetic of impedance mode (impedance.ts) on 2x2 matrices: the endpoint inertia at a pose,
 * the damping that gives a spring a damping ratio with that inertia, the stiffness the loop's delay
 * keeps passive, and the force estimate from joint torques. Plain numbers, no state.
 */
import { computeMassMatrix, motorDamping, type ActuatedArmData, type ActuatedArmModel } from '../model/actuated.js';
import { jacobian } from '../model/kinematics.js';
import { asMat2, asPair, type Mat2, type TwoLinkParams } from '../model/types.js';

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

/** The largest eigenvalue of a symmetric 2x2 matrix. */
export function maxEig2(a: M2): number {
  const m = 0.5 * (a[0][0] + a[1][1]);
  const d = 0.5 * (a[0][0] - a[1][1]);
  return m + Math.sqrt(d * d + a[0][1] * a[1][0]);
}

/**
 * The endpoint inertia Lambda = (J M_a^-1 J^T)^-1 [kg] at pose q, the arm's real inertia as a push
 * at the endpoint feels it (rotor inertia included). Near the straight elbow J M^-1 J^T is nearly
 * singular and Lambda grows without bound along the arm: its inverse is regularized by 1e-3 of its
 * trace, which caps Lambda at about 1000 times its lighter direction.
 */
export function endpointInertia(model: ActuatedArmModel, data: ActuatedArmData, q: readonly number[], J: M2, out: M2 = zero2()): M2 {
  const M = asMat2(computeMassMatrix(model, data, q), 'the mass matrix');
  const Minv = inv2([
    [M[0][0], M[0][1]],
    [M[1][0], M[1][1]],
  ]);
  // J Minv J^T
  const JM = mul2(J, Minv);
  const Jt: M2 = [
    [J[0][0], J[1][0]],
    [J[0][1], J[1][1]],
  ];
  const li = mul2(JM, Jt);
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
 * formula gives the joint-space damping with M_a in place of Lambda.
 */
export function designDamping(lambda: M2, kx: number, ky: number, zeta: number, out: M2 = zero2()): M2 {
  const A = sqrtm2(lambda);
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

/**
 * The largest stiffness the loop keeps passive at elbow angle q2 (the bound depends on the pose only
 * through J^T J, a function of q2): in joint space min_i b_i / tau [N m/rad]; at the endpoint, for
 * K = k I, the matrix form of the same condition, diag(b) - tau k J^T J >= 0, gives
 * k <= 1 / (tau lambda_max(B^-1/2 J^T J B^-1/2)) [N/m]. `tau` from passivityTimeS.
 */
export function passiveStiffnessBound(arm: TwoLinkParams, b: readonly number[], q2: number, tauS: number, space: 'endpoint' | 'joint'): number {
  if (space === 'joint') return Math.min(...b) / tauS;
  const J = jacobian(arm, [0, q2]);
  const jtj00 = J[0][0] * J[0][0] + J[1][0] * J[1][0];
  const jtj01 = J[0][0] * J[0][1] + J[1][0] * J[1][1];
  const jtj11 = J[0][1] * J[0][1] + J[1][1] * J[1][1];
  const bj = asPair(b);
  const s0 = 1 / Math.sqrt(bj[0]);
  const s1 = 1 / Math.sqrt(bj[1]);
  const S: M2 = [
    [jtj00 * s0 * s0, jtj01 * s0 * s1],
    [jtj01 * s0 * s1, jtj11 * s1 * s1],
  ];
  return 1 / (tauS * maxEig2(S));
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
