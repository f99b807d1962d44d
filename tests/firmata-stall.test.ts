// A host stall in the middle of the seed reach over Firmata, in virtual time: the real loop, real
// johnny-five, the emulated ConfigurableFirmata. Stock Firmata has no watchdog: the arm runs on its last
// command for as long as the host is away, and the run must stop saying so; with twolink's
// FirmataWatchdog the board cuts the motors itself.
import { stopPath } from '../src/control/stop.js';
import { afterEach, describe, expect, it } from 'vitest';
import { runLoop } from '../src/control/runner.js';
import { builtinPath } from '../src/model/builtins.js';
import { createFirmataMock } from '../src/mock/firmata-mock.js';
import { runUntilSettled, VirtualClock } from '../src/time/clock.js';
import { clearFirmataSysexHandlers, createFirmataLink } from '../src/transport/firmata-link.js';
import { firmataRig } from './helpers/firmata.js';
import { hangGuardMs } from './helpers/hang-guard.js';

afterEach(() => clearFirmataSysexHandlers());

/** The reach with the host's thread stalled for `stallS` after `afterSamples` samples. */
async function stalledReach(stallS: number, watchdogFeature: boolean) {
  const rig = firmataRig();
  const clock = new VirtualClock();
  const mock = createFirmataMock(rig, clock, { features: { encoder: true, watchdog: watchdogFeature } });
  const link = createFirmataLink(rig, await mock.openStream(), mock.path, clock, { handshakeMs: 3000 });
  let samples = 0;
  let dutyAtStall: number[] = [];
  let stalled = false;
  try {
    const run = runLoop({
      rig,
      link,
      clock,
      rateHz: 333,
      feedforward: rig.control.feedforward,
      paths: [builtinPath(rig.arm, 'reach')!],
      boardWatchdog: watchdogFeature,
      sink: () => {},
      maxSeconds: 10,
      onTick: () => {
        // half a second into the reach the host's thread blocks: virtual time runs on, the board keeps
        // reporting, and nothing the host does happens until the stall is over
        if (++samples === 400 && !stalled) {
          stalled = true;
          dutyAtStall = mock.board.appliedDuty.slice();
          clock.advanceBy(stallS);
        }
      },
    });
    const result = await runUntilSettled(clock, run, { stepS: 0.0005, maxS: 30, maxRealMs: hangGuardMs(120_000) });
    return { result, dutyAtStall, link, board: mock.board };
  } finally {
    mock.dispose();
  }
}

describe('a host stall on the Firmata path', () => {
  it('stock Firmata: the arm ran on its last command for the whole stall; the link zeroes it at once and the run stops saying for how long', async () => {
    const { result, dutyAtStall, link } = await stalledReach(0.3, false);
    expect(dutyAtStall.some((d) => Math.abs(d) > 0.01)).toBe(true);
    expect(result.stop).toMatchObject({ kind: 'fault', fault: { kind: 'stall', boardWatchdog: false } });
    const stall = result.stop.kind === 'fault' && result.stop.fault.kind === 'stall' ? result.stop.fault : undefined;
    expect(stall!.ms).toBeGreaterThanOrEqual(299.5);
    expect(stall!.ms).toBeLessThan(399.5);
    // the link zeroed the motors the first time its code ran with the command older than watchdogMs
    // (here its own probe timer, which virtual time runs during the "stall"; a real stall blocks it too)
    expect(link.hostStops).toHaveLength(1);
    expect(link.hostStops[0]!).toBeGreaterThan(100);
    expect(result.stopOutcome).toBe('acknowledged');
  });

  it("with the FirmataWatchdog: the board cut the motors after the watchdog time, and the run stops on the board's watchdog", async () => {
    const { result, board, link } = await stalledReach(0.3, true);
    expect(board.watchdog!.fired).toBe(1);
    expect(link.hostStops).toEqual([]);
    expect(['fault.watchdog', 'fault.stall']).toContain(stopPath(result.stop));
    expect(result.stopOutcome).toBe('acknowledged');
  });
});
