/**
 * A serialport binding for Linux serial devices that works inside a worker thread.
 *
 * Why: @serialport/bindings-cpp waits for incoming bytes with a uv_poll handle on uv_default_loop(),
 * the MAIN thread's loop, even when the port was opened in a worker; the first byte then calls into
 * the worker's JavaScript from the main thread and node aborts ("HandleScope::HandleScope Entering
 * the V8 API without proper locking"). twolink's loop runs in a worker, so its serial I/O cannot use
 * that binding there.
 *
 * How: the device is opened with fs (blocking, O_NOCTTY) and configured with stty (coreutils): raw
 * 8N1, the baud rate, and VMIN=0 VTIME=1 so that a read returns as soon as bytes arrive, or empty
 * after 0.1 s of silence (which lets a closed port end its read loop instead of blocking a threadpool
 * thread forever). Reads and writes run on libuv's threadpool and complete on the worker's own loop.
 * Port sharing is checked through /proc: a port that another process holds open is refused with that
 * process's pid and command (root bypasses the TIOCEXCL lock that serialport uses, so that would not
 * catch it in containers).
 */
import { execFile } from 'node:child_process';
import {
  closeSync,
  constants,
  existsSync,
  openSync,
  promises as fsp,
  read,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  write,
} from 'node:fs';
import { isatty } from 'node:tty';
import type {
  BindingInterface,
  BindingPortInterface,
  OpenOptions,
  PortInfo,
  PortStatus,
  SetOptions,
  UpdateOptions,
} from '@serialport/bindings-interface' with { 'resolution-mode': 'require' };
import { CanceledError, fullOpenOptions } from '../protocol/binding-port.js';
import { explainOpenError } from './open-error.js';
import { cableLoss } from './cable.js';
import { clearHupcl, type DtrOnOpen } from './dtr.js';

function stty(path: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile('stty', ['-F', path, ...args], (err, _out, stderr) => {
      if (err) reject(new Error(stderr.toString().trim() || err.message));
      else resolve();
    });
  });
}

/** Other processes that have `path` open, as "pid (command)". */
export function holdersOf(path: string): string[] {
  let real: string;
  try {
    real = realpathSync(path);
  } catch {
    return [];
  }
  const out: string[] = [];
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((p) => /^\d+$/.test(p) && Number(p) !== process.pid);
  } catch {
    return [];
  }
  for (const pid of pids) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        if (readlinkSync(`/proc/${pid}/fd/${fd}`) === real) {
          const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
          // socat keeps the far end of the pty pairs it makes open: that is the cable, not a user.
          if (argv[0] && /(^|\/)socat$/.test(argv[0])) break;
          out.push(`${pid} (${argv.slice(0, 4).join(' ')})`);
          break;
        }
      } catch {
        // the process went away
      }
    }
  }
  return out;
}

export class TtyPort implements BindingPortInterface {
  isOpen = true;
  readonly openOptions: Required<OpenOptions>;
  /** A read failed because the device vanished (cable.ts): close at once, no read is in flight. */
  private gone = false;
  constructor(
    private readonly fd: number,
    options: OpenOptions,
    /** What the open did to DTR (dtr.ts): whether it may have reset an Uno-class board. */
    readonly dtr: DtrOnOpen = 'unknown',
  ) {
    this.openOptions = fullOpenOptions(options);
  }

  private readOnce(buffer: Buffer, offset: number, length: number): Promise<number> {
    return new Promise((resolve, reject) => read(this.fd, buffer, offset, length, null, (err, n) => (err ? reject(err) : resolve(n))));
  }

