/**
 * The control law: the one place where the loop asks for joint torques. Every answered sample the
 * loop (loop.ts `drive`) predicts the state at the instant the answer applies (predict.ts), samples
 * the plan there (plan-follower.ts), and calls `LoopLaw.torques` with both; it then sums the two parts
 * the law wrote, limits them (the joints' torque limits, scaled by the soft start and stop, and what
 * the motor can give at its speed) and turns them into duty (controller.ts `Controller.apply`).
 *
 * Laws on this path:
 * - twolink's own, inverse-dynamics feedforward + PID (tracking-law.ts `TrackingLaw`);
 * - a user's controller (`twolink run --controller`, a `ControlLaw`: run/law.ts), through `userLaw`;
 * - another built-in law is a `LoopLaw` given as `LoopOptions.law`: it gets what the tracking law
 *   gets (the predicted state, the plan where the answer applies and half a period later, the time
 *   step, the twin's disturbance estimate, the last command's saturation) and is limited the same.
 *
 * A failure is a value (`{ ok: false, reason }`): the loop stops with a `controller` fault and
 * zero output. A non-finite torque is caught after the law (a `non-finite` fault), whichever law.
 */
import type { Twin } from './twin.js';
import type { TrajectorySample } from '../model/trajectory.js';
import type { FollowingLaw } from './following.js';

/** What a law's call gave: torques written, or why not. */
export type LawResult = { ok: true } | { ok: false; reason: string };

/**
 * What a ControlLaw sees: the predicted state at the instant its torque applies, and the plan there.
 * A user's controller gets the same with the endpoints added (`ControllerSample`, user-controller.ts).
 * The loop reuses this object and its arrays from tick to tick.
 */
export interface LawSample {
  /** The time at which the returned torque applies on the board [s, board time]. */
  t: number;
  /**
   * Joint angles [rad] at `t` (joint 1 from the horizontal, joint 2 relative to link 1): the loop's
   * estimate from the newest measurement, carried forward to when the torque applies.
   */
  readonly q: readonly number[];
  /** Joint velocities [rad/s] at `t`, estimated. */
  readonly qd: readonly number[];
  /** The plan's joint angles at `t` [rad]. */
  readonly qDesired: readonly number[];
  /** The plan's joint velocities [rad/s]. */
  readonly qdDesired: readonly number[];
  /** The plan's joint accelerations [rad/s^2]. */
  readonly qddDesired: readonly number[];
}

/** A controller other than ours (twolink run --controller): joint torques for a sample. */
export interface ControlLaw {
  /** Writes the joint torques [N m] into `out`; a failure is a value, never an exception. */
  step(sample: LawSample, periodS: number, out: number[]): LawResult;
  reset(): void;
  /**
   * Given the twin once, when the loop is built (its momentum observer's tauExt: the force estimate of
   * impedance mode), and the loop's tracker velocity [rad/s] (estimator.ts; the array is updated in place
   * each sample: quiet at rest, where a model-aided estimate carries the model's error).
   */
  attach?(twin: Twin, trackerQd: readonly number[]): void;
  /** Writes the law's own columns of the tick (impedance mode's fEst, stiffness) into the row. */
  record?(row: Float64Array): void;
  /** False while the law does not mean to follow the plan (float mode): the following-error guard then stands aside. */
  readonly followsPlan?: boolean;
  /**
   * When set, the state the law is given is carried forward from the model-aided estimator at this
   * bandwidth [Hz] (estimator.ts ModelAidedEstimator: the model's acceleration under the duty plus an
   * estimated unmodelled one) instead of the loop's tracker; the twin and the guards keep the tracker.
   * Impedance mode's damper asks for it: the tracker's lag is a negative mass against the damper.
   */
  readonly velocityObserverHz?: number;
}

/** How the previous command was limited, per joint (what an anti-windup needs). */
export interface Saturation {
  /** +1 or -1 when the joint's torque was cut at its upper or lower limit, else 0. */
  readonly sign: readonly number[];
  /** The torque taken off by the limit: commanded - asked [N m]. */
  readonly excess: readonly number[];
}

/** What the loop gives a law on every answered sample. The loop reuses this object from tick to tick. */
export interface LawInput {
  /** The predicted state where the answer applies (`sample.t`) and the plan there. */
  readonly sample: LawSample;
  /** The plan half a period after `sample.t`, the middle of the period the answer holds: for a feedforward. */
  readonly ahead: TrajectorySample;
  /** Board time since the last answered sample [s] (one period after a stall of the host: sample-clock.ts). */
  readonly dtS: number;
  /** The board's sampling period [s]. */
  readonly periodS: number;
  /**
   * The joint torque the twin's momentum observer finds unexplained [N m], while tracking and when the
   * rig file's `control.disturbanceObserver` is on; undefined otherwise.
   */
  readonly disturbance: readonly number[] | undefined;
  /** How the previous command was limited. */
  readonly saturation: Saturation;
}

/** When the loop resets a law: a trajectory starts, or the motors come back after a disable. */
export type LawReset = 'start' | 'enable';

/** A control law on the loop's path (see the top). */
export interface LoopLaw {
  /** Which following-error limits apply to it (following.ts). */
  readonly following: FollowingLaw;
  /**
   * Joint torques [N m] for an answered sample, in two parts the recording keeps apart: `ff` from the
   * model (feedforward), `fb` from the error (feedback). Both are written in full.
   */
  torques(input: LawInput, ff: number[], fb: number[]): LawResult;
  reset(on: LawReset): void;
}

/**
 * A user's controller on the loop's path: its torques are the feedforward part, the feedback part is
 * zero. It is reset when a trajectory starts (not after a disable).
 */
export function userLaw(law: ControlLaw, joints: number): LoopLaw {
  const tau = new Array<number>(joints).fill(0);
  return {
    following: 'user',
    torques(input, ff, fb) {
      const r = law.step(input.sample, input.periodS, tau);
      if (!r.ok) return r;
      for (let i = 0; i < joints; i++) {
        ff[i] = tau[i]!;
        fb[i] = 0;
      }
      return r;
    },
    reset(on) {
      if (on === 'start') law.reset();
    },
  };
}
