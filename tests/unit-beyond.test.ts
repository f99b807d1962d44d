// A number printed beside a bound it crossed shows which side it is on (issue 35, "Words": "angle 0.0 deg
// is outside the joint limits -160..0 deg"): as a property over random values and bounds, and in the
// texts that print one (feasibility, the limit and speed faults, the rig check of the mock's start).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { describeFault } from '../src/control/stop.js';
import { beyondText, boundText, outsideText } from '../src/model/beyond.js';

const finite = fc.double({ min: -1e4, max: 1e4, noNaN: true, noDefaultInfinity: true });

describe('numbers beside the bound they crossed', () => {
  it('a value outside min..max prints outside the printed range, whatever its distance (property)', () => {
    fc.assert(
      fc.property(
        finite,
        finite,
        fc.double({ min: 1e-9, max: 10, noNaN: true }),
        fc.boolean(),
        fc.integer({ min: 0, max: 3 }),
        (a, b, gap, under, decimals) => {
          const min = Math.min(a, b);
          const max = Math.max(a, b) + 1e-3;
          const v = under ? min - gap : max + gap;
          if (!(v < min || v > max)) return; // the gap vanished in floating point
          const o = outsideText(v, min, max, decimals);
          const [lo, hi] = o.range.split('..').map(Number) as [number, number];
          const shown = Number(o.value);
          expect(shown < lo || shown > hi, `${o.value} outside ${o.range} (v = ${v})`).toBe(true);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('a value inside keeps its decimals; a bound is not rounded inward', () => {
    expect(beyondText(-12.34, -160, 'below', 1)).toBe('-12.3');
    expect(boundText(-159.5)).toBe('-159.5');
    expect(boundText(-0)).toBe('0');
    expect(outsideText(0.004, -160 * 1, 0)).toEqual({ value: '0.004', range: '-160..0' });
    expect(outsideText(-160.02, -160, 0)).toEqual({ value: '-160.02', range: '-160..0' });
  });

  it('the limit and speed faults say a crossing the reader can see', () => {
    expect(describeFault({ kind: 'limit', joint: 1, deg: 0.03, minDeg: -160, maxDeg: 0 })).toBe(
      'limit joint 2 at 0.03 deg, outside -160..0 deg',
    );
    expect(describeFault({ kind: 'speed', joint: 0, degS: -540.2, limitDegS: 540 })).toBe('speed joint 1 at 540.2 deg/s, limit 540 deg/s');
  });
});

describe('a crossing finer than a bound printed to 10 digits', () => {
  it('prints both in full (fast-check counterexample: min -859.37641395, value 1e-9 under it)', () => {
    const min = -859.37641395;
    const o = outsideText(min - 1e-9, min, 0.001, 3);
    expect(Number(o.value)).toBeLessThan(Number(o.range.split('..')[0]));
    expect(o.range).toBe('-859.37641395..0.001');
  });
});
