/**
 * The control loop's work of one period: read -> update -> write. `LoopCore.tick()` is synchronous
 * and never throws; the owner of time (runner.ts) calls it on a fixed grid, in a worker thread in real
 * time or in the test's thread in virtual time.
 *
 * States: idle (outputs zero, telemetry flowing) -> track (a trajectory: approach from where the arm
 * is, the trajectory, the way back to where it started) -> hold (at the end) -> release (torque limits
 * ramp to zero: the soft stop) -> stopped. estop and fault zero the motors on the same tick.
 */
import type { Rig } from '../config/load.js';
import type { PathSpec } from '../model/builtins.js';
import { endpoint } from '../model/kinematics.js';
import { buildPath, type Trajectory, type TrajectorySample } from '../model/trajectory.js';
import type { TwoLinkParams } from '../model/types.js';
import type { Clock } from '../time/clock.js';
import type { Link, LinkEvent, Reading } from '../transport/link.js';
import { Controller, type FeedforwardMode } from './controller.js';
import { VelocityEstimator } from './estimator.js';
import { F, LOOP_STATES, PHASES, TICK_WIDTH, type LoopState, type TrajPhase } from './tick.js';
import { Twin } from './twin.js';

/** A measured angle this far beyond a joint limit stops the arm [rad] (5 deg). */
export const LIMIT_MARGIN = (5 * Math.PI) / 180;
/** A speed this many times the joint's limit stops the arm. */
export const SPEED_FACTOR = 1.25;

export type LoopCommand =
  | { kind: 'start'; path: PathSpec; park?: boolean }
  | { kind: 'pause' }
  | { kind: 'resume' }
  | { kind: 'hold' }
  | { kind: 'stop'; reason: string }
  | { kind: 'estop'; reason?: string }
  /** Outputs off (the runner also disables the board); the loop keeps reading. */
  | { kind: 'disable' }
  /** Outputs on again, holding where the arm is (with the soft start). */
  | { kind: 'enable' }
  /** Zero the encoders (only while disabled or idle; the runner does it on the board). */
  | { kind: 'zero' }
  /** The encoders were zeroed: start the estimator and the twin again from the new reading. */
  | { kind: 'rezero' }
  /** Give up the current trajectory (the runner starts the next). */
  | { kind: 'next' };

export type LoopEvent =
  | { kind: 'state'; state: LoopState; reason?: string; t: number }
  | { kind: 'alarm'; joints: number[]; t: number }
  | { kind: 'trajectory'; name: string; phase: TrajPhase; t: number }
  | { kind: 'link'; event: LinkEvent; t: number };

export interface LoopOptions {
  rig: Rig;
  link: Link;
  clock: Clock;
  /** [Hz] */
  rateHz: number;
  feedforward: FeedforwardMode;
  /** Receives every tick's row (the buffer is reused: copy it). */
  sink: (row: Float64Array) => void;
  onEvent?: (e: LoopEvent) => void;
}

interface ActiveTrajectory {
  name: string;
  traj: Trajectory;
  /** Trajectory times where the phases end: approach, track. */
  approachEnd: number;
  trackEnd: number;
  /** Loop time when it started [s]. */
  start: number;
  /** Time spent paused [s]. */
  paused: number;
}

export class LoopCore {
  state: LoopState = 'idle';
  /** Why the loop stopped: 'done', 'estop', 'fault:...', or the stop command's reason. */
  stopReason: string | undefined;
  readonly row = new Float64Array(TICK_WIDTH);
  readonly joints: number;
  readonly controller: Controller;
  readonly twin: Twin;
  readonly estimator: VelocityEstimator;
  /** The newest reading. */
  reading: Reading | undefined;
  private readonly o: LoopOptions;
  private readonly period: number;
  private t0 = -1;
  private lastNow = -1;
  private tickIndex = 0;
  private missing = 0;
  private lastBoardT = -1;
  private active: ActiveTrajectory | undefined;
  private pausedAt = -1;
  private holdQ: number[];
  private readonly desired: TrajectorySample;
  private readonly ref: TrajectorySample;
  private scale = 0;
  private rampFrom = 0;
  private rampStart = 0;
  private readonly dutyRing: { seq: number; duty: number[] }[];
  private readonly zeroDuty: number[];
  private pendingLinkEvents: LinkEvent[] = [];
  private readonly satTime: number[];

