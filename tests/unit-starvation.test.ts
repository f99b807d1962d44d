// A stop caused by a starved simulated board is put down to the test rig (src/mock/starvation.ts).
import { describe, expect, it } from 'vitest';
import { blameMock, RIG_STARVED_MS, starvedLine } from '../src/mock/starvation.js';
import { describeStop, type StopReason } from '../src/control/stop.js';

describe('blameMock', () => {
  const watchdog: StopReason = { kind: 'fault', fault: { kind: 'watchdog' } };
  it('a fault while the simulated board starved for 20 ms or more names the rig and the time', () => {
    const blamed = blameMock(watchdog, 124.4, 310.2);
    expect(blamed).toEqual({ ...watchdog, rigStarved: { maxMs: 124.4, totalMs: 310.2 } });
    // the words people read (describeStop, the only place they are composed)
    expect(describeStop(blamed)).toBe(
      "fault:watchdog (the simulated board starved for 124 ms, 310 ms in all: the test rig's fault, not the host's)",
    );
    const lost: StopReason = { kind: 'fault', fault: { kind: 'link-lost', ms: 100, samples: 50 } };
    expect(blameMock(lost, RIG_STARVED_MS, RIG_STARVED_MS).rigStarved).toEqual({ maxMs: 20, totalMs: 20 });
  });
  it('a run that ended well, a stop by the user, or a board that kept time are left as they are', () => {
    expect(blameMock({ kind: 'done' }, 500, 500)).toEqual({ kind: 'done' });
    expect(blameMock({ kind: 'interrupted', signal: 'SIGINT' }, 500, 500)).toEqual({ kind: 'interrupted', signal: 'SIGINT' });
    expect(blameMock(watchdog, 19.9, 100)).toEqual(watchdog);
    expect(blameMock(watchdog, NaN, NaN)).toEqual(watchdog);
  });
  it("the rig's line says how long, when, and whose fault", () => {
    expect(starvedLine(34.56, 2.5)).toBe(
      "twolink rig: the simulated board starved for 34.6 ms at 2.500 s (a busy machine did not run it): a stop of the host's run now is the test rig's fault, not the host's",
    );
  });
});
