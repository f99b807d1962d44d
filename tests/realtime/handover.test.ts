// Clean hand-overs between sessions (issue 20, item 7): a `twolink run` killed with SIGKILL in the
// middle of a reach leaves its board streaming (nothing stopped it), and the next `twolink run` on the
// same rig must not count what the port held as lost samples, nor fail on it: on the pty rig (line
// protocol), on our firmware in simavr, and on the Firmata rig. Every wait is for an event (a line on
// stdout, a process exit, board time in the simulator); the time limits only guard against a hang.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, constants, existsSync, mkdtempSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SerialPort } from 'serialport';
import { afterAll, describe, expect, it } from 'vitest';
import { loadRig } from '../../src/config/load.js';
import { FirmwareSim } from '../../src/mock/firmware-sim.js';
import { requestRealtime } from '../../src/time/threads.js';
import { BIN, lastJson, ROOT, twolink } from '../helpers/cli.js';
import { startPtyRig } from '../helpers/pty-rig.js';
import { hangGuardMs } from '../helpers/hang-guard.js';
import { own } from '../helpers/owned-children.js';

const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});

/**
 * The rig file with a 300 ms host watchdog: these tests are about what the port holds, not about a
 * busy machine's stalls (a 100 ms watchdog on a loaded machine is tested elsewhere).
 */
function rigFile(base: string): string {
  const spec = JSON.parse(readFileSync(join(ROOT, base), 'utf8')) as { link: { watchdogMs?: number } };
  spec.link.watchdogMs = 300;
  const file = join(mkdtempSync(join(tmpdir(), 'twolink-handover-')), base.split('/').pop()!);
  writeFileSync(file, JSON.stringify(spec));
  return file;
}

/**
 * `twolink run` on `port`, the reach over and over (--cycle), killed with SIGKILL once it moves (its
 * own progress line on stderr says so): it never gets to stop anything, however late the line is read.
 */
function killMidReach(file: string, port: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--single-threaded-gc', BIN, 'run', '--rig', file, '--port', port, '--traj', 'reach', '--cycle', '--max-seconds', '900', '--rt'],
      { cwd: ROOT },
    );
    own(child);
    children.push(child);
    let out = '';
    let killed = false;
    const take = (d: Buffer): void => {
      out += d.toString();
      if (!killed && /reach: approach/.test(out)) {
        killed = true;
        child.kill('SIGKILL');
      }
    };
    child.stdout.on('data', take);
    child.stderr.on('data', take); // the progress lines
    child.on('error', reject);
    child.on('exit', (code, signal) =>
      signal === 'SIGKILL' ? resolve(out) : reject(new Error(`the first run ended (${code}) before it was killed:\n${out}`)),
    );
  });
}

/** The second session: a whole reach, summary as JSON. */
async function nextRun(file: string, port: string): Promise<{ s: any; text: string }> {
  const r = await twolink(['run', '--rig', file, '--port', port, '--traj', 'reach', '--json', '--rt'], { timeoutMs: 120_000 });
  const text = `${r.stdout.trim().split('\n').pop()}\n${r.stderr}`;
  expect(r.code, text).toBe(0);
  return { s: lastJson(r), text };
}

/** Nothing of the earlier session counted: done, no lost frame or sample, no garbled line. */
function expectClean(s: any, text: string): void {
  expect(s.stop, text).toEqual({ kind: 'done' });
  expect(s.link.lost, text).toBe(0);
  expect(s.link.corrupt, text).toBe(0);
  expect(s.timing.lostSamples, text).toBe(0);
}

const hasSocat = spawnSync('socat', ['-V']).status === 0;
const SOCAT = 'socat is not installed: sudo apt-get install socat (.ci/run installs it)';

