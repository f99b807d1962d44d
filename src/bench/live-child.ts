/**
 * A twolink command run as a child process with the live view on, as a user runs it: the port it says it
 * listens on (its stderr line "Foxglove live view on ws://HOST:PORT"), and its end with what it printed.
 * Used by the fuzz bench and the live view's command-line tests.
 */
import { spawn } from 'node:child_process';

export interface LiveChildEnd {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface LiveChild {
  /** The live view's port, once the command has said it. */
  port: Promise<number>;
  /** The command's end and what it printed. */
  done: Promise<LiveChildEnd>;
  /** True once it has exited. */
  exited(): boolean;
}

/** Starts `node [nodeFlags] BIN args` in `cwd`. */
export function spawnLiveChild(bin: string, args: readonly string[], cwd: string, nodeFlags: readonly string[] = []): LiveChild {
  const child = spawn(process.execPath, [...nodeFlags, bin, ...args], { cwd });
  let stdout = '';
  let stderr = '';
  let found: (p: number) => void = () => undefined;
  const port = new Promise<number>((r) => (found = r));
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
    const m = /Foxglove live view on ws:\/\/[^:]+:(\d+)/.exec(stderr);
    if (m) found(Number(m[1]));
  });
  const done = new Promise<LiveChildEnd>((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })));
  return { port, done, exited: () => child.exitCode !== null || child.signalCode !== null };
}
