/**
 * The owner of time: it runs the loop's ticks on a fixed grid (t0 + k T), measures each period,
 * counts overruns, and when it falls behind it skips the missed grid points instead of bunching ticks
 * (as ros2_control's controller manager does). Around the ticks it drives the session: connect,
 * enable, the trajectories, the stop, and the board's confirmation that the motors are at zero.
 *
 * Pacing comes from a Pacer: RealPacer sleeps with Atomics.wait until shortly before the deadline,
 * lets the event loop run I/O for a short window, then spins to the deadline (FACTS.md: setTimeout
 * pacing is late on every tick); VirtualPacer moves a VirtualClock, so tests run faster than real time
 * and deterministically.
 */
import type { Rig } from '../config/load.js';
import type { PathSpec } from '../model/builtins.js';
import { settle, type Clock, type VirtualClock } from '../time/clock.js';
import type { BoardIdentity, Link, StopOutcome } from '../transport/link.js';
import type { FeedforwardMode } from './controller.js';
import { LoopCore, type LoopCommand, type LoopEvent } from './loop.js';

export interface Pacer {
  /** Resolves at (or as soon as possible after) clock time `t` [s]. */
  waitUntil(t: number): Promise<void>;
}

function immediate(): Promise<void> {
  return new Promise((r) => setImmediate(r));
}

/** Real-time pacing for a worker thread: sleep, I/O window, spin. */
/**
 * Measured on this 2-core machine (npm run bench): sleeping until 50 us before the deadline gave a
 * 1 kHz p99 period error of ~400 us (the thread's wake-up waits for a core); spinning the last 300 us
 * brings it to ~100-160 us for ~70% of a core at 1 kHz, ~40% at 500 Hz.
 */
export class RealPacer implements Pacer {
  private readonly cell = new Int32Array(new SharedArrayBuffer(4));
  constructor(
    private readonly clock: Clock,
    /** Time before the deadline when the thread stops sleeping and serves I/O events [s]. */
    private readonly ioWindow = 0.0006,
    /** Time before the deadline when it stops serving I/O and spins [s]. */
    private readonly spin = 0.0003,
  ) {}
  async waitUntil(t: number): Promise<void> {
    await immediate(); // let the last tick's writes and callbacks go
    for (;;) {
      const left = t - this.clock.now();
      if (left <= this.ioWindow) break;
      Atomics.wait(this.cell, 0, 0, (left - this.ioWindow) * 1000);
    }
    while (t - this.clock.now() > this.spin) await immediate();
    while (this.clock.now() < t) {
      // spin the last few microseconds
    }
  }
}

/** Virtual-time pacing: moves the clock to the deadline and lets queued callbacks run. */
export class VirtualPacer implements Pacer {
  constructor(private readonly clock: VirtualClock) {}
  async waitUntil(t: number): Promise<void> {
    // Step through the timers due before t so that their callbacks (bytes on the wire) settle in order.
    for (;;) {
      const next = this.clock.nextTimerAt();
      if (next > t) break;
      this.clock.advanceTo(next);
      await settle();
    }
    this.clock.advanceTo(t);
    await settle();
  }
}

export interface RunOptions {
  rig: Rig;
  link: Link;
  clock: Clock;
  pacer: Pacer;
  /** [Hz] */
  rateHz: number;
  feedforward: FeedforwardMode;
  /** Trajectories to run in order (each from where the previous left the arm). */
  paths: PathSpec[];
  /** Start again with the first when the last is done (the demo). */
  cycle?: boolean;
  /** Go back to where the arm started after each trajectory. @default true */
  park?: boolean;
  /** Every tick's row (a reused buffer: copy it). */
  sink: (row: Float64Array) => void;
  onEvent?: (e: LoopEvent) => void;
  /** Called after every tick (the dashboard's snapshot, test hooks). */
  onTick?: (core: LoopCore) => void;
  /** Called once the loop exists, before the first tick: commands go through `send`. */
  onReady?: (control: { send: (c: LoopCommand) => void; core: LoopCore; identity: BoardIdentity }) => void;
  /** Aborting stops the run softly with the signal's reason. */
  signal?: AbortSignal;
  /** Hard cap on the run [s]. @default 3600 */
  maxSeconds?: number;
}

/** Timing of the loop. */
export interface LoopTiming {
  ticks: number;
  overruns: number;
  missed: number;
  /** Process CPU time over wall time while the loop ran, 0..(cores) */
  cpu: number;
  /** Wall time of the run [s]. */
  seconds: number;
}

export interface RunResult {
  identity: BoardIdentity;
  stopReason: string;
  /** Whether the board confirmed the final zero command, or its watchdog had to. */
  stopOutcome: StopOutcome | 'watchdog';
  timing: LoopTiming;
  core: LoopCore;
}

