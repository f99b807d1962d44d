/**
 * The simulated twin: the nominal model (the rig file's `arm`, `friction` and `motors`) run in
 * lockstep with the arm, driven by the same motor duties the board applied, and compared with every
 * measurement.
 *
 * Re-anchoring. A twin left alone drifts away from the arm (a chaotic double pendulum, and any model
 * error integrates twice), so after each comparison it is pulled toward the measurement by a
 * Luenberger correction with time constant T (rig file `twin.anchorS`): q += (dt/T)(q_meas - q),
 * qd += (dt/T)(qd_est - qd). The residual (measured - twin, taken before the correction) is then the
 * model's prediction error accumulated over about T: a constant torque error dTau gives a residual
 * that settles at dTau T^2 / M. A correct model leaves quantization noise; a payload, a stalled joint
 * or a slipping encoder leave a residual that grows and trips the alarm.
 *
 * Stepping. The board applies a duty when its command arrives and reports the encoders right then,
 * so between two readings the duty in force is the one the earlier reading acknowledged; the twin
 * steps over the board's own time between the readings with that duty.
 *
 * Residual torque. A generalized-momentum observer (De Luca and Mattone, 2005) on the same nominal
 * model estimates the joint torque the model does not explain (payload, contact, friction error), at
 * the observer's bandwidth, without differentiating velocities.
 */
import type { Rig } from '../config/load.js';
import { armModel, type ArmModel } from '../model/arm.js';
import { externalTorques } from '../model/dynamics.js';
import { FixedStepIntegrator } from '../model/integrate.js';
import type { TwoLinkParams } from '../model/types.js';
import { reflectedInertia, torqueForDuty } from './motor.js';

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
  private readonly model: ArmModel;
  private readonly integ: FixedStepIntegrator;
  private readonly duty: number[];
  private readonly tau: number[];
  private readonly ext: number[];
  private readonly rotor: number[];
  private readonly threshold: number;
  private readonly hold: number;
  private readonly anchor: number;
  private readonly ko: number;
  // momentum observer state
  private readonly integral: number[];
  private readonly p0: number[];
  private readonly p: number[];
  private readonly ctq: number[];
  private obsInit = false;

  constructor(private readonly rig: Rig) {
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
    this.ext = z();
    this.integral = z();
    this.p0 = z();
    this.p = z();
    this.ctq = z();
    this.rotor = rig.motors.slice(0, n).map(reflectedInertia);
    this.model = armModel(rig.arm);
    this.threshold = (rig.twin.alarmDeg * Math.PI) / 180;
    this.hold = rig.twin.holdMs / 1000;
    this.anchor = rig.twin.anchorS;
    this.ko = 2 * Math.PI * rig.twin.observerHz;
    this.integ = new FixedStepIntegrator(n, 'rk4', (_t, q, qd, out) => {
      this.torques(q, qd, this.duty, this.tau);
      this.model.forwardDynamics(q, qd, this.tau, out, this.rotor);
    });
  }

  /** Joint torques of the nominal motors at `duty` plus nominal friction [N m]. */
  private torques(q: readonly number[], qd: readonly number[], duty: readonly number[], out: number[]): void {
    const r = this.rig;
    externalTorques(r.arm, q, qd, { viscous: r.friction.viscous, coulomb: r.friction.coulomb, coulombVelocity: 0.01 }, this.ext);
    for (let i = 0; i < this.joints; i++) out[i] = torqueForDuty(r.motors[i]!, r.supplyV, duty[i]!, qd[i]!) + this.ext[i]!;
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
      this.sumSq[i] += r * r;
      if (Math.abs(r) > this.maxAbs[i]!) this.maxAbs[i] = Math.abs(r);
      if (Math.abs(r) > this.threshold) {
        this.over[i] += dt;
        if (!this.alarm[i] && this.over[i]! >= this.hold) {
          this.alarm[i] = true;
          this.alarms++;
          raised = true;
        }
      } else {
        this.over[i] = 0;
        this.alarm[i] = false;
      }
      this.q[i] += k * r;
      this.qd[i] += k * (qdm[i]! - this.qd[i]!);
    }
    this.observe(duty, dt, qm, qdm);
    return raised;
  }

  /**
   * Generalized-momentum observer: p = M(q) qd; dp/dt = tau + C^T(q, qd) qd - G(q) + tau_ext;
   * r = Ko (p - p0 - integral(tau + C^T qd - G + r)) tracks tau_ext with bandwidth Ko.
   */
  private observe(duty: readonly number[], dt: number, q: readonly number[], qd: readonly number[]): void {
    const n = this.joints;
    const M = this.model.massMatrix(q);
    const p = this.p;
    for (let i = 0; i < n; i++) {
      let s = this.rotor[i]! * qd[i]!;
      for (let j = 0; j < n; j++) s += M[i]![j]! * qd[j]!;
      p[i] = s;
    }
    if (!this.obsInit) {
      for (let i = 0; i < n; i++) {
        this.p0[i] = p[i]!;
        this.integral[i] = 0;
        this.tauExt[i] = 0;
      }
      this.obsInit = true;
      return;
    }
    this.torques(q, qd, duty, this.tau);
    const G = this.model.gravityTerms(q);
    // C^T qd for the planar two-link arm: [0, -h qd1 (qd1 + qd2)], h = m2 L1 d2 sin(a2).
    const ctq = this.ctq;
    if (n === 2) {
      const a = this.rig.arm as TwoLinkParams;
      const h = a.m2 * a.L1 * a.d2 * Math.sin(q[1]!);
      ctq[1] = -h * qd[0]! * (qd[0]! + qd[1]!);
    }
    for (let i = 0; i < n; i++) {
      this.integral[i] += (this.tau[i]! + ctq[i]! - G[i]! + this.tauExt[i]!) * dt;
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
