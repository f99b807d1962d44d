/**
 * The live view's cost to the loop (viz/live-view.ts: a thread of its own reading the loop's ring): the loop (the Session: worker thread, the mock rig,
 * real time) at 1 kHz runs once, in 2 s blocks without the live view, with it and a client that reads
 * everything, and with it and a client that has stopped reading (its socket paused: the server's
 * frames pile up until it drops them), in the order A B C C B A twice so that a drift of the
 * machine's load cancels out. The clients are other processes (their reading is not this process's
 * CPU). Rows count in the block their loop time falls in.
 */
import { describeStop, type StopReason } from '../control/stop.js';
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { loadRig, type Rig } from '../config/load.js';
import { builtinNames, builtinPath, type PathSpec } from '../model/builtins.js';
import { tickJsonSchema } from '../record/export.js';
import { Session } from '../run/session.js';
import { answeredRow, UsHistogram } from '../run/stats.js';
import { F, TICK_WIDTH } from '../telemetry/tick.js';
import { createRing, RingWriter, type RingBuffers } from '../control/ring.js';
import { LIVE_RATE_HZ, LIVE_TICK_TOPIC } from '../viz/live.js';
import { LIVE_PLACEMENT, startLiveView, type LivePlacement, type LiveView } from '../viz/live-view.js';
import { POLL_MS } from '../viz/live-worker.js';
import { SCENE_TOPICS } from '../viz/scene.js';
import { virtualRun } from '../run/virtual.js';
import { load1, section, type BenchResult } from './report.js';

const RIG = 'rigs/mock-arm.json';
/** Loop rate [Hz]: 1 kHz, or `--foxglove-rate HZ` (a loaded machine may not hold 1 kHz in real time). */
const RATE_HZ = process.argv.includes('--foxglove-rate') ? Number(process.argv[process.argv.indexOf('--foxglove-rate') + 1]) : 1000;
type Mode = 'without' | 'reading' | 'stalled';
/** Where the view runs: as `twolink run` runs it, or `--foxglove-placement main|thread`. */
const PLACEMENT = (
  process.argv.includes('--foxglove-placement') ? process.argv[process.argv.indexOf('--foxglove-placement') + 1] : LIVE_PLACEMENT
) as LivePlacement;
const SCHEDULE: Mode[] = [
  'without',
  'reading',
  'stalled',
  'stalled',
  'reading',
  'without',
  'without',
  'reading',
  'stalled',
  'stalled',
  'reading',
  'without',
];
const BLOCK_MS = 2000;
/** The topics Foxglove subscribes to with docs/foxglove-layout.json (its 3D panel and plots). */
const LAYOUT_TOPICS = [SCENE_TOPICS.description, SCENE_TOPICS.tf, SCENE_TOPICS.path, SCENE_TOPICS.force, LIVE_TICK_TOPIC];
const WARM_UP_MS = 2000;

interface Block {
  hist: UsHistogram;
  ticks: number;
  overruns: number;
  /** Samples delivered in one burst of the 16U2 model with a newer one (not answered, not late). */
  burst: number;
  cpuS: number;
  wallS: number;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A client process subscribed to everything (resolves once it has subscribed, and in `stall` stopped reading). */
function client(port: number, mode: 'read' | 'stall', topics?: readonly string[]): Promise<ChildProcess> {
  const file = fileURLToPath(new URL('./foxglove-client.js', import.meta.url));
  const child = spawn(process.execPath, [file, String(port), mode, ...(topics ? [topics.join(',')] : [])], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      if (String(d).includes('ready')) resolve(child);
    });
    child.on('exit', () => reject(new Error('the bench client ended before it subscribed')));
  });
}

/**
 * Fills the stalled client's socket (the kernel's buffers, then the server's 256 KB) with filler on
 * the tick channel until the server drops frames, so that the block measures a stalled client's
 * steady state (at 100 Hz the scene alone would take tens of seconds to fill the kernel's buffers).
 */
async function fill(live: LiveView): Promise<void> {
  // The client's subscription may still be on its way: until it is, nothing is sent or dropped.
  const chunk = new Uint8Array(1 << 20);
  for (let i = 0; i < 200 && live.stats.dropped === 0; i++) {
    live.publish(LIVE_TICK_TOPIC, chunk);
    await sleep(10);
  }
}

interface Measured {
  blocks: Record<Mode, Block>;
  dropped: number;
  sent: number;
  stop: StopReason;
  ticks: number;
  /** SCHED_FIFO for the loop thread: granted, or why not (the summary's timing). */
  rt: string;
}

