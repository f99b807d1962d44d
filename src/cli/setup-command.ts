/**
 * `twolink setup`: from a freshly wired arm to a rig file that matches it. A guided sequence (the
 * board, the encoders by hand, the zero against gravity, the stops by hand, one small pulse per motor,
 * the motor constants, a gentle identification), each step pass /
 * warn / fail with its evidence and the exact fix, then the corrected rig file and what changed.
 * `--mock` runs on the rig file's simulated arm in virtual time, wired wrong on purpose with
 * `--wiring`; its "hand" turns the joints when setup asks.
 */
import type { Writable } from 'node:stream';
import type { BoardEnd, Place } from '../run/compose.js';
import { loadRig, parseJsonObject, readConfigText, resolveRig, type Rig } from '../config/load.js';
import { parseRigFile } from '../config/rig.js';
import type { MockWiring } from '../mock/wiring.js';
import { operatorStop, runSetup, SetupStopped, type Hand, type SetupOutcome } from '../setup/driver.js';
import { describeStop, type StopReason } from '../control/stop.js';
import { TerminalOperator, PersonHand, type SignalSource } from '../setup/operator.js';
import { FileError } from '../config/files.js';
import { checkOutFile, writeOutFile, type OutFile } from '../setup/out-file.js';
import { firstReach, SLOW, SPEED_FRACTION, TORQUE_FRACTION } from '../setup/first-reach.js';
import { GENTLE_EXCITATION, identifyStep, WELL_IDENTIFIED } from '../setup/identify-step.js';
import { playStep } from '../setup/play-step.js';
import type { RunPaths } from '../identify/pipeline.js';
import { correctedRigFile, describeChanges, type RigChange } from '../setup/rigfile.js';
import type { BoardEvidence, StepResult } from '../setup/steps.js';
import { bootOf, probeLineBoard } from '../setup/probe.js';
import type { LoopCommand } from '../control/commands.js';
import type { LineMock } from '../mock/line-mock.js';
import type { FirmataMock } from '../mock/firmata-mock.js';
import type { Clock, VirtualClock } from '../time/clock.js';
import { LinkError, type Link } from '../transport/link.js';
import { bootloaderBaudRefusal } from '../config/cable.js';
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
import { WIRING_OPTION, wiringArg, wiringHelp } from './wiring-arg.js';
import { NO_RT_OPTION, realtimeMainThread } from './realtime-arg.js';

const OPTIONS = {
  rig: { type: 'string', arg: 'FILE', help: 'the rig file to check (a copy of rigs/bench-arm.json for a new arm)' },
  port: { type: 'string', arg: 'PATH', help: 'serial port of the board (e.g. /dev/ttyACM0)' },
  mock: { type: 'boolean', help: "the rig file's simulated arm, in virtual time (its hand turns the joints)" },
  baud: { type: 'string', arg: 'N', help: "baud rate (default: the rig file's link.baudRate)" },
  wiring: WIRING_OPTION,
  out: {
    type: 'string',
    arg: 'FILE',
    help: 'write the corrected rig file here (default: over --rig, kept as FILE.bak); another file already there only with --force (kept as FILE.bak too). Checked before the arm moves',
  },
  force: FORCE_OPTION,
  'widen-limits': {
    type: 'boolean',
    help: "write soft limits wider than the rig file's when the stops allow it (without it, only your y at the question does; a narrower limit is kept)",
  },
  'pulse-duty': { type: 'string', arg: 'D', help: 'largest duty of the motor pulses, 0.02..0.6 (default 0.3)' },
  yes: { type: 'boolean', help: 'answer the prompts before motion (the steps that need your hands still wait for Enter on a real arm)' },
  'no-identify': { type: 'boolean', help: 'skip the gentle identification (the rig file keeps its masses and friction)' },
  'no-reach': { type: 'boolean', help: 'do not run the first slow reach with the rig file written' },
  'no-play': {
    type: 'boolean',
    help: "skip the play sweep (each joint slowly through hanging: the gearbox's play, written as encoders[].backlashDeg)",
  },
  'no-rt': NO_RT_OPTION,
  json: {
    type: 'boolean',
    help: 'print one JSON object: each step {name, status, summary, evidence, fix, corrected}, the changes and the file written',
  },
  help: { type: 'boolean', short: 'h', help: 'this help' },
} as const satisfies OptionSpecs;

