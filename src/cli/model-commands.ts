/**
 * The calculator: `twolink model id|fd|fk|ik|jacobian` and `twolink traj`, and the argument helpers
 * they share with `twolink sim` (sim-command.ts, which alone loads the integrators). These load only
 * the model and the rig file (no serial, johnny-five or blessed), so they start fast.
 */
import { loadRig, twoLinkArm, type Rig } from '../config/load.js';
import {
  computeEnergy,
  computeForwardDynamics,
  computeGravity,
  computeInverseDynamics,
  computeMassMatrix,
  computeVelocityTerms,
  createActuatedArmData,
  createRigidArmModel,
} from '../model/actuated.js';
import { externalTorques } from '../model/dynamics.js';
import {
  armEndpoint,
  endpointAcceleration,
  forwardKinematics,
  inverseKinematics,
  inverseKinematics1,
  jacobian,
  jacobianDot,
} from '../model/kinematics.js';
import { asPair, type ExternalLoads } from '../model/types.js';
import {
  choiceArg,
  formatHelp,
  nonFinitePath,
  noPositionals,
  numberArg,
  numberList,
  parse,
  stringArg,
  UsageError,
  type ListRange,
  type OptionSpecs,
  type ParsedOf,
} from './args.js';
import { TRAJECTORY_OPTIONS } from './traj-options.js';

const DEG = 180 / Math.PI;

export const rigOpt = { rig: { type: 'string', arg: 'FILE', help: 'rig file (rigs/*.json)' } } as const satisfies OptionSpecs;
export const degOpt = {
  deg: { type: 'boolean', help: 'angles (and their rates) in degrees instead of radians' },
} as const satisfies OptionSpecs;
export const helpOpt = { help: { type: 'boolean', short: 'h', help: 'this help' } } as const satisfies OptionSpecs;

export function rigOf(v: ParsedOf<typeof rigOpt>): Rig {
  return loadRig(stringArg(v.rig, 'rig', 'a rig file, e.g. --rig rigs/bench-arm.json'));
}

/**
 * Angles in and out: radians, or degrees with --deg; `range` bounds what the arguments may be ( 10^4 rad/s, 10^6 rad/s^2: far beyond any arm, short of where the model's numbers overflow).
 */
export function angles(v: ParsedOf<typeof degOpt>): {
  inp: (a: number[]) => number[];
  out: (a: readonly number[]) => number[];
  range: { q: ListRange; qd: ListRange; qdd: ListRange };
} {
  const k = v.deg ? 1 / DEG : 1;
  const u = v.deg ? 'deg' : 'rad';
  const r = (maxRad: number, unit: string): ListRange => ({ maxAbs: v.deg ? Math.round(maxRad * DEG) : maxRad, unit });
  return {
    inp: (a) => a.map((x) => x * k),
    out: (a) => a.map((x) => x / k),
    range: { q: r(1000, u), qd: r(1e4, `${u}/s`), qdd: r(1e6, `${u}/s^2`) },
  };
}

/** Joint torques [N m], endpoint forces [N], endpoint positions [m]. */
export const TORQUE: ListRange = { maxAbs: 1e5, unit: 'N m' };
export const FORCE: ListRange = { maxAbs: 1e5, unit: 'N' };
const POSITION: ListRange = { maxAbs: 100, unit: 'm' };

/**
 * Prints one JSON object, but only if every number in it is finite: JSON would write NaN and
 * Infinity as null. Otherwise the command says which inputs made it so.
 */
export function print(obj: unknown, command: string, inputs: string): void {
  const bad = nonFinitePath(obj);
  if (bad)
    throw new UsageError(`${command}: ${bad} is not a finite number for ${inputs}: the inputs are beyond what the model can compute`);
  process.stdout.write(`${JSON.stringify(obj)}\n`);
}

/** The arguments a command was given, for its messages. */
export function given<V extends object>(v: V, names: readonly (keyof V & string)[]): string {
  return (
    names
      .filter((k) => typeof v[k] === 'string')
      .map((k) => `--${k} ${String(v[k])}`)
      .join(' ') || 'these inputs'
  );
}

interface Sub {
  summary: string;
  usage: string;
  /** Parses the subcommand's arguments (its options and --help) and runs it; the exit code. */
  main(argv: readonly string[], command: string): number;
}

