/** Trajectory arguments shared by `twolink traj`, `run` and `plot traj`. */
import type { Rig } from '../config/load.js';
import { loadTrajectoryFile } from '../config/trajectory-file.js';
import { builtinNames, builtinPath, type PathSpec } from '../model/builtins.js';
import { buildPath, TrajectoryError, type PathStep, type Trajectory } from '../model/trajectory.js';
import { RigFileError } from '../config/rig.js';
import { choiceArg, numberArg, numberList, UsageError, type ListRange, type ParsedOf } from './args.js';
import type { TRAJECTORY_OPTIONS } from './traj-options.js';

export { TRAJECTORY_OPTIONS } from './traj-options.js';

/** What the trajectory options parse to, with `--deg` (each command that takes them declares its own, with its own help). */
export type TrajectoryArgs = ParsedOf<typeof TRAJECTORY_OPTIONS> & { deg?: boolean };

/** A path from --name, --file, or --space/--from/--to/--via. */
export function pathSpecFromArgs(rig: Rig, v: TrajectoryArgs): PathSpec {
  if (typeof v.name === 'string') return namedPath(rig, v.name);
  if (typeof v.file === 'string') return trajectoryFileFor(rig, v.file);
  const space = choiceArg(v.space, 'space', ['joint', 'endpoint'] as const, 'joint');
  const n = space === 'endpoint' ? 2 : rig.joints;
  if (space === 'endpoint' && rig.joints !== 2) throw new UsageError('--space endpoint needs a two-link arm');
  const k = space === 'joint' && v.deg ? Math.PI / 180 : 1;
  const conv = (a: number[]): number[] => a.map((x) => x * k);
  // Joint angles within two turns, endpoint positions within 100 m: beyond any arm, short of overflow.
  const range: ListRange =
    space === 'endpoint' ? { maxAbs: 100, unit: 'm' } : v.deg ? { maxAbs: 720, unit: 'deg' } : { maxAbs: 12.6, unit: 'rad' };
  const from = conv(numberList(v.from, 'from', n, range));
  const to = conv(numberList(v.to, 'to', n, range));
  const via = (v.via ?? []).map((s) => conv(numberList(s, 'via', n, range)));
  const duration = numberArg(v.duration, 'duration', { min: 1e-3, max: 1e5, unit: 's' });
  const elbow = choiceArg(v.elbow, 'elbow', ['down', 'up'] as const, 'down');
  const points = [...via, to];
  const steps: PathStep[] = points.map((p) => (space === 'joint' ? { kind: 'joint', to: p, duration } : { kind: 'line', to: p, duration }));
  return {
    name: `${space}`,
    description: `${space}-space minimum jerk through ${points.length} point(s)`,
    start: space === 'joint' ? { q: from } : { xy: from, elbow },
    steps,
  };
}

/**
 * A trajectory file, checked against the arm: what the path cannot be built from is said with the file
 * and the field (`steps[0].samples`), not the path builder's "step 1 (samples)".
 */
export function trajectoryFileFor(rig: Rig, file: string): PathSpec {
  const spec = loadTrajectoryFile(file);
  try {
    buildPath(rig.arm, spec.start, spec.steps);
  } catch (e) {
    if (!(e instanceof TrajectoryError)) throw e;
    // The part of the spec at fault is a value of the error (its place), not read back from its words.
    const at = e.place?.at;
    const field = at ? ('start' in at ? 'start' : `steps[${at.step}].${at.kind}`) : stepAt(spec.steps, e.t);
    const text = e.place ? e.place.detail : e.message;
    throw new RigFileError(file, field ? `${field}: ${text}` : text, field);
  }
  return spec;
}

/** The field of the step that runs at time `t` [s] of the path (`steps[2].line`), if there is one. */
function stepAt(steps: readonly PathStep[], t: number | undefined): string | undefined {
  if (t === undefined) return undefined;
  let end = 0;
  for (const [k, step] of steps.entries()) {
    end += step.duration;
    if (t <= end + 1e-9) return `steps[${k}].${step.kind}`;
  }
  return undefined;
}

/** A built-in trajectory or a file path. */
export function namedPath(rig: Rig, name: string): PathSpec {
  const b = builtinPath(rig.arm, name);
  if (b) return b;
  if (name.endsWith('.json') || name.includes('/')) return trajectoryFileFor(rig, name);
  throw new UsageError(
    `unknown trajectory "${name}": built-ins for this arm are ${builtinNames(rig.arm).join(', ')}, or give a .json file`,
  );
}

/** Builds the trajectory the arguments describe. */
export function loadTrajectoryArg(rig: Rig, v: TrajectoryArgs): Trajectory {
  const spec = pathSpecFromArgs(rig, v);
  return buildPath(rig.arm, spec.start, spec.steps, spec.description);
}