  constructor(o: LoopOptions) {
    this.o = o;
    const n = o.rig.joints;
    this.joints = n;
    this.period = 1 / o.rateHz;
    this.controller = new Controller(o.rig, o.feedforward);
    this.twin = new Twin(o.rig);
    this.estimator = new VelocityEstimator(n, o.rig.control.velocityFilterHz);
    this.holdQ = new Array(n).fill(0);
    const sample = (): TrajectorySample => ({ t: 0, q: new Array(n).fill(0), qd: new Array(n).fill(0), qdd: new Array(n).fill(0), qddd: new Array(n).fill(0) });
    this.desired = sample();
    this.ref = sample();
    this.dutyRing = Array.from({ length: 256 }, () => ({ seq: -1, duty: new Array(n).fill(0) }));
    this.zeroDuty = new Array(n).fill(0);
    this.satTime = new Array(n).fill(0);
    // Link events arrive between ticks; the tick acts on them.
    o.link.onEvent((e) => this.pendingLinkEvents.push(e));
  }

  private emit(e: LoopEvent): void {
    this.o.onEvent?.(e);
  }

  private setState(s: LoopState, reason?: string): void {
    if (this.state === s) return;
    this.state = s;
    if (s === 'stopped' || s === 'estop' || s === 'fault') this.stopReason ??= reason ?? s;
    this.emit({ kind: 'state', state: s, ...(reason ? { reason } : {}), t: this.loopTime() });
  }

  private loopTime(): number {
    return this.t0 < 0 ? 0 : this.o.clock.now() - this.t0;
  }

  /** True once the loop has nothing more to do (stopped, e-stopped or faulted). */
  get finished(): boolean {
    return this.state === 'stopped' || this.state === 'estop' || this.state === 'fault';
  }

  /** The current trajectory's name and progress, for the dashboard. */
  get progress(): { name: string; t: number; duration: number; phase: TrajPhase } | undefined {
    const a = this.active;
    if (!a) return undefined;
    const t = Math.max(0, this.lastNow - a.start - a.paused);
    return { name: a.name, t: Math.min(t, a.traj.duration), duration: a.traj.duration, phase: this.phaseAt(t) };
  }

  /** Measured angles of the last reading (undefined before the first). */
  get measured(): readonly number[] | undefined {
    return this.reading?.q;
  }

