/**
 * What `twolink run` and `twolink demo` will do, from their options: the rig, where the arm is, the
 * trajectories, the rate, the law and the injections, all refused before anything moves where they
 * cannot be run.
 */
import { bootloaderBaudRefusal } from '../config/cable.js';
import { existsSync, statSync } from 'node:fs';
import { loadRig, type Rig } from '../config/load.js';
import { preflight as preflightPaths } from '../control/feasibility.js';
import { MOCK_PARTS, refusalIn, type Injection } from '../mock/injections.js';
import { serialportStall } from '../time/platform.js';
import { resolveSerialPath, type SerialPath } from '../transport/open.js';
import type { SerialPathChoice } from '../config/rig.js';
import { scalePath, type PathSpec } from '../model/builtins.js';
import { constraintIssue, floatSettings, type FloatConstraint, type FloatSettings } from '../control/float.js';
import { RUN_MODES } from '../control/modes.js';
import { isTwoLink } from '../model/types.js';
import { z } from 'zod';
import { decimal } from '../config/decimal.js';
import { buildPath } from '../model/trajectory.js';
import type { Target } from '../run/target.js';
import { checkWritablePath } from '../config/files.js';
import { rateIssue } from '../config/plausible.js';
import {
  checkPortArgs,
  choiceArg,
  FORCE_OPTION,
  SERIAL_OPTION,
  serialArg,
  numberArg,
  stringArg,
  UsageError,
  type OptionSpecs,
  type ParsedOf,
} from './args.js';
import { needPlant, refuseBoth } from './target-arg.js';
import { namedPath } from './traj-args.js';
import { FAULT_ALIAS_OPTION, INJECT_OPTION, injectArgs } from './inject-arg.js';
import { WIRING_OPTION, wiringArg } from './wiring-arg.js';
import { FOXGLOVE_OPTIONS } from './foxglove-arg.js';
import {
  checkImpedance,
  ImpedanceError,
  impedanceConfig,
  impedanceSettings,
  loopPassivity,
  stiffnessUnit,
  type ImpedanceSettings,
} from '../control/impedance.js';
import { rigFileSha256 } from '../config/rig-hash.js';
import { taughtOrigin } from '../config/trajectory-file.js';
import { RECONNECT_OPTIONS } from './reconnect-arg.js';

