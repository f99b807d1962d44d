// `--traj hold` holds until the run's time limit (src/cli/run-plan.ts, holdPath): the limit reached while
// it holds is `done`. On a busy machine the board's clock (which times the hold) falls behind the host's
// (which times the limit), so a hold sized to end just before the limit could still be holding when the
// limit came: `timeout`, exit 4, though the hold did what was asked (tests/impedance-cli.test.ts under
// six CPU hogs). Here, in virtual time, a hold longer than the limit stands in for that lag.
import { describe, expect, it } from 'vitest';
import { loadRig } from '../src/config/load.js';
import type { PathSpec } from '../src/model/builtins.js';
import { virtualRun } from '../src/run/virtual.js';
import { hangGuardMs } from './helpers/hang-guard.js';

const rig = loadRig('rigs/mock-arm.json');
const DEG = Math.PI / 180;
const hold = (untilLimit: boolean, approachToo = false): PathSpec => ({
  name: 'hold',
  description: 'a hold longer than the limit',
  start: { q: approachToo ? [-30 * DEG, 60 * DEG] : [-90 * DEG, 0] },
  steps: [{ kind: 'hold', duration: 20 }],
  ...(untilLimit ? { untilLimit: true } : {}),
});

describe('a hold until the limit', () => {
  it(
    'reaching the limit while holding is done; the same path without untilLimit is a timeout',
    async () => {
      const a = await virtualRun(rig, [hold(true)], { maxSeconds: 3, keepRows: false });
      expect(a.summary.stop).toEqual({ kind: 'done' });
      const b = await virtualRun(rig, [hold(false)], { maxSeconds: 3, keepRows: false });
      expect(b.summary.stop).toEqual({ kind: 'timeout', seconds: 3 });
    },
    hangGuardMs(60_000),
  );

  it(
    'a limit that comes during the approach is still a timeout (nothing was held yet)',
    async () => {
      const r = await virtualRun(rig, [hold(true, true)], { maxSeconds: 0.3, keepRows: false });
      expect(r.summary.stop).toEqual({ kind: 'timeout', seconds: 0.3 });
    },
    hangGuardMs(60_000),
  );
});
