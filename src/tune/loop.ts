/**
 * tune's sample loop on the board's clock: every sample from the link is answered with duties. The
 * joint under test follows an experiment's law (a relay, a chirp under a light PD, the tuned PID);
 * the other joint is held at the pose by its own PD on top of the model's gravity torque. Torques
 * become duties through the controller's own motor model (Controller.drive: the torque limits, the
 * duty cap, the back-EMF compensated from the estimated velocity), so the experiments see the plant
 * the PID will. Any joint straying more than `maxDevDeg` from the pose, or past its soft limit, or a
 * non-finite number, stops the motors at once and fails the experiment. Dt comes from the board's
 * timestamps; the loop never reads a host clock.
 */
import type { Rig } from '../config/load.js';
import { Controller, type ControlOutput } from '../control/controller.js';
import { VelocityEstimator } from '../control/estimator.js';
import { computeGravity, createActuatedArmData, createActuatedArmModel, type ActuatedArmModel } from '../model/actuated.js';
import type { Link, Reading } from '../transport/link.js';

/** What a law sees each sample. */
export interface LawInput {
  /** Time since the law started [s] (board clock). */
  t: number;
  /** Sample period [s]. */
  dt: number;
  q: readonly number[];
  qd: readonly number[];
  /** The tested joint's angle [rad] and estimated velocity [rad/s]. */
  qj: number;
  qdj: number;
}

/** A law's answer: the tested joint's torque [N m], what to record with it, and whether it is done. */
export interface LawOutput {
  tau: number;
  /** Recorded beside the torque (e.g. the PID's part of it) [N m]. */
  c?: number;
  /** The excitation in it (the instrument of the closed-loop estimate) [N m]. */
  r?: number;
  done?: boolean;
}

export type Law = (x: LawInput) => LawOutput;

/** One experiment's recording, one entry a sample. */
export interface Trace {
  t: number[];
  /** The tested joint's angle [rad]. */
  q: number[];
  /** The torque commanded to it [N m]. */
  u: number[];
  c: number[];
  r: number[];
  /** The other joint's largest deviation from the pose [rad]. */
  otherDev: number;
}

export class TuneAbort extends Error {
  override readonly name = 'TuneAbort';
}

export interface LoopBounds {
  /** Largest deviation of any joint from the pose [deg]. */
  maxDevDeg: number;
  /** Holding PD of the other joint, per joint: [N m/rad], [N m s/rad]. */
  holdKp: number[];
  holdKd: number[];
}

export class TuneLoop {
  readonly model: ActuatedArmModel;
  readonly controller: Controller;
  private readonly data;
  private est: VelocityEstimator;
  /** The velocity estimator's bandwidth now [Hz]. */
  velocityFilterHz: number;
  private lastT: number | undefined;
  /** The tested joint's torque last written [N m]. */
  private lastU = 0;
  /** Seconds the motors were driven with a law (the arm's motion). */
  motionS = 0;
  /** Between experiments, hold every joint at the pose (once the motors are enabled). */
  holding = false;
  /** The pose the arm is held about [rad]. */
  pose: number[] = [];
  private pending:
    { joint: number; law: Law; trace: Trace; t0: number | undefined; resolve: (t: Trace) => void; reject: (e: Error) => void } | undefined;

  constructor(
    private readonly rig: Rig,
    private readonly link: Link,
    velocityFilterHz: number,
    private readonly bounds: LoopBounds,
  ) {
    this.model = createActuatedArmModel(rig);
    this.data = createActuatedArmData(this.model);
    this.controller = new Controller(rig, 'none', this.model);
    this.velocityFilterHz = velocityFilterHz;
    this.est = new VelocityEstimator(rig.joints, velocityFilterHz);
    link.onSample((r) => this.sample(r));
    // The board's watchdog cut the motors, it reset, or the port closed: the experiment cannot go on
    // (its law would drive a board that no longer applies it), nor can any after it.
    link.onEvent((e) => {
      if (e.kind === 'board-error' || e.kind === 'waiting') return;
      this.linkFault =
        e.kind === 'watchdog'
          ? `the board's watchdog stopped the motors (${e.text})`
          : e.kind === 'board-reset'
            ? 'the board reset'
            : e.kind === 'closed'
              ? `the link closed (${e.reason})`
              : `the link failed (${e.message})`;
      this.abort(this.linkFault);
    });
  }

  /** Why the link can no longer drive the arm, once it cannot. */
  private linkFault: string | undefined;

  private readonly poseWaiters: (() => void)[] = [];
  /** Resolves once the first sample has given the pose. */
  posed(): Promise<void> {
    return this.pose.length ? Promise.resolve() : new Promise((resolve) => this.poseWaiters.push(resolve));
  }

  /** Sets the holding PD of each joint. */
  setHold(kp: number[], kd: number[]): void {
    this.bounds.holdKp = kp.slice();
    this.bounds.holdKd = kd.slice();
  }

