/**
 * The laws of tune's experiments on the joint under test (loop.ts runs them on the board's clock):
 * the relay with its bias corrected for gravity, the log chirp under a light stabilising PD, and the
 * tuned PID (gain-scheduled) for the validation's step and chirp. Each is a pure function of the
 * sample it is given and its own state.
 */
import type { Law } from './loop.js';
import { logChirp } from './spectra.js';

export interface RelayOptions {
  pose: number;
  /** Gravity torque at the pose [N m]: the relay's starting bias. */
  bias0: number;
  /** Relay amplitude [N m]. */
  d: number;
  /** Hysteresis [rad]. */
  eps: number;
  /** Rising edges to run for. */
  periods: number;
  /** Give up after [s]. */
  maxS: number;
}

/**
 * The relay u = bias + d (angle below pose - eps) or bias - d (above pose + eps). After each period
 * the bias moves by d (t_high - t_low) / period: gravity the bias does not carry makes the relay sit
 * high longer, and the correction makes the oscillation symmetric (Astrom & Hagglund's asymmetric
 * relay). `c` records the relay's sign.
 */
export function relayLaw(o: RelayOptions): { law: Law; bias: () => number } {
  let sign = 1;
  let bias = o.bias0;
  let rises = 0;
  let high = 0;
  let low = 0;
  const law: Law = ({ t, dt, qj }) => {
    const y = qj - o.pose;
    const before = sign;
    if (y > o.eps) sign = -1;
    else if (y < -o.eps) sign = 1;
    if (sign > 0) high += dt;
    else low += dt;
    if (before < 0 && sign > 0) {
      rises++;
      if (rises > 1 && high + low > 0) bias += (o.d * (high - low)) / (high + low);
      high = 0;
      low = 0;
    }
    return { tau: bias + sign * o.d, c: sign, done: rises > o.periods || t > o.maxS };
  };
  return { law, bias: () => bias };
}

export interface ChirpOptions {
  f0: number;
  f1: number;
  /** [s] */
  T: number;
  /** Torque amplitude at frequency f [N m]. */
  amplitude: (fHz: number) => number;
  /** Fade in and out [s]. */
  fadeS: number;
}

/** The chirp's torque at t [s] (0 outside [0, T]), faded in and out with half cosines. */
export function chirpTorque(o: ChirpOptions, t: number): number {
  if (t < 0 || t > o.T) return 0;
  const { value, freqHz } = logChirp(t, o.f0, o.f1, o.T);
  const edge = Math.min(t, o.T - t);
  const fade = edge >= o.fadeS ? 1 : 0.5 - 0.5 * Math.cos((Math.PI * edge) / o.fadeS);
  return fade * o.amplitude(freqHz) * value;
}

/** The chirp on top of a light PD about the pose (closed-loop identification of the plant). */
export function pdChirpLaw(pose: number, gravity: number, kp: number, kd: number, chirp: ChirpOptions): Law {
  return ({ t, qj, qdj }) => {
    const r = chirpTorque(chirp, t);
    return { tau: gravity + kp * (pose - qj) - kd * qdj + r, r, done: t >= chirp.T };
  };
}

/** PID gains [N m/rad, N m/(rad s), N m s/rad] at the elbow angle [rad]. */
export type GainsAt = (elbowRad: number) => { kp: number; ki: number; kd: number };

/**
 * The tuned PID about the pose: reference pose + stepRad from stepAtS on, the D term on the
 * estimated velocity (the reference is still), the integral clamped to iLimit, plus a chirp at the
 * plant's input (for the loop's response: c records the PID's output). Done at durationS.
 */
export function pidLaw(o: {
  pose: number;
  gravity: number;
  gains: GainsAt;
  elbow: (q: readonly number[]) => number;
  iLimit: number;
  stepRad: number;
  stepAtS: number;
  durationS: number;
  chirp?: ChirpOptions;
}): Law {
  let integral = 0;
  return ({ t, dt, q, qj, qdj }) => {
    const g = o.gains(o.elbow(q));
    const ref = o.pose + (t >= o.stepAtS ? o.stepRad : 0);
    const e = ref - qj;
    integral = Math.max(-o.iLimit, Math.min(o.iLimit, integral + g.ki * e * dt));
    const c = g.kp * e + integral - g.kd * qdj;
    const r = o.chirp ? chirpTorque(o.chirp, t) : 0;
    return { tau: o.gravity + c + r, c, r, done: t >= o.durationS };
  };
}
