/**
 * The simulated twin: the nominal actuated arm (the rig file's `arm`, `friction` and `motors`, as
 * src/model/actuated.ts models them) run in lockstep with the arm, driven by the same motor duties
 * the board applied, and compared with every measurement.
 *
 * Re-anchoring. A twin left alone drifts away from the arm (a chaotic double pendulum, and any model
 * error integrates twice), so after each comparison it is pulled toward the measurement by a
 * Luenberger correction with time constant T (rig file `twin.anchorS`): q += (dt/T)(q_meas - q),
 * qd += (dt/T)(qd_est - qd). The residual (measured - twin, taken before the correction) is then the
 * model's prediction error accumulated over about T: a constant torque error dTau gives a residual
 * that settles at T^2 (M_a + T B)^-1 dTau, B the motors' back-EMF damping (eta N^2 kt ke / R per
 * joint): dTau T^2 / M when B T is small against M. A correct model leaves quantization noise; a
 * payload, a stalled joint or a slipping encoder leave a residual that grows and trips the alarm.
 *
 * Stepping. The board applies a duty when its command arrives and reports the encoders right then,
 * so between two readings the duty in force is the one the earlier reading acknowledged; the twin
 * steps over the board's own time between the readings with that duty.
 *
 * Residual torque. A generalized-momentum observer (De Luca and Mattone, 2005) on the same nominal
 * model estimates the joint torque the model does not explain (payload, contact, friction error), at
 * the observer's bandwidth, without differentiating velocities.
 *
 * One- and two-link rigs alike (`rig.joints`): the per-joint arrays are indexed in loops over the
 * joints, so an index keeps its `!` (they are not Pairs).
 */
import type { TwinPart } from '../config/parts.js';
import {
  computeActuatorTorques,
  computeCoriolisTransposeVelocity,
  computeForwardDynamicsUnderDuty,
  computeGravity,
  computeMomentum,
  createActuatedArmData,
  createActuatedArmModel,
  type ActuatedArmData,
  type ActuatedArmModel,
} from '../model/actuated.js';
import { FixedStepIntegrator } from '../model/integrate.js';

/** Per-joint running statistics of the residual. */
export interface ResidualStats {
  /** Samples compared. */
  n: number;
  /** RMS residual per joint [rad]. */
  rms: number[];
  /** Largest |residual| per joint [rad]. */
  max: number[];
  /** Alarms raised (rising edges), all joints. */
  alarms: number;
}

export class Twin {
  readonly joints: number;
  readonly q: number[];
  readonly qd: number[];
  /** measured - twin per joint [rad], at the last comparison. */
  readonly residual: number[];
  /** Estimated external (unmodelled) joint torque [N m]. */
  readonly tauExt: number[];
  /** Alarm state per joint. */
  readonly alarm: boolean[];
  private readonly over: number[];
  private readonly sumSq: number[];
  private readonly maxAbs: number[];
  private n = 0;
  private alarms = 0;
  /** The nominal actuated arm. */
  readonly model: ActuatedArmModel;
  private readonly data: ActuatedArmData;
  private readonly integ: FixedStepIntegrator;
  private readonly duty: number[];
  private readonly threshold: number;
  private readonly hold: number;
  private readonly anchor: number;
  private readonly ko: number;
  // momentum observer state
  private readonly integral: number[];
  private readonly p0: number[];
  private readonly tau: number[];
  private obsInit = false;

  /** `model` defaults to the rig's nominal actuated arm; pass one to share it with the controller. */
  constructor(rig: TwinPart, model?: ActuatedArmModel) {
    const n = rig.joints;
    this.joints = n;
    const z = (): number[] => new Array<number>(n).fill(0);
    this.q = z();
    this.qd = z();
    this.residual = z();
    this.tauExt = z();
    this.alarm = new Array<boolean>(n).fill(false);
    this.over = z();
    this.sumSq = z();
    this.maxAbs = z();
    this.duty = z();
    this.tau = z();
    this.integral = z();
    this.p0 = z();
    this.model = model ?? createActuatedArmModel(rig);
    if (this.model.joints !== n) throw new RangeError(`the model has ${this.model.joints} joints, the rig ${n}`);
    this.data = createActuatedArmData(this.model);
    this.threshold = (rig.twin.alarmDeg * Math.PI) / 180;
    this.hold = rig.twin.holdMs / 1000;
    this.anchor = rig.twin.anchorS;
    this.ko = 2 * Math.PI * rig.twin.observerHz;
    this.integ = new FixedStepIntegrator(n, 'rk4', (_t, q, qd, out) => {
      computeForwardDynamicsUnderDuty(this.model, this.data, q, qd, this.duty, out);
    });
  }

