// The run's summary for people says what it knows and nothing it does not (issue 35, "Words"): on the
// Firmata path the board's reports carry no sample number, so the answers' delay is said to be not
// measured, never printed as a literal "?".
import { describe, expect, it } from 'vitest';
import { twolink } from './helpers/cli.js';
import { hangGuardMs } from './helpers/hang-guard.js';

describe("the run's summary words", () => {
  it(
    "a Firmata run says the answers' delay was not measured; a line-protocol run gives the learned number",
    async () => {
      const firmata = await twolink(['run', '--rig', 'rigs/mock-arm-firmata.json', '--mock', '--traj', 'point', '--no-rt'], {
        timeoutMs: 60_000,
      });
      const timing = firmata.stdout.split('\n').find((l) => l.startsWith('timing:'));
      expect(timing, firmata.stdout + firmata.stderr).toBeDefined();
      expect(timing).not.toMatch(/\?/);
      expect(timing).toMatch(/answers' delay not measured \(this link's reports carry no sample number; cable: /);
      const line = await twolink(['run', '--rig', 'rigs/mock-arm.json', '--mock', '--traj', 'point', '--no-rt'], { timeoutMs: 60_000 });
      expect(line.stdout).toMatch(/answers apply \d+ sample\(s\) later \(learned; cable: /);
    },
    hangGuardMs(120_000),
  );
});
