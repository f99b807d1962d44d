/**
 * The control loop's work for one sample, in the shape of ros2_control's read -> update -> write.
 * The board's timer owns the clock: each sample the link hands over (`onSample`) runs the three
 * steps synchronously, and the answer is written before the function returns. Nothing here paces,
 * sleeps or reads the clock to decide when to act; the runner (runner.ts) wires samples, commands and
 * the lost-link timer to it. It never throws.
 *
 * - read: loop time (sample-clock.ts), the estimator, the twin and its alarm (alarm-edges.ts), the
 *   guards on the measurement (guards.ts);
 * - update: the plan where the answer applies (plan-follower.ts), the state predicted there
 *   (predict.ts), the control law (law.ts: the one place it is asked), the limits and the motor model
 *   (controller.ts), the guards on the output;
 * - write: the answer to the board; then the sample's row (row-writer.ts).
 * The modes and the commands that change them are loop-modes.ts.
 */
import type { ControlOutput } from './controller.js';
import type { ControlLaw, LawInput, LawSample, LoopLaw } from './law.js';
import { ModelAidedEstimator, VelocityEstimator } from './estimator.js';
import { computeForwardDynamicsUnderDuty, computeMassMatrix, createActuatedArmData } from '../model/actuated.js';
import { Predictor } from './predict.js';
import { MAX_DELAY_SAMPLES, type Reading } from '../transport/link.js';
import type { TrajPhase } from '../telemetry/tick.js';
import { RowWriter } from './row-writer.js';
import { Twin } from './twin.js';
import { AlarmEdges } from './alarm-edges.js';
import { LoopGuards } from './guards.js';
import { LoopModes, loopParts, type LoopOptions, type Mode } from './loop-modes.js';
import type { Controller } from './controller.js';
import type { ActuatedArmModel } from '../model/actuated.js';
import type { SampleClock } from './sample-clock.js';
import type { PlanFollower } from './plan-follower.js';
import type { SoftRamp } from './soft-ramp.js';
import type { CommandResult, LoopCommand } from './commands.js';
import type { LoopEvent } from './events.js';
import type { Fault, StopReason } from './stop.js';
import { DutyReversals, ReversalWatch } from './reversals.js';
import { F, LOOP_STATES, type LoopState } from '../telemetry/tick.js';

const TRACK_STATE = LOOP_STATES.indexOf('track');
/** A duty reversal this soon after the plan's acceleration turned [s] follows the plan: the reversal warning leaves it out. */
const PLAN_TURN_S = 0.1;

export { LIMIT_MARGIN, SPEED_FACTOR } from './safety.js';
export type { LoopCommand } from './commands.js';
export type { LoopEvent } from './events.js';
export type { ControlLaw, LawSample, LoopLaw } from './law.js';
export type { LoopOptions } from './loop-modes.js';

export class LoopCore {
  readonly joints: number;
  readonly controller: Controller;
  /** The newest reading. */
  reading: Reading | undefined;
  /** The mode and the commands that change it (loop-modes.ts). */
  private readonly modes: LoopModes;
  private readonly o: LoopOptions;
  /** The board's sampling period [s]. */
  private readonly period: number;
  /** The nominal actuated arm (constant), one for the controller, the twin, the prediction and the wiring monitor. */
  private readonly model: ActuatedArmModel;
  /** The control law (law.ts): feedforward + PID, or the one the options give. */
  private readonly law: LoopLaw;
  /** Loop time (the board's), lost and unanswered samples, the controller's step (sample-clock.ts). */
  private readonly time: SampleClock;
  /** The plan where the answer applies, half a period on, and at the sample; the pose held (plan-follower.ts). */
  private readonly plan: PlanFollower;
  /** The torque limits' scale: the soft start and stop (soft-ramp.ts). */
  private readonly ramp: SoftRamp;
  private readonly zeroDuty: readonly number[];
  readonly twin: Twin;
  readonly estimator: VelocityEstimator;
  private readonly predictor: Predictor;
  /** The law's own estimate, when it asks for one (law.ts `velocityObserverHz`), and its disturbance as a torque [N m]. */
  private readonly aided: ModelAidedEstimator | undefined;
  private readonly aidedTorque: number[];
  private readonly aidedData: ReturnType<typeof createActuatedArmData>;
  /** The guards on a sample (guards.ts). */
  private readonly guards: LoopGuards;
  /** A ControlLaw given in the options (a user's controller, float, impedance): its optional hooks. */
  private readonly own: ControlLaw | undefined;
  /** What the law is given each answered sample (reused). */
  private readonly lawInput: { -readonly [K in keyof LawInput]: LawInput[K] };
  private readonly alarms: AlarmEdges;
  private readonly rows: RowWriter;
  /** The duty reversals while the joints move, and the warning when they climb (reversals.ts). */
  private readonly reversals: DutyReversals;
  private readonly reversalWatch: ReversalWatch;
  /** Per joint: the sign of the plan's acceleration, and the board time it last changed [s]. */
  private readonly planAccelSign: number[] = [0, 0];
  private readonly planTurnT: number[] = [-Infinity, -Infinity];