describe('a session killed with SIGKILL, then a new one on the same rig', () => {
  it(
    'the pty rig (line protocol): the board was left streaming; the next run is done with 0 lost',
    async () => {
      if (!hasSocat) throw new Error(SOCAT);
      const file = rigFile('rigs/mock-arm.json');
      const rig = await startPtyRig(file, ['--rt']);
      children.push(rig.child);
      try {
        await killMidReach(file, rig.path);
        const { s, text } = await nextRun(file, rig.path);
        expectClean(s, `${text}\n${rig.stderr()}`);
      } finally {
        await rig.stop();
      }
    },
    hangGuardMs(60_000),
  );

  it(
    'our firmware in simavr: the harness discards what the board sends while no host has the port, and the next run is done with 0 lost',
    async () => {
      if (!existsSync('/usr/include/simavr/sim_avr.h'))
        throw new Error(
          'simavr is not installed: sudo apt-get install simavr libsimavr-dev gcc-avr avr-libc arduino-core-avr (.ci/run installs them)',
        );
      const sim = await FirmwareSim.start({ rig: loadRig('rigs/mock-arm.json') });
      await requestRealtime(sim.pid, 45);
      type Host = { open: boolean; boardTime: number; discardedBytes: number };
      const hosts: Host[] = [];
      sim.on('host', (h) => hosts.push(h));
      /** The first host event from `from` on that is an open (or a close). */
      const hostEvent = (open: boolean, from: number): Promise<Host> =>
        new Promise((resolve) => {
          const look = (): void => {
            const h = hosts.slice(from).find((e) => e.open === open);
            if (h) {
              sim.off('host', look);
              resolve(h);
            }
          };
          sim.on('host', look);
          look();
        });
      /** Resolves when the simulated board's clock passes `t` [s]. */
      const boardTime = (t: number): Promise<void> =>
        new Promise((resolve) => {
          const tick = (e: { boardTime: number }): void => {
            if (e.boardTime >= t) {
              sim.off('slice', tick);
              resolve();
            }
          };
          sim.on('slice', tick);
        });
      const file = rigFile('rigs/mock-arm.json');
      try {
        await killMidReach(file, sim.ptyPath);
        const closed = await hostEvent(false, 0);
        // Two seconds of board time with the board streaming and nobody reading (500 Hz: ~45 kB, more
        // than a pty holds): before the harness discarded it, the next run counted thousands lost.
        await boardTime(closed.boardTime + 2);
        const n = hosts.length;
        const { s, text } = await nextRun(file, sim.ptyPath);
        expectClean(s, text);
        // The board went on streaming into the closed port (SIGKILL stopped nothing) and that was discarded.
        const reopened = await hostEvent(true, n);
        expect(reopened.discardedBytes, JSON.stringify(hosts)).toBeGreaterThan(20_000);
        // The second session stopped the board's stream when it closed: a second later nothing was sent.
        const closedAgain = await hostEvent(false, n);
        await boardTime(closedAgain.boardTime + 1);
        const m = hosts.length;
        const fd = openSync(sim.ptyPath, constants.O_RDWR | constants.O_NOCTTY);
        const quiet = await hostEvent(true, m);
        closeSync(fd);
        expect(quiet.discardedBytes, JSON.stringify(hosts)).toBe(0);
      } finally {
        await sim.stop();
      }
    },
    hangGuardMs(60_000),
  );

  it(
    'the Firmata rig (stock ConfigurableFirmata + FirmataEncoder + FirmataWatchdog, left reporting encoders): the next run is done, nothing corrupt, 0 lost samples',
    async () => {
      const { file, b, boardErr } = await firmataRig();
      await killMidReach(file, b);
      const { s, text } = await nextRun(file, b);
      const why = `${text}\n${boardErr()}`;
      // A Firmata board's only clock is its reports: the host counts a report lost only when the gap
      // before it stays (firmata-clock.ts); reports held up on their way (a busy machine, socat, the
      // rig's process) come late, not lost. The board at real-time priority skips none.
      expectClean(s, why);
      // What the killed session left streaming was quieted, not counted: the second session is as clean.
      expect(s.link.received, why).toBeGreaterThan(1000);
    },
    hangGuardMs(60_000),
  );

  it(
    'the Firmata rig after another program left it reporting every analog channel and digital port every 1 ms: twolink quiets it and the run is done',
    async () => {
      const { file, b, boardErr } = await firmataRig();
      // The other program: sampling interval 1 ms, every channel and port reporting, then gone. At
      // 57600 baud that is more than the wire carries (16 channels x 3 bytes a millisecond).
      const other = await new Promise<SerialPort>((resolve, reject) => {
        const p = new SerialPort({ path: b, baudRate: 57600, autoOpen: false });
        p.open((e) => (e ? reject(e) : resolve(p)));
      });
      const on: number[] = [0xf0, 0x7a, 1, 0, 0xf7];
      for (let i = 0; i < 16; i++) on.push(0xc0 | i, 1, 0xd0 | i, 1);
      await new Promise<void>((resolve, reject) => other.write(Buffer.from(on), (e) => (e ? reject(e) : other.drain(() => resolve()))));
      // Left when the board's reports fill the port (an event: bytes arrive).
      await new Promise<void>((resolve) => {
        let n = 0;
        other.on('data', (d: Buffer) => {
          n += d.length;
          if (n > 2000) resolve();
        });
      });
      await new Promise<void>((resolve) => other.close(() => resolve()));
      const { s, text } = await nextRun(file, b);
      const why = `${text}\n${boardErr()}`;
      expect(s.stop, why).toEqual({ kind: 'done' });
      expect(s.link.corrupt, why).toBe(0);
    },
    hangGuardMs(60_000),
  );
});

