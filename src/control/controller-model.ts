/**
 * The arm model a user's controller gets in its context (`context.model`): a view of the actuated arm
 * (model/actuated.ts) that the built-in controller, the twin and the feasibility check evaluate, built
 * from the same rig data, so a user's feedforward sees the same rotor inertia and nominal friction.
 * The rigid arm alone (seed 000's M, V, G) is an explicit option (`{ rigid: true }`, `rigidView()`).
 * Built from plain data, so a controller's worker builds its own. Every function writes into an
 * optional `out` so that a controller's `update` can run without allocating. One- and two-link arms
 * alike; the Jacobian of a one-link arm is 2 x 1.
 *
 * Per-joint arrays have one entry per joint (1 or 2) and are indexed in loops, so an index keeps
 * its `!` (they are not Pairs).
 */
import {
  computeForwardDynamics,
  computeFriction,
  computeGravity,
  computeInverseDynamics,
  computeMassMatrix,
  computeVelocityTerms,
  createActuatedArmData,
  createActuatedArmModel,
  createRigidArmModel,
  type ActuatedArmSpec,
} from '../model/actuated.js';
import {
  armEndpoint,
  forwardKinematics,
  inverseKinematics,
  inverseKinematics1,
  jacobian,
  jacobianDot,
  type Elbow,
  type ForwardKinematics,
} from '../model/kinematics.js';
import { asMat2, asOutPair, isTwoLink, type ArmParams, type PairOf } from '../model/types.js';

/**
 * The nominal actuated arm's dynamics and kinematics, in the seed notebooks' notation (joint 1 from
 * the horizontal, joint 2 relative to link 1, counter-clockwise positive, gravity along -y):
 * `tau = M_a(q) qdd + C(q, qd) qd + G(q) + f(qd)` with `M_a = M + diag(N_i^2 J_r,i)` (the motors'
 * rotor inertia reflected to the joints) and `f` the rig's nominal friction; in a rigid view
 * `M_a = M` and `f = 0`. Arrays have one entry per joint unless said otherwise; matrices are
 * row-major (`m[row][col]`). Passing `out` makes a call allocation-free.
 */
export interface ControllerModel {
  /** 1 or 2. */
  readonly joints: 1 | 2;
  /** The nominal arm of the rig file [m, kg, kg m^2, m/s^2]. */
  readonly params: ArmParams;
  /** True for the rigid arm alone (no rotor inertia, no friction). */
  readonly rigid: boolean;
  /** N_i^2 J_r,i per joint [kg m^2] (zeros in a rigid view). */
  readonly rotorInertia: readonly number[];
  /** Outer reach L1 (+ L2) [m]. */
  readonly reach: number;
  /** Inverse dynamics: tau = M_a qdd + C qd + G + f [N m] for q [rad], qd [rad/s], qdd [rad/s^2]. */
  inverseDynamics(q: ArrayLike<number>, qd: ArrayLike<number>, qdd: ArrayLike<number>, out?: number[]): number[];
  /** Forward dynamics: qdd = M_a^-1 (tau - C qd - G - f) [rad/s^2] for tau [N m]. */
  forwardDynamics(q: ArrayLike<number>, qd: ArrayLike<number>, tau: ArrayLike<number>, out?: number[]): number[];
  /** Inertia matrix M_a(q) [kg m^2], joints x joints. */
  massMatrix(q: ArrayLike<number>, out?: number[][]): number[][];
  /** Centripetal and Coriolis torques C(q, qd) qd [N m] (zero for one link). */
  coriolis(q: ArrayLike<number>, qd: ArrayLike<number>, out?: number[]): number[];
  /** Gravity torques G(q) [N m]. */
  gravity(q: ArrayLike<number>, out?: number[]): number[];
  /** Nominal friction f_i = b_i qd_i + c_i tanh(qd_i / v_c) [N m] (zero in a rigid view). */
  friction(qd: ArrayLike<number>, out?: number[]): number[];
  /** Endpoint position [x, y] [m]. */
  endpoint(q: ArrayLike<number>, out?: number[]): number[];
  /** Endpoint Jacobian d(x, y)/dq [m/rad]: 2 rows (x, y), one column per joint (an `out` of another shape than 2 rows, 2 x 2 for two links, throws a PairLengthError). */
  jacobian(q: ArrayLike<number>, out?: number[][]): number[][];
  /** Time derivative of the Jacobian at (q, qd) [m/(rad s)], same shape. */
  jacobianDot(q: ArrayLike<number>, qd: ArrayLike<number>, out?: number[][]): number[][];
  /** Endpoint velocity J(q) qd [m/s]. */
  endpointVelocity(q: ArrayLike<number>, qd: ArrayLike<number>, out?: number[]): number[];
  /** Joint angles [rad] that put the endpoint at xy [m]; `elbow` picks the two-link branch (default 'down': q2 >= 0). Throws ReachError out of reach. */
  inverseKinematics(xy: ArrayLike<number>, elbow?: Elbow): number[];
  /** Elbow, endpoint and centres of mass with their velocities and accelerations (allocates: not for every tick). */
  forwardKinematics(q: ArrayLike<number>, qd?: ArrayLike<number>, qdd?: ArrayLike<number>): ForwardKinematics;
  /** The same arm without rotor inertia and friction (seed 000's rigid M, V, G); itself when already rigid. */
  rigidView(): ControllerModel;
}

