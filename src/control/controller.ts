/**
 * The control law of one tick: inverse-dynamics feedforward of the nominal model plus PID, torque
 * saturation, soft ramps, and the motor model that turns torque into duty.
 *
 * Feedforward modes (rig file `control.feedforward`, or --no-feedforward):
 * - `desired`: tau_ff = ID_a(q_des, qd_des, qdd_des), the actuated arm's inverse dynamics (rotor
 *   inertia and nominal friction included, src/model/actuated.ts) on the plan alone, so measurement
 *   noise never reaches it;
 * - `measured`: computed torque on the measured state, tau_ff = ID_a(q, qd, qdd_des) = M_a(q) qdd_des
 *   + V(q, qd) + G(q) + f(qd); cancels the nonlinearity where the arm is, not where it should be;
 * - `none`: PID alone.
 */
import type { ControllerPart } from '../config/parts.js';
import {
  computeInverseDynamics,
  createActuatedArmData,
  createActuatedArmModel,
  motorDuty,
  motorTorque,
  type ActuatedArmData,
  type ActuatedArmModel,
} from '../model/actuated.js';
import type { TrajectorySample } from '../model/trajectory.js';
import { Pid, scheduledGains } from './pid.js';

export type FeedforwardMode = 'desired' | 'measured' | 'none';

/** The controller's output of one tick. Arrays per joint. */
export interface ControlOutput {
  tauFf: number[];
  tauPid: number[];
  /** After limits and ramps [N m]. */
  tauCmd: number[];
  /** -1..1 */
  duty: number[];
  /** Bit i set when joint i+1 was saturated (torque or duty). */
  sat: number;
}

export class Controller {
  readonly joints: number;
  readonly pid: Pid[];
  readonly out: ControlOutput;
  /** The nominal actuated arm (the rig's arm, friction and motors). */
  readonly model: ActuatedArmModel;
  private readonly data: ActuatedArmData;
  private readonly excess: number[];
  private readonly satSign: number[];

  /** `model` defaults to the rig's nominal actuated arm; pass one to share it with the twin. */
  constructor(
    private readonly rig: ControllerPart,
    public feedforward: FeedforwardMode,
    model?: ActuatedArmModel,
  ) {
    const n = rig.joints;
    this.joints = n;
    const g = rig.control.pid;
    this.pid = Array.from(
      { length: n },
      (_, i) =>
        new Pid({
          kp: g.kp[i]!,
          ki: g.ki[i]!,
          kd: g.kd[i]!,
          iLimit: g.iLimitNm[i]!,
          antiWindup: g.antiWindup,
          backcalc: g.backcalcPerS,
        }),
    );
    const z = (): number[] => new Array<number>(n).fill(0);
    this.out = { tauFf: z(), tauPid: z(), tauCmd: z(), duty: z(), sat: 0 };
    this.model = model ?? createActuatedArmModel(rig);
    if (this.model.joints !== n) throw new RangeError(`the model has ${this.model.joints} joints, the rig ${n}`);
    this.data = createActuatedArmData(this.model);
    this.excess = z();
    this.satSign = z();
  }

  reset(): void {
    for (const p of this.pid) p.reset();
    this.excess.fill(0);
    this.satSign.fill(0);
  }

