/**
 * This file is over 650 lines because the commands, the three steps of a sample and its record share the loop's
 * state and read best side by side; the guards (safety.ts), stop reasons (stop.ts), delay
 * compensation (predict.ts) and wiring monitor (wiring-monitor.ts) are files of their own.
 *
 * The control loop's work for one sample, in the shape of ros2_control's read -> update -> write.
 * The board's timer owns the clock: each sample the link hands over (`onSample`) runs the three
 * steps synchronously, and the answer is written before the function returns. Nothing here paces,
 * sleeps or reads the clock to decide when to act; the runner (runner.ts) wires samples, commands and
 * the lost-link timer to it. It never throws.
 *
 * Modes: idle (outputs zero, samples flowing) -> track (approach from where the arm is, the
 * trajectory, the way back) -> hold (at the end) -> release (torque limits ramp to zero: the soft
 * stop) -> stopped. estop and fault zero the motors at once.
 *
 * Timing: loop time is the board's, over a stall of the host too (sample-clock.ts). The answer to a
 * sample applies at `Reading.applyAt`; the controller works on the state predicted there (predict.ts).
 */
import type { LoopPart } from '../config/parts.js';
import type { Clock } from '../time/clock.js';
import type { Link, LinkEvent, Reading } from '../transport/link.js';
import { Controller, type ControlOutput, type FeedforwardMode } from './controller.js';
import { userLaw, type ControlLaw, type LawSample, type LoopLaw, type Saturation } from './law.js';
import type { TrajectorySample } from '../model/trajectory.js';
import { VelocityEstimator } from './estimator.js';
import { InFlight, Predictor } from './predict.js';
import { MAX_DELAY_SAMPLES } from '../transport/line-link.js';
import { describeStop, stopFromText, type Fault, type StopReason } from './stop.js';
import { isFinished, refusal, type CommandResult, type LoopCommand } from './commands.js';
import type { LoopEvent } from './events.js';
import { PlanFollower, type ActiveTrajectory } from './plan-follower.js';
import type { LoopState, TrajPhase } from '../telemetry/tick.js';
import { RowWriter } from './row-writer.js';
import { Twin } from './twin.js';
import { SampleClock } from './sample-clock.js';
import { SoftRamp } from './soft-ramp.js';
import { AlarmEdges } from './alarm-edges.js';
import { LoopGuards } from './guards.js';
import { createActuatedArmModel } from '../model/actuated.js';

export { LIMIT_MARGIN, SPEED_FACTOR } from './safety.js';

export type { LoopCommand } from './commands.js';
export type { LoopEvent } from './events.js';

export type { ControlLaw, LawSample, LoopLaw } from './law.js';

export interface LoopOptions {
  /** What the loop reads of the rig file (a whole `Rig` is one). */
  rig: LoopPart;
  link: Link;
  clock: Clock;
  /** The board's sampling rate [Hz]. */
  rateHz: number;
  feedforward: FeedforwardMode;
  /** Receives every sample's row (the buffer is reused: copy it). */
  sink: (row: Float64Array) => void;
  onEvent?: (e: LoopEvent) => void;
  /** The board cuts the motors by itself when commands stop. @default true */
  boardWatchdog?: boolean;
  /** Compensate the delay from a sample to its answer's application with the model. @default true */
  predict?: boolean;
  /** A law in place of feedforward + PID (law.ts): a user's controller, or another built-in `LoopLaw`. */
  law?: ControlLaw | LoopLaw;
}

/** The loop's mode, a tagged union: what each mode needs travels with it. The commands each mode's kind accepts: commands.ts. */
type Mode =
  | { kind: 'idle' }
  | { kind: 'track'; a: ActiveTrajectory }
  | { kind: 'paused'; a: ActiveTrajectory }
  | { kind: 'hold' }
  | { kind: 'release' }
  | { kind: 'disabled' }
  | { kind: 'stopped' | 'estop' | 'fault'; reason: StopReason };

