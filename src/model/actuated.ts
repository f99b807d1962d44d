/**
 * The actuated arm as one model: the rigid arm (dynamics.ts: seed 000's M, V, G), the geared DC
 * motors that drive it (motor.ts: torque <-> duty with back-EMF, the rotors' inertia reflected to the
 * joints), and the joints' friction. The controller's feedforward and saturation, the twin, the
 * feasibility check and the identification all evaluate this one model, so none of them works a
 * term out again.
 *
 * The split is pinocchio's: a constant model built once from the rig's nominal values
 * ({@link createActuatedArmModel}), a preallocated data ({@link createActuatedArmData}), and one
 * function per term that writes into the data (or into `out`) and returns it. Nothing allocates
 * once the data exists. A data belongs to one user (its arrays are scratch for every term).
 *
 * Notation: q = (alpha1, alpha2) as in seed 000 [rad], qd [rad/s], qdd [rad/s^2], torques [N m]; per
 * joint i the gear ratio N_i, the rotor inertia J_r,i, viscous b_i and Coulomb c_i friction:
 *
 *   M_a(q)    = M(q) + diag(N_i^2 J_r,i)                    the actuated arm's mass matrix
 *   V(q, qd)  = C(q, qd) qd                                 Coriolis and centripetal torques
 *   f_i(qd_i) = b_i qd_i + (c_i + (s_i - c_i) e^-(qd_i/v_s)^2) tanh(qd_i / v_c)   friction the joint loses
 *               (Stribeck's curve: the breakaway s_i at rest falls to the Coulomb level c_i over v_s)
 *   tm_i      = eta_i N_i kt_i (duty_i Vs - ke_i N_i qd_i) / R_i    motor torque at the joint
 *             = eta_i N_i kt_i Vs / R_i duty_i - B_i qd_i, B_i = eta_i N_i^2 kt_i ke_i / R_i (back-EMF damping)
 *   tau       = M_a(q) qdd + V(q, qd) + G(q) + f(qd)        inverse dynamics
 *   qdd       = M_a(q)^-1 (tau - V(q, qd) - G(q) - f(qd))   forward dynamics (tau = tm(duty, qd) under a duty)
 *
 * Works for one link as well (M = I1 + m1 d1^2, V = 0, G = m1 g d1 cos a1).
 */
import { TwoLinkDynamics } from './dynamics.js';
import { dutyForTorque, reflectedInertia, torqueForDuty, type MotorParams } from './motor.js';
import { asMat2, asOutPair, asPair, isTwoLink, type ArmParams, type Energy } from './types.js';

/**
 * The velocity v_c [rad/s] below which the nominal model smooths Coulomb friction, c tanh(qd / v_c):
 * a pure sign would make the twin's fixed-step integration chatter at rest and the feedforward jump
 * at every reversal. The identification's regressor uses the same value, so that what it fits is
 * what the controller and the twin use.
 */
export const NOMINAL_COULOMB_VELOCITY = 0.01;

/** The Stribeck velocity when a spec gives a breakaway but none [rad/s] (about 1 deg/s at the joint). */
export const DEFAULT_STRIBECK_VELOCITY = 0.02;

/** What the model is built from: a resolved rig (`Rig`) is one as it is. */
export interface ActuatedArmSpec {
  arm: ArmParams;
  /**
   * Viscous [N m s/rad] and Coulomb [N m] friction per joint; `breakaway` [N m], the static level the
   * friction rises to at low speed (Stribeck's), over `stribeckVelocity` [rad/s]. @default none
   */
  friction?: {
    viscous: readonly number[];
    coulomb: readonly number[];
    breakaway?: readonly number[];
    stribeckVelocity?: readonly number[];
  };
  /** One per joint (extra entries are ignored). */
  motors: readonly MotorParams[];
  /** H-bridge supply [V]. */
  supplyV: number;
  /** v_c [rad/s]; 0 is a pure sign. @default NOMINAL_COULOMB_VELOCITY */
  coulombVelocity?: number;
}

