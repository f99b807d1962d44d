// The Firmata mock rig in its own process on a pty (socat), and real johnny-five on the other end
// through serialport's SerialPort: everything real but the board.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { SerialPort } from 'serialport';
import { afterAll, describe, expect, it } from 'vitest';
import { loadRig } from '../../src/config/load.js';
import { RealClock } from '../../src/time/clock.js';
import { clearFirmataSysexHandlers, createFirmataLink } from '../../src/transport/firmata-link.js';
import type { LinkEvent } from '../../src/transport/link.js';
import { ROOT } from '../helpers/cli.js';

const hasSocat = spawnSync('socat', ['-V']).status === 0;
const MAIN = `${ROOT}dist/rig/firmata-pty-main.js`;
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  clearFirmataSysexHandlers();
});

/** Starts `socat` with two raw ptys and resolves with their paths. */
function ptyPair(): Promise<{ socat: ChildProcess; a: string; b: string }> {
  return new Promise((resolve, reject) => {
    const socat = spawn('socat', ['-d', '-d', 'pty,raw,echo=0', 'pty,raw,echo=0']);
    children.push(socat);
    let err = '';
    const timer = setTimeout(() => reject(new Error(`socat gave no ptys: ${err}`)), 10_000);
    socat.stderr!.on('data', (d: Buffer) => {
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
    children.push(child);
    let out = '';
    let err = '';
    const timer = setTimeout(() => reject(new Error(`the rig process did not start: ${out} ${err}`)), 15_000);
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('\n')) {
        clearTimeout(timer);
        resolve(child);
      }
    });
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    child.on('exit', (code) => reject(new Error(`the rig process exited (${code}): ${err}`)));
  });
}

function openPort(path: string, baudRate: number): Promise<SerialPort> {
  return new Promise((resolve, reject) => {
    const p = new SerialPort({ path, baudRate, autoOpen: false });
    p.open((e) => (e ? reject(e) : resolve(p)));
  });
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('the Firmata rig on a pty, in its own process', () => {
  it('johnny-five on a SerialPort reaches ready, drives the motors, reads the encoders, stops confirmed; the port vanishing is a closed event', async () => {
    if (!hasSocat) throw new Error('socat is not installed: sudo apt-get install socat (.ci/run installs it)');
    expect(existsSync(MAIN)).toBe(true); // built by `npx tsc` before vitest
    const rig = loadRig('rigs/mock-arm-firmata.json');
    const { socat, a, b } = await ptyPair();
    const child = await rigProcess(a);
    const port = await openPort(b, rig.link.baudRate);
    const clock = new RealClock();
    const link = createFirmataLink(rig, port, b, clock, { handshakeMs: 10_000, answerMs: 2000 });
    const events: LinkEvent[] = [];
    link.onEvent((e) => events.push(e));
    try {
      const id = await link.open();
      expect(id).toMatchObject({ transport: 'firmata', port: b, firmware: 'ConfigurableFirmata.ino 2.10', board: 'mega', joints: 2 });
      expect(link.samplingIntervalMs).toBe(3);
      await link.enable(true);
      let readings = 0;
      const t0 = clock.now();
      while (clock.now() - t0 < 0.6) {
        link.writeDuty([0.5, -0.5]);
        if (link.read()) readings++;
        await sleep(4);
      }
      const r = link.last()!;
      // the arm moved: joint 1 up, joint 2 the other way, both through the encoder sysex
      expect(r.raw[0]).toBeGreaterThan(50);
      expect(r.raw[1]).toBeLessThan(-50);
      // reports every 3 ms for 0.6 s; the loop here polls at ~4 ms on a busy machine: be generous
      expect(readings).toBeGreaterThan(20);
      expect(link.counters.corrupt).toBe(0);
      expect(await link.stop(2000)).toBe('acknowledged');
      // the cable goes: the rig process dies, socat closes the pty pair, johnny-five says close
      child.kill('SIGKILL');
      socat.kill('SIGTERM');
      const deadline = Date.now() + 10_000;
      while (!events.some((e) => e.kind === 'closed') && Date.now() < deadline) await sleep(20);
      expect(events.find((e) => e.kind === 'closed')).toMatchObject({ kind: 'closed', reason: expect.stringContaining(b) });
      expect(await link.stop(200)).toBe('unconfirmed');
    } finally {
      await link.close();
    }
  });
});
