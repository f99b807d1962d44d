/**
 * Fixed-step integration of q'' = f(t, q, q') for a system of n joints.
 *
 * - `rk4`: classical Runge-Kutta, 4th order; the default.
 * - `semi-implicit`: symplectic Euler (velocity first, then position with the new velocity); first
 *   order but its energy error stays bounded, so long runs do not blow up.
 * - `euler`: explicit Euler, as seed 001 integrates its double pendulum; kept for comparison: its
 *   energy grows without bound.
 *
 * The integrator owns its scratch arrays, so a step allocates nothing.
 */

export type IntegratorName = 'rk4' | 'semi-implicit' | 'euler';

/** The list of integrator names, for argument parsing. */
export const INTEGRATORS: readonly IntegratorName[] = ['rk4', 'semi-implicit', 'euler'];

/** Writes q''(t, q, q') into `out` [rad/s^2]. */
export type AccelerationFn = (t: number, q: readonly number[], qd: readonly number[], out: number[]) => void;

export class FixedStepIntegrator {
  private readonly k1v: number[];
  private readonly k2v: number[];
  private readonly k3v: number[];
  private readonly k4v: number[];
  private readonly k1a: number[];
  private readonly k2a: number[];
  private readonly k3a: number[];
  private readonly k4a: number[];
  private readonly qt: number[];
  private readonly qdt: number[];

  constructor(
    readonly n: number,
    readonly method: IntegratorName,
    private readonly f: AccelerationFn,
  ) {
    const z = (): number[] => new Array<number>(n).fill(0);
    this.k1v = z();
    this.k2v = z();
    this.k3v = z();
    this.k4v = z();
    this.k1a = z();
    this.k2a = z();
    this.k3a = z();
    this.k4a = z();
    this.qt = z();
    this.qdt = z();
  }

  /** Advances (q, qd) in place from t to t + dt [s]. */
  step(t: number, q: number[], qd: number[], dt: number): void {
    const n = this.n;
    const f = this.f;
    if (this.method === 'euler') {
      f(t, q, qd, this.k1a);
      for (let i = 0; i < n; i++) {
        q[i]! += dt * qd[i]!;
        qd[i]! += dt * this.k1a[i]!;
      }
      return;
    }
    if (this.method === 'semi-implicit') {
      f(t, q, qd, this.k1a);
      for (let i = 0; i < n; i++) {
        qd[i]! += dt * this.k1a[i]!;
        q[i]! += dt * qd[i]!;
      }
      return;
    }
    const { k1v, k2v, k3v, k4v, k1a, k2a, k3a, k4a, qt, qdt } = this;
    const h = dt / 2;
    for (let i = 0; i < n; i++) k1v[i] = qd[i]!;
    f(t, q, qd, k1a);
    for (let i = 0; i < n; i++) {
      qt[i] = q[i]! + h * k1v[i]!;
      qdt[i] = qd[i]! + h * k1a[i]!;
      k2v[i] = qdt[i]!;
    }
    f(t + h, qt, qdt, k2a);
    for (let i = 0; i < n; i++) {
      qt[i] = q[i]! + h * k2v[i]!;
      qdt[i] = qd[i]! + h * k2a[i]!;
      k3v[i] = qdt[i]!;
    }
    f(t + h, qt, qdt, k3a);
    for (let i = 0; i < n; i++) {
      qt[i] = q[i]! + dt * k3v[i]!;
      qdt[i] = qd[i]! + dt * k3a[i]!;
      k4v[i] = qdt[i]!;
    }
    f(t + dt, qt, qdt, k4a);
    const s = dt / 6;
    for (let i = 0; i < n; i++) {
      q[i]! += s * (k1v[i]! + 2 * k2v[i]! + 2 * k3v[i]! + k4v[i]!);
      qd[i]! += s * (k1a[i]! + 2 * k2a[i]! + 2 * k3a[i]! + k4a[i]!);
    }
  }
}
