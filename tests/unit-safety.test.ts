// The loop's guards (src/control/safety.ts): a non-finite value is a violation wherever it appears.
import { describe, expect, it } from 'vitest';
import { checkFinite, checkJump, checkLimits, checkSaturation, checkStall, JUMP_FACTOR, JUMP_FLOOR } from '../src/control/safety.js';

const limits = [
  { min: -2, max: 2, maxVel: 5, maxTorque: 4 },
  { min: -2.5, max: 2.5, maxVel: 8, maxTorque: 2 },
];

describe('guards', () => {
  it('a NaN or an infinity in any checked vector is a fault naming the vector and the joint', () => {
    expect(checkFinite([['twin state', [0.1, 0.2]]], 2)).toBeUndefined();
    expect(checkFinite([['twin state', [0.1, Number.NaN]]], 2)).toEqual({ kind: 'non-finite', what: 'twin state (joint 2 is NaN)' });
    expect(
      checkFinite(
        [
          ['velocity estimate', [0, 0]],
          ['twin residual torque', [Infinity, 0]],
        ],
        2,
      ),
    ).toEqual({ kind: 'non-finite', what: 'twin residual torque (joint 1 is Infinity)' });
  });

  it('limits: a NaN angle or speed is outside every limit (a comparison with NaN is false, so it must not pass)', () => {
    expect(checkLimits([0, 0], [0, 0], limits)).toBeUndefined();
    expect(checkLimits([Number.NaN, 0], [0, 0], limits)?.kind).toBe('limit');
    expect(checkLimits([0, 0], [0, Number.NaN], limits)?.kind).toBe('speed');
    expect(checkLimits([0, 2.5 + 0.1], [0, 0], limits)).toMatchObject({ kind: 'limit', joint: 1 });
    expect(checkLimits([0, 0], [-7, 0], limits)).toMatchObject({ kind: 'speed', joint: 0 });
  });

  it('saturation: time at the limit adds up only while moving, and over the bound it is a fault', () => {
    const t = [0, 0];
    for (let k = 0; k < 10; k++) expect(checkSaturation(t, 0b01, true, 0.1, 1.5)).toBeUndefined();
    expect(t[0]).toBeCloseTo(1.0, 12);
    expect(checkSaturation(t, 0b01, false, 0.1, 1.5)).toBeUndefined();
    expect(t[0]).toBe(0);
    for (let k = 0; k < 15; k++) checkSaturation(t, 0b10, true, 0.1, 1.5);
    expect(checkSaturation(t, 0b10, true, 0.1, 1.5)).toEqual({ kind: 'saturated', joint: 1, seconds: 1.5 });
  });

  it('an angle step faster than the joint can turn (3x its speed limit + 1 deg) is an encoder jump, naming the joint, the step and the time', () => {
    const dt = 0.002;
    const most = JUMP_FACTOR * limits[1]!.maxVel * dt + JUMP_FLOOR; // 0.0655 rad for joint 2
    expect(checkJump(undefined, [5, 5], dt, limits)).toBeUndefined(); // the first sample
    expect(checkJump([0, 0], [0, most * 0.99], dt, limits)).toBeUndefined();
    expect(checkJump([0, 0], [0, -most * 1.01], dt, limits)).toEqual({
      kind: 'encoder-jump',
      joint: 1,
      deg: expect.closeTo((-most * 1.01 * 180) / Math.PI, 9),
      ms: expect.closeTo(2, 9),
    });
    // Over a longer gap (lost samples) the joint may have turned further.
    expect(checkJump([0, 0], [0, most * 1.01], 10 * dt, limits)).toBeUndefined();
    expect(checkJump([0, 0], [Number.NaN, 0], dt, limits)).toMatchObject({ kind: 'encoder-jump', joint: 0 });
  });

  it('a gap longer than the watchdog is a stall, which says whether the board has a watchdog', () => {
    expect(checkStall(0.05, 100, true)).toBeUndefined();
    expect(checkStall(0.15, 100, true)).toMatchObject({ kind: 'stall', boardWatchdog: true });
    expect(checkStall(0.15, 100, false)).toMatchObject({ kind: 'stall', boardWatchdog: false });
  });
});
