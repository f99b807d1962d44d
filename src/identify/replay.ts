/**
 * The twin replayed offline on a recording: the same Twin as in the loop, stepped reading by reading
 * with the duty that was in force, the measured angles and the loop's velocity estimates, so that a
 * rig file's model can be judged on a run that was made with another one. With the rig the run used
 * it reproduces the twin residual the run recorded.
 */
import type { Rig } from '../config/load.js';
import type { LoopState } from '../telemetry/tick.js';
import { Twin } from '../control/twin.js';

/** What the replay needs of one tick. */
export interface ReplayTick {
  i: number;
  state: LoopState;
  fresh: boolean;
  /** [s] */
  boardT: number;
  /** Measured angles [rad] and the loop's velocity estimates [rad/s]. */
  q: readonly number[];
  qd: readonly number[];
  /** Duty sent this tick. */
  duty: readonly number[];
  /** Duty the board applied at this reading, in force until the next (newer recordings). */
  dutyIn?: readonly number[];
}

/**
 * RMS twin residual per joint [deg] over the fresh readings outside idle (as the run's summary counts
 * them). `commandLag` as in the fit: the duty in force after the reading of tick k is the one sent
 * at tick k - commandLag.
 */
export function replayTwinRmsDeg(rig: Rig, ticks: readonly ReplayTick[], commandLag = 1): number[] {
  const twin = new Twin(rig);
  const n = rig.joints;
  const sum = new Array<number>(n).fill(0);
  let count = 0;
  let prev: { r: number; boardT: number } | undefined;
  const zero = new Array<number>(n).fill(0);
  for (let r = 0; r < ticks.length; r++) {
    const k = ticks[r]!;
    if (!k.fresh) continue;
    if (!prev) {
      twin.reset(k.q, k.qd);
    } else {
      // In force between the previous reading and this one: the command that reading acknowledged.
      const src = ticks[prev.r - commandLag];
      const inForce = ticks[prev.r]!.dutyIn ?? (src && k.i - src.i >= 0 ? src.duty : zero);
      twin.step(inForce, k.boardT - prev.boardT, k.q, k.qd);
      if (k.state !== 'idle') {
        count++;
        for (let j = 0; j < n; j++) sum[j]! += ((twin.residual[j]! * 180) / Math.PI) ** 2;
      }
    }
    prev = { r, boardT: k.boardT };
  }
  return sum.map((s) => (count > 0 ? Math.sqrt(s / count) : 0));
}
