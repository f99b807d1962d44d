/**
 * What the loop tells the rest of the run as it goes (`LoopEvent`), with what a view needs to show it
 * without working it out again: a trajectory phase's event carries the phase's planned start and end
 * on the trajectory's clock and the endpoint's planned path. `describeEvent` is the one line of text
 * for an event (the console's log and the dashboard's event list).
 */
import { endpoint, forwardKinematics } from '../model/kinematics.js';
import type { Trajectory } from '../model/trajectory.js';
import { isTwoLink, type ArmParams, type Vec2 } from '../model/types.js';
import type { LinkEvent } from '../transport/link.js';
import type { LoopState, TrajPhase } from '../telemetry/tick.js';
import { describeStop, jointsText, type StopReason } from './stop.js';

/** A phase of a trajectory that the loop plans: the approach, the trajectory proper, the way back. */
export type PlannedPhase = Exclude<TrajPhase, 'none'>;

/** What the loop planned for one phase of a trajectory. */
export interface PhasePlan {
  /** Where the phase starts and ends on the trajectory's clock (the rows' `trajT`) [s]. */
  fromS: number;
  toS: number;
  /** The endpoint's planned path over the phase: `PLAN_POINTS[phase] + 1` points x, y [m], to 0.1 mm. */
  path: [number, number][];
}

export type LoopEvent =
  /**
   * A new mode. `stop`: why, when the loop stops (release, stopped, e-stopped, faulted); `held`: why
   * it holds (its trajectory is done, or `next` gave it up).
   */
  | { kind: 'state'; state: LoopState; stop?: StopReason; held?: 'done' | 'next'; t: number }
  | { kind: 'alarm'; joints: number[]; t: number }
  /** A phase begins (with its plan), or (`none`) the trajectory is over. */
  | { kind: 'trajectory'; name: string; phase: PlannedPhase; plan: PhasePlan; t: number }
  | { kind: 'trajectory'; name: string; phase: 'none'; t: number }
  | { kind: 'link'; event: LinkEvent; t: number }
  /**
   * The motor duty of `joints` (0-based) reverses more than WARN_REVERSALS_PER_S times a second while
   * they move (reversals.ts): a gearbox with play rattles, and wears. `perS` per joint of the rig;
   * `feedHz`, per joint of `joints`, the corner the disturbance observer's feed was lowered to
   * (disturbance-feed.ts), when the law is ours and the observer on.
   */
  | { kind: 'reversals'; joints: number[]; perS: number[]; feedHz?: number[]; t: number };

/**
 * Points on a phase's planned path (plus one: both ends): enough for a terminal's drawing, few enough
 * that planning them at a trajectory's start costs the loop's thread little (the approach and the way
 * back are single joint moves).
 */
export const PLAN_POINTS: Readonly<Record<PlannedPhase, number>> = { approach: 32, track: 160, park: 32 };

const round4 = (v: number): number => Math.round(v * 1e4) / 1e4;

/**
 * The plans of a trajectory's phases: approach on [0, approachEnd), the trajectory proper on
 * [approachEnd, trackEnd), the way back on [trackEnd, duration] (one point without one).
 */
export function planPhases(arm: ArmParams, traj: Trajectory, approachEnd: number, trackEnd: number): Record<PlannedPhase, PhasePlan> {
  const scratch = traj.sample(0);
  const xy: Vec2 = [0, 0];
  const plan = (phase: PlannedPhase, fromS: number, toS: number): PhasePlan => {
    const path: [number, number][] = [];
    const n = toS > fromS ? PLAN_POINTS[phase] : 0;
    for (let k = 0; k <= n; k++) {
      const s = traj.sample(n === 0 ? fromS : fromS + ((toS - fromS) * k) / n, scratch);
      const p = isTwoLink(arm) ? endpoint(arm, s.q, xy) : forwardKinematics(arm, s.q).endpoint.position;
      path.push([round4(p[0]), round4(p[1])]);
    }
    return { fromS, toS, path };
  };
  return {
    approach: plan('approach', 0, approachEnd),
    track: plan('track', approachEnd, trackEnd),
    park: plan('park', trackEnd, Math.max(trackEnd, traj.duration)),
  };
}

/** The console's and the dashboard's line for a loop event, e.g. "[2.00 s] reach: track". */
export function describeEvent(e: LoopEvent): string {
  const t = `[${e.t.toFixed(2)} s]`;
  switch (e.kind) {
    case 'state':
      return `${t} ${e.state}${e.stop ? ` (${describeStop(e.stop)})` : e.held ? ` (${e.held})` : ''}`;
    case 'alarm':
      return `${t} TWIN ALARM: ${jointsText(e.joints)} ${e.joints.length === 1 ? 'diverges' : 'diverge'} from the model`;
    case 'trajectory':
      return e.phase === 'none' ? `${t} ${e.name}: done` : `${t} ${e.name}: ${e.phase}`;
    case 'reversals':
      return `${t} WARNING: the duty of ${jointsText(e.joints)} reverses ${e.joints.map((j) => e.perS[j]!.toFixed(0)).join(' and ')} times a second while moving: a gearbox with play rattles (declare its play, encoders[].backlashDeg)${e.feedHz ? `; the disturbance observer's feed lowered to ${e.feedHz.map((h) => `${h} Hz`).join(' and ')}` : ''}`;
    case 'link':
      if (e.event.kind === 'waiting') return `${t} ${e.event.text}`;
      return `${t} link: ${e.event.kind}${'reason' in e.event ? ` ${e.event.reason}` : ''}${'text' in e.event ? ` ${e.event.text}` : ''}${'message' in e.event ? ` ${e.event.message}` : ''}`;
  }
}