/** The loop's rows counted into the block being measured (`current`; none between blocks). */
class RowCounts {
  current: Block | undefined;
  private prevOverruns = 0;
  private prevBurst = 0;

  add(row: ArrayLike<number>): void {
    const o = row[F.overruns]!;
    const b = row[F.burst]!;
    if (this.current) {
      // Latency as the summary defines it (stats.ts, TimingFigures): answered samples only, not the zeros of superseded ones.
      if (answeredRow(row)) this.current.hist.add(Math.abs(row[F.errUs]!));
      this.current.ticks++;
      this.current.overruns += o - this.prevOverruns;
      this.current.burst += b - this.prevBurst;
    }
    this.prevOverruns = o;
    this.prevBurst = b;
  }
}

export async function measure(rig: Rig, paths: PathSpec[]): Promise<Measured> {
  const fresh = (): Block => ({ hist: new UsHistogram(), ticks: 0, overruns: 0, burst: 0, cpuS: 0, wallS: 0 });
  const blocks: Record<Mode, Block> = { without: fresh(), reading: fresh(), stalled: fresh() };
  const counts = new RowCounts();
  let live: LiveView | undefined;
  const session = new Session({
    rig,
    target: { kind: 'mock' },
    // As `twolink run` runs by default: the loop thread and the mock at SCHED_FIFO, the live view on the main thread below them.
    rt: true,
    paths,
    cycle: true,
    park: true,
    feedforward: rig.control.feedforward,
    rateHz: RATE_HZ,
    injections: [],
    maxSeconds: 300,
    onDrained: () => live?.poll(),
    onRow: (row) => counts.add(row),
  });
  let over = false;
  const done = session.run().then((r) => ((over = true), r));
  await sleep(WARM_UP_MS);
  const m = { sent: 0, dropped: 0 };
  for (const mode of SCHEDULE) {
    if (over) break;
    let c: ChildProcess | undefined;
    let before = { sent: 0, dropped: 0 };
    if (mode !== 'without') {
      // Started by the main thread (normal priority), after the loop's threads were given SCHED_FIFO: the view's thread stays at normal priority.
      const view = await startLiveView({ ...rig, tickSchema: JSON.stringify(tickJsonSchema(rig.joints)) }, '127.0.0.1', 0, PLACEMENT);
      view.attach(session.ringBuffers);
      live = view;
      c = await client(view.port, mode === 'reading' ? 'read' : 'stall');
      if (mode === 'stalled') await fill(view);
      before = view.stats;
    }
    session.drain();
    const block = (counts.current = blocks[mode]);
    const cpu0 = process.cpuUsage();
    const wall0 = performance.now();
    await sleep(BLOCK_MS);
    session.drain();
    const cpu = process.cpuUsage(cpu0);
    block.cpuS += (cpu.user + cpu.system) / 1e6;
    block.wallS += (performance.now() - wall0) / 1000;
    counts.current = undefined;
    if (live) {
      m.sent += live.stats.sent - before.sent;
      m.dropped += live.stats.dropped - before.dropped;
      await live.close();
      live = undefined;
    }
    c?.kill('SIGTERM');
  }
  session.send({ kind: 'stop', reason: { kind: 'done' } });
  const result = await done;
  const rt = result.summary.timing?.rt;
  return {
    blocks,
    ...m,
    stop: result.summary.stop,
    ticks: result.summary.ticks,
    rt: rt === undefined ? 'unknown' : rt ? 'SCHED_FIFO granted' : 'SCHED_FIFO refused',
  };
}

/** The live view's CPU measure: groups of blocks of loop time, the view detached (base) or reading, A B B A in each group. */
const CPU_GROUP: ('base' | 'view')[] = ['base', 'view', 'view', 'base'];
const CPU_GROUPS = Number(
  process.argv.includes('--foxglove-cpu-groups') ? process.argv[process.argv.indexOf('--foxglove-cpu-groups') + 1] : 5,
);
/** Loop time per block [s]. */
const CPU_BLOCK_S = 2;

