/**
 * Duty reversals: how often a joint's motor duty swings from one direction to the other while the
 * joint is meant to move. A gearbox with play rattles when the drive reverses through the play, so a
 * real arm wears (and a disturbance observer that chatters through the play shows here first). The
 * run summary, the bench and the loop's warning count them with this one definition:
 *
 * - a joint is **in motion** on an answered sample while the loop tracks a trajectory (any phase) and
 *   the plan's speed of that joint is at least `MOTION_RAD_S` (1 deg/s);
 * - a **reversal** of joint j is an answered sample in motion whose duty has |duty| >= `DUTY_FLOOR`
 *   (10 % of full scale) and the opposite sign of the last such duty of that joint in the same stretch
 *   of motion (a stretch ends when the joint is not in motion: a reversal across a rest is not
 *   counted). The duty must so swing across the whole band -10 %..+10 %, at least a fifth of full scale;
 * - the **rate** [1/s] is the reversals over the board time the joint was in motion (the time between
 *   consecutive answered samples in motion).
 *
 * Why the band is that wide (issue 33; virtual time, the reach and the replay of a taught circle on
 * the mock, 4 realisations of its noise): a rattle through play swings the duty by tens of per cent
 * (undeclared 1.5 and 3 deg: median swing 0.43-0.60 of full scale, 90th percentile 1.0-1.6), and its
 * count hardly depends on the band (1.5 deg, joint 1: 12.9 a second at +-5 %, 12.0 at +-10 %, 11.2 at
 * +-15 %). A play-free arm's duty jitters by a few per cent: the encoder's counts (the mock's 4800 a
 * turn: one count in a 2 ms sample is 37 deg/s) make the velocity estimate jump by a few deg/s from
 * sample to sample, and that reaches the duty through the PID's derivative and, straight through with
 * the gain Ko M, through the disturbance observer's momentum (twin.ts; joint 1 of the mock: 5 N m s/rad
 * against kd 2.4). Where the torque the plan needs is near zero (the start and the end of a motion, a
 * plan whose torque crosses zero, a slow replay against little load) that jitter flips the duty's
 * sign (median swing 0.04-0.11): across +-1 % the play-free reach counted 5.2/7.2 reversals a second
 * and the replay 20.0/3.4; across +-5 % the replay still reached 15-17 in one second and the loop
 * warned of play the arm has not. Across +-10 %: the play-free reach 0.07/0.07 (at most 1 in any
 * second), the replay 0.33/0.00 (at most 3), undeclared 1.5 deg of play 12.7/3.4 (up to 50 and 13).
 * Low-passing the observer's feed on every joint (disturbance-feed.ts) removed much of the jitter
 * (reach across +-1 %: 1.5/1.6) but took the observer's fast damping with it: joint 2 tracked the
 * reach 4-6 % worse and undeclared 3 deg of play stopped on its following error more often (2 of 3
 * realisations, at the 5 deg limit 16 ms after the warning). Not kept: the law is unchanged.
 */

/** The plan's speed from which a joint counts as in motion [rad/s] (1 deg/s). */
export const MOTION_RAD_S = Math.PI / 180;

/** Duties smaller than this (a fraction of full scale) have no sign here: a reversal swings across +-DUTY_FLOOR (see the top). */
export const DUTY_FLOOR = 0.1;

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
    /** Duties smaller than this have no sign (a fraction of full scale). */
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
 * the ceiling for a geared arm is 2/s on average. Undeclared play of 1.5 deg rattles at up to
 * 42-50 in one second on joint 1 and 12-13 on joint 2 (3 deg: 50-56 and 12-17); the play-free mock's
 * reach and the replay of a taught circle reach at most 3 (virtual time, 4 realisations of the mock's
 * noise; the reversals as defined at the top).
 */
export const WARN_REVERSALS_PER_S = 10;
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
