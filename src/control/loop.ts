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
 * Timing: the trajectory's clock is the board's, also over a stall of the host: the board went on
 * driving the arm with the last answer meanwhile, so the arm went on along the plan (holding the plan
 * instead left it behind the arm by the stall's length: a 60 ms stall mid-reach gave 4.3 deg of error
 * on joint 2 held, 0.84 deg on the board's clock, virtual time). After a gap of more than two periods
 * without an answered sample (beyond the bursts the link normally delivers: a USB adapter's frames
 * hold a few samples at 1 kHz) the host stalled: the first command after the gap is computed from the
 * fresh sample and the controller's time step is one period (the integrator does not take in the
 * gap). A gap longer than the watchdog time is a fault (the board has cut the motors). The answer to a sample applies at `Reading.applyAt`; the controller works
 * on the state predicted there (predict.ts).
 */
import type { LoopPart } from '../config/parts.js';
import type { PathSpec } from '../model/builtins.js';
import { buildPath, type Trajectory, type TrajectorySample } from '../model/trajectory.js';
import type { Clock } from '../time/clock.js';
import type { Link, LinkEvent, Reading } from '../transport/link.js';
import { Controller, type FeedforwardMode } from './controller.js';
import { VelocityEstimator } from './estimator.js';
import { InFlight, Predictor } from './predict.js';
import { MAX_DELAY_SAMPLES } from '../transport/line-link.js';
import { checkFinite, checkJump, checkLimits, checkSaturation, checkStall } from './safety.js';
import { describeStop, stopFromText, type Fault, type StopReason } from './stop.js';
import { isFinished, refusal, type CommandResult, type LoopCommand } from './commands.js';
import { planPhases, type LoopEvent, type PhasePlan, type PlannedPhase } from './events.js';
import { F, LOOP_STATES, PHASES, TICK_WIDTH, type LoopState, type TrajPhase } from '../telemetry/tick.js';
import { Twin } from './twin.js';
import { WiringMonitor } from './wiring-monitor.js';
import { FollowingGuard, followingFault } from './following.js';
import { createActuatedArmModel } from '../model/actuated.js';

export { LIMIT_MARGIN, SPEED_FACTOR } from './safety.js';

/** The wiring monitor watches this much driven motion from the start [s]. */
const WIRING_WATCH_S = 1;

export type { LoopCommand } from './commands.js';
export type { LoopEvent } from './events.js';

/** A controller other than ours (twolink run --controller): joint torques for a sample. */
export interface ControlLaw {
  /** Writes the joint torques [N m] into `out`; a failure is a value, never an exception. */
  step(sample: LawSample, periodS: number, out: number[]): { ok: true } | { ok: false; reason: string };
  reset(): void;
  /** False while the law does not mean to follow the plan (float mode): the following-error guard then stands aside. */
  readonly followsPlan?: boolean;
}

/**
 * What a ControlLaw sees: the predicted state at the instant its torque applies, and the plan there.
 * A user's controller gets the same with the endpoints added (`ControllerSample`, user-controller.ts).
 * The loop reuses this object and its arrays from tick to tick.
 */
export interface LawSample {
  /** The time at which the returned torque applies on the board [s, board time]. */
  t: number;
  /**
   * Joint angles [rad] at `t` (joint 1 from the horizontal, joint 2 relative to link 1): the loop's
   * estimate from the newest measurement, carried forward to when the torque applies.
   */
  readonly q: readonly number[];
  /** Joint velocities [rad/s] at `t`, estimated. */
  readonly qd: readonly number[];
  /** The plan's joint angles at `t` [rad]. */
  readonly qDesired: readonly number[];
  /** The plan's joint velocities [rad/s]. */
  readonly qdDesired: readonly number[];
  /** The plan's joint accelerations [rad/s^2]. */
  readonly qddDesired: readonly number[];
}

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
  /** A user's control law in place of feedforward + PID. */
  law?: ControlLaw;
}

