/**
 * `npm run bench -- --only serial` (issue 34): the two serial paths of Linux side by side on the same
 * pty rigs (`twolink rig --pty`, its own process, --rt): `--serial tty` (twolink's own binding in the
 * loop's worker) and `--serial serialport` (serialport's native binding in a relay process). Per
 * condition (quiet; heavy: six CPU hogs at normal priority) and rig (the line protocol at 1 kHz, Firmata
 * at 500 Hz): `twolink run --traj reach --rt` alternating tty and serialport, and once per condition
 * one byte's echo round trip through each path over a bare pty pair (the relay's hop, alone). Real time,
 * encoder (motor-side) tracking of the mock's plant; the target is serialport's tracking within 1.3 x
 * tty's in the same bench run.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { asPair, pairOf, type ReadonlyPair } from '../model/types.js';
import { load1, section, type BenchResult } from './report.js';
import { runOnce, startHogs, startPtyRig, tallyRun, type RunTally } from './realtime.js';

const PATHS = ['tty', 'serialport'] as const;
type Path = (typeof PATHS)[number];

const RIGS = [
  { key: 'line', name: '1 kHz line protocol, pty rig', rig: 'rigs/mock-arm.json', rateHz: 1000, pings: true },
  { key: 'firmata', name: '500 Hz Firmata, pty rig', rig: 'rigs/mock-arm-firmata.json', rateHz: 500, pings: false },
] as const;

const CONDITIONS = [
  { key: 'quiet', name: 'quiet', hogs: 0 },
  { key: 'heavy', name: 'heavy (6 CPU hogs)', hogs: 6 },
] as const;

interface PathAgg extends RunTally {
  lat50: number[];
  lat99: number[];
  late: number[];
  cpu: number[];
  stall: number[];
  /** One byte's echo round trip through the path [us]: p50, p99 (echoRoundTrip). */
  rt?: { p50: number; p99: number };
}

const median = (a: readonly number[]): number => {
  if (a.length === 0) return NaN;
  const s = a.slice().sort((x, y) => x - y);
  return s[Math.floor(s.length / 2)]!;
};

/** The echo at the far end of a pty pair: a process of its own that opens its end on the tty path and sends every byte back. */
const ECHO = `const { openSerial } = await import(process.argv[1]);
const o = await openSerial(process.argv[2], 115200, { serial: 'tty' });
o.stream.on('data', (d) => o.stream.write(d));
process.stdout.write('ready\\n');`;

/**
 * The round trip of one byte through each serial path [us]: a socat pty pair, an echo process at its
 * far end (ECHO, at normal priority), this thread writing one byte and waiting for it `n` times with
 * 0-2 ms pauses. What the path itself adds, without a rig or an adapter model in the way.
 */
