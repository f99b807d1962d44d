/**
 * A PID per joint on the joint error, with what keeps it sane on hardware:
 * - the D term differentiates only the measurement (filtered by the velocity estimator); the
 *   setpoint's rate comes analytically from the trajectory, so there is neither a derivative kick nor
 *   the lag of a numerically differentiated setpoint;
 * - integrator limits, and anti-windup by clamping (stop integrating while the output is saturated
 *   in the error's direction) or back-calculation (bleed the integrator by the saturation excess);
 * - dt is passed in: the PID never reads a clock (see SimpleFOC's `dt = 1e-3 // quick fix`).
 *
 * A schedule is a list of 2 to 16 points, and `scheduledGains` reads gains of any length (tune's
 * interpolateGains passes one joint's): their indices keep their `!`.
 */

export interface PidGains {
  /** [N m/rad] */
  kp: number;
  /** [N m/(rad s)] */
  ki: number;
  /** [N m s/rad] */
  kd: number;
  /** Largest integral contribution [N m]. */
  iLimit: number;
  antiWindup: 'clamp' | 'backcalc';
  /** Back-calculation gain [1/s]. */
  backcalc: number;
}

export class Pid {
  /** Integral contribution [N m]. */
  integral = 0;
  /** Parts of the last output [N m], for recording. */
  p = 0;
  d = 0;

  constructor(public gains: PidGains) {}

  reset(): void {
    this.integral = 0;
    this.p = 0;
    this.d = 0;
  }

  /**
   * The PID torque [N m] for error e = desired - measured [rad] and its rate
   * eDot = desired rate - estimated measured rate [rad/s], over dt [s].
   * `saturated` is the sign of the saturation the previous output met (+1 at the upper torque
   * limit, -1 at the lower, 0 if none), and `excess` that output's saturated minus unsaturated
   * value [N m] (for back-calculation).
   */
  update(e: number, eDot: number, dt: number, saturated: number, excess: number): number {
    const g = this.gains;
    this.p = g.kp * e;
    this.d = g.kd * eDot;
    if (g.antiWindup === 'clamp') {
      // Integrate unless that would push further into the saturation.
      if (saturated === 0 || Math.sign(e) !== saturated) this.integral += g.ki * e * dt;
    } else {
      this.integral += (g.ki * e + g.backcalc * excess) * dt;
    }
    if (this.integral > g.iLimit) this.integral = g.iLimit;
    else if (this.integral < -g.iLimit) this.integral = -g.iLimit;
    return this.p + this.integral + this.d;
  }
}

/** One point of a gain schedule: the elbow angle [deg] and the gains per joint there. */
export interface SchedulePoint {
  elbowDeg: number;
  kp: readonly number[];
  ki: readonly number[];
  kd: readonly number[];
}

/**
 * Joint `joint`'s gains at `elbowDeg`, interpolated linearly between the schedule's points (sorted
 * by elbow angle) and held beyond its ends.
 */
export function scheduledGains(s: readonly SchedulePoint[], joint: number, elbowDeg: number): { kp: number; ki: number; kd: number } {
  const at = (p: SchedulePoint): { kp: number; ki: number; kd: number } => ({ kp: p.kp[joint]!, ki: p.ki[joint]!, kd: p.kd[joint]! });
  if (!(elbowDeg > s[0]!.elbowDeg)) return at(s[0]!);
  for (let i = 0; i + 1 < s.length; i++) {
    const a = s[i]!;
    const b = s[i + 1]!;
    if (elbowDeg <= b.elbowDeg) {
      const x = (elbowDeg - a.elbowDeg) / (b.elbowDeg - a.elbowDeg);
      const lerp = (u: readonly number[], v: readonly number[]): number => u[joint]! + x * (v[joint]! - u[joint]!);
      return { kp: lerp(a.kp, b.kp), ki: lerp(a.ki, b.ki), kd: lerp(a.kd, b.kd) };
    }
  }
  return at(s[s.length - 1]!);
}
