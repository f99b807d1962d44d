/**
 * What every serialport binding port of twolink shares (the tty binding, the in-thread mock's, the
 * cable to the mock's thread): the open options filled with serialport's defaults, and the two errors
 * serialport tells apart (a canceled read on a closed port; a device that vanished).
 */
import type { OpenOptions } from '@serialport/bindings-interface';

/** `options` with serialport's defaults for what it leaves out (8N1, locked, no flow control). */
export function fullOpenOptions(options: OpenOptions): Required<OpenOptions> {
  return { dataBits: 8, lock: true, stopBits: 1, parity: 'none', rtscts: false, xon: false, xoff: false, xany: false, hupcl: true, ...options } as Required<OpenOptions>;
}

/** A read or write on a port that was closed: `canceled`, so serialport ends quietly. */
export class CanceledError extends Error {
  readonly canceled = true;
}

/** A read or write of a vanished USB device: not `canceled`, so serialport reports a disconnection. */
export class UnpluggedError extends Error {}
