/**
 * `twolink sim`: the arm simulated at a fixed step (model/arm.ts). Its own module so that the
 * calculator (`twolink model`) does not load the integrators.
 */
import { checkWritablePath, closeFile, openForWrite, writeAll } from '../config/files.js';
import { simulate } from '../model/arm.js';
import { computeEnergy, createActuatedArmData, createRigidArmModel } from '../model/actuated.js';
import { INTEGRATORS } from '../model/integrate.js';
import type { ExternalLoads } from '../model/types.js';
import {
  choiceArg,
  FORCE_OPTION,
  formatHelp,
  noPositionals,
  numberArg,
  numberList,
  parse,
  UsageError,
  type OptionSpecs,
  type ParsedOf,
} from './args.js';
import { angles, degOpt, FORCE, given, helpOpt, print, rigOf, rigOpt, TORQUE } from './model-commands.js';

const SIM_OPTIONS = {
  ...rigOpt,
  q0: { type: 'string', arg: 'a,b', help: 'initial joint angles' },
  qd0: { type: 'string', arg: 'a,b', help: 'initial joint velocities (default 0)' },
  duration: { type: 'string', arg: 'S', help: 'simulated time [s]' },
  dt: { type: 'string', arg: 'S', help: 'integration step [s] (default 1e-4)' },
  integrator: { type: 'string', arg: 'NAME', help: `${INTEGRATORS.join(' | ')} (default rk4)` },
  torque: { type: 'string', arg: 'a,b', help: 'constant joint torques [N m] (default 0)' },
  force: { type: 'string', arg: 'fx,fy', help: 'constant force at the endpoint [N]' },
  friction: { type: 'boolean', help: "include the rig's nominal friction" },
  out: { type: 'string', arg: 'FILE', help: 'write the trajectory as NDJSON (t, q, qd, energy)' },
  rate: { type: 'string', arg: 'HZ', help: 'sample rate of --out (default 1000)' },
  // --force is the endpoint force here: the option to write over an existing --out has its own name.
  overwrite: FORCE_OPTION,
  ...degOpt,
  ...helpOpt,
} as const satisfies OptionSpecs;

/** Most integration steps one `sim` takes (--duration / --dt): about a minute of RK4. */
const MAX_SIM_STEPS = 50_000_000;

/** `twolink sim --help`. */
function simHelp(): string {
  return formatHelp(
    'sim',
    'simulate the arm (forward dynamics, fixed-step integration); the last stdout line is the final state',
    'sim --rig F --q0 a,b [--qd0 a,b] --duration S [--dt S] [--integrator rk4|semi-implicit|euler] [--torque a,b] [--out run.ndjson]',
    SIM_OPTIONS,
    'Example: twolink sim --rig rigs/seed-arm.json --q0=-1.2,0.5 --duration 5 --integrator rk4',
  );
}

/** The simulation's start, length, step, integrator and loads, from the options (`a`: the angle unit). */
function simulationArgs(v: ParsedOf<typeof SIM_OPTIONS>, rig: ReturnType<typeof rigOf>, a: ReturnType<typeof angles>, n: number) {
  const q0 = a.inp(numberList(v.q0, 'q0', n, a.range.q));
  const qd0 = v.qd0 !== undefined ? a.inp(numberList(v.qd0, 'qd0', n, a.range.qd)) : new Array<number>(n).fill(0);
  const duration = numberArg(v.duration, 'duration', { min: 0, max: 1e6, unit: 's' });
  const dt = numberArg(v.dt, 'dt', { default: 1e-4, min: 1e-7, max: 0.1, unit: 's' });
  if (duration / dt > MAX_SIM_STEPS) {
    throw new UsageError(
      `--duration ${duration} s at --dt ${dt} s is ${Math.round(duration / dt)} steps: at most ${MAX_SIM_STEPS} (a larger --dt or a shorter --duration)`,
    );
  }
  const integrator = choiceArg(v.integrator, 'integrator', INTEGRATORS, 'rk4');
  const torque = v.torque !== undefined ? numberList(v.torque, 'torque', n, TORQUE) : undefined;
  const external: ExternalLoads = {};
  if (v.force !== undefined) external.endpointForce = numberList(v.force, 'force', 2, FORCE);
  if (v.friction) Object.assign(external, rig.friction, { coulombVelocity: 1e-3 });
  return { q0, qd0, duration, dt, integrator, torque, external };
}

export async function simCommand(argv: readonly string[]): Promise<number> {
  const { values: v, positionals } = parse(argv, SIM_OPTIONS, 'sim');
  if (v.help) {
    process.stdout.write(simHelp());
    return 0;
  }
  noPositionals(positionals, 'sim', 'every value goes with its option, e.g. --duration 5');
  const rig = rigOf(v);
  const m = createRigidArmModel(rig.arm);
  const md = createActuatedArmData(m);
  const n = m.joints;
  const a = angles(v);
  const { q0, qd0, duration, dt, integrator, torque, external } = simulationArgs(v, rig, a, n);
  const rate = numberArg(v.rate, 'rate', { default: 1000, min: 1e-3, max: 1e6, unit: 'Hz' });
  const out = typeof v.out === 'string' ? v.out : undefined;
  if (out !== undefined)
    checkWritablePath(out, 'simulation output', {
      force: v.overwrite === true,
      forceFlag: '--overwrite',
      inputs: typeof v.rig === 'string' ? [v.rig] : [],
    });
  const every = Math.max(1, Math.round(1 / (rate * dt)));
  const inputs = given(v, ['q0', 'qd0', 'torque', 'force', 'integrator', 'dt']);
  const fd = out !== undefined ? openForWrite(out) : undefined;
  const lines: string[] = [];
  const flush = (): void => {
    if (fd !== undefined && lines.length) writeAll(fd, Buffer.from(`${lines.splice(0).join('\n')}\n`), out!);
  };
  if (fd !== undefined) lines.push(JSON.stringify({ t: 0, q: a.out(q0), qd: a.out(qd0), energy: computeEnergy(m, md, q0, qd0).total }));
  // Every sample (or every 1000 steps without --out) is checked: an integration that diverges (the
  // explicit Euler with a large step) stops there, saying so, instead of printing nulls.
  const check = (t: number, q: readonly number[], qd: readonly number[]): void => {
    if (q.every(Number.isFinite) && qd.every(Number.isFinite)) return;
    throw new UsageError(
      `sim: the state is not finite at t = ${t.toFixed(4)} s for ${inputs}: the ${integrator} integration diverged ` +
        `(a smaller --dt, or --integrator rk4)`,
    );
  };
  let res: ReturnType<typeof simulate>;
  try {
    res = simulate(m, {
      q0,
      qd0,
      duration,
      dt,
      integrator,
      ...(torque ? { torque } : {}),
      ...(Object.keys(external).length ? { external } : {}),
      every: fd !== undefined ? every : 1000,
      onSample: (t: number, q: readonly number[], qd: readonly number[]) => {
        check(t, q, qd);
        if (fd === undefined) return;
        lines.push(JSON.stringify({ t, q: a.out(q), qd: a.out(qd), energy: computeEnergy(m, md, q, qd).total }));
        if (lines.length >= 4096) flush();
      },
    });
    flush();
  } finally {
    if (fd !== undefined) closeFile(fd, out!);
  }
  check(res.t, res.q, res.qd);
  const e = computeEnergy(m, md, res.q, res.qd);
  print({ t: res.t, q: a.out(res.q), qd: a.out(res.qd), energy: e.total, kinetic: e.kinetic, potential: e.potential }, 'sim', inputs);
  return 0;
}
