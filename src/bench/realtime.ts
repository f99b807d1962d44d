/**
 * Real time, as a user runs it: `twolink run ... --json` in its own process against the mock rig
 * (its own thread), the pty rigs (`twolink rig --pty`, line and Firmata, its own process), the Firmata
 * mock, our firmware in simavr (`twolink rig --firmware --pty`), the stock ConfigurableFirmata image in
 * simavr (the same, with `--board uno-firmata --elf`; a row that says why when there is no image) and
 * the demo, on a quiet machine, a busy
 * one (two CPU hogs at normal priority) and a heavily loaded one (six hogs: load about 8 on 2 cores),
 * printed side by side with the load measured. `--conditions quiet,heavy` and `--configs pty,mock`
 * (or TWOLINK_BENCH_CONDITIONS / TWOLINK_BENCH_CONFIGS) pick rows; `--runs N` sets the count. For each: runs
 * done / faulted, tracking RMS next to the same trajectory in virtual time, late samples, the latency
 * from the board's sample to the answer written, the host's CPU, the longest stall. And the soak: a
 * 10-minute run at 1 kHz with a recording (`--only soak`).
 */
import { lastSummary } from './child-summary.js';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { loadRig } from '../config/load.js';
import { parseMockReport, type MockReport } from '../mock/mock-report.js';
import { builtinPath } from '../model/builtins.js';
import type { RunSummary } from '../run/stats.js';
import { virtualRun } from '../run/virtual.js';
import { stockFirmataElf, unoFirmataRig } from './firmware-stock.js';
import { load1, section, type BenchResult } from './report.js';
import { asPair, pairOf, type ReadonlyPair } from '../model/types.js';

const BIN = fileURLToPath(new URL('../../bin/twolink.js', import.meta.url));
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

interface Config {
  /** Short name for --configs. */
  key: string;
  name: string;
  rig: string;
  /** Loop rate [Hz]; the rig file's when absent. */
  rateHz?: number;
  /**
   * mock: --mock in the host; pty: `twolink rig --pty`; firmware: `twolink rig --firmware --pty`;
   * stock: the stock ConfigurableFirmata image in simavr (`twolink rig --firmware --board uno-firmata
   * --elf IMAGE --pty`, on the Uno wiring of docs/firmata.md: firmware-stock.ts); demo: `twolink demo --headless`.
   */
  where: 'mock' | 'pty' | 'firmware' | 'stock' | 'demo';
}

export const CONFIGS: Config[] = [
  { key: 'pty', name: '1 kHz line protocol, pty rig', rig: 'rigs/mock-arm.json', rateHz: 1000, where: 'pty' },
  { key: 'firmata', name: '500 Hz Firmata, mock', rig: 'rigs/mock-arm-firmata.json', rateHz: 500, where: 'mock' },
  { key: 'mock', name: '1 kHz line protocol, mock (own thread)', rig: 'rigs/mock-arm.json', rateHz: 1000, where: 'mock' },
  { key: 'firmata-pty', name: '500 Hz Firmata, pty rig', rig: 'rigs/mock-arm-firmata.json', rateHz: 500, where: 'pty' },
  { key: 'firmware', name: 'our firmware in simavr (rig --firmware --pty)', rig: 'rigs/mock-arm.json', where: 'firmware' },
  // The rig: mock-arm-firmata.json on an Uno wired as docs/firmata.md suggests (unoFirmataRig), made when it runs.
  {
    key: 'stock',
    name: 'stock ConfigurableFirmata in simavr (rig --firmware --board uno-firmata --elf)',
    rig: 'rigs/mock-arm-firmata.json',
    where: 'stock',
  },
  { key: 'demo', name: 'the demo (demo --headless --traj reach)', rig: 'rigs/mock-arm.json', where: 'demo' },
];

/** The load conditions: hogs are CPU hogs at normal priority on this 2-core machine (FACTS.md). */
export const CONDITIONS = [
  { key: 'quiet', name: 'quiet', hogs: 0, rt: true },
  { key: 'busy', name: 'busy (2 hogs)', hogs: 2, rt: true },
  { key: 'heavy', name: 'heavy (6 hogs)', hogs: 6, rt: true },
  { key: 'busy-no-rt', name: 'busy (2 hogs), no --rt', hogs: 2, rt: false },
] as const;

