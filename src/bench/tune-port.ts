/**
 * `npm run bench -- --only tune-port` (issue 33 item 6): `twolink tune --port` and `twolink identify
 * --port` on our Uno firmware in simavr (`twolink rig --firmware --pty --rt`, a fresh rig per command),
 * each `--tune-port-runs N` times (default 3), quiet (as quiet as the shared machine is) and with six CPU
 * hogs at normal priority (`--conditions quiet,heavy`). Per command and condition: completions, each
 * run's wall time, how the others ended (their last FAIL or error line), and the one-minute load before
 * and after. Printed, never asserted: the test of the same path is tests/realtime/tune-port.test.ts.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startHogs, startPtyRig } from './realtime.js';
import { load1, section, type BenchResult } from './report.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BIN = fileURLToPath(new URL('../../bin/twolink.js', import.meta.url));
const RIG_FILE = 'rigs/mock-arm.json';
/** The longest a command may take before the bench calls it hung [ms] (tune takes about a minute, identify two). */
const CHILD_LIMIT_MS = 600_000;

export type PortCommand = 'tune' | 'identify';

/** The command line of `twolink tune|identify --port` writing into `dir`. */
export function portCommandArgs(cmd: PortCommand, port: string, dir: string): string[] {
  const common = ['--rig', RIG_FILE, '--port', port, '--yes', '--out', join(dir, `${cmd}.json`)];
  return cmd === 'tune' ? ['tune', ...common, '--json'] : ['identify', ...common];
}

/** How one command ended: its exit code, wall time [s], and its last line that says why when not 0. */
export interface PortRun {
  code: number | null;
  wallS: number;
  why: string;
  stderr: string;
  /** The rig file the command was to write. */
  out: string;
  /** How far the simulated board fell behind the wall clock at most [ms], from the rig's end report (undefined: no report). */
  rigBehindMs?: number;
}

/** The line of a command's output that says why it did not complete: its last FAIL, or its last line. */
export function whyNotDone(text: string): string {
  const lines = text.split('\n').filter((l) => l.trim());
  return lines.filter((l) => /\[FAIL\]|twolink: |watchdog|strayed/.test(l)).at(-1) ?? lines.at(-1) ?? '';
}

/** Runs one command as a child (with --single-threaded-gc, as bin/twolink.js does) and waits for it. */
export function runPortCommand(args: string[]): Promise<Omit<PortRun, 'out'>> {
  return new Promise((resolve) => {
    const t0 = process.hrtime.bigint();
    const child = spawn(process.execPath, ['--single-threaded-gc', BIN, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let text = '';
    child.stdout.on('data', (d: Buffer) => (text += d.toString()));
    child.stderr.on('data', (d: Buffer) => (text += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), CHILD_LIMIT_MS);
    child.on('exit', (code) => {
      clearTimeout(timer);
      const wallS = Number(process.hrtime.bigint() - t0) / 1e9;
      resolve({ code, wallS, why: code === 0 ? '' : whyNotDone(text), stderr: text });
    });
  });
}

/** One command on a fresh firmware rig; the rig's own account of the board (its watchdog, its starvation) joins the why. */
export async function portRunOnFirmware(cmd: PortCommand): Promise<PortRun> {
  const rig = await startPtyRig(RIG_FILE, true, true);
  const dir = mkdtempSync(join(tmpdir(), `twolink-${cmd}-port-`));
  const r = { ...(await runPortCommand(portCommandArgs(cmd, rig.path, dir))), out: join(dir, `${cmd}.json`) };
  // The rig's own lines about the board, shown beside the why (for a person: nothing is read from them).
  const { stderr: rigErr, behindMs } = await rig.stop();
  const board = rigErr.split('\n').filter((l) => /zeroed the motor|starved/.test(l));
  const run = behindMs === undefined ? r : { ...r, rigBehindMs: behindMs };
  return board.length && r.code !== 0 ? { ...run, why: `${r.why} | rig: ${board.join(' | ')}` } : run;
}

const CONDITIONS = { quiet: 0, heavy: 6 } as const;

export async function benchTunePort(runs: number, conditions: readonly string[] = Object.keys(CONDITIONS)): Promise<BenchResult> {
  const rows: [string, string, string][] = [];
  const figures: BenchResult['figures'] = {};
  for (const name of conditions) {
    const hogs = CONDITIONS[name as keyof typeof CONDITIONS];
    if (hogs === undefined) throw new Error(`tune-port: unknown condition "${name}" (${Object.keys(CONDITIONS).join(', ')})`);
    for (const cmd of ['tune', 'identify'] as const) {
      const stop = hogs ? startHogs(hogs) : () => undefined;
      const loadBefore = load1();
      const done: PortRun[] = [];
      try {
        for (let k = 0; k < runs; k++) done.push(await portRunOnFirmware(cmd));
      } finally {
        stop();
      }
      const loadAfter = load1();
      const ok = done.filter((r) => r.code === 0).length;
      const label = `${cmd} --port, ${name}${hogs ? ` (${hogs} hogs)` : ''}`;
      rows.push([
        label,
        `${ok}/${runs}`,
        `completed; wall ${done.map((r) => `${r.wallS.toFixed(1)} s${r.code === 0 ? '' : ` (exit ${r.code})`}`).join(', ')}; load ${loadBefore.toFixed(1)} -> ${loadAfter.toFixed(1)}`,
      ]);
      for (const r of done) if (r.code !== 0) rows.push(['', '', `  not done: ${r.why.slice(0, 300)}`]);
      figures[`${cmd}.${name}.completed`] = ok;
      figures[`${cmd}.${name}.wallS`] = done.map((r) => Number(r.wallS.toFixed(1)));
      figures[`${cmd}.${name}.load`] = [Number(loadBefore.toFixed(2)), Number(loadAfter.toFixed(2))];
    }
  }
  return section(`tune and identify --port on the firmware rig (simavr, real time), ${runs} runs each`, rows, figures);
}
