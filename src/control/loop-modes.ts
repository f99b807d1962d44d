/**
 * The loop's modes and the commands that change them (LoopModes), and the parts the loop is built of
 * (LoopParts). LoopCore (loop.ts) does the work of a sample (read -> update -> write) and holds a
 * LoopModes beside its other collaborators: neither is the other's base class.
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
import type { Link, LinkEvent } from '../transport/link.js';
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
  | { kind: 'idle' }
  | { kind: 'track'; a: ActiveTrajectory }
  | { kind: 'paused'; a: ActiveTrajectory }
  | { kind: 'hold' }
  | { kind: 'release' }
  | { kind: 'disabled' }
  | { kind: 'stopped' | 'estop' | 'fault'; reason: StopReason };

/**
 * What the loop is built of, shared by its collaborators: LoopCore (loop.ts: the work of a sample)
 * and LoopModes (here: the mode and the commands). Built once per loop by `loopParts`.
 */
export interface LoopParts {
  readonly joints: number;
  /** The board's sampling period [s]. */
  readonly period: number;
  /** The nominal actuated arm (constant), one for the controller, the twin, the prediction and the wiring monitor. */
  readonly model: ActuatedArmModel;
  readonly controller: Controller;
  /** The control law (law.ts): feedforward + PID, or the one the options give. */
  readonly law: LoopLaw;
  /** Loop time (the board's), lost and unanswered samples, the controller's step (sample-clock.ts). */
  readonly time: SampleClock;
  /** The plan where the answer applies, half a period on, and at the sample; the pose held (plan-follower.ts). */
  readonly plan: PlanFollower;
  /** The torque limits' scale: the soft start and stop (soft-ramp.ts). */
  readonly ramp: SoftRamp;
  readonly zeroDuty: readonly number[];
}

/** The loop's parts for the options `o`. */
export function loopParts(o: LoopOptions): LoopParts {
  const n = o.rig.joints;
  const period = 1 / o.rateHz;
  const model = createActuatedArmModel(o.rig);
  const controller = new Controller(o.rig, o.feedforward, model);
  return {
    joints: n,
    period,
    model,
    controller,
    law: !o.law ? controller.law : 'torques' in o.law ? o.law : userLaw(o.law, n),
    time: new SampleClock(period),
    plan: new PlanFollower(o.rig, period),
    ramp: new SoftRamp(o.rig.control),
    zeroDuty: new Array<number>(n).fill(0),
  };
}

/** What the modes ask of the loop that owns them: its newest reading, its row of a halt, forgetting the reading (a re-zero). */
export interface ModeHost {
  /** The newest reading's angles, if there is one. */
  pose(): readonly number[] | undefined;
  /** The row of an instant without a sample: a halt between samples, so that the recording shows the zero. */
  recordHalt(): void;
  /** The board was re-zeroed: the next sample starts the loop's state afresh. */
  rezero(): void;
}

/** The loop's mode and the commands that change it: a collaborator of LoopCore (loop.ts), sharing its parts. */
export class LoopModes {
  private current: Mode = { kind: 'idle' };
  private reason: StopReason | undefined;
  private finishListeners: (() => void)[] = [];

  constructor(
    private readonly o: LoopOptions,
    private readonly p: LoopParts,
    private readonly host: ModeHost,
  ) {
    // Link events arrive between samples; they act at once (a closed port, a reset board).
    o.link.onEvent((e) => this.onLinkEvent(e));
  }

  /** The mode now (a track's trajectory travels with it). */
  get mode(): Mode {
    return this.current;
  }

  /** The mode's name (the row's state code). */
  get state(): LoopState {
    return this.current.kind;
  }

  /** Why the loop stopped, as a value. */
  get stop(): StopReason | undefined {
    return this.reason;
  }

  /** True once the loop has nothing more to do (stopped, e-stopped or faulted). */
  get finished(): boolean {
    return isFinished(this.current.kind);
  }

  /** Calls `fn` once when the loop finishes (at once if it has). */
  onFinished(fn: () => void): void {
    if (this.finished) fn();
    else this.finishListeners.push(fn);
  }

  /** The current trajectory's name and progress, for the dashboard. */
  get progress(): { name: string; t: number; duration: number; phase: TrajPhase } | undefined {
    const m = this.current;
    if (m.kind !== 'track' && m.kind !== 'paused') return undefined;
    const a = m.a;
    return { name: a.name, t: Math.min(a.t, a.traj.duration), duration: a.traj.duration, phase: this.p.plan.phaseAt(a, a.t) };
  }

