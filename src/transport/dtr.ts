/**
 * Opening a port without resetting the board, and knowing when the open did reset it.
 *
 * An Uno-class board (a USB-serial chip in front of the ATmega: the Uno's 16U2, a Nano's FTDI or
 * CH340) has its reset wired to DTR through a capacitor: DTR going up resets it, and its bootloader
 * then listens for a new sketch before the sketch starts (Optiboot, the Uno's: `watchdogConfig(WATCHDOG_1S)`
 * in Optiboot/optiboot `optiboot/bootloaders/optiboot/optiboot.c`, 1 s; the Mega 2560's stk500v2 and the
 * older ATmegaBOOT wait longer, 1-2 s). Every OS raises DTR when a port is opened. What differs is
 * whether it was down before:
 * - Linux: the line's HUPCL flag drops DTR when the last descriptor closes. Cleared, DTR stays up after
 *   twolink closes the port, so the next open raises nothing and the board keeps running. twolink
 *   clears it on every open (`stty -F PATH -hupcl`; the first open after plugging in still resets the
 *   board, DTR having been down). serialport's own `hupcl: false` does not clear it on Linux or macOS:
 *   @serialport/bindings-cpp 13.0.0 `src/serialport_unix.cpp` only ORs HUPCL in when `hupcl` is true,
 *   on the flags it read with tcgetattr, so a flag already set stays set; the relay process runs stty.
 * - Windows: bindings-cpp's `hupcl: false` opens with `DTR_CONTROL_DISABLE` ("disable DTR to avoid
 *   reset", `src/serialport_win.cpp`): DTR never goes up. Not for native-USB boards (Leonardo, Micro):
 *   their USB stack sends only while the host holds DTR (ArduinoCore-avr `cores/arduino/CDC.cpp`,
 *   `Serial_::write`: `if (_usbLineInfo.lineState > 0)`), and DTR does not reset them. Not run by us.
 * - macOS resets a port's termios when its last descriptor closes (HUPCL set again): an open there
 *   may reset the board; twolink does not try to avoid it.
 * A pty has no modem lines: nothing resets.
 */
import { execFile } from 'node:child_process';
import { realpathSync } from 'node:fs';
import type { AdapterKind } from '../config/cable.js';

/**
 * What this open did to DTR: `raised` (it was down: HUPCL was set, or the device is new), `kept` (it
 * stayed up since the last session: HUPCL was clear), `none` (no DTR: a pty, or Windows holding it off),
 * `unknown` (macOS, or the flag could not be read).
 */
export type DtrOnOpen = 'raised' | 'kept' | 'none' | 'unknown';

/**
 * The longest a reset board's bootloader can keep it from answering [ms]: Optiboot's 1 s, the Mega's
 * and older bootloaders' 1-2 s, and the sketch's start before its banner (tests/dtr.test.ts pins it).
 */
export const BOOTLOADER_WAIT_MS = 2500;

/** The one line said while a handshake waits for a reset board's bootloader (`ms`: the most it waits from now). */
export function bootloaderWaitText(port: string, ms: number): string {
  return `waiting for the board's bootloader (opening ${port} reset it) up to ${Math.round(ms)} ms ...`;
}

/** Whether a board behind this adapter resets when DTR goes up (an auto-reset capacitor): not a native-USB board, not a bare wire. */
export function resetsOnDtr(adapter: AdapterKind): boolean {
  return adapter === '16u2' || adapter === 'ch340' || adapter === 'ftdi';
}

/** Whether opening the port (`dtr`, what the open did) has reset a board behind `adapter`: unknown counts as a reset. */
export function openResetBoard(dtr: DtrOnOpen, adapter: AdapterKind): boolean {
  return resetsOnDtr(adapter) && (dtr === 'raised' || dtr === 'unknown');
}

/** serialport's `hupcl` for the relay on `platform`: false (DTR held off on Windows; Linux clears HUPCL itself), except on Windows for a board that needs DTR up to send (native USB). */
export function relayHupcl(platform: NodeJS.Platform, adapter: AdapterKind | undefined): boolean {
  return platform === 'win32' && (adapter === 'native' || adapter === 'none');
}

/** The HUPCL flag in `stty -a`'s output: true (`hupcl`), false (`-hupcl`), undefined (not there). */
export function hupclIn(sttyAll: string): boolean | undefined {
  const m = /(^|\s)(-?)hupcl(\s|$)/.exec(sttyAll);
  return m ? m[2] === '' : undefined;
}

/** A pseudo-terminal (Linux /dev/pts/N, or /dev/ptmx): no modem lines. */
export function isPty(path: string): boolean {
  let real = path;
  try {
    real = realpathSync(path);
  } catch {
    // judged by the name given
  }
  return /^\/dev\/pts\/\d+$/.test(real) || real === '/dev/ptmx';
}

function stty(path: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('stty', ['-F', path, ...args], (err, out, stderr) => {
      if (err) reject(new Error(stderr.toString().trim() || err.message));
      else resolve(out.toString());
    });
  });
}

/**
 * Linux, on a port this process holds open: reads HUPCL (what the last close did to DTR), then clears
 * it, so that closing leaves DTR up and the next open does not reset the board. Returns what the open
 * did to DTR. Never throws (a line whose flags cannot be read: `unknown`).
 */
export async function clearHupcl(path: string): Promise<DtrOnOpen> {
  if (isPty(path)) {
    // A pty has no DTR; its flag is cleared all the same, as a real port's would be (the tests read it).
    await stty(path, ['-hupcl']).catch(() => undefined);
    return 'none';
  }
  let before: boolean | undefined;
  try {
    before = hupclIn(await stty(path, ['-a']));
    await stty(path, ['-hupcl']);
  } catch {
    return 'unknown';
  }
  return before === undefined ? 'unknown' : before ? 'raised' : 'kept';
}
