/**
 * Opening a serial port: serial errors become messages that name the port and the fix (open-error.ts).
 * (Opening the rig's link to a port or to the mock rig is src/run/target.ts.)
 */
import type { Duplex } from 'node:stream';
import { LinkError } from './link.js';
import { explainOpenError } from './open-error.js';

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
