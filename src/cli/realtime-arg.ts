/**
 * Real-time priority for the commands that move the arm from the main thread (setup, tune and identify
 * on a --port), as `run` asks it for its loop's thread (issue 33: `tune --port` and `identify --port`
 * failed on a busy machine, on a host gap longer than the board's watchdog, while `run` at the same
 * load did not). One line at start-up says what was granted, as run's does.
 */
import { stat } from 'node:fs';
import { leaveRealtime, noRealtimeLine, processThreads, requestRealtime, threadId } from '../time/threads.js';

/** `--no-rt` of the commands that ask for real-time priority by default. */
export const NO_RT_OPTION = {
  type: 'boolean',
  help: 'on a --port: do not ask for real-time scheduling (SCHED_FIFO) for the thread that drives the arm (asked for by default, as run does)',
} as const;

/** SCHED_FIFO at `run`'s loop priority (40) for this process's main thread, where these commands' loops run. */
export const MAIN_THREAD_RT_PRIORITY = 40;

/**
 * SCHED_FIFO for the process's other threads, as `run` gives its own (run/worker.ts askRealtime): libuv's
 * pool, whose threads do the serial port's reads (@serialport/bindings-cpp reads with fs.read once its
 * poller says readable), and V8's helpers. With the main thread alone granted, `tune --port` on the
 * firmware rig (load 19-24) had the board's samples reach the loop 88-134 ms late while the loop's thread
 * was free (its longest pause 47 ms) and the board's clock ran on: the watchdog stopped the motors.
 */
export const IO_THREADS_RT_PRIORITY = 39;

/**
 * Asks for SCHED_FIFO for the main thread (unless `noRt`), children it starts from then on at normal
 * priority (SCHED_RESET_ON_FORK), and for the threads that carry its I/O (IO_THREADS_RT_PRIORITY; libuv's
 * pool started first, so that it exists to be granted); says the outcome in one line through `say`.
 * Returns whether it was granted.
 */
export async function realtimeMainThread(who: string, noRt: boolean, say: (line: string) => void): Promise<boolean> {
  if (noRt) {
    say(noRealtimeLine(who, 'not asked for: --no-rt'));
    return false;
  }
  const r = await requestRealtime(threadId(), MAIN_THREAD_RT_PRIORITY, { resetOnFork: true });
  if (!r.granted) {
    say(noRealtimeLine(who, `refused: ${r.reason}`));
    return false;
  }
  // libuv starts its whole pool at the first task that needs it: one stat, then every thread but this one.
  await new Promise<void>((resolve) => stat('.', () => resolve()));
  const me = threadId();
  const others = processThreads().filter((t) => t !== me);
  let io = 0;
  for (const t of others) if ((await requestRealtime(t, IO_THREADS_RT_PRIORITY)).granted) io++;
  say(
    `${who}: real-time scheduling: SCHED_FIFO ${r.priority} granted to the thread that drives the arm (${IO_THREADS_RT_PRIORITY} to ${io} of its ${others.length} I/O and helper threads)`,
  );
  return true;
}

/** Real-time priority for the main thread only while it drives the arm (scopedMainRealtime). */
export interface ScopedRealtime {
  /** Asks for it (the first time as realtimeMainThread, said in one line; then quietly). */
  enter(): Promise<void>;
  /** Gives it back (normal scheduling) for the work between the runs. */
  leave(): Promise<void>;
}

/**
 * For a command whose main thread also computes for seconds between the runs that move the arm
 * (identify's fit and twin replays): SCHED_FIFO only while a run goes on. A real-time thread that
 * computes for a second meets the kernel's 5 % for normal threads (tune/realtime-compute.ts,
 * docs/realtime.md: the fair server, or RT throttling on kernels before 6.12), which stops every
 * real-time thread of its CPU for ~50 ms; identify --port under six CPU hogs had the
 * simulated board's thread stopped 51 ms at start-up so (asked for before the modules were loaded).
 */
export function scopedMainRealtime(who: string, noRt: boolean, say: (line: string) => void): ScopedRealtime {
  let first = true;
  let granted = false;
  return {
    async enter() {
      if (first) {
        first = false;
        granted = await realtimeMainThread(who, noRt, say);
      } else if (granted) await requestRealtime(threadId(), MAIN_THREAD_RT_PRIORITY, { resetOnFork: true });
    },
    async leave() {
      if (granted) await leaveRealtime(threadId());
    },
  };
}
