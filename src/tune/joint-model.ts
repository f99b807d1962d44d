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
export function fitJointModel(freqHz: readonly number[], P: readonly C[], coherence: readonly number[], known: { B: number; delayS: number }, V: (w: number) => C): JointModel {
  // Real parts: k - J w^2 = Re z, weighted least squares in (k, J); imaginary: b = Im z / w - 0.
  let s11 = 0, s12 = 0, s22 = 0, r1 = 0, r2 = 0, bw = 0, bs = 0;
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
