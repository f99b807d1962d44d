/**
 * The run's summary, computed from the tick rows as they go by (so it needs no second pass and works
 * on a recording as well as live): tracking error on the trajectory proper, twin residual, alarms,
 * period error percentiles, link counters.
 */
import { F, LOOP_STATES, PHASES } from '../telemetry/tick.js';
import { describeStop, type StopReason } from '../control/stop.js';
import { endpoint } from '../model/kinematics.js';
import { isTwoLink, type ArmParams, type Pair, type TwoLinkParams, type Vec2 } from '../model/types.js';
import { DutyReversals } from '../control/reversals.js';
import { PlayMeter, type MeasuredPlay } from './play.js';

const DEG = 180 / Math.PI;
const TRACK_PHASE = PHASES.indexOf('track');
const APPROACH_PHASE = PHASES.indexOf('approach');
const PARK_PHASE = PHASES.indexOf('park');
const STATE_TRACK = LOOP_STATES.indexOf('track');
const STATE_HOLD = LOOP_STATES.indexOf('hold');
const IDLE = LOOP_STATES.indexOf('idle');

/** Values up to this many microseconds go in 1 us bins; larger ones are kept exactly (they are rare). */
const BINNED_US = 100_000;

/**
 * Non-negative microsecond values, for exact quantiles at whole-microsecond resolution: 1 us bins up
 * to 100 ms, and every larger value kept as it was, so a quantile is never a bin's cap.
 */
export class UsHistogram {
  private readonly bins = new Uint32Array(BINNED_US);
  private readonly over: number[] = [];
  n = 0;
  max = 0;
  add(us: number): void {
    const v = Math.max(0, us);
    if (v < BINNED_US) this.bins[Math.floor(v)]!++;
    else this.over.push(v);
    this.n++;
    if (v > this.max) this.max = v;
  }
  /**
   * The q-quantile (0..1) by nearest rank: the ceil(q n)-th smallest value, truncated to whole us
   * (`nearestRankUs` on the list of values gives the same); 0 when empty.
   */
  quantile(q: number): number {
    if (this.n === 0) return 0;
    const target = Math.max(1, Math.ceil(q * this.n));
    let acc = 0;
    for (let i = 0; i < this.bins.length; i++) {
      acc += this.bins[i]!;
      if (acc >= target) return i;
    }
    const over = this.over.slice().sort((a, b) => a - b);
    return Math.floor(over[target - acc - 1]!);
  }
}

/** The q-quantile of `values` by nearest rank, truncated to whole us: the definition UsHistogram.quantile follows. */
export function nearestRankUs(values: readonly number[], q: number): number {
  if (values.length === 0) return 0;
  const sorted = values.map((v) => Math.max(0, v)).sort((a, b) => a - b);
  return Math.floor(sorted[Math.max(1, Math.ceil(q * sorted.length)) - 1]!);
}

/** A row whose sample the loop answered (wrote a command for): only these have a latency (errUs > 0). */
export function answeredRow(r: ArrayLike<number>): boolean {
  return r[F.fresh] === 1 && r[F.errUs]! > 0;
}

/**
 * The timing figures of a run, each computed here from the rows alone (so a recording gives the same):
 * - latency [us]: sample instant (on the host's clock) -> answer written, over the answered rows;
 *   p50 and p99 by nearest rank, max; whole microseconds, truncated.
 * - samplePeriodP99Us: 99th percentile of the board-time difference between consecutive fresh rows.
 * - maxStallMs: the longest time the board went without a new command [ms]: between two consecutive
 *   answers written, each at its sample's board time plus its latency (a sample superseded or lost
 *   counts as a gap; an answer written late counts its lateness). So no latency stands above the
 *   longest stall by more than the answer before it took (issue 35, item 5).
 */
export interface TimingFigures {
  latencyP50Us: number;
  latencyP99Us: number;
  latencyMaxUs: number;
  samplePeriodP99Us: number;
  maxStallMs: number;
}

/** What the summary's tracking figures cover (see RunSummary.tracking). */
export type TrackingCover = 'trajectory' | 'approach' | 'none';

