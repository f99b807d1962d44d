/**
 * The mock board's thread clock when the thread was starved. The host of a Firmata board counts its
 * reports for its clock (Firmata has no timestamps), so the Firmata mock catches up on a short
 * starvation instead of standing still: its late timers run at their due times and its sampling keeps
 * its grid. A board that stood still looked to the host like reports lost on the wire (measured, real
 * time, quiet machine: a 4.8-6.7 ms starvation of the mock's thread was followed by `lost 2` in about 1
 * reach in 4, and the host's board time then ran 6 ms ahead of the arm's).
 */
import { describe, expect, it } from 'vitest';
import { DrivenClock } from '../src/time/clock.js';

const PERIOD_S = 0.003;

/** Holds this thread (the clock's owner is not running) until the clock has moved `s` seconds. */
function starve(clock: DrivenClock, s: number): void {
  const until = clock.now() + s;
  while (clock.now() < until) {
    // busy: the owner is held up
  }
}

/** A sampler that takes a sample every PERIOD_S, re-arming from its own time, as the board's loop does. */
function sampler(clock: DrivenClock): number[] {
  const taken: number[] = [];
  const take = (): void => {
    taken.push(clock.now());
    clock.setTimer(PERIOD_S, take);
  };
  clock.setTimer(PERIOD_S, take);
  return taken;
}

describe('the mock board thread clock over a starvation', () => {
  it('catching up runs every missed sample at its due time: the grid holds', () => {
    const clock = new DrivenClock();
    const t0 = clock.now();
    const taken = sampler(clock);
    starve(clock, 4.5 * PERIOD_S);
    const late = clock.runDue(true);
    expect(late).toBeGreaterThan(3 * PERIOD_S);
    // The samples the starvation covered were all taken, each on its period.
    expect(taken.length).toBeGreaterThanOrEqual(4);
    taken.forEach((t, i) => expect(t - t0).toBeCloseTo((i + 1) * PERIOD_S, 3));
    // Time reads the wall clock again afterwards, and the next sample is still on the grid.
    expect(clock.now()).toBeGreaterThanOrEqual(taken[taken.length - 1]!);
    expect(clock.nextTimerAt() - t0).toBeCloseTo((taken.length + 1) * PERIOD_S, 3);
  });

  it('without catching up, a late timer reads the time it ran at (the line mock stands still instead)', () => {
    const clock = new DrivenClock();
    const t0 = clock.now();
    const taken = sampler(clock);
    starve(clock, 4.5 * PERIOD_S);
    clock.runDue();
    expect(taken).toHaveLength(1);
    expect(taken[0]! - t0).toBeGreaterThan(4 * PERIOD_S);
  });

  it('a thread held up while it runs its due timers stops there when asked (starvedAfter), leaving the missed ones to its starvation check', () => {
    // The line mock's thread (mock-thread.ts) asks it with STARVED_S: a SIGSTOP or a busy machine in the
    // middle of its timers used to run every sample it missed in one burst, and say nothing of it.
    const limitS = 0.05;
    for (const starvedAfter of [limitS, Infinity]) {
      const clock = new DrivenClock();
      const ran: string[] = [];
      clock.setTimer(0, () => {
        ran.push('a');
        starve(clock, 6 * limitS);
      });
      clock.setTimer(0, () => ran.push('b'));
      clock.setTimer(0, () => ran.push('c'));
      clock.runDue(false, starvedAfter);
      if (starvedAfter === Infinity) expect(ran).toEqual(['a', 'b', 'c']);
      else {
        expect(ran).toEqual(['a']);
        // b and c wait, late by the hold: what the caller's check measures and holds the board's time for
        expect(clock.now() - clock.nextTimerAt()).toBeGreaterThanOrEqual(6 * limitS);
      }
    }
  });
});
