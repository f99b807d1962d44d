// Starts `twolink rig --pty` in its own process and returns the host end of the pty.
import { spawn, type ChildProcess } from 'node:child_process';
import { BIN, ROOT } from './cli.js';
import { hangGuardMs } from './hang-guard.js';
import { own } from './owned-children.js';

export interface PtyRig {
  path: string;
  child: ChildProcess;
  stderr: () => string;
  stop(): Promise<void>;
}

export function startPtyRig(rigFile = 'rigs/mock-arm.json', extra: string[] = []): Promise<PtyRig> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--single-threaded-gc', BIN, 'rig', '--rig', rigFile, '--pty', ...extra], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    own(child);
    let out = '';
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const limitMs = hangGuardMs(10_000);
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`twolink rig printed no pty within ${limitMs / 1000} s: ${err}`));
    }, limitMs);
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const line = out.split('\n')[0];
      if (out.includes('\n') && line) {
        clearTimeout(timer);
        // give the rig a moment to open its end
        setTimeout(
          () =>
            resolve({
              path: line.trim(),
              child,
              stderr: () => err,
              stop: () =>
                new Promise((r) => {
                  if (child.exitCode !== null || child.signalCode !== null) return r();
                  child.once('exit', () => r());
                  child.kill('SIGTERM');
                }),
            }),
          300,
        );
      }
    });
    child.on('exit', (code) => reject(new Error(`twolink rig exited (${code}): ${err}`)));
  });
}