/** A subcommand whose `run` sees its own options typed (`v.q` is `string | undefined`), parsed against them. */
function sub<const S extends OptionSpecs>(s: { summary: string; usage: string; options: S; run(v: ParsedOf<S>): void }): Sub {
  return {
    summary: s.summary,
    usage: s.usage,
    main(argv, command) {
      const specs = { ...s.options, ...helpOpt };
      const { values, positionals } = parse(argv, specs, command);
      if (values.help) {
        process.stdout.write(formatHelp(command, s.summary, s.usage, specs));
        return 0;
      }
      noPositionals(positionals, command, 'every value goes with its option, e.g. --q 0.1,0.2');
      s.run(values);
      return 0;
    },
  };
}

const MODEL: Record<string, Sub> = {
  id: sub({
    summary: 'inverse dynamics: tau = M(q) qdd + V(q, qd) + G(q)',
    usage: 'model id --rig F --q a,b --qd a,b --qdd a,b [--deg]',
    options: {
      ...rigOpt,
      q: { type: 'string', arg: 'a,b', help: 'joint angles' },
      qd: { type: 'string', arg: 'a,b', help: 'joint velocities' },
      qdd: { type: 'string', arg: 'a,b', help: 'joint accelerations' },
      ...degOpt,
    },
    run(v) {
      const rig = rigOf(v);
      const m = createRigidArmModel(rig.arm);
      const d = createActuatedArmData(m);
      const a = angles(v);
      const q = a.inp(numberList(v.q, 'q', m.joints, a.range.q));
      const qd = a.inp(numberList(v.qd, 'qd', m.joints, a.range.qd));
      const qdd = a.inp(numberList(v.qdd, 'qdd', m.joints, a.range.qdd));
      const tau = computeInverseDynamics(m, d, q, qd, qdd);
      print(
        { tau, M: computeMassMatrix(m, d, q), V: computeVelocityTerms(m, d, q, qd), G: computeGravity(m, d, q) },
        'model id',
        given(v, ['q', 'qd', 'qdd']),
      );
    },
  }),
  fd: sub({
    summary: 'forward dynamics: qdd = M^-1 (tau - V - G + E)',
    usage: 'model fd --rig F --q a,b --qd a,b --tau a,b [--force fx,fy] [--friction] [--deg]',
    options: {
      ...rigOpt,
      q: { type: 'string', arg: 'a,b', help: 'joint angles' },
      qd: { type: 'string', arg: 'a,b', help: 'joint velocities' },
      tau: { type: 'string', arg: 'a,b', help: 'joint torques [N m]' },
      force: { type: 'string', arg: 'fx,fy', help: 'external force at the endpoint [N], enters as J^T F' },
      friction: { type: 'boolean', help: "include the rig's nominal viscous and Coulomb friction" },
      ...degOpt,
    },
    run(v) {
      const rig = rigOf(v);
      const m = createRigidArmModel(rig.arm);
      const a = angles(v);
      const q = a.inp(numberList(v.q, 'q', m.joints, a.range.q));
      const qd = a.inp(numberList(v.qd, 'qd', m.joints, a.range.qd));
      const tau = numberList(v.tau, 'tau', m.joints, TORQUE);
      const ext: ExternalLoads = {};
      if (v.force !== undefined) ext.endpointForce = numberList(v.force, 'force', 2, FORCE);
      if (v.friction) Object.assign(ext, rig.friction);
      const total = tau.slice();
      if (Object.keys(ext).length) {
        const e = externalTorquesOf(rig, q, qd, ext);
        for (let i = 0; i < total.length; i++) total[i]! += e[i]!; // one or two joints (m.joints)
      }
      print(
        { qdd: a.out(computeForwardDynamics(m, createActuatedArmData(m), q, qd, total)) },
        'model fd',
        given(v, ['q', 'qd', 'tau', 'force']),
      );
    },
  }),
  fk: sub({
    summary: 'forward kinematics: elbow, endpoint and centres of mass (with velocities and accelerations)',
    usage: 'model fk --rig F --q a,b [--qd a,b] [--qdd a,b] [--deg]',
    options: {
      ...rigOpt,
      q: { type: 'string', arg: 'a,b', help: 'joint angles' },
      qd: { type: 'string', arg: 'a,b', help: 'joint velocities (default 0)' },
      qdd: { type: 'string', arg: 'a,b', help: 'joint accelerations (default 0)' },
      ...degOpt,
    },
    run(v) {
      const rig = rigOf(v);
      const n = rig.joints;
      const a = angles(v);
      const q = a.inp(numberList(v.q, 'q', n, a.range.q));
      const qd = v.qd !== undefined ? a.inp(numberList(v.qd, 'qd', n, a.range.qd)) : new Array(n).fill(0);
      const qdd = v.qdd !== undefined ? a.inp(numberList(v.qdd, 'qdd', n, a.range.qdd)) : new Array(n).fill(0);
      const fk = forwardKinematics(rig.arm, q, qd, qdd);
      const out: Record<string, unknown> = {};
      if (fk.elbow) out.elbow = fk.elbow.position;
      out.endpoint = fk.endpoint.position;
      out.com = fk.com.map((c) => c.position);
      out.theta = a.out(fk.theta);
      out.velocity = {
        ...(fk.elbow ? { elbow: fk.elbow.velocity } : {}),
        endpoint: fk.endpoint.velocity,
        com: fk.com.map((c) => c.velocity),
      };
      out.acceleration = {
        ...(fk.elbow ? { elbow: fk.elbow.acceleration } : {}),
        endpoint: fk.endpoint.acceleration,
        com: fk.com.map((c) => c.acceleration),
      };
      if (n === 2) {
        const t = endpointAcceleration(twoLinkArm(rig), q, qd, qdd);
        out.endpointAccelerationTerms = { tangential: t.tangential, centripetal: t.centripetal, coriolis: t.coriolis };
      }
      const rigid = createRigidArmModel(rig.arm);
      out.energy = computeEnergy(rigid, createActuatedArmData(rigid), q, qd);
      print(out, 'model fk', given(v, ['q', 'qd', 'qdd']));
    },
  }),
  ik: sub({
    summary: 'inverse kinematics (analytic): both elbow solutions, and q for --elbow',
    usage: 'model ik --rig F --xy x,y [--elbow down|up] [--deg]',
    options: {
      ...rigOpt,
      xy: { type: 'string', arg: 'x,y', help: 'endpoint position [m]' },
      elbow: { type: 'string', arg: 'down|up', help: "'down': alpha2 >= 0 (seed 002's solution, default); 'up': alpha2 <= 0" },
      ...degOpt,
    },
    run(v) {
      const rig = rigOf(v);
      const xy = numberList(v.xy, 'xy', 2, POSITION);
      const elbow = choiceArg(v.elbow, 'elbow', ['down', 'up'] as const, 'down');
      const a = angles(v);
      const inputs = given(v, ['xy']);
      if (rig.joints !== 2) {
        print({ q: a.out([inverseKinematics1(rig.arm, xy)]) }, 'model ik', inputs);
        return;
      }
      // Both elbow solutions (they coincide on the boundary of the workspace); `q` is the --elbow one.
      const p = twoLinkArm(rig);
      const down = a.out(inverseKinematics(p, xy, 'down'));
      const up = a.out(inverseKinematics(p, xy, 'up'));
      print({ q: elbow === 'down' ? down : up, elbow, solutions: { down, up } }, 'model ik', inputs);
    },
  }),
  jacobian: sub({
    summary: 'endpoint Jacobian J, its determinant, and Jdot, v = J qd, Jdot qd with --qd',
    usage: 'model jacobian --rig F --q a,b [--qd a,b] [--deg]',
    options: {
      ...rigOpt,
      q: { type: 'string', arg: 'a,b', help: 'joint angles' },
      qd: { type: 'string', arg: 'a,b', help: 'joint velocities (adds Jdot and the endpoint velocity)' },
      ...degOpt,
    },
    run(v) {
      const rig = rigOf(v);
      const p = twoLinkArm(rig);
      const a = angles(v);
      const q = a.inp(numberList(v.q, 'q', 2, a.range.q));
      const J = jacobian(p, q);
      const out: Record<string, unknown> = { J, det: J[0][0] * J[1][1] - J[0][1] * J[1][0] };
      if (v.qd !== undefined) {
        const qd = asPair(a.inp(numberList(v.qd, 'qd', 2, a.range.qd)), '--qd');
        const Jd = jacobianDot(p, q, qd);
        out.Jdot = Jd;
        out.endpointVelocity = [J[0][0] * qd[0] + J[0][1] * qd[1], J[1][0] * qd[0] + J[1][1] * qd[1]];
        out.JdotQd = [Jd[0][0] * qd[0] + Jd[0][1] * qd[1], Jd[1][0] * qd[0] + Jd[1][1] * qd[1]];
      }
      print(out, 'model jacobian', given(v, ['q', 'qd']));
    },
  }),
};

