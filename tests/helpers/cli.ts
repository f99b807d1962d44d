// Runs the built `twolink` command (dist/, compiled by `npm test` before vitest starts).
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { hangGuardMs } from './hang-guard.js';
import { own } from './owned-children.js';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const BIN = `${ROOT}bin/twolink.js`;

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs `twolink args...` from the repo root (or `cwd`) and collects its output; killed if it hangs (hangGuardMs of `timeoutMs`, what a quiet machine needs). */
export function twolink(
  args: readonly string[],
  opts: { input?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number; cwd?: string } = {},
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--single-threaded-gc', BIN, ...args], {
      cwd: opts.cwd ?? ROOT,
      env: { ...process.env, ...opts.env },
    });
    own(child);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    // A hang guard (hang-guard.ts): `timeoutMs` is what a quiet machine needs.
    const timer = setTimeout(() => child.kill('SIGKILL'), hangGuardMs(opts.timeoutMs ?? 60_000));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
    if (opts.input !== undefined) child.stdin.end(opts.input);
    else child.stdin.end();
  });
}

/** The last non-empty stdout line, parsed as JSON. */
/** For a failed exit code's message: stderr, and the stop the summary (the last stdout line) gives, if any. */
export function whyExit(r: Pick<CliResult, 'stderr'> & { stdout?: string }): string {
  const last = (r.stdout ?? '').trim().split('\n').at(-1) ?? '';
  let stop = '';
  try {
    const j = JSON.parse(last) as { stopReason?: unknown };
    if (typeof j.stopReason === 'string') stop = `stop: ${j.stopReason}\n`;
  } catch {
    stop = last ? `stdout: ${last.slice(0, 400)}\n` : '';
  }
  return `${stop}${r.stderr}`;
}

export function lastJson(r: CliResult): any {
  const lines = r.stdout.trim().split('\n');
  return JSON.parse(lines[lines.length - 1]!);
}
