/**
 * The loop's guards on a sample, in the order the loop runs them, with the state they keep: the
 * wiring monitor's window (wiring-monitor.ts), the following-error guard (following.ts) and the time
 * each joint has spent at its torque limit. The checks themselves are pure functions (safety.ts).
 * Each returns the fault it finds, a value; the loop stops the arm with it.
 */
import type { LoopPart } from '../config/parts.js';
import type { ActuatedArmModel } from '../model/actuated.js';
import type { Reading } from '../transport/link.js';
import { FollowingGuard, followingFault, type FollowingLaw } from './following.js';
import { SlipGuard } from './slip.js';
import { checkFinite, checkJump, checkLimits, checkSaturation, checkStall } from './safety.js';
import type { Fault } from './stop.js';
import type { Twin } from './twin.js';
import { WiringMonitor } from './wiring-monitor.js';

/**
 * The wiring monitor's verdicts count in this much driven motion from the start [s]: a miswired arm
 * runs away at its first commands; later, a push must not be taken for a wiring mistake (the monitor
 * watches on, for the following-error guard's message).
 */
const WIRING_WATCH_S = 1;

export class LoopGuards {
  private readonly wiring: WiringMonitor;
  private readonly following: FollowingGuard;
  private readonly slip: SlipGuard;
  /** Driven time the wiring monitor has watched [s]. */
  private wiringWatchS = 0;
  /** Time each joint has spent at its torque limit [s]. */
  private readonly satTime: number[];

  constructor(
    private readonly rig: LoopPart,
    model: ActuatedArmModel,
    law: FollowingLaw,
    /** The board cuts the motors by itself when commands stop. */
    private readonly boardWatchdog: boolean,
    /** The board's sampling period [s]. */
    private readonly period: number,
  ) {
    this.wiring = new WiringMonitor(model, { encoders: rig.encoders });
    this.following = new FollowingGuard(rig.limits, law, rig.link.transport === 'firmata');
    this.slip = new SlipGuard(
      rig.limits.map((l) => l.maxVel),
      rig.encoders.map((e) => e.countsPerRev),
    );
    this.satTime = new Array<number>(rig.joints).fill(0);
  }

  /** The measured angles are finite. */
  measured(r: Reading): Fault | undefined {
    return checkFinite([['measured angle', r.q]], this.rig.joints);
  }

  /**
   * An encoder did not jump since the previous sample `bdt` [s] before (`prev` undefined: none), nor
   * step back against the motion as a slipping one does (slip.ts; `qd` the estimate, `t` board time).
   */
  jump(prev: readonly number[] | undefined, r: Reading, bdt: number, qd: readonly number[], t: number): Fault | undefined {
    return checkJump(prev, r.q, bdt, this.rig.limits) ?? (prev ? this.slip.check(prev, qd, r.q, bdt, t) : undefined);
  }

  /**
   * Driven motion over `bdt` [s] under `duty`: the arm moving as a miswired arm would is a wiring
   * fault (saying which wire), in the first second of driven motion only.
   */
  wired(bdt: number, duty: readonly number[], q: readonly number[], qd: readonly number[]): Fault | undefined {
    const w = this.wiring.update(bdt, duty, q, qd);
    const f: Fault | undefined =
      w && this.wiringWatchS < WIRING_WATCH_S ? { kind: 'wiring', joint: w.joint, message: w.message } : undefined;
    this.wiringWatchS += bdt;
    return f;
  }

  /**
   * An answered sample `gap` [s] after the last: the estimates finite; with the arm driven (`active`),
   * no stall longer than the watchdog, the joints within their limits and speeds.
   */
  state(r: Reading, gap: number, qd: readonly number[], twin: Twin, active: boolean): Fault | undefined {
    const rig = this.rig;
    return (
      checkFinite(
        [
          ['velocity estimate', qd],
          ['twin state', twin.q],
          ['twin velocity', twin.qd],
          ['twin residual torque', twin.tauExt],
        ],
        rig.joints,
      ) ??
      // The stall first: after a frozen host, a joint past its limit is the consequence, the stall the cause.
      (active ? checkStall(gap, rig.link.watchdogMs, this.boardWatchdog) : undefined) ??
      (active ? checkLimits(r.q, qd, rig.limits) : undefined)
    );
  }

  /**
   * After the law, at loop time `t` [s]: a joint far from its plan (`planQ` at the sample's instant,
   * while tracking or holding at full torque: `fullTorque`), or one that stays at its torque limit
   * (`sat`, the output's saturation bits, while `moving`): jammed, blocked, overloaded.
   */
  output(planQ: readonly number[], q: readonly number[], fullTorque: boolean, sat: number, moving: boolean, t: number): Fault | undefined {
    const fe = this.following.check(planQ, q, fullTorque);
    if (fe) return followingFault(fe, t, this.wiring, this.wiringWatchS < WIRING_WATCH_S);
    return checkSaturation(this.satTime, sat, moving, this.period, this.rig.control.maxSaturationS);
  }
}
