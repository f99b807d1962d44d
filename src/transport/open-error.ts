/**
 * serialport's open errors as messages that name the port and the fix: used by opening a port
 * (open.ts) and by the worker-safe binding (tty-binding.ts), which open.ts loads, so it is a file of
 * its own (the two no longer import each other).
 */
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
