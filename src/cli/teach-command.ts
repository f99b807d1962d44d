/**
 * `twolink teach`: float the arm (src/control/float.ts) and record the motion a hand shows it on the
 * board's clock, then write a trajectory file `twolink run --traj` (or `twolink replay`) follows: the
 * dense path smoothed to what the motors can follow, plus the waypoints marked on the way
 * (src/identify/taught.ts).
 *
 * Keys on a terminal: r starts and stops recording, w marks a waypoint, e e-stops, q quits. Off a
 * terminal the same as stdin lines: `record`, `stop`, `mark [LABEL]`, `estop`, `quit`. With --mock and
 * --hand the scripted hand (src/mock/hand.ts) shows the motion: the recording spans its hold on the
 * arm, and teach ends by itself after it lets go.
 */
import { createInterface } from 'node:readline';
import { checkWritablePath, writeTextFile } from '../config/files.js';
import { loadRig, type Rig } from '../config/load.js';
import { floatSettings } from '../control/float.js';
import { buildTaught, type TeachRecording } from '../identify/taught.js';
import { handDuration, handPath, handPathSpan } from '../mock/hand.js';
import { isTwoLink, type Pair, type TwoLinkParams } from '../model/types.js';
import { Session, type SessionResult } from '../run/session.js';
import { stopOnCrash } from '../run/crash.js';
import type { Target } from '../run/target.js';
import { F } from '../telemetry/tick.js';
import {
  checkPortArgs,
  FORCE_OPTION,
  formatHelp,
  noPositionals,
  numberArg,
  parse,
  stringArg,
  UsageError,
  type OptionSpecs,
  type ParsedOf,
} from './args.js';
import { needPlant, refuseBoth } from './target-arg.js';
import { rigFileSha256 } from '../config/rig-hash.js';
import { bootloaderBaudRefusal } from '../config/cable.js';

const TEACH_OPTIONS = {
  rig: { type: 'string', arg: 'FILE', help: 'rig file (rigs/*.json); float needs an identified model (twolink identify)' },
  port: { type: 'string', arg: 'PATH', help: 'serial port of the board' },
  mock: { type: 'boolean', help: "the rig file's simulated plant (real time, no hardware)" },
  hand: {
    type: 'string',
    arg: 'circle|line|FILE',
    help: 'with --mock: a scripted hand shows the motion (a JSON file: {"points": [[x, y], ...], "seconds": S}) and teach ends after it lets go',
  },
  out: { type: 'string', arg: 'FILE', help: 'the trajectory file to write (e.g. demo.json)' },
  rate: { type: 'string', arg: 'HZ', help: "loop rate, 100..1000 (default: the rig file's control.rateHz)" },
  'max-seconds': { type: 'string', arg: 'S', help: 'stop after this long (default 600; with --hand: when the hand is done)' },
  json: { type: 'boolean', help: 'print the result as JSON (the last stdout line)' },
  'no-rt': { type: 'boolean', help: 'do not ask for real-time scheduling' },
  force: FORCE_OPTION,
  help: { type: 'boolean', short: 'h', help: 'this help' },
} as const satisfies OptionSpecs;

/** When the scripted hand takes hold [s of loop time]: after the soft start. */
const HAND_AT_S = 1;

/** Teach's recording: on while `on`, into `rec`. */
class Recording {
  on = false;
  readonly rec: TeachRecording = { t: [], q: [], marks: [] };
  private lastT = -1;
  row(r: Float64Array): void {
    if (!this.on || r[F.fresh] !== 1) return;
    const t = r[F.t]!;
    if (t <= this.lastT) return;
    this.lastT = t;
    this.rec.t.push(t);
    this.rec.q.push([r[F.q0]!, r[F.q1]!]);
  }
  /** Marks a waypoint at the last recorded sample; false (nothing marked) while not recording. */
  mark(label?: string): boolean {
    if (!this.on || this.lastT < 0) return false;
    this.rec.marks.push({ t: this.lastT, ...(label ? { label } : {}) });
    return true;
  }
}

