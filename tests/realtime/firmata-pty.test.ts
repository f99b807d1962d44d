// The Firmata mock rig in its own process on a pty (socat), and real johnny-five on the other end
// through serialport's SerialPort: everything real but the board.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { SerialPort } from 'serialport';
import { afterAll, describe, expect, it } from 'vitest';
import { hangGuardMs } from '../helpers/hang-guard.js';
import { loadRig } from '../../src/config/load.js';
import { RealClock } from '../../src/time/clock.js';
import { clearFirmataSysexHandlers, createFirmataLink } from '../../src/transport/firmata-link.js';
import type { LinkEvent, Reading } from '../../src/transport/link.js';
import { ROOT } from '../helpers/cli.js';
import { own } from '../helpers/owned-children.js';

const hasSocat = spawnSync('socat', ['-V']).status === 0;
const MAIN = `${ROOT}dist/mock/firmata-pty-main.js`;
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  clearFirmataSysexHandlers();
});

/** Starts `socat` with two raw ptys and resolves with their paths. */
function ptyPair(): Promise<{ socat: ChildProcess; a: string; b: string }> {
  return new Promise((resolve, reject) => {
    const socat = spawn('socat', ['-d', '-d', 'pty,raw,echo=0', 'pty,raw,echo=0']);
    own(socat);
    children.push(socat);
    let err = '';
    const timer = setTimeout(() => reject(new Error(`socat gave no ptys: ${err}`)), hangGuardMs(10_000));
    socat.stderr.on('data', (d: Buffer) => {
      err += d.toString();
      const paths = [...err.matchAll(/PTY is (\/dev\/pts\/\d+)/g)].map((m) => m[1]!);
      if (paths.length === 2 && /starting data transfer loop/.test(err)) {
        clearTimeout(timer);
        resolve({ socat, a: paths[0]!, b: paths[1]! });
      }
    });
    socat.on('error', reject);
  });
}

/** Starts the rig process on `port` and resolves when it says it is serving. */
function rigProcess(port: string): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MAIN, '--rig', 'rigs/mock-arm-firmata.json', '--port', port], { cwd: ROOT });
    own(child);
    children.push(child);
    let out = '';
    let err = '';
    const timer = setTimeout(() => reject(new Error(`the rig process did not start: ${out} ${err}`)), hangGuardMs(15_000));
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('\n')) {
        clearTimeout(timer);
        resolve(child);
      }
    });
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('exit', (code) => reject(new Error(`the rig process exited (${code}): ${err}`)));
  });
}

/**
 * Opens the port once the previous session's port has let go of it: the lock goes with the file
 * descriptor, which a busy machine may close a while after close() returned.
 */
