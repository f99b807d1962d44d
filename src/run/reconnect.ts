/**
 * `twolink run --reconnect` (issue 34 item 4, docs/cable.md): after a pulled cable (`fault:cable`),
 * wait for the same board, then tell a board that kept running from one that reset. The waiting and
 * the decisions are here; session.ts runs the loop's segments and keeps the recording open across them.
 *
 * The same board: a port that is a USB device is known by what the OS lists for it (serialport's
 * `list()`: its USB serial number, or, for a device without one, its vendor:product and USB path, the
 * `locationId`), so a board that comes back under another name (/dev/ttyACM1 for /dev/ttyACM0) is
 * found. A port that is not a USB device (a pty, as the tests' rigs; a symlink to one) is known by
 * the path the user gave.
 */
import { existsSync, realpathSync } from 'node:fs';

/** One port as serialport's `list()` gives it (the fields used here). */
export interface ListedPort {
  path: string;
  serialNumber?: string | undefined;
  vendorId?: string | undefined;
  productId?: string | undefined;
  locationId?: string | undefined;
}

/** How the board is found again. */
export type PortKey =
  | { kind: 'path'; path: string }
  | { kind: 'usb-serial'; vendorId: string; productId: string; serialNumber: string }
  | { kind: 'usb-location'; vendorId: string; productId: string; locationId: string };

const lower = (s: string | undefined): string | undefined => (s === undefined || s === '' ? undefined : s.toLowerCase());

/**
 * The key of the board at `given` (the path the user gave), `resolved` its real path (a symlink such
 * as /dev/serial/by-id/... followed), from the OS's list of ports: a USB device by its serial number,
 * or vendor:product and USB path; anything else (not listed, no USB ids) by the given path.
 */
export function portKey(given: string, resolved: string, listed: readonly ListedPort[]): PortKey {
  const p = listed.find((x) => x.path === resolved || x.path === given);
  const vendorId = lower(p?.vendorId);
  const productId = lower(p?.productId);
  if (!p || !vendorId || !productId) return { kind: 'path', path: given };
  const serialNumber = p.serialNumber?.trim();
  if (serialNumber) return { kind: 'usb-serial', vendorId, productId, serialNumber };
  if (p.locationId) return { kind: 'usb-location', vendorId, productId, locationId: p.locationId };
  return { kind: 'path', path: given };
}

/** The path to open for `key` in the OS's list now, or undefined while the board is not back. A path key needs `exists` (the caller's file check). */
export function findPort(key: PortKey, listed: readonly ListedPort[], exists: (path: string) => boolean): string | undefined {
  if (key.kind === 'path') return exists(key.path) ? key.path : undefined;
  const same = (x: ListedPort): boolean =>
    lower(x.vendorId) === key.vendorId &&
    lower(x.productId) === key.productId &&
    (key.kind === 'usb-serial' ? x.serialNumber?.trim() === key.serialNumber : x.locationId === key.locationId);
  return listed.find(same)?.path;
}

/** The key in words, for the dashboard and the recording. */
export function describeKey(key: PortKey): string {
  switch (key.kind) {
    case 'path':
      return `the port ${key.path}`;
    case 'usb-serial':
      return `the USB device ${key.vendorId}:${key.productId} with serial number ${key.serialNumber}`;
    case 'usb-location':
      return `the USB device ${key.vendorId}:${key.productId} at USB path ${key.locationId} (it has no serial number)`;
  }
}

/** A board's uptime at a handshake, and the host's clock then [ms]. */
export interface BootMark {
  /** The board's milliseconds since boot (`up=`); undefined: it did not say (old firmware, Firmata). */
  uptimeMs: number | undefined;
  /** Host time of the handshake [ms] (one clock for both marks: Date.now()). */
  hostMs: number;
}

/** Whether the board that answered again is the one that was running: it kept running, it reset, or it cannot tell (treated as reset). */
export type BootVerdict =
  { kind: 'kept-running'; awayMs: number; grewMs: number } | { kind: 'reset'; why: string } | { kind: 'unknown'; why: string };

