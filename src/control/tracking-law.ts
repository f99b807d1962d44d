/**
 * twolink's own control law: inverse-dynamics feedforward of the nominal model plus PID, on the loop's
 * law path (law.ts). The limits and the motor model come after it (controller.ts).
 *
 * Feedforward modes (rig file `control.feedforward`, or --no-feedforward):
 * - `desired`: tau_ff = ID_a(q_des, qd_des, qdd_des), the actuated arm's inverse dynamics (rotor
 *   inertia and nominal friction included, src/model/actuated.ts) on the plan alone, so measurement
 *   noise never reaches it;
 * - `measured`: computed torque on the measured state, tau_ff = ID_a(q, qd, qdd_des) = M_a(q) qdd_des
 *   + V(q, qd) + G(q) + f(qd); cancels the nonlinearity where the arm is, not where it should be;
 * - `none`: PID alone.
 * The plan for the feedforward is `LawInput.ahead` (the middle of the period the answer holds); the
 * PID's error is taken where the answer applies (`LawInput.sample`).
 *
 * One- and two-link rigs alike (`rig.joints`): gains, PIDs and the sample's arrays are indexed in
 * loops over the joints, so an index keeps its `!` (they are not Pairs).
 */
import type { ControllerPart } from '../config/parts.js';
import {
  computeFriction,
  computeInverseDynamics,
  createActuatedArmData,
  type ActuatedArmData,
  type ActuatedArmModel,
} from '../model/actuated.js';
import { asPair } from '../model/types.js';
import type { LawInput, LawResult, LoopLaw } from './law.js';
import { Pid, scheduledGains } from './pid.js';
import { DisturbanceFeed, feedCorners } from './disturbance-feed.js';
import { backlashInverseOf, type BacklashInverse } from './backlash.js';
import { breakawayTorques, type BreakawayNm } from './breakaway.js';

export type FeedforwardMode = 'desired' | 'measured' | 'none';

/**
 * The motor side alone within the play: the derivative bandwidth it may have [Hz]. Inside a gearbox's
 * play the motor side turns with its rotor's inertia alone, J_m = N^2 J_r at the joint (a tenth of the
 * arm's on the mock's joint 1), and a derivative gain set for the whole arm then acts on it with
 * kd / J_m = 240 1/s through the loop's 6-8 ms from sample to applied duty: it rattles through the play
 * (joint 1, 1.5 deg of play: 13 duty reversals a second; virtual time). Capped at J_m 2 pi 15 Hz, the
 * reach on the mock with every flaw reverses under 1/s (bench `--only hardware`).
 */
export const GAP_DERIVATIVE_HZ = 15;

/** Below this speed a joint counts as at rest for the breakaway compensation [rad/s] (2 deg/s). */
const KICK_REST_RAD_S = (2 * Math.PI) / 180;
/** The smallest error the breakaway compensation waits for [rad] (0.1 deg). */
const KICK_MIN_RAD = (0.1 * Math.PI) / 180;

/** The smallest motor-side inertia the cap assumes [kg m^2 at the joint] (a rig that gives its rotors none). */
const MIN_MOTOR_INERTIA = 1e-4;

/** The derivative gain's cap of a joint with play [N m s/rad], from its reflected rotor inertia N^2 J_r [kg m^2]. */
export function gapDerivativeCap(rotorInertia: number): number {
  return Math.max(rotorInertia, MIN_MOTOR_INERTIA) * 2 * Math.PI * GAP_DERIVATIVE_HZ;
}

const OK: LawResult = Object.freeze({ ok: true });

export class TrackingLaw implements LoopLaw {
  readonly pid: Pid[];
  private readonly data: ActuatedArmData;
  private readonly joints: number;
  /** The disturbance observer's estimate as the feedforward takes it (disturbance-feed.ts). */
  readonly feed: DisturbanceFeed;
  /** Where the rig declares play between a motor-side encoder and its link: the motor's lead (backlash.ts). */
  readonly backlash: BacklashInverse | undefined;

  constructor(
    private readonly rig: Pick<ControllerPart, 'joints' | 'control' | 'arm' | 'limits' | 'encoders'>,
    public feedforward: FeedforwardMode,
    /** The nominal actuated arm (the rig's arm, friction and motors). */
    readonly model: ActuatedArmModel,
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
    this.data = createActuatedArmData(model);
    this.feed = new DisturbanceFeed(n, feedCorners(n, rig.control.disturbanceFeedHz, rig.encoders));
    this.backlash = backlashInverseOf(rig, n);
    this.kdCap = Array.from({ length: n }, (_, i) =>
      this.backlash && this.backlash.half[i]! > 0 ? gapDerivativeCap(model.rotorInertia[i]!) : Infinity,
    );
    this.capDerivative();
    // Only where the rig declares a breakaway above the Coulomb level (friction.breakawayNm) or setup
    // measured the duty that starts each joint (motors[j].breakawayDuty): a rig with neither keeps its law as it was.
    this.breakaway = breakawayTorques(model).nm;
    this.kickFrom = Array.from({ length: n }, (_, i) => {
      const cpr = rig.encoders?.[i]?.countsPerRev;
      return Math.max(KICK_MIN_RAD, cpr ? (2 * 2 * Math.PI) / cpr : 0);
    });
  }

  private readonly motorQd: number[] = [0, 0];
  /** Per joint: the breakaway torque per direction [N m] (breakaway.ts; [0, 0]: none known), and the error it waits for [rad]. */
  private readonly breakaway: BreakawayNm[];
  private readonly kickFrom: number[];