interface ActiveTrajectory {
  name: string;
  traj: Trajectory;
  /** Trajectory times where the phases end: approach, track. */
  approachEnd: number;
  trackEnd: number;
  /** What each phase's event tells the views (planned once, at the start). */
  phases: Record<PlannedPhase, PhasePlan>;
  /** Time on the trajectory at the last answered sample [s]. */
  t: number;
  /** The phase its last event told (answered samples come in bursts behind a slow adapter: a phase can start between two). */
  told: PlannedPhase;
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
  readonly row = new Float64Array(TICK_WIDTH);
  readonly joints: number;
  readonly controller: Controller;
  readonly twin: Twin;
  readonly estimator: VelocityEstimator;
  /** The newest reading. */
  reading: Reading | undefined;
  /** Samples not answered because a newer one had arrived, and samples lost (index gaps), so far. */
  superseded = 0;
  lostSamples = 0;
  /** Largest gap between answered samples [s] (board time). */
  maxGap = 0;
  private readonly o: LoopOptions;
  private readonly period: number;
  private readonly predictor: Predictor;
  private readonly wiring: WiringMonitor;
  private readonly following: FollowingGuard;
  /** Driven time the wiring monitor has watched [s]. */
  private wiringWatchS = 0;
  private boardT0 = -1;
  /** Loop time of the newest sample [s] (board time since the first). */
  private lt = 0;
  private lastBoardT = -1;
  private lastIndex = -1;
  private lastAnsweredT = -1;
  private holdQ: number[];
  private readonly desired: TrajectorySample;
  private readonly ref: TrajectorySample;
  /** The plan at the sample's own time: what the recorded tracking error compares the measurement with. */
  private readonly atSample: TrajectorySample;
  private scale = 0;
  private rampFrom = 0;
  private rampStart = 0;
  /** The answers written and where each applies (the twin's duty, the prediction's schedule). */
  private readonly inFlight: InFlight;
  /** Board time where the answer being computed applies [s]. */
  private applyAt = 0;
  private readonly zeroDuty: number[];
  private readonly satTime: number[];
  private readonly lawSample: LawSample;
  private readonly lawTau: number[];
  private readonly alarmClearAt: number[];
  private alarmed = 0;
  private inSample = false;
  private rowIndex = 0;
  /** Host time when the newest sample arrived [s] (-1 before the first). */
  private lastSampleHost = -1;
  /** Board time since the last answered sample [s] (one period after a stall): the controller's dt. */
  private dt: number;
  private finishListeners: (() => void)[] = [];

  constructor(o: LoopOptions) {
    this.o = o;
    const n = o.rig.joints;
    this.joints = n;
    this.period = 1 / o.rateHz;
    this.dt = this.period;
    // One actuated-arm model (constant) for the controller, the twin, the prediction and the wiring monitor.
    const model = createActuatedArmModel(o.rig);
    this.controller = new Controller(o.rig, o.feedforward, model);
    this.twin = new Twin(o.rig, model);
    this.estimator = new VelocityEstimator(n, o.rig.control.velocityFilterHz);
    this.predictor = new Predictor(o.rig, model);
    this.wiring = new WiringMonitor(model, { encoders: o.rig.encoders });
    this.following = new FollowingGuard(o.rig.limits, o.law ? 'user' : o.feedforward === 'none' ? 'pid' : 'model', o.rig.link.transport === 'firmata');
    this.holdQ = new Array(n).fill(0);
    const sample = (): TrajectorySample => ({ t: 0, q: new Array(n).fill(0), qd: new Array(n).fill(0), qdd: new Array(n).fill(0), qddd: new Array(n).fill(0) });
    this.desired = sample();
    this.ref = sample();
    this.atSample = sample();
    this.inFlight = new InFlight(n);
    this.zeroDuty = new Array(n).fill(0);
    this.satTime = new Array(n).fill(0);
    this.lawTau = new Array(n).fill(0);
    this.alarmClearAt = new Array(n).fill(-Infinity);
    this.lawSample = { t: 0, q: this.predictor.q, qd: this.predictor.qd, qDesired: this.ref.q, qdDesired: this.ref.qd, qddDesired: this.ref.qdd };
    // Link events arrive between samples; they act at once (a closed port, a reset board).
    o.link.onEvent((e) => this.onLinkEvent(e));
  }

