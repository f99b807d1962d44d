/**
 * Following the plan: a trajectory as the loop runs it (the approach from where the arm is, the path,
 * and with `park` the way back, each a phase), where it is at each answered sample, and the pose held
 * when not tracking. Three samples of the plan per answered sample:
 * - `ref`: where the answer applies (`Reading.applyAt`): what the feedback compares the predicted state with;
 * - `desired`: half a period later, the middle of the period the answer holds: the feedforward;
 * - `atSample`: the sample's own instant: what the recorded tracking error and the following guard
 *   compare the measurement with.
 * The end of the trajectory turns into holding its last pose. The loop owns the mode and tells the
 * events; this file samples the plan and says when a phase begins or the trajectory ends.
 */
import type { ArmPart } from '../config/parts.js';
import type { Rig } from '../config/load.js';
import type { PathSpec } from '../model/builtins.js';
import type { Trajectory, TrajectorySample } from '../model/trajectory.js';
import { planPath } from './plan.js';
import type { TrajPhase } from '../telemetry/tick.js';
import { planPhases, type PhasePlan, type PlannedPhase } from './events.js';

/** A trajectory being run: the plan and how far along it the loop is. */
export interface ActiveTrajectory {
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

/** Where an answered sample is on the trajectory. */
export interface FollowStep {
  /** Trajectory time [s] of the sample. */
  trajT: number;
  phase: TrajPhase;
  /** The trajectory is over: hold its last pose (already set). */
  ended: boolean;
  /** A phase begins at this sample (tell it). */
  entered: PlannedPhase | undefined;
}

/** What following the plan reads of the rig file. */
export type PlanPart = ArmPart & Pick<Rig, 'limits'>;

export class PlanFollower {
  /** The plan where the answer applies, half a period later, and at the sample (see the top). */
  readonly ref: TrajectorySample;
  readonly desired: TrajectorySample;
  readonly atSample: TrajectorySample;
  /** The pose held when not tracking [rad]. */
  private holdQ: number[];

  constructor(
    private readonly rig: PlanPart,
    /** The board's sampling period [s]. */
    private readonly period: number,
  ) {
    const n = rig.joints;
    this.holdQ = new Array<number>(n).fill(0);
    const sample = (): TrajectorySample => ({
      t: 0,
      q: new Array<number>(n).fill(0),
      qd: new Array<number>(n).fill(0),
      qdd: new Array<number>(n).fill(0),
      qddd: new Array<number>(n).fill(0),
    });
    this.desired = sample();
    this.ref = sample();
    this.atSample = sample();
  }

  /** The pose held [rad]. */
  get hold(): readonly number[] {
    return this.holdQ;
  }

  /** Hold `q` [rad] from now on (copied). */
  holdAt(q: readonly number[]): void {
    this.holdQ = q.slice();
  }

  /** Hold where the plan is now (the feedforward's pose). */
  holdAtPlan(): void {
    this.holdQ = this.desired.q.slice();
  }

  /** The approach from `q0` [rad] (where the arm is), the path, and (with `park`) the way back: plan.ts, as `preflight` checks it. */
  start(spec: PathSpec, park: boolean, q0: readonly number[]): ActiveTrajectory {
    const { traj, approachEnd, trackEnd } = planPath(this.rig.arm, this.rig.limits, spec, q0, park);
    return {
      name: spec.name,
      traj,
      approachEnd,
      trackEnd,
      phases: planPhases(this.rig.arm, traj, approachEnd, trackEnd),
      t: 0,
      told: 'approach',
    };
  }

  phaseAt(a: ActiveTrajectory, t: number): PlannedPhase {
    return t < a.approachEnd ? 'approach' : t < a.trackEnd ? 'track' : 'park';
  }

  /**
   * An answered sample while tracking `a`, whose answer applies `horizon` [s] after it: samples the
   * plan there. At the end of the trajectory the pose held becomes its end.
   */
  follow(a: ActiveTrajectory, horizon: number): FollowStep {
    const d = this.desired;
    const ref = this.ref;
    if (a.t + horizon >= a.traj.duration) {
      a.traj.sample(a.traj.duration, d);
      a.traj.sample(a.traj.duration, ref);
      a.traj.sample(Math.min(a.t, a.traj.duration), this.atSample);
      this.holdQ = d.q.slice();
      return { trajT: a.traj.duration, phase: 'none', ended: true, entered: undefined };
    }
    // The error at the instant the answer applies; the feedforward in the middle of the period it holds.
    a.traj.sample(a.t + horizon, ref);
    a.traj.sample(Math.min(a.traj.duration, a.t + horizon + 0.5 * this.period), d);
    a.traj.sample(a.t, this.atSample);
    const p = this.phaseAt(a, a.t);
    const entered = p !== a.told ? p : undefined;
    a.told = p;
    return { trajT: a.t, phase: p, ended: false, entered };
  }

  /** Not tracking: the plan is the pose held, at rest. */
  holdStill(): void {
    for (const s of [this.desired, this.ref, this.atSample]) {
      for (let i = 0; i < this.rig.joints; i++) {
        s.q[i] = this.holdQ[i]!;
        s.qd[i] = 0;
        s.qdd[i] = 0;
        s.qddd[i] = 0;
      }
    }
  }

  /**
   * A sample recorded but not answered (a newer one had come) `since` [s] of board time after the last
   * answered one: the plan at its own time (`atSample`).
   */
  atUnanswered(a: ActiveTrajectory, since: number): { trajT: number; phase: TrajPhase } {
    const t = Math.min(a.traj.duration, a.t + Math.max(0, since));
    a.traj.sample(t, this.atSample);
    return { trajT: t, phase: this.phaseAt(a, t) };
  }
}