export class LoopCore {
  private mode: Mode = { kind: 'idle' };
  private reason: StopReason | undefined;
  readonly joints: number;
  readonly controller: Controller;
  readonly twin: Twin;
  readonly estimator: VelocityEstimator;
  /** The newest reading. */
  reading: Reading | undefined;
  private readonly o: LoopOptions;
  private readonly period: number;
  private readonly predictor: Predictor;
  /** The guards on a sample (guards.ts). */
  private readonly guards: LoopGuards;
  /** Loop time (the board's), lost and unanswered samples, the controller's step (sample-clock.ts). */
  private readonly time: SampleClock;
  /** The plan where the answer applies, half a period on, and at the sample; the pose held (plan-follower.ts). */
  private readonly plan: PlanFollower;
  /** The torque limits' scale: the soft start and stop (soft-ramp.ts). */
  private readonly ramp: SoftRamp;
  /** The answers written and where each applies (the twin's duty, the prediction's schedule). */
  private readonly inFlight: InFlight;
  /** Board time where the answer being computed applies [s]. */
  private applyAt = 0;
  private readonly zeroDuty: number[];
  /** The control law (law.ts): feedforward + PID, or the one the options give. */
  private readonly law: LoopLaw;
  /** What the law is given each answered sample (reused). */
  private readonly lawInput: { sample: LawSample; ahead: TrajectorySample; dtS: number; periodS: number; disturbance: readonly number[] | undefined; saturation: Saturation };
  private readonly alarms: AlarmEdges;
  private readonly rows: RowWriter;
  private finishListeners: (() => void)[] = [];

  constructor(o: LoopOptions) {
    this.o = o;
    const n = o.rig.joints;
    this.joints = n;
    this.period = 1 / o.rateHz;
    this.time = new SampleClock(this.period);
    // One actuated-arm model (constant) for the controller, the twin, the prediction and the wiring monitor.
    const model = createActuatedArmModel(o.rig);
    this.controller = new Controller(o.rig, o.feedforward, model);
    this.twin = new Twin(o.rig, model);
    this.estimator = new VelocityEstimator(n, o.rig.control.velocityFilterHz);
    this.predictor = new Predictor(o.rig, model);
    this.law = !o.law ? this.controller.law : 'torques' in o.law ? o.law : userLaw(o.law, n);
    this.guards = new LoopGuards(o.rig, model, this.law.following, o.boardWatchdog ?? true, this.period);
    this.plan = new PlanFollower(o.rig, this.period);
    this.ramp = new SoftRamp(o.rig.control);
    this.rows = new RowWriter({ link: o.link, clock: o.clock, time: this.time, plan: this.plan, estimator: this.estimator, twin: this.twin, sink: o.sink }, n);
    this.inFlight = new InFlight(n);
    this.zeroDuty = new Array(n).fill(0);
    this.alarms = new AlarmEdges(n);
    const sample: LawSample = { t: 0, q: this.predictor.q, qd: this.predictor.qd, qDesired: this.plan.ref.q, qdDesired: this.plan.ref.qd, qddDesired: this.plan.ref.qdd };
    this.lawInput = { sample, ahead: this.plan.desired, dtS: this.period, periodS: this.period, disturbance: undefined, saturation: this.controller.saturation };
    // Link events arrive between samples; they act at once (a closed port, a reset board).
    o.link.onEvent((e) => this.onLinkEvent(e));
  }

  // ------------------------------------------------------------------ state

  /** The newest row (the buffer is reused). */
  get row(): Float64Array {
    return this.rows.row;
  }

  /** Samples not answered because a newer one had arrived, and samples lost (index gaps), so far. */
  get superseded(): number {
    return this.time.superseded;
  }

  get lostSamples(): number {
    return this.time.lostSamples;
  }

  /** Largest gap between answered samples [s] (board time). */
  get maxGap(): number {
    return this.time.maxGap;
  }

  /** The mode's name (the row's state code). */
  get state(): LoopState {
    return this.mode.kind;
  }

  /** Why the loop stopped, as text ('done', 'estop', 'fault:...', a stop command's reason). */
  get stopReason(): string | undefined {
    return this.reason ? describeStop(this.reason) : undefined;
  }

  /** Why the loop stopped, as a value. */
  get stop(): StopReason | undefined {
    return this.reason;
  }

  /** True once the loop has nothing more to do (stopped, e-stopped or faulted). */
  get finished(): boolean {
    return isFinished(this.mode.kind);
  }

  /** Calls `fn` once when the loop finishes (at once if it has). */
  onFinished(fn: () => void): void {
    if (this.finished) fn();
    else this.finishListeners.push(fn);
  }

  /** The current trajectory's name and progress, for the dashboard. */
  get progress(): { name: string; t: number; duration: number; phase: TrajPhase } | undefined {
    const m = this.mode;
    if (m.kind !== 'track' && m.kind !== 'paused') return undefined;
    const a = m.a;
    return { name: a.name, t: Math.min(a.t, a.traj.duration), duration: a.traj.duration, phase: this.plan.phaseAt(a, a.t) };
  }