  /**
   * Commands from the user or the runner. `start` builds the trajectory and throws a
   * TrajectoryError if it cannot; everything else is accepted in any state and ignored where it
   * does not apply.
   */
  command(c: LoopCommand): void {
    const now = this.o.clock.now();
    switch (c.kind) {
      case 'start': {
        if (this.finished) return;
        const q0 = this.reading?.q ?? this.holdQ;
        const spec = c.path;
        const pathStart = spec.start.q ?? undefined;
        // The approach: a joint-space minimum-jerk move from where the arm is to where the path starts.
        const probe = buildPath(this.o.rig.arm, spec.start, [{ kind: 'hold', duration: 0 }]);
        const startQ = pathStart ?? probe.sample(0).q;
        const ta = this.moveTime(q0, startQ);
        const steps = [{ kind: 'joint' as const, to: startQ, duration: ta }, ...spec.steps];
        const main = buildPath(this.o.rig.arm, { q: startQ, ...(spec.start.elbow ? { elbow: spec.start.elbow } : {}) }, spec.steps);
        const endQ = main.sample(main.duration).q;
        const park = c.park ?? false;
        const tp = park ? this.moveTime(endQ, q0) : 0;
        if (park) steps.push({ kind: 'joint', to: q0.slice(), duration: tp });
        const traj = buildPath(this.o.rig.arm, { q: q0.slice(), ...(spec.start.elbow ? { elbow: spec.start.elbow } : {}) }, steps, spec.description);
        this.active = { name: spec.name, traj, approachEnd: ta, trackEnd: ta + main.duration, start: now, paused: 0 };
        this.pausedAt = -1;
        this.controller.reset();
        this.rampStart = now;
        this.rampFrom = this.scale;
        this.setState('track');
        this.emit({ kind: 'trajectory', name: spec.name, phase: 'approach', t: this.loopTime() });
        return;
      }
      case 'pause':
        if (this.state === 'track') {
          this.pausedAt = now;
          this.holdQ = this.desired.q.slice();
          this.setState('paused');
        }
        return;
      case 'resume':
        if (this.state === 'paused' && this.active) {
          this.active.paused += now - this.pausedAt;
          this.pausedAt = -1;
          this.setState('track');
        }
        return;
      case 'hold':
        if (this.state === 'track' || this.state === 'paused' || this.state === 'idle') {
          this.holdQ = (this.state === 'idle' ? this.reading?.q ?? this.holdQ : this.desired.q).slice();
          this.active = undefined;
          this.setState('hold');
        }
        return;
      case 'stop':
        if (this.finished || this.state === 'release') return;
        if (this.state === 'idle') {
          this.stopReason ??= c.reason;
          this.setState('stopped', c.reason);
          return;
        }
        this.stopReason ??= c.reason;
        this.holdQ = this.desired.q.slice();
        this.active = undefined;
        this.rampStart = now;
        this.rampFrom = this.scale;
        this.setState('release', c.reason);
        return;
      case 'estop':
        this.halt('estop', c.reason ?? 'estop');
        return;
      case 'disable':
        if (this.finished) return;
        this.active = undefined;
        this.o.link.writeDuty(this.zeroDuty);
        this.setState('disabled');
        return;
      case 'enable':
        if (this.state !== 'disabled') return;
        this.holdQ = (this.reading?.q ?? this.holdQ).slice();
        this.controller.reset();
        this.rampStart = now;
        this.rampFrom = 0;
        this.scale = 0;
        this.setState('hold');
        return;
      case 'zero':
        return;
      case 'rezero':
        this.reading = undefined;
        this.lastBoardT = -1;
        return;
      case 'next':
        if (this.state === 'track' || this.state === 'paused') {
          this.holdQ = this.desired.q.slice();
          this.active = undefined;
          this.setState('hold', 'next');
        }
        return;
    }
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

  private halt(state: 'estop' | 'fault', reason: string): void {
    if (this.finished) return;
    this.stopReason = reason;
    this.active = undefined;
    // Zero on this very tick (or at once, if called between ticks: the next write is zero too).
    this.o.link.writeDuty(this.zeroDuty);
    this.setState(state, reason);
  }

  private phaseAt(t: number): TrajPhase {
    const a = this.active;
    if (!a) return 'none';
    return t < a.approachEnd ? 'approach' : t < a.trackEnd ? 'track' : 'park';
  }

  /** Desired duty sent with command `seq`, for the twin (the duty in force after that command). */
  private dutyOf(seq: number | null): readonly number[] {
    if (seq === null) return this.zeroDuty;
    const e = this.dutyRing[seq & 255]!;
    return e.seq === seq ? e.duty : this.zeroDuty;
  }

  /**
   * One period. `due` is the grid time of this tick [s, clock time]; `overruns` and `missed` are the
   * runner's counters so far.
   */
  tick(due: number, overruns = 0, missed = 0): void {
    const clock = this.o.clock;
    const now = clock.now();
    if (this.t0 < 0) this.t0 = now;
    const dt = this.lastNow < 0 ? this.period : Math.min(3 * this.period, Math.max(0.5 * this.period, now - this.lastNow));
    this.lastNow = now;
    const rig = this.o.rig;
    const link = this.o.link;
    const n = this.joints;
    const row = this.row;

    // ---- events that arrived since the last tick
    if (this.pendingLinkEvents.length > 0) for (const e of this.pendingLinkEvents.splice(0)) {
      this.emit({ kind: 'link', event: e, t: this.loopTime() });
      if (e.kind === 'closed') this.halt('fault', 'fault:link-closed');
      else if (e.kind === 'board-reset') this.halt('fault', 'fault:board-reset');
      else if (e.kind === 'watchdog') this.halt('fault', 'fault:watchdog');
    }

    // ---- read
    const r = link.read();
    let fresh = 0;
    if (r) {
      fresh = 1;
      const prevAck = this.reading?.ack ?? null;
      const bdt = this.lastBoardT < 0 ? 0 : r.boardTime - this.lastBoardT;
      this.lastBoardT = r.boardTime;
      if (!this.reading) {
        this.estimator.reset(r.q);
        this.twin.reset(r.q, this.estimator.qd);
        this.holdQ = r.q.slice();
      } else {
        this.estimator.update(r.q, bdt, this.state === 'track' ? this.ref.qdd : undefined);
        if (this.twin.step(this.dutyOf(prevAck), bdt, r.q, this.estimator.qd)) {
          const joints = this.twin.alarm.flatMap((a, i) => (a ? [i] : []));
          this.emit({ kind: 'alarm', joints, t: this.loopTime() });
          if (rig.twin.onAlarm === 'stop' && this.state !== 'idle' && this.state !== 'disabled') {
            this.halt('fault', `fault:twin-alarm joint ${joints.map((j) => j + 1).join(', ')} diverges from the model (a collision, a jam, a load?)`);
          }
        }
      }
      this.reading = r;
      this.missing = 0;
    } else if (this.reading || this.tickIndex > 0) {
      this.missing++;
      if (this.missing >= rig.link.lostAfterTicks && !this.finished) {
        this.halt('fault', `fault:link-lost (no telemetry for ${this.missing} ticks, ${(this.missing * this.period * 1000).toFixed(0)} ms)`);
      }
    }
    const q = this.estimator.q;
    const qd = this.estimator.qd;

    // ---- safety: limits on the measurement
    if (this.reading && !this.finished && this.state !== 'idle' && this.state !== 'disabled') {
      for (let i = 0; i < n; i++) {
        const lim = rig.limits[i]!;
        const qm = this.reading.q[i]!;
        if (qm < lim.min - LIMIT_MARGIN || qm > lim.max + LIMIT_MARGIN) {
          this.halt('fault', `fault:limit joint ${i + 1} at ${((qm * 180) / Math.PI).toFixed(1)} deg, outside ${((lim.min * 180) / Math.PI).toFixed(0)}..${((lim.max * 180) / Math.PI).toFixed(0)} deg`);
          break;
        }
        if (Math.abs(qd[i]!) > SPEED_FACTOR * lim.maxVel) {
          this.halt('fault', `fault:speed joint ${i + 1} at ${((qd[i]! * 180) / Math.PI).toFixed(0)} deg/s, limit ${((lim.maxVel * 180) / Math.PI).toFixed(0)} deg/s`);
          break;
        }
      }
    }

    // ---- update
    // `d` is the plan now (for the feedforward: the torque applies from now on); `ref` is the plan at
    // the moment the board took the measurement (for the error: a measurement cannot show where the
    // arm should be after it was taken; comparing it with `d` would make the PID fight the
    // feedforward by velocity x measurement age).
    const d = this.desired;
    const ref = this.ref;
    const age = this.reading ? Math.min(2 * this.period, Math.max(0, now - this.reading.sampleTime)) : 0;
    let trajT = -1;
    let phase: TrajPhase = 'none';
    let out = this.controller.idle();
    if (this.state === 'track' && this.active) {
      const a = this.active;
      trajT = now - a.start - a.paused;
      if (trajT >= a.traj.duration) {
        a.traj.sample(a.traj.duration, d);
        a.traj.sample(a.traj.duration, ref);
        this.holdQ = d.q.slice();
        trajT = a.traj.duration;
        this.emit({ kind: 'trajectory', name: a.name, phase: 'none', t: this.loopTime() });
        this.active = undefined;
        this.setState('hold', 'done');
      } else {
        a.traj.sample(trajT, d);
        a.traj.sample(Math.max(0, trajT - age), ref);
        const p = this.phaseAt(trajT);
        if (p !== this.phaseAt(trajT - dt)) this.emit({ kind: 'trajectory', name: a.name, phase: p, t: this.loopTime() });
      }
      phase = this.phaseAt(trajT);
    }
    if (this.state === 'hold' || this.state === 'paused' || this.state === 'release') {
      for (const s of [d, ref]) {
        for (let i = 0; i < n; i++) {
          s.q[i] = this.holdQ[i]!;
          s.qd[i] = 0;
          s.qdd[i] = 0;
          s.qddd[i] = 0;
        }
      }
    }
    // Ramps of the torque limits: up over softStartS when moving, down over softStopS when releasing.
    const c = rig.control;
    if (this.state === 'release') {
      const k = c.softStopS > 0 ? (now - this.rampStart) / c.softStopS : 1;
      this.scale = Math.max(0, this.rampFrom * (1 - k));
    } else if (this.state === 'track' || this.state === 'hold' || this.state === 'paused') {
      const k = c.softStartS > 0 ? (now - this.rampStart) / c.softStartS : 1;
      this.scale = Math.min(1, this.rampFrom + (1 - this.rampFrom) * k);
    } else {
      this.scale = 0;
    }
    const moving = this.state === 'track' || this.state === 'hold' || this.state === 'paused' || this.state === 'release';
    if (moving && this.reading) {
      const dob = rig.control.disturbanceObserver && this.controller.feedforward !== 'none' && this.state === 'track' ? this.twin.tauExt : undefined;
      const res = this.controller.update(d, ref, q, qd, dt, this.scale, dob);
      out = res.out;
      if (!res.ok) {
        this.halt('fault', 'fault:non-finite command (a NaN in the controller; the motors were zeroed)');
        out = this.controller.idle();
      }
    }
    // A joint that stays at its torque limit is jammed, blocked or overloaded: stop.
    for (let i = 0; i < n; i++) {
      if (moving && out.sat & (1 << i)) this.satTime[i] += dt;
      else this.satTime[i] = 0;
      if (this.satTime[i]! > rig.control.maxSaturationS && !this.finished) {
        this.halt('fault', `fault:saturated joint ${i + 1} at its torque limit for ${rig.control.maxSaturationS} s (jammed, blocked, or a load it cannot carry)`);
        out = this.controller.idle();
      }
    }
    if (this.state === 'release' && this.scale <= 0) {
      out = this.controller.idle();
      this.setState('stopped', this.stopReason ?? 'stopped');
    }

    // ---- write
    if (this.state === 'disabled') {
      out = this.controller.idle();
    } else if (!this.finished) {
      const seq = link.writeDuty(out.duty);
      const e = this.dutyRing[seq & 255]!;
      e.seq = seq;
      for (let i = 0; i < n; i++) e.duty[i] = out.duty[i]!;
    } else if (this.state !== 'stopped') {
      out = this.controller.idle();
    }

    // ---- record
    const lc = link.counters;
    const two = n === 2;
    row[F.t] = now - this.t0;
    row[F.i] = this.tickIndex++;
    row[F.state] = LOOP_STATES.indexOf(this.state);
    row[F.trajT] = trajT;
    row[F.phase] = PHASES.indexOf(phase);
    const put = (f0: number, arr: readonly number[]): void => {
      row[f0] = arr[0]!;
      row[f0 + 1] = two ? arr[1]! : 0;
    };
    put(F.qDes0, ref.q);
    put(F.qdDes0, ref.qd);
    put(F.qddDes0, ref.qdd);
    put(F.q0, this.reading ? this.reading.q : q);
    put(F.qd0, qd);
    put(F.twinQ0, this.twin.q);
    put(F.twinQd0, this.twin.qd);
    put(F.res0, this.twin.residual);
    put(F.tauExt0, this.twin.tauExt);
    put(F.tauFf0, out.tauFf);
    put(F.tauPid0, out.tauPid);
    put(F.tauCmd0, out.tauCmd);
    put(F.duty0, out.duty);
    row[F.errUs] = (now - due) * 1e6;
    row[F.overruns] = overruns;
    row[F.missed] = missed;
    row[F.sent] = lc.sent;
    row[F.received] = lc.received;
    row[F.lost] = lc.lost;
    row[F.corrupt] = lc.corrupt;
    row[F.alarm] = this.twin.alarm.reduce((s, a, i) => s | (a ? 1 << i : 0), 0);
    row[F.flags] = this.reading?.flags ?? 0;
    row[F.boardT] = this.reading?.boardTime ?? 0;
    row[F.fresh] = fresh;
    row[F.sat] = out.sat;
    row[F.execUs] = (clock.now() - now) * 1e6;
    this.o.sink(row);
  }

  /** Endpoint of the measured arm [m] (for the dashboard's drawing). */
  endpoint(q: readonly number[]): number[] {
    return this.joints === 2 ? endpoint(this.o.rig.arm as TwoLinkParams, q) : [this.o.rig.arm.L1 * Math.cos(q[0]!), this.o.rig.arm.L1 * Math.sin(q[0]!)];
  }
}