export const RUN_OPTIONS = {
  rig: { type: 'string', arg: 'FILE', help: 'rig file (rigs/*.json)' },
  port: { type: 'string', arg: 'PATH', help: 'serial port of the board (e.g. /dev/ttyACM0)' },
  mock: { type: 'boolean', help: "the rig file's simulated plant in this process (no hardware)" },
  baud: { type: 'string', arg: 'N', help: "baud rate (default: the rig file's link.baudRate)" },
  serial: SERIAL_OPTION,
  traj: {
    type: 'string',
    arg: 'NAME|FILE',
    multiple: true,
    help: 'trajectory: reach, point, circle, or a .json file (repeat for a sequence; default reach)',
  },
  rate: { type: 'string', arg: 'HZ', help: "loop rate, 100..1000 (default: the rig file's control.rateHz)" },
  record: {
    type: 'string',
    arg: 'FILE',
    help: 'record every tick to an NDJSON file, or to FILE.mcap for Foxglove (the channels of compare --export mcap: the arm in 3D, ticks, events)',
  },
  'no-feedforward': { type: 'boolean', help: 'PID alone (no inverse-dynamics feedforward, no disturbance observer)' },
  feedforward: { type: 'string', arg: 'MODE', help: 'desired | measured | none (default: the rig file)' },
  controller: {
    type: 'string',
    arg: 'FILE',
    help: 'your own control law in place of feedforward + PID: an ESM module whose default export is createController(context) (see docs/controller.md)',
  },
  cycle: { type: 'boolean', help: 'start again with the first trajectory when the last is done, until --max-seconds (soak runs)' },
  'no-park': { type: 'boolean', help: 'stay at the end of the trajectory instead of going back to the start pose' },
  headless: { type: 'boolean', help: 'no dashboard, even on a terminal' },
  json: { type: 'boolean', help: 'print the summary as JSON (the last stdout line)' },
  inject: INJECT_OPTION,
  fault: FAULT_ALIAS_OPTION,
  wiring: WIRING_OPTION,
  rt: {
    type: 'boolean',
    help: 'real-time scheduling (SCHED_FIFO) for the loop thread and the mock rig: the default; needs an rtprio limit or CAP_SYS_NICE (see docs/realtime.md), else twolink says so and runs without',
  },
  'no-rt': { type: 'boolean', help: 'do not ask for real-time scheduling' },
  'no-delay-compensation': { type: 'boolean', help: 'do not predict the state at the instant the command applies (for comparison)' },
  stiffness: {
    type: 'string',
    arg: 'K',
    help: "impedance: stiffness, N/m at the endpoint or N m/rad with --space joint (default: the rig file's impedance section)",
  },
  'damping-ratio': {
    type: 'string',
    arg: 'Z',
    help: "impedance: damping ratio with the arm's own inertia at the pose, 0.1..3 (default: the rig file's)",
  },
  space: { type: 'string', arg: 'S', help: 'impedance: endpoint (the default) or joint' },
  'max-seconds': {
    type: 'string',
    arg: 'S',
    help: 'stop after this long (default 600; demo: until quit): stop reason `timeout` and exit code 4 if the trajectories were not done (with --cycle: `done`)',
  },
  mode: {
    type: 'string',
    arg: 'MODE',
    help: 'track (default: follow the trajectories with feedforward + PID) | float (gravity and friction cancelled: the arm floats under your hand; with --traj hold) | impedance (a spring-damper about the trajectory or the held pose: --stiffness, --damping-ratio, --space; see docs/impedance.md)',
  },
  speed: {
    type: 'string',
    arg: 'F',
    help: 'follow the trajectories F times as fast, 0.25..2 (refused beforehand, with the time and the joint, where the motors cannot; default 1)',
  },
  lock: { type: 'string', arg: 'J', help: 'float: lock joint J (1-based) at its angle when float begins' },
  constrain: { type: 'string', arg: 'SHAPE', help: 'float: keep the endpoint on line:x0,y0,x1,y1 or circle:cx,cy,r [m]' },
  force: FORCE_OPTION,
  'any-rig': {
    type: 'boolean',
    help: "replay a taught file on a rig other than the one it was taught on (by the rig file's content hash; refused without it)",
  },
  ...FOXGLOVE_OPTIONS,
  ...RECONNECT_OPTIONS,
  help: { type: 'boolean', short: 'h', help: 'this help' },
} as const satisfies OptionSpecs;

/** `twolink run`'s (and demo's) parsed options. */
export type RunArgs = ParsedOf<typeof RUN_OPTIONS>;

/** `twolink demo`'s options: the simulated rig's run, so none of a port's, a controller's or a mode's. */
export const DEMO_OPTIONS = {
  ...pick(RUN_OPTIONS, [
    'rig',
    'traj',
    'rate',
    'record',
    'no-feedforward',
    'feedforward',
    'cycle',
    'headless',
    'json',
    'inject',
    'rt',
    'no-rt',
    'speed',
    'force',
  ]),
  'max-seconds': {
    ...RUN_OPTIONS['max-seconds'],
    help: 'stop after this long (default: with the dashboard or --foxglove, cycle until quit; else once through the trajectories)',
  },
  ...FOXGLOVE_OPTIONS,
  help: RUN_OPTIONS.help,
} as const satisfies OptionSpecs;

function pick<T extends object, K extends keyof T>(o: T, keys: readonly K[]): Pick<T, K> {
  return Object.fromEntries(keys.map((k) => [k, o[k]])) as Pick<T, K>;
}

/** What a run will do. */
export interface Plan {
  rig: Rig;
  target: Target;
  paths: PathSpec[];
  rateHz: number;
  feedforward: 'desired' | 'measured' | 'none';
  injections: Injection[];
  /** The user's controller module, as given. */
  controller?: string;
  /** Impedance mode's spring (--mode impedance). */
  impedance?: ImpedanceSettings;
  /** Float mode's settings (--mode float). */
  float?: FloatSettings;
}

