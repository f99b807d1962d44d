/**
 * The following-error guard: the plan's angle less the measured one, per joint, at each answered
 * sample; past the joint's limit (rig file `limits[].followingErrorDeg`) the loop stops with
 * `fault:following-error`. It is what catches an arm that no longer follows its plan while every
 * other guard is content: a sagging supply (the arm droops, far from any limit, and the motor is not
 * saturated long enough for the saturation guard), a jam (a second of full torque before the
 * saturation guard), a dead motor (the joint hangs under gravity), and a run that would otherwise end
 * `done` with 15 deg of error.
 *
 * The default limit depends on the law that drives the arm, because a healthy arm's error does:
 * - twolink's model feedforward + PID: LIMIT_MARGIN (5 deg), the room the limit guard allows past a
 *   soft limit. The trajectories are planned inside the soft limits, so an arm that follows its plan
 *   within this error never reaches the limit guard, and one that does not is stopped before it can
 *   be that far from where it was told to be anywhere in its range. It is 12x the largest error of
 *   the mock's reach, circle and point (0.42 deg, joint 2, virtual time), 6x the error a 60 ms host
 *   stall mid-reach leaves (0.84 deg, virtual time, loop.ts), and below the 14.8 deg of the
 *   stock-Firmata reach that ended `done` (issue 20).
 * - PID alone (`--no-feedforward`): twice that, 10 deg. PID alone lags the plan where the model's
 *   feedforward would have pushed: up to 6.7 deg on the mock's reach, circle and point (virtual time),
 *   and the README's tour runs it.
 * - a user's controller (`--controller`): six times, 30 deg: twolink cannot know how closely it means
 *   to follow (the endpoint-impedance example of docs/controller.md lags joint 2 by up to 19.6 deg, on purpose); the
 *   default still stops a dead motor or a jam long before the saturation guard. Give your own.
 * Over Firmata the default is doubled: the board sends no timestamps, so the host's clock is its count
 * of the board's reports, at 333 Hz behind a 16U2 that holds them up to 4.096 ms; a stock ConfigurableFirmata
 * image in simavr, killed and re-run at CI's load, peaked at 5.0 deg on joint 2 (RMS 1.2 / 2.2 deg,
 * real time, 235 of 550 samples late) and was stopped at the 5 deg default while following its plan.
 * `limits[].followingErrorDeg` in the rig file replaces the default for every law and transport.
 *
 * Where it applies: while the loop tracks (approach, trajectory, way back), holds or is paused, at
 * full torque. Not while the torque limits ramp (the soft start after a start or an enable, where
 * the arm may sag until the motors have their torque; the soft stop, where it droops on purpose), not
 * while idle or disabled (motors off: a person may move the arm by hand, as setup asks). After a
 * ramp, a joint's guard is armed once its error is inside the limit (an arm re-enabled while it
 * still swings is not stopped for the swing), so a joint that never comes back inside its limit
 * after the ramp is left to the saturation guard.
 *
 * The trip is at the first sample past the limit: the error a fault can build in the time to the
 * stop is one sample's growth (2 ms at 500 Hz), well inside the 150 ms the issue allows.
 *
 * One- and two-link rigs alike: the per-joint arrays are indexed in loops over the joints, so an
 * index keeps its `!` (they are not Pairs).
 */
import type { JointLimits } from '../config/load.js';
import { LIMIT_MARGIN } from './safety.js';
import type { Fault } from './stop.js';
import type { WiringMonitor } from './wiring-monitor.js';

const DEG = 180 / Math.PI;

/** What drives the arm: twolink's model feedforward + PID, PID alone, or a user's controller. */
export type FollowingLaw = 'model' | 'pid' | 'user';

/** The default following-error limit per law [rad] (see the top). */
export const DEFAULT_FOLLOWING_ERROR: Record<FollowingLaw, number> = { model: LIMIT_MARGIN, pid: 2 * LIMIT_MARGIN, user: 6 * LIMIT_MARGIN };

/** A joint past its following-error limit. */
export interface FollowingExcess {
  joint: number;
  /** The error, plan less measured [deg] (signed: positive when the arm is below the plan). */
  errorDeg: number;
  limitDeg: number;
}

export class FollowingGuard {
  /** The limit per joint [rad]. */
  readonly limit: number[];
  private readonly armed: boolean[];

  /** `firmata`: the default doubled (see the top). */
  constructor(limits: readonly Pick<JointLimits, 'followingError'>[], law: FollowingLaw, firmata = false) {
    this.limit = limits.map((l) => l.followingError ?? DEFAULT_FOLLOWING_ERROR[law] * (firmata ? 2 : 1));
    this.armed = this.limit.map(() => false);
  }

  /**
   * One answered sample: the plan's angles at the sample's instant and the measured ones [rad];
   * `active` when the loop tracks or holds at full torque. The first joint past its limit, or
   * undefined. A non-finite error is past any limit (the finite-value guard names it first).
   */
  check(plan: readonly number[], measured: readonly number[], active: boolean): FollowingExcess | undefined {
    for (let i = 0; i < this.limit.length; i++) {
      if (!active) {
        this.armed[i] = false;
        continue;
      }
      const e = plan[i]! - measured[i]!;
      const inside = Math.abs(e) <= this.limit[i]!;
      if (inside) this.armed[i] = true;
      else if (this.armed[i]) return { joint: i, errorDeg: e * DEG, limitDeg: this.limit[i]! * DEG };
    }
    return undefined;
  }
}

/**
 * The stop for a joint past its limit at loop time `t` [s]: a wiring mistake if the wiring monitor
 * suspects one while its verdicts count (`wiringVerdicts`: the first second of driven motion; a
 * miswired arm passes the limit before the monitor has held its verdict), else the following error
 * with what the joint's motion says of its cause (a dead motor, a jam), when that is clear.
 */
export function followingFault(
  fe: FollowingExcess,
  t: number,
  wiring: Pick<WiringMonitor, 'suspect' | 'trouble'>,
  wiringVerdicts: boolean,
): Fault {
  const w = wiringVerdicts ? wiring.suspect() : undefined;
  return w ? { kind: 'wiring', joint: w.joint, message: w.message } : { kind: 'following-error', ...fe, t, ...wiring.trouble(fe.joint) };
}
