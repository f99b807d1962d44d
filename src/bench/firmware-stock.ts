/**
 * `npm run bench -- --only firmware`, the stock Firmata part: the image that
 * firmware-protocol/firmata-watchdog/build-stock.sh builds (the stock ConfigurableFirmata 2.10.x example
 * with docs/firmata.md's edits, FirmataEncoder, PJRC Encoder and our FirmataWatchdog) runs in simavr
 * (fil_harness's `uno-firmata` pin map, the wiring docs/firmata.md suggests for an Uno) against
 * `twolink run --port` through johnny-five. The image: stockFirmataElf() (TWOLINK_STOCK_FIRMATA_ELF, or
 * built from the upstream sources beside the project, ../shared/third_party/firmata-stock); without
 * either the rows say so.
 */
import { childDone, childEndText, lastSummary, type ChildEnd } from './child-summary.js';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { loadRig, type Rig } from '../config/load.js';
import { FirmwareSim } from '../mock/firmware-sim.js';
import { RIG_STARVED_ATTEMPTS } from '../mock/starvation.js';
import { stopSchema } from '../run/stop-schema.js';
import { cpuSnapshot, cpuUsers, cpuUsersText, type CpuUser } from '../time/cpu-users.js';
import { leaveRealtime, processThreads, requestRealtime, threadId } from '../time/threads.js';

/** Where the stock image is, or why there is none. */
export type StockImage = { elf: string; why?: undefined } | { elf?: undefined; why: string };

/**
 * The stock ConfigurableFirmata image for simavr: TWOLINK_STOCK_FIRMATA_ELF when set; else built by
 * firmware-protocol/firmata-watchdog/build-stock.sh from the upstream sources (ConfigurableFirmata,
 * PJRC Encoder, FirmataEncoder, unchanged: their MANIFEST.md) in TWOLINK_FIRMATA_STOCK_SRC or
 * `<root>/../shared/third_party/firmata-stock`, into firmware-protocol/firmware/build/stock-firmata/,
 * again only when the script, our FirmataWatchdog or the manifest is newer than the image. The
 * sources are used where they are, never copied into the project. (Measured: the build takes 6 s of
 * real time on a quiet machine here.)
 */
export function stockFirmataElf(root: string): StockImage {
  const given = process.env.TWOLINK_STOCK_FIRMATA_ELF;
  if (given) return existsSync(given) ? { elf: given } : { why: `TWOLINK_STOCK_FIRMATA_ELF names ${given}, which does not exist` };
  const src = process.env.TWOLINK_FIRMATA_STOCK_SRC ?? join(root, '..', 'shared', 'third_party', 'firmata-stock');
  const parts = ['ConfigurableFirmata', 'Encoder', 'FirmataEncoder'].map((d) => join(src, d));
  if (!parts.every((d) => existsSync(d))) {
    return {
      why: `no stock Firmata sources at ${src} (ConfigurableFirmata/, Encoder/, FirmataEncoder/; or set TWOLINK_FIRMATA_STOCK_SRC, or TWOLINK_STOCK_FIRMATA_ELF to a built ELF)`,
    };
  }
  const out = join(root, 'firmware-protocol', 'firmware', 'build', 'stock-firmata');
  const elf = join(out, 'stock_firmata.elf');
  const wd = join(root, 'firmware-protocol', 'firmata-watchdog');
  const inputs = [
    join(wd, 'build-stock.sh'),
    join(wd, 'FirmataWatchdog.cpp'),
    join(wd, 'FirmataWatchdog.h'),
    join(src, 'MANIFEST.md'),
  ].filter((f) => existsSync(f));
  if (existsSync(elf) && inputs.every((f) => statSync(f).mtimeMs <= statSync(elf).mtimeMs)) return { elf };
  const r = spawnSync(join(wd, 'build-stock.sh'), [...parts, out], { encoding: 'utf8' });
  if (r.status !== 0 || !existsSync(elf)) {
    const tail = `${r.stdout ?? ''}${r.stderr ?? ''}${r.error ? r.error.message : ''}`.trim().split('\n').slice(-4).join('\n');
    return { why: `build-stock.sh failed (exit ${r.status}) on the sources at ${src}:\n${tail}` };
  }
  return { elf };
}

