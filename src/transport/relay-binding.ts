/**
 * The portable serial path (`--serial serialport`): a serialport binding whose port lives in a child
 * process (serial-relay-main.ts), where serialport's own native binding runs on that process's main
 * thread, as it must (docs/serial.md). Bytes cross on the child's stdin and stdout, which this
 * thread's event loop reads and writes itself: the loop's worker uses it as it uses the tty binding,
 * on Linux, macOS and Windows alike.
 *
 * Errors keep serialport's two kinds: a read on a port closed here is `CanceledError`; the port closing
 * by itself (a pulled cable: the relay says `disconnected`), or the relay dying, is not canceled, so
 * SerialPortStream reports a disconnection and the link a lost port.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type {
  BindingInterface,
  BindingPortInterface,
  OpenOptions,
  PortInfo,
  PortStatus,
  SetOptions,
  UpdateOptions,
} from '@serialport/bindings-interface' with { 'resolution-mode': 'require' };
import { CanceledError, fullOpenOptions, UnpluggedError } from '../protocol/binding-port.js';
import type { RelayArgs, RelayReply, RelayRequest, RelayStatus } from './relay-wire.js';
import { serialportStall } from '../time/platform.js';
import type { DtrOnOpen } from './dtr.js';

/**
 * The relay's entry: dist/transport/serial-relay-main.js beside this file; when this file runs from
 * its TypeScript source (the tests, under vitest), the built one (npm test builds first).
 */
const RELAY_MAIN = fileURLToPath(
  import.meta.url.endsWith('.ts')
    ? new URL('../../dist/transport/serial-relay-main.js', import.meta.url)
    : new URL('./serial-relay-main.js', import.meta.url),
);

/**
 * The error a read fails with once the relay said its port closed: a vanished device (the relay's
 * cableLoss: `code`) carries its errno in `code` and at the head of the message, which is all of it
 * that serialport's stream keeps when it closes (cable.ts reads it back there).
 */
export function closedError(path: string, m: Extract<RelayStatus, { type: 'closed' }>): Error {
  if (!m.disconnected) return new Error(`${path}: ${m.message}`);
  const text = m.code && !m.message.includes(m.code) ? `${m.code}: ${m.message}` : m.message;
  return Object.assign(new UnpluggedError(`${path}: ${text}`), m.code ? { code: m.code } : {});
}

/** A request before it gets its id (each member of the union on its own). */
type WithoutId<T> = T extends unknown ? Omit<T, 'id'> : never;

/** What the relay said when its port opened. */
export interface RelayInfo {
  pid: number;
  /** The relay's priority, for people ("SCHED_FIFO 41", "HIGH priority class", "normal priority (...)"). */
  priority: string;
  /** What the open did to DTR (dtr.ts): whether it may have reset an Uno-class board. */
  dtr: DtrOnOpen;
}

export class RelayPort implements BindingPortInterface {
  isOpen = true;
  /** What the open did to DTR (dtr.ts). */
  readonly dtr: DtrOnOpen;
  readonly openOptions: Required<OpenOptions>;
  private readonly chunks: Buffer[] = [];
  private waiter: { resolve: () => void } | undefined;
  /** Why the port is gone when it went by itself (unplugged, the relay died). */
  private gone: Error | undefined;
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  /** Bytes handed to the relay's stdin [B]. */
  private sent = 0;
  private readonly exited: Promise<void>;

