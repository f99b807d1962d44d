/**
 * The arm model a user's controller gets in its context (`context.model`): the nominal arm of the rig
 * file with its parameters bound, every function writing into an optional `out` so that a controller's
 * `update` can run without allocating. One- and two-link arms alike; the Jacobian of a one-link arm is
 * 2 x 1.
 */
import { endpoint, forwardKinematics, inverseKinematics, inverseKinematics1, jacobian, jacobianDot, type Elbow, type ForwardKinematics } from '../model/kinematics.js';
import { forwardDynamics1, jointInertia1, TwoLinkDynamics } from '../model/dynamics.js';
import { isTwoLink, type ArmParams, type Mat2, type OneLinkParams, type TwoLinkParams } from '../model/types.js';

/**
 * The nominal arm's dynamics and kinematics, in the seed notebooks' notation (joint 1 from the
 * horizontal, joint 2 relative to link 1, counter-clockwise positive, gravity along -y):
 * `tau = M(q) qdd + C(q, qd) qd + G(q)`. Arrays have one entry per joint unless said otherwise;
 * matrices are row-major (`m[row][col]`). Passing `out` makes a call allocation-free.
 */
export interface ControllerModel {
  /** 1 or 2. */
  readonly joints: 1 | 2;
  /** The nominal arm of the rig file [m, kg, kg m^2, m/s^2]. */
  readonly params: ArmParams;
  /** Outer reach L1 (+ L2) [m]. */
  readonly reach: number;
  /** Inverse dynamics: tau = M qdd + C qd + G [N m] for q [rad], qd [rad/s], qdd [rad/s^2]. */
  inverseDynamics(q: ArrayLike<number>, qd: ArrayLike<number>, qdd: ArrayLike<number>, out?: number[]): number[];
  /** Forward dynamics: qdd = M^-1 (tau - C qd - G) [rad/s^2] for tau [N m]. */
  forwardDynamics(q: ArrayLike<number>, qd: ArrayLike<number>, tau: ArrayLike<number>, out?: number[]): number[];
  /** Inertia matrix M(q) [kg m^2], joints x joints. */
  massMatrix(q: ArrayLike<number>, out?: number[][]): number[][];
  /** Centripetal and Coriolis torques C(q, qd) qd [N m] (zero for one link). */
  coriolis(q: ArrayLike<number>, qd: ArrayLike<number>, out?: number[]): number[];
  /** Gravity torques G(q) [N m]. */
  gravity(q: ArrayLike<number>, out?: number[]): number[];
  /** Endpoint position [x, y] [m]. */
  endpoint(q: ArrayLike<number>, out?: number[]): number[];
  /** Endpoint Jacobian d(x, y)/dq [m/rad]: 2 rows (x, y), one column per joint. */
  jacobian(q: ArrayLike<number>, out?: number[][]): number[][];
  /** Time derivative of the Jacobian at (q, qd) [m/(rad s)], same shape. */
  jacobianDot(q: ArrayLike<number>, qd: ArrayLike<number>, out?: number[][]): number[][];
  /** Endpoint velocity J(q) qd [m/s]. */
  endpointVelocity(q: ArrayLike<number>, qd: ArrayLike<number>, out?: number[]): number[];
  /** Joint angles [rad] that put the endpoint at xy [m]; `elbow` picks the two-link branch (default 'down': q2 >= 0). Throws ReachError out of reach. */
  inverseKinematics(xy: ArrayLike<number>, elbow?: Elbow): number[];
  /** Elbow, endpoint and centres of mass with their velocities and accelerations (allocates: not for every tick). */
  forwardKinematics(q: ArrayLike<number>, qd?: ArrayLike<number>, qdd?: ArrayLike<number>): ForwardKinematics;
}

const arr = (a: ArrayLike<number>): number[] => Array.from(a);

/** Binds the model of `arm` (the rig's nominal arm) for a user's controller. */
export function controllerModel(arm: ArmParams): ControllerModel {
  return isTwoLink(arm) ? twoLink({ ...arm }) : oneLink({ ...arm });
}

