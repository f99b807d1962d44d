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
import { asPair } from './types.js';

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
    if (n === 2) {
      this.rk4Two(t, q, qd, dt);
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

  /** RK4 unrolled for two joints: the common case, and twice as fast as the loops above. */
  private rk4Two(t: number, q: number[], qd: number[], dt: number): void {
    const f = this.f;
    const { k1a, k2a, k3a, k4a, qt, qdt } = this;
    const h = dt / 2;
    const qP = asPair(q);
    const qdP = asPair(qd);
    const k1aP = asPair(k1a);
    const k2aP = asPair(k2a);
    const k3aP = asPair(k3a);
    const k4aP = asPair(k4a);
    const q0 = qP[0];
    const q1 = qP[1];
    const v0 = qdP[0];
    const v1 = qdP[1];
    f(t, q, qd, k1a);
    const a10 = k1aP[0];
    const a11 = k1aP[1];
    const v20 = v0 + h * a10;
    const v21 = v1 + h * a11;
    qt[0] = q0 + h * v0;
    qt[1] = q1 + h * v1;
    qdt[0] = v20;
    qdt[1] = v21;
    f(t + h, qt, qdt, k2a);
    const a20 = k2aP[0];
    const a21 = k2aP[1];
    const v30 = v0 + h * a20;
    const v31 = v1 + h * a21;
    qt[0] = q0 + h * v20;
    qt[1] = q1 + h * v21;
    qdt[0] = v30;
    qdt[1] = v31;
    f(t + h, qt, qdt, k3a);
    const a30 = k3aP[0];
    const a31 = k3aP[1];
    const v40 = v0 + dt * a30;
    const v41 = v1 + dt * a31;
    qt[0] = q0 + dt * v30;
    qt[1] = q1 + dt * v31;
    qdt[0] = v40;
    qdt[1] = v41;
    f(t + dt, qt, qdt, k4a);
    const s = dt / 6;
    q[0] = q0 + s * (v0 + 2 * v20 + 2 * v30 + v40);
    q[1] = q1 + s * (v1 + 2 * v21 + 2 * v31 + v41);
    qd[0] = v0 + s * (a10 + 2 * a20 + 2 * a30 + k4aP[0]);
    qd[1] = v1 + s * (a11 + 2 * a21 + 2 * a31 + k4aP[1]);
  }
}