function target(v: ParsedOf<typeof TEACH_OPTIONS>, rig: Rig): Target {
  checkPortArgs(v);
  refuseBoth(v);
  if (typeof v.port === 'string') {
    const bootloader = bootloaderBaudRefusal(rig.cable, rig.link.baudRate);
    if (bootloader) throw new UsageError(`link.baudRate ${rig.link.baudRate}: ${rig.file}: ${bootloader}`);
    return { kind: 'port', path: v.port };
  }
  if (!v.mock) throw new UsageError('say where the arm is: --port PATH or --mock');
  needPlant(rig);
  return { kind: 'mock' };
}

/** Keys on a terminal, lines off one: what each does. Returns the function that stops listening. */
function listen(act: (cmd: string, arg?: string) => void): () => void {
  const stdin = process.stdin;
  if (stdin.isTTY) {
    const keys: Record<string, string> = { r: 'r', w: 'w', e: 'e', q: 'q', '\u0003': 'q' };
    stdin.setRawMode(true);
    stdin.resume();
    const onData = (b: Buffer): void => {
      const cmd = keys[b.toString('utf8')];
      if (cmd) act(cmd);
    };
    stdin.on('data', onData);
    return () => {
      stdin.off('data', onData);
      stdin.setRawMode(false);
      stdin.pause();
    };
  }
  const rl = createInterface({ input: stdin });
  rl.on('line', (line) => {
    const [cmd, ...rest] = line.trim().split(/\s+/);
    if (cmd) act(cmd, rest.join(' ') || undefined);
  });
  return () => rl.close();
}

export async function teachCommand(argv: readonly string[]): Promise<number> {
  const { values: v, positionals } = parse(argv, TEACH_OPTIONS, 'teach');
  noPositionals(positionals, 'teach');
  if (v.help) {
    process.stdout.write(
      formatHelp(
        'teach',
        'float the arm and record a motion shown by hand; write a trajectory file that run --traj (or replay) follows',
        'teach --rig F (--port P | --mock [--hand circle|line|FILE]) --out demo.json [--max-seconds S] [--json]',
        TEACH_OPTIONS,
        'Keys: r record on/off, w mark a waypoint, e e-stop, q quit (off a terminal, stdin lines: record, stop, mark [LABEL], estop, quit).\n\nExit codes: 0 written, 1 nothing recorded, or the run ended by an e-stop or a fault (what was recorded is still written), 2 bad input, 3 connection problem.',
      ),
    );
    return 0;
  }
  const rig = loadRig(stringArg(v.rig, 'rig', 'a rig file, e.g. --rig rigs/mock-arm-identified.json'));
  if (!isTwoLink(rig.arm)) throw new UsageError('teach needs a two-link arm');
  const tgt = target(v, rig);
  const out = stringArg(v.out, 'out', 'the trajectory file to write, e.g. --out demo.json');
  if (v.hand !== undefined && tgt.kind !== 'mock')
    throw new UsageError('--hand needs --mock (the scripted hand is part of the simulated rig)');
  const hand = typeof v.hand === 'string' ? handArg(v.hand, rig.arm) : undefined;
  // The recording spans the hand's path (it takes the arm to the path's start first, as a person would before pressing r).
  const span = hand ? handPathSpan(hand) : undefined;
  const handRec = hand && span ? { from: HAND_AT_S + span.fromS, to: HAND_AT_S + span.toS } : undefined;
  const maxSeconds = numberArg(v['max-seconds'], 'max-seconds', {
    default: hand ? HAND_AT_S + handDuration(hand) + 2 : 600,
    min: 1,
    unit: 's',
  });
  const rateHz = numberArg(v.rate, 'rate', { default: rig.control.rateHz, min: 100, max: 1000, unit: 'Hz' });
  // The arguments first, then the output, before anything moves.
  checkWritablePath(out, 'trajectory file', {
    force: v.force === true,
    inputs: [rig.file, ...(typeof v.hand === 'string' && v.hand.endsWith('.json') ? [v.hand] : [])],
    motion: true,
  });
  return teach(rig, tgt, {
    out,
    hand: typeof v.hand === 'string' ? v.hand : undefined,
    handRec,
    maxSeconds,
    rateHz,
    json: v.json === true,
    rt: v['no-rt'] !== true,
  });
}