export interface ViewCpu {
  /** Process CPU with the view reading minus without, per second of loop time [% of a core], over all groups. */
  pct: number;
  /** The same per group (A B B A), lowest and highest: the spread of the measure. */
  pctMin: number;
  pctMax: number;
  /** Process CPU inside the view's polls (main thread: drain, frames, socket writes), per second of loop time while it reads [% of a core]. */
  pollPct: number;
  pollMin: number;
  pollMax: number;
  /** The view thread's own CPU while it reads, per second of loop time [% of a core] (NaN off Linux and on the main thread). */
  threadPct: number;
  basePct: number;
  /** Loop time fed, all blocks [s]. */
  loopS: number;
  groups: number;
  sent: number;
  dropped: number;
  /** The view thread's CPU for one frame drawn and sent, warm [us]. */
  warmUs: number;
}

/** The rows of a run, again and again with the loop time going on (the view draws by the loop's clock). */
function endless(rows: readonly Float64Array[]): () => Float64Array {
  const span = rows.at(-1)![F.t]! - rows[0]![F.t]! + 0.001;
  const row = new Float64Array(TICK_WIDTH);
  let at = 0;
  let offset = 0;
  return () => {
    row.set(rows[at]!);
    row[F.t] = row[F.t]! + offset;
    if (++at === rows.length) [at, offset] = [0, offset + span];
    return row;
  };
}

/**
 * Feeds CPU_BLOCK_S of loop time from `next` to `ring` per call, 20 ms of rows every 20 ms, the view
 * reading (`view`) or detached: the process's CPU, the CPU inside the polls, the view thread's CPU,
 * the loop time fed.
 */
function blockFeeder(
  live: LiveView,
  ring: RingBuffers,
  next: () => Float64Array,
): (mode: 'base' | 'view') => Promise<{ cpu: number; poll: number; threadNs: number; fed: number }> {
  const writer = new RingWriter(ring);
  let row = next();
  return async (mode) => {
    if (mode === 'view') live.attach(ring);
    const t0 = row[F.t]!;
    const thread0 = mode === 'view' ? await live.threadCpuNs() : 0;
    const cpu0 = process.cpuUsage();
    let poll = 0;
    while (row[F.t]! < t0 + CPU_BLOCK_S) {
      const end = row[F.t]! + 0.02;
      while (row[F.t]! < end) {
        writer.write(row);
        row = next();
      }
      // On the main thread the view reads the ring when the session has drained it (detached: nothing).
      const p0 = process.cpuUsage();
      live.poll();
      const p = process.cpuUsage(p0);
      poll += (p.user + p.system) / 1e6;
      // As fast as the loop writes: faster, the reading client could not keep up and lose frames.
      await sleep(20);
    }
    const cpu = process.cpuUsage(cpu0);
    let threadNs = 0;
    if (mode === 'view') {
      threadNs = (await live.threadCpuNs()) - thread0;
      live.detach();
    }
    return { cpu: (cpu.user + cpu.system) / 1e6, poll, threadNs, fed: row[F.t]! - t0 };
  };
}

/**
 * The live view's own CPU at 1 kHz, which a loaded machine does not blur: the rows of a 1 kHz run in
 * virtual time written to a ring as the loop writes them (20 ms of loop time every 20 ms, by the main
 * thread here, in every block alike), in blocks of CPU_BLOCK_S of loop time where the view reads that
 * ring or is detached from it (it then does nothing), A B B A in each of CPU_GROUPS groups (a client
 * in another process reading all along), so that a drift of the machine's load or a collection of
 * the heap falls on both alike. Figures: the whole process's CPU time (all threads: the view's, V8's
 * helpers, the main thread's) with the view reading minus without it, per second of loop time fed,
 * over all groups and its spread over the groups; on the main thread, the process CPU time inside
 * the view's polls (their synchronous work: drain, frames, socket writes; not the collection of what
 * they leave), which the load's noise blurs far less; in a thread of its own, that thread's CPU
 * (Linux /proc/thread-self/schedstat: time on a CPU, user and system, the loopback TCP it drives).
 */
