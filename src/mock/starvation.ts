/**
 * A simulated board is a program on this machine, and a busy machine starves it; a real board never
 * starves. What a rig says when its board did not run for a while, so that a stop it caused is put
 * down to the test rig and not to the host. Written once here: the words and the threshold.
 */

/** A board that stood still this long [ms] is said to have starved (a fifth of a 100 ms watchdog). */
export const RIG_STARVED_MS = 20;

/**
 * How many times a test runs what failed while its simulated board starved (the first try included)
 * before it fails with the blame. On kernels from Linux 6.12 the fair deadline server gives normal
 * threads 50 ms of every second on each CPU where real-time threads left them under 5 %, and the
 * real-time threads of that CPU stop meanwhile, without moving to the other CPU (docs/realtime.md:
 * measured here); a simulated board that shares a CPU with the rest of its rig can meet that more than
 * once in a run on a busy machine (CI stop 40: two stock Firmata tests starved twice each, load 3.6).
 */
export const RIG_STARVED_ATTEMPTS = 3;

/** The rig's line when its board stood still for `ms` at board (or rig) time `atS`. */
export function starvedLine(ms: number, atS: number): string {
  return `twolink rig: the simulated board starved for ${ms.toFixed(1)} ms at ${atS.toFixed(3)} s (a busy machine did not run it): a stop of the host's run now is the test rig's fault, not the host's`;
}

/**
 * The stop of a run whose simulated board starved (`maxMs` at most, `totalMs` in all): a fault gets
 * `rigStarved` (control/stop.ts says it in its text); any other stop, or a board that did not starve,
 * is given back as it is. Generic in the stop's type: the mock does not import the loop's.
 */
export function blameMock<S extends { kind: string; rigStarved?: { maxMs: number; totalMs: number } }>(
  stop: S,
  maxMs: number,
  totalMs: number,
): S {
  if (stop.kind !== 'fault' || !(maxMs >= RIG_STARVED_MS)) return stop;
  return { ...stop, rigStarved: { maxMs, totalMs } };
}

/**
 * Watches this thread's event loop (where a rig's board runs on its own timers, the Firmata pty rig):
 * calls `onStarved(ms, atS)` when a 5 ms timer ran `RIG_STARVED_MS` or more late. Returns the stop.
 */
export function watchStarvation(onStarved: (ms: number, atS: number) => void): () => void {
  const t0 = performance.now();
  let due = t0 + 5;
  const timer = setInterval(() => {
    const now = performance.now();
    const lateMs = now - due;
    if (lateMs >= RIG_STARVED_MS) onStarved(lateMs, (now - t0) / 1000);
    due = now + 5;
  }, 5);
  timer.unref();
  return () => clearInterval(timer);
}
