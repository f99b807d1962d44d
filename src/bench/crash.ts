/**
 * Issue 32: how soon a crash of twolink stops the arm on the Firmata path, whose stock firmware has no
 * board watchdog. `twolink rig --rig rigs/mock-arm-firmata.json --pty --report` (the Firmata mock
 * board in a process of its own, real time) and `twolink run --port ... --traj reach` with the
 * test-only hook TWOLINK_TEST_CRASH (src/run/crash.ts): the host says when it throws (its `test-crash`
 * record on fd 3, TWOLINK_REPORT_FD), the rig when its PWM pins took the zero (its `motors` report), both
 * values on the machine's monotonic clock. The figure is the time between the
 * two [ms, real time]; the target is 20 ms. Host and rig at their default (--rt) priority.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { Readable } from 'node:stream';
import { parseMockReport, type MockReport } from '../mock/mock-report.js';
import { parseRunReport, REPORT_FD_ENV, type RunReport } from '../run/run-report.js';
import { load1, section, type BenchResult } from './report.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BIN = `${ROOT}bin/twolink.js`;
const RIG = 'rigs/mock-arm-firmata.json';

type Motors = Extract<MockReport, { kind: 'motors' }>;

/** One run: [ms from the throw to the pins at 0] or a reason it did not measure (the run ended before the throw). */
async function once(crash: string): Promise<number | string> {
  const rig = spawn(process.execPath, ['--single-threaded-gc', BIN, 'rig', '--rig', RIG, '--pty', '--report'], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const motors: Motors[] = [];
  const host = await new Promise<string>((resolve, reject) => {
    let path = '';
    rig.on('exit', (code) => reject(new Error(`twolink rig exited (${code}) before serving`)));
    createInterface({ input: rig.stdout }).on('line', (line) => {
      const r = parseMockReport(line);
      if (r.kind === 'pty') path = r.host;
      else if (r.kind === 'serving') resolve(path);
      else if (r.kind === 'motors') motors.push(r);
    });
  });
  try {
    const reports = await new Promise<RunReport[]>((resolve, reject) => {
      const run = spawn(process.execPath, ['--single-threaded-gc', BIN, 'run', '--rig', RIG, '--port', host, '--traj', 'reach', '--json'], {
        cwd: ROOT,
        env: { ...process.env, TWOLINK_TEST_CRASH: crash, [REPORT_FD_ENV]: '3' },
        stdio: ['ignore', 'ignore', 'ignore', 'pipe'],
      });
      const got: RunReport[] = [];
      const lines = createInterface({ input: run.stdio[3] as Readable });
      lines.on('line', (line) => {
        try {
          got.push(parseRunReport(line));
        } catch (e) {
          reject(e instanceof Error ? e : new Error(String(e)));
        }
      });
      lines.on('close', () => resolve(got));
    });
    const threw = reports.find((r) => r.kind === 'test-crash');
    if (!threw) return 'the run ended before the throw';
    const thrown = threw.monoMs;
    // The host has exited after the board confirmed the zero: the rig's report of it is on its way.
    for (let k = 0; k < 100 && !motors.some((x) => x.zero && x.monoMs > thrown); k++) await new Promise((r) => setTimeout(r, 10));
    const zero = motors.find((x) => x.zero && x.monoMs > thrown);
    return zero ? zero.monoMs - thrown : 'no zero reported';
  } finally {
    rig.kill('SIGTERM');
    await new Promise((r) => (rig.exitCode !== null ? r(undefined) : rig.once('exit', r)));
  }
}

const pct = (xs: number[], p: number): number => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))]!;

export async function benchCrash(runs = 5): Promise<BenchResult> {
  const rows: [string, string, string][] = [];
  const figures: BenchResult['figures'] = {};
  const loadBefore = load1();
  for (const crash of ['main@1', 'main-rejection@1', 'loop@1']) {
    const ms: number[] = [];
    const missed: string[] = [];
    for (let i = 0; i < runs; i++) {
      const r = await once(crash);
      if (typeof r === 'number') ms.push(r);
      else missed.push(r);
    }
    const thread = crash.split('@')[0]!;
    figures[`${thread}ThrowToZeroMs`] = ms;
    rows.push([
      `${thread}: throw to PWM 0`,
      ms.length ? `p50 ${pct(ms, 0.5).toFixed(1)} ms, max ${Math.max(...ms).toFixed(1)} ms` : 'none',
      `${ms.length} of ${runs} runs${missed.length ? ` (${missed.join('; ')})` : ''}; target 20 ms`,
    ]);
  }
  rows.push([
    'conditions',
    `load ${loadBefore.toFixed(1)} -> ${load1().toFixed(1)}`,
    'real time; the Firmata mock pty rig (stock: no watchdog), rigs/mock-arm-firmata.json (16u2 adapter model, 57600 baud), reach; host and rig --rt; the PWM pins as the rig board took the write (monotonic clock of both processes)',
  ]);
  return section('crash: a throw in twolink to the Firmata PWM pins at 0 (issue 32)', rows, figures);
}
