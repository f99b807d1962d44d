/**
 * A single-writer, single-reader ring of tick rows in shared memory: the loop's worker writes a row per
 * tick without a message or a copy the main thread has to wait for, and the main thread drains the
 * rows to the recorder and the dashboard. Rows survive the worker: if the worker dies, the main thread
 * still drains everything it wrote. A reader that falls a whole ring behind loses rows; it is told how
 * many (the ring holds 65536 ticks, over a minute at 1 kHz, against a drain every 20 ms).
 */
import { TICK_WIDTH } from '../telemetry/tick.js';

export const RING_ROWS = 65536;

export interface RingBuffers {
  /** [0] = rows written so far (wraps at 2^31, compared modulo) */
  header: SharedArrayBuffer;
  rows: SharedArrayBuffer;
}

/** `rows` must be a power of two. */
export function createRing(rows = RING_ROWS): RingBuffers {
  if ((rows & (rows - 1)) !== 0) throw new RangeError(`ring rows must be a power of two, got ${rows}`);
  return { header: new SharedArrayBuffer(8), rows: new SharedArrayBuffer(rows * TICK_WIDTH * 8) };
}

export class RingWriter {
  private readonly count: Int32Array;
  private readonly data: Float64Array;
  private readonly capacity: number;
  private n = 0;
  constructor(b: RingBuffers) {
    this.count = new Int32Array(b.header);
    this.data = new Float64Array(b.rows);
    this.capacity = this.data.length / TICK_WIDTH;
  }
  write(row: Float64Array): void {
    this.data.set(row, (this.n & (this.capacity - 1)) * TICK_WIDTH);
    this.n = (this.n + 1) | 0;
    Atomics.store(this.count, 0, this.n);
  }
}

export class RingReader {
  private readonly count: Int32Array;
  private readonly data: Float64Array;
  private readonly capacity: number;
  private read = 0;
  /** Rows lost because the reader fell a whole ring behind. */
  lost = 0;
  constructor(b: RingBuffers) {
    this.count = new Int32Array(b.header);
    this.data = new Float64Array(b.rows);
    this.capacity = this.data.length / TICK_WIDTH;
  }
  /** Rows written so far (modulo 2^31): a change says the writer is alive. */
  written(): number {
    return Atomics.load(this.count, 0);
  }

  /** Calls `fn` with every row written since the last drain (a view: copy to keep). */
  drain(fn: (row: Float64Array) => void): number {
    return this.drainAt((data, at) => fn(data.subarray(at, at + TICK_WIDTH)));
  }
  /**
   * Calls `fn` with the ring's array and the offset of every row written since the last drain, without
   * a view per row (a reader that looks at a few fields of each row, e.g. the live view's clock).
   */
  drainAt(fn: (data: Float64Array, at: number) => void): number {
    const written = Atomics.load(this.count, 0);
    let pending = (written - this.read) | 0;
    if (pending > this.capacity) {
      this.lost += pending - this.capacity;
      this.read = (written - this.capacity) | 0;
      pending = this.capacity;
    }
    for (let k = 0; k < pending; k++) fn(this.data, ((this.read + k) & (this.capacity - 1)) * TICK_WIDTH);
    this.read = written;
    return pending;
  }

  /** Passes over every row written so far (a reader that starts late, or was not reading). */
  skip(): void {
    this.read = Atomics.load(this.count, 0);
  }

  /** The newest row, or undefined before the first (a view). */
  latest(): Float64Array | undefined {
    const written = Atomics.load(this.count, 0);
    if (written === 0) return undefined;
    const i = (written - 1) & (this.capacity - 1);
    return this.data.subarray(i * TICK_WIDTH, (i + 1) * TICK_WIDTH);
  }
}
