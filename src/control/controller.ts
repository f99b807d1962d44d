/**
 * The control law of one tick: inverse-dynamics feedforward of the nominal model plus PID, torque
 * saturation, soft ramps, and the motor model that turns torque into duty.
 *
 * Feedforward modes (rig file `control.feedforward`, or --no-feedforward):
 * - `desired`: tau_ff = ID(q_des, qd_des, qdd_des) + rotor inertia + nominal friction at qd_des;
 *   computed from the plan alone, so measurement noise never reaches it;
 * - `measured`: computed torque on the measured state, tau_ff = M(q) qdd_des + V(q, qd) + G(q) +
 *   rotor inertia + friction at qd; cancels the nonlinearity where the arm is, not where it should be;
 * - `none`: PID alone.
 */
import type { Rig } from '../config/load.js';
import { armModel, type ArmModel } from '../model/arm.js';
import { externalTorques } from '../model/dynamics.js';
import type { TrajectorySample } from '../model/trajectory.js';
import { dutyForTorque, reflectedInertia, torqueForDuty } from './motor.js';
import { Pid } from './pid.js';

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
  private readonly model: ArmModel;
  private readonly rotor: number[];
  private readonly fric: number[];
  private readonly excess: number[];
  private readonly satSign: number[];

  constructor(
    private readonly rig: Rig,
    public feedforward: FeedforwardMode,
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
    this.model = armModel(rig.arm);
    this.rotor = rig.motors.slice(0, n).map(reflectedInertia);
    this.fric = z();
    this.excess = z();
    this.satSign = z();
  }

  reset(): void {
    for (const p of this.pid) p.reset();
    this.excess.fill(0);
    this.satSign.fill(0);
  }

  /** Integral state, for a bumpless restart. */
  get integrals(): number[] {
    return this.pid.map((p) => p.integral);
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
    const rig = this.rig;
    const o = this.out;
    // Feedforward
    if (this.feedforward === 'none') {
      o.tauFf.fill(0);
    } else {
      const useMeasured = this.feedforward === 'measured';
      const qs = useMeasured ? q : d.q;
      const qds = useMeasured ? qd : d.qd;
      this.model.inverseDynamics(qs, qds, d.qdd, o.tauFf);
      externalTorques(rig.arm, qs, qds, { viscous: rig.friction.viscous, coulomb: rig.friction.coulomb, coulombVelocity: 0.01 }, this.fric);
      for (let i = 0; i < n; i++) o.tauFf[i] += this.rotor[i]! * d.qdd[i]! - this.fric[i]!;
      // Disturbance compensation: cancel the torque the twin's momentum observer finds unexplained
      // (unmodelled friction, a mass error) -- a disturbance observer around the model.
      if (disturbance) for (let i = 0; i < n; i++) o.tauFf[i] -= disturbance[i]!;
    }
    let ok = true;
    o.sat = 0;
    for (let i = 0; i < n; i++) {
      const e = ref.q[i]! - q[i]!;
      const eDot = ref.qd[i]! - qd[i]!;
      const pid = this.pid[i]!.update(e, eDot, dt, this.satSign[i]!, this.excess[i]!);
      o.tauPid[i] = pid;
      const raw = o.tauFf[i]! + pid;
      // Saturate: the joint's torque limit (scaled by the ramps) and what the motor can give at this speed.
      const m = rig.motors[i]!;
      const lim = rig.limits[i]!.maxTorque * scale;
      const maxD = rig.maxDuty;
      const hi = Math.min(lim, torqueForDuty(m, rig.supplyV, maxD, qd[i]!));
      const lo = Math.max(-lim, torqueForDuty(m, rig.supplyV, -maxD, qd[i]!));
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
      let duty = dutyForTorque(m, rig.supplyV, cmd, qd[i]!);
      if (duty > maxD) duty = maxD;
      else if (duty < -maxD) duty = -maxD;
      if (!Number.isFinite(duty) || !Number.isFinite(cmd)) {
        ok = false;
        duty = 0;
        cmd = 0;
      }
      if (sat !== 0) o.sat |= 1 << i;
      o.tauCmd[i] = cmd;
      o.duty[i] = duty;
    }
    return { out: o, ok };
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