/** What the run will do, from its options; refused (a UsageError) before anything moves where it cannot be run. */
export function plan(v: RunArgs, maxSeconds: number, rigDefault?: string, defaultTraj: string[] = ['reach']): Plan {
  const rigFile = typeof v.rig === 'string' ? v.rig : rigDefault;
  const rig = loadRig(stringArg(rigFile, 'rig', 'a rig file, e.g. --rig rigs/mock-arm.json'));
  const target = targetArg(v, rig, rigDefault);
  const { names, paths } = pathsArg(v, rig, maxSeconds, defaultTraj);
  const float = floatArgs(v, rig, target);
  if (float && typeof v.controller === 'string') throw new UsageError('--mode float drives the arm itself: drop --controller');
  const rateHz = rateArg(v, rig);
  const feedforward = v['no-feedforward']
    ? 'none'
    : choiceArg(v.feedforward, 'feedforward', ['desired', 'measured', 'none'] as const, rig.control.feedforward);
  const injections = injectionsArg(v, rig, target);
  if (target.kind !== 'mock') wiringArg(v.wiring, rig.joints, false);
  checkRecordArg(v, rig, names);
  const controller = typeof v.controller === 'string' ? v.controller : undefined;
  if (controller !== undefined && (v['no-feedforward'] || v.feedforward !== undefined)) {
    throw new UsageError("--controller replaces twolink's feedforward + PID: drop --feedforward / --no-feedforward");
  }
  const impedance = impedanceArgs(v, rig, target, paths, rateHz);
  return {
    rig,
    target,
    paths,
    rateHz,
    feedforward,
    injections,
    ...(controller !== undefined ? { controller } : {}),
    ...(impedance ? { impedance } : {}),
    ...(float ? { float } : {}),
  };
}

/** --port (with --baud, --serial) or --mock (with --wiring): where the arm is. */
function targetArg(v: RunArgs, rig: Rig, rigDefault: string | undefined): Target {
  refuseBoth(v);
  checkPortArgs(v);
  let target: Target;
  if (typeof v.port === 'string') {
    const serial = serialArg(v.serial, v.port);
    target = {
      kind: 'port',
      path: v.port,
      ...(v.baud !== undefined ? { baudRate: numberArg(v.baud, 'baud', { min: 300, max: 4_000_000, integer: true }) } : {}),
      ...(serial ? { serial } : {}),
    };
    const bootloader = bootloaderBaudRefusal(rig.cable, target.baudRate ?? rig.link.baudRate);
    if (bootloader)
      throw new UsageError(
        `${v.baud !== undefined ? '--baud' : 'link.baudRate'} ${target.baudRate ?? rig.link.baudRate}: ${rig.file}: ${bootloader}`,
      );
  } else if (v.mock || rigDefault) {
    serialArg(v.serial, v.port);
    const wiring = wiringArg(v.wiring, rig.joints, true);
    target = { kind: 'mock', ...(wiring ? { wiring } : {}) };
  } else {
    throw new UsageError('say where the arm is: --port PATH (a board) or --mock (the simulated rig of the rig file)');
  }
  if (target.kind === 'port') serialPathOf(target.serial ?? rig.link.serial);
  if (target.kind === 'mock') needPlant(rig);
  return target;
}

