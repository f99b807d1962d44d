/**
 * Where a run goes on after a reconnect (`twolink run --reconnect`, docs/cable.md): the paths of the
 * next loop segment, from where the arm is back onto the plan at the point where the cable was pulled,
 * then the rest of the plan. Pure: the main thread (session.ts) knows where the plan was from the
 * loop's events and rows; the loop plans the approach from the measured pose itself (plan.ts), as it
 * does at the start of any path.
 *
 * The rest of an interrupted path is the path proper sampled from the interruption to its end (a
 * `samples` step, sampled-path.ts), its time slowed at the start: the plan's clock runs at zero speed
 * at the join and reaches full speed after `RESUME_RAMP_S` (a minimum-jerk blend of the clock's rate),
 * so the arm, at rest after the approach, is not asked to jump to the speed the plan had when it was
 * cut (a soft start).
 */
import type { PathSpec } from '../model/builtins.js';
import type { PlannedPhase } from '../control/events.js';
import { buildPath, type PathStep } from '../model/trajectory.js';
import type { ArmParams } from '../model/types.js';

/** The time the resumed plan's clock takes to reach full speed [s]. */
export const RESUME_RAMP_S = 0.5;
/** Spacing of the samples of a resumed path [s] (a cubic B-spline through them: sampled-path.ts). */
export const RESUME_DT_S = 0.01;

/** Where the plan was when the loop stopped, as the main thread saw it. */
export interface Interruption {
  /** Index in the run's paths of the path that was running (-1: none had started). */
  pathIndex: number;
  /** Its phase at the last sample ('none': between paths, or its trajectory over). */
  phase: PlannedPhase | 'none';
  /** In 'track': time into the path proper [s] (the rows' trajT minus the phase's start). */
  trackS?: number;
}

/** A resumed path's name (a path resumed twice is not "(resumed) (resumed)"). */
function resumedName(name: string): string {
  return name.endsWith(' (resumed)') ? name : `${name} (resumed)`;
}

/** The plan's clock during the soft start: time [s] on the remainder after `tau` [s] of the resumed path. */
export function warpedTime(tau: number, rampS = RESUME_RAMP_S): number {
  if (tau <= 0) return 0;
  if (tau >= rampS) return rampS / 2 + (tau - rampS);
  // The integral of the minimum-jerk blend 10x^3 - 15x^4 + 6x^5 (rate 0 -> 1, its slope and curvature 0 at both ends).
  const x = tau / rampS;
  return rampS * (2.5 * x ** 4 - 3 * x ** 5 + x ** 6);
}

/** The path proper of `spec` from `fromS` [s] to its end, with the soft start: a spec that starts where the plan was. Undefined if less than one sample is left. */
export function pathRemainder(
  arm: ArmParams,
  spec: PathSpec,
  fromS: number,
  rampS = RESUME_RAMP_S,
  dt = RESUME_DT_S,
): PathSpec | undefined {
  if (!spec.start.q && !spec.start.xy) {
    // A path without a start (--traj hold) holds where the arm is: the rest of its time, held.
    const total = spec.steps.reduce((s, x) => s + x.duration, 0);
    const left = total - fromS;
    return left > dt ? { ...spec, name: resumedName(spec.name), steps: [{ kind: 'hold', duration: left }] } : undefined;
  }
  const elbow = spec.start.elbow ? { elbow: spec.start.elbow } : {};
  const startQ = spec.start.q ?? buildPath(arm, spec.start, [{ kind: 'hold', duration: 0 }]).sample(0).q;
  const main = buildPath(arm, { q: startQ, ...elbow }, spec.steps);
  const from = Math.max(0, fromS);
  if (main.duration - from < dt) return undefined;
  const q: number[][] = [];
  for (let k = 0; ; k++) {
    const s = Math.min(main.duration, from + warpedTime(k * dt, rampS));
    q.push(main.sample(s).q.slice());
    if (s >= main.duration) break;
  }
  if (q.length < 2) q.push(q[0]!.slice());
  const step: PathStep = { kind: 'samples', dt, q, duration: (q.length + 1) * dt };
  return {
    name: resumedName(spec.name),
    description: `${spec.description}, resumed ${from.toFixed(3)} s into it (a ${rampS} s soft start)`,
    start: { q: q[0]!, ...elbow },
    steps: [step],
    ...(spec.taught ? { taught: true } : {}),
  };
}

/** A short hold where the arm is: what a resumed run does when nothing of its plan is left. */
function holdHere(): PathSpec {
  return {
    name: 'hold (resumed)',
    description: 'hold where the arm is after a reconnect: nothing of the plan was left',
    start: {},
    steps: [{ kind: 'hold', duration: 0.5 }],
  };
}

/**
 * The paths of the segment after a reconnect. Interrupted in the path proper: its remainder (soft
 * start), then the paths after it. In its approach: that path again (its approach planned from where
 * the arm is). In its way back or between paths: the paths after it. With `cycle`, the run goes on
 * cycling from the interrupted path, which starts again from its approach (a remainder would repeat
 * every cycle). Never empty: with nothing left, a short hold where the arm is.
 */
export function resumePaths(arm: ArmParams, paths: readonly PathSpec[], cycle: boolean, at: Interruption): PathSpec[] {
  if (paths.length === 0) return [holdHere()];
  const i = Math.max(0, at.pathIndex) % paths.length;
  if (cycle) return [...paths.slice(i), ...paths.slice(0, i)];
  if (at.pathIndex < 0) return paths.slice();
  const rest = paths.slice(i + 1);
  const cur = paths[i]!;
  let out: PathSpec[];
  if (at.phase === 'approach') out = [cur, ...rest];
  else if (at.phase === 'track') {
    const r = pathRemainder(arm, cur, at.trackS ?? 0);
    out = r ? [r, ...rest] : rest;
  } else out = rest;
  return out.length ? out : [holdHere()];
}
