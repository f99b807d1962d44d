// The fault matrix at the level users meet it: the twolink command in real time, signals, injections
// (--inject), bad ports, bad files. What the arm does (the summary's stop reason and the board's confirmation), what the user
// sees (exit code, stderr), what the recording holds (valid NDJSON to the last tick, a summary line).
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { describe, expect, it } from 'vitest';
import { BIN, lastJson, ROOT, twolink } from '../helpers/cli.js';
import { startPtyRig } from '../helpers/pty-rig.js';
import { own } from '../helpers/owned-children.js';

const dir = mkdtempSync(`${tmpdir()}/twolink-faults-`);

/** Every line is JSON; returns the parsed lines. */
function readRecording(file: string): any[] {
  const text = readFileSync(file, 'utf8');
  expect(text.endsWith('\n')).toBe(true);
  return text
    .trim()
    .split('\n')
    .map((l, i) => {
      try {
        return JSON.parse(l);
      } catch {
        throw new Error(`${file}:${i + 1} is not JSON`);
      }
    });
}

describe('the host: signals, injections on the loop thread, a full disk', () => {
  // SIGINT and SIGTERM mid-run (soft stop, and a blocked loop thread): tests/realtime/signals.test.ts
  it('an exception inside the loop: fault, motors zeroed, the recording ends with the reason', async () => {
    const file = `${dir}/throw.ndjson`;
    const r = await twolink([
      'run',
      '--rig',
      'rigs/mock-arm.json',
      '--mock',
      '--rt',
      '--traj',
      'reach',
      '--inject',
      'throw@1',
      '--record',
      file,
      '--json',
    ]);
    expect(r.code).toBe(1);
    expect(lastJson(r).stop).toEqual({
      kind: 'fault',
      fault: { kind: 'internal', where: 'the loop thread', message: 'injected exception (--inject throw)' },
    });
    const lines = readRecording(file);
    expect(lines.at(-1).kind).toBe('summary');
    expect(lines.at(-1).stop).toEqual(lastJson(r).stop);
    expect(lines.at(-1).stopReason).toMatch(
      /^fault:internal: an error twolink did not catch, in the loop thread: injected exception \(--inject throw\)/,
    ); // the words, for people
    // the motors were zeroed: the last tick's command is zero
    const ticks = lines.filter((l: { kind: string }) => l.kind === 'tick');
    expect(ticks.at(-1).duty).toEqual([0, 0]);
  });

  it('the loop thread is busy for a second: the board (its own thread) samples on, its watchdog stops the arm, the late samples and the stall are counted', async () => {
    const r = await twolink([
      'run',
      '--rig',
      'rigs/mock-arm.json',
      '--mock',
      '--rt',
      '--traj',
      'reach',
      '--inject',
      'busy=1@1.5',
      '--json',
    ]);
    expect(r.code).toBe(1);
    const s = lastJson(r);
    expect(s.stop).toEqual({ kind: 'fault', fault: { kind: 'watchdog' } });
    // 500 samples queued up during the second; only the newest was answered.
    expect(s.timing.lateSamples).toBeGreaterThanOrEqual(400);
    expect(s.timing.maxStallMs).toBeGreaterThanOrEqual(900);
  });

  it('--record /dev/full: refused before anything moves (issue 32; a disk that fills during the run: tests/faults.test.ts)', async () => {
    const r = await twolink(['run', '--rig', 'rigs/mock-arm.json', '--mock', '--rt', '--traj', 'reach', '--record', '/dev/full', '--json']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /^twolink: \/dev\/full: is \/dev\/full, a device that refuses every write \(no space left\): the recording would be lost after the motion; give a file\n$/,
    );
    expect(r.stdout).toBe('');
  });
});

describe('ports', () => {
  it('a path that is not a serial device: exit code 3 and what to give instead', async () => {
    const r = await twolink(['run', '--rig', 'rigs/mock-arm.json', '--port', '/dev/null', '--traj', 'reach']);
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/\/dev\/null: this is not a serial device/);
  });

  it('a port that does not exist', async () => {
    const r = await twolink(['run', '--rig', 'rigs/mock-arm.json', '--port', '/dev/ttyACM77', '--traj', 'reach']);
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/\/dev\/ttyACM77: no such serial port .*twolink ports/);
  });

  it('no permission on the device: exit code 3 and the dialout fix', async () => {
    const rig = await startPtyRig();
    try {
      // run as "nobody": the pty belongs to root
      const child = spawn(
        'setpriv',
        [
          '--reuid=65534',
          '--regid=65534',
          '--clear-groups',
          process.execPath,
          BIN,
          'run',
          '--rig',
          'rigs/mock-arm.json',
          '--port',
          rig.path,
          '--traj',
          'reach',
        ],
        {
          cwd: ROOT,
          env: { ...process.env, HOME: '/tmp' },
        },
      );
      own(child);
      let err = '';
      child.stderr.on('data', (d: Buffer) => (err += d.toString()));
      const code = await new Promise<number | null>((res) => child.on('close', res));
      expect(code).toBe(3);
      expect(err).toMatch(/permission denied: add yourself to the group that owns the port \(usually: sudo usermod -aG dialout \$USER/);
    } finally {
      await rig.stop();
    }
  });

  it('twolink ports on a machine without udev lists from /dev and says so', async () => {
    const r = await twolink(['ports', '--json']);
    expect(r.code).toBe(0);
    const o = JSON.parse(r.stdout);
    expect(Array.isArray(o.ports)).toBe(true);
    expect(o.source).toMatch(/udev|\/dev scan/);
  });
});

describe('input', () => {
  it('a trajectory file with an unreachable point is refused before the arm moves, with the time', async () => {
    const f = `${dir}/far.json`;
    writeFileSync(
      f,
      JSON.stringify({
        start: { q: [0, 90] },
        steps: [
          { joint: [10, 80], duration: 1 },
          { line: [0.6, 0.2], duration: 1 },
        ],
      }),
    );
    const r = await twolink(['run', '--rig', 'rigs/mock-arm.json', '--mock', '--traj', f]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/leaves the workspace at t = 2.000 s/);
    expect(r.stderr).not.toMatch(/connected/);
  });

  it('a trajectory too fast for the motors is refused with the time and the joint', async () => {
    const f = `${dir}/fast.json`;
    writeFileSync(f, JSON.stringify({ start: { q: [-60, 90] }, steps: [{ joint: [60, 0], duration: 0.3 }] }));
    const r = await twolink(['run', '--rig', 'rigs/mock-arm.json', '--mock', '--traj', f]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/trajectory "fast" at t = [0-9.]+ s, joint [12]: (needs [0-9.]+ N m but only|speed)/);
  });

  it('arguments out of range name the argument', async () => {
    const r = await twolink(['run', '--rig', 'rigs/mock-arm.json', '--mock', '--rate', '5000']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--rate: 5000 Hz is out of range: it must be between 100 and 1000 Hz/);
  });
});