function twoLink(p: TwoLinkParams): ControllerModel {
  const d = new TwoLinkDynamics(p);
  // The model's functions read q[0], q[1] only: any ArrayLike works at run time.
  const v = (a: ArrayLike<number>): readonly number[] => a as readonly number[];
  const m = (o: number[][]): Mat2 => o as Mat2;
  const scratch: Mat2 = [[0, 0], [0, 0]];
  return {
    joints: 2,
    params: p,
    reach: p.L1 + p.L2,
    inverseDynamics: (q, qd, qdd, out = [0, 0]) => d.inverseDynamics(v(q), v(qd), v(qdd), out),
    forwardDynamics: (q, qd, tau, out = [0, 0]) => d.forwardDynamics(v(q), v(qd), v(tau), out),
    massMatrix: (q, out = [[0, 0], [0, 0]]) => d.massMatrix(v(q), m(out)),
    coriolis: (q, qd, out = [0, 0]) => d.velocityTerms(v(q), v(qd), out),
    gravity: (q, out = [0, 0]) => d.gravityTerms(v(q), out),
    endpoint: (q, out = [0, 0]) => endpoint(p, v(q), out),
    jacobian: (q, out = [[0, 0], [0, 0]]) => jacobian(p, v(q), m(out)),
    jacobianDot: (q, qd, out = [[0, 0], [0, 0]]) => jacobianDot(p, v(q), v(qd), m(out)),
    endpointVelocity: (q, qd, out = [0, 0]) => {
      const j = jacobian(p, v(q), scratch);
      out[0] = j[0][0] * qd[0]! + j[0][1] * qd[1]!;
      out[1] = j[1][0] * qd[0]! + j[1][1] * qd[1]!;
      return out;
    },
    inverseKinematics: (xy, elbow = 'down') => inverseKinematics(p, arr(xy), elbow),
    forwardKinematics: (q, qd, qdd) => forwardKinematics(p, arr(q), qd && arr(qd), qdd && arr(qdd)),
  };
}

function oneLink(p: OneLinkParams): ControllerModel {
  const io = jointInertia1(p);
  const mgd = p.m1 * p.g * p.d1;
  return {
    joints: 1,
    params: p,
    reach: p.L1,
    inverseDynamics: (q, _qd, qdd, out = [0]) => {
      out[0] = io * qdd[0]! + mgd * Math.cos(q[0]!);
      return out;
    },
    forwardDynamics: (q, _qd, tau, out = [0]) => {
      out[0] = forwardDynamics1(p, q[0]!, tau[0]!);
      return out;
    },
    massMatrix: (_q, out = [[0]]) => {
      out[0]![0] = io;
      return out;
    },
    coriolis: (_q, _qd, out = [0]) => {
      out[0] = 0;
      return out;
    },
    gravity: (q, out = [0]) => {
      out[0] = mgd * Math.cos(q[0]!);
      return out;
    },
    endpoint: (q, out = [0, 0]) => {
      out[0] = p.L1 * Math.cos(q[0]!);
      out[1] = p.L1 * Math.sin(q[0]!);
      return out;
    },
    jacobian: (q, out = [[0], [0]]) => {
      out[0]![0] = -p.L1 * Math.sin(q[0]!);
      out[1]![0] = p.L1 * Math.cos(q[0]!);
      return out;
    },
    jacobianDot: (q, qd, out = [[0], [0]]) => {
      out[0]![0] = -p.L1 * Math.cos(q[0]!) * qd[0]!;
      out[1]![0] = -p.L1 * Math.sin(q[0]!) * qd[0]!;
      return out;
    },
    endpointVelocity: (q, qd, out = [0, 0]) => {
      out[0] = -p.L1 * Math.sin(q[0]!) * qd[0]!;
      out[1] = p.L1 * Math.cos(q[0]!) * qd[0]!;
      return out;
    },
    inverseKinematics: (xy) => [inverseKinematics1(p, arr(xy))],
    forwardKinematics: (q, qd, qdd) => forwardKinematics(p, arr(q), qd && arr(qd), qdd && arr(qdd)),
  };
}
