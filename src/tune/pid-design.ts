/**
 * PID synthesis for a target crossover from the plant's response there (loop shaping at one
 * frequency, as MathWorks' PID Tuner and Astrom & Hagglund, Advanced PID Control ch. 6, do it):
 * the controller is C(s) = kp + ki / s + kd V(s), where V(s) is the velocity estimator's response
 * (estimated velocity over angle, about s at low frequency: the D term acts on the estimated
 * velocity, as control/pid.ts does). Given P(j wc), V(j wc) and
 * the phase margin wanted, |C P| = 1 and arg(C P) = -180 deg + PM at wc, with ki = kp wc / ALPHA
 * (the integrator's corner a factor ALPHA below the crossover): two real equations, linear in kp
 * and kd. No solution with kp > 0 and kd >= 0 means the crossover is out of reach. Pure.
 */
import { add, type C, div, expj, mul } from './complex.js';

/** The integrator's corner sits this factor below the crossover (it costs atan(1/ALPHA) = 11 deg of phase there). */
export const ALPHA = 5;

export interface PidGainsNm {
  /** [N m/rad] */
  kp: number;
  /** [N m/(rad s)] */
  ki: number;
  /** [N m s/rad] */
  kd: number;
}

/** C(j w) of a PID whose D term sees the velocity estimate V(j w) (default j w: an ideal derivative). */
export function pidResponse(g: PidGainsNm, w: number, V: C = [0, w]): C {
  return add([g.kp, -g.ki / w], mul([g.kd, 0], V));
}

/**
 * Gains that put the crossover at `wc` [rad/s] with phase margin `pmDeg`, for a plant response
 * `P` and velocity estimator response `V` at wc; null when no PID with kp > 0, kd >= 0 does.
 */
export function pidForCrossover(wc: number, P: C, V: C, pmDeg: number, alpha = ALPHA): PidGainsNm | null {
  // Wanted C = e^{j(-pi + pm)} / P
  const want = div(expj(-Math.PI + (pmDeg * Math.PI) / 180), P);
  // C = kp a + kd b with a = 1 - j / alpha (ki = kp wc / alpha), b = V
  const a: C = [1, -1 / alpha];
  const b = V;
  const det = a[0] * b[1] - a[1] * b[0];
  if (Math.abs(det) < 1e-12) return null;
  const kp = (want[0] * b[1] - want[1] * b[0]) / det;
  const kd = (a[0] * want[1] - a[1] * want[0]) / det;
  if (!(kp > 0) || !(kd >= 0) || !Number.isFinite(kp) || !Number.isFinite(kd)) return null;
  return { kp, ki: (kp * wc) / alpha, kd };
}

/**
 * The highest crossover [Hz] reachable with phase margin `pmDeg` and gain margin `gmDb` for a loop
 * whose plant and estimator responses are `P(w)` and `V(w)`: scans upward from `fromHz` in 1 %
 * steps until the synthesis fails or the margins do. `check` returns the gain margin [dB] of a
 * design (the caller evaluates it on its grid); `alpha` the integrator's corner factor.
 */
export function maxCrossoverHz(
  fromHz: number,
  toHz: number,
  pmDeg: number,
  gmDb: number,
  P: (w: number) => C,
  V: (w: number) => C,
  gm: (g: PidGainsNm) => number,
  alpha = ALPHA,
): number {
  let best = 0;
  for (let f = fromHz; f <= toHz; f *= 1.01) {
    const w = 2 * Math.PI * f;
    const g = pidForCrossover(w, P(w), V(w), pmDeg, alpha);
    if (!g || !(gm(g) >= gmDb)) break;
    best = f;
  }
  return best;
}

/** The open loop C P on a grid. */
export function loopResponse(g: PidGainsNm, freqHz: readonly number[], P: readonly C[], V: (w: number) => C): C[] {
  return freqHz.map((f, i) => mul(pidResponse(g, 2 * Math.PI * f, V(2 * Math.PI * f)), P[i]!));
}

/** |x| relative spread of gains: max over kp, ki, kd of (max - min) / mean. */
export function gainSpread(gs: readonly PidGainsNm[]): number {
  let worst = 0;
  for (const k of ['kp', 'ki', 'kd'] as const) {
    const v = gs.map((g) => g[k]);
    const mean = v.reduce((a, b) => a + b, 0) / v.length;
    if (mean > 0) worst = Math.max(worst, (Math.max(...v) - Math.min(...v)) / mean);
  }
  return worst;
}
