/**
 * The loop's output stage: a control law's joint torques (law.ts), limited to the joints' torque
 * limits (scaled by the soft start and stop ramps) and to what each motor can give at its speed, and
 * turned into duty with the motor model (src/model/actuated.ts). It keeps how each joint was limited,
 * for the law's anti-windup. `Controller` also carries twolink's own law (tracking-law.ts: feedforward
 * + PID), and `update` runs the two in one call for callers without a loop (tests, tools).
 *
 * One- and two-link rigs alike (`joints`): torques and limits are indexed in loops over the joints,
 * so an index keeps its `!` (they are not Pairs).
 */
import type { ControllerPart } from '../config/parts.js';
import { createActuatedArmModel, motorDuty, motorTorque, type ActuatedArmModel } from '../model/actuated.js';
import type { TrajectorySample } from '../model/trajectory.js';
import type { LawInput, Saturation } from './law.js';
import type { Pid } from './pid.js';
import { TrackingLaw, type FeedforwardMode } from './tracking-law.js';

export type { FeedforwardMode } from './tracking-law.js';

/** The controller's output of one tick. Arrays per joint. */
export interface ControlOutput {
  /** The law's model part (feedforward) [N m]; a user's controller's whole torque. */
  tauFf: number[];
  /** The law's feedback part [N m]. */
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
  readonly out: ControlOutput;
  /** The nominal actuated arm (the rig's arm, friction and motors). */
  readonly model: ActuatedArmModel;
  /** twolink's own law: feedforward + PID. */
  readonly law: TrackingLaw;
  private readonly excess: number[];
  private readonly satSign: number[];
  /** How the last command was limited, per joint (for the law's anti-windup). */
  readonly saturation: Saturation;

  /** `model` defaults to the rig's nominal actuated arm; pass one to share it with the twin. */
  constructor(
    private readonly rig: ControllerPart,
    feedforward: FeedforwardMode,
    model?: ActuatedArmModel,
  ) {
    const n = rig.joints;
    this.joints = n;
    const z = (): number[] => new Array<number>(n).fill(0);
    this.out = { tauFf: z(), tauPid: z(), tauCmd: z(), duty: z(), sat: 0 };
    this.model = model ?? createActuatedArmModel(rig);
    if (this.model.joints !== n) throw new RangeError(`the model has ${this.model.joints} joints, the rig ${n}`);
    this.law = new TrackingLaw(rig, feedforward, this.model);
    this.excess = z();
    this.satSign = z();
    this.saturation = { sign: this.satSign, excess: this.excess };
  }

  /** The tracking law's PID per joint. */
  get pid(): Pid[] {
    return this.law.pid;
  }

  get feedforward(): FeedforwardMode {
    return this.law.feedforward;
  }

  set feedforward(m: FeedforwardMode) {
    this.law.feedforward = m;
  }

  /** The tracking law's state and the saturation record. */
  reset(): void {
    this.law.reset();
    this.resetOutput();
  }

  /** The saturation record (what the law's anti-windup reads) to none. */
  resetOutput(): void {
    this.excess.fill(0);
    this.satSign.fill(0);
  }

  /**
   * One tick of the tracking law and the limits: desired state now `d` (for the feedforward), the
   * plan at the measurement's time `ref` (for the error), measured angles `q` and estimated velocities
   * `qd`, period `dt` [s], `scale` 0..1 multiplies the torque limits (soft start and stop),
   * `disturbance` is the observer's unexplained joint torque to cancel (with feedforward only).
   * Writes and returns `this.out`. Never produces a non-finite duty: a non-finite input gives duty 0
   * and `ok = false`.
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
    const input: LawInput = {
      sample: { t: 0, q, qd, qDesired: ref.q, qdDesired: ref.qd, qddDesired: ref.qdd },
      ahead: d,
      dtS: dt,
      periodS: dt,
      disturbance,
      saturation: this.saturation,
    };
    this.law.torques(input, this.out.tauFf, this.out.tauPid);
    return this.apply(qd, scale);
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

  /**
   * The law's two parts in `this.out` (`tauFf` + `tauPid`) limited and turned into duty, at joint
   * velocities `qd` [rad/s], the torque limits times `scale` (0..1). Writes and returns `this.out`;
   * `ok` is false (and that joint's duty 0) when a torque or duty is not finite.
   */
  apply(qd: readonly number[], scale: number): { out: ControlOutput; ok: boolean } {
    const o = this.out;
    o.sat = 0;
    let ok = true;
    for (let i = 0; i < this.joints; i++) if (!this.saturate(i, o.tauFf[i]! + o.tauPid[i]!, qd[i]!, scale)) ok = false;
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