  private emit(e: LoopEvent): void {
    this.o.onEvent?.(e);
  }

  /** Loop time now [s] (between samples too: a command, a link event, the lost-link timer). */
  private eventTime(): number {
    return this.time.now(this.o.clock.now());
  }

  private setMode(m: Mode, reason?: string): void {
    const changed = m.kind !== this.mode.kind;
    this.mode = m;
    if (!changed) return;
    this.emit({ kind: 'state', state: m.kind, ...(reason ? { reason } : {}), t: this.eventTime() });
    if (this.finished) for (const f of this.finishListeners.splice(0)) f();
  }

  /** Zero the motors now and end in `kind` with `reason` (the first reason wins). */
  private halt(kind: 'estop' | 'fault' | 'stopped', reason: StopReason): void {
    if (this.finished) return;
    this.reason ??= reason;
    this.o.link.writeDuty(this.zeroDuty);
    this.setMode({ kind, reason: this.reason }, describeStop(this.reason));
    // Between samples (a link event, a command, the lost-link timer): the row of the halt now, so the
    // recording shows the zero even if no sample comes again.
    if (!this.time.inSample) this.record(undefined, this.o.clock.now(), this.controller.idle(), -1, 'none');
  }

  private fault(f: Fault): void {
    this.halt('fault', { kind: 'fault', fault: f });
  }

  private onLinkEvent(e: LinkEvent): void {
    this.emit({ kind: 'link', event: e, t: this.eventTime() });
    if (e.kind === 'closed') this.fault({ kind: 'link-closed' });
    else if (e.kind === 'board-reset') this.fault({ kind: 'board-reset' });
    else if (e.kind === 'watchdog') this.fault({ kind: 'watchdog' });
  }

  /** The lost-link timer fired: no sample for `ms`. Records a row without a reading. */
  linkLost(ms: number): void {
    this.fault({ kind: 'link-lost', ms, samples: Math.round(ms / 1000 / this.period) });
  }

  // ------------------------------------------------------------------ commands

  /**
   * Commands from the user or the runner, applied at once (an e-stop zeroes the motors before the
   * next sample). `start` builds the trajectory and throws a TrajectoryError if it cannot. A command
   * the current mode does not take (ACCEPTED_COMMANDS, commands.ts) is refused: nothing happens, and
   * the result says why.
   */
  command(c: LoopCommand): CommandResult {
    const refused = refusal(this.mode.kind, c.kind);
    if (refused) return { ok: false, refusal: refused };
    this.act(c);
    return { ok: true };
  }

  /** A command the mode takes. */
  private act(c: LoopCommand): void {
    const m = this.mode;
    switch (c.kind) {
      case 'start': {
        const a = this.plan.start(c.path, c.park ?? false, this.reading?.q ?? this.plan.hold);
        this.setMode({ kind: 'track', a });
        this.controller.resetOutput();
        this.law.reset('start');
        this.ramp.begin(this.time.t);
        this.emit({ kind: 'trajectory', name: c.path.name, phase: 'approach', plan: a.phases.approach, t: this.time.t });
        return;
      }
      case 'pause':
        if (m.kind === 'track') {
          this.plan.holdAtPlan();
          this.setMode({ kind: 'paused', a: m.a });
        }
        return;
      case 'resume':
        if (m.kind === 'paused') this.setMode({ kind: 'track', a: m.a });
        return;
      case 'hold':
        this.plan.holdAt(m.kind === 'idle' ? this.reading?.q ?? this.plan.hold : this.plan.desired.q);
        this.setMode({ kind: 'hold' });
        return;
      case 'stop': {
        const r = stopFromText('stop', c.reason);
        if (m.kind === 'idle' || m.kind === 'disabled') {
          this.halt('stopped', r);
          return;
        }
        this.reason ??= r;
        this.plan.holdAtPlan();
        this.ramp.begin(this.time.t);
        this.setMode({ kind: 'release' }, c.reason);
        return;
      }
      case 'estop':
        this.halt('estop', stopFromText('estop', c.reason ?? 'estop'));
        return;
      case 'disable':
        this.o.link.writeDuty(this.zeroDuty);
        this.setMode({ kind: 'disabled' });
        return;
      case 'enable':
        this.plan.holdAt(this.reading?.q ?? this.plan.hold);
        this.controller.resetOutput();
        this.law.reset('enable');
        this.ramp.begin(this.time.t, 0);
        this.setMode({ kind: 'hold' });
        return;
      case 'zero':
        return;
      case 'rezero':
        this.reading = undefined;
        this.time.rezero();
        return;
      case 'next':
        this.plan.holdAtPlan();
        this.setMode({ kind: 'hold' }, 'next');
        return;
    }
  }

