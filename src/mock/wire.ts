/**
 * The cable between the host and a mock board that runs in its own thread: two single-producer,
 * single-consumer byte rings in shared memory, one each way, with a counter per direction that the
 * writer bumps and notifies (Atomics.notify). The board's thread sleeps in Atomics.wait until the
 * host's bytes or its next timer; the host's side wakes with Atomics.waitAsync, so neither spins and
 * neither shares an event loop with the other.
 *
 * `WirePort` is a serialport binding port over the host's end: `new SerialPortStream({ binding })`
 * over it is a real serialport stream.
 */
import type { BindingInterface, BindingPortInterface, OpenOptions } from '@serialport/bindings-interface' with {
  'resolution-mode': 'require',
};
import { CanceledError, onePortBinding, SimulatedPortBase, UnpluggedError } from '../protocol/binding-port.js';

const RING = 1 << 16;

/** Atomics.waitAsync (Node >= 16; typed in lib es2024, which this project does not target yet). */
const waitAsync = (
  Atomics as unknown as {
    waitAsync: (
      a: Int32Array,
      i: number,
      v: number,
      t?: number,
    ) => { async: false; value: string } | { async: true; value: Promise<string> };
  }
).waitAsync;
/** Control words: [0..1] down ring head/tail, [2..3] up ring head/tail, [4] down signal, [5] up signal, [6] flags, [7] host baud, [8] board heartbeat [ms]. */
const CTRL = 12;
const DOWN_SIGNAL = 4;
const UP_SIGNAL = 5;
const FLAGS = 6;
const BAUD = 7;
const HEARTBEAT = 8;

/** Wall time in ms, mod 2^31, on the process's clock (the same in every thread). */
function wallMs(): number {
  return Math.floor(performance.timeOrigin + performance.now()) % 2147483648;
}
/** Flag bits. */
export const WIRE_UNPLUGGED = 1;
export const WIRE_CLOSED = 2;

/** The shared memory of one cable (transferable to workers as it is). */
export interface WireBuffers {
  ctrl: SharedArrayBuffer;
  down: SharedArrayBuffer;
  up: SharedArrayBuffer;
}

export function createWire(): WireBuffers {
  return { ctrl: new SharedArrayBuffer(CTRL * 4), down: new SharedArrayBuffer(RING), up: new SharedArrayBuffer(RING) };
}

/** One direction: a byte ring with head (written by the producer) and tail (by the consumer). */
class Ring {
  private readonly bytes: Uint8Array;
  constructor(
    private readonly ctrl: Int32Array,
    buf: SharedArrayBuffer,
    private readonly at: number,
    private readonly signal: number,
  ) {
    this.bytes = new Uint8Array(buf);
  }
  /** Copies what fits; returns the bytes written (the rest is lost, as an overrun UART loses it). */
  write(src: Uint8Array): number {
    const head = Atomics.load(this.ctrl, this.at);
    const tail = Atomics.load(this.ctrl, this.at + 1);
    const free = RING - 1 - ((head - tail + RING) % RING);
    const n = Math.min(free, src.length);
    const first = Math.min(n, RING - head);
    this.bytes.set(src.subarray(0, first), head);
    if (n > first) this.bytes.set(src.subarray(first, n), 0);
    Atomics.store(this.ctrl, this.at, (head + n) % RING);
    Atomics.add(this.ctrl, this.signal, 1);
    Atomics.notify(this.ctrl, this.signal);
    return n;
  }
  /** Bytes waiting. */
  available(): number {
    const head = Atomics.load(this.ctrl, this.at);
    const tail = Atomics.load(this.ctrl, this.at + 1);
    return (head - tail + RING) % RING;
  }
  /** Moves up to `length` waiting bytes into `dst` at `offset`; returns how many. */
  read(dst: Uint8Array, offset: number, length: number): number {
    const tail = Atomics.load(this.ctrl, this.at + 1);
    const n = Math.min(this.available(), length);
    const first = Math.min(n, RING - tail);
    dst.set(this.bytes.subarray(tail, tail + first), offset);
    if (n > first) dst.set(this.bytes.subarray(0, n - first), offset + first);
    Atomics.store(this.ctrl, this.at + 1, (tail + n) % RING);
    return n;
  }
}

