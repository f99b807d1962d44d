/**
 * Complex numbers as [re, im] pairs, for frequency responses: tune's pure numerics (spectra, margins,
 * synthesis, the joint model) work on arrays of them. No I/O.
 */
export type C = readonly [number, number];

export const cx = (re: number, im = 0): C => [re, im];
export const add = (a: C, b: C): C => [a[0] + b[0], a[1] + b[1]];
export const sub = (a: C, b: C): C => [a[0] - b[0], a[1] - b[1]];
export const mul = (a: C, b: C): C => [a[0] * b[0] - a[1] * b[1], a[0] * b[1] + a[1] * b[0]];
export const scale = (a: C, k: number): C => [a[0] * k, a[1] * k];
export const conj = (a: C): C => [a[0], -a[1]];
export const abs = (a: C): number => Math.hypot(a[0], a[1]);
export function div(a: C, b: C): C {
  const d = b[0] * b[0] + b[1] * b[1];
  return [(a[0] * b[0] + a[1] * b[1]) / d, (a[1] * b[0] - a[0] * b[1]) / d];
}
/** e^{j theta} */
export const expj = (theta: number): C => [Math.cos(theta), Math.sin(theta)];
/** Phase [rad] in (-pi, pi]. */
export const arg = (a: C): number => Math.atan2(a[1], a[0]);
export const db = (a: C): number => 20 * Math.log10(abs(a));

/**
 * Phases [deg] of a response over increasing frequency, unwrapped (no jump over 180 deg between
 * neighbours), starting in (-360, 0] when `startNegative` (a plant with an integrator and delay).
 */
export function unwrapDeg(h: readonly C[], startNegative = true): number[] {
  const out: number[] = [];
  let prev = 0;
  for (const z of h) {
    let p = (arg(z) * 180) / Math.PI;
    if (out.length === 0) {
      if (startNegative && p > 0) p -= 360;
    } else {
      while (p - prev > 180) p -= 360;
      while (p - prev < -180) p += 360;
    }
    out.push(p);
    prev = p;
  }
  return out;
}
