// Deterministic random numbers for property tests (so a failure is reproducible).
import type { TwoLinkParams } from '../../src/model/index.js';

/** Mulberry32: a small, fast, seeded PRNG returning numbers in [0, 1). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A physically valid random two-link arm. */
export function randomArm(rnd: () => number): TwoLinkParams {
  const L1 = 0.1 + rnd();
  const L2 = 0.1 + rnd();
  const m1 = 0.1 + 3 * rnd();
  const m2 = 0.1 + 3 * rnd();
  const d1 = L1 * rnd();
  const d2 = L2 * rnd();
  return { L1, L2, d1, d2, m1, m2, I1: (m1 * L1 * L1 * (0.01 + rnd())) / 12, I2: (m2 * L2 * L2 * (0.01 + rnd())) / 12, g: 9.81 * rnd() + 1 };
}

/** A random joint state. */
export function randomState(rnd: () => number): { q: number[]; qd: number[] } {
  return { q: [rnd() * 6 - 3, rnd() * 6 - 3], qd: [rnd() * 10 - 5, rnd() * 10 - 5] };
}
