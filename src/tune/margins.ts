/**
 * Stability margins of an open loop L(j w) given on a frequency grid (measured or computed): the
 * gain crossover (|L| = 1, the first from below), the phase margin there (180 deg + the unwrapped
 * phase), the phase crossover (phase = -180 deg, the first above the gain crossover) and the gain
 * margin there (-20 log10 |L|). Between grid points the crossing is interpolated in log frequency.
 * Pure. Infinity when a crossing is not on the grid. The loops walk neighbouring grid points (i, i + 1):
 * those indices into the grid's arrays keep their `!`.
 */
import { abs, type C, unwrapDeg } from './complex.js';

export interface Margins {
  crossoverHz: number;
  phaseMarginDeg: number;
  /** Frequency where the phase crosses -180 deg [Hz], or Infinity. */
  phaseCrossoverHz: number;
  gainMarginDb: number;
}

/** Interpolates x(log f) between samples i and i+1 at the fraction s. */
const lerp = (a: number, b: number, s: number): number => a + (b - a) * s;

export function margins(freqHz: readonly number[], L: readonly C[]): Margins {
  const magDb = L.map((h) => 20 * Math.log10(abs(h)));
  const ph = unwrapDeg(L);
  let crossoverHz = Infinity;
  let phaseMarginDeg = Infinity;
  let ic = 0;
  for (let i = 0; i + 1 < L.length; i++) {
    if (magDb[i]! >= 0 && magDb[i + 1]! < 0) {
      const s = magDb[i]! / (magDb[i]! - magDb[i + 1]!);
      crossoverHz = Math.exp(lerp(Math.log(freqHz[i]!), Math.log(freqHz[i + 1]!), s));
      phaseMarginDeg = 180 + lerp(ph[i]!, ph[i + 1]!, s);
      ic = i;
      break;
    }
  }
  let phaseCrossoverHz = Infinity;
  let gainMarginDb = Infinity;
  for (let i = ic; i + 1 < L.length; i++) {
    if (ph[i]! > -180 && ph[i + 1]! <= -180) {
      const s = (ph[i]! + 180) / (ph[i]! - ph[i + 1]!);
      phaseCrossoverHz = Math.exp(lerp(Math.log(freqHz[i]!), Math.log(freqHz[i + 1]!), s));
      gainMarginDb = -lerp(magDb[i]!, magDb[i + 1]!, s);
      break;
    }
  }
  return { crossoverHz, phaseMarginDeg, phaseCrossoverHz, gainMarginDb };
}

/** A logarithmic grid of `n` frequencies from f0 to f1 [Hz]. */
export function logGrid(f0: number, f1: number, n: number): number[] {
  return Array.from({ length: n }, (_, i) => f0 * Math.pow(f1 / f0, i / (n - 1)));
}