/**
 * Quitting teach: the law leaves float and takes the arm back to where teach began (FloatLaw.home);
 * the run stops once the arm is within 0.5 deg of there, a second after it was asked at the least,
 * or after 15 s of loop time anyway.
 */
class WayBack {
  private first: Pair | undefined;
  private lastT = -1;
  private since = -1;
  /** Starts the way back; false if no sample has come yet (nothing to go back to). */
  start(): boolean {
    if (!this.first) return false;
    this.since = this.lastT;
    return true;
  }
  /** Takes a row; true once, when the way back is done. */
  row(r: Float64Array): boolean {
    if (r[F.fresh] !== 1) return false;
    const t = r[F.t]!;
    this.first ??= [r[F.q0]!, r[F.q1]!];
    this.lastT = t;
    if (this.since < 0) return false;
    const tol = 0.5 * (Math.PI / 180);
    const near = Math.abs(r[F.q0]! - this.first[0]) < tol && Math.abs(r[F.q1]! - this.first[1]) < tol;
    if (!((near && t - this.since >= 1) || t - this.since >= 15)) return false;
    this.since = -1;
    return true;
  }
}

/** --hand: a built-in path or a file of points within the arm's reach. */
function handArg(text: string, arm: TwoLinkParams): ReturnType<typeof handPath> {
  try {
    return handPath(text, arm);
  } catch (e) {
    throw new UsageError(`--hand: ${e instanceof Error ? e.message : String(e)}`);
  }
}

interface TeachPlan {
  out: string;
  hand: string | undefined;
  /** With the scripted hand: when to record [s of loop time]. */
  handRec: { from: number; to: number } | undefined;
  maxSeconds: number;
  rateHz: number;
  json: boolean;
  rt: boolean;
}

/**
 * What teach's keys and commands do (r record, w waypoint, e e-stop, q back to the start then quit;
 * the words `record`, `stop`, `mark`, `estop`, `quit` likewise); `ending` is true once the run is ending.
 */
function teachActions(
  session: Session,
  recording: Recording,
  back: WayBack,
  o: TeachPlan,
  say: (s: string) => void,
): { act: (cmd: string, arg?: string) => void; ending: () => boolean } {
  let ending = false;
  function act(cmd: string, arg?: string): void {
    if (cmd === 'record' || cmd === 'r') {
      recording.on = cmd === 'record' ? true : !recording.on;
      say(recording.on ? 'recording' : 'recording stopped');
    } else if (cmd === 'stop') {
      recording.on = false;
      say('recording stopped');
    } else if (cmd === 'mark' || cmd === 'w') {
      if (recording.mark(arg)) say(`waypoint ${recording.rec.marks.length}${arg ? ` (${arg})` : ''}`);
      else
        say(
          `no waypoint: a waypoint marks a point of the motion being recorded, and nothing is${o.hand ? ' yet (the scripted hand starts recording when it begins the motion)' : ' (r starts recording)'}`,
        );
    } else if (cmd === 'estop' || cmd === 'e') {
      ending = true;
      recording.on = false;
      say('e-stop: the motors are off (what was recorded is still written)');
      session.stopNow({ kind: 'estop', reason: { kind: 'estop', by: 'teach' } });
    } else if ((cmd === 'quit' || cmd === 'q') && !ending) {
      ending = true;
      recording.on = false;
      if (!back.start()) return session.stopNow({ kind: 'stop', reason: { kind: 'done' } });
      say('going back to where teach began (q again: e-stop)');
      session.sendFloat('home');
    } else if (cmd === 'quit' || cmd === 'q') {
      act('estop');
    }
  }
  return { act, ending: () => ending };
}

