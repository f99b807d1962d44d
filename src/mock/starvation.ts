/**
 * A simulated board is a program on this machine, and a busy machine starves it; a real board never
 * starves. What a rig says when its board did not run for a while, so that a stop it caused is put
 * down to the test rig and not to the host. Written once here: the words and the threshold.
 */

/** A board that stood still this long [ms] is said to have starved (a fifth of a 100 ms watchdog). */
export const RIG_STARVED_MS = 20;

/** The rig's line when its board stood still for `ms` at board (or rig) time `atS`. */
export function starvedLine(ms: number, atS: number): string {
  return `twolink rig: the simulated board starved for ${ms.toFixed(1)} ms at ${atS.toFixed(3)} s (a busy machine did not run it): a stop of the host's run now is the test rig's fault, not the host's`;
}

/** The stop reason of a faulted run whose simulated board starved (`maxMs` at most, `totalMs` in all). */
export function blameRig(stopReason: string, maxMs: number, totalMs: number): string {
  if (!stopReason.startsWith('fault:') || !(maxMs >= RIG_STARVED_MS)) return stopReason;
  return `${stopReason} (the simulated board starved for ${maxMs.toFixed(0)} ms, ${totalMs.toFixed(0)} ms in all: the test rig's fault, not the host's)`;
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
