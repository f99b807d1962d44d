// The slip guard (src/control/slip.ts): a joint's measured angle stepping back against the motion by
// more than the joint could move at its speed limit in a sample, three times in 2 s, is a slipping
// encoder; a jam (the joint stops within a sample), steps with the motion (a report that came late)
// and noise are not. Pure, no clock.
import { describe, expect, it } from 'vitest';
import { SLIP_FLOOR_COUNTS, SlipGuard } from '../src/control/slip.js';

const CPR = 4800;
const COUNT = (2 * Math.PI) / CPR;
const MAX_VEL = 2 * Math.PI; // 360 deg/s
const DT = 0.001;

/** Runs joint 1 at `v` [rad/s] for `n` samples from `q0`, adding `step(k)` [rad] to sample k's reading. */
function drive(g: SlipGuard, v: number, n: number, step: (k: number) => number, t0 = 0) {
  let prev = [0, 0];
  let q = 0;
  let offset = 0;
  for (let k = 1; k <= n; k++) {
    q += v * DT;
    offset += step(k);
    const now = [q + offset, 0];
    const f = g.check(prev, [v, 0], now, DT, t0 + k * DT);
    if (f) return { f, k };
    prev = now;
  }
  return undefined;
}

describe('SlipGuard', () => {
  it('three jerks back against the motion, 20 counts each, 0.15 s apart: encoder-slip joint 1 at the third', () => {
    const r = drive(new SlipGuard([MAX_VEL, MAX_VEL], [CPR, CPR]), 2, 1000, (k) => (k % 150 === 0 ? -20 * COUNT : 0));
    expect(r?.k).toBe(450);
    expect(r?.f).toEqual({
      kind: 'encoder-slip',
      joint: 0,
      steps: 3,
      deg: expect.closeTo((-60 * 360) / CPR, 6),
      seconds: expect.closeTo(0.3, 9),
    });
  });

  it('the same jerks with the motion (late reports catching up) are not a slip', () => {
    expect(drive(new SlipGuard([MAX_VEL, MAX_VEL], [CPR, CPR]), 2, 1000, (k) => (k % 150 === 0 ? 20 * COUNT : 0))).toBeUndefined();
  });

  it('a jam at full speed (the joint stops within a sample, again and again) is not a slip', () => {
    const g = new SlipGuard([MAX_VEL, MAX_VEL], [CPR, CPR]);
    // The loop still believes the joint runs at its speed limit; it stands still.
    let f;
    for (let k = 1; k <= 500 && !f; k++) f = g.check([1, 0], [MAX_VEL, 0], [1, 0], DT, k * DT);
    expect(f).toBeUndefined();
  });

  it('noise of up to the floor against the motion, every sample, is not a slip', () => {
    const r = drive(
      new SlipGuard([MAX_VEL, MAX_VEL], [CPR, CPR]),
      2,
      2000,
      (k) => (k % 2 ? -SLIP_FLOOR_COUNTS : SLIP_FLOOR_COUNTS) * COUNT,
    );
    expect(r).toBeUndefined();
  });

  it('three jerks spread over more than 2 s are forgotten one by one', () => {
    expect(drive(new SlipGuard([MAX_VEL, MAX_VEL], [CPR, CPR]), 0.2, 5000, (k) => (k % 1100 === 0 ? -20 * COUNT : 0))).toBeUndefined();
  });
});
