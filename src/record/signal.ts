/**
 * Signal tools for recorded runs: resampling irregular samples onto a uniform grid, and
 * Savitzky-Golay smoothing differentiators. Pure functions on plain arrays (no I/O).
 *
 * The loop's ticks are not evenly spaced (period jitter, missed periods), and a measured angle is
 * quantised by the encoder, so a derivative by plain differences is mostly noise. A Savitzky-Golay
 * filter fits a polynomial by least squares to a window of samples around each point and
 * differentiates the polynomial: a smoothing differentiator with a known, symmetric (zero-lag)
 * window.
 */

/** Times from t0 to t1 inclusive at a fixed step [s]. */
export function uniformGrid(t0: number, t1: number, step: number): Float64Array {
  const n = Math.max(0, Math.floor((t1 - t0) / step + 1e-9)) + 1;
  const g = new Float64Array(n);
  for (let k = 0; k < n; k++) g[k] = t0 + k * step;
  return g;
}

/**
 * Linear interpolation of (xs, ys) at increasing `at` times; xs must not decrease. NaN outside
 * [xs[0], xs[last]] and where a neighbour is NaN.
 */
export function resampleLinear(xs: ArrayLike<number>, ys: ArrayLike<number>, at: ArrayLike<number>): Float64Array {
  const out = new Float64Array(at.length);
  const n = xs.length;
  let j = 0;
  for (let k = 0; k < at.length; k++) {
    const x = at[k]!;
    if (n === 0 || !(x >= xs[0]!) || !(x <= xs[n - 1]!)) {
      out[k] = Number.NaN;
      continue;
    }
    if (j > 0 && x < xs[j]!) j = 0; // `at` went backwards: search from the start
    while (j < n - 2 && xs[j + 1]! < x) j++;
    const x0 = xs[j]!;
    const x1 = xs[j + 1] ?? x0;
    const y0 = ys[j]!;
    const y1 = ys[j + 1] ?? y0;
    out[k] = x1 > x0 ? y0 + ((y1 - y0) * (x - x0)) / (x1 - x0) : x === x0 ? y0 : y1;
  }
  return out;
}

/** Solves the small symmetric system A x = b (Gaussian elimination with partial pivoting). */
function solve(A: number[][], b: number[]): number[] {
  const n = b.length;
  const M = A.map((r, i) => [...r, b[i]!]);
  for (let c = 0; c < n; c++) {
    let p = c;
    for (let r = c + 1; r < n; r++) if (Math.abs(M[r]![c]!) > Math.abs(M[p]![c]!)) p = r;
    [M[c], M[p]] = [M[p]!, M[c]!];
    for (let r = c + 1; r < n; r++) {
      const f = M[r]![c]! / M[c]![c]!;
      for (let k = c; k <= n; k++) M[r]![k]! -= f * M[c]![k]!;
    }
  }
  const x = new Array<number>(n).fill(0);
  for (let r = n - 1; r >= 0; r--) {
    let s = M[r]![n]!;
    for (let k = r + 1; k < n; k++) s -= M[r]![k]! * x[k]!;
    x[r] = s / M[r]![r]!;
  }
  return x;
}

/**
 * Weights w such that sum_k w[k] y[k] is the `deriv`-th derivative at offset `at` (in samples) of the
 * least-squares polynomial of degree `order` through samples at offsets 0..len-1 (unit spacing).
 */
function sgWeights(len: number, order: number, deriv: number, at: number): Float64Array {
  const p = order + 1;
  // Normal equations: (V^T V) c = V^T y with V[k][j] = (k - at)^j; the derivative is deriv! c[deriv].
  const VtV = Array.from({ length: p }, () => new Array<number>(p).fill(0));
  for (let k = 0; k < len; k++) {
    const x = k - at;
    for (let i = 0; i < p; i++) for (let j = 0; j < p; j++) VtV[i]![j]! += x ** (i + j);
  }
  // Row `deriv` of (V^T V)^-1 V^T: solve (V^T V) z = e_deriv, then w_k = sum_j z_j x_k^j.
  const e = new Array<number>(p).fill(0);
  e[deriv] = 1;
  const z = solve(VtV, e);
  let fact = 1;
  for (let i = 2; i <= deriv; i++) fact *= i;
  const w = new Float64Array(len);
  for (let k = 0; k < len; k++) {
    const x = k - at;
    let s = 0;
    for (let j = 0; j < p; j++) s += z[j]! * x ** j;
    w[k] = s * fact;
  }
  return w;
}

