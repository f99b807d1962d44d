/**
 * `twolink identify`: run a safe excitation on the arm (or the mock rig), record it, fit the arm's
 * base parameters, write an identified rig file, and compare the twin residual and the tracking error
 * before and after on a second trajectory. `--mock` runs in virtual time in this process (the same
 * loop, protocol and plant as `run --mock`, a minute of motion in a couple of seconds); `--port` runs
 * in real time with the loop in a worker, as `run` does. The last stdout line is JSON.
 */
import { existsSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { checkWritablePath, writeTextFile } from '../config/files.js';
import { loadRig, parseJsonObject, readConfigText, resolveRig, twoLinkArm, type Rig } from '../config/load.js';
import { preflight } from '../control/feasibility.js';
import { reflectedInertia } from '../control/motor.js';
import { Session } from '../run/session.js';
import { stopOnCrash } from '../run/crash.js';
import { bootloaderBaudRefusal } from '../config/cable.js';
import { designExcitation, ExcitationError, type Excitation, type ExcitationOptions } from '../identify/excitation.js';
import { FitError, type FitOptions, type FitTick } from '../identify/fit.js';
import {
  identify,
  plantParameters,
  runExcitation,
  RunError,
  validate,
  validationPath,
  type Identified,
  type RunPaths,
  type ValidationFigures,
} from '../identify/pipeline.js';
import { measured, measureFlaws, validateWithObserver, withFlaws, type JointFlaws, type ObserverRun } from '../identify/flaws.js';
import { parseRigFile } from '../config/rig.js';
import { readRecording, RecordingError } from '../identify/recording.js';
import { BASE_PARAMETERS, baseParameters, type BaseParameters } from '../identify/regressor.js';
import { RealizationError } from '../identify/rigfile.js';
import { replayTwinRmsDeg } from '../identify/replay.js';
import { virtualRun } from '../identify/virtual.js';
import { describeEvent } from '../control/events.js';
import { describeStop } from '../control/stop.js';
import type { MockWiring } from '../mock/wiring.js';
import type { Target } from '../run/target.js';
import { WIRING_OPTION, wiringArg, wiringHelp } from './wiring-arg.js';
import {
  checkPortArgs,
  choiceArg,
  FORCE_OPTION,
  formatHelp,
  numberArg,
  numberList,
  parse,
  UsageError,
  stringArg,
  type OptionSpecs,
  type ParsedOf,
} from './args.js';
import { needPlant, refuseBoth } from './target-arg.js';
import { NO_RT_OPTION, scopedMainRealtime, type ScopedRealtime } from './realtime-arg.js';
import { noRealtimeLine } from '../time/threads.js';

const DEG = 180 / Math.PI;

const OPTIONS = {
  rig: { type: 'string', arg: 'FILE', help: 'rig file (rigs/*.json): the nominal model, the motors, the limits' },
  mock: { type: 'boolean', help: "the rig file's simulated plant, in virtual time in this process" },
  port: { type: 'string', arg: 'PATH', help: 'serial port of the board (the real arm, in real time)' },
  baud: { type: 'string', arg: 'N', help: "baud rate (default: the rig file's link.baudRate)" },
  out: { type: 'string', arg: 'FILE', help: 'write the identified rig file here (arm, friction and motor 2 rotor inertia replaced)' },
  record: {
    type: 'string',
    arg: 'FILE',
    help: 'where to record the excitation, .ndjson (default: beside --out, NAME.excitation.ndjson for --out NAME.json; without --out runs/identify-excitation.ndjson when the working folder has runs/, else not kept)',
  },
  amplitude: { type: 'string', arg: 'F', help: 'fraction of the angle room and speed limits the excitation uses, 0.05..1 (default 0.6)' },
  duration: { type: 'string', arg: 'S', help: 'length of the excitation, 5..600 s (default 30)' },
  'max-frequency': { type: 'string', arg: 'HZ', help: 'highest excitation frequency, 0.1..5 Hz (default 1.5)' },
  centre: { type: 'string', arg: 'a,b', help: 'centre pose of the excitation [deg] (default: joint 1 near hanging, joint 2 straight)' },
  seed: { type: 'string', arg: 'N', help: 'seed of the excitation design (another seed, another trajectory; default 1)' },
  cutoff: { type: 'string', arg: 'HZ', help: 'zero-phase low-pass cutoff for velocities and accelerations (default 10 Hz)' },
  'command-lag': { type: 'string', arg: 'N', help: 'ticks from a command to the reading that reports it applied (default 1)' },
  estimator: { type: 'string', arg: 'iv|ls', help: 'instrumental variables (default) or plain least squares' },
  'no-validate': { type: 'boolean', help: 'skip the before/after validation runs' },
  'no-flaws': { type: 'boolean', help: "skip each joint's play sweep (the play, friction per direction and breakaway: docs/identify.md)" },
  wiring: WIRING_OPTION,
  yes: { type: 'boolean', help: 'with --port: start without the 5 s countdown' },
  'no-rt': NO_RT_OPTION,
  force: FORCE_OPTION,
  help: { type: 'boolean', short: 'h', help: 'this help' },
} as const satisfies OptionSpecs;

type IdentifyArgs = ParsedOf<typeof OPTIONS>;

const HELP_MORE = `Examples:
  twolink identify --rig rigs/mock-arm-far.json --mock --out identified.json
  twolink identify --rig rigs/bench-arm.json --port /dev/ttyACM0 --amplitude 0.4 --out bench-identified.json
  twolink identify --rig rigs/bench-arm.json run.ndjson --out bench-identified.json
  twolink identify --rig fixed.json --mock --wiring swap-motors --amplitude 0.3   (a rig file setup wrote for that miswired mock)

With a recording (RUN.ndjson) the fit uses it, and the validation runs on --mock or --port when one is
given, else replays the twin on the recording (no tracking figures then).
On a real arm: clear the workspace, start with a small --amplitude, keep a hand on the power switch
(docs/identify.md).

Exit codes: 0 done, 1 a run stopped by a fault or a fit that failed, 2 bad input, 3 connection problem.`;

/** What the command prints last. */
interface IdentifyJson {
  parameters: Record<string, { value: number; std: number; unit: string }>;
  validation:
    | (ValidationFigures & { trajectory: string; observerOn?: { before: ObserverRun; after: ObserverRun } })
    | (Omit<ValidationFigures, 'trackingRmsDegBefore' | 'trackingRmsDegAfter'> & {
        trackingRmsDegBefore: null;
        trackingRmsDegAfter: null;
        trajectory: string;
      })
    | null;
  fit: {
    conditionNumber: number;
    conditionNumberRaw: number;
    excitationConditionNumber: number | null;
    residualRmsNm: number[];
    torqueRmsNm: number[];
    samples: number;
    seconds: number;
    commandLag: number;
    cutoffHz: number;
    estimator: string;
  };
  /** Each joint's play sweep (null without --mock or --port, or with --no-flaws). */
  flaws: JointFlaws[] | null;
  nominal: BaseParameters;
  /** The mock plant's true base parameters (mock rigs only). */
  plant?: BaseParameters;
  rigFile: string | null;
  recording: string | null;
  clock: 'virtual' | 'real' | null;
}

function log(s: string): void {
  process.stderr.write(`${s}\n`);
}

/** Drives the mock rig in virtual time, wired as `--wiring` says (the rig file's wiring section maps it back). */
function mockRunner(wiring: MockWiring | undefined): RunPaths {
  return async (rig, paths, record) => {
    const r = await virtualRun(rig, paths, { ...(record ? { record } : {}), ...(wiring ? { wiring } : {}) });
    return { summary: r.summary, rows: r.rows };
  };
}

/** Drives the real arm in real time through a Session (the loop in a worker), stopping softly on Ctrl-C. */
function portRunner(target: Target, rt: boolean, mainRt: ScopedRealtime): RunPaths {
  return async (rig, paths, record) => {
    const rows: Float64Array[] = [];
    const session = new Session({
      rig,
      target,
      paths,
      cycle: false,
      park: true,
      feedforward: rig.control.feedforward,
      rateHz: rig.control.rateHz,
      injections: [],
      maxSeconds: 3600,
      rt,
      onRealtime: (granted, reason) =>
        log(
          granted
            ? "real-time scheduling: SCHED_FIFO granted to the loop's thread"
            : noRealtimeLine('twolink identify', `refused: ${reason ?? 'unknown'}`),
        ),
      ...(record ? { record } : {}),
      onRow: (row) => rows.push(Float64Array.from(row)),
      onReady: (d) => log(`connected: ${d}`),
      onEvent: (e) => {
        if (e.kind === 'state' && (e.state === 'fault' || e.state === 'estop')) log(describeEvent(e));
      },
    });
    let interrupts = 0;
    const onSignal = (sig: NodeJS.Signals): void => {
      interrupts++;
      session.send(
        interrupts === 1
          ? { kind: 'stop', reason: { kind: 'interrupted', signal: sig } }
          : { kind: 'estop', reason: { kind: 'estop', by: sig } },
      );
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    const offCrash = stopOnCrash(session); // a bug of twolink's on this thread: fault:internal (docs/safety.md)
    try {
      // This thread at SCHED_FIFO while the arm moves, not while the fit computes (scopedMainRealtime).
      await mainRt.enter();
      const result = await session.run().finally(() => mainRt.leave());
      if (result.error) throw new RunError(result.error.message, result.error.name === 'LinkError');
      return { summary: result.summary, rows };
    } finally {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      offCrash();
    }
  };
}

function excitationOptions(v: IdentifyArgs): ExcitationOptions {
  const o: ExcitationOptions = {
    amplitude: numberArg(v.amplitude, 'amplitude', { default: 0.6, min: 0.05, max: 1 }),
    duration: numberArg(v.duration, 'duration', { default: 30, min: 5, max: 600, unit: 's' }),
    maxFrequencyHz: numberArg(v['max-frequency'], 'max-frequency', { default: 1.5, min: 0.1, max: 5, unit: 'Hz' }),
    seed: numberArg(v.seed, 'seed', { default: 1, integer: true }),
  };
  if (v.centre !== undefined) o.centre = numberList(v.centre, 'centre', 2, { maxAbs: 720, unit: 'deg' }).map((d) => d / DEG);
  return o;
}

function fitOptions(v: IdentifyArgs): FitOptions {
  return {
    cutoffHz: numberArg(v.cutoff, 'cutoff', { default: 10, min: 1, max: 100, unit: 'Hz' }),
    commandLag: numberArg(v['command-lag'], 'command-lag', { default: 1, min: 1, max: 10, integer: true }),
    estimator: choiceArg(v.estimator, 'estimator', ['iv', 'ls'] as const, 'iv'),
  };
}

function describeExcitation(ex: Excitation): string {
  const f = (a: number[], k: number, d: number): string => a.map((x) => (x * k).toFixed(d)).join(', ');
  return (
    `${ex.path.description}\n` +
    `  reaches +-[${f(ex.peak.angle, DEG, 0)}] deg about [${f(ex.centre, DEG, 0)}] deg, speeds up to [${f(ex.peak.speed, DEG, 0)}] deg/s, ` +
    `nominal torque up to [${f(ex.peak.torque, 1, 2)}] N m`
  );
}

function parameterTable(fit: ReturnType<typeof identify>['fit'], nominal: BaseParameters, plant: BaseParameters | undefined): string {
  const head = `  ${'param'.padEnd(5)} ${'estimate'.padStart(11)} ${'+-std'.padStart(10)} ${'(%)'.padStart(7)} ${'nominal'.padStart(11)}${plant ? `${'plant'.padStart(11)} ${'error'.padStart(7)}` : ''}  unit`;
  const lines = BASE_PARAMETERS.map((b) => {
    const e = fit.parameters[b.key];
    const rel = e.value !== 0 ? `${((100 * e.std) / Math.abs(e.value)).toFixed(1)}%` : '-';
    const flag = e.fixed ? ' (not excited: nominal kept)' : e.atBound ? ' (at its bound 0)' : '';
    const truth = plant
      ? `${plant[b.key].toPrecision(4).padStart(11)} ${(plant[b.key] !== 0 ? `${((100 * (e.value - plant[b.key])) / Math.abs(plant[b.key])).toFixed(2)}%` : '-').padStart(7)}`
      : '';
    return `  ${b.key.padEnd(5)} ${e.value.toPrecision(5).padStart(11)} ${e.std.toPrecision(2).padStart(10)} ${rel.padStart(7)} ${nominal[b.key].toPrecision(4).padStart(11)}${truth}  ${b.unit}${flag}`;
  });
  return [head, ...lines].join('\n');
}

/** Where the data come from and where the results go, checked before anything moves. */
interface Plan {
  rig: Rig;
  rigPath: string;
  raw: Record<string, unknown>;
  recordingIn: string | undefined;
  target: Target | undefined;
  wiring: MockWiring | undefined;
  out: string | undefined;
  record: string | undefined;
  exOpts: ExcitationOptions;
  fitOpts: FitOptions;
  run: RunPaths | undefined;
  clock: 'virtual' | 'real' | null;
}

/**
 * Where the excitation is recorded when --record is not given: beside --out (NAME.excitation.ndjson for
 * --out NAME.json), else in runs/ when the working folder has one (the repo's), else nowhere (said).
 * Never loose in the working folder.
 */
function defaultRecord(out: string | undefined): string | undefined {
  if (out !== undefined) return join(dirname(out), `${basename(out).replace(/\.json$/i, '')}.excitation.ndjson`);
  return existsSync('runs') && statSync('runs').isDirectory() ? join('runs', 'identify-excitation.ndjson') : undefined;
}

function plan(v: IdentifyArgs, positionals: readonly string[]): Plan {
  // The arguments first (bad ones are refused before any file is looked at), then the files.
  const rigPath = stringArg(v.rig, 'rig', 'a rig file, e.g. --rig rigs/mock-arm-far.json');
  if (positionals.length > 1)
    throw new UsageError(`identify: one recording at most, got ${positionals.length} (${positionals.join(', ')})`);
  const recordingIn = positionals[0];
  refuseBoth(v);
  checkPortArgs(v);
  if (!recordingIn && v.port === undefined && !v.mock)
    throw new UsageError('say where the data come from: --mock (the simulated rig), --port PATH (the arm) or a recording RUN.ndjson');
  const exOpts = excitationOptions(v);
  const fitOpts = fitOptions(v);
  const baudRate = v.baud !== undefined ? numberArg(v.baud, 'baud', { min: 300, max: 4_000_000, integer: true }) : undefined;
  const out = typeof v.out === 'string' ? v.out : undefined;
  if (out !== undefined && resolve(out) === resolve(rigPath))
    throw new UsageError(`--out ${out}: that is the rig file being identified; write the identified rig to a new file`);
  const given = typeof v.record === 'string' ? v.record : undefined;
  if (given !== undefined && recordingIn)
    throw new UsageError(`--record ${given}: the data come from ${recordingIn}; there is no excitation to record`);
  if (given !== undefined && !given.endsWith('.ndjson'))
    throw new UsageError(`--record ${given}: the excitation is recorded as NDJSON: give a file ending in .ndjson`);
  const record = given ?? (recordingIn ? undefined : defaultRecord(out));
  if (out !== undefined && record !== undefined && resolve(out) === resolve(record))
    throw new UsageError(`--out and --record name the same file (${out}): give two files`);
  const rig = loadRig(rigPath);
  twoLinkArm(rig);
  const raw = parseJsonObject(readConfigText(rigPath), rigPath);
  const wiring = wiringArg(v.wiring, rig.joints, v.mock === true);
  let target: Target | undefined;
  if (typeof v.port === 'string') {
    target = { kind: 'port', path: v.port, ...(baudRate !== undefined ? { baudRate } : {}) };
    const bootloader = bootloaderBaudRefusal(rig.cable, target.baudRate ?? rig.link.baudRate);
    if (bootloader)
      throw new UsageError(
        `${v.baud !== undefined ? '--baud' : 'link.baudRate'} ${target.baudRate ?? rig.link.baudRate}: ${rig.file}: ${bootloader}`,
      );
  } else if (v.mock) {
    needPlant(rig, 'rigs/mock-arm-far.json');
    target = { kind: 'mock' };
  }
  // Output paths are checked before the arm moves: a typo in a folder name must not cost the run.
  const rules = { force: v.force === true, inputs: [rigPath, ...(recordingIn ? [recordingIn] : [])], motion: target !== undefined };
  if (out !== undefined) checkWritablePath(out, 'identified rig file', rules);
  if (record !== undefined) checkWritablePath(record, 'recording', rules);
  const run: RunPaths | undefined = target
    ? target.kind === 'mock'
      ? mockRunner(wiring)
      : portRunner(target, v['no-rt'] !== true, scopedMainRealtime('twolink identify', v['no-rt'] === true, log))
    : undefined;
  const clock = target ? (target.kind === 'mock' ? 'virtual' : 'real') : null;
  return { rig, rigPath, raw, recordingIn, target, wiring, out, record, exOpts, fitOpts, run, clock };
}

/** The data: the excitation run on the arm, or the recording given. */
async function collect(p: Plan, v: IdentifyArgs): Promise<{ ticks: FitTick[]; excitation: Excitation | undefined }> {
  try {
    if (p.recordingIn) {
      const rec = await readRecording(p.recordingIn);
      log(`fitting ${p.recordingIn}: ${rec.ticks.length} ticks`);
      return { ticks: rec.ticks, excitation: undefined };
    }
    const excitation = designExcitation(p.rig, p.exOpts);
    preflight(p.rig, [excitation.path], { what: () => 'the excitation' });
    log(`excitation: ${describeExcitation(excitation)}`);
    const target = p.target!;
    if (target.kind === 'port' && !v.yes) {
      log('the arm will move over that range: clear the workspace; Ctrl-C stops softly, twice e-stops. Starting in 5 s...');
      await new Promise((r) => setTimeout(r, 5000));
    }
    const where =
      target.kind === 'port'
        ? `${target.path} (real time)`
        : `the mock rig of ${p.rig.name}${p.wiring ? ` wired "${p.wiring.spec}"` : ''} (virtual time)`;
    log(
      `running the excitation on ${where}, ${p.record !== undefined ? `recording to ${p.record}` : 'not recorded (give --record FILE.ndjson, or --out: the recording goes beside it)'}`,
    );
    return { ticks: await runExcitation(p.rig, p.run!, excitation, p.record), excitation };
  } catch (e) {
    if (e instanceof ExcitationError || e instanceof RecordingError) throw new UsageError(e.message);
    throw e;
  }
}

/** The fit and the identified rig, or undefined (said why) when there is none. */
function fit(p: Plan, ticks: readonly FitTick[]): ReturnType<typeof identify> | undefined {
  try {
    return identify(p.rig, p.raw, ticks, p.fitOpts, p.out ?? 'identified rig');
  } catch (e) {
    if (e instanceof FitError) {
      if (p.recordingIn) throw new UsageError(`${p.recordingIn}: ${e.message}`);
      log(`twolink: ${e.message}`);
      return undefined;
    }
    if (e instanceof RealizationError) {
      log(`twolink: the fit gives no physical arm, so no rig file: ${e.message} (excite more: a larger --amplitude or --duration)`);
      return undefined;
    }
    throw e;
  }
}

function reportFit(
  p: Plan,
  id: ReturnType<typeof identify>,
  excitation: Excitation | undefined,
  nominal: BaseParameters,
  plant: BaseParameters | undefined,
): void {
  const fit = id.fit;
  log(
    `fit: ${fit.samples} samples from ${fit.seconds.toFixed(1)} s in ${fit.segments} segment(s); ${fit.estimator === 'iv' ? 'instrumental variables' : 'least squares'}, ` +
      `cutoff ${fit.cutoffHz} Hz, command lag ${fit.commandLag}; regressor condition number ${fit.condition.toFixed(1)} (columns scaled; ${fit.conditionRaw.toFixed(0)} in SI units)` +
      `${excitation ? `, excitation's by design ${excitation.condition.toFixed(1)}` : ''}; residual RMS [${fit.residualRmsNm.map((x) => x.toFixed(4)).join(', ')}] N m ` +
      `of [${fit.torqueRmsNm.map((x) => x.toFixed(3)).join(', ')}] N m`,
  );
  log(parameterTable(fit, nominal, plant));
  if (
    id.rigFile.encoders &&
    JSON.stringify(id.rigFile.friction) !== JSON.stringify({ viscous: [fit.theta[5], fit.theta[6]], coulomb: [fit.theta[7], fit.theta[8]] })
  ) {
    log("  (the friction written is the play sweeps', not fv and fc above: the excitation's fit folds stiction and play into them)");
  }
  if (p.out !== undefined) {
    writeTextFile(p.out, `${JSON.stringify(id.rigFile, null, 2)}\n`);
    log(`wrote ${p.out}: arm ${JSON.stringify(id.rigFile.arm)}, friction ${JSON.stringify(id.rigFile.friction)}`);
  }
}

/** Twin residual and tracking before and after: a second trajectory on the arm, or the twin replayed on the recording. */
async function validation(
  p: Plan,
  id: ReturnType<typeof identify>,
  ticks: readonly FitTick[],
): Promise<NonNullable<IdentifyJson['validation']>> {
  if (p.run) {
    const vp = validationPath(p.rig, p.exOpts);
    preflight(p.rig, [vp.path], { what: () => 'the validation trajectory' });
    log(`validation: ${vp.path.description}, with the old and the identified rig (feedforward + PID, no disturbance observer)`);
    const figures = await validate(p.rig, id.rig, p.run, vp.path);
    log(
      'validation with the disturbance observer as run uses it (on unless the rig file says otherwise), the identified rig with its measured play and friction',
    );
    const observerOn = await validateWithObserver(p.rig, id.rig, p.run, vp.path);
    return { ...figures, trajectory: vp.path.description, observerOn };
  }
  log('validation: the twin replayed on the recording with the old and the identified rig (no second run without --mock or --port)');
  const lag = id.fit.commandLag;
  return {
    twinRmsDegBefore: replayTwinRmsDeg(p.rig, ticks, lag),
    twinRmsDegAfter: replayTwinRmsDeg(id.rig, ticks, lag),
    trackingRmsDegBefore: null,
    trackingRmsDegAfter: null,
    trajectory: `replay of ${p.recordingIn} (the data the fit used)`,
  };
}

function toJson(
  p: Plan,
  id: ReturnType<typeof identify>,
  excitation: Excitation | undefined,
  nominal: BaseParameters,
  plant: BaseParameters | undefined,
  valid: IdentifyJson['validation'],
  flaws: JointFlaws[] | null,
): IdentifyJson {
  const fit = id.fit;
  return {
    parameters: Object.fromEntries(
      BASE_PARAMETERS.map((b) => [b.key, { value: fit.parameters[b.key].value, std: fit.parameters[b.key].std, unit: b.unit }]),
    ),
    validation: valid,
    fit: {
      conditionNumber: fit.condition,
      conditionNumberRaw: fit.conditionRaw,
      excitationConditionNumber: excitation ? excitation.condition : null,
      residualRmsNm: fit.residualRmsNm,
      torqueRmsNm: fit.torqueRmsNm,
      samples: fit.samples,
      seconds: fit.seconds,
      commandLag: fit.commandLag,
      cutoffHz: fit.cutoffHz,
      estimator: fit.estimator,
    },
    flaws,
    nominal,
    ...(plant ? { plant } : {}),
    rigFile: p.out ?? null,
    recording: p.recordingIn ?? p.record ?? null,
    clock: p.clock,
  };
}

/** One joint's sweep in words, with the mock plant's figures beside it. */
function flawLine(f: JointFlaws, rig: Rig): string {
  if (!measured(f)) return `  joint ${f.joint + 1}: not measured: ${f.skipped}`;
  const n = (x: number, d = 3): string => (Number.isFinite(x) ? x.toFixed(d) : '-');
  const p = rig.plant;
  const j = f.joint;
  const truth = p
    ? `\n    plant: play ${n((p.backlash?.[j] ?? 0) * DEG, 2)} deg, Coulomb ${n(p.coulomb[j]!, 4)} N m, viscous ${n(p.viscous[j]!, 4)} N m s/rad, breakaway ${n(p.breakaway?.[j] ?? p.coulomb[j]!)} N m`
    : '';
  return (
    `  joint ${j + 1}: play ${n(f.playDeg, 2)} deg (+-${n(f.playStdDeg, 2)}), Coulomb ccw ${n(f.coulombNm[0], 4)} / cw ${n(f.coulombNm[1], 4)} N m, ` +
    `viscous ${n(f.viscousNms, 4)} N m s/rad, breakaway ccw ${n(f.breakawayNm[0])} / cw ${n(f.breakawayNm[1])} N m (${f.starts.join('/')} starts), ` +
    `gravity x${n(f.gravityScale)} of the nominal, residual ${n(f.residualRmsNm, 4)} N m${truth}`
  );
}

/** Each joint's play sweep on the arm (not from a recording, not with --no-flaws), folded into the identified rig. */
async function withMeasuredFlaws(p: Plan, v: IdentifyArgs, fitted: Identified): Promise<{ id: Identified; flaws: JointFlaws[] | null }> {
  if (!p.run || v['no-flaws']) return { id: fitted, flaws: null };
  const flaws = await measureFlaws(p.rig, p.run, {}, (path) => {
    preflight(p.rig, [path], { what: () => `the play sweep of ${path.name}` });
    log(`play sweep: ${path.description} (feedforward + PID, no disturbance observer)`);
  });
  log(
    `the flaws (slow sweeps through hanging, motor-side encoders and the duty; docs/identify.md):\n${flaws.map((f) => flawLine(f, p.rig)).join('\n')}`,
  );
  const label = p.out ?? 'identified rig';
  const rigFile = withFlaws(fitted.rigFile, p.rig, flaws);
  return { id: { ...fitted, rigFile, rig: resolveRig(parseRigFile(rigFile, label), label) }, flaws };
}

function observerLines(o: { before: ObserverRun; after: ObserverRun }): string {
  const f = (a: number[] | null, d = 3): string => (a ? a.map((x) => x.toFixed(d)).join(', ') : '-');
  const one = (what: string, r: ObserverRun): string =>
    `  ${what}: ${describeStop(r.stop)}; encoder RMS [${f(r.encoderRmsDeg)}] deg, link RMS [${f(r.linkRmsDeg)}] deg${r.linkRmsDeg ? '' : ' (unknown on a real arm)'}, duty reversals [${f(r.reversalsPerS, 1)}] /s`;
  return `with the observer on:\n${one('nominal rig   ', o.before)}\n${one('identified rig', o.after)}`;
}

const HELP_LINE =
  "fit the arm's masses, inertias and friction from an excitation run (or a recording), write an identified rig file, and validate it";
const USAGE =
  'identify --rig F (--mock [--wiring LIST] | --port PATH | RUN.ndjson) [--out FILE] [--record FILE] [--amplitude F] [--duration S]';

export async function identifyCommand(argv: readonly string[]): Promise<number> {
  const { values: v, positionals } = parse(argv, OPTIONS, 'identify');
  if (v.help) {
    process.stdout.write(formatHelp('identify', HELP_LINE, USAGE, OPTIONS, `${HELP_MORE}\n\n${wiringHelp()}`));
    return 0;
  }
  const p = plan(v, positionals);
  try {
    const { ticks, excitation } = await collect(p, v);
    const fitted = fit(p, ticks);
    if (!fitted) return 1;
    const { id, flaws } = await withMeasuredFlaws(p, v, fitted);
    const nominal = baseParameters(twoLinkArm(p.rig), p.rig.motors.slice(0, 2).map(reflectedInertia), p.rig.friction);
    const plant = plantParameters(p.rig);
    reportFit(p, id, excitation, nominal, plant);
    let valid: IdentifyJson['validation'] = null;
    if (!v['no-validate']) {
      valid = await validation(p, id, ticks);
      const f = (a: number[] | null): string => (a ? a.map((x) => x.toFixed(3)).join(', ') : '-');
      log(`twin residual RMS [deg]: before [${f(valid.twinRmsDegBefore)}], after [${f(valid.twinRmsDegAfter)}]`);
      log(`tracking RMS [deg]:      before [${f(valid.trackingRmsDegBefore)}], after [${f(valid.trackingRmsDegAfter)}]`);
      if ('observerOn' in valid && valid.observerOn) log(observerLines(valid.observerOn));
    }
    process.stdout.write(`${JSON.stringify(toJson(p, id, excitation, nominal, plant, valid, flaws))}\n`);
    return 0;
  } catch (e) {
    if (e instanceof RunError) {
      log(`twolink: ${e.message}`);
      return e.connection ? 3 : 1;
    }
    throw e;
  }
}