/** The --json summary of a run (its last stdout line, and the recording's last line). */
export interface RunSummary {
  /** Rows of the loop (one per sample, and one per halt between samples). */
  ticks: number;
  /** The loop's rate [Hz]. */
  rateHz: number;
  /** Sample instant -> answer written [us] (latency), answered samples (TimingFigures: how). */
  period: { p50Us: number; p99Us: number; maxUs: number };
  /** Late samples: their answer missed its deadline (applied late, or none: read late by the host). */
  overruns: number;
  /**
   * Samples that came in one burst of the link with a newer one (a USB adapter's) and were not
   * answered, only the newest of a burst: not late. Absent in recordings from before issue 35, whose
   * `overruns` counted them too.
   */
  burst?: number;
  /**
   * Tracking error (desired - measured) [deg]. It covers the trajectory proper; a run that ended
   * before any trajectory proper began (a timeout or a stop during the approach) covers the approach
   * instead (`covers: "approach"`), and one that tracked nothing has `covers: "none"`, `samples: 0`
   * and zeros that are no measurement (printed as such, failed by HIL expectations). Absent in
   * recordings made before it existed (they cover the trajectory proper).
   */
  tracking: { rmsDeg: number[]; maxDeg: number[]; samples: number; covers?: TrackingCover };
  /** The twin's residual (measured - twin) [deg], its divergence alarms, and the momentum observer's unexplained torque [N m], per joint. */
  twin: { rmsDeg: number[]; maxDeg: number[]; alarms: number; tauExtRmsNm: number[] };
  /**
   * `dropped` (frames the board dropped itself, TXDROP), `duplicate`, `reordered` and `overlong` are
   * known at the end of a session (not per tick).
   */
  link: {
    sent: number;
    received: number;
    lost: number;
    corrupt: number;
    dropped?: number;
    duplicate?: number;
    reordered?: number;
    overlong?: number;
  };
  /** Why the run stopped, as a value (switch on its kind). */
  stop: StopReason;
  /** The same in words, for people and for readers of old recordings (describeStop). */
  stopReason: string;
  /** How the board took the final zero command: `acknowledged`, `unconfirmed`, `watchdog` (it stopped on its watchdog), `unconfirmed-no-watchdog`. */
  stopOutcome?: string;
  /** The host's CPU over the run (the mock rig's thread left out), as a fraction of one core. */
  cpu?: number;
  /** Samples lost on the way (gaps in the board's sample index). */
  missed?: number;
  /**
   * How well a taught motion was replayed (a run whose trajectory is a `twolink teach` file): the
   * tracking error on the trajectory proper per joint [deg] and at the endpoint [mm].
   */
  replay?: { rmsDeg: number[]; maxDeg: number[]; endpointRmsMm: number; endpointMaxMm: number; samples: number };
  /** `run --reconnect`: the boards found again after a pulled cable, the resets among them, the gaps (session-reconnect.ts). */
  reconnect?: import('./session-reconnect.js').ReconnectSummary;
  /** Real-time figures of a live run (the board's clock, latency, late samples, CPU, stalls). */
  timing?: import('./messages.js').RunTiming;
  /** An impedance run's spring (in force at the last rest) and its force estimate there [N] (issue 23). */
  impedance?: ImpedanceSummary;
  /**
   * Tracking error (desired - measured) per phase of the trajectory [deg]: the approach from where the
   * arm was, the trajectory proper, the way back. `encoder` is what the loop measured (the encoder's
   * side: `encoderSide`); `link` the link's true angle, where the run knows it (the mock's plant).
   */
  phases?: PhaseTracking;
  /** Where each joint's encoder sits: on the motor shaft (before the gearbox: it cannot see the play) or on the joint. */
  encoderSide?: ('motor' | 'joint')[];
  /** Duty reversals per joint while the joint is in motion (src/control/reversals.ts: the definition). */
  reversals?: { perS: number[]; count: number[]; movingS: number[] };
  /**
   * The gearbox's play as a link-side sensor measured it (`firmata.linkSensors`: a potentiometer on the
   * joint, after the gearbox): src/run/play.ts has the definition. Absent without such a sensor.
   */
  measuredPlay?: MeasuredPlay;
}

/** Tracking figures of one phase (RunSummary.phases) [deg]. */
export interface PhaseFigures {
  samples: number;
  encoder: { rmsDeg: number[]; maxDeg: number[] };
  link?: { rmsDeg: number[]; maxDeg: number[] };
  /**
   * Against a link-side sensor (`firmata.linkSensors`: a potentiometer on the joint, after the
   * gearbox), a measurement on a real arm too; null for a joint without one.
   */
  linkSensor?: { rmsDeg: (number | null)[]; maxDeg: (number | null)[] };
}

/** RunSummary.phases: a phase the run never entered is absent. */
export type PhaseTracking = Partial<Record<'approach' | 'trajectory' | 'park', PhaseFigures>>;