/** The Firmata example rig on an Uno (rigs/mock-arm-firmata-uno.json, wired as docs/firmata.md section 2 suggests); `watchdogMs` as given. */
export function unoFirmataRig(root: string, watchdogMs?: number): Rig {
  const spec = JSON.parse(readFileSync(join(root, 'rigs/mock-arm-firmata-uno.json'), 'utf8')) as { link: { watchdogMs?: number } };
  if (watchdogMs !== undefined) spec.link.watchdogMs = watchdogMs;
  const file = join(mkdtempSync(join(tmpdir(), 'twolink-stock-')), 'mock-arm-firmata-uno.json');
  writeFileSync(file, JSON.stringify(spec));
  return loadRig(file);
}

export interface StockRun {
  /** How the host's run ended (`killed`: the bench killed it, as the watchdog test wants). */
  end: ChildEnd;
  rmsDeg: number[];
  /** Board time from the host's last byte to zero duty at both motor pins, after the host was killed [s]. */
  watchdogS?: number;
  /**
   * How far the simulated board fell behind the wall clock during the run, at most [ms]: a real board
   * never does; 100 ms and more is a stall of the rig (a busy machine starved the simulator), which a
   * host with a 100-300 ms watchdog rightly calls a lost link. A failed run with such a stall is the
   * rig's fault, not the host's.
   */
  boardBehindMs: number;
  /**
   * The plant during the run (board time): slices the harness simulated, those whose encoder counts from
   * the plant came late (the harness ran ahead on the plant's last velocity: the pins did not follow the
   * plant), the most slices one answer was late, and the board time the late slices covered [ms]. A
   * plant that keeps up is late 0 slices; a starved one is the rig's fault as much as a stalled board.
   */
  plant: { slices: number; lateSlices: number; maxLate: number; lateMs: number };
  /**
   * The board's clock against the wall clock as the plant receives its slices [ms]: how much later than
   * at its earliest a slice arrived (board time vs the wall clock), the most over the run (`peak`) and
   * the most that held for 100 ms of board time (`held`: the least lag within a 100 ms window, the
   * largest over windows). A real board's reports keep its crystal's time; a simulated board that lags
   * for a while hands the host reports that all seem that much older (its latency, its delay
   * compensation), which a real board never does: the rig's fault.
   */
  lagMs: { peak: number; held: number };
  /** The run's corrupt messages and lost samples (its summary's link.corrupt, timing.lostSamples), when it printed one. */
  corrupt?: number;
  lost?: number;
  /** The host's summary line as printed (for a diagnosis), when it printed one. */
  summaryLine?: string;
  /**
   * What had the CPU during the run: the busiest threads of the machine (every process), with their
   * scheduling class and priority, and the load average at the end. When the rig starved, this says
   * what starved it.
   */
  busy: { users: CpuUser[]; load: number };
}

/**
 * The stock image in simavr, at real-time priority as `twolink rig --firmware --rt` runs it: the harness
 * (the board) at 45, this thread, which steps the plant in lock-step with it, at 44, and the other
 * threads of this process (the garbage collector's and the compiler's helpers: a real-time thread that
 * waits for a normal one gains nothing) at 43, below the plant (SCHED_FIFO does not share the CPU
 * between equals: a helper compiling for 10 ms at 44 would hold the plant up as long); all with
 * SCHED_RESET_ON_FORK, so that what they start begins at normal priority. The host (`twolink run --rt`)
 * then takes its own priorities, below the rig's, as on a bench where the board is another computer;
 * before, it inherited 44 from this thread and its main thread stood level with the plant (a plant that
 * starves holds the board's encoder pins on old counts, then the board itself: measured, real time,
 * six hogs, load 15-19, shared machine: the plant late on 10-55 % of slices, 11 of 40 reaches stopped
 * with a following error; after, 1-2 %). `f` runs on it; the threads are normal again after.
 *
 * This runs in a process of its own (firmware-stock-main.ts, started by stockReach and the others):
 * the plant's process does nothing else. It ran in the caller's before, and a test's caller is the
 * test runner's worker, which then ran at 44 and 43 with all it does (its messages to the runner,
 * the test's own work), above the host's loop thread (40) and level with the plant.
 */