  private emit(e: LoopEvent): void {
    this.o.onEvent?.(e);
  }

  /** Loop time now [s] (between samples too: a command, a link event, the lost-link timer). */
  private eventTime(): number {
    return this.p.time.now(this.o.clock.now());
  }

  setMode(m: Mode, why: { stop?: StopReason; held?: 'done' | 'next' } = {}): void {
    const changed = m.kind !== this.current.kind;
    this.current = m;
    if (!changed) return;
    this.emit({ kind: 'state', state: m.kind, ...why, t: this.eventTime() });
    if (this.finished) for (const f of this.finishListeners.splice(0)) f();
  }

  /** Zero the motors now and end in `kind` with `reason` (the first reason wins). */
  halt(kind: 'estop' | 'fault' | 'stopped', reason: StopReason): void {
    if (this.finished) return;
    this.reason ??= reason;
    this.o.link.writeDuty(this.p.zeroDuty);
    this.setMode({ kind, reason: this.reason }, { stop: this.reason });
    // Between samples (a link event, a command, the lost-link timer): the row of the halt now, so the
    // recording shows the zero even if no sample comes again.
    if (!this.p.time.inSample) this.host.recordHalt();
  }

  fault(f: Fault): void {
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
    this.fault({ kind: 'link-lost', ms, samples: Math.round(ms / 1000 / this.p.period) });
  }

  // ------------------------------------------------------------------ commands

  /**
   * Commands from the user or the runner, applied at once (an e-stop zeroes the motors before the
   * next sample). `start` builds the trajectory and throws a TrajectoryError if it cannot. A command
   * the current mode does not take (ACCEPTED_COMMANDS, commands.ts) is refused: nothing happens, and
   * the result says why.
   */
  command(c: LoopCommand): CommandResult {
    const refused = refusal(this.current.kind, c.kind);
    if (refused) return { ok: false, refusal: refused };
    this.act(c);
    return { ok: true };
  }

  /** A command the mode takes. */
  private act(c: LoopCommand): void {
    const m = this.current;
    const { plan, controller, law, ramp, time } = this.p;
    switch (c.kind) {
      case 'start': {
        const q0 = this.host.pose() ?? plan.hold;
        const a = plan.start(c.path, c.park ?? false, q0);
        // preflight checked the approach from where it assumed the arm was; this is where it is.
        checkFromPose(this.o.rig, a, c.path.name, q0, c.park ?? false, this.p.model);
        this.setMode({ kind: 'track', a });
        controller.resetOutput();
        law.reset('start');
        ramp.begin(time.t);
        this.emit({ kind: 'trajectory', name: c.path.name, phase: 'approach', plan: a.phases.approach, t: time.t });
        return;
      }
      case 'pause':
        if (m.kind === 'track') {
          plan.holdAtPlan();
          this.setMode({ kind: 'paused', a: m.a });
        }
        return;
      case 'resume':
        if (m.kind === 'paused') this.setMode({ kind: 'track', a: m.a });
        return;
      case 'hold':
        plan.holdAt(m.kind === 'idle' ? (this.host.pose() ?? plan.hold) : plan.desired.q);
        this.setMode({ kind: 'hold' });
        return;
      case 'stop': {
        if (m.kind === 'idle' || m.kind === 'disabled') {
          this.halt('stopped', c.reason);
          return;
        }
        this.reason ??= c.reason;
        plan.holdAtPlan();
        ramp.begin(time.t);
        this.setMode({ kind: 'release' }, { stop: c.reason });
        return;
      }
      case 'estop':
        this.halt('estop', c.reason ?? { kind: 'estop' });
        return;
      case 'disable':
        this.o.link.writeDuty(this.p.zeroDuty);
        this.setMode({ kind: 'disabled' });
        return;
      case 'enable':
        plan.holdAt(this.host.pose() ?? plan.hold);
        controller.resetOutput();
        law.reset('enable');
        ramp.begin(time.t, 0);
        this.setMode({ kind: 'hold' });
        return;
      case 'zero':
        return;
      case 'rezero':
        this.host.rezero();
        time.rezero();
        return;
      case 'next':
        plan.holdAtPlan();
        this.setMode({ kind: 'hold' }, { held: 'next' });
        return;
    }
  }
}