  constructor(
    private readonly child: ChildProcess,
    options: OpenOptions,
    readonly relay: RelayInfo,
  ) {
    this.openOptions = fullOpenOptions(options);
    this.dtr = relay.dtr;
    child.stdout!.on('data', (d: Buffer) => {
      this.chunks.push(d);
      this.wake();
    });
    child.on('message', (m: RelayStatus | RelayReply) => {
      if (m.type === 'reply') {
        const p = this.pending.get(m.id);
        this.pending.delete(m.id);
        if (m.error !== undefined) p?.reject(new Error(m.error));
        else p?.resolve(m.value);
      } else if (m.type === 'closed' && this.isOpen) this.lose(closedError(options.path, m));
    });
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()));
    child.once('exit', (code, signal) => {
      if (this.isOpen) this.lose(new UnpluggedError(`${options.path}: the serial relay process ended (${signal ?? `exit code ${code}`})`));
      for (const p of this.pending.values()) p.reject(new Error(`${options.path}: the serial relay process ended`));
      this.pending.clear();
    });
    // A relay's stdin closed under us (it died): the exit above says it.
    child.stdin!.on('error', () => undefined);
  }

  private wake(): void {
    const w = this.waiter;
    this.waiter = undefined;
    w?.resolve();
  }

  private lose(e: Error): void {
    this.gone ??= e;
    this.wake();
  }

  async read(buffer: Buffer, offset: number, length: number): Promise<{ buffer: Buffer; bytesRead: number }> {
    for (;;) {
      if (!this.isOpen) throw new CanceledError('Port is closed');
      const head = this.chunks[0];
      if (head) {
        const n = Math.min(length, head.length);
        head.copy(buffer, offset, 0, n);
        if (n === head.length) this.chunks.shift();
        else this.chunks[0] = head.subarray(n);
        return { buffer, bytesRead: n };
      }
      if (this.gone) throw this.gone;
      await new Promise<void>((resolve) => (this.waiter = { resolve }));
    }
  }

  write(buffer: Buffer): Promise<void> {
    if (!this.isOpen) return Promise.reject(new CanceledError('Port is not open'));
    if (this.gone) return Promise.reject(this.gone);
    this.sent += buffer.length;
    // A copy: serialport may reuse the buffer once the write resolves, and the pipe may hold it longer.
    return new Promise((resolve, reject) => this.child.stdin!.write(Buffer.from(buffer), (e) => (e ? reject(this.gone ?? e) : resolve())));
  }

  private request(r: WithoutId<RelayRequest>): Promise<unknown> {
    if (this.gone) return Promise.reject(this.gone);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.child.send({ ...r, id });
    });
  }

  /** Ends the relay's stdin (it writes what came before, closes the port and exits), then waits for it (killed after 2 s). */
  async close(): Promise<void> {
    if (!this.isOpen) return;
    this.isOpen = false;
    this.wake();
    this.child.stdin!.end();
    const t = setTimeout(() => this.child.kill('SIGKILL'), 2000);
    t.unref();
    await this.exited;
    clearTimeout(t);
  }

  async update(options: UpdateOptions): Promise<void> {
    await this.request({ type: 'update', baudRate: options.baudRate });
    (this.openOptions as { baudRate: number }).baudRate = options.baudRate;
  }
  async set(options: SetOptions): Promise<void> {
    await this.request({ type: 'set', options });
  }
  async get(): Promise<PortStatus> {
    return (await this.request({ type: 'get' })) as PortStatus;
  }
  async getBaudRate(): Promise<{ baudRate: number }> {
    return { baudRate: this.openOptions.baudRate };
  }
  async flush(): Promise<void> {
    this.chunks.length = 0;
    await this.request({ type: 'flush' });
  }
  async drain(): Promise<void> {
    await this.request({ type: 'drain', bytes: this.sent });
  }
}

/**
 * The relay binding. `rt`: ask for the relay's priority (Linux: SCHED_FIFO `rtPriority` for all its
 * threads; macOS and Windows: os.setPriority, as the loop's process). `nudge` (by default on the Node
 * versions that need it, time/platform.ts): the relay works around Node 26.4's late reads
 * (serial-relay-main.ts nudgeReads). `onRelay` hears what it got.
 */
export function relayBinding(o: {
  rt: boolean;
  rtPriority?: number;
  nudge?: boolean;
  onRelay?: (info: RelayInfo) => void;
}): BindingInterface<RelayPort> {
  return {
    async list(): Promise<PortInfo[]> {
      // Listing needs no relay: `twolink ports` lists on its main thread with serialport itself.
      throw new Error('the serial relay binding opens ports; list them with serialport on a main thread (twolink ports)');
    },
    async open(options: OpenOptions): Promise<RelayPort> {
      const full = fullOpenOptions(options);
      const args: RelayArgs = {
        path: full.path,
        baudRate: full.baudRate,
        lock: full.lock,
        hupcl: full.hupcl,
        rt: o.rt,
        rtPriority: o.rtPriority ?? 41,
        nudge: o.nudge ?? serialportStall() !== undefined,
      };
      const child = spawn(process.execPath, [RELAY_MAIN, JSON.stringify(args)], {
        stdio: ['pipe', 'pipe', 'pipe', 'ipc'],
        windowsHide: true,
      });
      let stderr = '';
      child.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-2000)));
      const info = await new Promise<RelayInfo>((resolve, reject) => {
        const onMessage = (m: RelayStatus): void => {
          if (m.type === 'open') {
            child.off('exit', onExit);
            child.off('message', onMessage);
            resolve({ pid: m.pid, priority: m.priority, dtr: m.dtr });
          } else if (m.type === 'error') reject(new Error(m.message));
        };
        const onExit = (code: number | null, signal: string | null): void =>
          reject(
            new Error(
              `the serial relay process ended before the port opened (${signal ?? `exit code ${code}`})${stderr ? `: ${stderr.trim()}` : ''}`,
            ),
          );
        child.on('message', onMessage);
        child.once('exit', onExit);
        child.once('error', (e) => reject(new Error(`cannot start the serial relay process (${process.execPath}): ${e.message}`)));
      });
      o.onRelay?.(info);
      return new RelayPort(child, options, info);
    },
  };
}
