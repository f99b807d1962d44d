/**
 * A cable pulled, told from a port closed: the errors a serial port's read or write fails with when
 * the device itself is gone (a USB cable pulled, a board unpowered, a pty whose far end died). One pure
 * function, so that every serial path classifies the same way: the Linux tty binding (tty-binding.ts),
 * the links that see the stream close (line-link.ts), and any other path (a serialport relay process)
 * that hands on the error it got.
 *
 * Linux: a vanished USB CDC/ACM or USB-serial device fails reads and writes with EIO (the tty was hung
 * up), ENXIO or ENODEV (the device is gone); a pty whose master closed reads EIO. A device node that
 * no longer exists (udev removed it) is reported here as ENODEV (tty-binding.ts checks it when a read
 * comes back empty). serialport's stream keeps only the message of the binding's error when it closes
 * on it (`DisconnectedError(err.message)`, @serialport/stream), and Node's fs messages start with the
 * code ("EIO: i/o error, read"), so the code is read from `code` where there is one, else from the
 * message.
 */

/** The errno codes that mean the port's device is gone. */
export const CABLE_ERRNOS = ['EIO', 'ENXIO', 'ENODEV'] as const;
export type CableErrno = (typeof CABLE_ERRNOS)[number];

/** A port that vanished: which port, the errno, and the error's own words. */
export interface CableLoss {
  port: string;
  code: CableErrno;
  message: string;
}

const CABLE_CODE = /\b(EIO|ENXIO|ENODEV)\b/;

function isCableErrno(s: unknown): s is CableErrno {
  return typeof s === 'string' && (CABLE_ERRNOS as readonly string[]).includes(s);
}

/**
 * The cable loss a port's error means, or undefined for any other error (a closed port, a cancelled
 * read, a refused write, nothing at all). `e`: an Error with an errno `code`, an Error whose message
 * names one (serialport's DisconnectedError), or a bare errno code.
 */
export function cableLoss(port: string, e: unknown): CableLoss | undefined {
  if (isCableErrno(e)) return { port, code: e, message: e };
  if (!(e instanceof Error)) return undefined;
  const code = (e as NodeJS.ErrnoException).code;
  if (isCableErrno(code)) return { port, code, message: e.message };
  const named = CABLE_CODE.exec(e.message)?.[1];
  return isCableErrno(named) ? { port, code: named, message: e.message } : undefined;
}