async function openWhenFree(path: string, baudRate: number, deadlineMs = 20_000): Promise<SerialPort> {
  const end = Date.now() + deadlineMs;
  for (;;) {
    try {
      return await openPort(path, baudRate);
    } catch (e) {
      if (!/Cannot lock port/.test(String(e)) || Date.now() > end) throw e;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

function openPort(path: string, baudRate: number): Promise<SerialPort> {
  return new Promise((resolve, reject) => {
    const p = new SerialPort({ path, baudRate, autoOpen: false });
    p.open((e) => (e ? reject(e) : resolve(p)));
  });
}

/** Resolves when `n` samples have come (or rejects after `ms` of real time, saying how many came). */
function samples(link: ReturnType<typeof createFirmataLink>, n: number, answer: number[] | undefined, ms = 30_000): Promise<Reading[]> {
  return new Promise((resolve, reject) => {
    const got: Reading[] = [];
    const timer = setTimeout(() => reject(new Error(`only ${got.length} of ${n} samples in ${ms} ms`)), ms);
    link.onSample((r) => {
      got.push(r);
      if (answer && !r.superseded) link.writeDuty(answer);
      if (got.length === n) {
        clearTimeout(timer);
        link.onSample(() => {});
        resolve(got);
      }
    });
  });
}

describe('the Firmata rig on a pty, in its own process', () => {
  it(
    'johnny-five on a SerialPort reaches ready, samples on the board clock drive the motors, stops confirmed; a second session on the board that was not reset works; the port vanishing is a closed event',
    async () => {
      if (!hasSocat) throw new Error('socat is not installed: sudo apt-get install socat (.ci/run installs it)');
      expect(existsSync(MAIN)).toBe(true); // built by `npx tsc` before vitest
      const rig = loadRig('rigs/mock-arm-firmata.json');
      const { socat, a, b } = await ptyPair();
      const child = await rigProcess(a);
      const clock = new RealClock();
      const session = async (): Promise<{ link: ReturnType<typeof createFirmataLink>; port: SerialPort; got: Reading[] }> => {
        const port = await openWhenFree(b, rig.link.baudRate);
        const link = createFirmataLink(rig, port, b, clock, { handshakeMs: 10_000, answerMs: 2000 });
        link.onEvent((e) => seen.push(e));
        const id = await link.open();
        expect(id).toMatchObject({ transport: 'firmata', port: b, firmware: 'ConfigurableFirmata.ino 2.10', board: 'mega', joints: 2 });
        // the stock build: no watchdog, and the link says so
        expect(id.warnings?.[0]).toMatch(/^NO BOARD WATCHDOG/);
        await link.enable(true);
        const got = samples(link, 150, [0.5, -0.5]);
        await link.startSampling(333);
        return { link, port, got: await got };
      };

      const seen: LinkEvent[] = [];
      const first = await session();
      let events: LinkEvent[] = [];
      try {
        expect(first.link.samplingIntervalMs).toBe(3);
        // indices only grow; gaps are reports the board skipped (a starved rig process) or lost, and counted
        const idx = first.got.map((r) => r.index);
        for (let i = 1; i < idx.length; i++) expect(idx[i]!).toBeGreaterThan(idx[i - 1]!);
        expect(idx.at(-1)! - idx[0]! + 1).toBeLessThanOrEqual(idx.length + first.link.counters.lost);
        // board time advances by the period per index, whenever the samples arrived (the period is
        // measured: a rig process starved by other processes keeps a worse clock than a board)
        for (let i = 1; i < first.got.length; i++) {
          const r = first.got[i]!;
          const perIndex = (r.boardTime - first.got[i - 1]!.boardTime) / (r.index - first.got[i - 1]!.index);
          expect(Math.abs(perIndex / 0.003 - 1)).toBeLessThan(0.02);
        }
        const r = first.link.last()!;
        // the arm moved: joint 1 up, joint 2 the other way, both through the encoder sysex
        expect(r.raw[0]).toBeGreaterThan(20);
        expect(r.raw[1]).toBeLessThan(-20);
        expect(first.link.counters.corrupt).toBe(0);
        expect(await first.link.stop(2000), `${JSON.stringify(seen)} rig exit ${child.exitCode} ${child.signalCode}`).toBe('acknowledged');
      } finally {
        await first.link.close();
        // the device stays locked until the port has really closed (it can take a while on a busy machine)
        if (first.port.isOpen) await once(first.port, 'close');
      }

      // the rig process was not reset: its encoders are still attached. A second session detaches first.
      const second = await session();
      try {
        expect(second.got.length).toBe(150);
        expect(await second.link.stop(2000), JSON.stringify(seen)).toBe('acknowledged');
        // the cable goes: the rig process dies, socat closes the pty pair, johnny-five says close
        events = [];
        const closed = new Promise<void>((resolve) =>
          second.link.onEvent((e) => (events.push(e), e.kind === 'closed' ? resolve() : undefined)),
        );
        child.kill('SIGKILL');
        socat.kill('SIGTERM');
        await closed;
        expect(events.find((e) => e.kind === 'closed')).toMatchObject({ kind: 'closed', reason: expect.stringContaining(b) });
        // stock Firmata: a stop nobody confirms says the board has no watchdog
        expect(await second.link.stop(200)).toBe('unconfirmed-no-watchdog');
      } finally {
        await second.link.close();
      }
    },
    hangGuardMs(120_000),
  );
});
