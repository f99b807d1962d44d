/**
 * The joint's response as the tune's PID sees it, from the torque it commands u [N m] to the angle
 * y [rad], about a pose with the other joint held:
 *
 *   P(s) = e^{-sT} / (J s^2 + (b + B) s + k - B e^{-sT} V(s))
 *
 * J the joint's effective inertia at the pose (the arm's M_a(q) diagonal, rotor inertia N^2 J_r
 * included), b its viscous friction, B = eta N^2 kt ke / R the motor's back-EMF damping, k the
 * gravity stiffness dG/dq at the pose, T the loop's delay (command applied at the next sample and
 * held a period, plus the board's latency), and V(s) the velocity estimator's response: the torque
 * is turned into duty with the back-EMF compensated from the estimated velocity (model/actuated.ts
 * motorDuty), applied T later. Pure math on numbers; the caller takes J, b, B, k from src/model.
 */
import { add, type C, div, expj, mul, sub } from './complex.js';

export interface JointModel {
  /** [kg m^2] */
  J: number;
  /** [N m s/rad] */
  b: number;
  /** [N m s/rad] */
  B: number;
  /** [N m/rad] */
  k: number;
  /** [s] */
  delayS: number;
}

/**
 * The alpha-beta velocity estimator's response V(e^{j w dt}) = v / q (control/estimator.ts, with its
 * gains alpha = min(1, 2 wn dt), beta = min(1.9 - alpha, (wn dt)^2)): the exact discrete transfer.
 */
export function estimatorResponse(w: number, bandwidthHz: number, dt: number): C {
  const wn = 2 * Math.PI * bandwidthHz * dt;
  const alpha = Math.min(1, 2 * wn);
  const beta = Math.min(1.9 - alpha, wn * wn);
  // x_k = A x_{k-1} + Bv q_k, x = [qhat, v]; A = [[1-a, (1-a) dt], [-b/dt, 1-b]], Bv = [a, b/dt]
  const zi = expj(-w * dt); // z^{-1}
  // (I - A z^-1) x = Bv q: solve the 2x2 complex system for v / q.
  const m11 = sub([1, 0], mul([1 - alpha, 0], zi));
  const m12 = mul([-(1 - alpha) * dt, 0], zi);
  const m21 = mul([beta / dt, 0], zi);
  const m22 = sub([1, 0], mul([1 - beta, 0], zi));
  const det = sub(mul(m11, m22), mul(m12, m21));
  // v = (m11 * b2 - m21 * b1) / det
  return div(sub(mul(m11, [beta / dt, 0]), mul(m21, [alpha, 0])), det);
}

/** P(j w) of the joint model; V the estimator's response at w. */
export function jointResponse(m: JointModel, w: number, V: C): C {
  const s: C = [0, w];
  const d = expj(-w * m.delayS);
  const den = sub(add([m.k - m.J * w * w, 0], mul(s, [m.b + m.B, 0])), mul(mul([m.B, 0], d), V));
  return div(d, den);
}

/**
 * Fits J, k (from the real parts) and b (from the imaginary parts) of the model to a measured
 * response, B and the delay known: z = e^{-jwT} / P + B e^{-jwT} V - j w B = (k - J w^2) + j w b.
 * Each frequency weighted by its coherence / (1 - coherence), relative to the size of the term.
 */
export function fitJointModel(
  freqHz: readonly number[],
  P: readonly C[],
  coherence: readonly number[],
  known: { B: number; delayS: number },
  V: (w: number) => C,
): JointModel {
  // Real parts: k - J w^2 = Re z, weighted least squares in (k, J); imaginary: b = Im z / w - 0. i indexes the bins.
  let s11 = 0,
    s12 = 0,
    s22 = 0,
    r1 = 0,
    r2 = 0,
    bw = 0,
    bs = 0;
  for (let i = 0; i < freqHz.length; i++) {
    const w = 2 * Math.PI * freqHz[i]!;
    const c = coherence[i]!;
    const wt = c / Math.max(1e-6, 1 - c);
    const d = expj(-w * known.delayS);
    const z = sub(add(div(d, P[i]!), mul(mul([known.B, 0], d), V(w))), [0, w * known.B]);
    // Relative weighting: divide the equation by w^2 (the inertia's size).
    const a1 = 1 / (w * w);
    const a2 = -1;
    const rhs = z[0] / (w * w);
    s11 += wt * a1 * a1;
    s12 += wt * a1 * a2;
    s22 += wt * a2 * a2;
    r1 += wt * a1 * rhs;
    r2 += wt * a2 * rhs;
    bw += wt;
    bs += (wt * z[1]) / w;
  }
  const det = s11 * s22 - s12 * s12;
  const k = (r1 * s22 - r2 * s12) / det;
  const J = (s11 * r2 - s12 * r1) / det;
  return { J, k, b: bs / bw, B: known.B, delayS: known.delayS };
}

/**
 * The joint inside the arm: the other joint is not rigid but held by its own controller, so the
 * joint under test sees the 2x2 linearised arm about the pose,
 *
 *   Z(s) q = e^{-sT} tau,  Z = M s^2 + K + diag((b_i + B_i) s - B_i e^{-sT} V(s)) + e^{-sT} diag(0 .. C_h(s) .. 0)
 *
 * (M the actuated mass matrix at the pose, K the gravity stiffness dG/dq, C_h the held joint's
 * controller), and P_jj = e^{-sT} (Z^-1)_jj. With one joint it is jointResponse's formula.
 */
export interface CoupledModel {
  /** [kg m^2], 1x1 or 2x2 */
  M: number[][];
  /** [N m/rad] */
  K: number[][];
  /** Viscous friction per joint [N m s/rad]. */
  b: number[];
  /** Back-EMF damping per joint [N m s/rad]. */
  B: number[];
  delayS: number;
}