type SetupArgs = ParsedOf<typeof OPTIONS>;

const HELP_MORE = `Before you start: power the board on with the arm hanging (joint 1 at -90 deg, joint 2 at 0 deg):
that is the pose the rig file's zeroDeg says the counts are zero in. Keep a hand near the power switch.

The steps: 1 the board (identity, protocol, counts per revolution); 2 the encoders, by hand, motors off
(turn each joint 90 deg counter-clockwise when asked: the right input must count, the right way, about
the right amount); 3 the zero against gravity (the hanging arm must read the hanging pose); 4 the
limits, by hand (each joint to its two mechanical stops: soft limits 5 deg inside them, never wider
than the rig file's unless you answer y or give --widen-limits); 5 the
motors, one slow ramp of duty each that stops after a few degrees (the right joint must move, the
positive way); 6 the motor constants (each joint servoed through +-25 deg about hanging at four speeds:
ke = kt from the speed per volt); 7 a gentle identification (only what it determines within 10% is
written; --no-identify skips it); 8 the first reach with the corrected rig: the built-in reach twice
as slow, within half the speed and 80% of the torque limits, the twin's alarm set to stop (--no-reach
skips it). Then it writes the corrected rig file (--out is checked before the arm first moves; a file
it replaces is kept as FILE.bak) and lists the changes. Space or Esc is an e-stop at every step and
every prompt: it ends setup (exit 1) with nothing written; Ctrl-C or SIGTERM end it the same way
(exit 130). On any exit the motors get zero and the board confirms it.

Examples:
  twolink setup --rig my-arm.json --port /dev/ttyACM0
  twolink setup --rig rigs/mock-arm.json --mock --wiring swap-motors,reverse-encoder=2 --yes --out fixed.json

${wiringHelp()}

Exit codes: 0 rig file written and the first reach done, 1 a step failed in a way setup cannot correct, the
first reach failed, the e-stop, or stdin closed at a prompt, 2 bad input (a rig file or --out that cannot
be used), 3 connection problem, 130 Ctrl-C or a signal (SIGINT, SIGTERM, SIGHUP).`;

/** What `--json` prints. */
interface SetupJson {
  steps: StepResult[];
  completed: boolean;
  /** Why setup stopped, in words (null: it was not stopped). */
  stopped: string | null;
  /** The same as a value, when the operator stopped it (the e-stop, a signal); null otherwise. */
  stop: StopReason | null;
  changes: RigChange[];
  rigFile: string | null;
  backup: string | null;
  wiring: string | null;
  clock: 'virtual' | 'real';
}