  /** Starts the twin at the measured state. */
  reset(q: readonly number[], qd: readonly number[]): void {
    for (let i = 0; i < this.joints; i++) {
      this.q[i] = q[i]!;
      this.qd[i] = qd[i]!;
      this.residual[i] = 0;
      this.over[i] = 0;
      this.alarm[i] = false;
      this.integral[i] = 0;
      this.tauExt[i] = 0;
    }
    this.obsInit = false;
  }

  /**
   * Steps the twin by dt [s] with the duty that was in force, compares with the measurement (angles
   * qm and estimated velocities qdm), updates the statistics and the alarm, then re-anchors.
   * Returns true when an alarm was raised at this step.
   */
  step(duty: readonly number[], dt: number, qm: readonly number[], qdm: readonly number[]): boolean {
    if (!(dt > 0) || dt > 0.5) {
      // A gap in the data (a lost link, a paused run): start again from the measurement.
      this.reset(qm, qdm);
      return false;
    }
    for (let i = 0; i < this.joints; i++) this.duty[i] = Number.isFinite(duty[i]!) ? duty[i]! : 0;
    const sub = Math.max(1, Math.ceil(dt / 0.002));
    const h = dt / sub;
    for (let s = 0; s < sub; s++) this.integ.step(0, this.q, this.qd, h);
    let raised = false;
    this.n++;
    const k = Math.min(1, dt / this.anchor);
    for (let i = 0; i < this.joints; i++) {
      const r = qm[i]! - this.q[i]!;
      this.residual[i] = r;
      this.sumSq[i]! += r * r;
      if (Math.abs(r) > this.maxAbs[i]!) this.maxAbs[i] = Math.abs(r);
      if (Math.abs(r) > this.threshold) {
        this.over[i]! += dt;
        if (!this.alarm[i] && this.over[i]! >= this.hold) {
          this.alarm[i] = true;
          this.alarms++;
          raised = true;
        }
      } else {
        this.over[i] = 0;
        this.alarm[i] = false;
      }
      this.q[i]! += k * r;
      this.qd[i]! += k * (qdm[i]! - this.qd[i]!);
    }
    // The observer sees the duty the twin was stepped with (a non-finite one as zero).
    this.observe(this.duty, dt, qm, qdm);
    return raised;
  }

  /**
   * Generalized-momentum observer: p = M_a(q) qd; dp/dt = tau + C^T(q, qd) qd - G(q) + tau_ext, with
   * tau the motors' torque less friction; r = Ko (p - p0 - integral(tau + C^T qd - G + r)) tracks
   * tau_ext with bandwidth Ko.
   */
  private observe(duty: readonly number[], dt: number, q: readonly number[], qd: readonly number[]): void {
    const n = this.joints;
    const m = this.model;
    const data = this.data;
    const p = computeMomentum(m, data, q, qd);
    if (!this.obsInit) {
      for (let i = 0; i < n; i++) {
        this.p0[i] = p[i]!;
        this.integral[i] = 0;
        this.tauExt[i] = 0;
      }
      this.obsInit = true;
      return;
    }
    computeActuatorTorques(m, data, qd, duty, this.tau);
    const G = computeGravity(m, data, q);
    const ctq = computeCoriolisTransposeVelocity(m, data, q, qd);
    for (let i = 0; i < n; i++) {
      this.integral[i]! += (this.tau[i]! + ctq[i]! - G[i]! + this.tauExt[i]!) * dt;
      this.tauExt[i] = this.ko * (p[i]! - this.p0[i]! - this.integral[i]!);
    }
  }

  stats(): ResidualStats {
    return {
      n: this.n,
      rms: this.sumSq.map((s) => (this.n > 0 ? Math.sqrt(s / this.n) : 0)),
      max: this.maxAbs.slice(),
      alarms: this.alarms,
    };
  }
}