/**
 * The Firmata mock rig (stock ConfigurableFirmata + FirmataEncoder, with twolink's FirmataWatchdog) in
 * its own process on a socat pty pair; `b` is the host's end.
 */
async function firmataRig(): Promise<{ file: string; b: string; boardErr: () => string }> {
  if (!hasSocat) throw new Error(SOCAT);
  const { a, b } = await ptyPair();
  const file = rigFile('rigs/mock-arm-firmata.json');
  // --rt: the board's thread at 45 and its process's other threads (serial I/O on libuv's threadpool,
  // the garbage collector's helpers) at 44, below it (it was `chrt -a -f 45` on every thread: helpers
  // level with the board's thread, which SCHED_FIFO does not share the CPU with); a refusal is said on stderr.
  const board = spawn(
    process.execPath,
    [`${ROOT}dist/mock/firmata-pty-main.js`, '--rig', file, '--port', a, '--watchdog-feature', '--rt'],
    { cwd: ROOT },
  );
  own(board);
  children.push(board);
  let err = '';
  board.stderr.on('data', (d: Buffer) => (err += d.toString()));
  await new Promise<void>((resolve, reject) => {
    board.stdout.once('data', () => resolve());
    board.once('exit', (code) => reject(new Error(`the Firmata rig exited (${code}): ${err}`)));
  });
  return { file, b, boardErr: () => err };
}

/** Starts `socat` with two raw ptys and resolves with their paths (a: the board's end, b: the host's). */
function ptyPair(): Promise<{ a: string; b: string }> {
  return new Promise((resolve, reject) => {
    const socat = spawn('socat', ['-d', '-d', 'pty,raw,echo=0', 'pty,raw,echo=0']);
    own(socat);
    children.push(socat);
    let err = '';
    socat.stderr.on('data', (d: Buffer) => {
      err += d.toString();
      const paths = [...err.matchAll(/PTY is (\/dev\/pts\/\d+)/g)].map((m) => m[1]!);
      if (paths.length === 2 && /starting data transfer loop/.test(err)) resolve({ a: paths[0]!, b: paths[1]! });
    });
    socat.on('error', reject);
    socat.on('exit', (code) => reject(new Error(`socat exited (${code}): ${err}`)));
  });
}