  async read(buffer: Buffer, offset: number, length: number): Promise<{ buffer: Buffer; bytesRead: number }> {
    for (;;) {
      if (!this.isOpen) throw new CanceledError('Port is closed');
      let n: number;
      try {
        n = await this.readOnce(buffer, offset, length);
      } catch (e) {
        if (!this.isOpen) throw new CanceledError('Port is closed');
        const code = (e as NodeJS.ErrnoException).code;
        if (code === 'EAGAIN' || code === 'EINTR') continue;
        // EIO, ENXIO, ENODEV: the device went away (a USB cable pulled: cable.ts); serialport's stream
        // closes on it with a DisconnectedError that keeps the message. No read is left in flight.
        if (cableLoss(this.openOptions.path, e)) this.gone = true;
        throw e;
      }
      if (n > 0) return { buffer, bytesRead: n };
      // VTIME expired with nothing read: look again. A vanished device can read 0 forever: its node gone is a cable pulled.
      if (!this.isOpen) throw new CanceledError('Port is closed');
      if (!existsSync(this.openOptions.path)) {
        this.gone = true;
        throw Object.assign(new Error(`ENODEV: the device node ${this.openOptions.path} is gone`), { code: 'ENODEV' });
      }
    }
  }

  write(buffer: Buffer): Promise<void> {
    if (!this.isOpen) return Promise.reject(new CanceledError('Port is not open'));
    return new Promise((resolve, reject) => {
      const go = (off: number): void => {
        write(this.fd, buffer, off, buffer.length - off, null, (err, n) => {
          if (err) {
            if (cableLoss(this.openOptions.path, err)) this.gone = true;
            reject(err);
          } else if (off + n < buffer.length) go(off + n);
          else resolve();
        });
      };
      go(0);
    });
  }

  async close(): Promise<void> {
    if (!this.isOpen) return;
    this.isOpen = false;
    // Let a read in flight (at most VTIME = 0.1 s) finish before the descriptor goes (none when the device vanished).
    if (!this.gone) await new Promise((r) => setTimeout(r, 120));
    try {
      closeSync(this.fd);
    } catch {
      // already gone
    }
  }

  async update(options: UpdateOptions): Promise<void> {
    await stty(this.openOptions.path, [String(options.baudRate)]);
    (this.openOptions as { baudRate: number }).baudRate = options.baudRate;
  }
  async set(_options: SetOptions): Promise<void> {}
  async get(): Promise<PortStatus> {
    return { cts: false, dsr: false, dcd: false };
  }
  async getBaudRate(): Promise<{ baudRate: number }> {
    return { baudRate: this.openOptions.baudRate };
  }
  async flush(): Promise<void> {}
  async drain(): Promise<void> {}
}

/** The binding: open() checks the device, refuses a port in use, and configures it raw. */
export const ttyBinding: BindingInterface<TtyPort> = {
  async list(): Promise<PortInfo[]> {
    const out: PortInfo[] = [];
    for (const dir of ['/dev/serial/by-id']) {
      try {
        for (const f of await fsp.readdir(dir)) {
          out.push({
            path: realpathSync(`${dir}/${f}`),
            manufacturer: f,
            serialNumber: undefined,
            pnpId: f,
            locationId: undefined,
            productId: undefined,
            vendorId: undefined,
          });
        }
      } catch {
        // no udev: nothing listed here
      }
    }
    return out;
  },
  async open(options: OpenOptions): Promise<TtyPort> {
    const path = options.path;
    let fd: number;
    try {
      fd = openSync(path, constants.O_RDWR | constants.O_NOCTTY);
    } catch (e) {
      throw explainOpenError(path, e);
    }
    if (!isatty(fd)) {
      closeSync(fd);
      throw explainOpenError(path, new Error('ENOTTY: inappropriate ioctl for device'));
    }
    const holders = holdersOf(path);
    if (options.lock !== false && holders.length > 0) {
      closeSync(fd);
      throw explainOpenError(path, new Error(`in use by process ${holders.join(', ')}`));
    }
    try {
      await stty(path, [
        String(options.baudRate),
        'raw',
        '-echo',
        'cs8',
        '-cstopb',
        '-parenb',
        '-crtscts',
        'clocal',
        'cread',
        'min',
        '0',
        'time',
        '1',
      ]);
    } catch (e) {
      closeSync(fd);
      throw explainOpenError(path, e);
    }
    // HUPCL cleared: closing leaves DTR up, and the next open does not reset the board (dtr.ts).
    return new TtyPort(fd, options, await clearHupcl(path));
  },
};
