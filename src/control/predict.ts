/**
 * Delay compensation: the board applies the answer to a sample one period (or, behind a slow USB
 * adapter, a few periods: four or five at 1 kHz behind a 16U2's 4.096 ms flush) after it took the
 * sample, so the controller computes the command for the state the arm will be in then. This steps
 * the nominal actuated arm (the rig's arm, motors and friction) from the measured state over that
 * horizon with the duties in force meanwhile: the one the sample says was applied, then each answer
 * already sent and not yet applied, from the sample where it is expected to apply (the link keeps
 * both: `Link.appliedDuty`, `Link.dutyChanges`, transport/joints.ts).
 *
 * One- and two-link rigs alike (`rig.joints`): the per-joint arrays are indexed in loops over the
 * joints, so an index keeps its `!` (they are not Pairs).
 */
import type { ArmPart } from '../config/parts.js';
import {
  computeForwardDynamicsUnderDuty,
  createActuatedArmData,
  createActuatedArmModel,
  type ActuatedArmModel,
} from '../model/actuated.js';
import { FixedStepIntegrator } from '../model/integrate.js';
import type { DutyChange } from '../transport/link.js';

export type { DutyChange };

export class Predictor {
  /** Predicted angles [rad] and velocities [rad/s] after the last `predict`. */
  readonly q: number[];
  readonly qd: number[];
  private readonly n: number;
  private readonly duty: number[];
  /** The unmodelled joint torque [N m] of the current `predict` call, if any. */
  private disturbance: readonly number[] | undefined;
  private readonly integ: FixedStepIntegrator;

  /** `model` defaults to the rig's nominal actuated arm (src/model/actuated.ts). */
  constructor(rig: ArmPart, model: ActuatedArmModel = createActuatedArmModel(rig)) {
    const n = rig.joints;
    this.n = n;
    const z = (): number[] => new Array<number>(n).fill(0);
    this.q = z();
    this.qd = z();
    this.duty = z();
    const data = createActuatedArmData(model);
    this.integ = new FixedStepIntegrator(n, 'rk4', (_t, q, qd, out) => {
      computeForwardDynamicsUnderDuty(model, data, q, qd, this.duty, out, this.disturbance);
    });
  }

  /**
   * The state `horizon` [s] after (q, qd) with `duty` held (the command in force until the answer
   * applies), plus an unmodelled torque `disturbance` [N m] if given (what the twin's observer sees).
   * Writes `this.q`, `this.qd`; returns false (and the measured state) if the result is not finite.
   */
  predict(
    q: readonly number[],
    qd: readonly number[],
    duty: readonly number[],
    horizon: number,
    disturbance?: readonly number[],
    changes?: readonly DutyChange[],
  ): boolean {
    const n = this.n;
    this.disturbance = disturbance;
    for (let i = 0; i < n; i++) {
      this.q[i] = q[i]!;
      this.qd[i] = qd[i]!;
      this.duty[i] = Number.isFinite(duty[i]!) ? duty[i]! : 0;
    }
    if (!(horizon > 0)) return true;
    // Piecewise: up to each change of duty in the horizon, then to its end (steps of at most 1 ms).
    let t = 0;
    for (const c of changes ?? []) {
      if (c.afterS <= t || c.afterS >= horizon) continue;
      this.advance(c.afterS - t);
      for (let i = 0; i < n; i++) this.duty[i] = Number.isFinite(c.duty[i]!) ? c.duty[i]! : 0;
      t = c.afterS;
    }
    this.advance(horizon - t);
    for (let i = 0; i < n; i++) {
      if (!Number.isFinite(this.q[i]) || !Number.isFinite(this.qd[i])) {
        for (let j = 0; j < n; j++) {
          this.q[j] = q[j]!;
          this.qd[j] = qd[j]!;
        }
        return false;
      }
    }
    return true;
  }

  private advance(span: number): void {
    if (!(span > 0)) return;
    const steps = Math.max(1, Math.ceil(span / 0.001 - 1e-9));
    const h = span / steps;
    for (let s = 0; s < steps; s++) this.integ.step(0, this.q, this.qd, h);
  }
}
