// The simulated board's account of its own lateness (fil_harness.c pace(), issue 33): each time it falls
// behind the wall clock by more than 5 ms it says the episode's peak once it has caught up, so the
// largest `behind` it reports is the largest lag it had (its exit line's total). Before, it said the lag
// at the moment it first passed 5 ms and then nothing for a second: a board that went on falling behind
// (a `tune --port` run that strayed while the board had been 50.9 ms late) was reported a few ms late, or
// not as starved at all. The harness is stalled here by SIGSTOP in steps with short runs between (a lag
// that grows), then stopped; every wait is for an event (slices, the harness's exit).
import { describe, expect, it } from 'vitest';
import { loadRig } from '../../src/config/load.js';
import { FirmwareSim, type FirmwareSimSummary } from '../../src/mock/firmware-sim.js';
import { hangGuardMs } from '../helpers/hang-guard.js';

/** Resolves after the simulation has run `n` more slices (board time goes on). */
function slices(sim: FirmwareSim, n: number): Promise<void> {
  return new Promise((resolve) => {
    let k = 0;
    const on = (): void => {
      if (++k < n) return;
      sim.off('slice', on);
      resolve();
    };
    sim.on('slice', on);
  });
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('the simulated board says how far behind it fell', () => {
  it(
    'the largest lag it reports is the largest it had, with a lag that grows in steps',
    async () => {
      // Without simavr, start() throws FirmwareSimError naming the packages to install.
      const sim = await FirmwareSim.start({ rig: loadRig('rigs/mock-arm.json'), board: 'uno' });
      const behind: { boardTime: number; behindS: number }[] = [];
      sim.on('behind', (e) => behind.push(e));
      let summary: FirmwareSimSummary;
      try {
        await slices(sim, 200); // running on its grid
        // Stalls of 30 ms, each followed by a few slices of catching up: the lag builds past the first stall's.
        for (let k = 0; k < 3; k++) {
          process.kill(sim.pid, 'SIGSTOP');
          await sleep(30);
          process.kill(sim.pid, 'SIGCONT');
          await slices(sim, 2);
        }
        await slices(sim, 400); // caught up again (100 ms of board time)
      } finally {
        summary = await sim.stop();
      }
      // It fell behind by more than 5 ms (the stalls were 30 ms; a stall of the test's own timer only makes them longer).
      expect(summary.maxBehindMs).toBeGreaterThan(5);
      expect(behind.length).toBeGreaterThan(0);
      const reported = Math.max(...behind.map((e) => e.behindS * 1000));
      // The exit line has the lag in ms with 3 decimals, the L lines in whole microseconds.
      expect(Math.abs(reported - summary.maxBehindMs)).toBeLessThanOrEqual(0.002);
      for (const e of behind) expect(e.behindS).toBeGreaterThan(0.005);
    },
    hangGuardMs(60_000),
  );
});
