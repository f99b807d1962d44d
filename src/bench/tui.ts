/**
 * The dashboard's cost to the loop: the demo loop (the Session: worker thread, mock rig, real time)
 * runs once, with the dashboard off for 4 s, on (drawing at its normal 20 Hz into a fake 120 x 40 terminal) for
 * 8 s, and off again for 4 s, after a warm-up. Off-on-off keeps a slow drift of the machine's load
 * from looking like the dashboard's doing. Each row is counted in the phase its loop time falls in.
 */
import { describeStop, type StopReason } from '../control/stop.js';
import { Writable, PassThrough } from 'node:stream';
import blessed from 'blessed';
import { loadRig, type Rig } from '../config/load.js';
import { Session } from '../run/session.js';
import { F } from '../telemetry/tick.js';
import { builtinNames, builtinPath, type PathSpec } from '../model/builtins.js';
import { answeredRow, UsHistogram } from '../run/stats.js';
import { Dashboard } from '../tui/dashboard.js';
import { section, type BenchResult } from './report.js';

const RIG = 'rigs/mock-arm.json';

interface Phase {
  name: 'warm-up' | 'without' | 'with';
  /** Loop time where the phase starts [s]. */
  from: number;
}

interface PhaseStats {
  hist: UsHistogram;
  ticks: number;
  overruns: number;
  missed: number;
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** A terminal that swallows what is drawn on it (and counts the bytes). */
function fakeTerminal(cols: number, rows: number): { input: PassThrough; output: Writable; bytes: () => number } {
  let n = 0;
  const output = new Writable({
    write(chunk: Buffer, _enc, cb) {
      n += chunk.length;
      cb();
    },
  });
  Object.assign(output, { isTTY: true, columns: cols, rows });
  return { input: new PassThrough(), output, bytes: () => n };
}

/** On, off, in 2 s blocks: ABBA twice, so that a drift of the machine's load cancels out. */
const SCHEDULE: ('without' | 'with')[] = ['without', 'with', 'with', 'without', 'without', 'with', 'with', 'without'];
const BLOCK_MS = 2000;
const WARM_UP_MS = 2000;

/** What the dashboard drew: its frame times, frames and bytes written. */
interface Drawn {
  frameUs: UsHistogram;
  frames: number;
  bytes: number;
}

interface Measured extends Drawn {
  stats: Record<'without' | 'with', PhaseStats>;
  /** Process CPU time (all threads: the loop's worker, the main thread, GC) per wall second [s/s]. */
  cpu: Record<'without' | 'with', number>;
  stop: StopReason;
  ticks: number;
}

/** Rows counted by the phase their loop time falls in (the phases are pushed as the schedule runs). */
function rowCounter(phases: Phase[]): { stats: Record<'without' | 'with', PhaseStats>; onRow: (row: Float64Array) => void } {
  const fresh = (): PhaseStats => ({ hist: new UsHistogram(), ticks: 0, overruns: 0, missed: 0 });
  const stats = { without: fresh(), with: fresh() };
  let prevOverruns = 0;
  let prevMissed = 0;
  const onRow = (row: Float64Array): void => {
    const t = row[F.t]!;
    let phase = phases[0]!;
    for (const p of phases) if (t >= p.from) phase = p;
    const overruns = row[F.overruns]!;
    const missed = row[F.missed]!;
    if (phase.name !== 'warm-up') {
      const s = stats[phase.name];
      // Latency as the summary defines it (stats.ts, TimingFigures): answered samples only, not the zeros of superseded ones.
      if (answeredRow(row)) s.hist.add(row[F.errUs]!);
      s.ticks++;
      s.overruns += overruns - prevOverruns;
      s.missed += missed - prevMissed;
    }
    prevOverruns = overruns;
    prevMissed = missed;
  };
  return { stats, onRow };
}

/** What the blocks with the dashboard drew, and the CPU time and wall time of each kind of block. */
interface Blocks extends Drawn {
  cpuS: Record<'without' | 'with', number>;
  wallS: Record<'without' | 'with', number>;
}

/** Runs SCHEDULE: each block marks its start in `phases` and, in a `with` block, draws the dashboard. */
async function runBlocks(session: Session, rig: Rig, paths: PathSpec[], phases: Phase[], over: () => boolean): Promise<Blocks> {
  const b: Blocks = { cpuS: { without: 0, with: 0 }, wallS: { without: 0, with: 0 }, frameUs: new UsHistogram(), frames: 0, bytes: 0 };
  for (const name of SCHEDULE) {
    if (over()) break;
    phases.push({ name, from: session.latest()?.[F.t] ?? 0 });
    const cpu0 = process.cpuUsage();
    const wall0 = performance.now();
    let dash: Dashboard | undefined;
    const term = fakeTerminal(120, 40);
    if (name === 'with') {
      const screen = blessed.screen({
        input: term.input,
        output: term.output as never,
        terminal: 'xterm-256color',
        forceUnicode: true,
        warnings: false,
        smartCSR: true,
      });
      dash = new Dashboard({ screen, session, rig, paths, demo: true, onQuit: () => undefined });
      const draw = dash.frame.bind(dash);
      dash.frame = () => {
        const t0 = performance.now();
        draw();
        b.frameUs.add((performance.now() - t0) * 1000);
        b.frames++;
      };
      dash.start();
    }
    await sleep(BLOCK_MS);
    dash?.stop();
    b.bytes += term.bytes();
    const c = process.cpuUsage(cpu0);
    b.cpuS[name] += (c.user + c.system) / 1e6;
    b.wallS[name] += (performance.now() - wall0) / 1000;
  }
  return b;
}

async function measure(): Promise<Measured> {
  const rig = loadRig(RIG);
  const paths = builtinNames(rig.arm).map<PathSpec>((n) => builtinPath(rig.arm, n)!);
  const phases: Phase[] = [{ name: 'warm-up', from: -Infinity }];
  const { stats, onRow } = rowCounter(phases);
  const session = new Session({
    rig,
    target: { kind: 'mock' },
    paths,
    cycle: true,
    park: true,
    feedforward: rig.control.feedforward,
    rateHz: rig.control.rateHz,
    injections: [],
    maxSeconds: 120,
    onRow,
  });
  let over = false;
  const done = session.run().then((r) => {
    over = true;
    return r;
  });
  await sleep(WARM_UP_MS);
  const b = await runBlocks(session, rig, paths, phases, () => over);
  phases.push({ name: 'warm-up', from: session.latest()?.[F.t] ?? 0 });
  session.send({ kind: 'stop', reason: { kind: 'done' } });
  const result = await done;
  return {
    stats,
    cpu: { without: b.cpuS.without / Math.max(1e-9, b.wallS.without), with: b.cpuS.with / Math.max(1e-9, b.wallS.with) },
    frameUs: b.frameUs,
    frames: b.frames,
    bytes: b.bytes,
    stop: result.summary.stop,
    ticks: result.summary.ticks,
  };
}

export async function benchTui(): Promise<BenchResult> {
  // A run the mock board's watchdog ends at start-up (a machine stalled for 100 ms) measures nothing: try again.
  let m = await measure();
  for (let attempt = 1; attempt < 3 && m.stop.kind !== 'done'; attempt++) m = await measure();
  const line = (s: PhaseStats): string =>
    `p50 ${s.hist.quantile(0.5)} us  p99 ${s.hist.quantile(0.99)} us  max ${Math.round(s.hist.max)} us  late ${s.overruns} (answers past their deadline; the 16U2 model's burst samples apart, not late) (${s.ticks} ticks)`;
  const w = m.stats.without;
  const d = m.stats.with;
  const seconds = (SCHEDULE.length * BLOCK_MS) / 2000;
  return section(
    'dashboard: the loop without and with it (mock rig, 500 Hz, real time)',
    [
      ['period error, without', line(w), `${seconds} s in 2 s blocks, off-on-on-off twice`],
      ['period error, with', line(d), `${seconds} s, drawing at its normal 20 Hz into a fake 120 x 40 terminal`],
      [
        'process CPU',
        `${m.cpu.without.toFixed(2)} -> ${m.cpu.with.toFixed(2)} s/s`,
        'all threads (loop worker, main thread, GC), without -> with',
      ],
      [
        'dashboard frame',
        `p50 ${(m.frameUs.quantile(0.5) / 1000).toFixed(2)} ms  p99 ${(m.frameUs.quantile(0.99) / 1000).toFixed(2)} ms`,
        `${m.frames} frames, ${Math.round(m.bytes / seconds / 1024)} KiB/s to the terminal, on the main thread`,
      ],
      ['run', describeStop(m.stop), `${m.ticks} ticks`],
    ],
    {
      withoutP50Us: w.hist.quantile(0.5),
      withoutP99Us: w.hist.quantile(0.99),
      withoutMaxUs: Math.round(w.hist.max),
      withoutOverruns: w.overruns,
      withoutTicks: w.ticks,
      withP50Us: d.hist.quantile(0.5),
      withP99Us: d.hist.quantile(0.99),
      withMaxUs: Math.round(d.hist.max),
      withOverruns: d.overruns,
      withTicks: d.ticks,
      cpuWithout: m.cpu.without,
      cpuWith: m.cpu.with,
      frameP50Ms: m.frameUs.quantile(0.5) / 1000,
      frameP99Ms: m.frameUs.quantile(0.99) / 1000,
      frames: m.frames,
      stopReason: describeStop(m.stop),
    },
  );
}
