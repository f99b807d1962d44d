/**
 * Joint velocity from encoder angles: an alpha-beta tracking filter per joint. It predicts the angle
 * from the last estimate, corrects position and velocity by the innovation, and takes dt from the
 * board's timestamps, so quantized counts and jittery arrival times do not become velocity spikes.
 * The gains come from the bandwidth: a critically damped second-order tracker at `bandwidthHz`.
 *
 * The prediction uses the planned acceleration when it is given (an alpha-beta-gamma filter whose
 * acceleration is known rather than estimated): a plain tracker lags an accelerating joint by
 * acceleration / wn^2, and that lag, times the D gain, would be a torque error of its own.
 *
 * One- and two-link rigs alike (`joints`): the per-joint arrays are indexed in loops over the joints,
 * so an index keeps its `!` (they are not Pairs).
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
    this.q = new Array<number>(joints).fill(0);
    this.qd = new Array<number>(joints).fill(0);
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

/**
 * Joint velocity from angles with the arm's model (the loop feeds it the tracker's angle: loop.ts says
 * why): a per-joint extended state observer
 * (Han's ESO; in discrete time an alpha-beta-gamma tracker whose acceleration is the model's under
 * the duty in force, plus an estimated unmodelled acceleration `disturbance` held constant between
 * samples). What the model explains (the motors' torque, back-EMF, gravity, friction: the law's own
 * spring and damper among them) moves the estimate without lag; only what it does not (a hand's push)
 * is found from the encoders, and a constant one is found with no steady lag (the third state).
 * The gains put the three poles of the error at z = r = exp(-wn dt): alpha = 1 - r^3,
 * beta = 3/2 (1 - r)^2 (1 + r), gamma = (1 - r)^3, for the prediction q + qd dt + a dt^2 / 2,
 * qd + a dt and the correction q += alpha e, qd += beta e / dt, d += gamma e / dt^2.
 *
 * Impedance mode's damper reads it (impedance.ts): behind the 25 Hz tracker above, a push at 200 N/m
 * along the standard mock's light direction settled 23 % faster than its damping ratio asks (the
 * tracker's velocity lags 2 / wn = 12.7 ms, a negative mass D 2 / wn against the damper: a continuous
 * spring-damper whose damper reads the velocity 12.7 ms late reaches half its deflection in 45 ms
 * against 57); on this estimate at 30 Hz, 13 % (virtual time, bench `--only impedance`).
 */
export class ModelAidedEstimator {
  readonly q: number[];
  readonly qd: number[];
  /** The unmodelled joint acceleration [rad/s^2]. */
  readonly disturbance: number[];
  private init = false;
  private readonly wn: number;
  private readonly accel: number[];

  constructor(
    readonly joints: number,
    bandwidthHz: number,
    /** Writes the model's joint accelerations at (q, qd) under `duty` into `out` [rad/s^2]. */
    private readonly model: (q: readonly number[], qd: readonly number[], duty: readonly number[], out: number[]) => void,
  ) {
    const z = (): number[] => new Array<number>(joints).fill(0);
    this.q = z();
    this.qd = z();
    this.disturbance = z();
    this.accel = z();
    this.wn = 2 * Math.PI * bandwidthHz;
  }

  /** Starts at `q` [rad] with `qd` [rad/s] and no disturbance. */
  reset(q: readonly number[], qd: readonly number[]): void {
    for (let i = 0; i < this.joints; i++) {
      this.q[i] = q[i]!;
      this.qd[i] = qd[i]!;
      this.disturbance[i] = 0;
    }
    this.init = true;
  }

  /** Updates with a measured angle `qm` [rad] taken `dt` [s] after the previous one, `duty` in force over it. */
  update(qm: readonly number[], dt: number, duty: readonly number[]): void {
    if (!this.init) {
      this.reset(qm, this.qd.fill(0));
      return;
    }
    if (!(dt > 0)) return;
    if (dt > 0.5) {
      // A gap in the data (a lost link, a paused run): start again from the measurement.
      this.reset(qm, this.qd.fill(0));
      return;
    }
    this.model(this.q, this.qd, duty, this.accel);
    const r = Math.exp(-this.wn * dt);
    const alpha = 1 - r * r * r;
    const beta = 1.5 * (1 - r) * (1 - r) * (1 + r);
    const gamma = (1 - r) * (1 - r) * (1 - r);
    for (let i = 0; i < this.joints; i++) {
      const a = Number.isFinite(this.accel[i]!) ? this.accel[i]! + this.disturbance[i]! : this.disturbance[i]!;
      const pred = this.q[i]! + this.qd[i]! * dt + 0.5 * a * dt * dt;
      const e = qm[i]! - pred;
      this.q[i] = pred + alpha * e;
      this.qd[i] = this.qd[i]! + a * dt + (beta / dt) * e;
      this.disturbance[i]! += (gamma / (dt * dt)) * e;
    }
  }
}
