/**
 * The actuated two-link arm's inverse dynamics (src/model/actuated.ts: seed 000's M, V, G, the rotors,
 * friction) written linear in its base parameters, tau = Y(q, qd, qdd) theta:
 *
 *   tau1 = J1 qdd1 + J2 (qdd1 + qdd2) + mL [L1 (2 cos a2 qdd1 + cos a2 qdd2 - sin a2 (2 qd1 qd2 + qd2^2)) + g cos(a1 + a2)]
 *          + mG g cos a1 + fv1 qd1 + fc1 tanh(qd1 / v)
 *   tau2 = J2 (qdd1 + qdd2) + mL [L1 (cos a2 qdd1 + sin a2 qd1^2) + g cos(a1 + a2)] + Jm2 qdd2
 *          + fv2 qd2 + fc2 tanh(qd2 / v)
 *
 * with the base parameters
 *
 *   J1  = I1 + m1 d1^2 + m2 L1^2 + N1^2 Jrotor1   joint 1's inertia with link 2 as a point at the elbow and motor 1's rotor
 *   J2  = I2 + m2 d2^2                            link 2's inertia about the elbow
 *   mL  = m2 d2                                   link 2's first moment of mass
 *   mG  = m1 d1 + m2 L1                           link 1's first moment, link 2's mass at the elbow
 *   Jm2 = N2^2 Jrotor2                            motor 2's rotor, reflected to the joint
 *   fv1, fv2, fc1, fc2                            viscous [N m s/rad] and Coulomb [N m] friction
 *
 * Why these and no others. Only combinations of m, d and I appear in M, V and G: the individual masses,
 * centres of mass and inertias are not identifiable from joint torques. The mass-moment form uses that
 * L1 and g are known (the rig file's geometry and gravity): m2 L1 d2 (Coriolis and coupling) and
 * g m2 d2 (gravity) are one parameter, m2 d2, and g (m1 d1 + m2 L1) is mG. Motor 1's reflected rotor
 * inertia enters only M11, exactly where J1 does: it is not separable and is lumped into J1. Motor 2's
 * enters only M22, which J2 also shapes through M11 and M12: it is separable (Jm2). The motor's
 * torque gain (eta N kt / R, duty -> torque) scales every parameter alike and is not separable: the
 * torques here are what the rig file's nominal motor model says the duty gave, so the parameters are
 * in those units (exact when the motor data are right; all off by the same factor when the gain is
 * off, which the controller and the twin, using the same motor model, do not notice). Back-EMF
 * (eta N^2 kt ke / R) acts as viscous friction: an error in ke lands in fv.
 *
 * Pure math: no I/O, no clock.
 */
import { NOMINAL_COULOMB_VELOCITY, type ActuatedArmModel } from '../model/actuated.js';
import { asPair, isTwoLink, J, type TwoLinkParams } from '../model/types.js';

/** One base parameter: its key, unit and what it is. */
export interface BaseParameterInfo {
  key: BaseParameterKey;
  unit: string;
  meaning: string;
}

export const BASE_PARAMETERS = [
  { key: 'J1', unit: 'kg m^2', meaning: 'I1 + m1 d1^2 + m2 L1^2 + N1^2 Jrotor1 (joint 1 inertia, rotor 1 included)' },
  { key: 'J2', unit: 'kg m^2', meaning: 'I2 + m2 d2^2 (link 2 inertia about the elbow)' },
  { key: 'mL', unit: 'kg m', meaning: 'm2 d2 (first moment of link 2)' },
  { key: 'mG', unit: 'kg m', meaning: 'm1 d1 + m2 L1 (first moment of link 1 with link 2 at the elbow)' },
  { key: 'Jm2', unit: 'kg m^2', meaning: 'N2^2 Jrotor2 (motor 2 rotor reflected to the joint)' },
  { key: 'fv1', unit: 'N m s/rad', meaning: 'viscous friction, joint 1 (with any back-EMF error)' },
  { key: 'fv2', unit: 'N m s/rad', meaning: 'viscous friction, joint 2 (with any back-EMF error)' },
  { key: 'fc1', unit: 'N m', meaning: 'Coulomb friction, joint 1' },
  { key: 'fc2', unit: 'N m', meaning: 'Coulomb friction, joint 2' },
] as const satisfies readonly { key: string; unit: string; meaning: string }[];

export type BaseParameterKey = 'J1' | 'J2' | 'mL' | 'mG' | 'Jm2' | 'fv1' | 'fv2' | 'fc1' | 'fc2';

/** Number of base parameters (columns of Y). */
export const P = BASE_PARAMETERS.length;

/** Base parameters by key. */
export type BaseParameters = Record<BaseParameterKey, number>;

/** What the regressor needs to know besides the state: the known geometry and the friction model. */
export interface RegressorConstants {
  /** Length of link 1 [m]. */
  L1: number;
  /** Gravity [m/s^2]. */
  g: number;
  /** Coulomb friction is c tanh(qd / v) with this v [rad/s] (the actuated model's v_c). */
  coulombVelocity: number;
}