/** --traj (at --speed): the trajectories by name and as the loop will run them, within the limits. */
function pathsArg(v: RunArgs, rig: Rig, maxSeconds: number, defaultTraj: string[]): { names: string[]; paths: PathSpec[] } {
  // Float lets the arm go where the hand takes it from where it is: a trajectory would not be followed.
  const mode = choiceArg(v.mode, 'mode', RUN_MODES, 'track');
  const moving = mode === 'float' ? v.traj?.find((n) => n !== 'hold') : undefined;
  if (moving !== undefined)
    throw new UsageError(
      `--mode float --traj ${moving}: float follows no trajectory (the arm goes where the hand takes it); give --traj hold, the default with --mode float`,
    );
  const names = v.traj ?? (mode === 'float' ? ['hold'] : defaultTraj);
  for (const n of names) checkTaughtRig(n, rig.file, v['any-rig'] === true);
  const speed = numberArg(v.speed, 'speed', { default: 1, min: 0.25, max: 2 });
  const paths = names.map((n) => (n === 'hold' ? holdPath(maxSeconds) : scalePath(namedPath(rig, n), speed)));
  // Refuse before anything moves: every trajectory as the loop will run it (approach and park included) within the limits (at --speed).
  preflightPaths(rig, paths, {
    park: !v['no-park'],
    cycle: v.cycle === true,
    what: (p) => `trajectory "${p.name}"${speed !== 1 ? ` at --speed ${speed}` : ''}`,
    speed: { at: speed, min: 0.25 },
  });
  return { names, paths };
}

/** --rate [Hz], within what the rig's parts can do. */
function rateArg(v: RunArgs, rig: Rig): number {
  const rateHz = numberArg(v.rate, 'rate', { default: rig.control.rateHz, min: 100, max: 1000, unit: 'Hz' });
  const slow = rateIssue(rig, rateHz);
  if (slow) throw new UsageError(`--rate ${rateHz}: ${rig.file}: ${slow.path}: ${slow.message}`);
  return rateHz;
}

/** --inject: into the mock rig only, and only into the parts it has (or the loop's own thread). */
function injectionsArg(v: RunArgs, rig: Rig, target: Target): Injection[] {
  const injections = injectArgs(v, rig.joints);
  if (injections.length && target.kind !== 'mock') throw new UsageError('--inject needs --mock (injections go into the simulated rig)');
  for (const i of injections) {
    // The loop's own thread (busy, throw) and the parts this mock has.
    const why = refusalIn(
      [...MOCK_PARTS[rig.link.transport], 'host'],
      `the ${rig.link.transport === 'firmata' ? 'Firmata' : 'line-protocol'} mock rig`,
      i.name,
    );
    if (why) throw new UsageError(`--inject ${i.name}: ${why}`);
  }
  return injections;
}

/** --record FILE: never over a file that is not a recording, nor over the run's inputs. */
function checkRecordArg(v: RunArgs, rig: Rig, names: string[]): void {
  if (typeof v.record !== 'string') return;
  if (existsSync(v.record) && statSync(v.record).isFile() && !/\.(ndjson|mcap)$/.test(v.record)) {
    throw new UsageError(`--record ${v.record}: refusing to overwrite a file that is not .ndjson or .mcap`);
  }
  const inputs = [rig.file, ...names.filter((n) => n.endsWith('.json')), ...(typeof v.controller === 'string' ? [v.controller] : [])];
  checkWritablePath(v.record, 'recording', { force: v.force === true, inputs, motion: true });
}

/**
 * --mode impedance and its options: the spring over the rig file's defaults, refused before anything
 * moves when the loop's delay does not keep it passive on the planned poses (control/impedance.ts).
 */
