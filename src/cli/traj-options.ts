/**
 * The trajectory options of `twolink traj`, `run` and `plot traj`, apart from their parsing
 * (traj-args.ts): a command's option table is built when its module loads, and this one alone
 * loads no trajectory code or trajectory-file schema.
 */
import type { OptionSpecs } from './args.js';

export const TRAJECTORY_OPTIONS = {
  space: { type: 'string', arg: 'joint|endpoint', help: 'plan in joint space (angles) or endpoint space (x,y in m)' },
  from: { type: 'string', arg: 'a,b', help: 'start: joint angles or endpoint x,y' },
  to: { type: 'string', arg: 'a,b', help: 'end: joint angles or endpoint x,y' },
  via: { type: 'string', arg: 'a,b', multiple: true, help: 'a via point between --from and --to (repeat for more)' },
  duration: { type: 'string', arg: 'S', help: 'duration of each segment [s]' },
  elbow: { type: 'string', arg: 'down|up', help: 'IK branch in endpoint space (default down: alpha2 >= 0)' },
  file: { type: 'string', arg: 'FILE', help: 'a trajectory file (JSON, see docs/rig-file.md)' },
  name: { type: 'string', arg: 'NAME', help: 'a built-in trajectory: reach, point, circle' },
} as const satisfies OptionSpecs;