export async function echoRoundTrip(serial: Path, n: number): Promise<{ p50: number; p99: number }> {
  const { createPtyPair } = await import('../mock/pty.js');
  const { openSerial } = await import('../transport/open.js');
  const pair = await createPtyPair(10_000);
  const echo = spawn(
    process.execPath,
    ['--input-type=module', '-e', ECHO, fileURLToPath(new URL('../transport/open.js', import.meta.url)), pair.paths[0]],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  try {
    await new Promise<void>((resolve, reject) => {
      echo.stdout.once('data', () => resolve());
      echo.once('exit', (c) => reject(new Error(`the echo process ended (${c})`)));
    });
    const o = await openSerial(pair.paths[1], 115200, { serial, rt: true });
    const rts: number[] = [];
    try {
      for (let i = 0; i < n; i++) {
        const t0 = performance.now();
        await new Promise<void>((resolve) => {
          o.stream.once('data', () => resolve());
          o.stream.write(Buffer.of(0x55));
        });
        rts.push((performance.now() - t0) * 1000);
        await new Promise((r) => setTimeout(r, i % 3));
      }
    } finally {
      await new Promise<void>((r) => (o.stream as unknown as { close(cb: () => void): void }).close(() => r()));
    }
    rts.sort((a, b) => a - b);
    return { p50: Math.round(rts[Math.floor(n * 0.5)]!), p99: Math.round(rts[Math.floor(n * 0.99)]!) };
  } finally {
    echo.kill('SIGKILL');
    await pair.close();
  }
}

/** Runs on one rig under one condition, tty and serialport alternating, `runs` each. */
async function rigRuns(r: (typeof RIGS)[number], runs: number): Promise<Record<Path, PathAgg>> {
  const fresh = (): PathAgg => ({ done: 0, faulted: [], rms: [], lat50: [], lat99: [], late: [], cpu: [], stall: [] });
  const agg: Record<Path, PathAgg> = { tty: fresh(), serialport: fresh() };
  const pty = await startPtyRig(r.rig, true);
  try {
    for (let i = 0; i < runs; i++) {
      for (const p of i % 2 === 0 ? PATHS : [...PATHS].reverse()) {
        const out = await runOnce([
          '--rig',
          r.rig,
          '--port',
          pty.path,
          '--serial',
          p,
          '--rate',
          String(r.rateHz),
          '--traj',
          'reach',
          '--rt',
        ]);
        const s = tallyRun(agg[p], out);
        const t = s?.timing;
        if (!t) continue;
        agg[p].lat50.push(t.latencyP50Us);
        agg[p].lat99.push(t.latencyP99Us);
        agg[p].late.push(t.lateSamples);
        agg[p].cpu.push(t.hostCpuPct);
        agg[p].stall.push(t.maxStallMs);
      }
    }
    if (r.pings) for (const p of PATHS) agg[p].rt = await echoRoundTrip(p, 2000);
  } finally {
    await pty.stop();
  }
  return agg;
}

const f3 = (a: ReadonlyPair): string => a.map((v) => v.toFixed(3)).join('/');

/** The serial section: `runs` reaches per path, rig and condition. */
export async function benchSerial(runs = 5): Promise<BenchResult> {
  const rows: [string, string, string][] = [];
  const figures: Record<string, number | string | number[]> = {};
  for (const cond of CONDITIONS) {
    const stop = cond.hogs ? startHogs(cond.hogs) : () => undefined;
    try {
      for (const r of RIGS) {
        const t0 = Date.now();
        const agg = await rigRuns(r, runs);
        const load = load1();
        const rms = (p: Path): ReadonlyPair =>
          asPair(
            pairOf((j) => median(agg[p].rms.map((x) => x[j]))),
            `${p}'s median tracking`,
          );
        const tty = rms('tty');
        const sp = rms('serialport');
        const ratio = Math.max(...pairOf((j) => sp[j] / tty[j]));
        for (const p of PATHS) {
          const a = agg[p];
          const key = `${r.name} | ${cond.name}, --serial ${p}, --rt, load ${load.toFixed(1)}`;
          const rt = a.rt ? `; one byte's echo round trip p50 ${a.rt.p50} p99 ${a.rt.p99} us` : '';
          rows.push([
            key,
            `${a.done}/${runs} done, RMS ${f3(rms(p))} deg${p === 'serialport' ? ` (x${ratio.toFixed(2)} of tty)` : ''}`,
            `latency p50 ${median(a.lat50)} p99 ${median(a.lat99)} us, late ${median(a.late)}/run, host CPU ${median(a.cpu).toFixed(1)} %, max stall ${Math.max(...a.stall, 0).toFixed(1)} ms${rt}${a.faulted.length ? `; faults: ${[...new Set(a.faulted)].slice(0, 3).join('; ')}` : ''}`,
          ]);
          figures[key] = {
            done: a.done,
            runs,
            rmsDeg: rms(p),
            ...(p === 'serialport' ? { ratioToTty: ratio } : {}),
            latencyP50Us: median(a.lat50),
            latencyP99Us: median(a.lat99),
            lateMedian: median(a.late),
            hostCpuPct: median(a.cpu),
            ...(a.rt ? { echoRoundTripP50Us: a.rt.p50, echoRoundTripP99Us: a.rt.p99 } : {}),
            faults: a.faulted,
            load1min: load,
            secondsForRig: (Date.now() - t0) / 1000,
          } as never;
        }
      }
    } finally {
      stop();
    }
  }
  return section(
    'Serial paths on Linux: --serial tty vs --serial serialport (relay process) over the pty rigs, real time, --rt (median of runs; RMS: encoder tracking of the reach, joint 1/joint 2; latency: sample instant -> answer written, host clock; target: serialport within 1.3 x tty)',
    rows,
    figures,
  );
}
