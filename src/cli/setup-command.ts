/**
 * `twolink setup`: from a freshly wired arm to a rig file that matches it. A guided sequence (the
 * board, the encoders by hand, the zero against gravity, one small pulse per motor), each step pass /
 * warn / fail with its evidence and the exact fix, then the corrected rig file and what changed.
 * `--mock` runs on the rig file's simulated arm in virtual time, wired wrong on purpose with
 * `--wiring`; its "hand" turns the joints when setup asks.
 */
import { copyFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { loadRig, parseJsonText, resolveRig, type Rig } from '../config/load.js';
import { parseRigFile } from '../config/rig.js';
import type { MockWiring } from '../rig/wiring.js';
import { runSetup, SetupStopped, type Hand, type SetupOutcome } from '../setup/driver.js';
import { TerminalOperator, PersonHand } from '../setup/operator.js';
import { correctedRigFile, describeChanges, type RigChange } from '../setup/rigfile.js';
import type { BoardEvidence, StepResult } from '../setup/steps.js';
import { probeLineBoard } from '../setup/probe.js';
import type { Clock } from '../time/clock.js';
import { LinkError, type Link } from '../transport/link.js';
import { formatHelp, numberArg, parse, stringArg, UsageError, type OptionSpecs } from './args.js';
import { WIRING_OPTION, wiringArg, wiringHelp } from './wiring-arg.js';

const OPTIONS = {
  rig: { type: 'string', arg: 'FILE', help: 'the rig file to check (a copy of rigs/bench-arm.json for a new arm)' },
  port: { type: 'string', arg: 'PATH', help: 'serial port of the board (e.g. /dev/ttyACM0)' },
  mock: { type: 'boolean', help: "the rig file's simulated arm, in virtual time (its hand turns the joints)" },
  baud: { type: 'string', arg: 'N', help: "baud rate (default: the rig file's link.baudRate)" },
  wiring: WIRING_OPTION,
  out: { type: 'string', arg: 'FILE', help: 'write the corrected rig file here (default: over --rig, after a backup FILE.bak)' },
  'pulse-duty': { type: 'string', arg: 'D', help: 'largest duty of the motor pulses, 0.02..0.6 (default 0.3)' },
  yes: { type: 'boolean', help: 'answer the prompts before motion (the steps that need your hands still wait for Enter on a real arm)' },
  json: { type: 'boolean', help: 'print one JSON object: each step {name, status, summary, evidence, fix, corrected}, the changes and the file written' },
  help: { type: 'boolean', short: 'h', help: 'this help' },
} as const satisfies OptionSpecs;

const HELP_MORE = `Before you start: power the board on with the arm hanging (joint 1 at -90 deg, joint 2 at 0 deg):
that is the pose the rig file's zeroDeg says the counts are zero in. Keep a hand near the power switch.

The steps: 1 the board (identity, protocol, counts per revolution); 2 the encoders, by hand, motors off
(turn each joint 90 deg counter-clockwise when asked: the right input must count, the right way, about
the right amount); 3 the zero against gravity (the hanging arm must read the hanging pose); 4 the
motors, one slow ramp of duty each that stops after a few degrees (the right joint must move, the
positive way). Then it writes the corrected rig file and lists the changes. Space or Esc is an e-stop
throughout; on any exit the motors get zero and the board confirms it.

Examples:
  twolink setup --rig my-arm.json --port /dev/ttyACM0
  twolink setup --rig rigs/mock-arm.json --mock --wiring swap-motors,reverse-encoder=2 --yes --out fixed.json

${wiringHelp()}

Exit codes: 0 rig file written, 1 a step failed in a way setup cannot correct (or the e-stop), 2 bad input, 3 connection problem.`;

/** What `--json` prints. */
interface SetupJson {
  steps: StepResult[];
  completed: boolean;
  stopped: string | null;
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

/** The link for setup: its handshake accepts the board's own counts per revolution, since setup checks them itself. */
async function makeLink(rig: Rig, stream: import('node:stream').Duplex, name: string, baudRate: number, clock: Clock, drive: <T>(p: Promise<T>) => Promise<T>): Promise<{ link: Link; board: BoardEvidence }> {
  const info = await drive(probeLineBoard(stream, clock, rig.joints, rig.link.handshakeMs));
  const { LineLink } = await import('../transport/line-link.js');
  const cpr = info?.cpr ?? rig.encoders.map((e) => e.countsPerRev);
  const link = new LineLink({ stream, name, baudRate, clock, encoders: cpr.map((c) => ({ countsPerRev: c, sign: 1, zero: 0 })), watchdogMs: rig.link.watchdogMs, handshakeMs: rig.link.handshakeMs });
  const board: BoardEvidence = info
    ? { firmware: info.fw, board: info.board, protocol: String(info.proto), joints: info.joints, countsPerRev: info.cpr }
    : { firmware: '?', board: '?', protocol: '?', joints: rig.joints, countsPerRev: cpr };
  return { link, board };
}

async function openMock(rig: Rig, wiring: MockWiring | undefined): Promise<Opened> {
  const { VirtualClock, runUntilSettled } = await import('../time/clock.js');
  const { createMockRig } = await import('../rig/mock-rig.js');
  const { MockHand } = await import('../setup/mock-hand.js');
  const clock = new VirtualClock();
  const mock = createMockRig(rig, clock, wiring ? { wiring } : {});
  const stream = await mock.openStream();
  const drive = <T>(p: Promise<T>): Promise<T> => runUntilSettled(clock, p, { stepS: 0.001, maxS: 3600, maxRealMs: 3_600_000 });
  const { link, board } = await makeLink(rig, stream, mock.path, rig.link.baudRate, clock, drive);
  return {
    link,
    board,
    clock,
    hand: new MockHand(mock.plant, clock),
    drive,
    close: async () => {
      await drive(link.close());
      mock.dispose();
    },
  };
}

async function openPort(rig: Rig, path: string, baudRate: number): Promise<Opened> {
  const { RealClock } = await import('../time/clock.js');
  const { openSerialPort } = await import('../transport/open.js');
  const clock = new RealClock();
  const stream = await openSerialPort(path, baudRate);
  const drive = <T>(p: Promise<T>): Promise<T> => p;
  const { link, board } = await makeLink(rig, stream, path, baudRate, clock, drive);
  return { link, board, clock, hand: undefined, drive, close: () => link.close() };
}

/** Writes the corrected rig file (validated first), after a backup when it replaces the input. */
function writeRig(rigPath: string, out: string | undefined, file: Record<string, unknown>): { path: string; backup: string | null } {
  const target = out ?? rigPath;
  resolveRig(parseRigFile(file, target), target);
  let backup: string | null = null;
  if (resolve(target) === resolve(rigPath)) {
    let k = 0;
    do backup = `${rigPath}.bak${k === 0 ? '' : k}`;
    while (existsSync(backup) && ++k);
    copyFileSync(rigPath, backup);
  }
  writeFileSync(target, `${JSON.stringify(file, null, 2)}\n`);
  return { path: target, backup };
}

export async function setupCommand(argv: readonly string[]): Promise<number> {
  const { values: v, positionals } = parse(argv, OPTIONS, 'setup');
  if (v.help) {
    process.stdout.write(formatHelp('setup', 'find wiring mistakes step by step (encoders, zero, motors) and write the rig file that matches the arm', 'setup --rig F (--port PATH | --mock [--wiring LIST]) [--out G] [--yes] [--json]', OPTIONS, HELP_MORE));
    return 0;
  }
  if (positionals.length) throw new UsageError(`setup: unexpected argument "${positionals[0]}" (see twolink setup --help)`);
  const rigPath = stringArg(v.rig, 'rig', 'the rig file of the arm, e.g. --rig my-arm.json (a copy of rigs/bench-arm.json)');
  const rig = loadRig(rigPath);
  const raw = parseJsonText(readFileSync(rigPath, 'utf8'), rigPath) as Record<string, unknown>;
  if (v.port !== undefined && v.mock) throw new UsageError('give either --port or --mock, not both');
  if (v.port === undefined && !v.mock) throw new UsageError('say where the arm is: --port PATH (the board) or --mock (the simulated rig of the rig file)');
  if (v.mock && !rig.plant) throw new UsageError(`${rig.file} has no "plant" section, so there is nothing to simulate: use a mock rig file (rigs/mock-arm.json) or --port`);
  if (rig.link.transport !== 'line') throw new UsageError(`${rig.file}: setup speaks twolink's line protocol; with Firmata ("link.transport": "firmata") check the wiring with the pins in the firmata section (docs/firmata.md)`);
  const wiring = wiringArg(v.wiring, rig.joints, v.mock === true);
  const out = typeof v.out === 'string' ? v.out : undefined;
  const pulseMaxDuty = numberArg(v['pulse-duty'], 'pulse-duty', { default: 0.3, min: 0.02, max: 0.6 });
  const baudRate = numberArg(v.baud, 'baud', { default: rig.link.baudRate, min: 300, max: 4_000_000, integer: true });
  const json = v.json === true;
  const operator = new TerminalOperator({ yes: v.yes === true, quiet: false, input: process.stdin, err: process.stderr });
  let opened: Opened | undefined;
  let outcome: SetupOutcome | undefined;
  let stopped: string | null = null;
  let stoppedSteps: StepResult[] = [];
  try {
    opened = v.mock ? await openMock(rig, wiring) : await openPort(rig, v.port as string, baudRate);
    operator.say(`twolink setup: ${rig.name} on ${v.mock ? `the mock rig${wiring?.spec ? ` wired "${wiring.spec}"` : ''} (virtual time)` : `${String(v.port)} (real time)`}`);
    const hand = opened.hand ?? new PersonHand(operator);
    outcome = await opened.drive(runSetup({ rig, link: opened.link, board: opened.board, clock: opened.clock, operator, hand, options: { pulseMaxDuty } }));
  } catch (e) {
    if (e instanceof LinkError) {
      process.stderr.write(`twolink: ${e.message}\n`);
      return 3;
    }
    if (!(e instanceof SetupStopped)) throw e;
    stopped = e.message;
    stoppedSteps = e.steps;
    operator.say(`setup stopped: ${e.message}; the motors are off`);
  } finally {
    operator.dispose();
    if (opened) await opened.close().catch(() => undefined);
  }
  const steps = outcome?.steps ?? stoppedSteps;
  let written: { path: string; backup: string | null } | null = null;
  let changes: RigChange[] = [];
  if (outcome?.completed) {
    const c = correctedRigFile(raw, rig, outcome.findings);
    changes = c.changes;
    written = writeRig(rigPath, out, c.file);
    operator.say(changes.length ? `wrote ${written.path}${written.backup ? ` (the old one is ${written.backup})` : ''}; changed:` : `wrote ${written.path}: nothing to change`);
    for (const line of describeChanges(changes)) operator.say(`  ${line}`);
    operator.say(`next: twolink identify --rig ${written.path} ${v.mock ? '--mock' : `--port ${String(v.port)}`} --amplitude 0.3, then a first slow reach: twolink run --rig ${written.path} ${v.mock ? `--mock${wiring?.spec ? ` --wiring ${wiring.spec}` : ''}` : `--port ${String(v.port)}`} --traj reach`);
  } else if (!stopped) {
    operator.say('no rig file written: fix what failed above and run setup again');
  }
  if (json) {
    const j: SetupJson = { steps, completed: outcome?.completed ?? false, stopped, changes, rigFile: written?.path ?? null, backup: written?.backup ?? null, wiring: wiring?.spec ?? null, clock: v.mock ? 'virtual' : 'real' };
    process.stdout.write(`${JSON.stringify(j)}\n`);
  }
  return written ? 0 : 1;
}