/** The Coulomb smoothing velocity of the host's controller and twin [rad/s] (the actuated model's). */
export const HOST_COULOMB_VELOCITY = NOMINAL_COULOMB_VELOCITY;

/** The regressor's constants of an actuated two-link arm model: its L1, g and v_c. */
export function regressorConstants(model: ActuatedArmModel): RegressorConstants {
  return { L1: model.arm.L1, g: model.arm.g, coulombVelocity: model.coulombVelocity };
}

/**
 * Writes the two rows of Y at (q, qd, qdd) into `out` (row-major, 2 x P: joint 1's row then joint
 * 2's), so that tau = Y theta with theta in BASE_PARAMETERS order. Allocates nothing.
 */
export function regressorRows(
  c: RegressorConstants,
  q: readonly number[],
  qd: readonly number[],
  qdd: readonly number[],
  out: number[] = new Array<number>(2 * P).fill(0),
): number[] {
  const [a1, a2] = asPair(q, 'q');
  const [w1, w2] = asPair(qd, 'qd');
  const [b1, b2] = asPair(qdd, 'qdd');
  const c2 = Math.cos(a2);
  const s2 = Math.sin(a2);
  const g12 = c.g * Math.cos(a1 + a2);
  const v = c.coulombVelocity;
  const sgn = (w: number): number => (v > 0 ? Math.tanh(w / v) : Math.sign(w));
  // joint 1
  out[0] = b1; // J1
  out[1] = b1 + b2; // J2
  out[2] = c.L1 * (2 * c2 * b1 + c2 * b2 - s2 * (2 * w1 * w2 + w2 * w2)) + g12; // mL
  out[3] = c.g * Math.cos(a1); // mG
  out[4] = 0; // Jm2
  out[5] = w1; // fv1
  out[6] = 0; // fv2
  out[7] = sgn(w1); // fc1
  out[8] = 0; // fc2
  // joint 2
  out[9] = 0;
  out[10] = b1 + b2;
  out[11] = c.L1 * (c2 * b1 + s2 * w1 * w1) + g12;
  out[12] = 0;
  out[13] = b2;
  out[14] = 0;
  out[15] = w2;
  out[16] = 0;
  out[17] = sgn(w2);
  return out;
}

/** theta as an array in BASE_PARAMETERS order. */
export function toVector(p: BaseParameters): number[] {
  return BASE_PARAMETERS.map((b) => p[b.key]);
}

/** An array in BASE_PARAMETERS order as named parameters. */
export function fromVector(v: readonly number[]): BaseParameters {
  return Object.fromEntries(BASE_PARAMETERS.map((b, i) => [b.key, v[i]!])) as BaseParameters;
}

/**
 * The base parameters of an arm with its reflected rotor inertias N^2 Jrotor [kg m^2] per joint and
 * its friction (viscous [N m s/rad], Coulomb [N m] per joint).
 */
export function baseParameters(
  arm: TwoLinkParams,
  rotor: readonly number[],
  friction: { viscous: readonly number[]; coulomb: readonly number[] },
): BaseParameters {
  const r = asPair(rotor, 'the rotor inertias');
  const fv = asPair(friction.viscous, 'the viscous friction');
  const fc = asPair(friction.coulomb, 'the Coulomb friction');
  return {
    J1: arm.I1 + arm.m1 * arm.d1 * arm.d1 + arm.m2 * arm.L1 * arm.L1 + r[0],
    J2: arm.I2 + arm.m2 * arm.d2 * arm.d2,
    mL: arm.m2 * arm.d2,
    mG: arm.m1 * arm.d1 + arm.m2 * arm.L1,
    Jm2: r[1],
    fv1: fv[0],
    fv2: fv[1],
    fc1: fc[0],
    fc2: fc[1],
  };
}

/**
 * The base parameters of an actuated two-link arm model (its arm, reflected rotor inertias and
 * friction): Y theta then equals the model's inverse dynamics. Throws a RangeError for one link.
 */
export function modelBaseParameters(model: ActuatedArmModel): BaseParameters {
  const arm = model.arm;
  if (!isTwoLink(arm)) throw new RangeError('base parameters need a two-link arm (L2, d2, m2, I2)');
  return baseParameters(arm, model.rotorInertia, { viscous: model.viscous, coulomb: model.coulomb });
}

/** tau = Y theta at one state [N m], per joint. */
export function predictTorque(
  c: RegressorConstants,
  theta: readonly number[],
  q: readonly number[],
  qd: readonly number[],
  qdd: readonly number[],
  out: number[] = [0, 0],
  rows: number[] = new Array<number>(2 * P).fill(0),
): number[] {
  regressorRows(c, q, qd, qdd, rows);
  for (const j of J) {
    let s = 0;
    for (let k = 0; k < P; k++) s += rows[j * P + k]! * theta[k]!;
    out[j] = s;
  }
  return out;
}
