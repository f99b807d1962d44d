// A stop caused by a starved simulated board is put down to the test rig (src/mock/starvation.ts).
import { describe, expect, it } from 'vitest';
import { blameRig, RIG_STARVED_MS, starvedLine } from '../src/mock/starvation.js';

describe('blameRig', () => {
  it('a fault while the simulated board starved for 20 ms or more names the rig and the time', () => {
    expect(blameRig('fault:watchdog', 124.4, 310.2)).toBe("fault:watchdog (the simulated board starved for 124 ms, 310 ms in all: the test rig's fault, not the host's)");
    expect(blameRig('fault:link-lost', RIG_STARVED_MS, RIG_STARVED_MS)).toMatch(/^fault:link-lost \(the simulated board starved for 20 ms/);
  });
  it('a run that ended well, a stop by the user, or a board that kept time are left as they are', () => {
    expect(blameRig('done', 500, 500)).toBe('done');
    expect(blameRig('interrupted:SIGINT', 500, 500)).toBe('interrupted:SIGINT');
    expect(blameRig('fault:watchdog', 19.9, 100)).toBe('fault:watchdog');
    expect(blameRig('fault:watchdog', NaN, NaN)).toBe('fault:watchdog');
  });
  it("the rig's line says how long, when, and whose fault", () => {
    expect(starvedLine(34.56, 2.5)).toBe("twolink rig: the simulated board starved for 34.6 ms at 2.500 s (a busy machine did not run it): a stop of the host's run now is the test rig's fault, not the host's");
  });
});
