// The impedance law's tick allocates nothing of its own (counted on V8's heap, not timed), and the
// force cap's norm is Math.hypot's to the bit.
import { describe, expect, it } from 'vitest';
import { loadRig, type Rig } from '../src/config/load.js';
import { capNorm } from '../src/control/impedance-math.js';
import { allocationPerCall } from '../src/bench/alloc.js';
import { impedanceTicks } from '../src/bench/impedance.js';
import type { Vec2 } from '../src/model/types.js';
import { hangGuardMs } from './helpers/hang-guard.js';

/** capNorm as it was written with Math.hypot. */
function withHypot(x: number, y: number, max: number): Vec2 {
  const mag = Math.hypot(x, y);
  return mag > max ? [x * (max / mag), y * (max / mag)] : [x, y];
}

describe('capNorm: |v| as Math.hypot gives it, without its allocation', () => {
  it('scales exactly as Math.hypot does, on edge values and 200 000 random ones', () => {
    const edges = [0, -0, 1, -1, 3, 4, 1e-310, -5e-324, 1e-160, 1e160, 1.7e308, -1.7e308, Infinity, -Infinity, NaN, 0.1, 0.2, 1 / 3];
    const cases: [number, number][] = [];
    for (const x of edges) for (const y of edges) cases.push([x, y]);
    // A deterministic generator (mulberry32), over many magnitudes.
    let seed = 1;
    const rnd = (): number => {
      seed = (seed + 0x6d2b79f5) | 0;
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
    for (let i = 0; i < 200_000; i++) cases.push([(rnd() - 0.5) * 10 ** (rnd() * 20 - 10), (rnd() - 0.5) * 10 ** (rnd() * 20 - 10)]);
    let scaled = 0;
    for (const [x, y] of cases) {
      const h = Math.hypot(x, y);
      // Just below |v| (so that it scales, by the last bits of |v|), at it, and a plain limit.
      for (const max of [h * (1 - 2 ** -52), h, 10]) {
        const want = withHypot(x, y, max);
        const got = capNorm([x, y], max);
        if (!Object.is(got[0], want[0]) || !Object.is(got[1], want[1])) expect({ x, y, max, got }).toEqual({ x, y, max, got: want });
        if (want[0] !== x) scaled++;
      }
    }
    expect(scaled).toBeGreaterThan(200_000);
  });
});

describe("impedance: the law's tick allocates nothing of its own", () => {
  const rig = (): Rig => {
    const r = loadRig('rigs/mock-arm.json');
    r.plant!.adapter = { kind: 'none', latencyMs: 1 };
    r.control.rateHz = 1000;
    return r;
  };
  // Before (b57152d): 2073 B a tick at the endpoint, 928 B in joint space (arrays, matrices, closures,
  // Math.hypot's array). Now only V8's boxed numbers across calls it does not inline remain (16 B each,
  // 16-70 B a tick measured); a bound of 160 B catches any per-tick matrix, closure or pair of arrays.
  const BOUND = 160;
  for (const space of ['endpoint', 'joint'] as const) {
    it(
      `${space} space: under ${BOUND} B a tick in the least of up to 100 windows of 10 000 ticks after warm-up`,
      () => {
        const ticks = impedanceTicks(rig(), { space, stiffness: space === 'joint' ? 1 : 50, dampingRatio: 1 });
        const c = allocationPerCall(ticks, { warmup: 50_000, calls: 10_000, windows: 100, enoughBytes: BOUND / 2 });
        expect(c.bytesPerCall).toBeLessThan(BOUND);
      },
      hangGuardMs(60_000),
    );
  }
});
