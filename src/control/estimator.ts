/**
 * Joint velocity from encoder angles: an alpha-beta tracking filter per joint. It predicts the angle
 * from the last estimate, corrects position and velocity by the innovation, and takes dt from the
 * board's timestamps, so quantized counts and jittery arrival times do not become velocity spikes.
 * The gains come from the bandwidth: a critically damped second-order tracker at `bandwidthHz`.
 *
 * The prediction uses the planned acceleration when it is given (an alpha-beta-gamma filter whose
 * acceleration is known rather than estimated): a plain tracker lags an accelerating joint by
 * acceleration / wn^2, and that lag, times the D gain, would be a torque error of its own.
 */
export class VelocityEstimator {
  readonly q: number[];
  readonly qd: number[];
  private init = false;
  private readonly wn: number;

  constructor(
    readonly joints: number,
    bandwidthHz: number,
  ) {
    this.q = new Array(joints).fill(0);
    this.qd = new Array(joints).fill(0);
    this.wn = 2 * Math.PI * bandwidthHz;
  }

  reset(q: readonly number[]): void {
    for (let i = 0; i < this.joints; i++) {
      this.q[i] = q[i]!;
      this.qd[i] = 0;
    }
    this.init = true;
  }

  /**
   * Updates with a measured angle `qm` [rad] taken `dt` [s] after the previous one; `accel` is the
   * planned joint acceleration over that interval [rad/s^2], if known.
   */
  update(qm: readonly number[], dt: number, accel?: readonly number[]): void {
    if (!this.init || !(dt > 0)) {
      if (!this.init) this.reset(qm);
      return;
    }
    // Critically damped tracker s^2 + 2 wn s + wn^2, discretised: alpha = 2 wn dt, beta = (wn dt)^2,
    // kept inside the alpha-beta filter's stable region (alpha <= 1, beta < 4 - 2 alpha).
    const w = this.wn * dt;
    const alpha = Math.min(1, 2 * w);
    const beta = Math.min(1.9 - alpha, w * w);
    for (let i = 0; i < this.joints; i++) {
      const a = accel ? accel[i]! : 0;
      const pred = this.q[i]! + this.qd[i]! * dt + 0.5 * a * dt * dt;
      const r = qm[i]! - pred;
      this.q[i] = pred + alpha * r;
      this.qd[i] = this.qd[i]! + a * dt + (beta / dt) * r;
    }
  }
}
