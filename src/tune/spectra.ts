/**
 * Frequency response from an experiment: the excitation (a logarithmic chirp) and Welch's averaged
 * cross and auto spectra, the H1 estimate P = S_uy / S_uu and the coherence
 * gamma^2 = |S_uy|^2 / (S_uu S_yy) (Bendat & Piersol, Random Data, ch. 9). Pure: arrays in, arrays out.
 * Every index here is a sample or a frequency bin (any number of them): those keep their `!`.
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

/**
 * In-place radix-2 FFT of (re, im); n a power of two. Each stage's twiddles are computed once for the
 * stage (the same `Math.cos(a * k)` as per butterfly, so the same bits), and the bit-reversal swaps use
 * temporaries: per butterfly trigonometry and array-destructuring swaps made a 6,000-sample chirp's
 * spectra take 80-230 ms on the thread that must answer the board's samples every 2 ms (issue 33.6).
 */
export function fft(re: Float64Array, im: Float64Array): void {
  const n = re.length;
  if (n & (n - 1)) throw new RangeError(`fft: length ${n} is not a power of two`);
  for (let i = 1, j = 0; i < n; i++) {
    let bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) {
      const tr = re[i]!;
      re[i] = re[j]!;
      re[j] = tr;
      const ti = im[i]!;
      im[i] = im[j]!;
      im[j] = ti;
    }
  }
  const cos = new Float64Array(n >> 1);
  const sin = new Float64Array(n >> 1);
  for (let len = 2; len <= n; len <<= 1) {
    const a = (-2 * Math.PI) / len;
    const h = len >> 1;
    for (let k = 0; k < h; k++) {
      cos[k] = Math.cos(a * k);
      sin[k] = Math.sin(a * k);
    }
    for (let i = 0; i < n; i += len) {
      for (let k = 0; k < h; k++) {
        const wr = cos[k]!;
        const wi = sin[k]!;
        const p = i + k;
        const q = p + h;
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
  const win = new Float64Array(nfft);
  for (let i = 0; i < nfft; i++) win[i] = 0.5 - 0.5 * Math.cos((2 * Math.PI * i) / nfft);
  const suu = new Float64Array(half + 1);
  const syy = new Float64Array(half + 1);
  const sr = new Float64Array(half + 1);
  const si = new Float64Array(half + 1);
  let segments = 0;
  // Plain loops into buffers reused by every segment (Float64Array.from with a callback was most of the time).
  const [ur, ui, yr, yi] = [new Float64Array(nfft), new Float64Array(nfft), new Float64Array(nfft), new Float64Array(nfft)];
  const seg = (x: readonly number[], s: number, re: Float64Array, im: Float64Array): void => {
    let m = 0;
    for (let i = 0; i < nfft; i++) m += x[s + i]!;
    m /= nfft;
    for (let i = 0; i < nfft; i++) {
      re[i] = (x[s + i]! - m) * win[i]!;
      im[i] = 0;
    }
    fft(re, im);
  };
  for (let s = 0; s + nfft <= u.length; s += half) {
    seg(u, s, ur, ui);
    seg(y, s, yr, yi);
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
export function closedLoopResponse(
  r: readonly number[],
  u: readonly number[],
  y: readonly number[],
  fs: number,
  nfft: number,
): FrequencyResponse {
  const ry = welchH1(r, y, fs, nfft);
  const ru = welchH1(r, u, fs, nfft);
  return {
    freqHz: ry.freqHz,
    h: ry.h.map((h, i) => div(h, ru.h[i]!)),
    coherence: ry.coherence.map((c, i) => Math.min(c, ru.coherence[i]!)),
    segments: ry.segments,
  };
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

/**
 * The closed-loop response of a swept-sine record taken whole (one DFT of the record, zero-padded to
 * a power of two; the chirp fades in from rest and out at its end), averaged in log bands with the
 * excitation r as the instrument: P = sum_k conj(R_k) Y_k / sum_k conj(R_k) U_k over the band's bins
 * (Pintelon & Schoukens, System Identification, 2nd ed., sec. 2.6 and 9.3: for a transient excitation
 * that starts and ends at rest the DFT ratio is the system's response, with no leakage). Welch's
 * segments cut a chirp that sweeps through each band in well under a segment, and the loop's memory
 * (the light PD's poles about 2 Hz) carries response across the cuts: on the perturbed rig's joint 1
 * the 2 s segments scattered the bands 2-5 Hz by -5 to +3 deg about any model (the same bands on every
 * seed, and 6 deg on a noiseless linear plant), and the fit took viscous friction 5x the plant's to
 * follow them; the whole record leaves 0.8 deg there (virtual time). The coherence, which a single
 * record cannot give, is Welch's (`welch`, the same signals) averaged over the band's bins; a bin is
 * kept where it is at least `min` and within [f0, f1].
 */
export function sweptBands(
  r: readonly number[],
  u: readonly number[],
  y: readonly number[],
  fs: number,
  welch: FrequencyResponse,
  min: number,
  f0: number,
  f1: number,
  perDecade: number,
): FrequencyResponse {
  let n = 1;
  while (n < r.length) n *= 2;
  const dft = (x: readonly number[]): [Float64Array, Float64Array] => {
    let m = 0;
    for (const v of x) m += v;
    m /= x.length;
    const re = new Float64Array(n);
    for (let i = 0; i < x.length; i++) re[i] = x[i]! - m;
    const im = new Float64Array(n);
    fft(re, im);
    return [re, im];
  };
  const [rr, ri] = dft(r);
  const [ur, ui] = dft(u);
  const [yr, yi] = dft(y);
  // Welch's coherence at a frequency: that of its nearest bin.
  const df = welch.freqHz.length > 1 ? welch.freqHz[1]! - welch.freqHz[0]! : fs;
  const coherenceAt = (f: number): number =>
    welch.coherence[Math.min(welch.coherence.length - 1, Math.max(0, Math.round(f / df) - 1))] ?? 0;
  const out: FrequencyResponse = { freqHz: [], h: [], coherence: [], segments: 1 };
  const lo = Math.log10(f0);
  let band = -1;
  let acc = { ry: [0, 0] as [number, number], ru: [0, 0] as [number, number], w: 0, lf: 0, coh: 0, bins: 0 };
  const flush = (): void => {
    const den = acc.ru[0] * acc.ru[0] + acc.ru[1] * acc.ru[1];
    if (acc.bins && den > 0) {
      out.freqHz.push(Math.exp(acc.lf / acc.w));
      out.h.push(div(acc.ry, acc.ru));
      out.coherence.push(acc.coh / acc.bins);
    }
    acc = { ry: [0, 0], ru: [0, 0], w: 0, lf: 0, coh: 0, bins: 0 };
  };
  for (let k = 1; k <= n / 2; k++) {
    const f = (k * fs) / n;
    if (f < f0 || f > f1) continue;
    const c = coherenceAt(f);
    if (!(c >= min)) continue;
    const b = Math.floor((Math.log10(f) - lo) * perDecade + 1e-9);
    if (b !== band) {
      flush();
      band = b;
    }
    // conj(R) Y and conj(R) U
    acc.ry[0] += rr[k]! * yr[k]! + ri[k]! * yi[k]!;
    acc.ry[1] += rr[k]! * yi[k]! - ri[k]! * yr[k]!;
    acc.ru[0] += rr[k]! * ur[k]! + ri[k]! * ui[k]!;
    acc.ru[1] += rr[k]! * ui[k]! - ri[k]! * ur[k]!;
    const w = rr[k]! * rr[k]! + ri[k]! * ri[k]!;
    acc.w += w;
    acc.lf += w * Math.log(f);
    acc.coh += c;
    acc.bins++;
  }
  flush();
  return out;
}