async function teach(rig: Rig, tgt: Target, o: TeachPlan): Promise<number> {
  const say = (s: string): void => void (o.json ? undefined : process.stderr.write(`${s}\n`));
  const recording = new Recording();
  const back = new WayBack();
  const session = new Session({
    rig,
    target: tgt,
    paths: [
      {
        name: 'hold',
        description: 'float where the arm is',
        start: {},
        steps: [{ kind: 'hold', duration: Math.max(0.1, o.maxSeconds - 1) }],
      },
    ],
    cycle: false,
    park: false,
    feedforward: rig.control.feedforward,
    rateHz: o.rateHz,
    injections: o.hand ? [{ name: 'hand', value: o.hand, at: HAND_AT_S }] : [],
    maxSeconds: o.maxSeconds,
    rt: o.rt,
    float: floatSettings(rig),
    onRow: (row) => {
      const t = row[F.t]!;
      // With the scripted hand: record while it holds the arm, then end.
      if (o.handRec) {
        if (!recording.on && !ending() && t >= o.handRec.from && t < o.handRec.to) act('record');
        else if (recording.on && t >= o.handRec.to) act('quit');
      }
      recording.row(row);
      if (back.row(row)) session.stopNow({ kind: 'stop', reason: { kind: 'done' } });
    },
    onReady: (d) =>
      say(
        `connected: ${d}; floating: ${o.hand ? `the scripted hand (${o.hand}) shows the motion` : 'move the arm by hand; r record, w waypoint, e e-stop, q quit'}`,
      ),
  });
  const { act, ending } = teachActions(session, recording, back, o, say);
  // Keys work with the scripted hand too: it only shows the motion (w, e and q are still the operator's).
  const unlisten = listen(act);
  const onSig = (): void => act('quit');
  process.on('SIGINT', onSig);
  const offCrash = stopOnCrash(session); // a bug of twolink's on this thread: fault:internal (docs/safety.md)
  const result = await session.run().finally(() => {
    unlisten();
    process.off('SIGINT', onSig);
    offCrash();
  });
  return taughtEnd(result, rig, tgt, o, recording.rec);
}

/** After the run: the taught file written (when enough was recorded), and teach's exit code. */
function taughtEnd(result: SessionResult, rig: Rig, tgt: Target, o: TeachPlan, rec: TeachRecording): number {
  if (result.error) {
    process.stderr.write(`twolink: ${result.error.message}\n`);
    return result.error.name === 'LinkError' ? 3 : 1;
  }
  const stop = result.summary.stopReason;
  if (rec.t.length < 10) {
    process.stderr.write(`twolink: nothing recorded (the run ended: ${stop}); press r (or send "record") while you move the arm\n`);
    return 1;
  }
  writeTaught(rig, tgt, o, rec, stop);
  const kind = result.summary.stop.kind;
  return kind === 'estop' || kind === 'fault' ? 1 : 0;
}

/** Builds the taught file from the recording, writes it, and says what it is. */
function writeTaught(rig: Rig, tgt: Target, o: TeachPlan, rec: TeachRecording, stop: string): void {
  const taught = buildTaught(rig, rec, {
    target: tgt.kind === 'mock' ? 'mock' : tgt.path,
    name: o.out.replace(/^.*\//, '').replace(/\.json$/, ''),
    rigSha256: rigFileSha256(rig.file),
  });
  writeTextFile(
    o.out,
    `${JSON.stringify(taught.file, null, 1)}
`,
  );
  const [step] = taught.file.steps;
  if (!step || !('samples' in step)) throw new Error('teach: the taught file has no sampled step (identify/taught.ts writes one)');
  const report = {
    out: o.out,
    stopReason: stop,
    recordedS: taught.file.taught!.recordedS,
    samples: rec.t.length,
    controlPoints: step.samples.q.length,
    durationS: (step.samples.q.length + 1) * step.samples.dt,
    slowdown: taught.slowdown,
    waypoints: taught.file.waypoints?.length ?? 0,
    ...(taught.why ? { slowedBecause: taught.why } : {}),
  };
  if (o.json) process.stdout.write(`${JSON.stringify(report)}\n`);
  else {
    process.stdout.write(
      `taught: ${report.recordedS.toFixed(2)} s recorded (${report.samples} samples on the board's clock), ${report.waypoints} waypoint(s); ` +
        `wrote ${o.out}: ${report.controlPoints} points, ${report.durationS.toFixed(2)} s${taught.slowdown > 1 ? `, slowed down ${taught.slowdown}x (${taught.why})` : ''}\n` +
        `replay it: twolink replay ${o.out} --rig ${rig.file} ${tgt.kind === 'mock' ? '--mock' : `--port ${tgt.path}`}\n`,
    );
  }
}
