/**
 * The slip guard: an encoder that slips on its shaft (a loose coupling or set screw) sticks, then
 * jerks back against the motion, and the loop, which knows the joint only through it, drives the arm
 * on past its plan by what it lost: a run that ends `done` with the arm 30 deg from where the loop
 * believes it is (a slip of a tenth of the motion on the mock's reach, virtual time). Each jerk is a
 * step of the measured angle that no motion of the joint makes: the angle lands further from where
 * its velocity was taking it than the joint could move at its speed limit in that time (a jam, which
 * stops a joint within a sample, moves it back less than that) plus SLIP_FLOOR_COUNTS of noise. A jerk
 * larger than a jump is left to safety.ts's checkJump, which stops at the first one; smaller ones
 * against the motion, SLIP_STEPS of them within SLIP_WINDOW_S, are a slipping encoder (noise and
 * miscounts go either way). A joint that turns the other way as an encoder slips in one direction
 * only is also a slip.
 *
 * Pure: `check` per sample (answered or not), with the previous sample's angles and the velocity the
 * loop estimated at it.
 *
 * One- and two-link rigs alike: the per-joint arrays are indexed in loops over the joints, so an index
 * keeps its `!` (they are not Pairs); a joint's steps are a list of any length.
 */
import type { Fault } from './stop.js';

/** A step counts when it is past the joint's speed limit x dt by this many counts (the encoder's noise and quantization). */
export const SLIP_FLOOR_COUNTS = 4;
/** After a step, the loop's velocity estimate is off for a few samples: steps this soon after one [s] are the same one. */
export const SLIP_SETTLE_S = 0.05;
/** Steps against the motion that make a slipping encoder ... */
export const SLIP_STEPS = 3;
/** ... within this time [s]. */
export const SLIP_WINDOW_S = 2;

const DEG = 180 / Math.PI;

export class SlipGuard {
  /** Per joint: the times of its recent steps against the motion [s], and what they lost [rad]. */
  private readonly steps: { t: number; rad: number }[][];
  private readonly floor: number[];

  /** `countsPerRev` per joint (the rig file's encoders); `maxVel` per joint [rad/s]. */
  constructor(
    private readonly maxVel: readonly number[],
    countsPerRev: readonly number[],
  ) {
    this.steps = maxVel.map(() => []);
    this.floor = maxVel.map((_, i) => (SLIP_FLOOR_COUNTS * 2 * Math.PI) / (countsPerRev[i] ?? 2048));
  }

  /** Forgets the steps seen (a new start). */
  reset(): void {
    for (const s of this.steps) s.length = 0;
  }

  /**
   * One sample at loop time `t` [s], `dt` [s] of board time after the one before, whose angles were
   * `prev` [rad] with the estimated velocity `qd` [rad/s]; the angles now `q`. The slip, when a joint's
   * encoder has stepped back against the motion SLIP_STEPS times within SLIP_WINDOW_S.
   */
  check(prev: readonly number[], qd: readonly number[], q: ArrayLike<number>, dt: number, t: number): Fault | undefined {
    if (!(dt > 0) || !Number.isFinite(dt)) return undefined;
    for (let i = 0; i < this.steps.length; i++) {
      const v = qd[i]!;
      const step = q[i]! - (prev[i]! + v * dt);
      if (!Number.isFinite(step) || Math.abs(step) <= this.maxVel[i]! * dt + this.floor[i]! || Math.sign(step) === Math.sign(v)) continue;
      const s = this.steps[i]!;
      if (s.length > 0 && t - s.at(-1)!.t < SLIP_SETTLE_S) continue;
      while (s.length > 0 && t - s[0]!.t > SLIP_WINDOW_S) s.shift();
      s.push({ t, rad: step });
      if (s.length >= SLIP_STEPS) {
        const lost = s.reduce((a, x) => a + x.rad, 0);
        return { kind: 'encoder-slip', joint: i, steps: s.length, deg: lost * DEG, seconds: t - s[0]!.t };
      }
    }
    return undefined;
  }
}
