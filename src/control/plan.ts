/**
 * The trajectory the loop runs for a path: the approach from where the arm is to the path's start,
 * the path, and (with `park`) the way back to where the arm was. LoopCore plans with it when a
 * trajectory starts; `preflight` (feasibility.ts) plans the same before anything moves, so what is
 * checked is what runs.
 *
 * One- and two-link rigs alike: poses and limits are indexed per joint, so an index keeps its `!`.
 */
import type { Rig } from '../config/load.js';
import type { PathSpec } from '../model/builtins.js';
import { buildPath, type Trajectory } from '../model/trajectory.js';
import type { ArmParams } from '../model/types.js';

/** A planned run of one path: the whole trajectory and where its phases end on its clock [s]. */
export interface PlannedPath {
  traj: Trajectory;
  /** The approach is [0, approachEnd). */
  approachEnd: number;
  /** The path proper is [approachEnd, trackEnd); the way back (with park) [trackEnd, duration]. */
  trackEnd: number;
  /** Where the path leaves the arm (the start pose again with park) [rad]. */
  endQ: number[];
}

/** Minimum-jerk duration [s] for a joint move that keeps the peak speed at half the joint limits (and the peak acceleration at 4 rad/s^2). */
export function moveTime(limits: Rig['limits'], from: readonly number[], to: readonly number[]): number {
  let t = 0.5;
  for (let i = 0; i < from.length; i++) {
    const d = Math.abs(to[i]! - from[i]!);
    const vmax = 0.5 * limits[i]!.maxVel;
    // peak speed of a minimum-jerk move is 1.875 d / T; peak acceleration 5.77 d / T^2 (<= 4 rad/s^2 here)
    t = Math.max(t, (1.875 * d) / vmax, Math.sqrt((5.77 * d) / 4));
  }
  return t;
}

/** The approach from `q0`, the path, and (with `park`) the way back to `q0`. Throws a TrajectoryError if the path cannot be built. */
export function planPath(arm: ArmParams, limits: Rig['limits'], given: PathSpec, q0: readonly number[], park: boolean): PlannedPath {
  // A path without a start (`--traj hold`) starts where the arm is.
  const spec = !given.start.q && !given.start.xy ? { ...given, start: { ...given.start, q: q0.slice() } } : given;
  const elbow = spec.start.elbow ? { elbow: spec.start.elbow } : {};
  const probe = buildPath(arm, spec.start, [{ kind: 'hold', duration: 0 }]);
  const startQ = spec.start.q ?? probe.sample(0).q;
  const ta = moveTime(limits, q0, startQ);
  const steps = [{ kind: 'joint' as const, to: startQ, duration: ta }, ...spec.steps];
  const main = buildPath(arm, { q: startQ, ...elbow }, spec.steps);
  const endQ = main.sample(main.duration).q;
  if (park) steps.push({ kind: 'joint', to: q0.slice(), duration: moveTime(limits, endQ, q0) });
  const traj = buildPath(arm, { q: q0.slice(), ...elbow }, steps, spec.description);
  return { traj, approachEnd: ta, trackEnd: ta + main.duration, endQ: park ? q0.slice() : endQ.slice() };
}
