/**
 * Start-up of the `twolink` command: wall time from spawning `node bin/twolink.js model fk ...` to its
 * exit, against `node -e 0` (Node's own start-up) and `twolink --help` (the command table alone).
 * The runs are interleaved so that a change in the machine's load hits all three alike; the figure
 * to watch is the median over Node's own (the target: `model fk` within 70 ms of `node -e 0`, median of
 * 7 as `npm run bench` runs it); the CPU
 * time of each process (user + system, from process.cpuUsage() at exit) varies less with the load.
 *
 * What keeps it low: bin/twolink.js loads only dist/cli/main.js, which imports each command's module
 * when the command runs (the model commands never load serialport, johnny-five, blessed or vega, nor
 * the trajectory code and the trajectory file's schema unless the command is `traj`), and `npm run
 * build` bundles zod into one file that runs with V8's code cache (scripts/vendor-zod.mjs), which
 * Node loads far faster than zod's ~95 ES modules. Run alone: `node dist/bench/startup.js [runs]`.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { load1, printSection, section, type BenchResult } from './report.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BIN = `${ROOT}bin/twolink.js`;

const COMMANDS: { name: string; args: string[] }[] = [
  { name: 'node -e 0', args: ['-e', '0'] },
  { name: 'twolink --help', args: [BIN, '--help'] },
  { name: 'twolink model fk', args: [BIN, 'model', 'fk', '--rig', 'rigs/seed-arm.json', '--q', '20,70', '--qd', '10,0', '--deg'] },
];

/** What `twolink model fk` may add to Node's own start-up, median wall [ms] (issue 22). */
const FK_TARGET_MS = 70;

/** Writes the process's CPU time at exit (user + system, all threads) [us] as JSON, `{"cpuUs": N}`, on fd 3 (a pipe of its own: not words on stderr). */
const CPU_PROBE = `data:text/javascript,import{writeSync}from'node:fs';process.on('exit',()=>{const u=process.cpuUsage();writeSync(3,JSON.stringify({cpuUs:u.user+u.system}))})`;
const cpuReport = z.strictObject({ cpuUs: z.number().finite().min(0) });

/** Wall time [ms] and CPU time [ms] of one run; throws if the command fails. */
function once(args: string[]): { wallMs: number; cpuMs: number } {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(process.execPath, ['--import', CPU_PROBE, ...args], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe', 'pipe'] });
  const wallMs = Number(process.hrtime.bigint() - t0) / 1e6;
  const err = r.stderr.toString();
  if (r.status !== 0) throw new Error(`node ${args.join(' ')} exited ${r.status}: ${err.trim()}`);
  return { wallMs, cpuMs: cpuUs(String(r.output[3] ?? '')) / 1000 };
}

/** The probe's CPU time [us], NaN when it wrote none (the process died before its exit handlers). */
function cpuUs(text: string): number {
  try {
    const r = cpuReport.safeParse(JSON.parse(text));
    return r.success ? r.data.cpuUs : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.round(q * (sorted.length - 1)))]!;
}

/** Whether dist/ imports zod as the bundled file (see scripts/vendor-zod.mjs). */
function zodBundled(): boolean {
  const dir = `${ROOT}dist/config`;
  if (!existsSync(`${ROOT}dist/vendor/zod.js`) || !existsSync(dir)) return false;
  return !readdirSync(dir).some((f) => f.endsWith('.js') && /from ['"]zod['"]/.test(readFileSync(`${dir}/${f}`, 'utf8')));
}

/** Start-up times [ms] of Node, `twolink --help` and `twolink model fk`, `runs` of each, interleaved. */
export function benchStartup(runs = 15): BenchResult {
  // each command with its wall and CPU times [ms], one per run
  const timed = COMMANDS.map((c) => ({ ...c, wall: [] as number[], cpu: [] as number[] }));
  for (const c of COMMANDS) once(c.args); // warm the file cache
  for (let k = 0; k < runs; k++) {
    for (const c of timed) {
      const r = once(c.args);
      c.wall.push(r.wallMs);
      c.cpu.push(r.cpuMs);
    }
  }
  const sorted = (t: number[]): number[] => [...t].sort((a, b) => a - b);
  const stats = timed.map((t) => {
    const w = sorted(t.wall);
    const c = sorted(t.cpu);
    return { name: t.name, p50: quantile(w, 0.5), p90: quantile(w, 0.9), min: w[0]!, cpu: quantile(c, 0.5) };
  });
  const [base, help, fk] = stats;
  if (!base || !help || !fk) throw new Error(`start-up: ${stats.length} commands timed, not node, help and model fk`);
  const rows: [string, string, string][] = stats.map((s, i) => {
    const over =
      i === 0 ? 'Node itself' : `+${(s.p50 - base.p50).toFixed(0)} ms wall, +${(s.cpu - base.cpu).toFixed(0)} ms CPU over Node's own`;
    const target = i === COMMANDS.length - 1 ? ` (target +${FK_TARGET_MS} ms)` : '';
    return [
      s.name,
      `${s.p50.toFixed(0)} ms`,
      `median wall of ${runs} (p90 ${s.p90.toFixed(0)}, min ${s.min.toFixed(0)}); CPU ${s.cpu.toFixed(0)} ms; ${over}${target}`,
    ];
  });
  const bundled = zodBundled();
  rows.push([
    'zod',
    bundled ? 'one file' : '95 modules',
    bundled ? 'dist/vendor/zod.js (npm run build)' : 'dist/ built by plain tsc: run npm run build for the bundled zod',
  ]);
  rows.push(['machine load', load1().toFixed(2), 'one-minute load average at the end (2 cores shared: medians, not means)']);
  return section('start-up (real time)', rows, {
    nodeP50Ms: Number(base.p50.toFixed(1)),
    nodeCpuMs: Number(base.cpu.toFixed(1)),
    helpP50Ms: Number(help.p50.toFixed(1)),
    modelFkP50Ms: Number(fk.p50.toFixed(1)),
    modelFkP90Ms: Number(fk.p90.toFixed(1)),
    modelFkCpuMs: Number(fk.cpu.toFixed(1)),
    modelFkOverNodeMs: Number((fk.p50 - base.p50).toFixed(1)),
    zodBundled: bundled ? 'yes' : 'no',
  });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const runs = Number(process.argv[2] ?? 15);
  printSection(benchStartup(Number.isInteger(runs) && runs > 0 ? runs : 15));
}
