// tune's e-stop (setup's operator signal): aborting mid-experiment stops tune with SetupStopped, the
// steps so far attached, and the mock arm's motors at zero (virtual time).
import { describe, expect, it } from 'vitest';
import { hangGuardMs } from './helpers/hang-guard.js';
import { loadRig } from '../src/config/load.js';
import { SetupStopped } from '../src/setup/driver.js';
import { runTune } from '../src/tune/driver.js';
import { openTuneMock } from '../src/tune/mock.js';

describe('tune e-stop', () => {
  it(
    'stops at once with the motors at zero',
    async () => {
      const rig = loadRig('rigs/mock-arm.json');
      const m = await openTuneMock(rig);
      const ac = new AbortController();
      const said: string[] = [];
      const operator = {
        say: (s: string) => void said.push(s),
        confirm: async () => undefined,
        ask: async () => undefined,
        signal: ac.signal,
      };
      // 6 s of virtual time in: the relay is done, the chirp is running.
      m.clock.setTimer(6, () => ac.abort('estop'));
      let duringDuty = 0;
      m.clock.setTimer(5.9, () => (duringDuty = Math.max(...m.duty!().map(Math.abs))));
      const err = await m
        .drive(
          runTune({ rig, link: m.link, operator, options: { joints: [0, 1], bandwidthHz: 6, explicit: true, rateHz: rig.control.rateHz } }),
        )
        .catch((e: unknown) => e);
      try {
        expect(err).toBeInstanceOf(SetupStopped);
        expect((err as SetupStopped).message).toBe('estop');
        expect((err as SetupStopped).steps.map((s) => s.name)).toContain('relay 1');
        expect(duringDuty).toBeGreaterThan(0);
        expect(m.duty!().every((d) => d === 0)).toBe(true);
      } finally {
        await m.close();
      }
    },
    hangGuardMs(30_000),
  );
});