/**
 * The constant model: a snapshot of the spec (copied, so later changes to the spec do not reach it)
 * with the parameter combinations precomputed. Read-only by type; not frozen, because frozen arrays
 * of numbers made a controller tick measurably slower in V8 (about 0.2 us of 0.4).
 */
export interface ActuatedArmModel {
  readonly joints: 1 | 2;
  readonly arm: Readonly<ArmParams>;
  readonly motors: readonly Readonly<MotorParams>[];
  /** [V] */
  readonly supplyV: number;
  /** b_i [N m s/rad] */
  readonly viscous: readonly number[];
  /** c_i [N m] */
  readonly coulomb: readonly number[];
  /** v_c [rad/s] */
  readonly coulombVelocity: number;
  /** s_i - c_i: the breakaway above the Coulomb level [N m] (0: no stiction). */
  readonly stiction: readonly number[];
  /** v_s,i: the Stribeck velocity [rad/s]. */
  readonly stribeckVelocity: readonly number[];
  /** N_i^2 J_r,i [kg m^2] */
  readonly rotorInertia: readonly number[];
  /** The two-link terms (undefined for one link). */
  readonly two: TwoLinkDynamics | undefined;
  /** One link: I1 + m1 d1^2 [kg m^2] (0 for two). */
  readonly io1: number;
  /** One link: m1 g d1 [N m] (0 for two). */
  readonly mgd1: number;
}

/** The preallocated results and scratch of one user of a model; arrays have one entry per joint. */
export interface ActuatedArmData {
  /** M_a(q) [kg m^2] */
  readonly M: number[][];
  /** C(q, qd) [N m s/rad] */
  readonly C: number[][];
  /** V(q, qd) [N m] */
  readonly V: number[];
  /** C(q, qd)^T qd [N m] */
  readonly ctq: number[];
  /** G(q) [N m] */
  readonly G: number[];
  /** f(qd) [N m] */
  readonly friction: number[];
  /** Generalized momentum M_a(q) qd [kg m^2/s]. */
  readonly momentum: number[];
  /** The default output of the torque terms [N m]. */
  readonly tau: number[];
  /** The default output of the forward dynamics [rad/s^2]. */
  readonly qdd: number[];
  /** Scratch: the torque the forward dynamics solves for [N m]. */
  readonly net: number[];
}

/** A number, or a measured pair (breakawayDuty [ccw, cw]), finite number by number. */
const finiteAll = (v: unknown): boolean => (Array.isArray(v) ? v : [v]).every((x) => Number.isFinite(x));

function check(ok: boolean, what: string, v: unknown): void {
  if (!ok) throw new RangeError(`actuated arm: ${what} (got ${String(v)})`);
}

/** Builds the constant model. Throws a RangeError naming the field when a value is missing or not finite. */
export function createActuatedArmModel(spec: ActuatedArmSpec): ActuatedArmModel {
  const joints: 1 | 2 = isTwoLink(spec.arm) ? 2 : 1;
  check(spec.motors.length >= joints, `needs ${joints} motors`, spec.motors.length);
  const motors = spec.motors.slice(0, joints).map((m) => (m.driver ? { ...m, driver: { ...m.driver } } : { ...m }));
  motors.forEach((m, i) => {
    for (const [k, v] of Object.entries(m)) if (k !== 'driver') check(finiteAll(v), `motors[${i}].${k} must be a finite number`, v);
    const d = m.driver;
    if (d) {
      for (const [k, v] of Object.entries(d))
        if (k !== 'preset') check(Number.isFinite(v), `motors[${i}].driver.${k} must be a finite number`, v);
      check(d.dropV < spec.supplyV, `motors[${i}].driver.dropV must be below the supply (${spec.supplyV} V)`, d.dropV);
    }
  });
  check(Number.isFinite(spec.supplyV) && spec.supplyV > 0, 'supplyV must be a finite number > 0', spec.supplyV);
  return build(spec, motors);
}

