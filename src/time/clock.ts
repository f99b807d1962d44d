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

/** The monotonic system clock (performance.now), with node timers. */
export class RealClock implements Clock {
  private readonly origin = performance.now();
  private readonly timers = new Map<number, NodeJS.Timeout | NodeJS.Immediate>();
  private nextId = 1;
  now(): number {
    return (performance.now() - this.origin) / 1000;
  }
  /**
   * Node's timers have a 1 ms grain, so a delay under a millisecond (a frame's time on a 1 Mbaud wire,
   * modelled by the mock rig) runs at the next turn of the event loop instead of a whole millisecond
   * late: a little early rather than several times too late.
   */
  setTimer(delay: number, fn: () => void): TimerHandle {
    const id = this.nextId++;
    const run = (): void => {
      if (!this.timers.delete(id)) return;
      fn();
    };
    this.timers.set(id, delay < 0.001 ? setImmediate(run) : setTimeout(run, delay * 1000));
    return { id };
  }
  clearTimer(h: TimerHandle | undefined): void {
    if (!h) return;
    const t = this.timers.get(h.id);
    if (t) {
      clearTimeout(t as NodeJS.Timeout);
      clearImmediate(t as NodeJS.Immediate);
    }
    this.timers.delete(h.id);
  }
}

interface Pending {
  id: number;
  at: number;
  order: number;
  fn: () => void;
}

/**
 * Virtual time: `now()` moves only when the test calls `advanceTo`/`advanceBy`, which run the due
 * timers in time order (ties in the order they were set).
 */
export class VirtualClock implements Clock {
  private t = 0;
  private heap: Pending[] = [];
  private nextId = 1;
  private order = 0;
  private readonly cancelled = new Set<number>();

  now(): number {
    return this.t;
  }
  setTimer(delay: number, fn: () => void): TimerHandle {
    const p: Pending = { id: this.nextId++, at: this.t + Math.max(0, delay), order: this.order++, fn };
    this.push(p);
    return { id: p.id };
  }
  clearTimer(h: TimerHandle | undefined): void {
    if (h) this.cancelled.add(h.id);
  }
  /** Runs every timer due up to `t` (timers may set new timers), then sets now() = t. */
  advanceTo(t: number): void {
    for (;;) {
      const top = this.heap[0];
      if (!top || top.at > t) break;
      this.pop();
      if (this.cancelled.delete(top.id)) continue;
      this.t = Math.max(this.t, top.at);
      top.fn();
    }
    this.t = Math.max(this.t, t);
  }
  advanceBy(dt: number): void {
    this.advanceTo(this.t + dt);
  }
  /** Time of the next pending timer, or Infinity. */
  nextTimerAt(): number {
    while (this.heap[0] && this.cancelled.has(this.heap[0].id)) this.cancelled.delete(this.pop().id);
    return this.heap[0]?.at ?? Infinity;
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
  private pop(): Pending {
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

/** Lets queued promise callbacks, nextTicks and stream events run (between virtual-time steps). */
export function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