/** Two CPU hogs at normal priority (the "busy laptop"). */
export function startHogs(n = 2): () => void {
  const hogs: ChildProcess[] = [];
  for (let i = 0; i < n; i++) hogs.push(spawn(process.execPath, ['-e', 'for(;;){}'], { stdio: 'ignore' }));
  return () => {
    for (const h of hogs) h.kill('SIGKILL');
  };
}

/** How far a rig process's board fell behind, from its last report: the line mock's timers, simavr's wall clock [ms]. */
function rigBehind(reports: readonly MockReport[]): number | undefined {
  const all = reports.flatMap((r) =>
    r.kind === 'mock-end' ? [r.maxLateMs] : r.kind === 'firmware-end' && r.wallS > 0 ? [r.maxBehindMs] : [],
  );
  return all.length ? Math.max(...all) : undefined;
}

/**
 * `twolink rig --pty --report` (with `--firmware`: simavr; with `elf`: that image on the uno-firmata pin
 * map) in its own process; resolves with the host's path once the rig serves. `stop` resolves with how
 * far its board fell behind [ms], from its reports (src/mock/mock-report.ts), not from its words.
 */
export function startPtyRig(
  rigFile: string,
  rt: boolean,
  firmware = false,
  elf?: string,
): Promise<{ path: string; stop: () => Promise<{ behindMs: number | undefined; stderr: string }> }> {
  return new Promise((resolve, reject) => {
    const image = elf !== undefined ? ['--board', 'uno-firmata', '--elf', elf] : [];
    const args = [
      'rig',
      '--rig',
      rigFile,
      '--pty',
      '--report',
      ...(firmware || elf !== undefined ? ['--firmware', ...image] : []),
      ...(rt ? [] : ['--no-rt']),
    ];
    const child = spawn(process.execPath, ['--single-threaded-gc', BIN, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    let ready = false;
    let path: string | undefined;
    const reports: MockReport[] = [];
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    createInterface({ input: child.stdout }).on('line', (line) => {
      const r = parseMockReport(line);
      reports.push(r);
      if (r.kind === 'pty') path = r.host;
      // `serving`: the rig's end of the pty is open.
      if (r.kind === 'serving' && path !== undefined && !ready) {
        ready = true;
        resolve({
          path,
          stop: () =>
            new Promise((done) => {
              child.once('exit', () => done({ behindMs: rigBehind(reports), stderr: err }));
              child.kill('SIGTERM');
            }),
        });
      }
    });
    child.on('exit', (c) => {
      if (!ready) reject(new Error(`twolink rig exited (${c}): ${err}`));
    });
  });
}

/** One `twolink run ... --json` (or `demo`); resolves with its summary (or the error it printed). */
/** Done runs, the faults of the others, and the tracking of the done ones (RMS per joint of the two-link mock arm [deg]). */
export interface RunTally {
  done: number;
  faulted: string[];
  rms: ReadonlyPair[];
}

/**
 * One run into `t`; its summary when it printed one. A run with no summary is a fault, by the last
 * line it wrote. Tracking of whole reaches only: a run stopped in its approach tracked nothing of the
 * reach (its zeros pulled the median down).
 */
export function tallyRun(t: RunTally, r: { summary?: RunSummary; code: number; stderr: string }): RunSummary | undefined {
  const s = r.summary;
  if (!s) {
    t.faulted.push(`exit ${r.code}: ${r.stderr.trim().split('\n').at(-1) ?? ''}`);
    return undefined;
  }
  if (s.stop.kind === 'done') {
    t.done++;
    t.rms.push(asPair(s.tracking.rmsDeg, "a run's tracking.rmsDeg"));
  } else t.faulted.push(s.stopReason);
  return s;
}

export function runOnce(args: string[], command: 'run' | 'demo' = 'run'): Promise<{ summary?: RunSummary; code: number; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--single-threaded-gc', BIN, command, ...args, '--json'], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('exit', (code) => {
      // Its stop, stop text and tracking checked (child-summary.ts); the other figures as written.
      const got = lastSummary(out);
      const summary = 'summary' in got ? (got.summary as unknown as RunSummary) : undefined;
      resolve({ ...(summary ? { summary } : {}), code: code ?? -1, stderr: err });
    });
  });
}

interface Agg extends RunTally {
  late: number[];
  lat50: number[];
  lat99: number[];
  cpu: number[];
  stall: number[];
  mockLate: number;
  /** How far the simulated board fell behind, as the rig process said at its end [ms] (pty rigs). */
  rigBehindMs?: number;
}

