/**
 * The soft start and stop: the torque limits' scale (0..1), ramped up over `control.softStartS` when
 * the arm is driven (a trajectory starts, the motors come back) and down to zero over
 * `control.softStopS` when it is released (a stop command: the loop stops once the scale is zero).
 * Times are loop time (the board's) [s].
 */
export class SoftRamp {
  /** The scale at the last `at` (0..1). */
  scale = 0;
  private from = 0;
  private start = 0;

  constructor(private readonly c: { softStartS: number; softStopS: number }) {}

  /** A ramp begins at loop time `t` [s] from `from` (default: the scale in force). */
  begin(t: number, from = this.scale): void {
    this.start = t;
    this.from = from;
    this.scale = from;
  }

  /** The scale at loop time `t` [s]: down while releasing, up while driven, zero otherwise. */
  at(t: number, drive: 'driven' | 'release' | 'off'): number {
    const c = this.c;
    if (drive === 'release') {
      const x = c.softStopS > 0 ? (t - this.start) / c.softStopS : 1;
      this.scale = Math.max(0, this.from * (1 - x));
    } else if (drive === 'driven') {
      const x = c.softStartS > 0 ? (t - this.start) / c.softStartS : 1;
      this.scale = Math.min(1, this.from + (1 - this.from) * x);
    } else {
      this.scale = 0;
    }
    return this.scale;
  }
}
