/**
 * Simulation of the actuated arm (actuated.ts) under joint torques: the one model the controller, the
 * twin and the mock's plant evaluate, integrated at a fixed step. The rigid arm of seed 001 is
 * `createRigidArmModel(arm)`.
 */
import { computeForwardDynamics, createActuatedArmData, type ActuatedArmModel } from './actuated.js';
import { externalTorques } from './dynamics.js';
import { FixedStepIntegrator, type AccelerationFn, type IntegratorName } from './integrate.js';
import { asOutPair, asPair, type ExternalLoads } from './types.js';

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

/** Integrates the arm's forward dynamics, qdd = M_a^-1 (tau + E - V - G - f), at a fixed step. */
export function simulate(model: ActuatedArmModel, o: SimulateOptions): SimulationResult {
  const n = model.joints;
  const tau = new Array<number>(n).fill(0);
  const ext = new Array<number>(n).fill(0);
  const data = createActuatedArmData(model);
  const torque = o.torque;
  const external = o.external;
  const p = model.arm;
  if (typeof torque === 'object') for (let i = 0; i < n; i++) tau[i] = torque[i]!;
  const torqueFn = typeof torque === 'function' ? torque : undefined;
  // The common case (constant torque, no external loads) leaves `tau` as it is: this closure runs
  // four times per RK4 step. Without friction either, the two-link solve is called directly (the
  // same M_a^-1 (tau - V - G) computeForwardDynamics ends in, a third faster).
  const fixed = !torqueFn && !external;
  const two = model.two;
  const rotor = model.rotorInertia;
  if (fixed && two && [...model.viscous, ...model.coulomb].every((c) => c === 0)) {
    return integrate(
      model,
      o,
      (_t, q, qd, out) => void two.forwardDynamics(asPair(q), asPair(qd), asPair(tau), asOutPair(out), asPair(rotor)),
    );
  }
  const accel = (t: number, q: readonly number[], qd: readonly number[], out: number[]): void => {
    if (!fixed) {
      if (torqueFn) torqueFn(t, q, qd, tau);
      else if (typeof torque === 'object') for (let i = 0; i < n; i++) tau[i] = torque[i]!;
      else tau.fill(0);
      if (external) {
        externalTorques(p, q, qd, external, ext);
        for (let i = 0; i < n; i++) tau[i]! += ext[i]!;
      }
    }
    computeForwardDynamics(model, data, q, qd, tau, out);
  };
  return integrate(model, o, accel);
}

function integrate(model: ActuatedArmModel, o: SimulateOptions, accel: AccelerationFn): SimulationResult {
  const n = model.joints;
  const dt = o.dt ?? 1e-4;
  const steps = Math.round(o.duration / dt);
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