  /**
   * One tick: desired state now `d` (for the feedforward), the plan at the measurement's time `ref`
   * (for the error), measured angles `q` and estimated velocities `qd`, period `dt` [s],
   * `scale` 0..1 multiplies the torque limits (soft start and stop), `disturbance` is the observer's
   * unexplained joint torque to cancel (with feedforward only). Writes and returns `this.out`.
   * Never produces a non-finite duty: a non-finite input gives duty 0 and `ok = false`.
   */
  update(
    d: TrajectorySample,
    ref: TrajectorySample,
    q: readonly number[],
    qd: readonly number[],
    dt: number,
    scale: number,
    disturbance?: readonly number[],
  ): { out: ControlOutput; ok: boolean } {
    const n = this.joints;
    const o = this.out;
    // Feedforward
    if (this.feedforward === 'none') {
      o.tauFf.fill(0);
    } else {
      const useMeasured = this.feedforward === 'measured';
      const qs = useMeasured ? q : d.q;
      const qds = useMeasured ? qd : d.qd;
      computeInverseDynamics(this.model, this.data, qs, qds, d.qdd, o.tauFf);
      // Disturbance compensation: cancel the torque the twin's momentum observer finds unexplained
      // (unmodelled friction, a mass error) -- a disturbance observer around the model.
      if (disturbance) for (let i = 0; i < n; i++) o.tauFf[i]! -= disturbance[i]!;
    }
    o.sat = 0;
    let ok = true;
    const schedule = this.rig.control.pid.schedule;
    if (schedule && n === 2 && Number.isFinite(q[1]!)) {
      // The gains of the rig file's schedule at the measured elbow (twolink tune writes it).
      const elbowDeg = (q[1]! * 180) / Math.PI;
      for (let i = 0; i < n; i++) Object.assign(this.pid[i]!.gains, scheduledGains(schedule, i, elbowDeg));
    }
    for (let i = 0; i < n; i++) {
      const e = ref.q[i]! - q[i]!;
      const eDot = ref.qd[i]! - qd[i]!;
      const pid = this.pid[i]!.update(e, eDot, dt, this.satSign[i]!, this.excess[i]!);
      o.tauPid[i] = pid;
      if (!this.saturate(i, o.tauFf[i]! + pid, qd[i]!, scale)) ok = false;
    }
    return { out: o, ok };
  }

  /**
   * Drives joint torques `tau` [N m] from a control law other than ours (twolink run --controller)
   * through the same limits, ramps and motor model. Writes and returns `this.out` (tauFf = tau).
   */
  drive(tau: readonly number[], qd: readonly number[], scale: number): { out: ControlOutput; ok: boolean } {
    const o = this.out;
    o.sat = 0;
    let ok = true;
    for (let i = 0; i < this.joints; i++) {
      o.tauFf[i] = tau[i]!;
      o.tauPid[i] = 0;
      if (!this.saturate(i, tau[i]!, qd[i]!, scale)) ok = false;
    }
    return { out: o, ok };
  }

  /** Joint i: saturate `raw` [N m] to the limit and the motor, and turn it into duty. False if not finite. */
  private saturate(i: number, raw: number, qdi: number, scale: number): boolean {
    const rig = this.rig;
    const o = this.out;
    // Saturate: the joint's torque limit (scaled by the ramps) and what the motor can give at this speed.
    const lim = rig.limits[i]!.maxTorque * scale;
    const maxD = rig.maxDuty;
    const hi = Math.min(lim, motorTorque(this.model, i, maxD, qdi));
    const lo = Math.max(-lim, motorTorque(this.model, i, -maxD, qdi));
    let cmd = raw;
    let sat = 0;
    if (cmd > hi) {
      cmd = hi;
      sat = 1;
    } else if (cmd < lo) {
      cmd = lo;
      sat = -1;
    }
    if (lo > hi) {
      // The motor is being driven beyond what the limit allows (back-EMF at high speed): brake with 0.
      cmd = 0;
      sat = raw > 0 ? 1 : -1;
    }
    this.satSign[i] = sat;
    this.excess[i] = cmd - raw;
    let duty = motorDuty(this.model, i, cmd, qdi);
    if (duty > maxD) duty = maxD;
    else if (duty < -maxD) duty = -maxD;
    let ok = true;
    if (!Number.isFinite(raw) || !Number.isFinite(duty) || !Number.isFinite(cmd)) {
      ok = false;
      duty = 0;
      cmd = 0;
    }
    if (sat !== 0) o.sat |= 1 << i;
    o.tauCmd[i] = cmd;
    o.duty[i] = duty;
    return ok;
  }

  /** Zero output (for the stopped states). */
  idle(): ControlOutput {
    const o = this.out;
    o.tauFf.fill(0);
    o.tauPid.fill(0);
    o.tauCmd.fill(0);
    o.duty.fill(0);
    o.sat = 0;
    return o;
  }
}