/**
 * The rigid arm alone, seed 000's tau = M(q) qdd + V(q, qd) + G(q): the same model with no motors (so
 * no rotor inertia) and no friction. For the calculators and the checks that are about the links
 * only; the motor functions (motorTorque, motorDuty, ...) need motors and are not for this model.
 */
export function createRigidArmModel(arm: ArmParams): ActuatedArmModel {
  return build({ arm, motors: [], supplyV: 1 }, []);
}

function build(spec: ActuatedArmSpec, motors: MotorParams[]): ActuatedArmModel {
  const arm = { ...spec.arm };
  const joints: 1 | 2 = isTwoLink(arm) ? 2 : 1;
  for (const [k, v] of Object.entries(arm)) check(Number.isFinite(v), `arm.${k} must be a finite number`, v);
  const per = (a: readonly number[] | undefined, name: string): readonly number[] => {
    const out = a ? a.slice(0, joints) : new Array<number>(joints).fill(0);
    check(out.length === joints, `friction.${name} needs ${joints} entries`, out.length);
    out.forEach((v, i) => check(Number.isFinite(v), `friction.${name}[${i}] must be a finite number`, v));
    return out;
  };
  const coulombVelocity = spec.coulombVelocity ?? NOMINAL_COULOMB_VELOCITY;
  check(Number.isFinite(coulombVelocity) && coulombVelocity >= 0, 'coulombVelocity must be a finite number >= 0', coulombVelocity);
  const one = arm;
  const coulomb = per(spec.friction?.coulomb, 'coulomb');
  const breakaway = spec.friction?.breakaway ? per(spec.friction.breakaway, 'breakaway') : coulomb;
  const stribeckVelocity = spec.friction?.stribeckVelocity
    ? per(spec.friction.stribeckVelocity, 'stribeckVelocity')
    : new Array<number>(joints).fill(DEFAULT_STRIBECK_VELOCITY);
  stribeckVelocity.forEach((v, i) => check(v > 0, `friction.stribeckVelocity[${i}] must be > 0`, v));
  return {
    joints,
    arm,
    motors,
    supplyV: spec.supplyV,
    viscous: per(spec.friction?.viscous, 'viscous'),
    coulomb,
    coulombVelocity,
    stiction: breakaway.map((b, i) => Math.max(0, b - coulomb[i]!)),
    stribeckVelocity,
    rotorInertia: motors.length ? motors.map(reflectedInertia) : new Array<number>(joints).fill(0),
    two: isTwoLink(arm) ? new TwoLinkDynamics(arm) : undefined,
    io1: joints === 1 ? one.I1 + one.m1 * one.d1 * one.d1 : 0,
    mgd1: joints === 1 ? one.m1 * one.g * one.d1 : 0,
  };
}

/** A data for `model`: every array preallocated. */
export function createActuatedArmData(model: ActuatedArmModel): ActuatedArmData {
  const n = model.joints;
  const z = (): number[] => new Array<number>(n).fill(0);
  const m = (): number[][] => Array.from({ length: n }, z);
  return { M: m(), C: m(), V: z(), ctq: z(), G: z(), friction: z(), momentum: z(), tau: z(), qdd: z(), net: z() };
}

/**
 * M_a(q) = M(q) + diag(N_i^2 J_r,i) [kg m^2], into `data.M`. For two links, with k = m2 L1 d2:
 * M11 = I1 + I2 + m1 d1^2 + m2 (L1^2 + d2^2) + 2 k cos a2 + N1^2 J_r1, M12 = M21 = I2 + m2 d2^2 + k cos a2,
 * M22 = I2 + m2 d2^2 + N2^2 J_r2.
 */
export function computeMassMatrix(model: ActuatedArmModel, data: ActuatedArmData, q: readonly number[]): number[][] {
  const M = data.M;
  const r = model.rotorInertia;
  const two = model.two;
  if (two) {
    const ri = asPair(r);
    const kc = two.k * Math.cos(asPair(q)[1]);
    const m = asMat2(M, 'M');
    m[0][0] = two.m11c + 2 * kc + ri[0];
    m[0][1] = two.m22 + kc;
    m[1][0] = m[0][1];
    m[1][1] = two.m22 + ri[1];
  } else {
    M[0]![0] = model.io1 + r[0]!;
  }
  return M;
}