  /** Duty in force after command `seq` (for the twin and the prediction); zero once disabled or halted (the board need not ack it). */
  private dutyOf(seq: number | null): readonly number[] {
    if (seq === null || this.mode.kind === 'disabled' || this.finished) return this.zeroDuty;
    return this.inFlight.duty(seq, this.zeroDuty);
  }

  // ------------------------------------------------------------------ one sample

  /** A sample from the board: read -> update -> write, then the row. */
  onSample(r: Reading): void {
    const wallStart = this.o.clock.now();
    this.time.begin(wallStart);
    try {
      const answered = this.read(r);
      if (!answered) {
        // Recorded, not answered: the plan at the sample's own time, the command in force unchanged.
        const { trajT, phase } = this.planAtUnanswered(r);
        this.record(r, wallStart, undefined, trajT, phase);
        return;
      }
      const { out, trajT, phase } = this.update(r);
      this.write(out);
      this.record(r, wallStart, out, trajT, phase);
    } finally {
      this.time.end();
    }
  }

  /** Read: the estimator, the twin, the guards on the measurement. False if this sample is not answered. */
  private read(r: Reading): boolean {
    const bdt = this.time.arrive(r);
    const prevAck = this.reading?.ack ?? null;
    const prevQ = this.reading?.q;
    const bad = this.guards.measured(r);
    if (bad) {
      this.fault(bad);
      return false;
    }
    // On every sample, answered or superseded (a USB adapter delivers bursts): the next answered one
    // would see the jumped angle as its predecessor's.
    const jump = this.mode.kind !== 'idle' && this.mode.kind !== 'disabled' && !this.finished ? this.guards.jump(prevQ, r, bdt) : undefined;
    if (jump) this.fault(jump);
    if (!this.reading) {
      this.estimator.reset(r.q);
      this.twin.reset(r.q, this.estimator.qd);
      this.plan.holdAt(r.q);
    } else {
      this.estimator.update(r.q, bdt, this.mode.kind === 'track' ? this.plan.ref.qdd : undefined);
      this.twin.step(this.dutyOf(prevAck), bdt, r.q, this.estimator.qd);
      this.checkTwinAlarm();
      // The arm moving as a miswired arm would under the duties it was given: stop and say which wire.
      const k = this.mode.kind;
      if (k === 'track' || k === 'hold' || k === 'paused' || k === 'release') {
        const w = this.guards.wired(bdt, this.dutyOf(prevAck), r.q, this.estimator.qd);
        if (w) this.fault(w);
      }
    }
    this.reading = r;
    if (r.superseded) {
      this.time.superseded++;
      return false;
    }
    const gap = this.time.answered(r);
    if (this.finished) return true;
    const active = this.mode.kind !== 'idle' && this.mode.kind !== 'disabled';
    const f = this.guards.state(r, gap, this.estimator.qd, this.twin, active);
    if (f) this.fault(f);
    // The plan's clock is the board's, over a stall too; the controller's step is one period after a stall (sample-clock.ts).
    const m = this.mode;
    if (m.kind === 'track') m.a.t += gap;
    this.time.step(r, gap);
    return true;
  }

  /**
   * The plan at a sample that is recorded but not answered (a newer one had come): the trajectory's
   * time is the last answered sample's plus the board time since.
   */
  private planAtUnanswered(r: Reading): { trajT: number; phase: TrajPhase } {
    const m = this.mode;
    const since = this.time.sinceAnswered(r);
    if (m.kind !== 'track' || since === undefined) return { trajT: -1, phase: 'none' };
    return this.plan.atUnanswered(m.a, since);
  }

  /** The twin's alarm: an event when a joint's rises (alarm-edges.ts), and a stop if the rig file says so. */
  private checkTwinAlarm(): void {
    const joints = this.alarms.update(this.twin.alarm, this.time.t);
    if (!joints) return;
    this.emit({ kind: 'alarm', joints, t: this.time.t });
    const m = this.mode.kind;
    if (this.o.rig.twin.onAlarm === 'stop' && m !== 'idle' && m !== 'disabled') this.fault({ kind: 'twin-alarm', joints });
  }