async function onStockSim<T>(rig: Rig, elf: string, f: (sim: FirmwareSim) => Promise<T>): Promise<T> {
  const me = threadId();
  const raised: number[] = [];
  for (const t of [me, ...processThreads().filter((t) => t !== me)]) {
    if (!(await requestRealtime(t, t === me ? 44 : 43, { resetOnFork: true })).granted) break;
    raised.push(t);
  }
  try {
    const sim = await FirmwareSim.start({ rig, board: 'uno-firmata', elf });
    if (raised.length > 0) await requestRealtime(sim.pid, 45);
    try {
      return await f(sim);
    } finally {
      await sim.stop();
    }
  } finally {
    for (const t of raised) await leaveRealtime(t);
  }
}

/** What the stock rig's process is asked to run (firmware-stock-main.ts). */
export type StockJob = { op: 'reach'; killAfterS?: number } | { op: 'twice' } | { op: 'killed-then-run'; killAfterS: number };

/** Runs `job` here, in this process (firmware-stock-main.ts calls it; callers use stockReach and the others). */
export function stockJobHere(job: StockJob, rig: Rig, elf: string, bin: string, root: string): Promise<StockRun[]> {
  switch (job.op) {
    case 'reach':
      return onStockSim(rig, elf, async (sim) => [await reachOn(sim, rig, bin, root, job.killAfterS)]);
    case 'twice':
      return onStockSim(rig, elf, async (sim) => [await reachOn(sim, rig, bin, root), await reachOn(sim, rig, bin, root)]);
    case 'killed-then-run':
      return onStockSim(rig, elf, async (sim) => [await reachOn(sim, rig, bin, root, job.killAfterS), await reachOn(sim, rig, bin, root)]);
  }
}

/** A number that JSON carried (NaN becomes null there). */
const num = z
  .number()
  .nullable()
  .transform((x) => (x === null ? NaN : x));
const stockRunSchema = z.strictObject({
  end: z.discriminatedUnion('kind', [
    z.strictObject({ kind: z.literal('stopped'), stop: stopSchema }),
    z.strictObject({ kind: z.literal('killed') }),
    z.strictObject({ kind: z.literal('no-summary'), why: z.string() }),
  ]),
  rmsDeg: z.array(num),
  watchdogS: z.number().optional(),
  boardBehindMs: z.number(),
  plant: z.strictObject({ slices: z.number(), lateSlices: z.number(), maxLate: z.number(), lateMs: z.number() }),
  lagMs: z.strictObject({ peak: num, held: num }),
  corrupt: z.number().optional(),
  lost: z.number().optional(),
  summaryLine: z.string().optional(),
  busy: z.strictObject({
    users: z.array(
      z.strictObject({ pid: z.number(), tid: z.number(), comm: z.string(), cmd: z.string(), sched: z.string(), pct: z.number() }),
    ),
    load: z.number(),
  }),
});
/** The stock rig process's answer: its one stdout line. */
export const stockRunsSchema = z.array(stockRunSchema);

/**
 * Runs `job` in the stock rig's own process (dist/bench/firmware-stock-main.js, started at this
 * process's priority, which it does not change): the simulated board and its plant at real-time
 * priority there, this process (a test's worker, the bench) left as it is.
 */
