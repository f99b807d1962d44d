/**
 * Frequency response from an experiment: the excitation (a logarithmic chirp) and Welch's averaged
 * cross and auto spectra, the H1 estimate P = S_uy / S_uu and the coherence
 * gamma^2 = |S_uy|^2 / (S_uu S_yy) (Bendat & Piersol, Random Data, ch. 9). Pure: arrays in, arrays out.
 */
import { abs, type C, div } from './complex.js';

/**
 * A logarithmic (exponential) sweep from f0 to f1 [Hz] over T [s] at time t [s]: sin(phi(t)) with
 * phi = 2 pi f0 T / ln(f1/f0) (e^{t ln(f1/f0) / T} - 1); its frequency at t is f0 (f1/f0)^{t/T}.
 */
export function logChirp(t: number, f0: number, f1: number, T: number): { value: number; freqHz: number } {
  const k = Math.log(f1 / f0) / T;
  const phi = ((2 * Math.PI * f0) / k) * (Math.exp(k * t) - 1);
  return { value: Math.sin(phi), freqHz: f0 * Math.exp(k * t) };
}

/** In-place radix-2 FFT of (re, im); n a power of two. */
export function fft(re: Float64Array, im: Float64Array): void {
  const n = re.length;
  if (n & (n - 1)) throw new RangeError(`fft: length ${n} is not a power of two`);
  for (let i = 1, j = 0; i < n; i++) {
    let bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) {
      [re[i], re[j]] = [re[j]!, re[i]!];
      [im[i], im[j]] = [im[j]!, im[i]!];
    }
  }
  for (let len = 2; len <= n; len <<= 1) {
    const a = (-2 * Math.PI) / len;
    for (let i = 0; i < n; i += len) {
      for (let k = 0; k < len / 2; k++) {
        const wr = Math.cos(a * k);
        const wi = Math.sin(a * k);
        const p = i + k;
        const q = p + len / 2;
        const xr = re[q]! * wr - im[q]! * wi;
        const xi = re[q]! * wi + im[q]! * wr;
        re[q] = re[p]! - xr;
        im[q] = im[p]! - xi;
        re[p] = re[p]! + xr;
        im[p] = im[p]! + xi;
      }
    }
  }
}

/** The frequency response estimate at each FFT bin up to Nyquist. */
export interface FrequencyResponse {
  freqHz: number[];
  /** H1 = S_uy / S_uu */
  h: C[];
  /** 0..1 */
  coherence: number[];
  /** Segments averaged. */
  segments: number;
}

/**
 * Welch's H1 estimate of y over u, both sampled at `fs` [Hz]: Hann-windowed segments of `nfft`
 * samples overlapping by half, each detrended by its mean. Bin 0 (DC) is left out.
 */
export function welchH1(u: readonly number[], y: readonly number[], fs: number, nfft: number): FrequencyResponse {
  if (u.length !== y.length) throw new RangeError(`welchH1: u has ${u.length} samples, y ${y.length}`);
  if (u.length < nfft) throw new RangeError(`welchH1: ${u.length} samples, fewer than one segment of ${nfft}`);
  const half = nfft / 2;
  const win = Float64Array.from({ length: nfft }, (_, i) => 0.5 - 0.5 * Math.cos((2 * Math.PI * i) / nfft));
  const suu = new Float64Array(half + 1);
  const syy = new Float64Array(half + 1);
  const sr = new Float64Array(half + 1);
  const si = new Float64Array(half + 1);
  let segments = 0;
  for (let s = 0; s + nfft <= u.length; s += half) {
    const seg = (x: readonly number[]): [Float64Array, Float64Array] => {
      let m = 0;
      for (let i = 0; i < nfft; i++) m += x[s + i]!;
      m /= nfft;
      const re = Float64Array.from({ length: nfft }, (_, i) => (x[s + i]! - m) * win[i]!);
      const im = new Float64Array(nfft);
      fft(re, im);
      return [re, im];
    };
    const [ur, ui] = seg(u);
    const [yr, yi] = seg(y);
    for (let k = 0; k <= half; k++) {
      suu[k]! += ur[k]! * ur[k]! + ui[k]! * ui[k]!;
      syy[k]! += yr[k]! * yr[k]! + yi[k]! * yi[k]!;
      // conj(U) Y
      sr[k]! += ur[k]! * yr[k]! + ui[k]! * yi[k]!;
      si[k]! += ur[k]! * yi[k]! - ui[k]! * yr[k]!;
    }
    segments++;
  }
  const out: FrequencyResponse = { freqHz: [], h: [], coherence: [], segments };
  for (let k = 1; k <= half; k++) {
    if (!(suu[k]! > 0)) continue;
    const h: C = [sr[k]! / suu[k]!, si[k]! / suu[k]!];
    out.freqHz.push((k * fs) / nfft);
    out.h.push(h);
    const c = (sr[k]! * sr[k]! + si[k]! * si[k]!) / (suu[k]! * syy[k]!);
    out.coherence.push(Number.isFinite(c) ? Math.min(1, c) : 0);
  }
  return out;
}

