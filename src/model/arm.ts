/**
 * One interface over the one- and two-link models, so that the simulator, the twin, the plant and the
 * controller are written once for either arm.
 */
import { energy1, externalTorques, forwardDynamics1, inverseDynamics1, jointInertia1, TwoLinkDynamics } from './dynamics.js';
import { FixedStepIntegrator, type IntegratorName } from './integrate.js';
import { endpoint } from './kinematics.js';
import type { ArmParams, Energy, ExternalLoads, Mat2, OneLinkParams, TwoLinkParams } from './types.js';
import { isTwoLink } from './types.js';

/** The dynamics of an arm with its parameters bound. Arrays have one entry per joint. */
export interface ArmModel {
  readonly joints: 1 | 2;
  readonly params: ArmParams;
  /** tau = M qdd + V + G [N m]. */
  inverseDynamics(q: readonly number[], qd: readonly number[], qdd: readonly number[], out?: number[]): number[];
  /** qdd = M^-1 (tau - V - G) [rad/s^2]; `rotorInertia` is added to the diagonal of M. */
  forwardDynamics(
    q: readonly number[],
    qd: readonly number[],
    tau: readonly number[],
    out?: number[],
    rotorInertia?: readonly number[],
  ): number[];
  /** M(q) [kg m^2], into `out` when given (then nothing is allocated). */
  massMatrix(q: readonly number[], out?: number[][]): number[][];
  /** V(q, qd) [N m], into `out` when given. */
  velocityTerms(q: readonly number[], qd: readonly number[], out?: number[]): number[];
  /** G(q) [N m], into `out` when given. */
  gravityTerms(q: readonly number[], out?: number[]): number[];
  energy(q: readonly number[], qd: readonly number[]): Energy;
  /** Endpoint position [m]. */
  endpoint(q: readonly number[], out?: number[]): number[];
  /** Outer reach of the arm [m]. */
  readonly reach: number;
}

export function armModel(p: ArmParams): ArmModel {
  if (isTwoLink(p)) return twoLinkModel(p);
  return oneLinkModel(p);
}

/** The model snapshots the parameters: build a new one when they change. */
function twoLinkModel(p: TwoLinkParams): ArmModel {
  const d = new TwoLinkDynamics({ ...p });
  return {
    joints: 2,
    params: p,
    reach: p.L1 + p.L2,
    inverseDynamics: (q, qd, qdd, out) => d.inverseDynamics(q, qd, qdd, out),
    forwardDynamics: (q, qd, tau, out, rotor) => d.forwardDynamics(q, qd, tau, out, rotor),
    massMatrix: (q, out) => d.massMatrix(q, out as Mat2 | undefined),
    velocityTerms: (q, qd, out) => d.velocityTerms(q, qd, out),
    gravityTerms: (q, out) => d.gravityTerms(q, out),
    energy: (q, qd) => d.energy(q, qd),
    endpoint: (q, out = [0, 0]) => endpoint(p, q, out),
  };
}

function oneLinkModel(p: OneLinkParams): ArmModel {
  return {
    joints: 1,
    params: p,
    reach: p.L1,
    inverseDynamics: (q, _qd, qdd, out = [0]) => {
      out[0] = inverseDynamics1(p, q[0]!, qdd[0]!);
      return out;
    },
    forwardDynamics: (q, _qd, tau, out = [0], rotor) => {
      out[0] = forwardDynamics1(p, q[0]!, tau[0]!, rotor ? rotor[0]! : 0);
      return out;
    },
    massMatrix: (_q, out = [[0]]) => {
      out[0]![0] = jointInertia1(p);
      return out;
    },
    velocityTerms: (_q, _qd, out = [0]) => {
      out[0] = 0;
      return out;
    },
    gravityTerms: (q, out = [0]) => {
      out[0] = p.m1 * p.g * p.d1 * Math.cos(q[0]!);
      return out;
    },
    energy: (q, qd) => energy1(p, q[0]!, qd[0]!),
    endpoint: (q, out = [0, 0]) => {
      out[0] = p.L1 * Math.cos(q[0]!);
      out[1] = p.L1 * Math.sin(q[0]!);
      return out;
    },
  };
}

/** Options of {@link simulate}. */
export interface SimulateOptions {
  /** Initial joint angles [rad]. */
  q0: readonly number[];
  /** Initial joint velocities [rad/s]. */
  qd0: readonly number[];
  /** Simulated time [s]. */
  duration: number;
  /** Step [s]. @default 1e-4 */
  dt?: number;
  /** @default 'rk4' */
  integrator?: IntegratorName;
  /** Constant joint torques [N m] or a function writing them at (t, q, qd). @default zero */
  torque?: readonly number[] | ((t: number, q: readonly number[], qd: readonly number[], out: number[]) => void);
  /** External loads: endpoint force, friction, springs. */
  external?: ExternalLoads;
  /** Called after every `every`-th step and at the end with the state (do not keep the arrays). */
  onSample?: (t: number, q: readonly number[], qd: readonly number[]) => void;
  /** @default 1 */
  every?: number;
}

/** Final state of a simulation. */
export interface SimulationResult {
  t: number;
  q: number[];
  qd: number[];
  steps: number;
}

/** Integrates the arm's forward dynamics at a fixed step. */
export function simulate(model: ArmModel, o: SimulateOptions): SimulationResult {
  const n = model.joints;
  const dt = o.dt ?? 1e-4;
  const steps = Math.round(o.duration / dt);
  const tau = new Array<number>(n).fill(0);
  const ext = new Array<number>(n).fill(0);
  const torque = o.torque;
  const external = o.external;
  const p = model.params;
  if (Array.isArray(torque)) for (let i = 0; i < n; i++) tau[i] = torque[i]!;
  const torqueFn = typeof torque === 'function' ? torque : undefined;
  // The common case (constant torque, no external loads) calls the dynamics directly: this closure
  // runs four times per RK4 step.
  const fast = !torqueFn && !external && isTwoLink(p) ? new TwoLinkDynamics(p) : undefined;
  const accel = fast
      ? (_t: number, q: readonly number[], qd: readonly number[], out: number[]): void => void fast.forwardDynamics(q, qd, tau, out)
      : (t: number, q: readonly number[], qd: readonly number[], out: number[]): void => {
          if (torqueFn) torqueFn(t, q, qd, tau);
          else if (Array.isArray(torque)) for (let i = 0; i < n; i++) tau[i] = torque[i]!;
          else tau.fill(0);
          if (external) {
            externalTorques(p, q, qd, external, ext);
            for (let i = 0; i < n; i++) tau[i]! += ext[i]!;
          }
          model.forwardDynamics(q, qd, tau, out);
        };
  const integ = new FixedStepIntegrator(n, o.integrator ?? 'rk4', accel);
  const q = o.q0.slice(0, n);
  const qd = o.qd0.slice(0, n);
  const every = Math.max(1, o.every ?? 1);
  let t = 0;
  for (let k = 1; k <= steps; k++) {
    integ.step(t, q, qd, dt);
    t = k * dt;
    if (o.onSample && (k % every === 0 || k === steps)) o.onSample(t, q, qd);
  }
  return { t, q, qd, steps };
}
