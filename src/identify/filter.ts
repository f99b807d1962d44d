/**
 * Offline zero-phase filtering and differentiation of sampled signals: a Butterworth low-pass as
 * second-order sections (bilinear transform with prewarping), run forward then backward (filtfilt)
 * so that it adds no phase lag, with an odd extension at both ends and steady-state initial
 * conditions so that the ends do not ring; and central differences on the filtered signal.
 *
 * Written here rather than taken from npm: the one maintained-looking package with a filtfilt (fili)
 * starts each pass from a zero state with no padding, which makes a transient the size of the signal
 * at both ends of a joint angle (the angle is far from zero), and its filters keep state between
 * calls. Pure math: no I/O, no clock.
 */

/** One biquad: y = (b0 + b1 z^-1 + b2 z^-2) / (1 + a1 z^-1 + a2 z^-2) x. */
export interface Biquad {
  b0: number;
  b1: number;
  b2: number;
  a1: number;
  a2: number;
}

/**
 * A Butterworth low-pass of `order` (1..8) with its -3 dB point at `cutoffHz` (one pass; a
 * forward-backward pass is -6 dB there) for signals sampled at `sampleHz`.
 */
export function butterworthLowpass(order: number, cutoffHz: number, sampleHz: number): Biquad[] {
  if (!Number.isInteger(order) || order < 1 || order > 8) throw new RangeError(`"order" must be an integer 1..8, got ${order}`);
  if (!(cutoffHz > 0 && cutoffHz < sampleHz / 2)) {
    throw new RangeError(`"cutoffHz" must be between 0 and half the sample rate (${sampleHz / 2} Hz), got ${cutoffHz}`);
  }
  const K = 2 * sampleHz;
  const wc = K * Math.tan((Math.PI * cutoffHz) / sampleHz); // prewarped analog cutoff [rad/s]
  const sections: Biquad[] = [];
  for (let k = 0; k < Math.floor(order / 2); k++) {
    // Analog pole pair at wc exp(+-i theta), theta = pi (2k + order + 1) / (2 order); a = -2 wc Re(p) > 0.
    const theta = (Math.PI * (2 * k + order + 1)) / (2 * order);
    const a = -2 * wc * Math.cos(theta);
    const a0 = K * K + a * K + wc * wc;
    const g = (wc * wc) / a0;
    sections.push({ b0: g, b1: 2 * g, b2: g, a1: (2 * wc * wc - 2 * K * K) / a0, a2: (K * K - a * K + wc * wc) / a0 });
  }
  if (order % 2 === 1) {
    const a0 = K + wc;
    sections.push({ b0: wc / a0, b1: wc / a0, b2: 0, a1: (wc - K) / a0, a2: 0 });
  }
  return sections;
}

/** Gain of the cascade at frequency f [Hz] for sample rate fs (magnitude of H(e^{i w})). */
export function gainAt(sos: readonly Biquad[], f: number, fs: number): number {
  const w = (2 * Math.PI * f) / fs;
  let g = 1;
  for (const s of sos) {
    // |b0 + b1 e^-iw + b2 e^-2iw| / |1 + a1 e^-iw + a2 e^-2iw|
    const nr = s.b0 + s.b1 * Math.cos(w) + s.b2 * Math.cos(2 * w);
    const ni = -s.b1 * Math.sin(w) - s.b2 * Math.sin(2 * w);
    const dr = 1 + s.a1 * Math.cos(w) + s.a2 * Math.cos(2 * w);
    const di = -s.a1 * Math.sin(w) - s.a2 * Math.sin(2 * w);
    g *= Math.hypot(nr, ni) / Math.hypot(dr, di);
  }
  return g;
}

/** Filters `x` through the cascade (direct form II transposed), starting each section in the steady state of a constant input x[0]. */
function sosfiltSteady(sos: readonly Biquad[], x: Float64Array): Float64Array {
  const y = Float64Array.from(x);
  for (const s of sos) {
    const x0 = y[0]!;
    const dc = (s.b0 + s.b1 + s.b2) / (1 + s.a1 + s.a2);
    const yss = dc * x0;
    let z2 = s.b2 * x0 - s.a2 * yss;
    let z1 = s.b1 * x0 - s.a1 * yss + z2;
    for (let i = 0; i < y.length; i++) {
      const xi = y[i]!;
      const yi = s.b0 * xi + z1;
      z1 = s.b1 * xi - s.a1 * yi + z2;
      z2 = s.b2 * xi - s.a2 * yi;
      y[i] = yi;
    }
  }
  return y;
}

/**
 * Zero-phase filtering: forward then backward through `sos`, on `x` extended at both ends by its odd
 * reflection (`pad` samples, default three time constants of the cutoff, at most x.length - 1), each
 * pass started in its steady state. The result has no lag and the filter's magnitude squared.
 */
export function filtfilt(sos: readonly Biquad[], x: ArrayLike<number>, pad?: number): Float64Array {
  const n = x.length;
  if (n === 0) return new Float64Array(0);
  const p = Math.max(0, Math.min(n - 1, pad ?? 0));
  const ext = new Float64Array(n + 2 * p);
  const x0 = x[0]!;
  const xn = x[n - 1]!;
  for (let i = 0; i < p; i++) ext[i] = 2 * x0 - x[p - i]!;
  for (let i = 0; i < n; i++) ext[p + i] = x[i]!;
  for (let i = 0; i < p; i++) ext[p + n + i] = 2 * xn - x[n - 2 - i]!;
  const fwd = sosfiltSteady(sos, ext);
  fwd.reverse();
  const back = sosfiltSteady(sos, fwd);
  back.reverse();
  return back.subarray(p, p + n).slice();
}

/** A zero-phase low-pass of x sampled at `sampleHz`: Butterworth of `order`, forward-backward. */
export function zeroPhaseLowpass(x: ArrayLike<number>, cutoffHz: number, sampleHz: number, order = 4): Float64Array {
  const sos = butterworthLowpass(order, cutoffHz, sampleHz);
  return filtfilt(sos, x, Math.ceil((3 * sampleHz) / cutoffHz));
}

/**
 * First and second derivatives of x sampled every h [s] (central differences; one-sided at the
 * ends). Meant for a signal already low-passed well below the sample rate, where the central
 * difference's error (w h)^2 / 6 is small.
 */
export function derivatives(x: ArrayLike<number>, h: number): { d1: Float64Array; d2: Float64Array } {
  const n = x.length;
  const d1 = new Float64Array(n);
  const d2 = new Float64Array(n);
  if (n < 3) return { d1, d2 };
  for (let i = 1; i < n - 1; i++) {
    d1[i] = (x[i + 1]! - x[i - 1]!) / (2 * h);
    d2[i] = (x[i + 1]! - 2 * x[i]! + x[i - 1]!) / (h * h);
  }
  d1[0] = (x[1]! - x[0]!) / h;
  d1[n - 1] = (x[n - 1]! - x[n - 2]!) / h;
  d2[0] = d2[1]!;
  d2[n - 1] = d2[n - 2]!;
  return { d1, d2 };
}
