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
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { printSection, section, type BenchResult } from './report.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BIN = `${ROOT}bin/twolink.js`;

const COMMANDS: { name: string; args: string[] }[] = [
  { name: 'node -e 0', args: ['-e', '0'] },
  { name: 'twolink --help', args: [BIN, '--help'] },
  { name: 'twolink model fk', args: [BIN, 'model', 'fk', '--rig', 'rigs/seed-arm.json', '--q', '20,70', '--qd', '10,0', '--deg'] },
];

/** What `twolink model fk` may add to Node's own start-up, median wall [ms] (issue 22). */
const FK_TARGET_MS = 70;

/** Prints the process's CPU time at exit (user + system, all threads) [us] on stderr. */
const CPU_PROBE = `data:text/javascript,process.on('exit',()=>{const u=process.cpuUsage();process.stderr.write('\\ncpu-us '+(u.user+u.system)+'\\n')})`;

/** Wall time [ms] and CPU time [ms] of one run; throws if the command fails. */
function once(args: string[]): { wallMs: number; cpuMs: number } {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(process.execPath, ['--import', CPU_PROBE, ...args], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
  const wallMs = Number(process.hrtime.bigint() - t0) / 1e6;
  const err = r.stderr.toString();
  if (r.status !== 0) throw new Error(`node ${args.join(' ')} exited ${r.status}: ${err.trim()}`);
  const cpu = /cpu-us (\d+)/.exec(err);
  return { wallMs, cpuMs: cpu ? Number(cpu[1]) / 1000 : Number.NaN };
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
  const wall = COMMANDS.map(() => [] as number[]);
  const cpu = COMMANDS.map(() => [] as number[]);
  for (const c of COMMANDS) once(c.args); // warm the file cache
  for (let k = 0; k < runs; k++) {
    COMMANDS.forEach((c, i) => {
      const r = once(c.args);
      wall[i]!.push(r.wallMs);
      cpu[i]!.push(r.cpuMs);
    });
  }
  const sorted = (t: number[]): number[] => [...t].sort((a, b) => a - b);
  const stats = COMMANDS.map((_, i) => {
    const w = sorted(wall[i]!);
    const c = sorted(cpu[i]!);
    return { p50: quantile(w, 0.5), p90: quantile(w, 0.9), min: w[0]!, cpu: quantile(c, 0.5) };
  });
  const base = stats[0]!;
  const rows: [string, string, string][] = COMMANDS.map((c, i) => {
    const s = stats[i]!;
    const over = i === 0 ? 'Node itself' : `+${(s.p50 - base.p50).toFixed(0)} ms wall, +${(s.cpu - base.cpu).toFixed(0)} ms CPU over Node's own`;
    const target = i === COMMANDS.length - 1 ? ` (target +${FK_TARGET_MS} ms)` : '';
    return [c.name, `${s.p50.toFixed(0)} ms`, `median wall of ${runs} (p90 ${s.p90.toFixed(0)}, min ${s.min.toFixed(0)}); CPU ${s.cpu.toFixed(0)} ms; ${over}${target}`];
  });
  const bundled = zodBundled();
  rows.push(['zod', bundled ? 'one file' : '95 modules', bundled ? 'dist/vendor/zod.js (npm run build)' : 'dist/ built by plain tsc: run npm run build for the bundled zod']);
  rows.push(['machine load', os.loadavg()[0]!.toFixed(2), 'one-minute load average at the end (2 cores shared: medians, not means)']);
  return section('start-up (real time)', rows, {
    nodeP50Ms: Number(base.p50.toFixed(1)),
    nodeCpuMs: Number(base.cpu.toFixed(1)),
    helpP50Ms: Number(stats[1]!.p50.toFixed(1)),
    modelFkP50Ms: Number(stats[2]!.p50.toFixed(1)),
    modelFkP90Ms: Number(stats[2]!.p90.toFixed(1)),
    modelFkCpuMs: Number(stats[2]!.cpu.toFixed(1)),
    modelFkOverNodeMs: Number((stats[2]!.p50 - base.p50).toFixed(1)),
    zodBundled: bundled ? 'yes' : 'no',
  });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const runs = Number(process.argv[2] ?? 15);
  printSection(benchStartup(Number.isInteger(runs) && runs > 0 ? runs : 15));
}
