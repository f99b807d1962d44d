/**
 * The loop's modes and the commands that change them; LoopCore (loop.ts) adds the work of a sample
 * (read -> update -> write) on top.
 *
 * Modes: idle (outputs zero, samples flowing) -> track (approach from where the arm is, the
 * trajectory, the way back) -> hold (at the end) -> release (torque limits ramp to zero: the soft
 * stop) -> stopped. estop and fault zero the motors at once. Commands act at once (an e-stop zeroes
 * the motors before the next sample); which command each mode takes is commands.ts's table. The
 * first stop reason wins.
 */
import type { LoopPart } from '../config/parts.js';
import { createActuatedArmModel, type ActuatedArmModel } from '../model/actuated.js';
import type { TrajPhase, LoopState } from '../telemetry/tick.js';
import type { Clock } from '../time/clock.js';
import type { Link, LinkEvent, Reading } from '../transport/link.js';
import { isFinished, refusal, type CommandResult, type LoopCommand } from './commands.js';
import { Controller, type FeedforwardMode } from './controller.js';
import type { LoopEvent } from './events.js';
import { userLaw, type ControlLaw, type LoopLaw } from './law.js';
import { checkFromPose } from './feasibility.js';
import { PlanFollower, type ActiveTrajectory } from './plan-follower.js';
import { SampleClock } from './sample-clock.js';
import { SoftRamp } from './soft-ramp.js';
import type { Fault, StopReason } from './stop.js';

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
export type Mode =
  { kind: 'idle' } | { kind: 'track'; a: ActiveTrajectory } | { kind: 'paused'; a: ActiveTrajectory } | { kind: 'hold' } | { kind: 'release' } | { kind: 'disabled' } | { kind: 'stopped' | 'estop' | 'fault'; reason: StopReason };

export abstract class LoopModes {
  protected mode: Mode = { kind: 'idle' };
  protected reason: StopReason | undefined;
  readonly joints: number;
  readonly controller: Controller;
  /** The newest reading. */
  reading: Reading | undefined;
  protected readonly o: LoopOptions;
  /** The board's sampling period [s]. */
  protected readonly period: number;
  /** The nominal actuated arm (constant), one for the controller, the twin, the prediction and the wiring monitor. */
  protected readonly model: ActuatedArmModel;
  /** The control law (law.ts): feedforward + PID, or the one the options give. */
  protected readonly law: LoopLaw;
  /** Loop time (the board's), lost and unanswered samples, the controller's step (sample-clock.ts). */
  protected readonly time: SampleClock;
  /** The plan where the answer applies, half a period on, and at the sample; the pose held (plan-follower.ts). */
  protected readonly plan: PlanFollower;
  /** The torque limits' scale: the soft start and stop (soft-ramp.ts). */
  protected readonly ramp: SoftRamp;
  protected readonly zeroDuty: number[];
  private finishListeners: (() => void)[] = [];

  constructor(o: LoopOptions) {
    this.o = o;
    const n = o.rig.joints;
    this.joints = n;
    this.period = 1 / o.rateHz;
    this.time = new SampleClock(this.period);
    this.model = createActuatedArmModel(o.rig);
    this.controller = new Controller(o.rig, o.feedforward, this.model);
    this.law = !o.law ? this.controller.law : 'torques' in o.law ? o.law : userLaw(o.law, n);
    this.plan = new PlanFollower(o.rig, this.period);
    this.ramp = new SoftRamp(o.rig.control);
    this.zeroDuty = new Array<number>(n).fill(0);
    // Link events arrive between samples; they act at once (a closed port, a reset board).
    o.link.onEvent((e) => this.onLinkEvent(e));
  }

  /** The row of an instant without a sample: a halt between samples, so that the recording shows the zero. */
  protected abstract recordHalt(): void;

  /** Samples not answered because a newer one had arrived, and samples lost (index gaps), so far. */
  get superseded(): number {
    return this.time.superseded;
  }

  /** Of the superseded: those that came in one burst of the link with a newer one (not a late host; sample-clock.ts). */
  get burstSamples(): number {
    return this.time.burst;
  }

  /** Answers the host wrote past their deadline (more than a period after their sample arrived). */
  get lateAnswers(): number {
    return this.time.lateAnswers;
  }

  /** Of the superseded: those the host read late (beyond the link's usual burst). */
  get lateSuperseded(): number {
    return this.time.lateSuperseded;
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

  protected emit(e: LoopEvent): void {
    this.o.onEvent?.(e);
  }

  /** Loop time now [s] (between samples too: a command, a link event, the lost-link timer). */
  private eventTime(): number {
    return this.time.now(this.o.clock.now());
  }

  protected setMode(m: Mode, why: { stop?: StopReason; held?: 'done' | 'next' } = {}): void {
    const changed = m.kind !== this.mode.kind;
    this.mode = m;
    if (!changed) return;
    this.emit({ kind: 'state', state: m.kind, ...why, t: this.eventTime() });
    if (this.finished) for (const f of this.finishListeners.splice(0)) f();
  }

  /** Zero the motors now and end in `kind` with `reason` (the first reason wins). */
  protected halt(kind: 'estop' | 'fault' | 'stopped', reason: StopReason): void {
    if (this.finished) return;
    this.reason ??= reason;
    this.o.link.writeDuty(this.zeroDuty);
    this.setMode({ kind, reason: this.reason }, { stop: this.reason });
    // Between samples (a link event, a command, the lost-link timer): the row of the halt now, so the
    // recording shows the zero even if no sample comes again.
    if (!this.time.inSample) this.recordHalt();
  }

  protected fault(f: Fault): void {
    this.halt('fault', { kind: 'fault', fault: f });
  }

  private onLinkEvent(e: LinkEvent): void {
    this.emit({ kind: 'link', event: e, t: this.eventTime() });
    if (e.kind === 'closed') this.fault(e.cable ? { kind: 'cable', ...e.cable } : { kind: 'link-closed' });
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
        const q0 = this.reading?.q ?? this.plan.hold;
        const a = this.plan.start(c.path, c.park ?? false, q0);
        // preflight checked the approach from where it assumed the arm was; this is where it is.
        checkFromPose(this.o.rig, a, c.path.name, q0, c.park ?? false, this.model);
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
        this.plan.holdAt(m.kind === 'idle' ? (this.reading?.q ?? this.plan.hold) : this.plan.desired.q);
        this.setMode({ kind: 'hold' });
        return;
      case 'stop': {
        if (m.kind === 'idle' || m.kind === 'disabled') {
          this.halt('stopped', c.reason);
          return;
        }
        this.reason ??= c.reason;
        this.plan.holdAtPlan();
        this.ramp.begin(this.time.t);
        this.setMode({ kind: 'release' }, { stop: c.reason });
        return;
      }
      case 'estop':
        this.halt('estop', c.reason ?? { kind: 'estop' });
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
        this.setMode({ kind: 'hold' }, { held: 'next' });
        return;
    }
  }
}
