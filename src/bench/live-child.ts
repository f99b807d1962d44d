/**
 * A twolink command run as a child process with the live view on, as a user runs it: the port it
 * listens on and its end with what it printed. The values come as data: the child's report records on
 * fd 3 (TWOLINK_REPORT_FD, src/run/run-report.ts: `live` with the port, `live-end` with the live view's
 * counts), read with their schema; its stderr stays words for people. Used by the fuzz bench and the
 * live view's command-line tests.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { parseRunReport, REPORT_FD_ENV, type RunReport } from '../run/run-report.js';

export interface LiveChildEnd {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** The records it wrote on fd 3, in order. */
  reports: RunReport[];
}

export interface LiveChild {
  /** The live view's port, once the command has reported it; rejects if it ended without one. */
  port: Promise<number>;
  /** The command's end and what it printed. */
  done: Promise<LiveChildEnd>;
  /** True once it has exited. */
  exited(): boolean;
}

/** Starts `node [nodeFlags] BIN args` in `cwd`, with its report records on fd 3. */
export function spawnLiveChild(bin: string, args: readonly string[], cwd: string, nodeFlags: readonly string[] = []): LiveChild {
  const child = spawn(process.execPath, [...nodeFlags, bin, ...args], {
    cwd,
    env: { ...process.env, [REPORT_FD_ENV]: '3' },
    stdio: ['pipe', 'pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  const reports: RunReport[] = [];
  let bad: Error | undefined;
  let found: (p: number) => void = () => undefined;
  let missing: (e: Error) => void = () => undefined;
  const port = new Promise<number>((resolve, reject) => {
    found = resolve;
    missing = reject;
  });
  port.catch(() => undefined); // (a caller that never awaits it)
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const records = new Promise<void>((resolve) => {
    const lines = createInterface({ input: child.stdio[3] as Readable });
    lines.on('line', (line) => {
      try {
        const r = parseRunReport(line);
        reports.push(r);
        if (r.kind === 'live') found(r.port);
      } catch (e) {
        bad ??= e as Error;
      }
    });
    lines.on('close', () => resolve());
  });
  const done = new Promise<LiveChildEnd>((resolve) =>
    child.on('close', (code, signal) => {
      void records.then(() => {
        const said = stderr.trim().split('\n').at(-1) ?? '';
        missing(
          bad ?? new Error(`${args.join(' ')} ended (code ${code}, signal ${signal}) without reporting its live view's port: ${said}`),
        );
        resolve({ code, signal, stdout, stderr, reports });
      });
    }),
  );
  return { port, done, exited: () => child.exitCode !== null || child.signalCode !== null };
}

/** The live view's counts a child reported when its view closed (`live-end`), or undefined (no client talked to it). */
export function liveEnd(end: Pick<LiveChildEnd, 'reports'>): Extract<RunReport, { kind: 'live-end' }> | undefined {
  return end.reports.find((r): r is Extract<RunReport, { kind: 'live-end' }> => r.kind === 'live-end');
}
