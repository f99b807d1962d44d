// The arms and rows the scene tests feed both the recording's scene (viz/scene.ts) and the live view's
// byte frames (viz/live-frame.ts): the mock rig's two-link arm and a one-link arm, and random tick rows
// with a NaN now and then (a non-finite value must come out as the recording writes it).
import { loadRig } from '../../src/config/load.js';
import type { TwoLinkParams } from '../../src/model/types.js';

/** The mock rig's arm (rigs/mock-arm.json). */
export const MOCK_ARM = loadRig('rigs/mock-arm.json').arm as TwoLinkParams;

/** A one-link arm. */
export const ONE_LINK = { L1: 0.3, d1: 0.1, m1: 0.3, I1: 0.002, g: 9.81 };

/** Both arms with their joint counts, for a test that must hold for two links and for one. */
export const SCENE_ARM_CASES = [
  [MOCK_ARM, 2],
  [ONE_LINK, 1],
] as const;

/**
 * A random row of `length` values in [-3, 3) with 3 % NaN; `decades` spreads each value over
 * 10^-4..10^3 (to test how numbers are written).
 */
export function randomRow(rnd: () => number, length: number, decades = false): number[] {
  return Array.from({ length }, () => (rnd() < 0.03 ? Number.NaN : (rnd() * 6 - 3) * (decades ? 10 ** Math.floor(rnd() * 8 - 4) : 1)));
}