/** Options of {@link controllerModel}. */
export interface ControllerModelOptions {
  /** The rigid arm alone: no rotor inertia, no friction. @default false */
  rigid?: boolean;
}

const arr = (a: ArrayLike<number>): number[] => Array.from(a);
// The model's functions read q[0], q[1] only: any ArrayLike works at run time.
const v = (a: ArrayLike<number>): readonly number[] => a as readonly number[];
const zeros = (n: number): number[] => new Array<number>(n).fill(0);
const zeros2 = (rows: number, cols: number): number[][] => Array.from({ length: rows }, () => zeros(cols));

function copy(src: readonly number[], out: number[]): number[] {
  for (let i = 0; i < src.length; i++) out[i] = src[i]!;
  return out;
}

/** Binds the model of `spec` (the rig's nominal arm, motors, friction and supply) for a user's controller. */
export function controllerModel(spec: ActuatedArmSpec, opts: ControllerModelOptions = {}): ControllerModel {
  const rigid = opts.rigid === true;
  const model = rigid ? createRigidArmModel(spec.arm) : createActuatedArmModel(spec);
  const data = createActuatedArmData(model);
  const p = model.arm;
  const n = model.joints;
  let rigidOne: ControllerModel | undefined;
  const scratch = zeros2(2, n);
  const view: ControllerModel = {
    joints: n,
    params: p,
    rigid,
    rotorInertia: Object.freeze(model.rotorInertia.slice()),
    reach: isTwoLink(p) ? p.L1 + p.L2 : p.L1,
    inverseDynamics: (q, qd, qdd, out = zeros(n)) => computeInverseDynamics(model, data, v(q), v(qd), v(qdd), out),
    forwardDynamics: (q, qd, tau, out = zeros(n)) => computeForwardDynamics(model, data, v(q), v(qd), v(tau), out),
    massMatrix: (q, out = zeros2(n, n)) => {
      const M = computeMassMatrix(model, data, v(q));
      for (let i = 0; i < n; i++) copy(M[i]!, out[i]!);
      return out;
    },
    coriolis: (q, qd, out = zeros(n)) => copy(computeVelocityTerms(model, data, v(q), v(qd)), out),
    gravity: (q, out = zeros(n)) => copy(computeGravity(model, data, v(q)), out),
    friction: (qd, out = zeros(n)) => copy(computeFriction(model, data, v(qd)), out),
    endpoint: (q, out = [0, 0]) => armEndpoint(p, v(q), out),
    jacobian: (q, out = zeros2(2, n)) => jacobianOf(p, v(q), out),
    jacobianDot: (q, qd, out = zeros2(2, n)) => jacobianDotOf(p, v(q), v(qd), out),
    endpointVelocity: (q, qd, out = [0, 0]) => {
      const j = jacobianOf(p, v(q), scratch);
      out[0] = 0;
      out[1] = 0;
      for (let i = 0; i < n; i++) {
        out[0] += j[0][i]! * qd[i]!;
        out[1] += j[1][i]! * qd[i]!;
      }
      return out;
    },
    inverseKinematics: (xy, elbow = 'down') => (isTwoLink(p) ? inverseKinematics(p, arr(xy), elbow) : [inverseKinematics1(p, arr(xy))]),
    forwardKinematics: (q, qd, qdd) => forwardKinematics(p, arr(q), qd && arr(qd), qdd && arr(qdd)),
    rigidView: () => (rigid ? view : (rigidOne ??= Object.freeze(controllerModel({ arm: p, motors: [], supplyV: 1 }, { rigid: true })))),
  };
  return view;
}

/** d(x, y)/dq [m/rad], 2 x joints, into `out` (its rows checked: x and y). */
function jacobianOf(p: ArmParams, q: readonly number[], out: number[][]): PairOf<number[]> {
  if (isTwoLink(p)) return jacobian(p, q, asMat2(out, "the Jacobian's out"));
  const o = asOutPair(out, "the Jacobian's out rows");
  o[0][0] = -p.L1 * Math.sin(q[0]!);
  o[1][0] = p.L1 * Math.cos(q[0]!);
  return o;
}

/** dJ/dt [m/(rad s)], 2 x joints, into `out` (its rows checked: x and y). */
function jacobianDotOf(p: ArmParams, q: readonly number[], qd: readonly number[], out: number[][]): PairOf<number[]> {
  if (isTwoLink(p)) return jacobianDot(p, q, qd, asMat2(out, "the Jacobian's out"));
  const o = asOutPair(out, "the Jacobian's out rows");
  o[0][0] = -p.L1 * Math.cos(q[0]!) * qd[0]!;
  o[1][0] = -p.L1 * Math.sin(q[0]!) * qd[0]!;
  return o;
}
