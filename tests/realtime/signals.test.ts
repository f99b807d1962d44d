// Ctrl-C and SIGTERM mid-run, as users send them, on a machine that may be heavily loaded (six CPU
// hogs on two cores): a soft stop with the zero acknowledged, never a loop thread cut from the main
// thread because the machine was busy. "Mid-run" is the loop's own progress (a tick of the recording
// at a loop time), never a wall-clock delay; the main thread's deadline is the loop thread's own CPU
// time (src/run/stop-watch.ts), so only a thread that is really blocked is cut.
import { spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { describe, expect, it } from 'vitest';
import { BIN, ROOT } from '../helpers/cli.js';
import { own } from '../helpers/owned-children.js';

const dir = mkdtempSync(`${tmpdir()}/twolink-signals-`);

/** How often the recording is read [ms]: a poll, not a time limit. */
const POLL_MS = 50;

/** Calls `onTick(t)` with the loop time [s] of each new tick line of the recording `file` as it grows. */
function followTicks(file: string, onTick: (t: number) => void): () => void {
  let offset = 0;
  let rest = '';
  const buf = Buffer.alloc(1 << 16);
  const timer = setInterval(() => {
    let fd: number;
    try {
      fd = openSync(file, 'r');
    } catch {
      return; // not created yet
    }
    try {
      for (;;) {
        const n = readSync(fd, buf, 0, buf.length, offset);
        if (n <= 0) break;
        offset += n;
        rest += buf.toString('utf8', 0, n);
      }
    } finally {
      closeSync(fd);
    }
    const lines = rest.split('\n');
    rest = lines.pop()!;
    for (const l of lines) {
      const m = /^\{"kind":"tick","t":([0-9.e-]+)/.exec(l);
      if (m) onTick(Number(m[1]));
    }
  }, POLL_MS);
  return () => clearInterval(timer);
}

/** Runs twolink with `--record file`, sends `signal` once the loop's time has reached `atLoopS`. */
function runWithSignalAt(
  signal: NodeJS.Signals,
  atLoopS: number,
  file: string,
  args: string[],
): Promise<{ code: number | null; stdout: string; stderr: string; sentAt: number }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--single-threaded-gc', BIN, ...args, '--record', file], { cwd: ROOT });
    own(child);
    let stdout = '';
    let stderr = '';
    let sentAt = NaN;
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const stopFollowing = followTicks(file, (t) => {
      if (Number.isNaN(sentAt) && t >= atLoopS) {
        sentAt = t;
        child.kill(signal);
      }
    });
    child.on('close', (code) => {
      stopFollowing();
      resolve({ code, stdout, stderr, sentAt });
    });
  });
}

const lastLine = (s: string): any => JSON.parse(s.trim().split('\n').at(-1)!);

describe('signals mid-run: a soft stop, whatever the load', () => {
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    it(`${sig} during the reach: stop interrupted:${sig}, the zero acknowledged, the last tick stopped with a zero command`, async () => {
      const file = `${dir}/${sig}.ndjson`;
      // the reach's approach takes ~1.4 s of loop time: 1.0 s is mid-move
      const r = await runWithSignalAt(sig, 1.0, file, [
        'run',
        '--rig',
        'rigs/mock-arm.json',
        '--mock',
        '--rt',
        '--traj',
        'reach',
        '--json',
      ]);
      expect(r.sentAt).toBeGreaterThanOrEqual(1.0);
      expect(r.code).toBe(130);
      const s = lastLine(r.stdout);
      expect(s.stop).toEqual({ kind: 'interrupted', signal: sig });
      expect(s.stopOutcome).toBe('acknowledged');
      const { readFileSync } = await import('node:fs');
      const lines = readFileSync(file, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      const ticks = lines.filter((l) => l.kind === 'tick');
      expect(lines.at(-1).kind).toBe('summary');
      expect(ticks.length).toBe(lines.at(-1).ticks);
      ticks.forEach((t, i) => expect(t.i).toBe(i));
      expect(ticks.at(-1).state).toBe('stopped');
      expect(ticks.at(-1).duty).toEqual([0, 0]);
    });
  }

  it('Ctrl-C while the loop thread is really blocked (busy on its own CPU): the main thread ends it and says it was blocked, not starved', async () => {
    const file = `${dir}/blocked.ndjson`;
    // The loop thread spins for 8 s from 1.5 s of loop time; the last tick before that is the trigger.
    const r = await runWithSignalAt('SIGINT', 1.45, file, [
      'run',
      '--rig',
      'rigs/mock-arm.json',
      '--mock',
      '--rt',
      '--traj',
      'reach',
      '--inject',
      'busy=8@1.5',
      '--json',
    ]);
    expect(r.code).toBe(130);
    const s = lastLine(r.stdout);
    // Either the signal came in before the block (the soft stop's ticks run into it) or during it: the
    // thread is cut once it has spun 250 ms of its own CPU time without a row.
    expect(s.stop).toEqual({
      kind: 'interrupted',
      signal: 'SIGINT',
      threadCut: expect.stringMatching(
        /^the loop thread did not answer within 250 ms of its own CPU time \(blocked, not starved: it ran \d+ ms in \d+ ms\)$/,
      ),
    });
    expect(s.stopReason).toMatch(
      /^interrupted:SIGINT \(the loop thread did not answer within 250 ms of its own CPU time \(blocked, not starved: it ran \d+ ms in \d+ ms\): twolink ended it from the main thread/,
    );
  });
});

describe('a signal during start-up', () => {
  it('SIGINT as soon as the run has said what it will do (before the loop thread has started): a soft stop, not a cut thread', async () => {
    const r = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(
        process.execPath,
        ['--single-threaded-gc', BIN, 'run', '--rig', 'rigs/mock-arm.json', '--mock', '--rt', '--traj', 'reach', '--headless'],
        { cwd: ROOT },
      );
      own(child);
      let stdout = '';
      let stderr = '';
      let sent = false;
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => {
        stderr += d.toString();
        // printed after the signal handlers are set and before the loop's thread starts
        if (!sent && /twolink run: reach on mock-arm/.test(stderr)) {
          sent = true;
          child.kill('SIGINT');
        }
      });
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });
    expect(r.code).toBe(130);
    expect(r.stdout).toMatch(/^stop: interrupted:SIGINT \(zero command acknowledged\)$/m);
    expect(r.stdout).not.toMatch(/did not answer/);
  });
});