interface Opened {
  link: Link;
  board: BoardEvidence;
  clock: Clock;
  hand: Hand | undefined;
  /** Runs the setup promise to its end (virtual time for the mock). */
  drive<T>(p: Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/**
 * Setup's board (run/compose.ts): the end of the cable, then the link, whose handshake accepts the
 * board's own counts per revolution (probed first), since setup checks them itself.
 */
async function openBoard(
  rig: Rig,
  place: Place,
  clock: Clock,
  drive: <T>(p: Promise<T>) => Promise<T>,
): Promise<{ end: BoardEnd; link: Link; board: BoardEvidence }> {
  const { openLinked } = await import('../run/compose.js');
  let info: Awaited<ReturnType<typeof probeLineBoard>> | undefined;
  let cpr = rig.encoders.map((e) => e.countsPerRev);
  const { end, link } = await openLinked(rig, place, clock, async (opened) => {
    // The probe waits for a bootloader (a board the open reset) and says so; the link's handshake then need not.
    info = await drive(probeLineBoard(opened.stream, clock, rig.joints, rig.link.handshakeMs, bootOf(opened)));
    cpr = info?.cpr ?? cpr;
    return { encoders: cpr.map((c) => ({ countsPerRev: c, sign: 1, zero: 0 })), bootloaderMs: 0 };
  });
  const board: BoardEvidence = info
    ? { firmware: info.fw, board: info.board, protocol: String(info.proto), joints: info.joints, countsPerRev: info.cpr }
    : { firmware: '?', board: '?', protocol: '?', joints: rig.joints, countsPerRev: cpr };
  return { end, link, board };
}

async function openMock(rig: Rig, wiring: MockWiring | undefined, watch: SetupIo['watch']): Promise<Opened> {
  const { VirtualClock } = await import('../time/clock.js');
  const { driver, lineMockOf } = await import('../run/compose.js');
  const { MockHand } = await import('../setup/mock-hand.js');
  const clock = new VirtualClock();
  // Fixed steps of virtual time: setup also waits on the operator, not only on timers.
  const drive = driver(clock, 0.001);
  const { end, link, board } = await openBoard(rig, { kind: 'mock', ...(wiring ? { wiring } : {}) }, clock, drive);
  const mock = lineMockOf(end);
  watch?.(mock, clock);
  return {
    link,
    board,
    clock,
    hand: new MockHand(mock.plant, clock),
    drive,
    close: async () => {
      await drive(link.close());
      await end.dispose();
    },
  };
}

async function openPort(rig: Rig, path: string, baudRate: number): Promise<Opened> {
  const { RealClock } = await import('../time/clock.js');
  const clock = new RealClock();
  const drive = <T>(p: Promise<T>): Promise<T> => p;
  const { link, board } = await openBoard(rig, { kind: 'port', path, baudRate }, clock, drive);
  return { link, board, clock, hand: undefined, drive, close: () => link.close() };
}

/** Writes the corrected rig file (validated first) to the file checked up front, after a backup of what is there. */
function writeRig(out: OutFile, file: Record<string, unknown>): { path: string; backup: string | null } {
  resolveRig(parseRigFile(file, out.given), out.given);
  return writeOutFile(out, `${JSON.stringify(file, null, 2)}\n`);
}

/** Throws SetupStopped when the operator's signal has fired (the e-stop, Ctrl-C, a signal): nothing after it may run. */
function checkStopped(operator: TerminalOperator): void {
  if (operator.signal.aborted) throw SetupStopped.of(operator.signal.reason);
}

/** Why setup stopped, in words: the e-stop -> "the e-stop (space or Esc)". */
function stopWords(e: SetupStopped): string {
  switch (e.stop?.kind) {
    case 'estop':
      return 'the e-stop (space or Esc)';
    case 'interrupted':
      return e.stop.signal === 'SIGINT' ? 'Ctrl-C (SIGINT)' : `the signal ${e.stop.signal ?? ''}`.trim();
    default:
      return e.message;
  }
}

/** The e-stop a run gets when the operator stops setup: by the key, or by the signal. */
function operatorEstop(reason: unknown): StopReason {
  const stop = operatorStop(reason);
  return {
    kind: 'estop',
    by: stop.kind === 'interrupted' ? (stop.signal ?? 'signal') : stop.kind === 'estop' ? 'key' : describeStop(stop),
  };
}

/** Drives the arm along paths with a rig: the mock in virtual time (wired as --wiring), or the port through a Session (real time) with the e-stop key. */
function runner(
  v: SetupArgs,
  wiring: MockWiring | undefined,
  operator: TerminalOperator,
  baudRate: number,
  watch: SetupIo['watch'],
): RunPaths {
  if (v.mock) {
    return async (rig, paths) => {
      const { virtualRun, lineMock } = await import('../run/virtual.js');
      checkStopped(operator);
      let estop: (() => void) | undefined;
      // The e-stop, Ctrl-C or a signal: an e-stop of the loop (zero at once), not its soft stop.
      const onReady = ({ send }: { send: (c: LoopCommand) => void }): void => {
        estop = () => send({ kind: 'estop', reason: operatorEstop(operator.signal.reason) });
        if (operator.signal.aborted) estop();
        else operator.signal.addEventListener('abort', estop, { once: true });
      };
      try {
        let seen = false;
        const onTick = (_c: unknown, clock: VirtualClock, mock: LineMock | FirmataMock): void => {
          if (!seen) watch?.(lineMock({ mock }), clock);
          seen = true;
        };
        const r = await virtualRun(rig, paths, { ...(wiring ? { wiring } : {}), maxSeconds: 120, onReady, ...(watch ? { onTick } : {}) });
        return { summary: r.summary, rows: r.rows };
      } finally {
        if (estop) operator.signal.removeEventListener('abort', estop);
      }
    };
  }
  return async (rig, paths) => {
    const { Session } = await import('../run/session.js');
    checkStopped(operator);
    const rows: Float64Array[] = [];
    // The e-stop, Ctrl-C or a signal: zero at once; stopNow ends a loop thread that does not answer.
    const estop = (): void => session.stopNow({ kind: 'estop', reason: operatorEstop(operator.signal.reason) });
    const session = new Session({
      rig,
      target: { kind: 'port', path: stringArg(v.port, 'port', 'a serial port path'), baudRate },
      paths,
      cycle: false,
      park: true,
      feedforward: rig.control.feedforward,
      rateHz: rig.control.rateHz,
      injections: [],
      maxSeconds: 120,
      rt: v['no-rt'] !== true,
      onRow: (row) => rows.push(Float64Array.from(row)),
      onReady: () => operator.signal.aborted && estop(),
    });
    operator.signal.addEventListener('abort', estop, { once: true });
    const offCrash = (await import('../run/crash.js')).stopOnCrash(session); // a bug of twolink's on this thread: fault:internal (docs/safety.md)
    try {
      const r = await session.run();
      if (r.error?.name === 'LinkError') throw new LinkError(r.error.message, 'reach');
      return { summary: r.summary, rows };
    } finally {
      operator.signal.removeEventListener('abort', estop);
      offCrash();
    }
  };
}

/** The fields of `arm`, `friction` and `motors[1].rotorInertia` that identification changed in `after` against `before`. */
function identifiedChanges(before: Record<string, unknown>, after: Record<string, unknown>): RigChange[] {
  const out: RigChange[] = [];
  const flat = (o: unknown, prefix: string, into: Map<string, unknown>): Map<string, unknown> => {
    if (o !== null && typeof o === 'object')
      for (const [k, x] of Object.entries(o)) flat(x, Array.isArray(o) ? `${prefix}[${k}]` : `${prefix}.${k}`, into);
    else into.set(prefix, o);
    return into;
  };
  for (const key of ['arm', 'friction', 'motors']) {
    const a = flat(before[key], key, new Map());
    const b = flat(after[key], key, new Map());
    for (const [f, x] of b)
      if (JSON.stringify(a.get(f) ?? 0) !== JSON.stringify(x))
        out.push({ field: f, from: a.get(f) ?? null, to: x, step: 'identification' });
  }
  return out;
}

interface Written {
  written: { path: string; backup: string | null };
  changes: RigChange[];
  /** The identification's and the first reach's steps, as they ran. */
  steps: StepResult[];
}

interface Finish {
  v: SetupArgs;
  rig: Rig;
  raw: Record<string, unknown>;
  out: OutFile;
  outcome: SetupOutcome;
  operator: TerminalOperator;
  wiring: MockWiring | undefined;
  baudRate: number;
  /** The steps as they run (the caller reports them even when setup stops half way). */
  steps: StepResult[];
  watch: SetupIo['watch'];
}

function reportStep(operator: TerminalOperator, step: StepResult): void {
  operator.say(`[${step.status.toUpperCase()}] ${step.name}: ${step.summary}`);
  if (step.fix) operator.say(`       fix: ${step.fix}`);
}

/** Step 7: the gentle identification with the corrected rig; a stop during it ends setup (SetupStopped). */
async function identifyPhase(
  ctx: Finish,
  run: RunPaths,
  file: Record<string, unknown>,
): Promise<{ file: Record<string, unknown>; changes: RigChange[]; failed: boolean }> {
  const { operator } = ctx;
  operator.say(
    `Identification: a gentle excitation (${GENTLE_EXCITATION.amplitude! * 100}% of the angle room and speed limits, ${GENTLE_EXCITATION.duration} s) with the corrected rig; only the parameters it determines within ${WELL_IDENTIFIED * 100}% are written. Space or Esc stops.`,
  );
  await operator.confirm('the arm will move about hanging: clear it and press Enter');
  const id = await identifyStep(resolveRig(parseRigFile(file, ctx.out.given), ctx.out.given), file, run);
  ctx.steps.push(id.step);
  reportStep(operator, id.step);
  checkStopped(operator);
  return { file: id.file, changes: identifiedChanges(file, id.file), failed: id.stopped };
}

/** Step 7b: the play sweep of each joint with the corrected rig; a stop during it ends setup (SetupStopped). */
async function playPhase(
  ctx: Finish,
  run: RunPaths,
  file: Record<string, unknown>,
): Promise<{ file: Record<string, unknown>; changes: RigChange[]; failed: boolean }> {
  const { operator } = ctx;
  operator.say(
    'Play: each joint swept slowly 20 deg either side of hanging and back, the other held; the motor-side encoder and the duty show the gearbox play. Space or Esc stops.',
  );
  await operator.confirm('the arm will move about hanging: clear it and press Enter');
  const p = await playStep(resolveRig(parseRigFile(file, ctx.out.given), ctx.out.given), file, run);
  ctx.steps.push(p.step);
  reportStep(operator, p.step);
  checkStopped(operator);
  return { file: p.file, changes: p.changes, failed: p.stopped };
}

/** Step 8: the slow first reach with the corrected rig (before it is written); a stop during it ends setup (SetupStopped). */
async function reachPhase(ctx: Finish, run: RunPaths, file: Record<string, unknown>): Promise<void> {
  const { operator } = ctx;
  operator.say(
    `First reach: the built-in reach ${SLOW}x slower, within ${SPEED_FRACTION * 100}% of the speed and ${TORQUE_FRACTION * 100}% of the torque limits, with the corrected rig file; the twin's alarm stops it. Space or Esc stops.`,
  );
  await operator.confirm('the arm will move over its reach: clear it and press Enter');
  const reach = await firstReach(
    resolveRig(parseRigFile(file, ctx.out.given), ctx.out.given),
    async (rig, paths) => (await run(rig, paths)).summary,
  );
  ctx.steps.push(reach);
  reportStep(operator, reach);
  checkStopped(operator);
}

/**
 * Steps 7 and 8 (the identification, the first reach), then the rig file written. Every prompt and
 * run ends on the operator's signal with SetupStopped, and then nothing is written.
 */
async function finishSetup(ctx: Finish): Promise<Written> {
  const { v, operator, wiring } = ctx;
  const c = correctedRigFile(ctx.raw, ctx.rig, ctx.outcome.findings);
  const run = runner(v, wiring, operator, ctx.baudRate, ctx.watch);
  const first = ctx.steps.length;
  let file = c.file;
  let changes = c.changes;
  let failed = false;
  checkStopped(operator);
  if (!v['no-identify']) {
    const id = await identifyPhase(ctx, run, file);
    file = id.file;
    changes = [...changes, ...id.changes];
    failed = id.failed;
  }
  if (!v['no-play'] && !failed) {
    const p = await playPhase(ctx, run, file);
    file = p.file;
    changes = [...changes, ...p.changes];
    failed = p.failed;
  }
  if (!v['no-reach'] && !failed) await reachPhase(ctx, run, file);
  checkStopped(operator);
  const written = writeRig(ctx.out, file);
  const where = written.path === ctx.out.real ? written.path : `${written.path} (${ctx.out.real})`;
  operator.say(
    changes.length
      ? `wrote ${where}${written.backup ? ` (the old one is ${written.backup})` : ''}; changed:`
      : `wrote ${where}${written.backup ? ` (the old one is ${written.backup})` : ''}: nothing to change`,
  );
  for (const line of describeChanges(changes)) operator.say(`  ${line}`);
  const target = v.mock ? `--mock${wiring?.spec ? ` --wiring ${wiring.spec}` : ''}` : `--port ${String(v.port)}`;
  operator.say(`next: the reach at full speed, twolink run --rig ${written.path} ${target} --traj reach`);
  return { written, changes, steps: ctx.steps.slice(first) };
}

/** Where setup's text goes and where its input and signals come from (the process's; tests pass their own). */
export interface SetupIo {
  input: NodeJS.ReadStream;
  err: Writable;
  out: Writable;
  signals?: SignalSource;
  /** Shown each simulated rig `--mock` opens (setup's own, then each run's), with its clock: how a test watches the motors. */
  watch?: (mock: LineMock, clock: VirtualClock) => void;
}

const PROCESS_IO: SetupIo = { input: process.stdin, err: process.stderr, out: process.stdout };

/** The arguments, read and checked before anything is opened: the rig file (bounded read) and where the result goes. */
function prepare(v: SetupArgs) {
  const rigPath = stringArg(v.rig, 'rig', 'the rig file of the arm, e.g. --rig my-arm.json (a copy of rigs/bench-arm.json)');
  const rig = loadRig(rigPath);
  const raw = parseJsonObject(readConfigText(rigPath), rigPath);
  portOrMock(v, rig);
  if (rig.link.transport !== 'line')
    throw new UsageError(
      `${rig.file}: setup speaks twolink's line protocol; with Firmata ("link.transport": "firmata") check the wiring with the pins in the firmata section (docs/firmata.md)`,
    );
  const wiring = wiringArg(v.wiring, rig.joints, v.mock === true);
  const pulseMaxDuty = numberArg(v['pulse-duty'], 'pulse-duty', { default: 0.3, min: 0.02, max: 0.6 });
  const baudRate = numberArg(v.baud, 'baud', { default: rig.link.baudRate, min: 300, max: 4_000_000, integer: true });
  const bootloader = v.mock ? undefined : bootloaderBaudRefusal(rig.cable, baudRate);
  if (bootloader) throw new UsageError(`${v.baud !== undefined ? '--baud' : 'link.baudRate'} ${baudRate}: ${rig.file}: ${bootloader}`);
  // Before the arm first moves: where the rig file goes must take it.
  const out = checkOutFile(rigPath, typeof v.out === 'string' ? v.out : undefined);
  // Correcting --rig in place is setup's job (a backup kept); any other file is written over only when asked.
  if (out.exists && !out.isInput && v.force !== true)
    throw new FileError(
      out.given,
      'exists: the rig file setup writes would replace it; give --force to write over it (it is kept as .bak), or another file',
      'EEXIST',
    );
  return { rigPath, rig, raw, wiring, pulseMaxDuty, baudRate, out };
}

/** `twolink setup --help`. */
function setupHelp(): string {
  return formatHelp(
    'setup',
    'find wiring mistakes step by step (encoders, zero, limits, motors, motor constants, identification) and write the rig file that matches the arm',
    'setup --rig F (--port PATH | --mock [--wiring LIST]) [--out G] [--yes] [--widen-limits] [--no-identify] [--no-reach] [--json]',
    OPTIONS,
    HELP_MORE,
  );
}

/** What setup did: steps 1-6's outcome, what the rest wrote, and the stop that ended it (null: none). */
interface SetupRun {
  outcome: SetupOutcome | undefined;
  done: Written | undefined;
  stopped: SetupStopped | null;
}

/**
 * Steps 1-6, then (when they passed) the rest and the rig file, the operator disposed either way. A stop
 * is said and kept (nothing written); a lost link is said, and is exit 3.
 */
async function runSteps(
  v: SetupArgs,
  p: ReturnType<typeof prepare>,
  operator: TerminalOperator,
  steps: StepResult[],
  io: SetupIo,
): Promise<SetupRun | 3> {
  let outcome: SetupOutcome | undefined;
  let done: Written | undefined;
  let stopped: SetupStopped | null = null;
  try {
    outcome = await firstSteps(v, p, operator, steps, io.watch);
    if (outcome?.completed)
      done = await finishSetup({
        v,
        rig: p.rig,
        raw: p.raw,
        out: p.out,
        outcome,
        operator,
        wiring: p.wiring,
        baudRate: p.baudRate,
        steps,
        watch: io.watch,
      });
    else if (outcome) operator.say('no rig file written: fix what failed above and run setup again');
  } catch (e) {
    if (e instanceof LinkError) {
      io.err.write(`twolink: ${e.message}\n`);
      if (outcome)
        operator.say(
          'setup stopped: the link to the board was lost (the board stops the motors on its own when the host goes quiet); no rig file written',
        );
      return 3;
    }
    if (!(e instanceof SetupStopped)) throw e;
    stopped = e;
    operator.say(`setup stopped: ${stopWords(e)}; the motors are off; no rig file written`);
  } finally {
    operator.dispose();
  }
  return { outcome, done, stopped };
}

/** What `--json` prints: every step as it ran (those before a stop too), the changes and the file written. */
function setupJson(v: SetupArgs, wiring: MockWiring | undefined, steps: StepResult[], r: SetupRun): SetupJson {
  return {
    steps,
    completed: r.outcome?.completed ?? false,
    stopped: r.stopped?.message ?? null,
    stop: r.stopped?.stop ?? null,
    changes: r.done?.changes ?? [],
    rigFile: r.done?.written.path ?? null,
    backup: r.done?.written.backup ?? null,
    wiring: wiring?.spec ?? null,
    clock: v.mock ? 'virtual' : 'real',
  };
}

export async function setupCommand(argv: readonly string[], io: SetupIo = PROCESS_IO): Promise<number> {
  const { values: v, positionals } = parse(argv, OPTIONS, 'setup');
  if (v.help) {
    io.out.write(setupHelp());
    return 0;
  }
  noPositionals(positionals, 'setup', 'give the rig with --rig and the port with --port or --mock');
  const p = prepare(v);
  const operator = new TerminalOperator({
    yes: v.yes === true,
    quiet: false,
    input: io.input,
    err: io.err,
    ...(io.signals ? { signals: io.signals } : {}),
  });
  const steps: StepResult[] = [];
  const r = await runSteps(v, p, operator, steps, io);
  if (r === 3) return 3;
  if (v.json) io.out.write(`${JSON.stringify(setupJson(v, p.wiring, steps, r))}\n`);
  if (r.stopped?.stop?.kind === 'interrupted') return 130;
  return r.done && !r.done.steps.some((s) => s.status === 'fail') && r.stopped === null ? 0 : 1;
}

/** Steps 1-6 on the board (or the mock): the link opened, the steps run, the link closed with the motors at zero. */
async function firstSteps(
  v: SetupArgs,
  p: ReturnType<typeof prepare>,
  operator: TerminalOperator,
  steps: StepResult[],
  watch: SetupIo['watch'],
): Promise<SetupOutcome> {
  let opened: Opened | undefined;
  try {
    opened = v.mock
      ? await openMock(p.rig, p.wiring, watch)
      : await openPort(p.rig, stringArg(v.port, 'port', 'a serial port path'), p.baudRate);
    // On a port setup's steps drive the arm from this thread: real-time priority for it, as run asks for
    // its loop's; after start-up's CPU work (loading, opening), which at SCHED_FIFO can meet the kernel's
    // 5 % for normal threads (tune/realtime-compute.ts, docs/realtime.md).
    if (!v.mock) await realtimeMainThread('twolink setup', v['no-rt'] === true, (s) => operator.say(s));
    operator.say(
      `twolink setup: ${p.rig.name} on ${v.mock ? `the mock rig${p.wiring?.spec ? ` wired "${p.wiring.spec}"` : ''} (virtual time)` : `${String(v.port)} (real time)`}`,
    );
    const hand = opened.hand ?? new PersonHand(operator);
    const outcome = await opened.drive(
      runSetup({
        rig: p.rig,
        link: opened.link,
        board: opened.board,
        clock: opened.clock,
        operator,
        hand,
        options: { pulseMaxDuty: p.pulseMaxDuty, widenLimits: v['widen-limits'] === true },
      }),
    );
    steps.push(...outcome.steps);
    return outcome;
  } catch (e) {
    if (e instanceof SetupStopped) steps.push(...e.steps);
    throw e;
  } finally {
    if (opened) await opened.close().catch(() => undefined);
  }
}
