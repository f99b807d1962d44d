/**
 * The twin's alarm as events: the twin (twin.ts) holds an alarm level per joint on every sample; the
 * run is told once when a joint's alarm rises after it has been quiet for half a second, not on
 * every sample it stays up, nor on every flicker across the threshold.
 *
 * One- and two-link rigs alike (`joints`): an index into the per-joint times keeps its `!`.
 */

/** A joint counts as alarmed from its rise until it has been clear for this long [s, loop time]. */
export const ALARM_QUIET_S = 0.5;

export class AlarmEdges {
  /** Bit i: joint i counts as alarmed. */
  private alarmed = 0;
  /** Loop time [s] at which each joint's alarm last cleared. */
  private readonly clearAt: number[];

  constructor(private readonly joints: number) {
    this.clearAt = new Array<number>(joints).fill(-Infinity);
  }

  /**
   * The twin's alarm levels at loop time `t` [s]: the joints (0-based) whose alarm is up, when one of
   * them has just risen after a quiet half second; undefined otherwise.
   */
  update(alarm: readonly boolean[], t: number): number[] | undefined {
    let rising = 0;
    let now = 0;
    for (let i = 0; i < this.joints; i++) {
      if (alarm[i]) {
        now |= 1 << i;
        if (!(this.alarmed & (1 << i)) && t >= this.clearAt[i]! + ALARM_QUIET_S) rising |= 1 << i;
      } else if (this.alarmed & (1 << i)) {
        this.clearAt[i] = t;
      }
    }
    for (let i = 0; i < this.joints; i++) if (!(now & (1 << i)) && t >= this.clearAt[i]! + ALARM_QUIET_S) this.alarmed &= ~(1 << i);
    this.alarmed |= now;
    if (!rising) return undefined;
    const joints = [];
    for (let i = 0; i < this.joints; i++) if (now & (1 << i)) joints.push(i);
    return joints;
  }
}

/** The alarm levels as the row's bit field (bit i: joint i). */
export function alarmBits(alarm: readonly boolean[], joints: number): number {
  let bits = 0;
  for (let i = 0; i < joints; i++) if (alarm[i]) bits |= 1 << i;
  return bits;
}
