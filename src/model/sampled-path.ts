/**
 * A dense joint path (a taught motion, `twolink teach`) as a trajectory segment: a uniform cubic
 * B-spline whose control points are the samples, every `dt` seconds. The ends are clamped by repeating
 * the first and last sample twice more, so the segment starts and ends at rest (zero velocity and
 * acceleration) and joins its neighbours with continuous position, velocity and acceleration. A cubic
 * B-spline approximates its control points rather than passing through them: it smooths them by
 * (dt^2 / 6) q'' at most (0.02 deg for 5 rad/s^2 at dt = 20 ms).
 *
 * On segment k (control points P_k..P_k+3, local u in [0, 1)):
 *   q = ((1-u)^3 P0 + (3u^3 - 6u^2 + 4) P1 + (-3u^3 + 3u^2 + 3u + 1) P2 + u^3 P3) / 6
 *   qd = (-(1-u)^2 P0 + (3u^2 - 4u) P1 + (-3u^2 + 2u + 1) P2 + u^2 P3) / (2 dt)
 *   qdd = ((1-u) P0 + (3u - 2) P1 + (1 - 3u) P2 + u P3) / dt^2
 *   qddd = (-P0 + 3 P1 - 3 P2 + P3) / dt^3
 */
import type { TrajectorySample } from './trajectory.js';

/** The duration of a sampled path of `count` samples every `dt` seconds [s]. */
export function sampledDuration(count: number, dt: number): number {
  return (count + 1) * dt;
}

export class SampledSegment {
  readonly duration: number;
  readonly qStart: readonly number[];
  readonly qEnd: readonly number[];
  readonly what: string;
  private readonly ctrl: (readonly number[])[];

  constructor(
    samples: readonly (readonly number[])[],
    readonly dt: number,
  ) {
    const first = samples[0]!;
    const last = samples[samples.length - 1]!;
    this.ctrl = [first, first, ...samples, last, last];
    this.duration = sampledDuration(samples.length, dt);
    this.qStart = first.slice();
    this.qEnd = last.slice();
    this.what = `a taught path of ${samples.length} samples every ${(dt * 1000).toFixed(0)} ms (${this.duration.toFixed(2)} s)`;
  }

  sample(t: number, _t0: number, out: TrajectorySample): void {
    const segs = this.ctrl.length - 3;
    const x = Math.max(0, Math.min(segs, t / this.dt));
    const k = Math.min(segs - 1, Math.floor(x));
    const u = x - k;
    const [p0, p1, p2, p3] = [this.ctrl[k]!, this.ctrl[k + 1]!, this.ctrl[k + 2]!, this.ctrl[k + 3]!];
    const dt = this.dt;
    const u2 = u * u;
    const u3 = u2 * u;
    const m = 1 - u;
    for (let i = 0; i < this.qStart.length; i++) {
      const a = p0[i]!;
      const b = p1[i]!;
      const c = p2[i]!;
      const d = p3[i]!;
      out.q[i] = (m * m * m * a + (3 * u3 - 6 * u2 + 4) * b + (-3 * u3 + 3 * u2 + 3 * u + 1) * c + u3 * d) / 6;
      out.qd[i] = (-m * m * a + (3 * u2 - 4 * u) * b + (-3 * u2 + 2 * u + 1) * c + u2 * d) / (2 * dt);
      out.qdd[i] = (m * a + (3 * u - 2) * b + (1 - 3 * u) * c + u * d) / (dt * dt);
      out.qddd[i] = (-a + 3 * b - 3 * c + d) / (dt * dt * dt);
    }
  }
}