  constructor(o: LoopOptions) {
    this.o = o;
    const parts = loopParts(o);
    ({
      joints: this.joints,
      controller: this.controller,
      period: this.period,
      model: this.model,
      law: this.law,
      time: this.time,
      plan: this.plan,
      ramp: this.ramp,
      zeroDuty: this.zeroDuty,
    } = parts);
    this.modes = new LoopModes(o, parts, {
      pose: () => this.reading?.q,
      recordHalt: () => this.recordHalt(),
      rezero: () => (this.reading = undefined),
    });
    const n = this.joints;
    this.twin = new Twin(o.rig, this.model);
    this.estimator = new VelocityEstimator(n, o.rig.control.velocityFilterHz);
    this.predictor = new Predictor(o.rig, this.model);
    this.guards = new LoopGuards(o.rig, this.model, this.law.following, o.boardWatchdog ?? true, this.period);
    const own = o.law && !('torques' in o.law) ? o.law : undefined;
    this.own = own;
    own?.attach?.(this.twin, this.estimator.qd);
    this.aidedData = createActuatedArmData(this.model);
    this.aidedTorque = new Array<number>(n).fill(0);
    const hz = own?.velocityObserverHz;
    const data = this.aidedData;
    this.aided =
      hz === undefined
        ? undefined
        : new ModelAidedEstimator(n, hz, (q, qd, duty, out) => void computeForwardDynamicsUnderDuty(this.model, data, q, qd, duty, out));
    const record = own?.record ? (row: Float64Array): void => own.record!(row) : undefined;
    this.rows = new RowWriter(
      {
        link: o.link,
        clock: o.clock,
        time: this.time,
        plan: this.plan,
        estimator: this.estimator,
        twin: this.twin,
        sink: o.sink,
        ...(record ? { record } : {}),
      },
      n,
    );
    this.alarms = new AlarmEdges(n);
    this.reversals = new DutyReversals(n);
    this.reversalWatch = new ReversalWatch(n);
    const sample: LawSample = {
      t: 0,
      q: this.predictor.q,
      qd: this.predictor.qd,
      qDesired: this.plan.ref.q,
      qdDesired: this.plan.ref.qd,
      qddDesired: this.plan.ref.qdd,
    };
    this.lawInput = {
      sample,
      ahead: this.plan.desired,
      dtS: this.period,
      periodS: this.period,
      disturbance: undefined,
      saturation: this.controller.saturation,
    };
  }

  // ------------------------------------------------------------------ state

  /** The mode's name (the row's state code). */
  get state(): LoopState {
    return this.modes.state;
  }

  /** Why the loop stopped, as a value. */
  get stop(): StopReason | undefined {
    return this.modes.stop;
  }

  /** True once the loop has nothing more to do (stopped, e-stopped or faulted). */
  get finished(): boolean {
    return this.modes.finished;
  }

  /** Calls `fn` once when the loop finishes (at once if it has). */
  onFinished(fn: () => void): void {
    this.modes.onFinished(fn);
  }

  /** The current trajectory's name and progress, for the dashboard. */
  get progress(): LoopModes['progress'] {
    return this.modes.progress;
  }

  /** Commands from the user or the runner, applied at once (loop-modes.ts). */
  command(c: LoopCommand): CommandResult {
    return this.modes.command(c);
  }

  /** The lost-link timer fired: no sample for `ms`. Records a row without a reading. */
  linkLost(ms: number): void {
    this.modes.linkLost(ms);
  }

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

  private get mode(): Mode {
    return this.modes.mode;
  }

  private emit(e: LoopEvent): void {
    this.o.onEvent?.(e);
  }

  private fault(f: Fault): void {
    this.modes.fault(f);
  }

  /** The newest row (the buffer is reused). */
  get row(): Float64Array {
    return this.rows.row;
  }