/** Options of a Savitzky-Golay filter. */
export interface SavitzkyGolay {
  /** Samples in the window (odd; at least order + 1). */
  window: number;
  /** Degree of the fitted polynomial. */
  order: number;
  /** Which derivative: 0 smooths, 1 velocity, 2 acceleration, 3 jerk. */
  deriv: number;
}

/**
 * Savitzky-Golay filter of uniformly spaced samples `y` with step `dt` [s]: the `deriv`-th time
 * derivative of the local least-squares polynomial. Near the ends the window is shifted inward (the
 * fit is evaluated off-centre), so the output has the input's length. NaN samples split the signal
 * into runs that are filtered separately; runs shorter than the window give NaN.
 */
export function savitzkyGolay(y: ArrayLike<number>, dt: number, o: SavitzkyGolay): Float64Array {
  const len = o.window % 2 === 1 ? o.window : o.window + 1;
  if (len < o.order + 1) throw new RangeError(`Savitzky-Golay: a window of ${len} samples cannot fit a polynomial of degree ${o.order}`);
  if (o.deriv > o.order) throw new RangeError(`Savitzky-Golay: derivative ${o.deriv} of a degree ${o.order} polynomial is zero`);
  const m = (len - 1) / 2;
  const weights = Array.from({ length: len }, (_, at) => sgWeights(len, o.order, o.deriv, at));
  const scale = dt ** o.deriv;
  const out = new Float64Array(y.length).fill(Number.NaN);
  let start = 0;
  while (start < y.length) {
    while (start < y.length && !Number.isFinite(y[start]!)) start++;
    let end = start;
    while (end < y.length && Number.isFinite(y[end]!)) end++;
    const n = end - start;
    if (n >= len) {
      for (let i = start; i < end; i++) {
        // Window [w0, w0 + len) inside the run, centred on i where possible.
        const w0 = Math.min(Math.max(i - m, start), end - len);
        const w = weights[i - w0]!;
        let s = 0;
        for (let k = 0; k < len; k++) s += w[k]! * y[w0 + k]!;
        out[i] = s / scale;
      }
    }
    start = end;
  }
  return out;
}

/** Every k-th index so that at most `max` points remain (always keeps the last). */
export function strideIndices(n: number, max: number): number[] {
  if (n <= max) return Array.from({ length: n }, (_, i) => i);
  const step = Math.ceil(n / max);
  const out: number[] = [];
  for (let i = 0; i < n; i += step) out.push(i);
  if (out[out.length - 1] !== n - 1) out.push(n - 1);
  return out;
}

/** Index of the last element of the non-decreasing `xs` that is <= x (-1 if none). */
export function floorIndex(xs: ArrayLike<number>, x: number): number {
  let lo = 0;
  let hi = xs.length - 1;
  if (hi < 0 || !(x >= xs[0]!)) return -1;
  if (x >= xs[hi]!) return hi;
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (xs[mid]! <= x) lo = mid;
    else hi = mid;
  }
  return lo;
}

/** Linear interpolation of (xs, ys) at one x (xs non-decreasing); NaN outside. */
export function interpAt(xs: ArrayLike<number>, ys: ArrayLike<number>, x: number): number {
  const i = floorIndex(xs, x);
  if (i < 0 || !(x <= xs[xs.length - 1]!)) return Number.NaN;
  if (i === xs.length - 1) return ys[i]!;
  const x0 = xs[i]!;
  const x1 = xs[i + 1]!;
  return x1 > x0 ? ys[i]! + ((ys[i + 1]! - ys[i]!) * (x - x0)) / (x1 - x0) : ys[i + 1]!;
}

/**
 * Loop time [s] at which the board took each reading, from the board's own timestamps: the offset
 * between the two clocks is the smallest (loop time - board time) among the readings within
 * `windowS` either side (the reading that waited least before a tick picked it up), which follows a
 * slow drift between the clocks. `t` and `boardT` are the loop and board times of the ticks that
 * got a fresh reading.
 */
export function readingTimes(t: ArrayLike<number>, boardT: ArrayLike<number>, windowS = 1): Float64Array {
  const n = t.length;
  const d = Float64Array.from({ length: n }, (_, i) => t[i]! - boardT[i]!);
  const out = new Float64Array(n);
  // Sliding minimum over |t_k - t_i| <= windowS with a monotonic deque of indices.
  const dq: number[] = [];
  let head = 0;
  let right = 0;
  for (let i = 0; i < n; i++) {
    while (right < n && t[right]! <= t[i]! + windowS) {
      while (dq.length > head && d[dq[dq.length - 1]!]! >= d[right]!) dq.pop();
      dq.push(right++);
    }
    while (t[dq[head]!]! < t[i]! - windowS) head++;
    out[i] = boardT[i]! + d[dq[head]!]!;
  }
  return out;
}