  /**
   * Breakaway compensation: a joint at rest whose error has grown past `kickFrom` (two encoder counts,
   * at least 0.1 deg) gets its breakaway torque the way the error points, in full at twice that: the
   * PID's torque for so small an error is far below the breakaway (the mock's joint 2: 0.03 N m for
   * half a degree against 0.12 N m), and a stuck motor side would hold the link off its plan until the
   * integrator wound up. Within `kickFrom` nothing is added (no hunting around the target).
   */
  private breakawayKick(i: number, e: number, qd: number): number {
    if (Math.abs(qd) > KICK_REST_RAD_S) return 0;
    const from = this.kickFrom[i]!;
    const x = (Math.abs(e) - from) / from;
    if (!(x > 0)) return 0;
    const [ccw, cw] = this.breakaway[i]!;
    return e > 0 ? ccw * Math.min(1, x) : -cw * Math.min(1, x);
  }

  /** Per joint: the largest derivative gain [N m s/rad] (play declared: see gapDerivativeCap), else Infinity. */
  readonly kdCap: number[];

  /**
   * After a warning that joint `j`'s duty reverses too often (the loop's, reversals.ts): its observer's
   * feed lowered (disturbance-feed.ts). Returns the feed's new corner [Hz]. (Capping the derivative gain
   * too, as for declared play, also saved 3 deg of undeclared play with stiction, but it changed the
   * excitation runs of identification, whose plans reverse quickly: tests/identify-mock.test.ts.)
   */
  calm(j: number): number {
    return this.feed.calm(j);
  }

  private capDerivative(): void {
    for (let i = 0; i < this.joints; i++) {
      const g = this.pid[i]!.gains;
      if (g.kd > this.kdCap[i]!) g.kd = this.kdCap[i]!;
    }
  }

  get following(): 'model' | 'pid' {
    return this.feedforward === 'none' ? 'pid' : 'model';
  }

  /**
   * The feedforward into `ff` (less the disturbance the twin's observer finds, with feedforward only:
   * a disturbance observer around the model), the PID on the error where the answer applies into `fb`.
   */
  torques(input: LawInput, ff: number[], fb: number[]): LawResult {
    const n = this.joints;
    const { sample: s, ahead: d, saturation: sat } = input;
    const q = s.q;
    const qd = s.qd;
    // The motor leads the plan by half the play, on the side the gear pushes (backlash.ts).
    // The observer's estimate as the feedforward takes it (with feedforward only: an observer around the model).
    const dist = this.feedforward !== 'none' ? input.disturbance : undefined;
    const fed = dist ? this.feed.update(dist, input.dtS) : undefined;
    if (!dist) this.feed.reset();
    const b = this.backlash;
    // The gear's torque is the links' need at the plan plus what the observer finds unexplained (fed is subtracted).
    b?.update(d, input.dtS);
    if (this.feedforward === 'none') {
      ff.fill(0);
    } else {
      const useMeasured = this.feedforward === 'measured';
      computeInverseDynamics(this.model, this.data, useMeasured ? q : d.q, useMeasured ? qd : d.qd, d.qdd, ff);
      if (b && !useMeasured) this.motorFriction(d.qd, b.rate, ff);
      if (fed) for (let i = 0; i < n; i++) ff[i]! -= fed[i]!;
    }
    const schedule = this.rig.control.pid.schedule;
    const elbowRad = n === 2 ? asPair(q)[1] : NaN;
    if (schedule && Number.isFinite(elbowRad)) {
      // The gains of the rig file's schedule at the measured elbow (twolink tune writes it).
      const elbowDeg = (elbowRad * 180) / Math.PI;
      for (let i = 0; i < n; i++) Object.assign(this.pid[i]!.gains, scheduledGains(schedule, i, elbowDeg));
      this.capDerivative();
    }
    for (let i = 0; i < n; i++) {
      const e = s.qDesired[i]! + (b ? b.shift[i]! : 0) - q[i]!;
      fb[i] = this.pid[i]!.update(e, s.qdDesired[i]! + (b ? b.rate[i]! : 0) - qd[i]!, input.dtS, sat.sign[i]!, sat.excess[i]!);
      const kick = this.breakaway[i]!;
      if (kick[0] > 0 || kick[1] > 0) fb[i]! += this.breakawayKick(i, e, qd[i]!);
    }
    return OK;
  }

  /**
   * The friction where the motor side really turns: at the plan's speed plus the backlash inverse's
   * rate (crossing the play, the motor moves while the plan may rest), so that the feedforward gives
   * the breakaway the motor needs to cross (Stribeck's curve in the nominal model, the rig file's
   * `friction.breakawayNm`). Adds f(qd + rate) - f(qd) to `ff`.
   */
  private motorFriction(planQd: readonly number[], rate: readonly number[], ff: number[]): void {
    const f = computeFriction(this.model, this.data, planQd);
    for (let i = 0; i < this.joints; i++) {
      ff[i]! -= f[i]!;
      this.motorQd[i] = planQd[i]! + rate[i]!;
    }
    const g = computeFriction(this.model, this.data, this.motorQd);
    for (let i = 0; i < this.joints; i++) ff[i]! += g[i]!;
  }

  /** The PID's integrators and filters (a trajectory starts, or the motors come back after a disable). */
  reset(): void {
    for (const p of this.pid) p.reset();
    this.feed.reset();
    this.backlash?.reset();
  }
}
