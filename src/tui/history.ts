/**
 * The last seconds of what the dashboard sampled, for the strip charts and the endpoint's trail: a
 * ring of samples with a time and a fixed set of channels. The dashboard samples the loop's newest row
 * at its frame rate; the charts are for the eye, the recording keeps every tick.
 */

/** Channels of a history sample. Angles and errors in degrees, torques in N m, positions in m. */
export const CHANNELS = [
  'qDes0',
  'qDes1', // [deg]
  'q0',
  'q1', // [deg]
  'err0',
  'err1', // desired - measured [deg]
  'res0',
  'res1', // measured - twin [deg]
  'tau0',
  'tau1', // commanded [N m]
  'ff0',
  'ff1', // feedforward [N m]
  'x',
  'y', // measured endpoint [m]
] as const;

export type Channel = (typeof CHANNELS)[number];

const INDEX = Object.fromEntries(CHANNELS.map((c, i) => [c, i])) as Record<Channel, number>;

export class History {
  private readonly t: Float64Array;
  private readonly data: Float64Array;
  private n = 0;
  private head = 0;

  constructor(readonly capacity = 1024) {
    this.t = new Float64Array(capacity);
    this.data = new Float64Array(capacity * CHANNELS.length);
  }

  get length(): number {
    return this.n;
  }

  clear(): void {
    this.n = 0;
    this.head = 0;
  }

  /** Adds a sample at loop time `t` [s]; a time that goes back (a new run) clears the history first. */
  push(t: number, values: Readonly<Record<Channel, number>>): void {
    if (this.n > 0 && t < this.time(this.n - 1)) this.clear();
    const k = this.head;
    this.t[k] = t;
    let at = k * CHANNELS.length;
    for (const c of CHANNELS) this.data[at++] = values[c];
    this.head = (this.head + 1) % this.capacity;
    if (this.n < this.capacity) this.n++;
  }

  private slot(i: number): number {
    return (this.head - this.n + i + this.capacity) % this.capacity;
  }

  /** Time of sample i (0 = oldest) [s]. */
  time(i: number): number {
    return this.t[this.slot(i)]!;
  }

  value(i: number, channel: Channel): number {
    return this.data[this.slot(i) * CHANNELS.length + INDEX[channel]]!;
  }

  /** Index of the oldest sample at or after time `t`. */
  since(t: number): number {
    let lo = 0;
    let hi = this.n;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.time(mid) < t) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
