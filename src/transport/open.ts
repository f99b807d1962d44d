/**
 * Opening the link a rig file asks for: the line protocol or Firmata (rig file `link.transport`), to a
 * real port or to the in-process mock rig. Serial errors become messages that name the port and the
 * fix. Transports load lazily, so the line path never loads johnny-five.
 */
import type { Duplex } from 'node:stream';
import type { Rig } from '../config/load.js';
import type { Clock } from '../time/clock.js';
import { LinkError, type Link } from './link.js';

/** Where the arm is: the rig file's simulated plant in this thread, or a serial port. */
export type Target = { kind: 'mock' } | { kind: 'port'; path: string; baudRate?: number };

/** What was opened. */
export interface OpenedLink {
  link: Link;
  /** The mock rig, when the target is the mock (for fault knobs and tests). */
  mock?: unknown;
  /** One line for people: what this is. */
  describe: string;
}

/** Turns serialport's open errors into messages that say what to do. */
export function explainOpenError(path: string, e: unknown): LinkError {
  const msg = e instanceof Error ? e.message : String(e);
  const low = msg.toLowerCase();
  if (low.includes('no such file') || low.includes('enoent')) {
    return new LinkError(`${path}: no such serial port (is the board plugged in? list ports with: twolink ports)`, 'not-found');
  }
  if (low.includes('permission denied') || low.includes('eacces')) {
    return new LinkError(
      `${path}: permission denied: add yourself to the group that owns the port (usually: sudo usermod -aG dialout $USER, then log in again)`,
      'permission',
    );
  }
  if (low.includes('cannot lock') || low.includes('resource temporarily unavailable') || low.includes('in use') || low.includes('ebusy')) {
    const who = /in use by process (.*)$/.exec(msg)?.[1];
    return new LinkError(
      `${path}: the port is in use by ${who ? `process ${who}` : 'another program'} (another twolink, a serial monitor, the Arduino IDE?): close it first`,
      'busy',
    );
  }
  if (low.includes('inappropriate ioctl') || low.includes('enotty')) {
    return new LinkError(`${path}: this is not a serial device (give the board's port, e.g. /dev/ttyACM0 or /dev/ttyUSB0)`, 'not-serial');
  }
  return new LinkError(`${path}: cannot open the port: ${msg}`, 'open');
}

/**
 * Opens a real serial port and waits until it is open. On Linux through the worker-safe binding of
 * tty-binding.ts (serialport's native binding cannot read inside a worker thread, where the loop
 * runs); elsewhere through serialport's own binding.
 */
export async function openSerialPort(path: string, baudRate: number): Promise<Duplex> {
  if (process.platform === 'linux') {
    const { SerialPortStream } = await import('@serialport/stream');
    const { ttyBinding } = await import('./tty-binding.js');
    return new Promise((resolve, reject) => {
      const s = new SerialPortStream({ binding: ttyBinding, path, baudRate, autoOpen: false });
      s.open((err) => (err ? reject(err instanceof LinkError ? err : explainOpenError(path, err)) : resolve(s)));
    });
  }
  const { SerialPort } = await import('serialport');
  return new Promise((resolve, reject) => {
    const port = new SerialPort({ path, baudRate, autoOpen: false, lock: true });
    port.open((err) => {
      if (err) reject(explainOpenError(path, err));
      else {
        // Lower the kernel's latency timer on USB-serial chips where it applies (Linux only).
        (port as unknown as { set?: (o: Record<string, unknown>, cb: () => void) => void }).set?.({ lowLatency: true } as never, () => undefined);
        resolve(port);
      }
    });
  });
}

/** Opens the link of `rig` to `target`. */
export async function openTransport(rig: Rig, target: Target, clock: Clock): Promise<OpenedLink> {
  const baudRate = target.kind === 'port' ? target.baudRate ?? rig.link.baudRate : rig.link.baudRate;
  if (rig.link.transport === 'firmata') {
    const fl = await import('./firmata-link.js');
    if (target.kind === 'mock') {
      const { createFirmataMockRig } = await import('../rig/mock-firmata-rig.js');
      const mock = createFirmataMockRig(rig, clock);
      const stream = await mock.openStream(baudRate);
      return { link: fl.createFirmataLink(rig, stream, mock.path, clock), mock, describe: `Firmata (johnny-five) to the mock rig ${mock.path} at ${baudRate} baud` };
    }
    const stream = await openSerialPort(target.path, baudRate);
    return { link: fl.createFirmataLink(rig, stream, target.path, clock), describe: `Firmata (johnny-five) on ${target.path} at ${baudRate} baud` };
  }
  const { LineLink } = await import('./line-link.js');
  const make = (stream: Duplex, name: string): Link =>
    new LineLink({ stream, name, baudRate, clock, encoders: rig.encoders, watchdogMs: rig.link.watchdogMs, handshakeMs: rig.link.handshakeMs });
  if (target.kind === 'mock') {
    const { createMockRig } = await import('../rig/mock-rig.js');
    const mock = createMockRig(rig, clock);
    const stream = await mock.openStream(baudRate);
    return { link: make(stream, mock.path), mock, describe: `line protocol to the mock rig ${mock.path} at ${baudRate} baud` };
  }
  const stream = await openSerialPort(target.path, baudRate);
  return { link: make(stream, target.path), describe: `line protocol on ${target.path} at ${baudRate} baud` };
}