export async function viewCpu(
  rig: Rig,
  paths: PathSpec[],
  topics?: readonly string[],
  placement: LivePlacement = PLACEMENT,
): Promise<ViewCpu> {
  const next = endless((await virtualRun(rig, paths, { rateHz: 1000, maxSeconds: 20 })).rows);
  const ring = createRing();
  const live = await startLiveView({ ...rig, tickSchema: JSON.stringify(tickJsonSchema(rig.joints)) }, '127.0.0.1', 0, placement);
  const c = await client(live.port, 'read', topics);
  const cpuS = { base: 0, view: 0 };
  const fedS = { base: 0, view: 0 };
  const groupPct: number[] = [];
  const groupPoll: number[] = [];
  let pollS = 0;
  let threadNs = 0;
  const block = blockFeeder(live, ring, next);
  // Steady state: a block with the view reading first, not counted (V8 compiles the frame's code while it runs).
  await block('view');
  const sent0 = live.stats;
  for (let g = 0; g < CPU_GROUPS; g++) {
    const gCpu = { base: 0, view: 0 };
    const gFed = { base: 0, view: 0 };
    let gPoll = 0;
    for (const mode of CPU_GROUP) {
      const b = await block(mode);
      gCpu[mode] += b.cpu;
      gFed[mode] += b.fed;
      if (mode === 'view') [gPoll, threadNs] = [gPoll + b.poll, threadNs + b.threadNs];
    }
    groupPct.push((100 * gCpu.view) / gFed.view - (100 * gCpu.base) / gFed.base);
    groupPoll.push((100 * gPoll) / gFed.view);
    pollS += gPoll;
    for (const m of ['base', 'view'] as const) [cpuS[m], fedS[m]] = [cpuS[m] + gCpu[m], fedS[m] + gFed[m]];
  }
  const sent = live.stats.sent - sent0.sent;
  const dropped = live.stats.dropped - sent0.dropped;
  // Warm: 3000 frames back to back in the view's thread (its event loop turning between them), the cost of one frame.
  const warmUs = (await live.warm(Float64Array.from(next()), 3000)) / 3000 / 1000;
  await live.close();
  c.kill('SIGTERM');
  const basePct = (100 * cpuS.base) / fedS.base;
  const main = placement === 'main';
  return {
    pct: (100 * cpuS.view) / fedS.view - basePct,
    pctMin: Math.min(...groupPct),
    pctMax: Math.max(...groupPct),
    pollPct: main ? (100 * pollS) / fedS.view : Number.NaN,
    pollMin: main ? Math.min(...groupPoll) : Number.NaN,
    pollMax: main ? Math.max(...groupPoll) : Number.NaN,
    threadPct: main ? Number.NaN : threadNs / 1e7 / fedS.view,
    basePct,
    loopS: fedS.base + fedS.view,
    groups: CPU_GROUPS,
    sent,
    dropped,
    warmUs,
  };
}

/** The live view's CPU figures for the JSON report (% of a core, us), rounded. */
function viewFigures(v: ViewCpu, vl: ViewCpu): BenchResult['figures'] {
  const r2 = (x: number): number => Math.round(x * 100) / 100;
  return {
    viewCpuPctAt1kHz: r2(v.pct),
    viewCpuPctMin: r2(v.pctMin),
    viewCpuPctMax: r2(v.pctMax),
    viewPollCpuPctAt1kHz: r2(v.pollPct),
    viewThreadCpuPctAt1kHz: r2(v.threadPct),
    viewLayoutThreadCpuPctAt1kHz: r2(vl.threadPct),
    viewBaselineCpuPct: r2(v.basePct),
    viewFrameWarmUs: Math.round(v.warmUs),
    viewLayoutCpuPctAt1kHz: r2(vl.pct),
    viewLayoutCpuPctMin: r2(vl.pctMin),
    viewLayoutCpuPctMax: r2(vl.pctMax),
    viewLayoutPollCpuPctAt1kHz: r2(vl.pollPct),
  };
}

