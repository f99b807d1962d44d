/**
 * Time for everything that waits: one interface, a real clock for the arm and a virtual one for
 * tests (deterministic, faster than real time). Nothing in src/ reads the system clock except
 * RealClock.
 */

/** Handle of a pending timer. */
export interface TimerHandle {
  readonly id: number;
}

export interface Clock {
  /** Seconds since the clock's origin (monotonic). */
  now(): number;
  /** Calls `fn` after `delay` seconds (>= 0). */
  setTimer(delay: number, fn: () => void): TimerHandle;
  clearTimer(h: TimerHandle | undefined): void;
}

/**
 * The monotonic system clock (performance.now). Its timers run in due order, always: they sit in one
 * queue that a single node timer drives. Node's own timers have a 1 ms grain, so the driver wakes with
 * setTimeout while the next due time is a millisecond or more away and with setImmediate after that:
 * a timer due in 0.4 ms (a frame's time on a 1 Mbaud wire, in the mock rig's UART model) runs at the
 * next turn of the event loop, a little early rather than a millisecond late, and never before a timer
 * that was due earlier.
 */
export class RealClock implements Clock {
  private readonly origin = performance.now();
  private readonly queue = new TimerQueue();
  private driver: NodeJS.Timeout | NodeJS.Immediate | undefined;
  private driverAt = Infinity;
  now(): number {
    return (performance.now() - this.origin) / 1000;
  }
  setTimer(delay: number, fn: () => void): TimerHandle {
    const h = this.queue.add(this.now() + Math.max(0, delay), fn);
    this.arm();
    return h;
  }
  clearTimer(h: TimerHandle | undefined): void {
    if (h) this.queue.cancel(h.id);
  }
  private arm(): void {
    const next = this.queue.nextAt();
    if (next === Infinity || next >= this.driverAt) return;
    this.disarm();
    const wait = next - this.now();
    this.driverAt = next;
    this.driver = wait < 0.001 ? setImmediate(() => this.run()) : setTimeout(() => this.run(), (wait - 0.0005) * 1000);
  }
  private disarm(): void {
    if (this.driver) {
      clearTimeout(this.driver as NodeJS.Timeout);
      clearImmediate(this.driver as NodeJS.Immediate);
    }
    this.driver = undefined;
    this.driverAt = Infinity;
  }
  private run(): void {
    this.driver = undefined;
    this.driverAt = Infinity;
    // Everything due within the next millisecond runs now, in order (timers may add timers).
    for (;;) {
      const at = this.queue.nextAt();
      if (at > this.now() + 0.001) break;
      this.queue.pop()!.fn();
    }
    this.arm();
  }
}

/**
 * The system clock with timers that its owner runs (`runDue`), for a thread that waits on something
 * else between timers (the mock board's thread sleeps in Atomics.wait until the next timer or the
 * host's bytes): no node timers, no spinning.
 */
export class DrivenClock implements Clock {
  private origin: number;
  private readonly queue = new TimerQueue();
  /** While late timers catch up: the due time of the one running [s]. */
  private catchingUp: number | undefined;
  /** `wallMs`: the wall clock [ms] (performance.now; a test gives its own to starve the owner at will). */
  constructor(private readonly wallMs: () => number = () => performance.now()) {
    this.origin = wallMs();
  }
  now(): number {
    return this.catchingUp ?? this.wallNow();
  }
  private wallNow(): number {
    return (this.wallMs() - this.origin) / 1000;
  }
  /** Stops this clock's time for `dt` [s] that have already passed (its owner was not running). */
  pause(dt: number): void {
    if (dt > 0) this.origin += dt * 1000;
  }
  setTimer(delay: number, fn: () => void): TimerHandle {
    return this.queue.add(this.now() + Math.max(0, delay), fn);
  }
  clearTimer(h: TimerHandle | undefined): void {
    if (h) this.queue.cancel(h.id);
  }
  /** Due time of the next timer [s], or Infinity. */
  nextTimerAt(): number {
    return this.queue.nextAt();
  }
  /**
   * Runs every timer that is due, in order; returns the largest lateness among them [s] (0 if none ran).
   * `catchUp`: each late timer runs at its due time (`now()` reads it, and timers it sets count from
   * it), as if its owner had not been held up: a board's samples keep their grid.
   * `starvedAfter` [s]: returns, leaving them due, at a timer later than this (its owner was held up
   * while it ran the timers before: the caller's starvation check, not a burst of every timer missed,
   * is what should answer that).
   */
  runDue(catchUp = false, starvedAfter = Infinity): number {
    let late = 0;
    try {
      for (;;) {
        const at = this.queue.nextAt();
        const now = this.wallNow();
        if (at > now || now - at > starvedAfter) break;
        late = Math.max(late, now - at);
        if (catchUp) this.catchingUp = Math.max(at, this.catchingUp ?? at);
        this.queue.pop()!.fn();
      }
    } finally {
      this.catchingUp = undefined;
    }
    return late;
  }
}