/**
 * Joint j's diagonal entry of a CoupledModel's M or K (1x1 on a one-joint rig, 2x2 on a two-link arm):
 * checked, a joint the matrix does not have throws a RangeError naming it.
 */
export function diag(a: readonly (readonly number[])[], j: number, what = "the joint model's matrix"): number {
  const v = a[j]?.[j];
  if (v === undefined) throw new RangeError(`${what} is ${a.length}x${a.length}: it has no joint ${j + 1}`);
  return v;
}

/** P_jj(j w) with the estimator response V and the held joint's controller Ch (null: one joint). */
export function coupledResponse(m: CoupledModel, j: number, w: number, V: C, Ch: C | null): C {
  // M, K, b and B have a row per joint, one or two (Rig.joints): their indices keep a `!`.
  const s: C = [0, w];
  const d = expj(-w * m.delayS);
  const n = m.M.length;
  const z = (a: number, k: number): C => {
    let v: C = [m.K[a]![k]! - m.M[a]![k]! * w * w, 0];
    if (a === k) {
      v = sub(add(v, mul(s, [m.b[a]! + m.B[a]!, 0])), mul(mul([m.B[a]!, 0], d), V));
      if (a !== j && Ch) v = add(v, mul(d, Ch));
    }
    return v;
  };
  if (n === 1) return div(d, z(0, 0));
  const o = 1 - j;
  const det = sub(mul(z(0, 0), z(1, 1)), mul(z(0, 1), z(1, 0)));
  return div(mul(d, z(o, o)), det);
}

/** The coupled model with the masses (M and K) scaled by `mass`, joint j's viscous friction `b` and the delay. */
export function scaledModel(m: CoupledModel, j: number, mass: number, b: number, delayS: number): CoupledModel {
  return {
    M: m.M.map((r) => r.map((x) => x * mass)),
    K: m.K.map((r) => r.map((x) => x * mass)),
    b: m.b.map((x, i) => (i === j ? b : x)),
    B: m.B,
    delayS,
  };
}

/** The joint alone (the other locked), no gravity: for the preflight's bound. */
export function lockedModel(m: CoupledModel, j: number): CoupledModel {
  return { M: [[diag(m.M, j)]], K: [[0]], b: [m.b[j]!], B: [m.B[j]!], delayS: m.delayS };
}

/**
 * A fit of the rig's model to a measured response as plain data (a worker thread can be given it):
 * the velocity estimator's and the held joint's responses already evaluated at each frequency.
 */
export interface FitJob {
  nominal: CoupledModel;
  j: number;
  freqHz: readonly number[];
  P: readonly C[];
  coherence: readonly number[];
  delays: readonly number[];
  /** The velocity estimator's response at each frequency. */
  Vs: readonly C[];
  /** The held joint's PD at each frequency (null with one joint). */
  Chs: readonly (C | null)[];
}

export interface FitResult {
  model: CoupledModel;
  mass: number;
  b: number;
  cost: number;
}

/**
 * Fits the mass scale (0.5-2), joint j's viscous friction (0-2 N m s/rad) and the delay (the
 * `delays` given) of the rig's model to a measured response: a grid search, then a finer one about
 * the best point, on the squared log-ratio (magnitude and phase alike) weighted by the coherence.
 * 1.5-6 s of work on this machine: in real time it runs in a worker thread (realtime-compute.ts).
 */
export function fitCoupled(job: FitJob): FitResult {
  const { nominal, j, P, delays, Vs, Chs } = job;
  // i indexes the frequency bins (and the arrays mapped from them), j the model's joints (one or two).
  const ws = job.freqHz.map((f) => 2 * Math.PI * f);
  const wt = job.coherence.map((c) => c / Math.max(1e-6, 1 - c));
  const cost = (mass: number, b: number, T: number): number => {
    const m = scaledModel(nominal, j, mass, b, T);
    let e = 0;
    for (let i = 0; i < ws.length; i++) {
      const r = div(P[i]!, coupledResponse(m, j, ws[i]!, Vs[i]!, Chs[i] ?? null));
      e += wt[i]! * (Math.log(Math.hypot(r[0], r[1])) ** 2 + Math.atan2(r[1], r[0]) ** 2);
    }
    return e;
  };
  let best = { mass: 1, b: nominal.b[j]!, T: delays[0]!, c: Infinity };
  const search = (masses: number[], bs: number[], Ts: readonly number[]): void => {
    for (const mass of masses)
      for (const b of bs)
        for (const T of Ts) {
          const c = cost(mass, b, T);
          if (c < best.c) best = { mass, b, T, c };
        }
  };
  const range = (a: number, z: number, n: number): number[] => Array.from({ length: n }, (_, i) => a + ((z - a) * i) / (n - 1));
  search(range(0.5, 2, 31), range(0, 2, 41), delays);
  const c0 = best;
  const step = delays.length > 1 ? delays[1]! - delays[0]! : 0;
  search(range(c0.mass * 0.95, c0.mass * 1.05, 21), range(Math.max(0, c0.b - 0.05), c0.b + 0.05, 21), range(c0.T - step, c0.T + step, 11));
  const c1 = best;
  search(
    range(c1.mass * 0.99, c1.mass * 1.01, 11),
    range(Math.max(0, c1.b - 0.005), c1.b + 0.005, 11),
    range(c1.T - step / 5, c1.T + step / 5, 5),
  );
  return { model: scaledModel(nominal, j, best.mass, best.b, best.T), mass: best.mass, b: best.b, cost: best.c };
}
