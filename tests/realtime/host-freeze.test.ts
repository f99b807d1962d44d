// Issue 26: a frozen host is reported as what it is. The loop's thread blocked for 1.5 s (the busy
// injection) while stock Firmata (no watchdog) keeps the motors at their last PWM: the arm runs on and
// past a limit, and the stop names the cause, the host's stall, not the limit it led to or a lost link.
import { describe, expect, it } from 'vitest';
import { lastJson, twolink, whyExit } from '../helpers/cli.js';

describe('a frozen host on the Firmata path', () => {
  it('the stop is the stall of the host (it says for how long and that the board has no watchdog)', async () => {
    const r = await twolink(
      ['run', '--rig', 'rigs/mock-arm-firmata.json', '--mock', '--traj', 'reach', '--inject', 'busy=1.5@1.5', '--json'],
      { timeoutMs: 120_000 },
    );
    expect(r.code, whyExit(r)).toBe(1);
    expect(lastJson(r).stop).toEqual({
      kind: 'fault',
      fault: { kind: 'stall', ms: expect.any(Number), watchdogMs: 100, boardWatchdog: false },
    });
  });
});