interface Pending {
  id: number;
  at: number;
  order: number;
  fn: () => void;
}

/** Pending timers in due order (ties in the order they were set), with cancellation. */
class TimerQueue {
  private heap: Pending[] = [];
  private nextId = 1;
  private order = 0;
  private readonly cancelled = new Set<number>();

  add(at: number, fn: () => void): TimerHandle {
    const p: Pending = { id: this.nextId++, at, order: this.order++, fn };
    this.push(p);
    return { id: p.id };
  }
  cancel(id: number): void {
    this.cancelled.add(id);
  }
  /** Due time of the next live timer, or Infinity. */
  nextAt(): number {
    while (this.heap[0] && this.cancelled.has(this.heap[0].id)) this.cancelled.delete(this.popRaw().id);
    return this.heap[0]?.at ?? Infinity;
  }
  /** The next live timer, removed. */
  pop(): Pending | undefined {
    return this.nextAt() === Infinity ? undefined : this.popRaw();
  }

  private less(a: Pending, b: Pending): boolean {
    return a.at < b.at || (a.at === b.at && a.order < b.order);
  }
  private push(p: Pending): void {
    const h = this.heap;
    h.push(p);
    let i = h.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(h[i]!, h[parent]!)) break;
      [h[i], h[parent]] = [h[parent]!, h[i]!];
      i = parent;
    }
  }
  private popRaw(): Pending {
    const h = this.heap;
    const top = h[0]!;
    const last = h.pop()!;
    if (h.length > 0) {
      h[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && this.less(h[l]!, h[m]!)) m = l;
        if (r < h.length && this.less(h[r]!, h[m]!)) m = r;
        if (m === i) break;
        [h[i], h[m]] = [h[m]!, h[i]!];
        i = m;
      }
    }
    return top;
  }
}

/**
 * Virtual time: `now()` moves only when the test calls `advanceTo`/`advanceBy`, which run the due
 * timers in time order (ties in the order they were set).
 */
export class VirtualClock implements Clock {
  private t = 0;
  private readonly queue = new TimerQueue();

  now(): number {
    return this.t;
  }
  setTimer(delay: number, fn: () => void): TimerHandle {
    return this.queue.add(this.t + Math.max(0, delay), fn);
  }
  clearTimer(h: TimerHandle | undefined): void {
    if (h) this.queue.cancel(h.id);
  }
  /** Runs every timer due up to `t` (timers may set new timers), then sets now() = t. */
  advanceTo(t: number): void {
    for (;;) {
      const at = this.queue.nextAt();
      if (at > t) break;
      const p = this.queue.pop()!;
      this.t = Math.max(this.t, p.at);
      p.fn();
    }
    this.t = Math.max(this.t, t);
  }
  advanceBy(dt: number): void {
    this.advanceTo(this.t + dt);
  }
  /** Time of the next pending timer, or Infinity. */
  nextTimerAt(): number {
    return this.queue.nextAt();
  }
}

/** Lets queued promise callbacks, nextTicks and stream events run (between virtual-time steps). */
export function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * Moves virtual time from timer to timer, letting callbacks run between them, until `done()`. A clock
 * with nothing pending for 1000 turns while `done()` is still false is an error naming `what`.
 */
export async function advanceUntil(clock: VirtualClock, done: () => boolean, what: string): Promise<void> {
  let idle = 0;
  while (!done()) {
    const next = clock.nextTimerAt();
    if (next === Infinity) {
      if (++idle > 1000) throw new Error(`${what}: nothing pending in virtual time and no end`);
    } else {
      idle = 0;
      clock.advanceTo(next);
    }
    await settle();
  }
}

/**
 * Moves virtual time in small steps, letting streams and callbacks run between them, until `p`
 * settles; then returns (or throws) what it settled with. Bounded in virtual and in real time (code
 * under test may wait on real timers too, as johnny-five's handshake does).
 */
export async function runUntilSettled<T>(
  clock: VirtualClock,
  p: Promise<T>,
  opts: { stepS?: number; maxS?: number; maxRealMs?: number } = {},
): Promise<T> {
  let done = false;
  p.then(
    () => (done = true),
    () => (done = true),
  );
  const end = clock.now() + (opts.maxS ?? 20);
  const realEnd = Date.now() + (opts.maxRealMs ?? 15_000);
  while (!done) {
    if (clock.now() > end) throw new Error(`still pending after ${opts.maxS ?? 20} s of virtual time`);
    if (Date.now() > realEnd) throw new Error(`still pending after ${opts.maxRealMs ?? 15_000} ms of real time`);
    clock.advanceBy(opts.stepS ?? 0.0005);
    await settle();
  }
  return p;
}