function stockJob(job: StockJob, rig: Rig, elf: string, bin: string, root: string): Promise<StockRun[]> {
  const main = join(root, 'dist', 'bench', 'firmware-stock-main.js');
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [main, JSON.stringify({ job, rigFile: rig.file, elf, bin, root })], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      const last = out.trim().split('\n').pop() ?? '';
      let raw: unknown;
      try {
        raw = JSON.parse(last);
      } catch {
        reject(
          new Error(
            `the stock rig process (${main}) ended (${signal ?? `exit code ${code}`}) without its result: ${err.trim() || last || 'no output'}`,
          ),
        );
        return;
      }
      const r = stockRunsSchema.safeParse(raw);
      if (r.success) resolve(r.data);
      else
        reject(
          new Error(
            `the stock rig process answered what is not a list of runs: ${r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
          ),
        );
    });
  });
}

/**
 * One reach through the stock image; with `killAfterS`, the host is killed with SIGKILL that long
 * (board time) after the motors first move, and the watchdog's cut is timed.
 */
export async function stockReach(rig: Rig, elf: string, bin: string, root: string, killAfterS?: number): Promise<StockRun> {
  const [r] = await stockJob({ op: 'reach', ...(killAfterS !== undefined ? { killAfterS } : {}) }, rig, elf, bin, root);
  return r!;
}

/**
 * A run killed with SIGKILL `killAfterS` of board time after the motors first move, then a new run on
 * the same simulated board (not reset between them: a pty has no DTR): the hand-over.
 */
export function stockKilledThenRun(rig: Rig, elf: string, bin: string, root: string, killAfterS = 1.0): Promise<StockRun[]> {
  return stockJob({ op: 'killed-then-run', killAfterS }, rig, elf, bin, root);
}

/**
 * Two reaches one after the other on the same simulated board, which is not reset between them (a pty
 * has no DTR): the second meets encoders FirmataEncoder still has attached (the re-attach case).
 */
export function stockTwice(rig: Rig, elf: string, bin: string, root: string): Promise<StockRun[]> {
  return stockJob({ op: 'twice' }, rig, elf, bin, root);
}

/**
 * A stock test's runs, again while the rig starved: `attempt` runs them and `ok` says whether they
 * ended as the test expects. Runs that did not, with a rig at fault (rigFault: a busy machine starved
 * the simulated board or its plant), are said (`say`) and run again, RIG_STARVED_ATTEMPTS times in all;
 * the last starved attempt is given back as it is, for the test to fail with its blame, and the earlier
 * attempts' blames in `starvedBefore`. Runs that failed with the rig keeping time are the host's fault
 * and are not run again.
 */
export async function retryIfStarved<T extends StockRun[]>(
  attempt: () => Promise<T>,
  ok: (runs: T) => boolean,
  say: (line: string) => void,
  attempts = RIG_STARVED_ATTEMPTS,
): Promise<{ runs: T; starvedBefore?: string }> {
  const before: string[] = [];
  for (let k = 1; ; k++) {
    const runs = await attempt();
    const starvedBefore = before.length > 0 ? before.join(' || ') : undefined;
    if (ok(runs)) return { runs, ...(starvedBefore !== undefined ? { starvedBefore } : {}) };
    const starved = runs.map(rigFault).filter((w): w is string => w !== undefined);
    if (starved.length === 0 || k >= attempts) return { runs, ...(starvedBefore !== undefined ? { starvedBefore } : {}) };
    const why = `${starved.join('; ')} (busy: ${runs.map((r) => cpuUsersText(r.busy.users)).join(' | ')})`;
    say(`the rig was starved: ${why}; running again (attempt ${k + 1} of ${attempts})`);
    before.push(why);
  }
}

async function reachOn(sim: FirmwareSim, rig: Rig, bin: string, root: string, killAfterS?: number): Promise<StockRun> {
  const cpu0 = cpuSnapshot();
  const run: ChildProcess = spawn(
    process.execPath,
    [bin, 'run', '--rig', rig.file, '--port', sim.ptyPath, '--traj', 'reach', '--json', '--rt'],
    { cwd: root, stdio: ['ignore', 'pipe', 'ignore'] },
  );
  let out = '';
  run.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  let movingSince: number | undefined;
  let killedAt: number | undefined;
  let watchdogS: number | undefined;
  const onSlice = (s: { boardTime: number; duty: [number, number] }): void => {
    if (killAfterS === undefined || killedAt !== undefined) return;
    if (s.duty[0] !== 0 || s.duty[1] !== 0) movingSince ??= s.boardTime;
    if (movingSince !== undefined && s.boardTime - movingSince > killAfterS && (s.duty[0] !== 0 || s.duty[1] !== 0)) {
      killedAt = s.boardTime;
      run.kill('SIGKILL');
    }
  };
  sim.on('slice', onSlice);
  const { plant, lag, off: offPlant } = watchPlant(sim);
  let behindS = 0;
  const onBehind = (e: { behindS: number }): void => void (behindS = Math.max(behindS, e.behindS));
  sim.on('behind', onBehind);
  let onOff: ((e: { boardTime: number; sinceByteS: number }) => void) | undefined;
  const cut = new Promise<void>((resolve) => {
    onOff = (e): void => {
      if (killedAt !== undefined && watchdogS === undefined && e.boardTime > killedAt) {
        watchdogS = e.sinceByteS;
        resolve();
      }
    };
    sim.on('outputs-off', onOff);
    sim.once('exit', () => resolve());
  });
  await new Promise<void>((r) => run.on('exit', () => r()));
  if (killedAt !== undefined) await Promise.race([cut, new Promise((r) => setTimeout(r, 2000))]);
  sim.off('slice', onSlice);
  offPlant();
  sim.off('outputs-off', onOff!);
  sim.off('behind', onBehind);
  const boardBehindMs = behindS * 1e3;
  const lagMs = lag.result();
  const busy = { users: cpuUsers(cpu0, cpuSnapshot()), load: loadavg()[0]! };
  if (killedAt !== undefined)
    return {
      end: { kind: 'killed' },
      rmsDeg: [NaN, NaN],
      boardBehindMs,
      plant,
      lagMs,
      busy,
      ...(watchdogS !== undefined ? { watchdogS } : {}),
    };
  return finishedRun(out, { boardBehindMs, plant, lagMs, busy });
}

/**
 * The plant's slices as they come (board time): how many, how many came late and by how much, and
 * the board's clock against the wall clock; `off` stops listening.
 */
function watchPlant(sim: FirmwareSim): { plant: StockRun['plant']; lag: LagTracker; off: () => void } {
  const plant = { slices: 0, lateSlices: 0, maxLate: 0, lateMs: 0 };
  let lastBoard: number | undefined;
  const lag = new LagTracker();
  const onPlant = (s: { boardTime: number; stale: number }): void => {
    lag.add(s.boardTime, performance.now() / 1e3);
    plant.slices++;
    if (s.stale > 0) {
      plant.lateSlices++;
      plant.maxLate = Math.max(plant.maxLate, s.stale);
      if (lastBoard !== undefined) plant.lateMs += (s.boardTime - lastBoard) * 1e3;
    }
    lastBoard = s.boardTime;
  };
  sim.on('slice', onPlant);
  return { plant, lag, off: () => sim.off('slice', onPlant) };
}

/** A run that ended by itself, from its stdout (`--json`: the summary is the last line), with what the rig saw of it. */
function finishedRun(out: string, rigSide: Pick<StockRun, 'boardBehindMs' | 'plant' | 'lagMs' | 'busy'>): StockRun {
  const s = lastSummary(out);
  if (!('summary' in s)) return { end: { kind: 'no-summary', why: s.why }, rmsDeg: [NaN, NaN], ...rigSide };
  const summaryLine = out.trim().split('\n').pop();
  const counts = {
    ...(s.summary.link?.corrupt !== undefined ? { corrupt: s.summary.link.corrupt } : {}),
    ...(s.summary.timing?.lostSamples !== undefined ? { lost: s.summary.timing.lostSamples } : {}),
  };
  return {
    end: { kind: 'stopped', stop: s.summary.stop },
    rmsDeg: s.summary.tracking?.rmsDeg ?? [NaN, NaN],
    ...rigSide,
    ...counts,
    ...(summaryLine ? { summaryLine } : {}),
  };
}

/**
 * The lag of a simulated board's clock behind the wall clock, from its slices as they arrive: board
 * time against wall time, relative to the earliest arrival so far (the lag's floor); `held` is the
 * least lag within each `windowS` of board time, the largest such [ms].
 */
export class LagTracker {
  private floor = Infinity;
  private peak = 0;
  private held = 0;
  private windowStart = NaN;
  private windowMin = Infinity;

  constructor(private readonly windowS = 0.1) {}

  /** A slice that ended at `boardS` [s] arrived at `wallS` [s]. */
  add(boardS: number, wallS: number): void {
    const d = wallS - boardS;
    if (!Number.isFinite(d)) return;
    if (d < this.floor) this.floor = d;
    const lag = d - this.floor;
    if (lag > this.peak) this.peak = lag;
    if (!(boardS - this.windowStart < this.windowS)) {
      if (Number.isFinite(this.windowMin) && this.windowMin > this.held) this.held = this.windowMin;
      this.windowStart = boardS;
      this.windowMin = Infinity;
    }
    if (lag < this.windowMin) this.windowMin = lag;
  }

  result(): { peak: number; held: number } {
    return { peak: this.peak * 1e3, held: this.held * 1e3 };
  }
}

/** A simulated board this far behind the wall clock [ms] (the harness's own measure) has stalled: the rig's fault. */
export const RIG_BEHIND_MS = 100;
/**
 * A board clock that lags this much [ms] for 100 ms of board time (LagTracker's `held`) is the rig's
 * fault: six report periods at 333 Hz, every report that much older than its clock says for that long
 * (the host's latency and its delay compensation take it for the link's), where a real board keeps its
 * crystal's time. Measured (real time, six hogs, load 15-22, shared machine): 0-26 ms held in 36 runs
 * that completed; 59 and 69 ms in two that stopped with a following error while the plant kept up
 * (its thread's helpers then stood level with it at 44; at 43, 20 of 20 reaches completed).
 */
export const RIG_LAG_MS = 20;
/**
 * A plant late on this share of the slices is the rig's fault: the board's encoder pins went on the
 * plant's last velocity instead of the plant for that much of the run. Measured (real time, six hogs,
 * load 15-20, shared machine): 0.5-2.2 % with the plant's process at 44 above the host, 3-56 % when the
 * host's main thread stood level with it (the failing reaches 43-56 %).
 */
export const RIG_PLANT_LATE = 0.05;

/** Why a stock run's rig (the simulated board, its plant) was at fault, or undefined if it kept time. */
export function rigFault(r: StockRun): string | undefined {
  const why: string[] = [];
  if (r.boardBehindMs >= RIG_BEHIND_MS) why.push(`the simulated board fell ${r.boardBehindMs.toFixed(0)} ms behind the wall clock`);
  if (r.lagMs.held >= RIG_LAG_MS) {
    why.push(
      `its clock lagged the wall clock by ${r.lagMs.held.toFixed(0)} ms for 100 ms (at most ${r.lagMs.peak.toFixed(0)} ms): the host took every report for that much older`,
    );
  }
  const late = r.plant.slices > 0 ? r.plant.lateSlices / r.plant.slices : 0;
  if (late >= RIG_PLANT_LATE) {
    why.push(
      `the plant was late on ${(100 * late).toFixed(1)} % of the slices (${r.plant.lateSlices} of ${r.plant.slices}, ${r.plant.lateMs.toFixed(0)} ms of board time, up to ${r.plant.maxLate} slices at once): the encoder pins did not follow the arm`,
    );
  }
  return why.length > 0 ? why.join('; ') : undefined;
}

/**
 * What to say of a stock run that did not end as expected: the rig's fault when the simulated board
 * stalled, its clock lagged, or its plant was starved (rigFault: a real board and a real arm do none of
 * these), with the figure; otherwise the host is to blame, with the rig's figures that clear it.
 */
export function blameOf(r: StockRun): string {
  const rig = rigFault(r);
  if (rig !== undefined) {
    return `${rig}: the rig was starved by a busy machine (the rig's fault, not the host's; a real board does not stall); on the CPU meanwhile (load ${r.busy.load.toFixed(1)}): ${cpuUsersText(r.busy.users)}`;
  }
  const late = r.plant.slices > 0 ? (100 * r.plant.lateSlices) / r.plant.slices : 0;
  return (
    `the simulated board kept time (at most ${r.boardBehindMs.toFixed(0)} ms behind the wall clock, its clock lagging ${r.lagMs.held.toFixed(0)} ms for 100 ms at most, ` +
    `the plant late on ${late.toFixed(1)} % of the slices): the host is to blame`
  );
}

/** The rig's figures of a run, for a bench row: the board behind the wall clock, its clock's held lag, the plant's lateness. */
function rigFigures(r: StockRun): string {
  const late = r.plant.slices > 0 ? (100 * r.plant.lateSlices) / r.plant.slices : 0;
  return `simulated board behind the wall clock at most ${r.boardBehindMs.toFixed(0)} ms, lagging ${r.lagMs.held.toFixed(0)} ms for 100 ms, plant late on ${late.toFixed(1)} % of slices`;
}

/** The rows: reaches and watchdog cuts through the stock image, or why they were skipped. */
export async function stockFirmataRows(bin: string, root: string, runs = 3): Promise<[string, string, string][]> {
  const image = stockFirmataElf(root);
  if (image.elf === undefined) return [['stock ConfigurableFirmata in simavr', 'skipped', image.why]];
  const elf = image.elf;
  const rig = unoFirmataRig(root);
  const reaches: StockRun[] = [];
  for (let i = 0; i < runs; i++) reaches.push(await stockReach(rig, elf, bin, root));
  const cuts: StockRun[] = [];
  for (let i = 0; i < runs; i++) cuts.push(await stockReach(rig, elf, bin, root, 1.0));
  // No cut: the run ended before the host could be killed (its stop reason says why), or the board did not cut.
  const twice = await stockTwice(rig, elf, bin, root);
  const ms = cuts.map((c) =>
    c.watchdogS !== undefined ? (c.watchdogS * 1e3).toFixed(2) : c.end.kind === 'killed' ? 'NO CUT' : `not killed (${childEndText(c.end)})`,
  );
  return [
    [
      'stock Firmata + FirmataWatchdog (Uno, 57600 baud, 333 Hz): reach done / runs',
      `${reaches.filter((r) => childDone(r.end)).length} / ${runs}`,
      reaches.map((r) => `${childEndText(r.end)} (${rigFigures(r)}${!childDone(r.end) ? `; ${blameOf(r)}` : ''})`).join(', '),
    ],
    [
      '  tracking RMS j1 / j2 per run',
      '',
      `${reaches.map((r) => r.rmsDeg.map((x) => x.toFixed(3)).join(' / ')).join(', ')} deg (real time, --rt)`,
    ],
    [
      '  two runs on one board, not reset between them (re-attach)',
      twice.map((r) => childEndText(r.end)).join(', '),
      'the second meets the encoders FirmataEncoder still has attached',
    ],
    [
      '  host killed (SIGKILL) while driving: last host byte to zero duty',
      `${ms.join(', ')} ms`,
      `board time; FirmataWatchdog armed by the host with link.watchdogMs = ${rig.link.watchdogMs} ms`,
    ],
  ];
}
