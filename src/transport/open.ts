/**
 * Opening a serial port: serial errors become messages that name the port and the fix. (Opening the
 * rig's link to a port or to the mock rig is src/run/target.ts.)
 */
import type { Duplex } from 'node:stream';
import { LinkError } from './link.js';

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