const median = (a: number[]): number => {
  if (a.length === 0) return NaN;
  const s = a.slice().sort((x, y) => x - y);
  return s[Math.floor(s.length / 2)]!;
};
const max = (a: number[]): number => (a.length ? Math.max(...a) : NaN);

async function runConfig(c: Config, runs: number, rt: boolean, elf?: string): Promise<Agg> {
  const agg: Agg = { done: 0, faulted: [], rms: [], late: [], lat50: [], lat99: [], cpu: [], stall: [], mockLate: 0 };
  const rigFile = c.where === 'stock' ? unoFirmataRig(ROOT).file : c.rig;
  const pty =
    c.where === 'pty' || c.where === 'firmware' || c.where === 'stock'
      ? await startPtyRig(rigFile, rt, c.where === 'firmware', c.where === 'stock' ? elf : undefined)
      : undefined;
  try {
    for (let i = 0; i < runs; i++) {
      const where = pty ? ['--port', pty.path] : c.where === 'demo' ? [] : ['--mock'];
      const args = [
        '--rig',
        rigFile,
        ...where,
        ...(c.rateHz ? ['--rate', String(c.rateHz)] : []),
        '--traj',
        'reach',
        ...(rt ? ['--rt'] : ['--no-rt']),
      ];
      const r = await runOnce(c.where === 'demo' ? [...args, '--headless'] : args, c.where === 'demo' ? 'demo' : 'run');
      const s = tallyRun(agg, r);
      if (!s) continue;
      const t = s.timing;
      if (t) {
        agg.late.push(t.lateSamples);
        agg.lat50.push(t.latencyP50Us);
        agg.lat99.push(t.latencyP99Us);
        agg.cpu.push(t.hostCpuPct);
        agg.stall.push(t.maxStallMs);
        if (t.mock && t.mock.lateTimers > 0) agg.mockLate++;
      }
    }
  } finally {
    const behind = (await pty?.stop())?.behindMs;
    if (behind !== undefined) agg.rigBehindMs = behind;
  }
  return agg;
}

/** Tracking of the same reach in virtual time, at the same rate (the line-protocol mock). */
async function virtualRms(rigFile: string, rateHz: number): Promise<ReadonlyPair> {
  const rig = loadRig(rigFile);
  const line = rig.link.transport === 'firmata' ? undefined : rig;
  if (!line) {
    const { firmataReach } = await import('./firmata.js');
    return asPair((await firmataReach(rig, rateHz)).summary.tracking.rmsDeg, "the virtual Firmata reach's tracking.rmsDeg");
  }
  const r = await virtualRun({ ...rig, control: { ...rig.control, rateHz } }, [builtinPath(rig.arm, 'reach')!], {
    rateHz,
    keepRows: false,
    maxSeconds: 60,
  });
  return asPair(r.summary.tracking.rmsDeg, "the virtual reach's tracking.rmsDeg");
}

const f2 = (a: readonly number[]): string => a.map((v) => v.toFixed(3)).join('/');

/** What to run: counts, and which conditions and configurations (keys; all when absent). */
export interface RealtimeOptions {
  runsQuiet?: number;
  /** Runs per configuration under load (busy, heavy). */
  runsBusy?: number;
  conditions?: string[];
  configs?: string[];
}

/** Picks `all` by key; an unknown key is an error naming the known ones. */
function pick<T extends { key: string }>(all: readonly T[], keys: string[] | undefined, what: string): T[] {
  if (!keys) return [...all];
  for (const k of keys) if (!all.some((x) => x.key === k)) throw new Error(`unknown ${what} "${k}" (${all.map((x) => x.key).join(', ')})`);
  return all.filter((x) => keys.includes(x.key));
}