/**
 * The closed-loop estimate of y over u with the excitation r as the instrument: P = S_ry / S_ru
 * (Pintelon & Schoukens, System Identification, 2nd ed., sec. 9.3). Inside a feedback loop the
 * H1 of y over u is biased toward -1/C wherever the noise the loop feeds back outweighs the
 * excitation; r is uncorrelated with that noise, so the ratio is not. The coherence is that of y
 * with r (how much of y the excitation explains).
 */
export function closedLoopResponse(r: readonly number[], u: readonly number[], y: readonly number[], fs: number, nfft: number): FrequencyResponse {
  const ry = welchH1(r, y, fs, nfft);
  const ru = welchH1(r, u, fs, nfft);
  return { freqHz: ry.freqHz, h: ry.h.map((h, i) => div(h, ru.h[i]!)), coherence: ry.coherence.map((c, i) => Math.min(c, ru.coherence[i]!)), segments: ry.segments };
}

/** The response kept where the coherence is at least `min` and the frequency within [f0, f1]. */
export function trusted(r: FrequencyResponse, min: number, f0: number, f1: number): FrequencyResponse {
  const keep = r.freqHz.map((f, i) => f >= f0 && f <= f1 && r.coherence[i]! >= min && Number.isFinite(abs(r.h[i]!)));
  const pick = <T>(a: T[]): T[] => a.filter((_, i) => keep[i]);
  return { freqHz: pick(r.freqHz), h: pick(r.h), coherence: pick(r.coherence), segments: r.segments };
}

/**
 * Averages a response into logarithmically spaced bands (`perDecade` a decade), each band's bins
 * weighted by coherence / (1 - coherence) (the inverse variance of H1): a smooth Bode curve.
 */
export function logBands(r: FrequencyResponse, perDecade: number): FrequencyResponse {
  const out: FrequencyResponse = { freqHz: [], h: [], coherence: [], segments: r.segments };
  if (!r.freqHz.length) return out;
  const lo = Math.log10(r.freqHz[0]!);
  const band = (f: number): number => Math.floor((Math.log10(f) - lo) * perDecade + 1e-9);
  let i = 0;
  while (i < r.freqHz.length) {
    const b = band(r.freqHz[i]!);
    let w = 0,
      re = 0,
      im = 0,
      lf = 0,
      coh = 0,
      n = 0;
    for (; i < r.freqHz.length && band(r.freqHz[i]!) === b; i++) {
      const c = r.coherence[i]!;
      const wi = c / Math.max(1e-6, 1 - c);
      w += wi;
      re += wi * r.h[i]![0];
      im += wi * r.h[i]![1];
      lf += wi * Math.log(r.freqHz[i]!);
      coh += c;
      n++;
    }
    if (w > 0) {
      out.freqHz.push(Math.exp(lf / w));
      out.h.push([re / w, im / w]);
      out.coherence.push(coh / n);
    }
  }
  return out;
}
