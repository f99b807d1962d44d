/**
 * `twolink tune`: per joint a relay test, the frequency response from a chirp, PID gains for a
 * target crossover scheduled over the elbow, and a validation that measures the crossover and the
 * margins achieved; steps with pass / warn / fail, evidence and fix, as `twolink setup` reports
 * them, with its e-stop (space or Esc). The gains go into a copy of the rig file (with the changes
 * and why), the figures into --plot DIR. `--mock` runs on the rig file's simulated arm in virtual time.
 */
import { existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import {
  checkWritableFolder,
  checkWritablePath,
  errnoText,
  FileError,
  MAX_CONFIG_BYTES,
  readTextFile,
  writeTextFile,
} from '../config/files.js';
import { basename, join } from 'node:path';
import { bootloaderBaudRefusal, runCable } from '../config/cable.js';
import { loadRig, parseJsonObject, resolveRig, type Rig } from '../config/load.js';
import { parseRigFile } from '../config/rig.js';
import { SetupStopped } from '../setup/driver.js';
import { TerminalOperator } from '../setup/operator.js';
import { LinkError } from '../transport/link.js';
import type { OpenedMock } from '../tune/mock.js';
import type { TuneOutcome } from '../tune/driver.js';
import { tuneJson, type TuneJson } from '../tune/summary.js';
import { decimal } from '../config/decimal.js';
import {
  FORCE_OPTION,
  formatHelp,
  noPositionals,
  numberArg,
  type OptionSpecs,
  parse,
  type ParsedOf,
  stringArg,
  UsageError,
} from './args.js';
import { portOrMock } from './target-arg.js';
import { NO_RT_OPTION, realtimeMainThread } from './realtime-arg.js';
import { realTimeCompute } from '../tune/realtime-compute.js';

const OPTIONS = {
  rig: { type: 'string', arg: 'FILE', help: 'the rig file of the arm (after twolink setup)' },
  port: { type: 'string', arg: 'PATH', help: 'serial port of the board (e.g. /dev/ttyACM0)' },
  mock: { type: 'boolean', help: "the rig file's simulated arm, in virtual time (with --rt: in real time)" },
  rt: {
    type: 'boolean',
    help: 'with --mock: real time, the simulated arm in a thread of its own as `twolink run --mock` runs it, SCHED_FIFO asked for (granted or not, said)',
  },
  'no-rt': NO_RT_OPTION,
  joint: { type: 'string', arg: '1|2|both', help: 'which joint to tune (default both)' },
  bandwidth: {
    type: 'string',
    arg: 'HZ',
    help: "target crossover [Hz] (default: the loop rate / 40, lowered to 85 % of the model's bound with the rig's velocity estimator when beyond it)",
  },
  out: {
    type: 'string',
    arg: 'FILE',
    help: "write the tuned rig file here (default runs/NAME.tuned.json when the current folder has runs/, else NAME.tuned.json in it; NAME the rig file's). Checked before any motion; an existing file only with --force (kept as FILE.bak)",
  },
  yes: { type: 'boolean', help: 'answer the prompt before motion' },
  json: { type: 'boolean', help: 'print one JSON object as the last line: {motionSeconds, joints: [...], out}' },
  plot: {
    type: 'string',
    arg: 'DIR',
    help: 'write the figures (Bode with the model and the margins, step response) as SVG into DIR (made if its parent exists; existing figures only with --force). Checked before any motion',
  },
  force: FORCE_OPTION,
  help: { type: 'boolean', short: 'h', help: 'this help' },
} as const satisfies OptionSpecs;

const HELP_MORE = `Per joint, about the pose the arm is in (the other joint held; every motion within 10 deg of it):
1 a relay test (Ku, Tu and the Ziegler-Nichols, Tyreus-Luyben and Cohen-Coon figures); 2 a log chirp
(0.5-50 Hz, at most a fifth of the loop rate, at most half the duty) under a light PD: the measured
response, its coherence and the rig's model fitted to it; 3 PID gains for the target crossover at three
elbow angles (phase margin >= 45 deg, gain margin >= 6 dB); 4 a closed-loop step and chirp that
measure the crossover and margins achieved. A bandwidth the loop's rate and delay cannot reach is
refused before any motion, with the bound.

Examples:
  twolink tune --rig rigs/mock-arm.json --mock --yes --plot tune-figures
  twolink tune --rig rigs/mock-arm.json --mock --rt --yes --json
  twolink tune --rig my-arm.json --port /dev/ttyACM0 --joint 2

Exit codes: 0 tuned and validated, 1 a step failed or the e-stop, 2 bad input (an output that cannot be
written is refused before any motion), a bandwidth out of reach or a write that failed after all, 3
connection problem.`;

/** What tune drives: the link, how to wait on it, and how to close it (the mock's clock and duties are the tests' and the bench's). */
type Opened = Pick<OpenedMock, 'link' | 'drive' | 'close'>;

async function openPort(rig: Rig, path: string): Promise<Opened> {
  const { compose } = await import('../run/compose.js');
  const c = await compose(rig, { kind: 'port', path });
  return { link: c.link, drive: c.drive, close: c.close };
}

/** The rig file's mock: in virtual time, or (`rt`) in real time in its own thread with SCHED_FIFO asked for. */
async function openMock(rig: Rig, rt: boolean, operator: { say(s: string): void }): Promise<Opened> {
  const m = await import('../tune/mock.js');
  if (!rt) return m.openTuneMock(rig);
  const r = await m.openTuneMockRealtime(rig, true);
  for (const [who, g] of Object.entries(r.rt ?? {}))
    operator.say(
      `real-time scheduling for the ${who}'s thread: ${g.granted ? `SCHED_FIFO ${g.priority}` : `not granted (${g.reason}); running without`}`,
    );
  return r;
}

/** Writes the tuned rig file (validated first), after a backup when it replaces an existing file (--force). FileErrors name the path. */
function writeRig(target: string, file: Record<string, unknown>): string | null {
  resolveRig(parseRigFile(file, target), target);
  let backup: string | null = null;
  if (existsSync(target) && statSync(target).isFile()) {
    let k = 0;
    do backup = `${target}.bak${k === 0 ? '' : k}`;
    while (existsSync(backup) && ++k);
    writeTextFile(backup, readTextFile(target, MAX_CONFIG_BYTES, 'rig file to back up'));
  }
  writeTextFile(target, `${JSON.stringify(file, null, 2)}\n`);
  return backup;
}

/** The figures tune writes for these joints (0-based), by name. */
function figureNames(joints: readonly number[]): string[] {
  return joints.flatMap((j) => [`bode-joint${j + 1}.svg`, `step-joint${j + 1}.svg`]);
}

async function writeFigures(dir: string, outcome: TuneOutcome, pose: number[], clock: string): Promise<string[]> {
  const { renderSvg } = await import('../record/plot-panels.js');
  const { bodeFigure, stepFigure } = await import('../tune/figures.js');
  try {
    mkdirSync(dir, { recursive: true });
  } catch (e) {
    throw new FileError(dir, `cannot make the folder: ${errnoText(e, true)}`, (e as NodeJS.ErrnoException).code);
  }
  const written: string[] = [];
  for (const t of outcome.joints) {
    if (!t.identified) continue;
    const bode = join(dir, `bode-joint${t.joint + 1}.svg`);
    writeTextFile(bode, await renderSvg(bodeFigure(t, clock)));
    written.push(bode);
    if (t.measured) {
      const step = join(dir, `step-joint${t.joint + 1}.svg`);
      writeTextFile(step, await renderSvg(stepFigure(t, pose[t.joint]!, clock)));
      written.push(step);
    }
  }
  return written;
}

/** Where the tuned rig file goes by default: runs/ when the working folder has one (the repo's), else the working folder; never beside the rig file. */
function defaultOut(rigPath: string): string {
  const name = `${basename(rigPath, '.json')}.tuned.json`;
  const runs = join(process.cwd(), 'runs');
  return existsSync(runs) && statSync(runs).isDirectory() ? join(runs, name) : join(process.cwd(), name);
}

/** What tune writes after the run. */
interface Results {
  out: string;
  plot: string | undefined;
  json: boolean;
  raw: Record<string, unknown>;
  rig: Rig;
  outcome: TuneOutcome;
  pose: number[];
  clockName: string;
  operator: TerminalOperator;
}

/**
 * The tuned rig file and the figures, after the run (their paths were checked before it). A write that
 * fails after all (the disk filled meanwhile) is said, and the gains still printed (--json): not lost.
 */
async function writeResults(r: Results): Promise<{ written: string | null; writeFailed: boolean }> {
  const { outcome, operator } = r;
  let written: string | null = null;
  let writeFailed = false;
  const said = (e: unknown): void => {
    if (!(e instanceof FileError)) throw e;
    writeFailed = true;
    process.stderr.write(`twolink: ${e.message}${r.json ? ' (the gains are in the JSON line)' : ''}\n`);
  };
  if (outcome.joints.some((t) => t.design && t.measured)) {
    const { tunedRigFile } = await import('../tune/rigfile.js');
    const { file, changes } = tunedRigFile(r.raw, r.rig, outcome, r.rig.joints > 1 ? ((r.pose[1] ?? 0) * 180) / Math.PI : 0);
    try {
      const backup = writeRig(r.out, file);
      written = r.out;
      operator.say(`wrote ${r.out}${backup ? ` (the old one is ${backup})` : ''}; changed:`);
    } catch (e) {
      said(e);
      operator.say('the tuned rig file was not written; the changes it holds:');
    }
    for (const c of changes) operator.say(`  ${c.field}: ${JSON.stringify(c.from)} -> ${JSON.stringify(c.to)} (${c.why})`);
  }
  if (r.plot !== undefined) {
    try {
      for (const f of await writeFigures(r.plot, outcome, r.pose, r.clockName)) operator.say(`figure: ${f}`);
    } catch (e) {
      said(e);
    }
  }
  return { written, writeFailed };
}

function parseJoints(v: unknown, n: number): number[] {
  if (v === undefined || v === 'both') return [...Array(n).keys()];
  const j = typeof v === 'string' ? decimal(v) : NaN;
  if (!Number.isInteger(j) || j < 1 || j > n)
    throw new UsageError(`--joint must be 1${n > 1 ? ', 2 or both' : ''} (got "${typeof v === 'string' ? v : JSON.stringify(v)}")`);
  return [j - 1];
}

/** `twolink tune --help`. */
function tuneHelp(): string {
  return formatHelp(
    'tune',
    "measure each joint's response and set the PID gains for a bandwidth, with the margins measured",
    'tune --rig F (--port P | --mock [--rt]) [--joint 1|2|both] [--bandwidth HZ] [--out G] [--yes] [--json] [--plot DIR]',
    OPTIONS,
    HELP_MORE,
  );
}

/** --port or --mock (with --rt), on a rig tune can drive: the line protocol, at a baud rate the board's bootloader leaves alone. */
function checkTuneTarget(v: ParsedOf<typeof OPTIONS>, rig: Rig): void {
  portOrMock(v, rig);
  if (v.rt && !v.mock) throw new UsageError('--rt goes with --mock (on a --port the arm is tuned in real time anyway)');
  const bootloader = v.port !== undefined ? bootloaderBaudRefusal(rig.cable, rig.link.baudRate) : undefined;
  if (bootloader) throw new UsageError(`link.baudRate ${rig.link.baudRate}: ${rig.file}: ${bootloader}`);
  if (rig.link.transport !== 'line')
    throw new UsageError(
      `${rig.file}: tune speaks twolink's line protocol (its commands apply at the board's next sample, a delay tune can model); not Firmata`,
    );
}

/**
 * The tuned rig file's path (--out) and the figures' folder (--plot), checked before anything moves. By
 * default into runs/ or the current directory, not beside the rig file: a run from a checkout must not
 * leave rigs/NAME.tuned.json in the tree.
 */
function checkOutputs(v: ParsedOf<typeof OPTIONS>, rigPath: string, joints: number[]): string {
  const out = typeof v.out === 'string' ? v.out : defaultOut(rigPath);
  const rules = { force: v.force === true, inputs: [rigPath], motion: true };
  checkWritablePath(out, 'tuned rig file', rules);
  if (typeof v.plot === 'string') checkWritableFolder(v.plot, figureNames(joints), 'figures', rules);
  return out;
}

/** The arguments, read and checked before anything is opened: the rig file, the joints, the bandwidth and the outputs. */
function prepare(v: ParsedOf<typeof OPTIONS>) {
  const rigPath = stringArg(v.rig, 'rig', 'the rig file of the arm, e.g. --rig my-arm.json');
  const rig = loadRig(rigPath);
  const raw = parseJsonObject(readFileSync(rigPath, 'utf8'), rigPath);
  checkTuneTarget(v, rig);
  const joints = parseJoints(v.joint, rig.joints);
  const rateHz = rig.control.rateHz;
  const bandwidthHz = numberArg(v.bandwidth, 'bandwidth', { default: rateHz / 40, min: 0.1, max: rateHz / 2 });
  // Every output is checked before anything moves.
  const out = checkOutputs(v, rigPath, joints);
  return { rig, raw, joints, rateHz, bandwidthHz, out };
}

/** What the run left: its outcome (none when it stopped), why it stopped (null: it was not), and the last pose. */
interface Tuned {
  outcome: TuneOutcome | undefined;
  stopped: string | null;
  pose: number[];
}

/**
 * Opens the arm, tunes it and closes it, the operator disposed either way: a stop (the e-stop) is said
 * and kept, with nothing to write; a lost link is said, and is exit 3.
 */
async function tuneArm(v: ParsedOf<typeof OPTIONS>, p: ReturnType<typeof prepare>, operator: TerminalOperator): Promise<Tuned | 3> {
  const { rig, joints, bandwidthHz, rateHz } = p;
  let opened: Opened | undefined;
  let outcome: TuneOutcome | undefined;
  let stopped: string | null = null;
  let pose: number[] = [];
  try {
    const { runTune } = await import('../tune/driver.js');
    opened = v.mock ? await openMock(rig, v.rt === true, operator) : await openPort(rig, stringArg(v.port, 'port', 'a serial port path'));
    // On a port tune's loop runs on this thread: real-time priority for it, as run asks for its loop's;
    // asked after the modules are loaded and the port opened, the start-up's second of CPU work, which
    // at SCHED_FIFO met the kernel's 5 % for normal threads (its fair server stopped the CPU's real-time
    // threads ~50 ms, the simulated board's with them: tune/realtime-compute.ts, docs/realtime.md).
    if (!v.mock) await realtimeMainThread('twolink tune', v['no-rt'] === true, (s) => operator.say(s));
    operator.say(
      `twolink tune: ${rig.name} on ${v.mock ? `the mock rig (${v.rt ? 'real time, its own thread' : 'virtual time'})` : `${String(v.port)} (real time)`}`,
    );
    outcome = await opened.drive(
      runTune({
        rig,
        link: opened.link,
        operator,
        options: { joints, bandwidthHz, explicit: v.bandwidth !== undefined, rateHz, cable: runCable(rig, v.mock === true) },
        onPose: (q) => (pose = q.slice()),
        ...(v.mock && !v.rt ? {} : { compute: realTimeCompute() }),
      }),
    );
  } catch (e) {
    if (e instanceof LinkError) {
      process.stderr.write(`twolink: ${e.message}\n`);
      return 3;
    }
    if (!(e instanceof SetupStopped)) throw e;
    stopped = e.message;
    operator.say(`tune stopped: ${e.message}; the motors are off`);
  } finally {
    if (opened) await opened.close().catch(() => undefined);
    operator.dispose();
  }
  return { outcome, stopped, pose };
}

/** The exit code: 2 for a write that failed after all or a bandwidth out of reach, 0 tuned and validated, else 1. */
function exitCode(outcome: TuneOutcome | undefined, stopped: string | null, writeFailed: boolean): number {
  if (writeFailed) return 2;
  if (outcome?.steps.some((s) => s.name === 'bandwidth' && s.status === 'fail')) return 2;
  return outcome?.completed && !stopped ? 0 : 1;
}

export async function tuneCommand(argv: readonly string[]): Promise<number> {
  const { values: v, positionals } = parse(argv, OPTIONS, 'tune');
  if (v.help) {
    process.stdout.write(tuneHelp());
    return 0;
  }
  noPositionals(positionals, 'tune', 'give the rig with --rig and the port with --port or --mock');
  const p = prepare(v);
  const clockName = v.mock ? (v.rt ? 'real time, mock rig' : 'virtual time, mock rig') : 'real time';
  if (v['no-rt'] && v.mock) throw new UsageError('--no-rt goes with --port (the mock is tuned in virtual time unless --rt)');
  // After every argument check: the operator takes the terminal (its signal handlers, stdin) until disposed.
  const operator = new TerminalOperator({ yes: v.yes === true, quiet: false, input: process.stdin, err: process.stderr });
  const tuned = await tuneArm(v, p, operator);
  if (tuned === 3) return 3;
  const { outcome, stopped, pose } = tuned;
  const { written, writeFailed } = outcome
    ? await writeResults({
        out: p.out,
        plot: typeof v.plot === 'string' ? v.plot : undefined,
        json: v.json === true,
        raw: p.raw,
        rig: p.rig,
        outcome,
        pose,
        clockName,
        operator,
      })
    : { written: null, writeFailed: false };
  if (v.json) {
    const j: TuneJson = outcome ? tuneJson(outcome, written) : { motionSeconds: 0, joints: [], out: null };
    process.stdout.write(`${JSON.stringify(j)}\n`);
  }
  return exitCode(outcome, stopped, writeFailed);
}
