/**
 * The loop's record of a sample: one row of the tick format (telemetry/tick.ts, `F`), written into
 * one reused buffer and handed to the sink (which copies what it keeps). A row per sample, answered
 * or not, and one for an instant without a sample (a halt between samples: a lost link, a command),
 * so that the recording shows every command the board was given.
 */
import type { Clock } from '../time/clock.js';
import type { Link, Reading } from '../transport/link.js';
import { F, LOOP_STATES, PHASES, ROW_JOINTS, TICK_WIDTH, type LoopState, type TrajPhase } from '../telemetry/tick.js';
import { alarmBits } from './alarm-edges.js';
import type { ControlOutput } from './controller.js';
import type { VelocityEstimator } from './estimator.js';
import type { PlanFollower } from './plan-follower.js';
import type { SampleClock } from './sample-clock.js';
import type { Twin } from './twin.js';

/** Where a row's numbers come from: the loop's parts, read as they stand when the row is written. */
export interface RowSources {
  link: Pick<Link, 'counters'>;
  /** The host's clock: latency and execution time. */
  clock: Clock;
  time: SampleClock;
  plan: PlanFollower;
  estimator: VelocityEstimator;
  twin: Twin;
  /** Receives every row (the buffer is reused: copy it). */
  sink: (row: Float64Array) => void;
  /** The law's own columns of the row (impedance mode's fEst, stiffness), written last. */
  record?: (row: Float64Array) => void;
}

/** What the loop says of the sample beyond its parts. */
export interface RowTick {
  /** The sample, or undefined for an instant without one. */
  r: Reading | undefined;
  /** The newest reading (the measured angles when there is one). */
  reading: Reading | undefined;
  state: LoopState;
  /** Host time when the sample's handling began [s]. */
  wallStart: number;
  /** The command in force after this row, or undefined when it is what the row before says (a sample not answered). */
  out: ControlOutput | undefined;
  /** An answer was written to the board for `r` (its latency is recorded). */
  answered: boolean;
  trajT: number;
  phase: TrajPhase;
  /** The duty the board had applied at `r` (zero without one). */
  dutyIn: readonly number[];
}

export class RowWriter {
  readonly row = new Float64Array(TICK_WIDTH);
  private index = 0;

  constructor(
    private readonly s: RowSources,
    private readonly joints: number,
  ) {}

  /** Writes the row of `t` and hands it to the sink. */
  write(t: RowTick): void {
    const { r, out } = t;
    const row = this.row;
    const s = this.s;
    const lc = s.link.counters;
    row[F.t] = s.time.t;
    row[F.i] = this.index++;
    row[F.sample] = r ? r.index : -1;
    row[F.state] = LOOP_STATES.indexOf(t.state);
    row[F.trajT] = t.trajT;
    row[F.phase] = PHASES.indexOf(t.phase);
    // The plan at the sample's time, so that qDes - q is the tracking error at one instant.
    this.put(F.qDes0, s.plan.atSample.q);
    this.put(F.qdDes0, s.plan.atSample.qd);
    this.put(F.qddDes0, s.plan.atSample.qdd);
    this.put(F.q0, t.reading ? t.reading.q : s.estimator.q);
    if (t.reading) linkSide(row, t.reading.qLink);
    this.put(F.qd0, s.estimator.qd);
    this.put(F.twinQ0, s.twin.q);
    this.put(F.twinQd0, s.twin.qd);
    this.put(F.res0, s.twin.residual);
    this.put(F.tauExt0, s.twin.tauExt);
    // Without an answer (a sample behind a newer one) the command in force stays what the row before says.
    if (out) {
      this.put(F.tauFf0, out.tauFf);
      this.put(F.tauPid0, out.tauPid);
      this.put(F.tauCmd0, out.tauCmd);
      this.put(F.duty0, out.duty);
    }
    const end = s.clock.now();
    // Latency: from the board's sample instant (on the host's clock) to the answer written.
    row[F.errUs] = r && t.answered ? (end - r.sampleTime) * 1e6 : 0; // 0: no answer written
    // The host's deadline: the answer written within one sample period of the sample's arrival (before
    // the next sample can come). Past it the host was late, whatever the link did before the arrival.
    if (r && t.answered) s.time.answerWritten(end - r.hostTime);
    row[F.execUs] = (end - t.wallStart) * 1e6;
    row[F.overruns] = s.time.lateAnswers + s.time.lateSuperseded;
    row[F.burst] = s.time.burst;
    row[F.missed] = s.time.lostSamples;
    row[F.sent] = lc.sent;
    row[F.received] = lc.received;
    row[F.lost] = lc.lost;
    row[F.corrupt] = lc.corrupt;
    row[F.alarm] = alarmBits(s.twin.alarm, this.joints);
    row[F.flags] = r?.flags ?? 0;
    row[F.boardT] = r?.boardTime ?? 0;
    row[F.fresh] = r ? 1 : 0;
    if (out) row[F.sat] = out.sat;
    this.put(F.dutyIn0, t.dutyIn);
    s.record?.(row);
    s.sink(row);
  }

  /** A joint pair from field `f0` on (the row has two joints' columns; a one-joint arm's second is 0). */
  private put(f0: number, arr: readonly number[]): void {
    this.row[f0] = arr[0]!;
    this.row[f0 + 1] = this.joints === 2 ? arr[1]! : 0;
  }
}

/** A reading's link-side angles (Reading.qLink) into the row's meas.qLink and meas.linkKnown. */
function linkSide(row: Float64Array, qLink: readonly (number | null)[] | undefined): void {
  let known = 0;
  for (let j = 0; j < ROW_JOINTS; j++) {
    const v = qLink?.[j];
    row[F.qLink0 + j] = v ?? 0;
    if (v !== null && v !== undefined) known |= 1 << j;
  }
  row[F.linkKnown] = known;
}