function externalTorquesOf(rig: Rig, q: number[], qd: number[], ext: ExternalLoads): number[] {
  return externalTorques(rig.arm, q, qd, ext, new Array<number>(rig.joints).fill(0));
}

export function modelCommand(argv: readonly string[]): number {
  const sub = argv[0];
  const names = Object.keys(MODEL);
  if (sub === undefined || sub === '--help' || sub === '-h' || sub === 'help') {
    process.stdout.write(
      `twolink model: the arm's physics from a rig file, as one JSON object on stdout\n\n` +
        Object.values(MODEL)
          .map((s) => `  twolink ${s.usage}\n      ${s.summary}`)
          .join('\n') +
        `\n\nAngles in radians (or degrees with --deg), lengths in m, torques in N m. twolink model SUB --help for details.\n`,
    );
    return sub === undefined ? 2 : 0;
  }
  const cmd = MODEL[sub];
  if (!cmd) throw new UsageError(`model: unknown subcommand "${sub}" (one of ${names.join(', ')})`);
  return cmd.main(argv.slice(1), `model ${sub}`);
}

// ---------------------------------------------------------------------------------------------

const TRAJ_OPTIONS = {
  ...rigOpt,
  ...TRAJECTORY_OPTIONS,
  rate: { type: 'string', arg: 'HZ', help: 'sample rate (default 100)' },
  ...degOpt,
  ...helpOpt,
} as const satisfies OptionSpecs;