function impedanceArgs(v: RunArgs, rig: Rig, target: Target, paths: PathSpec[], rateHz: number): ImpedanceSettings | undefined {
  const mode = choiceArg(v.mode, 'mode', RUN_MODES, 'track');
  const given = v.stiffness !== undefined || v['damping-ratio'] !== undefined || v.space !== undefined;
  if (mode !== 'impedance') {
    if (given) throw new UsageError('--stiffness, --damping-ratio and --space are for --mode impedance');
    return undefined;
  }
  if (rig.joints !== 2) throw new UsageError(`--mode impedance: ${rig.file} has one joint; impedance mode needs the two-link arm`);
  if (v.controller !== undefined) throw new UsageError('--mode impedance is its own control law: drop --controller');
  if (v['no-feedforward'] || v.feedforward !== undefined)
    throw new UsageError(
      "--mode impedance cancels gravity, friction and the plan's inertia with the model itself: drop --feedforward / --no-feedforward",
    );
  const space = choiceArg(v.space, 'space', ['endpoint', 'joint'] as const, impedanceConfig(rig).space);
  const unit = stiffnessUnit(space);
  const stiffness =
    v.stiffness !== undefined
      ? numberArg(v.stiffness, 'stiffness', { min: space === 'joint' ? 0.01 : 1, max: space === 'joint' ? 1000 : 10_000, unit })
      : undefined;
  const dampingRatio = v['damping-ratio'] !== undefined ? numberArg(v['damping-ratio'], 'damping-ratio', { min: 0.1, max: 3 }) : undefined;
  const s = impedanceSettings(rig, {
    space,
    ...(stiffness !== undefined ? { stiffness } : {}),
    ...(dampingRatio !== undefined ? { dampingRatio } : {}),
  });
  // The planned poses, every 10 ms of each trajectory (and where the mock's arm starts).
  const poses: number[][] = target.kind === 'mock' && rig.plant ? [rig.plant.start.slice()] : [];
  for (const p of paths) {
    if (!p.start.q && !p.start.xy) {
      // A path that starts where the arm is (`--traj hold`): its poses are known only at the start, so
      // the spring must be passive wherever the arm may be. The bound depends on the elbow alone.
      poses.push(...startPoses(rig, target));
      continue;
    }
    const traj = buildPath(rig.arm, p.start, p.steps);
    for (let t = 0; t <= traj.duration; t += 0.01) poses.push(traj.sample(t).q.slice());
  }
  try {
    checkImpedance(rig, s, loopPassivity(rig, target.kind === 'mock', rateHz), poses);
  } catch (e) {
    if (e instanceof ImpedanceError) throw new UsageError(`--mode impedance: ${e.message}`);
    throw e;
  }
  return s;
}

/**
 * The poses a run that starts where the arm is may start in: the mock's start pose, or on a real arm
 * every elbow angle within joint 2's limits (every 1 deg, and both ends).
 */
function startPoses(rig: Rig, target: Target): number[][] {
  if (target.kind === 'mock' && rig.plant) return [rig.plant.start.slice()];
  const lim = rig.limits[1];
  const lo = lim?.min ?? -Math.PI; // [rad]
  const hi = lim?.max ?? Math.PI; // [rad]
  const n = Math.max(1, Math.ceil(((hi - lo) * 180) / Math.PI));
  return Array.from({ length: n + 1 }, (_, i) => [0, lo + ((hi - lo) * i) / n]);
}

/**
 * A taught file (twolink teach) replays only on the rig it was taught on, by the rig file's content hash
 * (config/rig-hash.ts), unless --any-rig: another rig's lengths, limits or encoder zeros make the same
 * joint angles another motion. A file taught before the hash was written is replayed with a warning.
 */
function checkTaughtRig(traj: string, rigFile: string, anyRig: boolean): void {
  if (!traj.endsWith('.json') || !existsSync(traj)) return;
  const origin = taughtOrigin(traj);
  if (!origin) return;
  if (origin.rigSha256 === undefined) {
    process.stderr.write(
      `twolink: WARNING: ${traj} was taught on ${origin.rig} before twolink wrote the rig's hash into taught files: it cannot tell whether ${rigFile} is the same arm\n`,
    );
    return;
  }
  const here = rigFileSha256(rigFile);
  if (here === origin.rigSha256) return;
  const why = `${traj} was taught on ${origin.rig} (rig hash ${origin.rigSha256.slice(0, 12)}), and ${rigFile} is another rig (hash ${here.slice(0, 12)}): its lengths, limits, encoder zeros or wiring differ, so the same joint angles are another motion`;
  if (!anyRig)
    throw new UsageError(
      `${why}. Replay it with the rig it was taught on, or give --any-rig to replay it on this one anyway (still checked against this rig's limits before anything moves)`,
    );
  process.stderr.write(`twolink: --any-rig: ${why}; replaying it on ${rigFile} as asked\n`);
}