/** The `impedance` object of an impedance run's summary. */
export interface ImpedanceSummary {
  space: 'endpoint' | 'joint';
  /** The stiffness in force at the last sample at rest [N/m, or N m/rad in joint space]. */
  stiffness: number;
  dampingRatio: number;
  /** The endpoint force estimate (x, y) [N] at the last sample at rest (null: the arm never rested). */
  forceEstimateN: [number, number] | null;
}

/** A sample at rest for the impedance summary: both joints slower than this [rad/s] (low-passed). */
const REST_SPEED = 0.02;
const HOLDING = [LOOP_STATES.indexOf('hold'), LOOP_STATES.indexOf('track'), LOOP_STATES.indexOf('paused')];

export class RunStats {
  ticks = 0;
  /** Tracking error sums on the trajectory proper, and on the approach and park (the fallback). */
  private readonly track = new ErrorSums();
  private readonly moving = new ErrorSums();
  /** Per phase (approach, trajectory, park): the encoder's error and the link's. */
  private readonly phase = {
    approach: { encoder: new ErrorSums(), link: new ErrorSums(), sensor: new ErrorSums() },
    trajectory: { encoder: new ErrorSums(), link: new ErrorSums(), sensor: new ErrorSums() },
    park: { encoder: new ErrorSums(), link: new ErrorSums(), sensor: new ErrorSums() },
  };
  /** Joints with a link-side sensor (bits, from the rows' meas.linkKnown), and the play it measures. */
  private sensorMask = 0;
  private readonly play: PlayMeter;
  /** The row offset of the link's true angle (joint 1; joint 2 follows), when the run knows it. */
  private linkAt: number | undefined;
  private side: ('motor' | 'joint')[] | undefined;
  readonly reversals: DutyReversals;
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
  /** Board time of the last answered row [s], and the longest gap between answered rows [s]. */
  private lastAnsweredT = -1;
  private maxGapS = 0;
  private last: ArrayLike<number> | undefined;
  private imp: { space: ImpedanceSummary['space']; dampingRatio: number; rest?: [number, number]; k: number; speed: Pair } | undefined;
  /** The replay's endpoint error (enableReplay): the arm, the sums [m^2] and the largest [m]. */
  private replayArm: TwoLinkParams | undefined;
  private readonly replaySums = { n: 0, sq: 0, max: 0 };
  private readonly pDes: Vec2 = [0, 0];
  private readonly pMeas: Vec2 = [0, 0];

  constructor(
    readonly joints: number,
    readonly rateHz: number,
  ) {
    const z = (): number[] => new Array<number>(joints).fill(0);
    this.twinSq = z();
    this.twinMax = z();
    this.extSq = z();
    this.reversals = new DutyReversals(joints);
    this.play = new PlayMeter(joints);
  }

  /**
   * The link's true angle is in the rows from offset `at` (joint 1; joint 2 at `at + 1`) [rad]: the
   * phases get link figures. Without it, rows whose `plant.known` is 1 (a virtual run on the mock) give
   * theirs from `plant.q`.
   */
  scoreLink(at: number): void {
    this.linkAt = at;
  }

  /** Where the rig's encoders sit (the summary's `encoderSide`; a hand-built encoder without `side` is on the motor). */
  encoders(encoders: readonly { side?: 'motor' | 'joint' }[]): this {
    this.side = encoders.slice(0, this.joints).map((e) => e.side ?? 'motor');
    return this;
  }

  /** A gap in the run (a reconnect, session-reconnect.ts): the next rows' timing is not measured from the last ones'. */
  gap(): void {
    this.lastAnsweredT = -1;
    this.lastBoardT = -1;
  }