  /**
   * Duty in force after command `seq` (for the twin and the prediction), as the link reports what the
   * board applied (transport/joints.ts); zero once disabled or halted (the board need not ack it).
   */
  private dutyOf(seq: number | null): readonly number[] {
    if (seq === null || this.mode.kind === 'disabled' || this.finished) return this.zeroDuty;
    return this.o.link.appliedDuty(seq);
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
      this.watchReversals();
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
    const jump =
      this.mode.kind !== 'idle' && this.mode.kind !== 'disabled' && !this.finished
        ? this.guards.jump(prevQ, r, bdt, this.estimator.qd, this.time.t)
        : undefined;
    if (jump) this.fault(jump);
    if (!this.reading) {
      this.estimator.reset(r.q);
      this.aided?.reset(r.q, this.estimator.qd);
      this.twin.reset(r.q, this.estimator.qd);
      this.plan.holdAt(r.q);
    } else {
      this.estimator.update(r.q, bdt, this.mode.kind === 'track' ? this.plan.ref.qdd : undefined);
      // Fed with the tracker's angle, not the count: the tracker's angle follows a ramp without lag (its
      // velocity is what lags), and the encoder's flicker between two counts is filtered before the
      // observer differentiates it (the damper's torque noise at rest: a third less, on the mock).
      this.aided?.update(this.estimator.q, bdt, this.dutyOf(prevAck));
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
      this.time.supersede();
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

  /** The answered sample's duty reversals (reversals.ts), from its row as the summary counts them; a warning when they climb. */
  private watchReversals(): void {
    const row = this.rows.row;
    const tracking = row[F.state] === TRACK_STATE;
    const t = row[F.boardT]!;
    let reversed = this.reversals.add(t, tracking, row, row, F.qdDes0, F.duty0);
    // A duty that turns within PLAN_TURN_S of the plan's acceleration turning (identification's excitation,
    // a plan that reverses) follows the plan; the warning counts the others (a rattle through the play).
    for (let j = 0; j < this.joints; j++) {
      const a = Math.sign(row[F.qddDes0 + j]!);
      if (a !== 0 && a !== this.planAccelSign[j]) {
        this.planAccelSign[j] = a;
        this.planTurnT[j] = t;
      }
      if (reversed & (1 << j) && t - this.planTurnT[j]! < PLAN_TURN_S) reversed &= ~(1 << j);
    }
    const rose = this.reversalWatch.update(t, reversed);
    if (!rose) return;
    // Our own law calms those joints: its disturbance observer's feed (tracking-law.ts `calm`).
    const own = this.law === this.controller.law && this.o.rig.control.disturbanceObserver ? this.controller.law : undefined;
    const feedHz = own ? rose.map((j) => own.calm(j)) : undefined;
    this.emit({ kind: 'reversals', joints: rose, perS: this.reversalWatch.rate.slice(), ...(feedHz ? { feedHz } : {}), t: this.time.t });
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
    const { trajT, phase } = this.planAt(horizon);
    const k = this.mode.kind;
    const scale = this.ramp.at(
      this.time.t,
      k === 'release' ? 'release' : k === 'track' || k === 'hold' || k === 'paused' ? 'driven' : 'off',
    );
    const moving = k === 'track' || k === 'hold' || k === 'paused' || k === 'release';
    let out = moving ? this.drive(r, horizon, k) : this.controller.idle();
    // A joint far from its plan, or one that stays at its torque limit (jammed, blocked, overloaded): stop.
    const follows = this.own?.followsPlan !== false;
    const sf = this.guards.output(
      this.plan.atSample.q,
      r.q,
      moving && k !== 'release' && scale >= 1 && follows,
      out.sat,
      moving,
      this.time.t,
    );
    if (sf && !this.finished) {
      this.fault(sf);
      out = this.controller.idle();
    }
    if (this.mode.kind === 'release' && scale <= 0) {
      out = this.controller.idle();
      this.modes.halt('stopped', this.modes.stop ?? { kind: 'requested', text: 'stopped' });
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
        this.modes.setMode({ kind: 'hold' }, { held: 'done' });
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
    const changes = this.o.link.dutyChanges(r.ack, r.boardTime, horizon);
    const from = this.aided ?? this.estimator;
    if (
      !this.predictor.predict(
        from.q,
        from.qd,
        this.dutyOf(r.ack),
        horizon,
        this.aided ? this.aidedDisturbance() : c.disturbanceObserver ? this.twin.tauExt : undefined,
        changes,
      )
    ) {
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

  /** The model-aided estimator's unmodelled acceleration as a joint torque, M_a(q) d [N m], for the prediction. */
  private aidedDisturbance(): readonly number[] {
    const a = this.aided!;
    const M = computeMassMatrix(this.model, this.aidedData, a.q);
    for (let i = 0; i < this.joints; i++) {
      let t = 0;
      for (let j = 0; j < this.joints; j++) t += M[i]![j]! * a.disturbance[j]!;
      this.aidedTorque[i] = t;
    }
    return this.aidedTorque;
  }

  /** Write: the answer to the board (nothing once finished or disabled: the halt wrote the zero). */
  private write(out: ControlOutput): void {
    if (this.finished || this.mode.kind === 'disabled') return;
    this.o.link.writeDuty(out.duty);
  }

  /** The row of an instant without a sample: a halt between samples, so that the recording shows the zero. */
  private recordHalt(): void {
    this.record(undefined, this.o.clock.now(), this.controller.idle(), -1, 'none');
  }

  /** The row of this sample (or of a lost-link instant, `r` undefined): row-writer.ts. */
  private record(r: Reading | undefined, wallStart: number, answer: ControlOutput | undefined, trajT: number, phase: TrajPhase): void {
    // Once finished the command in force is the zero (a stop's ramp ended at zero by itself).
    const out = this.finished && this.mode.kind !== 'stopped' ? this.controller.idle() : answer;
    const dutyIn = r ? this.dutyOf(r.ack) : this.zeroDuty;
    this.rows.write({
      r,
      reading: this.reading,
      state: this.mode.kind,
      wallStart,
      out,
      answered: answer !== undefined,
      trajT,
      phase,
      dutyIn,
    });
  }
}