/**
 * `--traj hold`: hold where the arm is until shortly before --max-seconds (the approach and the way back
 * take 0.5 s each; then stop: `done`). The limit runs on the host's clock and the hold on the board's:
 * on a busy machine the board's time falls behind, so the hold leaves a fifth of the limit (at least
 * 0.5 s) to spare, not a fixed 0.5 s that a starved run overran (a `timeout` where the hold was done).
 */
function holdPath(maxSeconds: number): PathSpec {
  const spare = Math.max(0.5, 0.2 * maxSeconds);
  return {
    name: 'hold',
    description: 'hold the start pose',
    start: {},
    steps: [{ kind: 'hold', duration: Math.max(0.1, maxSeconds - 1 - spare) }],
    untilLimit: true,
  };
}

/** --mode, --lock and --constrain: float mode's settings, or undefined for track. */
function floatArgs(v: RunArgs, rig: Rig, target: Target): FloatSettings | undefined {
  const mode = choiceArg(v.mode, 'mode', RUN_MODES, 'track');
  if (mode !== 'float') {
    if (v.lock !== undefined || v.constrain !== undefined) throw new UsageError('--lock and --constrain are for --mode float');
    return undefined;
  }
  const lock = v.lock !== undefined ? numberArg(v.lock, 'lock', { min: 1, max: rig.joints, integer: true }) - 1 : undefined;
  const startQ = target.kind === 'mock' && rig.plant ? rig.plant.start : undefined;
  const constraint = typeof v.constrain === 'string' ? constraintArg(v.constrain, rig, startQ) : undefined;
  return floatSettings(rig, { ...(lock !== undefined ? { lock } : {}), ...(constraint ? { constraint } : {}) });
}

/** A comma list of decimal numbers (no hex, no blanks: Number('') is 0) [m]. */
const metres = (t: string): number[] => t.split(',').map(decimal);
const METRES = z.number().finite();
const CONSTRAINT = z.union([
  z
    .string()
    .regex(/^line:/)
    .transform((t) => metres(t.slice(5)))
    .pipe(z.tuple([METRES, METRES, METRES, METRES]))
    .transform(([x0, y0, x1, y1]): FloatConstraint => ({ kind: 'line', from: [x0, y0], to: [x1, y1] })),
  z
    .string()
    .regex(/^circle:/)
    .transform((t) => metres(t.slice(7)))
    .pipe(z.tuple([METRES, METRES, METRES]))
    .transform(([cx, cy, radius]): FloatConstraint => ({ kind: 'circle', centre: [cx, cy], radius })),
]);

/**
 * --constrain line:x0,y0,x1,y1 | circle:cx,cy,r [m]: inside the arm's reach and joint limits, and (where
 * the start pose is known before the run: the mock's) passing near the endpoint there. On a board the
 * law checks the last at float's entry (a fault, no float).
 */
function constraintArg(text: string, rig: Rig, startQ: readonly number[] | undefined): FloatConstraint {
  if (!isTwoLink(rig.arm)) throw new UsageError('--constrain needs a two-link arm');
  const r = CONSTRAINT.safeParse(text);
  if (!r.success) throw new UsageError(`--constrain "${text}": write line:x0,y0,x1,y1 or circle:cx,cy,r (metres, finite numbers)`);
  const why = constraintIssue(rig, r.data, startQ);
  if (why) throw new UsageError(`--constrain "${text}": ${why}`);
  return r.data;
}

/**
 * The serial path a port is opened on (transport/open.ts), refused as a usage error where the OS has
 * no such path; on a Node where the serialport path stalls without the relay's workaround
 * (time/platform.ts), one line at start-up that says so, with the upstream PR.
 */
function serialPathOf(choice: SerialPathChoice | undefined): SerialPath {
  let path: SerialPath;
  try {
    path = resolveSerialPath(choice);
  } catch (e) {
    throw new UsageError(e instanceof Error ? e.message : String(e));
  }
  const stall = path === 'serialport' ? serialportStall() : undefined;
  if (stall) process.stderr.write(`twolink: note: --serial serialport: ${stall}\n`);
  return path;
}