export async function benchRealtime(opts: RealtimeOptions = {}): Promise<BenchResult> {
  const runsQuiet = opts.runsQuiet ?? 5;
  const runsBusy = opts.runsBusy ?? 20;
  const configs = pick(CONFIGS, opts.configs, 'configuration');
  const rows: [string, string, string][] = [];
  const figures: Record<string, number | string | number[]> = {};
  const vt = new Map<string, ReadonlyPair>();
  for (const c of configs) vt.set(c.name, await virtualRms(c.rig, c.rateHz ?? loadRig(c.rig).control.rateHz));
  for (const cond of pick(CONDITIONS, opts.conditions, 'condition')) {
    const runs = cond.key === 'quiet' ? runsQuiet : cond.key === 'busy-no-rt' ? Math.min(runsQuiet, runsBusy) : runsBusy;
    const stop = cond.hogs ? startHogs(cond.hogs) : () => undefined;
    try {
      for (const c of configs) {
        // The stock image, or one line saying why there is none (firmware-stock.ts).
        const image = c.where === 'stock' ? stockFirmataElf(ROOT) : undefined;
        if (image?.why !== undefined) {
          rows.push([`${c.name} | ${cond.name}`, 'skipped', image.why.split('\n')[0]!]);
          figures[`${c.name} | ${cond.name}`] = { skipped: image.why } as never;
          continue;
        }
        const started = Date.now();
        const a = await runConfig(c, runs, cond.rt, image?.elf);
        const perRunS = (Date.now() - started) / 1000 / runs;
        const load = load1();
        const v = vt.get(c.name)!;
        const rmsMed = pairOf((j) => median(a.rms.map((r) => r[j])));
        const ratio = Math.max(...pairOf((j) => rmsMed[j] / v[j]));
        const key = `${c.name} | ${cond.name}${cond.rt ? ' --rt' : ''}, load ${load.toFixed(1)}`;
        rows.push([
          key,
          `${a.done}/${runs} done, RMS ${f2(rmsMed)} deg (virtual ${f2(v)}, x${ratio.toFixed(2)}); ${perRunS.toFixed(1)} s of real time per run with the rig's start`,
          `late ${median(a.late)}/run, latency p50 ${median(a.lat50)} p99 ${median(a.lat99)} us, host CPU ${median(a.cpu).toFixed(1)} %, max stall ${max(a.stall).toFixed(1)} ms${a.mockLate ? `, mock starved in ${a.mockLate}` : ''}${a.rigBehindMs !== undefined ? `, rig behind at most ${a.rigBehindMs.toFixed(1)} ms` : ''}${a.faulted.length ? `; faults: ${[...new Set(a.faulted)].slice(0, 3).join('; ')}` : ''}`,
        ]);
        figures[key] = {
          done: a.done,
          runs,
          faulted: a.faulted.length,
          rmsDeg: rmsMed,
          virtualRmsDeg: v,
          ratio,
          lateMedian: median(a.late),
          latencyP50Us: median(a.lat50),
          latencyP99Us: median(a.lat99),
          hostCpuPct: median(a.cpu),
          maxStallMs: max(a.stall),
          load1min: load,
          hogs: cond.hogs,
          secondsPerRun: perRunS,
          ...(a.rigBehindMs !== undefined ? { rigBehindMs: a.rigBehindMs } : {}),
        } as never;
      }
    } finally {
      stop();
    }
  }
  return section(
    `Real time: reach runs per configuration, quiet, busy and heavy (median of runs; load = 1-minute load average after the row; targets: tracking <= 1.3 x virtual, 0 false faults with --rt when busy or heavy, host CPU <= 15 % at 1 kHz)`,
    rows,
    figures,
  );
}

/** A 10-minute run at 1 kHz with a recording: the soak (`npm run bench -- --only soak`). */
export async function benchSoak(seconds = 600): Promise<BenchResult> {
  mkdirSync(`${ROOT}/runs`, { recursive: true });
  const file = `runs/soak-${Date.now()}.ndjson`;
  const r = await runOnce([
    '--rig',
    'rigs/mock-arm.json',
    '--mock',
    '--rate',
    '1000',
    '--traj',
    'reach',
    '--traj',
    'circle',
    '--cycle',
    '--max-seconds',
    String(seconds),
    '--record',
    file,
    '--rt',
  ]);
  const s = r.summary;
  const rows: [string, string, string][] = [
    [
      `${seconds} s at 1 kHz, mock (own thread), --record ${file}`,
      s ? `stop: ${s.stopReason}` : `exit ${r.code}: ${r.stderr.trim().split('\n').at(-1)}`,
      s?.timing
        ? `samples ${s.ticks}, late ${s.timing.lateSamples} (answers past their deadline), in the adapter's bursts ${s.timing.burstSamples ?? '?'} (not late), lost ${s.timing.lostSamples}, latency p99 ${s.timing.latencyP99Us} us, max stall ${s.timing.maxStallMs} ms, host CPU ${s.timing.hostCpuPct} %`
        : '',
    ],
  ];
  return section('Soak (real time)', rows, { soakStop: s?.stopReason ?? `exit ${r.code}`, soakSamples: s?.ticks ?? 0 });
}
