/**
 * The disturbance observer's estimate as the feedforward takes it (rig file `control.disturbanceObserver`):
 * the twin's momentum observer finds the joint torque the model does not explain (tauExt, twin.ts) and
 * the tracking law subtracts it from the feedforward. Through a gearbox with play and an encoder on the
 * motor side that loop rattles: while the gears cross the play the motor side turns free, with a
 * fraction of the inertia the model gives the joint, and the observer reads the missing load as a
 * disturbance whose correction throws the motor back across the play (on the mock with 1.5 deg of play
 * the reach rattled at 88 duty reversals a second and stopped on its following error at 0.5 s; virtual
 * time, bench `--only hardware`).
 *
 * So the estimate passes a critically damped second-order low-pass per joint, (wc / (s + wc))^2 with
 * wc = 2 pi `cornerHz`, before the feedforward takes it: below the play's rattle and the samples'
 * noise, above the reach's own changes of load. A joint without a corner takes the estimate as it is
 * (as before this filter). The corner per joint:
 * - the rig file's `control.disturbanceFeedHz` when it gives one;
 * - FEED_HZ_WITH_PLAY where the rig declares play between a joint's encoder and its link
 *   (`encoders[j].backlashDeg`);
 * - none otherwise; and when the loop warns that a joint's duty reverses too often (reversals.ts) it
 *   lowers that joint's corner (`calm`): to FEED_HZ_WITH_PLAY, then halving at each new warning, down
 *   to FEED_HZ_MIN. An undeclared play then calms itself, and says so.
 */

/** The corner where play is declared, and the first one a warning sets [Hz]. */
export const FEED_HZ_WITH_PLAY = 6;
/** The lowest corner the warnings lower a joint to [Hz]. */
export const FEED_HZ_MIN = 1.5;

export class DisturbanceFeed {
  /** The estimate as the feedforward takes it [N m], per joint. */
  readonly out: number[];
  /** Per joint: the low-pass's corner [Hz] (Infinity: none). */
  readonly cornerHz: number[];
  private readonly stage1: number[];
  private readonly stage2: number[];
  private started = false;

  constructor(
    readonly joints: number,
    cornerHz: readonly number[],
  ) {
    const z = (): number[] => new Array<number>(joints).fill(0);
    this.out = z();
    this.stage1 = z();
    this.stage2 = z();
    this.cornerHz = cornerHz.slice(0, joints);
  }

  /** The next `update` starts the filters at its estimate (a trajectory starts: no transient from an old estimate). */
  reset(): void {
    this.started = false;
  }

  /** Lowers joint `j`'s corner after a warning of its reversals; returns the new corner [Hz]. */
  calm(j: number): number {
    const now = this.cornerHz[j]!;
    this.cornerHz[j] = Number.isFinite(now) ? Math.max(FEED_HZ_MIN, Math.min(now / 2, FEED_HZ_WITH_PLAY)) : FEED_HZ_WITH_PLAY;
    return this.cornerHz[j];
  }

  /** Filters the observer's estimate `tauExt` [N m] over a step of `dt` [s]; returns `out`. */
  update(tauExt: readonly number[], dt: number): readonly number[] {
    for (let i = 0; i < this.joints; i++) {
      const x = tauExt[i]!;
      const hz = this.cornerHz[i]!;
      if (!this.started) {
        this.stage1[i] = x;
        this.stage2[i] = x;
      }
      if (!Number.isFinite(hz)) {
        this.out[i] = x;
        continue;
      }
      const a = dt > 0 ? 1 - Math.exp(-2 * Math.PI * hz * dt) : 0;
      this.stage1[i]! += a * (x - this.stage1[i]!);
      this.stage2[i]! += a * (this.stage1[i]! - this.stage2[i]!);
      this.out[i] = this.stage2[i]!;
    }
    this.started = true;
    return this.out;
  }
}

/** The corners of a rig's joints (see the top): the rig file's, else FEED_HZ_WITH_PLAY where play is declared, else none. */
export function feedCorners(joints: number, feedHz: number | undefined, encoders: readonly { backlash?: number }[] | undefined): number[] {
  return Array.from({ length: joints }, (_, j) => feedHz ?? ((encoders?.[j]?.backlash ?? 0) > 0 ? FEED_HZ_WITH_PLAY : Infinity));
}