  add(r: ArrayLike<number>): void {
    this.ticks++;
    if (r[F.fresh] === 1) {
      const bt = r[F.boardT]!;
      if (answeredRow(r)) {
        this.period.add(r[F.errUs]!);
        // When the answer was written, on the board's clock: its sample's time plus its latency. The
        // board goes without a new command from one answer written to the next (issue 35: measured
        // between the samples' times instead, an answer written late for an old sample looked like no
        // stall at all, and a latency stood above the longest stall).
        const written = bt + r[F.errUs]! / 1e6;
        if (this.lastAnsweredT >= 0) this.maxGapS = Math.max(this.maxGapS, written - this.lastAnsweredT);
        this.lastAnsweredT = written;
      }
      if (this.lastBoardT >= 0 && bt > this.lastBoardT) this.boardPeriod.add((bt - this.lastBoardT) * 1e6);
      this.lastBoardT = bt;
    }
    const n = this.joints;
    if (r[F.state] === STATE_TRACK) {
      (r[F.phase] === TRACK_PHASE ? this.track : this.moving).add(r, n);
      const p = r[F.phase];
      const sums =
        p === TRACK_PHASE
          ? this.phase.trajectory
          : p === APPROACH_PHASE
            ? this.phase.approach
            : p === PARK_PHASE
              ? this.phase.park
              : undefined;
      if (sums) {
        sums.encoder.add(r, n);
        // The link's true angle: the mock's plant in a virtual run (plant.known), or a column the run names.
        const at = this.linkAt ?? (r[F.plantKnown] === 1 ? F.plantQ0 : undefined);
        if (at !== undefined) sums.link.add(r, n, at);
        // A link-side sensor's reading (meas.qLink): a joint without one is left out of the figures.
        if (r[F.linkKnown] !== 0) sums.sensor.add(r, n, F.qLink0);
      }
    }
    this.sensorMask |= r[F.linkKnown]!;
    this.play.add(r, r[F.state] === STATE_TRACK || r[F.state] === STATE_HOLD);
    if (answeredRow(r)) this.reversals.add(r[F.boardT]!, r[F.state] === STATE_TRACK, r, r, F.qdDes0, F.duty0);
    if (this.replayArm && r[F.state] === STATE_TRACK && r[F.phase] === TRACK_PHASE) this.addEndpoint(r, this.replayArm);
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
    const imp = this.imp;
    if (imp && r[F.fresh] === 1) {
      // The speeds low-passed over 0.1 s: the velocity estimate's noise alone reaches 0.13 rad/s on the mock.
      const a = 1 - Math.exp(-1 / (0.1 * this.rateHz));
      imp.speed[0] += a * (r[F.qd0]! - imp.speed[0]);
      imp.speed[1] += a * (r[F.qd1]! - imp.speed[1]);
    }
    if (
      imp &&
      r[F.fresh] === 1 &&
      HOLDING.includes(r[F.state]!) &&
      Math.abs(imp.speed[0]) < REST_SPEED &&
      Math.abs(imp.speed[1]) < REST_SPEED
    ) {
      imp.rest = [r[F.fEst0]!, r[F.fEst1]!];
      imp.k = r[F.stiffness]!;
    }
  }

  /** This run is in impedance mode: its summary gets the `impedance` object. */
  trackImpedance(space: ImpedanceSummary['space'], stiffness: number, dampingRatio: number): void {
    this.imp = { space, dampingRatio, k: stiffness, speed: [0, 0] };
  }

  /** The `impedance` object (undefined for a run in another mode). */
  impedance(): ImpedanceSummary | undefined {
    const i = this.imp;
    if (!i) return undefined;
    const r3 = (v: number): number => Math.round(v * 1000) / 1000;
    return {
      space: i.space,
      stiffness: r3(i.k),
      dampingRatio: i.dampingRatio,
      forceEstimateN: i.rest ? [r3(i.rest[0]), r3(i.rest[1])] : null,
    };
  }

  /** Adds the replay figures (RunSummary.replay) for a two-link arm following a taught motion. */
  enableReplay(arm: ArmParams): void {
    if (isTwoLink(arm)) this.replayArm = arm;
  }

  private addEndpoint(r: ArrayLike<number>, arm: TwoLinkParams): void {
    endpoint(arm, [r[F.qDes0]!, r[F.qDes1]!], this.pDes);
    endpoint(arm, [r[F.q0]!, r[F.q1]!], this.pMeas);
    const e = Math.hypot(this.pDes[0] - this.pMeas[0], this.pDes[1] - this.pMeas[1]);
    const s = this.replaySums;
    s.n++;
    s.sq += e * e;
    s.max = Math.max(s.max, e);
  }

  /** The replay figures, once a taught trajectory proper has been tracked. */
  private replay(): RunSummary['replay'] | undefined {
    const s = this.replaySums;
    if (!this.replayArm || s.n === 0) return undefined;
    const t = this.track.figures(this.joints, 'trajectory');
    return { rmsDeg: t.rmsDeg, maxDeg: t.maxDeg, endpointRmsMm: Math.sqrt(s.sq / s.n) * 1000, endpointMaxMm: s.max * 1000, samples: s.n };
  }

  /** The tracking figures: the trajectory proper's, else the approach's, else none (RunSummary.tracking). */
  tracking(): RunSummary['tracking'] {
    if (this.track.n > 0) return this.track.figures(this.joints, 'trajectory');
    if (this.moving.n > 0) return this.moving.figures(this.joints, 'approach');
    return this.track.figures(this.joints, 'none');
  }

