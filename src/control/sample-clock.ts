/**
 * The loop's clock, which is the board's: loop time is board time since the first sample. It counts
 * samples lost (gaps in the board's index) and samples not answered (a newer one had come), measures
 * the gap between answered samples, and gives the controller its time step.
 *
 * Stalls. The trajectory's clock is the board's, also over a stall of the host: the board went on
 * driving the arm with the last answer meanwhile, so the arm went on along the plan (holding the plan
 * instead left it behind the arm by the stall's length: a 60 ms stall mid-reach gave 4.3 deg of error
 * on joint 2 held, 0.84 deg on the board's clock, virtual time). After a gap of more than two periods
 * without an answered sample (beyond the bursts the link normally delivers: a USB adapter's frames
 * hold a few samples at 1 kHz) the host stalled: the first command after the gap is computed from the
 * fresh sample and the controller's time step is one period (the integrator does not take in the
 * gap). A gap longer than the watchdog time is a fault (safety.ts `checkStall`: the board has cut the
 * motors).
 *
 * Between samples (a command, a link event, the lost-link timer) loop time goes on with the host's
 * clock since the newest sample arrived, so that an event says when it happened.
 */
import { BurstSizes } from '../transport/bursts.js';
import type { Reading } from '../transport/link.js';

export class SampleClock {
  /** Loop time of the newest sample [s] (board time since the first). */
  t = 0;
  /** Board time since the last answered sample [s] (one period after a stall): the controller's dt. */
  dt: number;
  /** Samples not answered because a newer one had arrived, and samples lost (index gaps), so far. */
  superseded = 0;
  lostSamples = 0;
  /**
   * Of the superseded: those that came in one burst of the link with the sample answered (a USB
   * adapter holds the board's bytes and delivers several samples at once: a 16U2 every 4.096 ms, four
   * at 1 kHz), not a late host (`burst`); and those beyond the link's usual burst, which the host
   * read late (`lateSuperseded`: its answer's deadline passed). They add up to `superseded` once a
   * chunk's answered sample has come (`answered`).
   */
  burst = 0;
  lateSuperseded = 0;
  /** Answers written more than one sample period after their sample arrived: the host missed its deadline. */
  lateAnswers = 0;
  private readonly bursts = new BurstSizes();
  /** Superseded samples since the last answered one (the chunk in hand). */
  private chunk = 0;
  /** Largest gap between answered samples [s] (board time). */
  maxGap = 0;
  private boardT0 = -1;
  private lastBoardT = -1;
  private lastIndex = -1;
  private lastAnsweredT = -1;
  /** Host time when the newest sample arrived [s] (-1 before the first). */
  private lastSampleHost = -1;
  private handling = false;

  /** `period`: the board's sampling period [s]. */
  constructor(readonly period: number) {
    this.dt = period;
  }

  /** A sample is being handled, from host time `hostNow` [s], until `end()`. */
  begin(hostNow: number): void {
    this.lastSampleHost = hostNow;
    this.handling = true;
  }

  end(): void {
    this.handling = false;
  }

  /** True while a sample is being handled (between `begin` and `end`). */
  get inSample(): boolean {
    return this.handling;
  }

  /** Loop time now [s]: the newest sample's, plus (between samples) the host time since it arrived. */
  now(hostNow: number): number {
    return this.handling || this.lastSampleHost < 0 ? this.t : this.t + Math.max(0, hostNow - this.lastSampleHost);
  }

  /** A sample arrived: loop time, lost samples; returns the board time since the previous sample [s]. */
  arrive(r: Reading): number {
    if (this.boardT0 < 0) this.boardT0 = r.boardTime;
    this.t = r.boardTime - this.boardT0;
    if (this.lastIndex >= 0 && r.index > this.lastIndex + 1) this.lostSamples += r.index - this.lastIndex - 1;
    this.lastIndex = r.index;
    const bdt = this.lastBoardT < 0 ? this.period : r.boardTime - this.lastBoardT;
    this.lastBoardT = r.boardTime;
    return bdt;
  }

  /** The answer to the sample in hand was written `sinceArrivalS` [s] after the sample arrived. */
  answerWritten(sinceArrivalS: number): void {
    if (sinceArrivalS > this.period) this.lateAnswers++;
  }

  /** A sample not answered: a newer one came in the same chunk of bytes. */
  supersede(): void {
    this.superseded++;
    this.chunk++;
  }

  /** The sample is answered: returns the board time since the last answered one [s] (one period for the first). */
  answered(r: Reading): number {
    // The chunk is whole: its samples beyond the link's usual burst were read late by the host.
    const size = this.chunk + 1;
    const usual = this.bursts.add(size);
    const late = Math.max(0, size - usual);
    this.lateSuperseded += late;
    this.burst += this.chunk - late;
    this.chunk = 0;
    const gap = this.lastAnsweredT < 0 ? this.period : r.boardTime - this.lastAnsweredT;
    this.lastAnsweredT = r.boardTime;
    if (gap > this.maxGap) this.maxGap = gap;
    return gap;
  }

  /**
   * The controller's step after a `gap` [s] of answered samples: the gap, or one period after a stall
   * (a gap of more than two periods beyond the delay the link normally brings: a USB adapter delivers
   * samples in bursts of up to its delay).
   */
  step(r: Reading, gap: number): void {
    const delay = r.applyAt > r.boardTime ? Math.round((r.applyAt - r.boardTime) / this.period) : 1;
    const stalled = gap > (delay + 2) * this.period;
    this.dt = stalled ? this.period : gap;
  }

  /** Board time from the last answered sample to `r` [s], or undefined before the first answered one. */
  sinceAnswered(r: Reading): number | undefined {
    return this.lastAnsweredT < 0 ? undefined : r.boardTime - this.lastAnsweredT;
  }

  /** The encoders were set to zero: the next sample has no predecessor to take a speed from. */
  rezero(): void {
    this.lastBoardT = -1;
  }
}