export async function benchFoxglove(): Promise<BenchResult> {
  const load0 = load1();
  const rig = loadRig(RIG);
  const paths = builtinNames(rig.arm).map<PathSpec>((n) => builtinPath(rig.arm, n)!);
  let m = await measure(rig, paths);
  // A run the mock board's watchdog ends at start-up (a machine stalled for 100 ms) measures nothing: try again.
  for (let attempt = 1; attempt < 5 && m.stop.kind !== 'done'; attempt++) m = await measure(rig, paths);
  const line = (b: Block): string =>
    `p50 ${b.hist.quantile(0.5)} us  p99 ${b.hist.quantile(0.99)} us  max ${Math.round(b.hist.max)} us  late ${b.overruns} (answers past their deadline), ${b.burst} in the 16U2 model's bursts (delivered with a newer sample, only the newest answered: not late) (${b.ticks} ticks)`;
  const cpu = (b: Block): number => (100 * b.cpuS) / Math.max(1e-9, b.wallS);
  const seconds = (mode: Mode): number => (SCHEDULE.filter((x) => x === mode).length * BLOCK_MS) / 1000;
  const v = await viewCpu(rig, paths);
  const vl = await viewCpu(rig, paths, LAYOUT_TOPICS);
  const figures: BenchResult['figures'] = { sent: m.sent, dropped: m.dropped, stopReason: describeStop(m.stop), ...viewFigures(v, vl) };
  for (const mode of ['without', 'reading', 'stalled'] as const) {
    const b = m.blocks[mode];
    Object.assign(figures, {
      [`${mode}P99Us`]: b.hist.quantile(0.99),
      [`${mode}Overruns`]: b.overruns,
      [`${mode}Ticks`]: b.ticks,
      [`${mode}CpuPct`]: Math.round(cpu(b) * 10) / 10,
    });
  }
  return section(
    `Foxglove live view: the loop without it, with a reading client, with a stalled client (mock rig, ${RATE_HZ} Hz, real time, --rt as twolink run asks by default; the view on ${PLACEMENT === 'thread' ? 'a thread of its own' : 'the main thread'}; load ${load0.toFixed(1)} at the start, ${load1().toFixed(1)} at the end, machine shared)`,
    [
      ['latency, without', line(m.blocks.without), `${seconds('without')} s in 2 s blocks, A B C C B A twice`],
      ['latency, reading client', line(m.blocks.reading), `${seconds('reading')} s, a client in another process reading every channel`],
      ['latency, stalled client', line(m.blocks.stalled), `${seconds('stalled')} s, a client that subscribed, then stopped reading`],
      [
        'process CPU',
        `${cpu(m.blocks.without).toFixed(1)} -> ${cpu(m.blocks.reading).toFixed(1)} / ${cpu(m.blocks.stalled).toFixed(1)} % of a core`,
        `all threads of twolink (loop worker, mock rig, main thread${PLACEMENT === 'thread' ? ", the view's thread" : ' with the view'}), without -> reading / stalled`,
      ],
      [
        'live view CPU at 1 kHz',
        `${v.pct.toFixed(2)} % of a core (groups ${v.pctMin.toFixed(2)} to ${v.pctMax.toFixed(2)})`,
        `process CPU time (all threads) per second of loop time while the view reads a ring the rows of a 1 kHz virtual-time run are written to at the loop's pace in real time (no adapter: no board, no cable; ${v.loopS.toFixed(0)} s of loop time), minus the blocks with the view detached (on the main thread: polled after each 20 ms of rows, as the session's drain does) (${v.basePct.toFixed(2)} %), ${v.groups} groups of ${CPU_BLOCK_S} s blocks A B B A; ${v.sent} messages to a client reading every channel, ${v.dropped} dropped`,
      ],
      ...(PLACEMENT === 'thread'
        ? [
            [
              "  the view's thread alone",
              `${v.threadPct.toFixed(2)} % of a core`,
              `its own CPU time (Linux schedstat of the thread: user, system, the loopback TCP it drives) in the same blocks, per second of loop time; polls every ${POLL_MS} ms`,
            ] as [string, string, string],
          ]
        : [
            [
              '  inside its polls',
              `${v.pollPct.toFixed(2)} % of a core (groups ${v.pollMin.toFixed(2)} to ${v.pollMax.toFixed(2)})`,
              "process CPU time inside the view's polls in the same blocks (drain, frames, socket writes; not the later collection of what they leave), per second of loop time: the load's noise does not blur it",
            ] as [string, string, string],
          ]),
      [
        '  as Foxglove reads it',
        `${vl.pct.toFixed(2)} % of a core (groups ${vl.pctMin.toFixed(2)} to ${vl.pctMax.toFixed(2)}); inside its polls ${PLACEMENT === 'thread' ? `(the thread) ${vl.threadPct.toFixed(2)}` : vl.pollPct.toFixed(2)} %`,
        `the same with a client subscribed to what docs/foxglove-layout.json shows (${LAYOUT_TOPICS.join(', ')}): the joint states are not built; ${vl.sent} messages`,
      ],
      [
        'live view frame, warm',
        `${v.warmUs.toFixed(0)} us CPU`,
        `${PLACEMENT === 'thread' ? "the view thread's" : "the main thread's"} CPU for one row drawn and sent (7 messages), 3000 back to back: ${((v.warmUs * LIVE_RATE_HZ) / 1e4).toFixed(2)} % of a core at ${LIVE_RATE_HZ} Hz`,
      ],
      ['frames', `${m.sent} sent, ${m.dropped} dropped`, 'dropped: for the stalled client, once 256 KB waited unread'],
      ['run', describeStop(m.stop), `${m.ticks} ticks; loop thread: ${m.rt}`],
    ],
    figures,
  );
}
