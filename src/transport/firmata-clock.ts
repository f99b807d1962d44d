/**
 * Clock recovery for Firmata reports. Firmata carries no timestamps: the board's reports are the only
 * clock the host has. The board takes a sample every sampling interval on its own millis(), so the
 * report count is the board's time: report n was taken n periods after the first. The host only
 * learns when reports arrive, late by a variable latency (USB frames, the kernel, its own scheduling).
 *
 * This filter assigns each report its index n and a board time n P, and keeps a line on the host's
 * clock, `line(n) = offset + n P`, on the early side of the arrivals (the latency floor), not their
 * average: the offset is the 10th percentile of `arrival - n P` over the last 128 chunks. So a late
 * arrival (a host stall, a USB hiccup) moves nothing, a burst of early ones (a sender catching up)
 * hardly does, and no time is ever taken from arrival jitter.
 *
 * - Reports that arrive together (one chunk of bytes) are consecutive: a host stall delivers its
 *   backlog in one chunk, whose last report is the newest.
 * - A chunk whose last report arrives more than 1.5 P after the line's prediction, beyond the jitter
 *   seen lately (the 10th to 90th percentile spread of the same window), is late: either reports are
 *   missing before it (the board skipped them: ConfigurableFirmata's FirmataReporting::elapsed() drops
 *   the reports of a loop() held up for more than an interval, `previousMillis = currentMillis -
 *   samplingInterval`) or everything between the board and the host was held up (a USB adapter, a pty,
 *   a starved simulator or rig) and the reports come, all of them, late. Only what follows tells the
 *   two apart: reports held up come in faster than P until they are back on the line; after a skip they
 *   go on at P, a whole number of periods behind it. So a late chunk is only a suspicion; the index
 *   advances past the missing reports once CONFIRM reports in a row have stayed that late without
 *   draining (the loss is then counted), and a suspicion is dropped, with nothing lost, when an arrival
 *   is back on the line. (Counted at once, as before, a board held up 10 ms by a starved simulator was
 *   counted 3 reports lost, and the host's board time and plan jumped 9 ms ahead of the arm: measured
 *   on the stock image in simavr, where the encoder counts across such a "gap" moved by one report's
 *   step, not four.)
 * - P starts at the nominal interval and is then fitted (least squares) through the minimum arrival of
 *   each block of reports over the last ~20 blocks: it follows the board's crystal or resonator error
 *   (an Uno's resonator: up to +-0.5 %), not jitter. On a 16 MHz AVR, millis() steps 1.024 ms with a
 *   2 ms step every ~42 ms: reports every "3 ms" are taken 3.072 ms apart with one 2.048 ms interval
 *   in 14. The fit gives the mean, 3.000 ms; the board's own sample instants lie within one Timer0
 *   overflow (1.024 ms) of `n P`, which is the board's quantisation, not the host's.
 *
 * Pure: times are passed in.
 */

/** Reports per block for the period fit. */
const BLOCK = 64;
/** Blocks the period fit spans. */
const BLOCKS = 24;
/** Reports after a restart before a late arrival may count as lost (the line has not settled). */
const WARMUP = 8;
/** Chunks whose arrivals place the line (and measure the jitter). */
const WINDOW = 128;
/**
 * Reports that must arrive in a row as late as a suspected gap, its lateness neither draining nor
 * growing by P / 2, before it counts as lost: 96 ms at 3 ms. A skip is one step, then flat; a path held
 * up grows, then drains: a backlog at 57600 baud drains 0.74 ms a report (a 13-byte report is 2.26 ms
 * of wire for each 3 ms), P / 2 within 3 reports. (With 16, a stock image in simavr held up ~15 ms
 * for 50 ms at load 19 was once counted 3 lost while its encoder counts moved one report's step.)
 */
const CONFIRM = 32;

/** A late chunk not yet known to be a loss. */
interface Suspect {
  /** The line's offset when it came [s]: lateness is measured against the line before the gap. */
  offset: number;
  /** How late an arrival must still be to keep the suspicion [s]. */
  threshold: number;
  /** The least lateness since the suspicion began [s]. */
  minLate: number;
  /** The lateness when it last drained by P / 2 (or began) [s]. */
  drainedTo: number;
  /** Reports since the lateness last drained by P / 2. */
  steady: number;
  /** Window entries written since the suspicion began (shifted by the loss when it is confirmed). */
  entries: number;
}

export interface Assigned {
  /** Index of the first report of the chunk. */
  first: number;
  /** Reports lost before the first one (0 normally). */
  lost: number;
}

export class ReportClock {
  private p: number;
  private readonly nominal: number;
  private n = -1;
  private offset = 0;
  private bt = 0;
  private assigned = 0;
  private blockMin: { n: number; t: number } | undefined;
  private blockStart = 0;
  private mins: { n: number; t: number }[] = [];
  /** A period fitted during the last chunk, taken at the next one (a chunk's board times use one period). */
  private fitted: number | undefined;
  /** The window: index and arrival of the last report of each recent chunk. */
  private readonly winN = new Float64Array(WINDOW);
  private readonly winT = new Float64Array(WINDOW);
  private readonly resid = new Float64Array(WINDOW);
  private winLen = 0;
  private winAt = 0;
  private jitter = 0;
  private suspect: Suspect | undefined;
  /** Late chunks that turned out to be late, not lost (the reports came; the index did not move). */
  lateNotLost = 0;

