// Running a promise to its end in virtual time: the clock moved 1 ms at a time, the microtasks settled
// between steps (at most 100 s of virtual time). Used by the link tests that script a board.
import { settle, type VirtualClock } from '../../src/time/clock.js';

/** Runs `p` to its end in virtual time, 1 ms at a time; its value or its error. */
export async function driveToEnd<T>(clock: VirtualClock, p: Promise<T>): Promise<{ ok: true; v: T } | { ok: false; e: Error }> {
  let r: { ok: true; v: T } | { ok: false; e: Error } | undefined;
  p.then(
    (v) => (r = { ok: true, v }),
    (e: Error) => (r = { ok: false, e }),
  );
  for (let i = 0; i < 100_000 && !r; i++) {
    await settle();
    clock.advanceBy(0.001);
  }
  return r!;
}
