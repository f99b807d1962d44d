/**
 * The relay test's analysis (Astrom & Hagglund 1984; Klipper's PID_CALIBRATE reports the same Ku
 * and Tu): a relay of amplitude d [N m] with hysteresis eps [rad] about a pose makes the joint
 * oscillate at its ultimate period Tu [s] with amplitude a [rad]; the describing function gives the
 * ultimate gain Ku = 4 d / (pi a) [N m/rad]; with the hysteresis the
 * point found is where arg P = -180 deg + asin(eps / a) (the describing function's phase), a little
 * below the true ultimate frequency: eps is kept a few counts, so asin(eps / a) stays a few degrees. From Ku and Tu, the classic rules:
 * Ziegler-Nichols (kp = 0.6 Ku, Ti = Tu / 2, Td = Tu / 8), Tyreus-Luyben, and Cohen-Coon from the
 * first-order-plus-dead-time model that fits the static gain and the relay's point. Pure.
 */
import type { PidGainsNm } from './pid-design.js';

export interface RelayAnalysis {
  /** [N m/rad] */
  ku: number;
  /** [s] */
  tu: number;
  /** Oscillation amplitude [rad] (half peak to peak). */
  amplitudeRad: number;
  /** Periods averaged. */
  periods: number;
  /** The phase of the point found, -180 deg + asin(eps / a) [deg]. */
  phaseDeg: number;
  /** Relative spread of the periods (max - min) / mean. */
  periodSpread: number;
  /** Fraction of each period the relay was high, averaged (0.5 when symmetric). */
  dutyHigh: number;
}

/**
 * Ku and Tu from a recording: times `t` [s], the joint's deviation `y` [rad] from the pose and the
 * relay's sign `s` (+1 high, -1 low), over the last `use` full periods (rising edges of s). Indices
 * into the samples and the edges keep their `!`.
 */
export function analyzeRelay(
  t: readonly number[],
  y: readonly number[],
  s: readonly number[],
  d: number,
  eps: number,
  use: number,
): RelayAnalysis | null {
  const rises: number[] = [];
  for (let i = 1; i < s.length; i++) if (s[i - 1]! < 0 && s[i]! > 0) rises.push(i);
  if (rises.length < use + 1) return null;
  const edges = rises.slice(-(use + 1));
  const periods: number[] = [];
  let lo = Infinity;
  let top = -Infinity;
  let high = 0;
  for (let k = 0; k < use; k++) {
    const a = edges[k]!;
    const b = edges[k + 1]!;
    periods.push(t[b]! - t[a]!);
    for (let i = a; i < b; i++) {
      lo = Math.min(lo, y[i]!);
      top = Math.max(top, y[i]!);
      if (s[i]! > 0) high += t[i + 1]! - t[i]!;
    }
  }
  const hi = top;
  const tu = periods.reduce((x, v) => x + v, 0) / use;
  const amplitudeRad = (hi - lo) / 2;
  if (!(amplitudeRad > eps)) return null;
  const ku = (4 * d) / (Math.PI * amplitudeRad);
  return {
    ku,
    tu,
    amplitudeRad,
    phaseDeg: -180 + (Math.asin(eps / amplitudeRad) * 180) / Math.PI,
    periods: use,
    periodSpread: (Math.max(...periods) - Math.min(...periods)) / tu,
    dutyHigh: high / (tu * use),
  };
}

/** Ziegler-Nichols' classic PID from the ultimate point: kp = 0.6 Ku, Ti = Tu / 2, Td = Tu / 8. */
export function zieglerNichols(ku: number, tu: number): PidGainsNm {
  const kp = 0.6 * ku;
  return { kp, ki: kp / (tu / 2), kd: kp * (tu / 8) };
}

/** Tyreus-Luyben (less aggressive): kp = Ku / 2.2, Ti = 2.2 Tu, Td = Tu / 6.3. */
export function tyreusLuyben(ku: number, tu: number): PidGainsNm {
  const kp = ku / 2.2;
  return { kp, ki: kp / (2.2 * tu), kd: kp * (tu / 6.3) };
}

/**
 * Cohen-Coon's PID for the FOPDT model K e^{-theta s} / (tau s + 1) that has static gain K
 * [rad/(N m)] and passes through the relay's point (|P| = 1 / Ku, arg P = -180 deg at 2 pi / Tu):
 * tau = sqrt((K Ku)^2 - 1) / wu, theta = (pi - atan(wu tau)) / wu. Null when K Ku <= 1 (no such model).
 */
export function cohenCoon(ku: number, tu: number, K: number): (PidGainsNm & { tau: number; theta: number }) | null {
  const wu = (2 * Math.PI) / tu;
  if (!(K * ku > 1)) return null;
  const tau = Math.sqrt((K * ku) ** 2 - 1) / wu;
  const theta = (Math.PI - Math.atan(wu * tau)) / wu;
  const r = theta / tau;
  const kp = (1 / K) * (1 / r) * (4 / 3 + r / 4);
  const ti = (theta * (32 + 6 * r)) / (13 + 8 * r);
  const td = (4 * theta) / (11 + 2 * r);
  return { kp, ki: kp / ti, kd: kp * td, tau, theta };
}
