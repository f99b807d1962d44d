/** Helpers for the serial streams under the links. */
import type { Duplex } from 'node:stream';

/**
 * Closes a serialport stream for real: SerialPortStream has no _destroy, so destroy() alone emits
 * 'close' but leaves the device open (and locked). close() releases it.
 */
export async function closeStream(stream: Duplex): Promise<void> {
  const s = stream as Duplex & { close?: (cb: (err?: Error | null) => void) => void; isOpen?: boolean };
  await new Promise<void>((resolve) => {
    const t = setTimeout(resolve, 1000);
    t.unref();
    const done = (): void => {
      clearTimeout(t);
      resolve();
    };
    if (typeof s.close === 'function' && s.isOpen) s.close(() => done());
    else {
      s.once('close', done);
      s.destroy();
    }
  });
}