/** The board's end of the cable (used in the mock's thread). */
export class BoardWireEnd {
  readonly ctrl: Int32Array;
  private readonly down: Ring;
  private readonly upRing: Ring;
  private readonly buf = Buffer.alloc(4096);
  constructor(w: WireBuffers) {
    this.ctrl = new Int32Array(w.ctrl);
    this.down = new Ring(this.ctrl, w.down, 0, DOWN_SIGNAL);
    this.upRing = new Ring(this.ctrl, w.up, 2, UP_SIGNAL);
  }
  /** The down counter now: pass it to `sleep` to wake on bytes written after this call. */
  downSignal(): number {
    return Atomics.load(this.ctrl, DOWN_SIGNAL);
  }
  /** Sleeps until the host writes (after `seen`) or `ms` pass. */
  sleep(seen: number, ms: number): void {
    if (ms > 0) Atomics.wait(this.ctrl, DOWN_SIGNAL, seen, ms);
  }
  /** Bytes the host wrote since the last call (a copy), or undefined. */
  take(): Buffer | undefined {
    const n = this.down.read(this.buf, 0, this.buf.length);
    return n > 0 ? Buffer.from(this.buf.subarray(0, n)) : undefined;
  }
  /** Bytes to the host. */
  send(bytes: Uint8Array): void {
    this.upRing.write(bytes);
  }
  /** The board's thread is running (called every pass of its loop). */
  heartbeat(): void {
    Atomics.store(this.ctrl, HEARTBEAT, wallMs());
  }
  /** The baud rate the host opened its port at (0 before it did). */
  hostBaudRate(): number {
    return Atomics.load(this.ctrl, BAUD);
  }
  unplug(): void {
    Atomics.or(this.ctrl, FLAGS, WIRE_UNPLUGGED);
    Atomics.add(this.ctrl, UP_SIGNAL, 1);
    Atomics.notify(this.ctrl, UP_SIGNAL);
  }
  closed(): boolean {
    return (Atomics.load(this.ctrl, FLAGS) & WIRE_CLOSED) !== 0;
  }
}

/** The host's end of the cable, as a serialport binding port. */
export class WirePort extends SimulatedPortBase implements BindingPortInterface {
  isOpen = true;
  private readonly ctrl: Int32Array;
  private readonly up: Ring;
  private readonly down: Ring;

  constructor(w: WireBuffers, options: OpenOptions) {
    super(options);
    this.ctrl = new Int32Array(w.ctrl);
    this.up = new Ring(this.ctrl, w.up, 2, UP_SIGNAL);
    this.down = new Ring(this.ctrl, w.down, 0, DOWN_SIGNAL);
    Atomics.store(this.ctrl, BAUD, options.baudRate);
  }

  private unplugged(): boolean {
    return (Atomics.load(this.ctrl, FLAGS) & WIRE_UNPLUGGED) !== 0;
  }

  async read(buffer: Buffer, offset: number, length: number): Promise<{ buffer: Buffer; bytesRead: number }> {
    for (;;) {
      if (this.unplugged()) throw new UnpluggedError('the device was unplugged (EIO)');
      if (!this.isOpen) throw new CanceledError('Port is not open');
      const seen = Atomics.load(this.ctrl, UP_SIGNAL);
      const n = this.up.read(buffer, offset, length);
      if (n > 0) return { buffer, bytesRead: n };
      const w = waitAsync(this.ctrl, UP_SIGNAL, seen);
      if (w.async) await w.value;
    }
  }

  async write(buffer: Buffer): Promise<void> {
    if (this.unplugged()) throw new UnpluggedError('the device was unplugged (EIO)');
    if (!this.isOpen) throw new CanceledError('Port is not open');
    this.down.write(buffer);
  }

  async close(): Promise<void> {
    this.isOpen = false;
    Atomics.or(this.ctrl, FLAGS, WIRE_CLOSED);
    // Wake a read waiting for bytes, so that it sees the port closed.
    Atomics.add(this.ctrl, UP_SIGNAL, 1);
    Atomics.notify(this.ctrl, UP_SIGNAL);
    Atomics.add(this.ctrl, DOWN_SIGNAL, 1);
    Atomics.notify(this.ctrl, DOWN_SIGNAL);
  }

  protected onBaud(baudRate: number): void {
    Atomics.store(this.ctrl, BAUD, baudRate);
  }
}

/**
 * How long the board's thread at the far end of cable `w` has not run [s] (0 before it started): a
 * simulated board starved by a busy machine, as opposed to a lost link.
 */
export function boardSilentS(w: WireBuffers): number {
  const hb = Atomics.load(new Int32Array(w.ctrl), HEARTBEAT);
  if (hb === 0) return 0;
  return ((((wallMs() - hb) % 2147483648) + 2147483648) % 2147483648) / 1000;
}

/** A binding with one cable at one path. */
export function wireBinding(path: string, w: WireBuffers): BindingInterface<WirePort> {
  return onePortBinding(path, (options) => new WirePort(w, options));
}
