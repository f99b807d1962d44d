// Deterministic random numbers for property tests (so a failure is reproducible).
import type { Pair, TwoLinkParams } from '../../src/model/types.js';

export { mulberry32 } from '../../src/model/random.js';

/** A physically valid random two-link arm. */
export function randomArm(rnd: () => number): TwoLinkParams {
  const L1 = 0.1 + rnd();
  const L2 = 0.1 + rnd();
  const m1 = 0.1 + 3 * rnd();
  const m2 = 0.1 + 3 * rnd();
  const d1 = L1 * rnd();
  const d2 = L2 * rnd();
  return {
    L1,
    L2,
    d1,
    d2,
    m1,
    m2,
    I1: (m1 * L1 * L1 * (0.01 + rnd())) / 12,
    I2: (m2 * L2 * L2 * (0.01 + rnd())) / 12,
    g: 9.81 * rnd() + 1,
  };
}

/** A random joint state. */
export function randomState(rnd: () => number): { q: Pair; qd: Pair } {
  return { q: [rnd() * 6 - 3, rnd() * 6 - 3], qd: [rnd() * 10 - 5, rnd() * 10 - 5] };
}
