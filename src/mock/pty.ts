/**
 * A pair of connected pseudo-terminals from socat (Debian package `socat`): one end for the mock rig,
 * the other for the host, which opens it like any serial device. socat ends with the process that
 * started it (tied.ts), even one killed with SIGKILL.
 */
import type { ChildProcess } from 'node:child_process';
import { endChild, spawnTied } from './tied.js';

export interface PtyPair {
  /** The two device paths, e.g. /dev/pts/3 and /dev/pts/4. */
  paths: [string, string];
  process: ChildProcess;
  /** Ends socat; resolves once it has exited. */
  close(): Promise<void>;
}

/**
 * Starts `socat -d -d pty,raw,echo=0 pty,raw,echo=0` and waits for the two paths it prints. `signal`
 * (a SIGTERM while it waits): socat is ended, and the promise rejects once it has exited.
 */
export function createPtyPair(timeoutMs = 5000, signal?: AbortSignal): Promise<PtyPair> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(new Error('stopped before socat was started'));
      return;
    }
    let child: ChildProcess;
    try {
      child = spawnTied('socat', ['-d', '-d', 'pty,raw,echo=0', 'pty,raw,echo=0'], { stdio: ['ignore', 'ignore', 'pipe'] });
    } catch (e) {
      reject(new Error(`cannot start socat: ${(e as Error).message}`));
      return;
    }
    const paths: string[] = [];
    let err = '';
    const timer = setTimeout(() => {
      child.kill();
      reject(new Error(`socat printed no pty paths within ${timeoutMs} ms: ${err.trim()}`));
    }, timeoutMs);
    child.on('error', (e) => {
      clearTimeout(timer);
      const missing = (e as NodeJS.ErrnoException).code === 'ENOENT';
      reject(
        new Error(
          missing ? 'socat is not installed: sudo apt-get install socat (it makes the pseudo-terminal pair)' : `socat: ${e.message}`,
        ),
      );
    });
    const onAbort = (): void => {
      clearTimeout(timer);
      void endChild(child).then(() => reject(new Error('stopped while socat was starting')));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    child.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      for (const m of err.matchAll(/PTY is (\/dev\/\S+)/g)) if (!paths.includes(m[1]!)) paths.push(m[1]!);
      if (paths.length >= 2 && !signal?.aborted) {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        resolve({ paths: [paths[0]!, paths[1]!], process: child, close: () => endChild(child) });
      }
    });
  });
}
