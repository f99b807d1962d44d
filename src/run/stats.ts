/**
 * The run's summary, computed from the tick rows as they go by (so it needs no second pass and works
 * on a recording as well as live): tracking error on the trajectory proper, twin residual, alarms,
 * period error percentiles, link counters.
 */
import { F, LOOP_STATES, PHASES } from '../telemetry/tick.js';

const DEG = 180 / Math.PI;
const TRACK_PHASE = PHASES.indexOf('track');
const STATE_TRACK = LOOP_STATES.indexOf('track');
const IDLE = LOOP_STATES.indexOf('idle');

/** A histogram of non-negative microsecond values with 1 us bins up to 100 ms. */
export class UsHistogram {
  private readonly bins = new Uint32Array(100_001);
  n = 0;
  max = 0;
  add(us: number): void {
    const v = Math.max(0, us);
    this.bins[Math.min(100_000, Math.floor(v))]!++;
    this.n++;
    if (v > this.max) this.max = v;
  }
  /** The q-quantile (0..1) in us (bin upper edge). */
  quantile(q: number): number {
    if (this.n === 0) return 0;
    const target = Math.ceil(q * this.n);
    let acc = 0;
    for (let i = 0; i < this.bins.length; i++) {
      acc += this.bins[i]!;
      if (acc >= target) return i + 1;
    }
    return this.max;
  }
}

/** The --json summary of a run (its last stdout line, and the recording's last line). */
export interface RunSummary {
  ticks: number;
  rateHz: number;
  /** Sample instant -> answer written [us] (latency), answered samples. */
  period: { p50Us: number; p99Us: number; maxUs: number };
  /** Samples answered late or not at all (superseded), so far. */
  overruns: number;
  tracking: { rmsDeg: number[]; maxDeg: number[]; samples: number };
  twin: { rmsDeg: number[]; maxDeg: number[]; alarms: number; tauExtRmsNm: number[] };
  /**
   * `dropped` (frames the board dropped itself, TXDROP), `duplicate`, `reordered` and `overlong` are
   * known at the end of a session (not per tick).
   */
  link: { sent: number; received: number; lost: number; corrupt: number; dropped?: number; duplicate?: number; reordered?: number; overlong?: number };
  stopReason: string;
  stopOutcome?: string;
  cpu?: number;
  missed?: number;
  /** Real-time figures of a live run (the board's clock, latency, late samples, CPU, stalls). */
  timing?: import('./messages.js').RunTiming;
}

export class RunStats {
  ticks = 0;
  private readonly trackSq: number[];
  private readonly trackMax: number[];
  private trackN = 0;
  private readonly twinSq: number[];
  private readonly twinMax: number[];
  private readonly extSq: number[];
  private twinN = 0;
  private alarms = 0;
  private lastAlarm = 0;
  /** Sample instant -> answer written [us] (the row's errUs), answered samples only. */
  readonly period = new UsHistogram();
  /** The board's sample period [us], from consecutive samples' board times. */
  readonly boardPeriod = new UsHistogram();
  private lastBoardT = -1;
  private last: ArrayLike<number> | undefined;

  constructor(
    readonly joints: number,
    readonly rateHz: number,
  ) {
    const z = (): number[] => new Array<number>(joints).fill(0);
    this.trackSq = z();
    this.trackMax = z();
    this.twinSq = z();
    this.twinMax = z();
    this.extSq = z();
  }

  add(r: ArrayLike<number>): void {
    this.ticks++;
    if (r[F.fresh] === 1) {
      if (r[F.errUs]! > 0) this.period.add(r[F.errUs]!);
      const bt = r[F.boardT]!;
      if (this.lastBoardT >= 0 && bt > this.lastBoardT) this.boardPeriod.add((bt - this.lastBoardT) * 1e6);
      this.lastBoardT = bt;
    }
    const n = this.joints;
    if (r[F.state] === STATE_TRACK && r[F.phase] === TRACK_PHASE) {
      this.trackN++;
      for (let i = 0; i < n; i++) {
        const e = (r[F.qDes0 + i]! - r[F.q0 + i]!) * DEG;
        this.trackSq[i]! += e * e;
        if (Math.abs(e) > this.trackMax[i]!) this.trackMax[i] = Math.abs(e);
      }
    }
    if (r[F.fresh] === 1 && r[F.state] !== IDLE) {
      this.twinN++;
      for (let i = 0; i < n; i++) {
        const e = r[F.res0 + i]! * DEG;
        this.twinSq[i]! += e * e;
        if (Math.abs(e) > this.twinMax[i]!) this.twinMax[i] = Math.abs(e);
        this.extSq[i]! += r[F.tauExt0 + i]! ** 2;
      }
    }
    const a = r[F.alarm]!;
    if (a & ~this.lastAlarm) this.alarms += countBits(a & ~this.lastAlarm);
    this.lastAlarm = a;
    this.last = r;
  }

  summary(stopReason: string, extra: Partial<RunSummary> = {}): RunSummary {
    const r = this.last;
    const rms = (s: number[], n: number): number[] => s.map((v) => (n > 0 ? Math.sqrt(v / n) : 0));
    return {
      ticks: this.ticks,
      rateHz: this.rateHz,
      period: { p50Us: this.period.quantile(0.5), p99Us: this.period.quantile(0.99), maxUs: Math.round(this.period.max) },
      overruns: r ? r[F.overruns]! : 0,
      tracking: { rmsDeg: rms(this.trackSq, this.trackN), maxDeg: this.trackMax.slice(), samples: this.trackN },
      twin: { rmsDeg: rms(this.twinSq, this.twinN), maxDeg: this.twinMax.slice(), alarms: this.alarms, tauExtRmsNm: rms(this.extSq, this.twinN) },
      link: { sent: r ? r[F.sent]! : 0, received: r ? r[F.received]! : 0, lost: r ? r[F.lost]! : 0, corrupt: r ? r[F.corrupt]! : 0 },
      stopReason,
      ...extra,
    };
  }
}

function countBits(x: number): number {
  let c = 0;
  for (let v = x; v; v &= v - 1) c++;
  return c;
}
