// When the main thread may end the loop's thread after a stop request (src/run/stop-watch.ts): a
// blocked thread (its own CPU time runs, no progress) is ended, a starved one (no CPU) is waited for.
import { describe, expect, it } from 'vitest';
import { StopWatch } from '../src/run/stop-watch.js';

/** A loop thread the test drives by hand: progress count, CPU [s], wall clock [s]. */
function fakeThread(cpuKnown = true) {
  const t = { progress: 0, cpu: 0, wall: 0 };
  return { t, probe: { progress: () => t.progress, cpuSeconds: () => (cpuKnown ? t.cpu : NaN), now: () => t.wall } };
}

describe('StopWatch', () => {
  it('a thread that burns 250 ms of its own CPU without progress is blocked: cut, and the reason says so', () => {
    const { t, probe } = fakeThread();
    const w = new StopWatch(probe, 250);
    t.wall = 1;
    t.cpu = 0.24;
    expect(w.check().cut).toBe(false);
    t.wall = 1.1;
    t.cpu = 0.26;
    const v = w.check();
    expect(v.cut).toBe(true);
    if (v.cut) expect(v.why).toMatch(/did not answer within 250 ms of its own CPU time \(blocked, not starved: it ran 260 ms in 1100 ms\)/);
  });

  it('a starved thread (no CPU, no progress) is not cut after 250 ms of wall-clock time, nor after 9 s; it is after the idle cap', () => {
    const { t, probe } = fakeThread();
    const w = new StopWatch(probe, 250, 10_000);
    for (const wall of [0.3, 1, 5, 9.9]) {
      t.wall = wall;
      t.cpu = 0.01;
      expect(w.check().cut).toBe(false);
    }
    t.wall = 10;
    const v = w.check();
    expect(v.cut).toBe(true);
    if (v.cut) expect(v.why).toMatch(/made no progress for 10000 ms \(it ran 10 ms of it\)/);
  });

  it('progress (a row, a message, a heartbeat) restarts the count: a thread that answers now and then is never cut', () => {
    const { t, probe } = fakeThread();
    const w = new StopWatch(probe, 250);
    for (let k = 1; k <= 100; k++) {
      t.wall += 0.2;
      t.cpu += 0.2; // busy, but answering
      t.progress += 1;
      expect(w.check().cut).toBe(false);
    }
  });

  it('without the thread CPU time (not Linux), wall-clock time is all there is', () => {
    const { t, probe } = fakeThread(false);
    const w = new StopWatch(probe, 250);
    t.wall = 0.2;
    expect(w.check().cut).toBe(false);
    t.wall = 0.26;
    const v = w.check();
    expect(v.cut).toBe(true);
    if (v.cut) expect(v.why).toBe('the loop thread did not answer within 250 ms');
  });
});