  /** `periodS`: the nominal sampling interval [s]. */
  constructor(periodS: number) {
    this.nominal = periodS;
    this.p = periodS;
  }

  /** The period estimate [s]. */
  get period(): number {
    return this.p;
  }

  /** Index of the newest report, -1 before the first. */
  get index(): number {
    return this.n;
  }

  /**
   * `k` reports arrived together at host time `t` [s]. Returns the index of the first; the others
   * follow it one by one.
   */
  arrive(t: number, k: number): Assigned {
    if (k <= 0) return { first: this.n + 1, lost: 0 };
    if (this.fitted !== undefined) {
      this.p = this.fitted;
      this.fitted = undefined;
    }
    if (this.n < 0) {
      this.n = k - 1;
      this.offset = t - this.n * this.p;
      this.bt = this.n * this.p;
      this.assigned = k;
      this.blockStart = 0;
      return { first: 0, lost: 0 };
    }
    let last = this.n + k;
    const lost = this.judge(t, last, k);
    last += lost;
    const first = last - k + 1;
    this.bt += (last - this.n) * this.p;
    this.n = last;
    this.assigned += k;
    this.follow(t, last);
    return { first, lost };
  }

  /**
   * Whether reports are missing before the chunk whose last report is `last` (arrived at `t`): 0, or
   * the count once a suspected gap is confirmed (see the file's comment).
   */
  private judge(t: number, last: number, k: number): number {
    const s = this.suspect;
    if (!s) {
      const threshold = 1.5 * this.p + this.jitter;
      const late = t - this.line(last);
      if (this.assigned >= WARMUP && late > threshold)
        this.suspect = { offset: this.offset, threshold, minLate: late, drainedTo: late, steady: 0, entries: 0 };
      return 0;
    }
    const late = t - (s.offset + last * this.p);
    if (late <= s.threshold) {
      // Back on the line: the reports were held up, none is missing.
      this.suspect = undefined;
      this.lateNotLost++;
      return 0;
    }
    s.minLate = Math.min(s.minLate, late);
    if (Math.abs(late - s.drainedTo) > this.p / 2) {
      // Draining (a backlog leaving) or growing (a path still held up): not the step of a skip.
      s.drainedTo = late;
      s.steady = 0;
      return 0;
    }
    s.steady += k;
    if (s.steady < CONFIRM) return 0;
    // As late as the gap for CONFIRM reports in a row: the board skipped them.
    this.suspect = undefined;
    const lost = Math.max(1, Math.round(s.minLate / this.p));
    for (let j = 0; j < Math.min(s.entries, this.winLen); j++) {
      const at = (this.winAt - 1 - j + WINDOW) % WINDOW;
      this.winN[at] = this.winN[at]! + lost;
    }
    return lost;
  }

  /** Board time of report `i` [s since the first report] (i <= the newest index). */
  boardTime(i: number): number {
    return this.bt - (this.n - i) * this.p;
  }

  /** The earliest host time report `i` can arrive, by the line [s, host clock]. */
  line(i: number): number {
    return this.offset + i * this.p;
  }

  /** Keeps the line on the lower envelope and fits the period through block minima. */
  private follow(t: number, i: number): void {
    if (this.suspect) this.suspect.entries++;
    this.winN[this.winAt] = i;
    this.winT[this.winAt] = t;
    this.winAt = (this.winAt + 1) % WINDOW;
    this.winLen = Math.min(WINDOW, this.winLen + 1);
    const r = this.resid.subarray(0, this.winLen);
    for (let j = 0; j < this.winLen; j++) r[j] = this.winT[j]! - this.winN[j]! * this.p;
    r.sort();
    // Until the window has a few arrivals, the earliest; then the 10th percentile.
    const lo = this.winLen < WARMUP ? r[0]! : r[Math.floor(0.1 * (this.winLen - 1))]!;
    const hi = r[Math.floor(0.9 * (this.winLen - 1))]!;
    this.offset = lo;
    this.jitter = Math.max(0, hi - lo);
    const resid = t - i * this.nominal;
    if (!this.blockMin || resid < this.blockMin.t - this.blockMin.n * this.nominal) this.blockMin = { n: i, t };
    if (i - this.blockStart >= BLOCK) {
      this.mins.push(this.blockMin);
      if (this.mins.length > BLOCKS) this.mins.shift();
      this.blockMin = undefined;
      this.blockStart = i;
      this.fitPeriod();
    }
  }

  private fitPeriod(): void {
    const m = this.mins;
    if (m.length < 3) return;
    let sn = 0;
    let st = 0;
    for (const x of m) {
      sn += x.n;
      st += x.t;
    }
    const mn = sn / m.length;
    const mt = st / m.length;
    let snn = 0;
    let snt = 0;
    for (const x of m) {
      snn += (x.n - mn) ** 2;
      snt += (x.n - mn) * (x.t - mt);
    }
    if (snn <= 0) return;
    const p = snt / snn;
    // A fit more than 2 % off the nominal interval is not a crystal: keep what we have.
    if (Math.abs(p / this.nominal - 1) < 0.02) this.fitted = p;
  }
}
