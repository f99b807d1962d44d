/**
 * Real-time priority for the commands that move the arm from the main thread (setup, tune and identify
 * on a --port), as `run` asks it for its loop's thread (issue 33: `tune --port` and `identify --port`
 * failed on a busy machine, on a host gap longer than the board's watchdog, while `run` at the same
 * load did not). One line at start-up says what was granted, as run's does.
 */
import { noRealtimeLine, requestRealtime, threadId } from '../time/threads.js';

/** `--no-rt` of the commands that ask for real-time priority by default. */
export const NO_RT_OPTION = { type: 'boolean', help: 'on a --port: do not ask for real-time scheduling (SCHED_FIFO) for the thread that drives the arm (asked for by default, as run does)' } as const;

/** SCHED_FIFO at `run`'s loop priority (40) for this process's main thread, where these commands' loops run. */
export const MAIN_THREAD_RT_PRIORITY = 40;

/**
 * Asks for SCHED_FIFO for the main thread (unless `noRt`), children it starts from then on at normal
 * priority (SCHED_RESET_ON_FORK); says the outcome in one line through `say`. Returns whether it was granted.
 */
export async function realtimeMainThread(who: string, noRt: boolean, say: (line: string) => void): Promise<boolean> {
  if (noRt) {
    say(noRealtimeLine(who, 'not asked for: --no-rt'));
    return false;
  }
  const r = await requestRealtime(threadId(), MAIN_THREAD_RT_PRIORITY, { resetOnFork: true });
  if (r.granted) say(`${who}: real-time scheduling: SCHED_FIFO ${r.priority} granted to the thread that drives the arm`);
  else say(noRealtimeLine(who, `refused: ${r.reason}`));
  return r.granted;
}