/**
 * The largest diagonal of M_a over all poses [kg m^2] (each joint's worst-case inertia), into `out`:
 * M11 peaks at a2 = 0 (cos a2 = 1), M22 is constant.
 */
export function maxMassMatrixDiagonal(model: ActuatedArmModel, out: number[] = new Array<number>(model.joints).fill(0)): number[] {
  const r = model.rotorInertia;
  const two = model.two;
  if (two) {
    const ri = asPair(r);
    out[0] = two.m11c + 2 * Math.abs(two.k) + ri[0];
    out[1] = two.m22 + ri[1];
  } else {
    out[0] = model.io1 + r[0]!;
  }
  return out;
}

/**
 * C(q, qd) [N m s/rad], into `data.C`: the Coriolis matrix of the Christoffel symbols, so that
 * C qd = V and dM/dt - 2 C is skew-symmetric. With h = m2 L1 d2 sin a2:
 * C = [[-h qd2, -h (qd1 + qd2)], [h qd1, 0]]. The rotors add nothing (their inertia is constant).
 */
export function computeCoriolisMatrix(
  model: ActuatedArmModel,
  data: ActuatedArmData,
  q: readonly number[],
  qd: readonly number[],
): number[][] {
  const C = data.C;
  const two = model.two;
  if (two) {
    const w = asPair(qd);
    const h = two.k * Math.sin(asPair(q)[1]);
    const c = asMat2(C, 'C');
    c[0][0] = -h * w[1];
    c[0][1] = -h * (w[0] + w[1]);
    c[1][0] = h * w[0];
    c[1][1] = 0;
  } else {
    C[0]![0] = 0;
  }
  return C;
}

/** V(q, qd) = C(q, qd) qd [N m], into `data.V`: V1 = -h (2 qd1 qd2 + qd2^2), V2 = h qd1^2, h = m2 L1 d2 sin a2. */
export function computeVelocityTerms(
  model: ActuatedArmModel,
  data: ActuatedArmData,
  q: readonly number[],
  qd: readonly number[],
): number[] {
  if (model.two) model.two.velocityTerms(asPair(q), asPair(qd), asOutPair(data.V));
  else data.V[0] = 0;
  return data.V;
}

/**
 * C(q, qd)^T qd [N m], into `data.ctq`: the term of the generalized-momentum dynamics
 * dp/dt = tau + C^T qd - G (p = M_a qd). With h = m2 L1 d2 sin a2: [0, -h qd1 (qd1 + qd2)].
 */
export function computeCoriolisTransposeVelocity(
  model: ActuatedArmModel,
  data: ActuatedArmData,
  q: readonly number[],
  qd: readonly number[],
): number[] {
  const out = data.ctq;
  out[0] = 0;
  if (model.two) {
    const w = asPair(qd);
    const h = model.two.k * Math.sin(asPair(q)[1]);
    out[1] = -h * w[0] * (w[0] + w[1]);
  }
  return out;
}

/** G(q) [N m], into `data.G`: G1 = g ((m1 d1 + m2 L1) cos a1 + m2 d2 cos(a1 + a2)), G2 = g m2 d2 cos(a1 + a2). */
export function computeGravity(model: ActuatedArmModel, data: ActuatedArmData, q: readonly number[]): number[] {
  if (model.two) model.two.gravityTerms(asPair(q), asOutPair(data.G));
  else data.G[0] = model.mgd1 * Math.cos(q[0]!);
  return data.G;
}

/**
 * f_i = b_i qd_i + (c_i + (s_i - c_i) exp(-(qd_i / v_s)^2)) tanh(qd_i / v_c) [N m] (sign(qd_i) for the
 * tanh when v_c = 0), into `data.friction`:
 * the torque each joint loses to friction, along its velocity.
 */