/** Runs a session: connect, enable, trajectories, stop, confirm, close. */
export async function runLoop(o: RunOptions): Promise<RunResult> {
  const { link, clock, pacer } = o;
  const identity = await link.open();
  let core: LoopCore | undefined;
  try {
    await link.enable(true);
    core = new LoopCore({ rig: o.rig, link, clock, rateHz: o.rateHz, feedforward: o.feedforward, sink: o.sink, ...(o.onEvent ? { onEvent: o.onEvent } : {}) });
    const c = core;
    const queue: LoopCommand[] = [];
    o.onReady?.({ send: (cmd) => queue.push(cmd), core: c, identity });
    const onAbort = (): void => {
      const r = o.signal?.reason;
      queue.push({ kind: 'stop', reason: typeof r === 'string' ? r : 'interrupted' });
    };
    if (o.signal?.aborted) onAbort();
    o.signal?.addEventListener('abort', onAbort, { once: true });
    // Board-side halves of disable / enable / zero (asynchronous: the loop keeps ticking meanwhile).
    const lifecycle = async (kind: 'disable' | 'enable' | 'zero'): Promise<void> => {
      try {
        if (kind === 'disable') {
          await link.enable(false);
          await link.setTelemetryRate?.(50);
        } else if (kind === 'enable') {
          await link.setTelemetryRate?.(0);
          await link.enable(true);
        } else if (c.state === 'disabled' || c.state === 'idle') {
          await link.zero();
          queue.push({ kind: 'rezero' });
        }
      } catch (e) {
        queue.push({ kind: 'estop', reason: `fault:${e instanceof Error ? e.message : String(e)}` });
      }
    };
    const T = 1 / o.rateHz;
    const t0 = clock.now() + T;
    const cpu0 = process.cpuUsage();
    const maxTicks = Math.round((o.maxSeconds ?? 3600) * o.rateHz);
    let k = 0;
    let ticks = 0;
    let overruns = 0;
    let missed = 0;
    let next = 0; // index of the next path
    while (!c.finished) {
      let due = t0 + k * T;
      await pacer.waitUntil(due);
      const late = clock.now() - due;
      if (late >= T) {
        // Behind by a period or more: skip the grid points already gone rather than bunch the ticks.
        const skip = Math.floor(late / T);
        overruns++;
        missed += skip;
        k += skip;
        due = t0 + k * T;
      }
      for (const cmd of queue.splice(0)) {
        try {
          c.command(cmd);
        } catch (e) {
          c.command({ kind: 'estop', reason: `fault:${e instanceof Error ? e.message : String(e)}` });
        }
        if (cmd.kind === 'disable' || cmd.kind === 'enable' || cmd.kind === 'zero') void lifecycle(cmd.kind);
      }
      // Start the next trajectory once the arm's pose is known and it is not busy.
      if (c.reading && (c.state === 'idle' || (c.state === 'hold' && c.progress === undefined)) && !c.finished) {
        if (next < o.paths.length) {
          try {
            c.command({ kind: 'start', path: o.paths[next]!, park: o.park ?? true });
          } catch (e) {
            c.command({ kind: 'estop', reason: `fault:${e instanceof Error ? e.message : String(e)}` });
          }
          next++;
          if (o.cycle && next >= o.paths.length) next = 0;
        } else if (c.state === 'hold') {
          c.command({ kind: 'stop', reason: 'done' });
        }
      }
      c.tick(due, overruns, missed);
      ticks++;
      o.onTick?.(c);
      k++;
      if (ticks >= maxTicks && !c.finished) c.command({ kind: 'stop', reason: 'done' });
    }
    // One more tick on the grid, so that the recording shows the stopped state and its zero command.
    await pacer.waitUntil(t0 + k * T);
    c.tick(t0 + k * T, overruns, missed);
    ticks++;
    o.onTick?.(c);
    o.signal?.removeEventListener('abort', onAbort);
    const cpu1 = process.cpuUsage(cpu0);
    const seconds = clock.now() - t0;
    const stopOutcome = await confirmStop(link, o.rig, clock, pacer);
    return {
      identity,
      stopReason: c.stopReason ?? 'done',
      stopOutcome,
      timing: { ticks, overruns, missed, cpu: seconds > 0 ? (cpu1.user + cpu1.system) / 1e6 / seconds : 0, seconds },
      core: c,
    };
  } catch (e) {
    // An exception anywhere: the motors go to zero before anything else happens.
    link.writeDuty(new Array(o.rig.joints).fill(0));
    await confirmStop(link, o.rig, clock, pacer).catch(() => undefined);
    throw e;
  } finally {
    await link.close().catch(() => undefined);
  }
}

/**
 * Zero command, then wait for the board to confirm it; if it cannot (a lost link), wait out the
 * board's watchdog, which cuts the motors on its own.
 */
async function confirmStop(link: Link, rig: Rig, clock: Clock, pacer: Pacer): Promise<StopOutcome | 'watchdog'> {
  link.writeDuty(new Array(rig.joints).fill(0));
  const stopped = link.stop(Math.max(200, rig.link.watchdogMs * 2));
  // Keep time moving (a virtual clock needs the pacer to advance) until the answer comes.
  let outcome: StopOutcome | undefined;
  void stopped.then((r) => (outcome = r));
  const deadline = clock.now() + Math.max(0.2, (rig.link.watchdogMs * 2) / 1000) + 0.05;
  while (outcome === undefined && clock.now() < deadline) await pacer.waitUntil(clock.now() + 0.001);
  const r = outcome ?? (await stopped);
  if (r === 'acknowledged') return r;
  // No confirmation: the watchdog (rig.link.watchdogMs) stops the motors on the board by itself.
  const wd = clock.now() + rig.link.watchdogMs / 1000;
  while (clock.now() < wd) await pacer.waitUntil(Math.min(wd, clock.now() + 0.005));
  return 'watchdog';
}