/** Slack between the board's clock and the host's over a reconnect [ms], at least, and as a fraction of the time away. */
export const BOOT_SLACK_MS = 250;
export const BOOT_SLACK_FRACTION = 0.05;

/**
 * A board kept running when its uptime grew by the host's time between the two handshakes (within
 * BOOT_SLACK_MS, or BOOT_SLACK_FRACTION of it); anything else is a reset (an uptime that went back or
 * grew too little; a 49.7-day wrap of the uptime counts as one too: the safe side).
 */
export function bootVerdict(before: BootMark, after: BootMark): BootVerdict {
  if (before.uptimeMs === undefined || after.uptimeMs === undefined) {
    return { kind: 'unknown', why: 'the board does not say its uptime (firmware without up=, or Firmata): taken as reset' };
  }
  const awayMs = after.hostMs - before.hostMs;
  const grewMs = after.uptimeMs - before.uptimeMs;
  const slack = Math.max(BOOT_SLACK_MS, BOOT_SLACK_FRACTION * awayMs);
  if (Math.abs(grewMs - awayMs) <= slack) return { kind: 'kept-running', awayMs, grewMs };
  return {
    kind: 'reset',
    why: `its uptime is ${after.uptimeMs} ms, ${grewMs} ms from ${before.uptimeMs} ms at the last handshake ${awayMs} ms ago: it restarted`,
  };
}

/** What waiting for the board ended with. */
export type WaitResult =
  { kind: 'found'; path: string; waitedS: number } | { kind: 'timeout'; waitedS: number } | { kind: 'aborted'; waitedS: number };

export interface WaitOptions {
  key: PortKey;
  /** Give up after this long [s]. */
  timeoutS: number;
  signal: AbortSignal;
  /** The OS's list of ports (serialport's `list()`); rejects where there is no udev: then only a path key can be found. */
  list: () => Promise<ListedPort[]>;
  exists?: (path: string) => boolean;
  /** Called on every look with the seconds left (the dashboard's countdown). */
  onTick?: (leftS: number) => void;
  /** Between two looks [ms] (the OS has no event for a port that appears, to Node). @default 100 */
  pollMs?: number;
  /** Host clock [s]. @default performance.now() / 1000 */
  now?: () => number;
}

/** Waits until the board of `key` is back (its path), the time is up, or `signal` aborts (Ctrl-C, the e-stop). */
export async function waitForPort(o: WaitOptions): Promise<WaitResult> {
  const now = o.now ?? ((): number => performance.now() / 1000);
  const exists = o.exists ?? existsSync;
  const t0 = now();
  const pollMs = o.pollMs ?? 100;
  for (;;) {
    const waitedS = now() - t0;
    if (o.signal.aborted) return { kind: 'aborted', waitedS };
    const listed = o.key.kind === 'path' ? [] : await o.list().catch(() => []);
    const path = findPort(o.key, listed, exists);
    if (path) return { kind: 'found', path, waitedS };
    if (waitedS >= o.timeoutS) return { kind: 'timeout', waitedS };
    o.onTick?.(Math.max(0, o.timeoutS - waitedS));
    if (o.signal.aborted) continue;
    await new Promise<void>((resolve) => {
      const t = setTimeout(done, pollMs);
      function done(): void {
        clearTimeout(t);
        o.signal.removeEventListener('abort', done);
        resolve();
      }
      o.signal.addEventListener('abort', done, { once: true });
    });
  }
}

/** The key of the port at `given` now (before the run): the OS's list, where there is one (no udev: the path). */
export async function keyOfPort(given: string, list: () => Promise<ListedPort[]>): Promise<PortKey> {
  let resolved = given;
  try {
    resolved = realpathSync(given);
  } catch {
    // not there (yet): the path it is
  }
  const listed = await list().catch(() => []);
  return portKey(given, resolved, listed);
}
