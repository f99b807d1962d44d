/**
 * The loop's guards as pure functions: each looks at numbers and says whether they are a fault.
 * A non-finite value is a violation wherever it appears (NaN compares false with every limit, so a
 * guard written as `x > limit` would let it through).
 *
 * One- and two-link rigs alike: measurements and limits are indexed in loops over the rig's joints,
 * so an index keeps its `!` (they are not Pairs).
 */
import type { JointLimits } from '../config/load.js';
import type { Fault } from './stop.js';

/** A measured angle this far beyond a joint limit stops the arm [rad] (5 deg). */
export const LIMIT_MARGIN = (5 * Math.PI) / 180;
/** A speed this many times the joint's limit stops the arm. */
export const SPEED_FACTOR = 1.25;

const DEG = 180 / Math.PI;

/** The first non-finite entry of `v`, or -1. */
export function firstNonFinite(v: ArrayLike<number>, n = v.length): number {
  for (let i = 0; i < n; i++) if (!Number.isFinite(v[i])) return i;
  return -1;
}

/** Non-finite values among named vectors: the first one found, as a fault. */
export function checkFinite(named: readonly (readonly [string, ArrayLike<number>])[], n: number): Fault | undefined {
  for (const [what, v] of named) {
    const i = firstNonFinite(v, n);
    if (i >= 0) return { kind: 'non-finite', what: `${what} (joint ${i + 1} is ${v[i]})` };
  }
  return undefined;
}

/** Measured angles outside the limits (with LIMIT_MARGIN) or estimated speeds over SPEED_FACTOR x the limit. */
export function checkLimits(q: ArrayLike<number>, qd: ArrayLike<number>, limits: readonly JointLimits[]): Fault | undefined {
  for (let i = 0; i < limits.length; i++) {
    const lim = limits[i]!;
    const qm = q[i]!;
    if (!(qm >= lim.min - LIMIT_MARGIN && qm <= lim.max + LIMIT_MARGIN)) {
      return { kind: 'limit', joint: i, deg: qm * DEG, minDeg: lim.min * DEG, maxDeg: lim.max * DEG };
    }
    if (!(Math.abs(qd[i]!) <= SPEED_FACTOR * lim.maxVel)) {
      return { kind: 'speed', joint: i, degS: qd[i]! * DEG, limitDegS: lim.maxVel * DEG };
    }
  }
  return undefined;
}

/**
 * A measured angle that moved further from one sample to the next than the joint can turn in that
 * time (JUMP_FACTOR x its speed limit, plus JUMP_FLOOR for the encoder's noise) did not turn: its
 * encoder jumped (a slipping disc or coupling, a miscount, noise on the lines). The speed guard would
 * see the same step as a speed and call it one; this names it first. `prev` undefined: the first sample.
 */
export function checkJump(
  prev: readonly number[] | undefined,
  q: ArrayLike<number>,
  dtS: number,
  limits: readonly JointLimits[],
): Fault | undefined {
  if (!prev) return undefined;
  for (let i = 0; i < limits.length; i++) {
    const step = q[i]! - prev[i]!;
    if (!(Math.abs(step) <= JUMP_FACTOR * limits[i]!.maxVel * dtS + JUMP_FLOOR))
      return { kind: 'encoder-jump', joint: i, deg: step * DEG, ms: dtS * 1000 };
  }
  return undefined;
}

/** An angle step over this many times the joint's speed limit is not motion (see checkJump). */
export const JUMP_FACTOR = 3;
/** ... plus this much [rad] (1 deg: several counts of a bench encoder's noise). */
export const JUMP_FLOOR = Math.PI / 180;

/**
 * Time each joint has spent at its torque limit: `satTime` is updated in place from the saturation
 * bits `sat` over `dt` [s]; a joint held there longer than `maxS` is a fault.
 */
export function checkSaturation(satTime: number[], sat: number, moving: boolean, dt: number, maxS: number): Fault | undefined {
  for (let i = 0; i < satTime.length; i++) {
    satTime[i] = moving && sat & (1 << i) ? satTime[i]! + dt : 0;
    if (satTime[i]! > maxS) return { kind: 'saturated', joint: i, seconds: maxS };
  }
  return undefined;
}

/**
 * A gap without an answered sample longer than the watchdog time is a fault: with a board watchdog
 * the board has cut the motors; without one the arm ran on its last command all that time.
 */
export function checkStall(gapS: number, watchdogMs: number, boardWatchdog: boolean): Fault | undefined {
  if (gapS * 1000 > watchdogMs) return { kind: 'stall', ms: gapS * 1000, watchdogMs, boardWatchdog };
  return undefined;
}