export function computeFriction(model: ActuatedArmModel, data: ActuatedArmData, qd: readonly number[]): number[] {
  const f = data.friction;
  const v = model.coulombVelocity;
  for (let i = 0; i < model.joints; i++) {
    const w = qd[i]!;
    const ds = model.stiction[i]!;
    let c = model.coulomb[i]!;
    if (ds > 0) {
      const r = w / model.stribeckVelocity[i]!;
      c += ds * Math.exp(-r * r);
    }
    // (a joint without Coulomb friction skips the tanh: the rigid arm's simulation calls this 4 times a step)
    f[i] = model.viscous[i]! * w + (c === 0 ? 0 : c * (v > 0 ? Math.tanh(w / v) : Math.sign(w)));
  }
  return f;
}

/** The generalized momentum p = M_a(q) qd [kg m^2/s], into `data.momentum`. */
export function computeMomentum(model: ActuatedArmModel, data: ActuatedArmData, q: readonly number[], qd: readonly number[]): number[] {
  const p = data.momentum;
  const r = model.rotorInertia;
  const two = model.two;
  if (two) {
    const w = asPair(qd);
    const ri = asPair(r);
    const kc = two.k * Math.cos(asPair(q)[1]);
    const m12 = two.m22 + kc;
    p[0] = ri[0] * w[0] + (two.m11c + 2 * kc) * w[0] + m12 * w[1];
    p[1] = ri[1] * w[1] + m12 * w[0] + two.m22 * w[1];
  } else {
    p[0] = r[0]! * qd[0]! + model.io1 * qd[0]!;
  }
  return p;
}

/**
 * Kinetic and potential energy [J]: T = p . qd / 2 with p = M_a(q) qd (the rotors' kinetic energy
 * included), U = g (m1 d1 + m2 L1) sin a1 + g m2 d2 sin(a1 + a2) (zero at a1 = a2 = 0).
 */
export function computeEnergy(model: ActuatedArmModel, data: ActuatedArmData, q: readonly number[], qd: readonly number[]): Energy {
  const p = computeMomentum(model, data, q, qd);
  let kinetic = 0;
  for (let i = 0; i < model.joints; i++) kinetic += 0.5 * p[i]! * qd[i]!;
  const two = model.two;
  let potential = model.mgd1 * Math.sin(q[0]!);
  if (two) {
    const a = asPair(q);
    potential = two.g1c * Math.sin(a[0]) + two.g2c * Math.sin(a[0] + a[1]);
  }
  return { kinetic, potential, total: kinetic + potential };
}

/** The joint torque [N m] that motor `joint` (0-based) gives at `duty` (-1..1) and joint speed `qd` [rad/s]: tm = eta N kt (duty Vs - ke N qd) / R. */
export function motorTorque(model: ActuatedArmModel, joint: number, duty: number, qd: number): number {
  return torqueForDuty(model.motors[joint]!, model.supplyV, duty, qd);
}

/** The duty (unclamped) for joint torque `tau` [N m] from motor `joint` at joint speed `qd` [rad/s]: duty = (tau R / (eta N kt) + ke N qd) / Vs. */
export function motorDuty(model: ActuatedArmModel, joint: number, tau: number, qd: number): number {
  return dutyForTorque(model.motors[joint]!, model.supplyV, tau, qd);
}

/**
 * The back-EMF damping of motor `joint` at its joint, B = -d tm / d qd = eta N^2 kt ke / R
 * (R + the H-bridge's series resistance with a driver) [N m s/rad]: at a fixed duty the motor acts as this viscous friction on top of its torque.
 */
export function motorDamping(model: ActuatedArmModel, joint: number): number {
  const m = model.motors[joint]!;
  // (through an H-bridge the back-EMF's current also crosses its switches' resistance)
  if (m.driver) return (m.efficiency * m.gear * m.gear * m.kt * m.ke) / (m.R + m.driver.seriesOhm);
  return (m.efficiency * m.gear * m.gear * m.kt * m.ke) / m.R;
}

