/**
 * Duty reversals: how often a joint's motor duty changes sign while the joint is meant to move. A
 * gearbox with play rattles when the command reverses through the play, so a real arm wears (and a
 * disturbance observer that chatters through the play shows here first). The run summary, the bench
 * and the loop's warning count them with this one definition:
 *
 * - a joint is **in motion** on an answered sample while the loop tracks a trajectory (any phase) and
 *   the plan's speed of that joint is at least `MOTION_RAD_S` (1 deg/s);
 * - a **reversal** of joint j is an answered sample in motion whose duty has |duty| >= `DUTY_FLOOR`
 *   (1 % of full scale: less moves no motor through any H-bridge's dead time) and the opposite sign of
 *   the last such duty of that joint in the same stretch of motion (a stretch ends when the joint is
 *   not in motion: a reversal across a rest is not counted);
 * - the **rate** [1/s] is the reversals over the board time the joint was in motion (the time between
 *   consecutive answered samples in motion).
 */

/** The plan's speed from which a joint counts as in motion [rad/s] (1 deg/s). */
export const MOTION_RAD_S = Math.PI / 180;

/** Duties smaller than this (a fraction of full scale) have no sign here. */
export const DUTY_FLOOR = 0.01;

/** Per joint: the reversals, the time in motion, and the sign of the last duty that counted. */
export class DutyReversals {
  /** Reversals per joint. */
  readonly count: number[];
  /** Board time in motion per joint [s]. */
  readonly movingS: number[];
  private readonly sign: number[];
  private readonly lastT: number[];

  constructor(
    readonly joints: number,
    /** Duties smaller than this have no sign (the warning counts only the larger swings: WARN_DUTY_FLOOR). */
    private readonly floor = DUTY_FLOOR,
  ) {
    const z = (): number[] => new Array<number>(joints).fill(0);
    this.count = z();
    this.movingS = z();
    this.sign = z();
    this.lastT = new Array<number>(joints).fill(NaN);
  }

  /**
   * One answered sample at board time `t` [s]: per joint the plan's speed `qdDes` [rad/s] and the
   * duty written (from offsets `qdAt` and `dutyAt`: a tick row serves for both), `tracking` when the
   * loop tracks a trajectory. Returns a bit mask of the joints that reversed at this sample.
   */
  add(t: number, tracking: boolean, qdDes: ArrayLike<number>, duty: ArrayLike<number>, qdAt = 0, dutyAt = 0): number {
    let reversed = 0;
    for (let j = 0; j < this.joints; j++) {
      const moving = tracking && Math.abs(qdDes[qdAt + j]!) >= MOTION_RAD_S;
      if (!moving) {
        this.sign[j] = 0;
        this.lastT[j] = NaN;
        continue;
      }
      const last = this.lastT[j]!;
      if (Number.isFinite(last) && t > last) this.movingS[j]! += t - last;
      this.lastT[j] = t;
      const d = duty[dutyAt + j]!;
      if (!(Math.abs(d) >= this.floor)) continue;
      const s = d > 0 ? 1 : -1;
      if (this.sign[j] !== 0 && s !== this.sign[j]) {
        this.count[j]!++;
        reversed |= 1 << j;
      }
      this.sign[j] = s;
    }
    return reversed;
  }

  /** Reversals per second in motion, per joint (0 for a joint that never moved). */
  perS(): number[] {
    return this.count.map((c, j) => (this.movingS[j]! > 0 ? c / this.movingS[j]! : 0));
  }
}

/**
 * Reversals per second above which the loop warns, over the last `WARN_WINDOW_S` of a joint's motion:
 * the ceiling for a geared arm is 2/s on average. Undeclared play of 1.5 deg rattles at 88/s
 * (3 deg stopped on its following error at 0.34 s with the warning at 25/s: too late). The plain mock's
 * reach flips small duties 16-22 times within a second as its way back settles (the disturbance
 * observer's noise), which WARN_DUTY_FLOOR leaves out (virtual time).
 */
export const WARN_REVERSALS_PER_S = 10;
/**
 * The warning counts only reversals between duties of at least 5 %: a rattle through the play swings the
 * duty by tens of per cent; the plain mock's observer noise near rest flips duties of 1-3 %.
 */
export const WARN_DUTY_FLOOR = 0.05;
/** The stretch of motion the warning looks at [s]. */
export const WARN_WINDOW_S = 1;

/**
 * The loop's warning when a joint's reversals climb: the reversal times of the last `WARN_WINDOW_S`
 * of its motion; `update` says which joints crossed `WARN_REVERSALS_PER_S` now (a rising edge: a joint
 * warns again only after its rate fell to half the threshold).
 */
export class ReversalWatch {
  private readonly times: number[][];
  private readonly warned: boolean[];
  readonly rate: number[];

  constructor(readonly joints: number) {
    this.times = Array.from({ length: joints }, () => []);
    this.warned = new Array<boolean>(joints).fill(false);
    this.rate = new Array<number>(joints).fill(0);
  }

  /** `reversed`: DutyReversals.add's mask at board time `t` [s]. Returns the joints (0-based) whose warning rose. */
  update(t: number, reversed: number): number[] | undefined {
    let rose: number[] | undefined;
    for (let j = 0; j < this.joints; j++) {
      const ts = this.times[j]!;
      if (reversed & (1 << j)) ts.push(t);
      while (ts.length > 0 && ts[0]! < t - WARN_WINDOW_S) ts.shift();
      const rate = ts.length / WARN_WINDOW_S;
      this.rate[j] = rate;
      if (!this.warned[j] && rate > WARN_REVERSALS_PER_S) {
        this.warned[j] = true;
        (rose ??= []).push(j);
      } else if (this.warned[j] && rate <= WARN_REVERSALS_PER_S / 2) this.warned[j] = false;
    }
    return rose;
  }
}