/** Most samples one `traj` prints (about 200 MB of NDJSON). */
const MAX_TRAJ_SAMPLES = 1_000_000;

export async function trajCommand(argv: readonly string[]): Promise<number> {
  const { values: v, positionals } = parse(argv, TRAJ_OPTIONS, 'traj');
  if (v.help) {
    process.stdout.write(
      formatHelp(
        'traj',
        'a minimum-jerk trajectory as NDJSON, one sample per line: {"t","q","qd","qdd","qddd","endpoint"}',
        'traj --rig F --space joint|endpoint --from .. --to .. --duration S --rate HZ [--via ..]... [--elbow down|up]\n       twolink traj --rig F --file path.json --rate HZ',
        TRAJ_OPTIONS,
        'Joint space takes angles (rad, or deg with --deg); endpoint space takes x,y [m]. --duration is per segment.\n' +
          'Example: twolink traj --rig rigs/seed-arm.json --space endpoint --from 0.98,0 --to 0.5,0.5 --duration 1 --rate 100',
      ),
    );
    return 0;
  }
  noPositionals(positionals, 'traj', 'every value goes with its option, e.g. --from 0,0');
  // The trajectory code and the trajectory file's schema load only for this command.
  const [{ loadTrajectoryArg }, { writeLines }] = await Promise.all([import('./traj-args.js'), import('./output.js')]);
  const rig = rigOf(v);
  const traj = loadTrajectoryArg(rig, v);
  const rate = numberArg(v.rate, 'rate', { default: 100, min: 1e-3, max: 1e5, unit: 'Hz' });
  const a = angles(v);
  const n = Math.round(traj.duration * rate);
  if (n > MAX_TRAJ_SAMPLES) {
    throw new UsageError(`traj: ${traj.duration} s at --rate ${rate} Hz is ${n} samples: at most ${MAX_TRAJ_SAMPLES} (a lower --rate)`);
  }
  const lines: string[] = [];
  const ep = [0, 0];
  for (let k = 0; k <= n; k++) {
    const s = traj.sample(k / rate);
    armEndpoint(rig.arm, s.q, ep);
    const sample = { t: s.t, q: a.out(s.q), qd: a.out(s.qd), qdd: a.out(s.qdd), qddd: a.out(s.qddd), endpoint: ep };
    const bad = nonFinitePath(sample);
    if (bad)
      throw new UsageError(
        `traj: ${bad} is not finite at t = ${s.t.toFixed(4)} s: the trajectory is singular there (keep it inside the workspace)`,
      );
    lines.push(JSON.stringify(sample));
    if (lines.length >= 4096) await writeLines(process.stdout, lines.splice(0), false);
  }
  await writeLines(process.stdout, lines, false);
  return 0;
}