  /** Update: the plan at the instant the answer applies, the predicted state there, the control law. */
  private update(r: Reading): { out: ControlOutput; trajT: number; phase: TrajPhase } {
    const horizon = this.o.predict === false ? 0 : Math.max(0, Math.min(r.applyAt - r.boardTime, MAX_DELAY_SAMPLES * this.period));
    this.applyAt = r.applyAt;
    const { trajT, phase } = this.planAt(horizon);
    const k = this.mode.kind;
    const scale = this.ramp.at(this.time.t, k === 'release' ? 'release' : k === 'track' || k === 'hold' || k === 'paused' ? 'driven' : 'off');
    const moving = k === 'track' || k === 'hold' || k === 'paused' || k === 'release';
    let out = moving ? this.drive(r, horizon, k) : this.controller.idle();
    // A joint far from its plan, or one that stays at its torque limit (jammed, blocked, overloaded): stop.
    const sf = this.guards.output(this.plan.atSample.q, r.q, moving && k !== 'release' && scale >= 1, out.sat, moving, this.time.t);
    if (sf && !this.finished) {
      this.fault(sf);
      out = this.controller.idle();
    }
    if (this.mode.kind === 'release' && scale <= 0) {
      out = this.controller.idle();
      this.halt('stopped', this.reason ?? { kind: 'requested', text: 'stopped' });
    }
    return { out, trajT, phase };
  }

  /** The plan at the instant the answer applies (plan-follower.ts); the end of the trajectory turns track into hold. */
  private planAt(horizon: number): { trajT: number; phase: TrajPhase } {
    let trajT = -1;
    let phase: TrajPhase = 'none';
    const m = this.mode;
    if (m.kind === 'track') {
      const a = m.a;
      const f = this.plan.follow(a, horizon);
      trajT = f.trajT;
      phase = f.phase;
      if (f.ended) {
        this.emit({ kind: 'trajectory', name: a.name, phase: 'none', t: this.time.t });
        this.setMode({ kind: 'hold' }, 'done');
      } else if (f.entered) {
        this.emit({ kind: 'trajectory', name: a.name, phase: f.entered, plan: a.phases[f.entered], t: this.time.t });
      }
    }
    const k = this.mode.kind;
    if (k === 'hold' || k === 'paused' || k === 'release') this.plan.holdStill();
    return { trajT, phase };
  }

  /**
   * The control law on the state predicted where the answer applies, then the limits and the motor
   * model (controller.ts): the one place where the loop asks a law for torques (law.ts). A failure is a
   * fault and zero output.
   */
  private drive(r: Reading, horizon: number, k: Mode['kind']): ControlOutput {
    const c = this.o.rig.control;
    const changes = this.inFlight.changesAfter(r.ack, r.boardTime, horizon);
    if (!this.predictor.predict(this.estimator.q, this.estimator.qd, this.dutyOf(r.ack), horizon, c.disturbanceObserver ? this.twin.tauExt : undefined, changes)) {
      this.fault({ kind: 'non-finite', what: 'predicted state' });
      return this.controller.idle();
    }
    const input = this.lawInput;
    input.sample.t = r.applyAt;
    input.dtS = this.time.dt;
    input.disturbance = c.disturbanceObserver && k === 'track' ? this.twin.tauExt : undefined;
    const out = this.controller.out;
    const lr = this.law.torques(input, out.tauFf, out.tauPid);
    if (!lr.ok) {
      this.fault({ kind: 'controller', message: lr.reason });
      return this.controller.idle();
    }
    const res = this.controller.apply(this.predictor.qd, this.ramp.scale);
    if (!res.ok) {
      this.fault({ kind: 'non-finite', what: 'command (a NaN in the controller)' });
      return this.controller.idle();
    }
    return res.out;
  }

  /** Write: the answer to the board (nothing once finished or disabled: the halt wrote the zero). */
  private write(out: ControlOutput): void {
    if (this.finished || this.mode.kind === 'disabled') return;
    this.inFlight.sent(this.o.link.writeDuty(out.duty), out.duty, this.applyAt);
  }

  /** The row of this sample (or of a lost-link instant, `r` undefined): row-writer.ts. */
  private record(r: Reading | undefined, wallStart: number, answer: ControlOutput | undefined, trajT: number, phase: TrajPhase): void {
    // Once finished the command in force is the zero (a stop's ramp ended at zero by itself).
    const out = this.finished && this.mode.kind !== 'stopped' ? this.controller.idle() : answer;
    const dutyIn = r ? this.dutyOf(r.ack) : this.zeroDuty;
    this.rows.write({ r, reading: this.reading, state: this.mode.kind, wallStart, out, answered: answer !== undefined, trajT, phase, dutyIn });
  }
}