  // ------------------------------------------------------------------ state

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
    return { name: a.name, t: Math.min(a.t, a.traj.duration), duration: a.traj.duration, phase: this.phaseAt(a, a.t) };
  }

  private emit(e: LoopEvent): void {
    this.o.onEvent?.(e);
  }

  /**
   * Loop time now [s]: the newest sample's, plus (between samples: a command, a link event, the
   * lost-link timer) the host time since it arrived, so that an event says when it happened.
   */
  private eventTime(): number {
    return this.inSample || this.lastSampleHost < 0 ? this.lt : this.lt + Math.max(0, this.o.clock.now() - this.lastSampleHost);
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
    if (!this.inSample) this.record(undefined, this.o.clock.now(), this.controller.idle(), -1, 'none');
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
        const a = this.plan(c.path, c.park ?? false);
        this.setMode({ kind: 'track', a });
        this.controller.reset();
        this.o.law?.reset();
        this.ramp(this.scale);
        this.emit({ kind: 'trajectory', name: c.path.name, phase: 'approach', plan: a.phases.approach, t: this.lt });
        return;
      }
      case 'pause':
        if (m.kind === 'track') {
          this.holdQ = this.desired.q.slice();
          this.setMode({ kind: 'paused', a: m.a });
        }
        return;
      case 'resume':
        if (m.kind === 'paused') this.setMode({ kind: 'track', a: m.a });
        return;
      case 'hold':
        this.holdQ = (m.kind === 'idle' ? this.reading?.q ?? this.holdQ : this.desired.q).slice();
        this.setMode({ kind: 'hold' });
        return;
      case 'stop': {
        const r = stopFromText('stop', c.reason);
        if (m.kind === 'idle' || m.kind === 'disabled') {
          this.halt('stopped', r);
          return;
        }
        this.reason ??= r;
        this.holdQ = this.desired.q.slice();
        this.ramp(this.scale);
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
        this.holdQ = (this.reading?.q ?? this.holdQ).slice();
        this.controller.reset();
        this.scale = 0;
        this.ramp(0);
        this.setMode({ kind: 'hold' });
        return;
      case 'zero':
        return;
      case 'rezero':
        this.reading = undefined;
        this.lastBoardT = -1;
        return;
      case 'next':
        this.holdQ = this.desired.q.slice();
        this.setMode({ kind: 'hold' }, 'next');
        return;
    }
  }

  private ramp(from: number): void {
    this.rampStart = this.lt;
    this.rampFrom = from;
  }

  /** The approach from where the arm is, the path, and (with `park`) the way back. */
  private plan(given: PathSpec, park: boolean): ActiveTrajectory {
    const arm = this.o.rig.arm;
    const q0 = this.reading?.q ?? this.holdQ;
    // A path without a start (`--traj hold`) starts where the arm is.
    const spec = !given.start.q && !given.start.xy ? { ...given, start: { ...given.start, q: q0.slice() } } : given;
    const elbow = spec.start.elbow ? { elbow: spec.start.elbow } : {};
    const probe = buildPath(arm, spec.start, [{ kind: 'hold', duration: 0 }]);
    const startQ = spec.start.q ?? probe.sample(0).q;
    const ta = this.moveTime(q0, startQ);
    const steps = [{ kind: 'joint' as const, to: startQ, duration: ta }, ...spec.steps];
    const main = buildPath(arm, { q: startQ, ...elbow }, spec.steps);
    const endQ = main.sample(main.duration).q;
    if (park) steps.push({ kind: 'joint', to: q0.slice(), duration: this.moveTime(endQ, q0) });
    const traj = buildPath(arm, { q: q0.slice(), ...elbow }, steps, spec.description);
    return { name: spec.name, traj, approachEnd: ta, trackEnd: ta + main.duration, phases: planPhases(arm, traj, ta, ta + main.duration), t: 0, told: 'approach' };
  }

  /** Minimum-jerk duration for a joint move that keeps the peak speed at half the joint limits. */
  private moveTime(from: readonly number[], to: readonly number[]): number {
    let t = 0.5;
    for (let i = 0; i < this.joints; i++) {
      const d = Math.abs(to[i]! - from[i]!);
      const vmax = 0.5 * this.o.rig.limits[i]!.maxVel;
      // peak speed of a minimum-jerk move is 1.875 d / T; peak acceleration 5.77 d / T^2 (<= 4 rad/s^2 here)
      t = Math.max(t, (1.875 * d) / vmax, Math.sqrt((5.77 * d) / 4));
    }
    return t;
  }

  private phaseAt(a: ActiveTrajectory, t: number): PlannedPhase {
    return t < a.approachEnd ? 'approach' : t < a.trackEnd ? 'track' : 'park';
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
    this.lastSampleHost = wallStart;
    this.inSample = true;
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
      this.inSample = false;
    }
  }

  /** Read: the estimator, the twin, the guards on the measurement. False if this sample is not answered. */
  private read(r: Reading): boolean {
    const n = this.joints;
    if (this.boardT0 < 0) this.boardT0 = r.boardTime;
    this.lt = r.boardTime - this.boardT0;
    if (this.lastIndex >= 0 && r.index > this.lastIndex + 1) this.lostSamples += r.index - this.lastIndex - 1;
    this.lastIndex = r.index;
    const prevAck = this.reading?.ack ?? null;
    const prevQ = this.reading?.q;
    const bdt = this.lastBoardT < 0 ? this.period : r.boardTime - this.lastBoardT;
    this.lastBoardT = r.boardTime;
    const bad = checkFinite([['measured angle', r.q]], n);
    if (bad) {
      this.fault(bad);
      return false;
    }
    // On every sample, answered or superseded (a USB adapter delivers bursts): the next answered one
    // would see the jumped angle as its predecessor's.
    const jump = this.mode.kind !== 'idle' && this.mode.kind !== 'disabled' && !this.finished ? checkJump(prevQ, r.q, bdt, this.o.rig.limits) : undefined;
    if (jump) this.fault(jump);
    if (!this.reading) {
      this.estimator.reset(r.q);
      this.twin.reset(r.q, this.estimator.qd);
      this.holdQ = r.q.slice();
    } else {
      this.estimator.update(r.q, bdt, this.mode.kind === 'track' ? this.ref.qdd : undefined);
      this.twin.step(this.dutyOf(prevAck), bdt, r.q, this.estimator.qd);
      this.checkTwinAlarm();
      // The arm moving as a miswired arm would under the duties it was given: stop and say which wire.
      // A miswired arm runs away at its first commands: verdicts in the first second of driven motion only
      // (later, a push must not be taken for a wiring mistake); the monitor watches on for following.ts.
      const k = this.mode.kind;
      if (k === 'track' || k === 'hold' || k === 'paused' || k === 'release') {
        const w = this.wiring.update(bdt, this.dutyOf(prevAck), r.q, this.estimator.qd);
        if (w && !this.finished && this.wiringWatchS < WIRING_WATCH_S) this.fault({ kind: 'wiring', joint: w.joint, message: w.message });
        this.wiringWatchS += bdt;
      }
    }
    this.reading = r;
    if (r.superseded) {
      this.superseded++;
      return false;
    }
    const gap = this.lastAnsweredT < 0 ? this.period : r.boardTime - this.lastAnsweredT;
    this.lastAnsweredT = r.boardTime;
    if (gap > this.maxGap) this.maxGap = gap;
    if (this.finished) return true;
    const active = this.mode.kind !== 'idle' && this.mode.kind !== 'disabled';
    const f =
      checkFinite(
        [
          ['velocity estimate', this.estimator.qd],
          ['twin state', this.twin.q],
          ['twin velocity', this.twin.qd],
          ['twin residual torque', this.twin.tauExt],
        ],
        n,
      ) ??
      // The stall first: after a frozen host, a joint past its limit is the consequence, the stall the cause.
      (active ? checkStall(gap, this.o.rig.link.watchdogMs, this.o.boardWatchdog ?? true) : undefined) ??
      (active ? checkLimits(r.q, this.estimator.qd, this.o.rig.limits) : undefined);
    if (f) this.fault(f);
    // The plan's clock is the board's, over a stall too (see the top). A stall is a gap of more than
    // two periods beyond what the link normally brings (a USB adapter delivers samples in bursts of up
    // to its delay): the controller's step is then one period.
    const delay = r.applyAt > r.boardTime ? Math.round((r.applyAt - r.boardTime) / this.period) : 1;
    const stalled = gap > (delay + 2) * this.period;
    const m = this.mode;
    if (m.kind === 'track') m.a.t += gap;
    this.dt = stalled ? this.period : gap;
    return true;
  }

  /**
   * The plan at a sample that is recorded but not answered (a newer one had come): the trajectory's
   * time is the last answered sample's plus the board time since.
   */
  private planAtUnanswered(r: Reading): { trajT: number; phase: TrajPhase } {
    const m = this.mode;
    if (m.kind !== 'track' || this.lastAnsweredT < 0) return { trajT: -1, phase: 'none' };
    const a = m.a;
    const t = Math.min(a.traj.duration, a.t + Math.max(0, r.boardTime - this.lastAnsweredT));
    a.traj.sample(t, this.atSample);
    return { trajT: t, phase: this.phaseAt(a, t) };
  }

  /** Alarm events: one when a joint's alarm rises after it has been quiet for half a second. */
  private checkTwinAlarm(): void {
    const alarm = this.twin.alarm;
    let rising = 0;
    let now = 0;
    for (let i = 0; i < this.joints; i++) {
      if (alarm[i]) {
        now |= 1 << i;
        if (!(this.alarmed & (1 << i)) && this.lt >= this.alarmClearAt[i]! + 0.5) rising |= 1 << i;
      } else if (this.alarmed & (1 << i)) {
        this.alarmClearAt[i] = this.lt;
      }
    }
    // A joint counts as alarmed from its rise until it has been clear for 0.5 s.
    for (let i = 0; i < this.joints; i++) if (!(now & (1 << i)) && this.lt >= this.alarmClearAt[i]! + 0.5) this.alarmed &= ~(1 << i);
    this.alarmed |= now;
    if (!rising) return;
    const joints = [];
    for (let i = 0; i < this.joints; i++) if (now & (1 << i)) joints.push(i);
    this.emit({ kind: 'alarm', joints, t: this.lt });
    const m = this.mode.kind;
    if (this.o.rig.twin.onAlarm === 'stop' && m !== 'idle' && m !== 'disabled') this.fault({ kind: 'twin-alarm', joints });
  }

  /** Update: the plan at the instant the answer applies, the predicted state there, the control law. */
  private update(r: Reading): { out: ReturnType<Controller['idle']>; trajT: number; phase: TrajPhase } {
    const horizon = this.o.predict === false ? 0 : Math.max(0, Math.min(r.applyAt - r.boardTime, MAX_DELAY_SAMPLES * this.period));
    this.applyAt = r.applyAt;
    const { trajT, phase } = this.planAt(horizon);
    const k = this.mode.kind;
    this.scale = this.rampScale(k);
    const moving = k === 'track' || k === 'hold' || k === 'paused' || k === 'release';
    let out = moving ? this.drive(r, horizon, k) : this.controller.idle();
    // A joint far from its plan (following.ts), or one that stays at its torque limit (jammed, blocked, overloaded): stop.
    const fe = this.following.check(this.atSample.q, r.q, moving && k !== 'release' && this.scale >= 1 && this.o.law?.followsPlan !== false);
    const sf = fe ? followingFault(fe, this.lt, this.wiring, this.wiringWatchS < WIRING_WATCH_S) : checkSaturation(this.satTime, out.sat, moving, this.period, this.o.rig.control.maxSaturationS);
    if (sf && !this.finished) {
      this.fault(sf);
      out = this.controller.idle();
    }
    if (this.mode.kind === 'release' && this.scale <= 0) {
      out = this.controller.idle();
      this.halt('stopped', this.reason ?? { kind: 'requested', text: 'stopped' });
    }
    return { out, trajT, phase };
  }

  /**
   * The plan: `desired` (the feedforward, mid-period after the answer applies), `ref` (where the
   * answer applies) and `atSample` (the sample's own instant); the hold pose when not tracking. The
   * end of the trajectory turns track into hold.
   */
  private planAt(horizon: number): { trajT: number; phase: TrajPhase } {
    const d = this.desired;
    const ref = this.ref;
    let trajT = -1;
    let phase: TrajPhase = 'none';
    const m = this.mode;
    if (m.kind === 'track') {
      const a = m.a;
      if (a.t + horizon >= a.traj.duration) {
        a.traj.sample(a.traj.duration, d);
        a.traj.sample(a.traj.duration, ref);
        a.traj.sample(Math.min(a.t, a.traj.duration), this.atSample);
        this.holdQ = d.q.slice();
        trajT = a.traj.duration;
        this.emit({ kind: 'trajectory', name: a.name, phase: 'none', t: this.lt });
        this.setMode({ kind: 'hold' }, 'done');
      } else {
        // The error at the instant the answer applies; the feedforward in the middle of the period it holds.
        a.traj.sample(a.t + horizon, ref);
        a.traj.sample(Math.min(a.traj.duration, a.t + horizon + 0.5 * this.period), d);
        a.traj.sample(a.t, this.atSample);
        const p = this.phaseAt(a, a.t);
        if (p !== a.told) {
          a.told = p;
          this.emit({ kind: 'trajectory', name: a.name, phase: p, plan: a.phases[p], t: this.lt });
        }
        trajT = a.t;
        phase = p;
      }
    }
    const k = this.mode.kind;
    if (k === 'hold' || k === 'paused' || k === 'release') {
      for (const s of [d, ref, this.atSample]) {
        for (let i = 0; i < this.joints; i++) {
          s.q[i] = this.holdQ[i]!;
          s.qd[i] = 0;
          s.qdd[i] = 0;
          s.qddd[i] = 0;
        }
      }
    }
    return { trajT, phase };
  }

  /** The torque limits' scale: ramped up over softStartS when moving, down over softStopS when releasing. */
  private rampScale(k: Mode['kind']): number {
    const c = this.o.rig.control;
    if (k === 'release') {
      const x = c.softStopS > 0 ? (this.lt - this.rampStart) / c.softStopS : 1;
      return Math.max(0, this.rampFrom * (1 - x));
    }
    if (k === 'track' || k === 'hold' || k === 'paused') {
      const x = c.softStartS > 0 ? (this.lt - this.rampStart) / c.softStartS : 1;
      return Math.min(1, this.rampFrom + (1 - this.rampFrom) * x);
    }
    return 0;
  }

  /** The control law on the state predicted where the answer applies; a failure is a fault and zero output. */
  private drive(r: Reading, horizon: number, k: Mode['kind']): ReturnType<Controller['idle']> {
    const c = this.o.rig.control;
    const changes = this.inFlight.changesAfter(r.ack, r.boardTime, horizon);
    if (!this.predictor.predict(this.estimator.q, this.estimator.qd, this.dutyOf(r.ack), horizon, c.disturbanceObserver ? this.twin.tauExt : undefined, changes)) {
      this.fault({ kind: 'non-finite', what: 'predicted state' });
      return this.controller.idle();
    }
    const q = this.predictor.q;
    const qd = this.predictor.qd;
    let res: { out: ReturnType<Controller['idle']>; ok: boolean };
    if (this.o.law) {
      this.lawSample.t = r.applyAt;
      const lr = this.o.law.step(this.lawSample, this.period, this.lawTau);
      if (!lr.ok) {
        this.fault({ kind: 'controller', message: lr.reason });
        return this.controller.idle();
      }
      res = this.controller.drive(this.lawTau, qd, this.scale);
    } else {
      const dob = c.disturbanceObserver && this.controller.feedforward !== 'none' && k === 'track' ? this.twin.tauExt : undefined;
      res = this.controller.update(this.desired, this.ref, q, qd, this.dt, this.scale, dob);
    }
    if (!res.ok) {
      this.fault({ kind: 'non-finite', what: 'command (a NaN in the controller)' });
      return this.controller.idle();
    }
    return res.out;
  }

  /** Write: the answer to the board (nothing once finished or disabled: the halt wrote the zero). */
  private write(out: ReturnType<Controller['idle']>): void {
    if (this.finished || this.mode.kind === 'disabled') return;
    this.inFlight.sent(this.o.link.writeDuty(out.duty), out.duty, this.applyAt);
  }

  /** The row of this sample (or of a lost-link instant, `r` undefined). */
  private record(r: Reading | undefined, wallStart: number, answer: ReturnType<Controller['idle']> | undefined, trajT: number, phase: TrajPhase): void {
    const row = this.row;
    const lc = this.o.link.counters;
    const n = this.joints;
    const two = n === 2;
    let out = answer;
    if (this.finished && this.mode.kind !== 'stopped') out = this.controller.idle();
    const q = this.estimator.q;
    row[F.t] = this.lt;
    row[F.i] = this.rowIndex++;
    row[F.sample] = r ? r.index : -1;
    row[F.state] = LOOP_STATES.indexOf(this.mode.kind);
    row[F.trajT] = trajT;
    row[F.phase] = PHASES.indexOf(phase);
    const put = (f0: number, arr: readonly number[]): void => {
      row[f0] = arr[0]!;
      row[f0 + 1] = two ? arr[1]! : 0;
    };
    // The plan at the sample's time, so that qDes - q is the tracking error at one instant.
    put(F.qDes0, this.atSample.q);
    put(F.qdDes0, this.atSample.qd);
    put(F.qddDes0, this.atSample.qdd);
    put(F.q0, this.reading ? this.reading.q : q);
    put(F.qd0, this.estimator.qd);
    put(F.twinQ0, this.twin.q);
    put(F.twinQd0, this.twin.qd);
    put(F.res0, this.twin.residual);
    put(F.tauExt0, this.twin.tauExt);
    // Without an answer (a sample behind a newer one) the command in force stays what the row before says.
    if (out) {
      put(F.tauFf0, out.tauFf);
      put(F.tauPid0, out.tauPid);
      put(F.tauCmd0, out.tauCmd);
      put(F.duty0, out.duty);
    }
    const end = this.o.clock.now();
    // Latency: from the board's sample instant (on the host's clock) to the answer written.
    row[F.errUs] = r && answer ? (end - r.sampleTime) * 1e6 : 0; // 0: no answer written
    row[F.execUs] = (end - wallStart) * 1e6;
    row[F.overruns] = lc.late + this.superseded;
    row[F.missed] = this.lostSamples;
    row[F.sent] = lc.sent;
    row[F.received] = lc.received;
    row[F.lost] = lc.lost;
    row[F.corrupt] = lc.corrupt;
    let alarm = 0;
    for (let i = 0; i < n; i++) if (this.twin.alarm[i]) alarm |= 1 << i;
    row[F.alarm] = alarm;
    row[F.flags] = r?.flags ?? 0;
    row[F.boardT] = r?.boardTime ?? 0;
    row[F.fresh] = r ? 1 : 0;
    if (out) row[F.sat] = out.sat;
    put(F.dutyIn0, r ? this.dutyOf(r.ack) : this.zeroDuty);
    this.o.sink(row);
  }
}