/**
 * The most torque [N m] motor `joint` can give in `direction` (+1 or -1) at joint speed `qd`
 * [rad/s] with |duty| <= maxDuty, as a magnitude: tm(+maxDuty, qd) or -tm(-maxDuty, qd). Negative
 * when back-EMF leaves the motor unable to push that way at all.
 */
export function motorTorqueLimit(model: ActuatedArmModel, joint: number, maxDuty: number, qd: number, direction: number): number {
  return direction >= 0 ? motorTorque(model, joint, maxDuty, qd) : -motorTorque(model, joint, -maxDuty, qd);
}

/** tau_i = tm_i(duty_i, qd_i) - f_i(qd_i) [N m], into `out` (default `data.tau`): what the motors leave to move the arm. */
export function computeActuatorTorques(
  model: ActuatedArmModel,
  data: ActuatedArmData,
  qd: readonly number[],
  duty: readonly number[],
  out: number[] = data.tau,
): number[] {
  const f = computeFriction(model, data, qd);
  for (let i = 0; i < model.joints; i++) out[i] = motorTorque(model, i, duty[i]!, qd[i]!) - f[i]!;
  return out;
}

/** Inverse dynamics of the actuated arm, tau = M_a(q) qdd + V(q, qd) + G(q) + f(qd) [N m], into `out` (default `data.tau`). */
export function computeInverseDynamics(
  model: ActuatedArmModel,
  data: ActuatedArmData,
  q: readonly number[],
  qd: readonly number[],
  qdd: readonly number[],
  out: number[] = data.tau,
): number[] {
  if (model.two) model.two.inverseDynamics(asPair(q), asPair(qd), asPair(qdd), asOutPair(out));
  else out[0] = model.io1 * qdd[0]! + model.mgd1 * Math.cos(q[0]!);
  const f = computeFriction(model, data, qd);
  const r = model.rotorInertia;
  for (let i = 0; i < model.joints; i++) out[i]! += r[i]! * qdd[i]! + f[i]!;
  return out;
}

/** qdd = M_a^-1 (net - V - G) with `data.net` already holding the net torque. */
function solve(model: ActuatedArmModel, data: ActuatedArmData, q: readonly number[], qd: readonly number[], out: number[]): number[] {
  if (model.two) return model.two.forwardDynamics(asPair(q), asPair(qd), asPair(data.net), asOutPair(out), asPair(model.rotorInertia));
  out[0] = (data.net[0]! - model.mgd1 * Math.cos(q[0]!)) / (model.io1 + model.rotorInertia[0]!);
  return out;
}

/** Forward dynamics of the actuated arm under joint torques: qdd = M_a(q)^-1 (tau - V - G - f) [rad/s^2], into `out` (default `data.qdd`). */
export function computeForwardDynamics(
  model: ActuatedArmModel,
  data: ActuatedArmData,
  q: readonly number[],
  qd: readonly number[],
  tau: readonly number[],
  out: number[] = data.qdd,
): number[] {
  const f = computeFriction(model, data, qd);
  for (let i = 0; i < model.joints; i++) data.net[i] = tau[i]! - f[i]!;
  return solve(model, data, q, qd, out);
}

/**
 * Forward dynamics of the actuated arm under motor duties: qdd = M_a(q)^-1 (tm(duty, qd) + extra - V
 * - G - f) [rad/s^2], into `out` (default `data.qdd`); `extra` [N m] is a joint torque the model does
 * not explain (a disturbance estimate), none if omitted.
 */
export function computeForwardDynamicsUnderDuty(
  model: ActuatedArmModel,
  data: ActuatedArmData,
  q: readonly number[],
  qd: readonly number[],
  duty: readonly number[],
  out: number[] = data.qdd,
  extra?: readonly number[],
): number[] {
  const net = computeActuatorTorques(model, data, qd, duty, data.net);
  if (extra) for (let i = 0; i < model.joints; i++) net[i]! += extra[i]!;
  return solve(model, data, q, qd, out);
}
