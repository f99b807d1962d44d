/**
 * `npm run bench -- --only adapters`: the reach through each USB adapter model (none, 16u2, FTDI at
 * 16 ms and 1 ms, CH340, native) at 1 kHz, 500 Hz and 250 Hz, on the mock rig (own thread) in REAL
 * time with --rt, next to the same reach in VIRTUAL time: tracking RMS, the answer delay the loop
 * learned, the latency from the board's sample to the answer written (p50/p99), runs done. Then the
 * 1 kHz reach through the 16u2 and the native models on the pty rig (`twolink rig --pty`, its own
 * process). `--adapter-runs N` sets the real-time runs per cell (default 1; 18 cells of ~5 s each).
 * The adapter models are in src/mock/usb-adapter.ts (CH340 figures are estimates).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadRig, parseJsonText, readConfigText } from '../config/load.js';
import type { AdapterKind } from '../config/cable.js';
import { builtinPath } from '../model/builtins.js';
import { virtualRun } from '../run/virtual.js';
import { runOnce, startPtyRig, tallyRun, type RunTally } from './realtime.js';
import { section, type BenchResult } from './report.js';
import { pairOf, type Pair } from '../model/types.js';

interface Cable {
  name: string;
  kind: AdapterKind;
  latencyMs: number;
}

export const CABLES: Cable[] = [
  { name: 'none', kind: 'none', latencyMs: 16 },
  { name: '16u2', kind: '16u2', latencyMs: 16 },
  { name: 'ftdi 16 ms', kind: 'ftdi', latencyMs: 16 },
  { name: 'ftdi 1 ms', kind: 'ftdi', latencyMs: 1 },
  { name: 'ch340 (est.)', kind: 'ch340', latencyMs: 16 },
  { name: 'native', kind: 'native', latencyMs: 16 },
];
const RATES = [1000, 500, 250];

/** rigs/mock-arm.json with the plant's adapter set to `c`, written to `dir`. */
function rigFileFor(dir: string, c: Cable): string {
  const base = 'rigs/mock-arm.json';
  const json = parseJsonText(readConfigText(base), base) as { plant: { adapter?: unknown } };
  json.plant.adapter = { kind: c.kind, latencyMs: c.latencyMs };
  const file = join(dir, `mock-arm-${c.kind}-${c.latencyMs}.json`);
  writeFileSync(file, JSON.stringify(json, null, 2));
  return file;
}

const f3 = (a: readonly number[]): string => a.map((v) => v.toFixed(3)).join('/');
const median = (a: number[]): number => {
  if (!a.length) return NaN;
  const s = a.slice().sort((x, y) => x - y);
  return s[Math.floor(s.length / 2)]!;
};

/** A cell's runs: the tally (tracking of done runs only, as in the realtime matrix) and the link figures. */
interface Cell extends RunTally {
  runs: number;
  delay: number[];
  lat50: number[];
  lat99: number[];
}

async function realRuns(rigFile: string, rateHz: number, runs: number, where: string[]): Promise<Cell> {
  const c: Cell = { done: 0, runs, rms: [], delay: [], lat50: [], lat99: [], faulted: [] };
  for (let i = 0; i < runs; i++) {
    const r = await runOnce(['--rig', rigFile, ...where, '--rate', String(rateHz), '--traj', 'reach', '--rt']);
    const s = tallyRun(c, r);
    if (!s) continue;
    if (s.timing) {
      if (s.timing.answerDelaySamples !== null) c.delay.push(s.timing.answerDelaySamples);
      c.lat50.push(s.timing.latencyP50Us);
      c.lat99.push(s.timing.latencyP99Us);
    }
  }
  return c;
}

/** The median per joint of a cell's tracking RMS [deg]. */
const medianRms = (c: Cell): Pair => pairOf((j) => median(c.rms.map((r) => r[j])));

function row(key: string, c: Cell, v: { rms: readonly number[]; delay: number | null }): [string, string, string] {
  const rms = medianRms(c);
  return [
    key,
    `${c.done}/${c.runs} done, RMS real ${f3(rms)} deg, virtual ${f3(v.rms)}`,
    `delay learned ${median(c.delay)} (virtual ${v.delay ?? '?'}) samples, latency p50 ${median(c.lat50)} p99 ${median(c.lat99)} us${c.faulted.length ? `; faults: ${[...new Set(c.faulted)].slice(0, 2).join('; ')}` : ''}`,
  ];
}

export async function benchAdapters(runs = 1): Promise<BenchResult> {
  const rows: [string, string, string][] = [];
  const figures: Record<string, number | string | number[]> = {};
  const dir = mkdtempSync(join(tmpdir(), 'twolink-adapters-'));
  try {
    for (const cable of CABLES) {
      const file = rigFileFor(dir, cable);
      const rig = loadRig(file);
      for (const rateHz of RATES) {
        const vr = await virtualRun({ ...rig, control: { ...rig.control, rateHz } }, [builtinPath(rig.arm, 'reach')!], {
          rateHz,
          keepRows: false,
          maxSeconds: 60,
        });
        const v = { rms: vr.summary.tracking.rmsDeg, delay: vr.result.timing.answerDelaySamples ?? null };
        const c = await realRuns(file, rateHz, runs, ['--mock']);
        const key = `${cable.name} @ ${rateHz} Hz, mock`;
        rows.push(row(key, c, v));
        figures[key] = {
          done: c.done,
          runs,
          rmsDeg: c.rms.length ? medianRms(c) : [],
          virtualRmsDeg: v.rms,
          delay: median(c.delay),
          virtualDelay: v.delay ?? NaN,
          latencyP50Us: median(c.lat50),
          latencyP99Us: median(c.lat99),
        } as never;
      }
    }
    // The must-show: 1 kHz through the 16u2 and the native models on the pty rig too.
    for (const cable of CABLES.filter((x) => x.kind === '16u2' || x.kind === 'native')) {
      const file = rigFileFor(dir, cable);
      const rig = loadRig(file);
      const vr = await virtualRun({ ...rig, control: { ...rig.control, rateHz: 1000 } }, [builtinPath(rig.arm, 'reach')!], {
        rateHz: 1000,
        keepRows: false,
        maxSeconds: 60,
      });
      const pty = await startPtyRig(file, true);
      try {
        const c = await realRuns(file, 1000, runs, ['--port', pty.path]);
        const key = `${cable.name} @ 1000 Hz, pty rig`;
        rows.push(row(key, c, { rms: vr.summary.tracking.rmsDeg, delay: vr.result.timing.answerDelaySamples ?? null }));
        figures[key] = {
          done: c.done,
          runs,
          rmsDeg: c.rms.length ? medianRms(c) : [],
          delay: median(c.delay),
          latencyP50Us: median(c.lat50),
          latencyP99Us: median(c.lat99),
        } as never;
      } finally {
        await pty.stop();
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return section(
    `USB adapter models: the reach per adapter and rate, real time (--rt, mock rig's own thread; median of ${runs} run(s)) next to virtual time; CH340 figures rest on an estimated 1 ms hold`,
    rows,
    figures,
  );
}