  /** The tracking figures per phase (RunSummary.phases). */
  phases(): PhaseTracking {
    const out: PhaseTracking = {};
    for (const k of ['approach', 'trajectory', 'park'] as const) {
      const p = this.phase[k];
      if (p.encoder.n === 0) continue;
      const e = p.encoder.figures(this.joints, 'trajectory');
      const l = p.link.n > 0 ? p.link.figures(this.joints, 'trajectory') : undefined;
      const ls = p.sensor.n > 0 ? p.sensor.figures(this.joints, 'trajectory') : undefined;
      const has = (v: number, j: number): number | null => (this.sensorMask & (1 << j) ? v : null);
      out[k] = {
        samples: e.samples,
        encoder: { rmsDeg: e.rmsDeg, maxDeg: e.maxDeg },
        ...(l ? { link: { rmsDeg: l.rmsDeg, maxDeg: l.maxDeg } } : {}),
        ...(ls ? { linkSensor: { rmsDeg: ls.rmsDeg.map(has), maxDeg: ls.maxDeg.map(has) } } : {}),
      };
    }
    return out;
  }

  /** The summary's `period`: the latency figures of `timing()`. */
  private latency(): RunSummary['period'] {
    const t = this.timing();
    return { p50Us: t.latencyP50Us, p99Us: t.latencyP99Us, maxUs: t.latencyMaxUs };
  }

  /** The timing figures (TimingFigures: what each means), from the rows so far. */
  timing(): TimingFigures {
    return {
      latencyP50Us: this.period.quantile(0.5),
      latencyP99Us: this.period.quantile(0.99),
      latencyMaxUs: Math.floor(this.period.max),
      samplePeriodP99Us: this.boardPeriod.quantile(0.99),
      maxStallMs: Math.round(this.maxGapS * 1e4) / 10,
    };
  }

  summary(stop: StopReason, extra: Partial<RunSummary> = {}): RunSummary {
    const r = this.last;
    const rms = (s: number[], n: number): number[] => s.map((v) => (n > 0 ? Math.sqrt(v / n) : 0));
    return {
      ticks: this.ticks,
      rateHz: this.rateHz,
      period: this.latency(),
      overruns: r ? r[F.overruns]! : 0,
      burst: r ? r[F.burst]! : 0,
      tracking: this.tracking(),
      twin: {
        rmsDeg: rms(this.twinSq, this.twinN),
        maxDeg: this.twinMax.slice(),
        alarms: this.alarms,
        tauExtRmsNm: rms(this.extSq, this.twinN),
      },
      link: { sent: r ? r[F.sent]! : 0, received: r ? r[F.received]! : 0, lost: r ? r[F.lost]! : 0, corrupt: r ? r[F.corrupt]! : 0 },
      stop,
      stopReason: describeStop(stop),
      ...(this.imp ? { impedance: this.impedance()! } : {}),
      ...(this.replay() ? { replay: this.replay()! } : {}),
      phases: this.phases(),
      ...(this.side ? { encoderSide: this.side } : {}),
      reversals: { perS: this.reversals.perS(), count: this.reversals.count.slice(), movingS: this.reversals.movingS.slice() },
      ...(this.play.figures() ? { measuredPlay: this.play.figures()! } : {}),
      ...extra,
    };
  }
}

/** Sums of the tracking error (desired - measured) per joint [deg]. */
class ErrorSums {
  n = 0;
  readonly sq: number[] = [];
  readonly max: number[] = [];
  /** `at`: the row offset of the angle measured (joint 1; default the encoder's `q`). */
  add(r: ArrayLike<number>, joints: number, at: number = F.q0): void {
    this.n++;
    for (let i = 0; i < joints; i++) {
      const e = Math.abs((r[F.qDes0 + i]! - r[at + i]!) * DEG);
      this.sq[i] = (this.sq[i] ?? 0) + e * e;
      this.max[i] = Math.max(this.max[i] ?? 0, e);
    }
  }
  figures(joints: number, covers: TrackingCover): RunSummary['tracking'] {
    const at = (a: number[], i: number): number => a[i] ?? 0;
    return {
      rmsDeg: Array.from({ length: joints }, (_, i) => (this.n > 0 ? Math.sqrt(at(this.sq, i) / this.n) : 0)),
      maxDeg: Array.from({ length: joints }, (_, i) => at(this.max, i)),
      samples: this.n,
      covers,
    };
  }
}

function countBits(x: number): number {
  let c = 0;
  for (let v = x; v; v &= v - 1) c++;
  return c;
}