  /** A new velocity estimator at `hz`, started from the newest estimate. */
  setVelocityFilter(hz: number): void {
    const est = new VelocityEstimator(this.rig.joints, hz);
    est.reset(this.est.q);
    this.est = est;
    this.velocityFilterHz = hz;
  }

  /** The gravity torque of the model at the pose [N m]. */
  gravityAtPose(): number[] {
    return computeGravity(this.model, this.data, this.pose).slice();
  }

  /** Runs `law` on joint `joint` (0-based) until it says done; the other joint is held. */
  run(joint: number, law: Law): Promise<Trace> {
    if (this.pending) throw new Error('tune: an experiment is already running');
    if (this.linkFault) return Promise.reject(new TuneAbort(this.linkFault));
    return new Promise((resolve, reject) => {
      this.pending = { joint, law, trace: { t: [], q: [], u: [], c: [], r: [], otherDev: 0 }, t0: undefined, resolve, reject };
    });
  }

  /** Zeroes the motors and fails the running experiment. */
  abort(why: string): void {
    this.holding = false;
    this.link.writeDuty(new Array<number>(this.rig.joints).fill(0));
    const p = this.pending;
    this.pending = undefined;
    p?.reject(new TuneAbort(why));
  }

  /** Duties for the torques, written; undefined (and the motors stopped) when one is not finite. */
  private write(tau: number[], qd: readonly number[], what: string, send = true): ControlOutput | undefined {
    const { out: o, ok } = this.controller.drive(tau, qd, 1);
    if (!ok) {
      this.abort(`a non-finite torque from ${what} (${tau.join(', ')})`);
      this.holding = false;
      return undefined;
    }
    if (send) this.link.writeDuty(o.duty);
    return o;
  }

  private sample(r: Reading): void {
    const dt = this.lastT === undefined ? 0 : r.boardTime - this.lastT;
    this.lastT = r.boardTime;
    this.est.update(r.q, dt);
    if (!this.pose.length) {
      this.pose = r.q.slice();
      for (const f of this.poseWaiters.splice(0)) f();
    }
    const p = this.pending;
    // A superseded sample (the cable delivered a burst: only the newest is answered) still runs the
    // law and is recorded, unwritten: the trace keeps one entry per board sample, so the spectra's
    // sample rate is the loop's (dropping them halved the rate behind a 16U2 and scaled the frequencies).
    if (!p && (r.superseded || !this.holding)) return;
    // One or two joints (Rig.joints): q, qd, the pose, the limits and the hold gains have an entry per
    // joint, and p.joint is one of them; those indices keep their `!`.
    const n = this.rig.joints;
    const q = r.q;
    const qd = this.est.qd;
    for (let j = 0; j < n; j++) {
      const devDeg = (Math.abs(q[j]! - this.pose[j]!) * 180) / Math.PI;
      const lim = this.rig.limits[j]!;
      if (!Number.isFinite(q[j]!) || devDeg > this.bounds.maxDevDeg || q[j]! < lim.min || q[j]! > lim.max) {
        this.abort(
          `joint ${j + 1} at ${((q[j]! * 180) / Math.PI).toFixed(1)} deg strayed ${devDeg.toFixed(1)} deg from the pose (at most ${this.bounds.maxDevDeg}) or left its soft limits`,
        );
        return;
      }
    }
    const g = this.gravityAtPose();
    const tau = new Array<number>(n);
    for (let j = 0; j < n; j++) tau[j] = g[j]! + this.bounds.holdKp[j]! * (this.pose[j]! - q[j]!) - this.bounds.holdKd[j]! * qd[j]!;
    if (!p) {
      this.write(tau, qd, 'holding');
      return;
    }
    p.t0 ??= r.boardTime;
    const t = r.boardTime - p.t0;
    const out = p.law({ t, dt, q, qd, qj: q[p.joint]!, qdj: qd[p.joint]! });
    tau[p.joint] = out.tau;
    for (let j = 0; j < n; j++) if (j !== p.joint) p.trace.otherDev = Math.max(p.trace.otherDev, Math.abs(q[j]! - this.pose[j]!));
    const o = this.write(tau, qd, `joint ${p.joint + 1}'s law`, !r.superseded);
    if (!o) return;
    p.trace.t.push(t);
    p.trace.q.push(q[p.joint]!);
    // A superseded sample's torque is not sent: the board keeps the last one written.
    if (!r.superseded || p.trace.u.length === 0) this.lastU = o.tauCmd[p.joint]!;
    p.trace.u.push(this.lastU);
    p.trace.c.push(out.c ?? 0);
    p.trace.r.push(out.r ?? 0);
    if (dt > 0) this.motionS += dt;
    if (out.done) {
      this.pending = undefined;
      p.resolve(p.trace);
    }
  }
}
