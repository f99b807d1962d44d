/**
 * Kinematics of the endpoint for the figures (analytic, no differentiation): its position and three
 * time derivatives from the joints', the columns they fill, and the square domains a path is drawn in.
 * Used by the run figure (figures.ts) and the trajectory figure (trajectory-figure.ts).
 */
import type { EndpointState } from '../model/trajectory.js';
import { isTwoLink, type ArmParams } from '../model/types.js';

/**
 * Endpoint position [m] and its first three time derivatives from the joint angles and theirs:
 * the endpoint is a sum of rotating link vectors r_i = L_i (cos th_i, sin th_i) with segment angles
 * th1 = a1, th2 = a1 + a2, and r' = th' R90 r, r'' = th'' R90 r - th'^2 r,
 * r''' = th''' R90 r - 3 th' th'' r - th'^3 R90 r (R90 (x, y) = (-y, x)).
 * Returns [x, y, vx, vy, ax, ay, jx, jy].
 */
export function endpointDerivatives(
  arm: ArmParams,
  q: readonly number[],
  qd: readonly number[],
  qdd: readonly number[],
  qddd: readonly number[],
): EndpointState {
  const links = isTwoLink(arm) ? [arm.L1, arm.L2] : [arm.L1];
  const out: EndpointState = [0, 0, 0, 0, 0, 0, 0, 0];
  let th = 0;
  let w = 0;
  let b = 0;
  let j = 0;
  links.forEach((L, i) => {
    th += q[i]!;
    w += qd[i]!;
    b += qdd[i]!;
    j += qddd[i]!;
    const x = L * Math.cos(th);
    const y = L * Math.sin(th);
    out[0] += x;
    out[1] += y;
    out[2] += -w * y;
    out[3] += w * x;
    out[4] += -b * y - w * w * x;
    out[5] += b * x - w * w * y;
    out[6] += -j * y - 3 * w * b * x + w * w * w * y;
    out[7] += j * x - 3 * w * b * y - w * w * w * x;
  });
  return out;
}

/** One column per entry of an EndpointState (x, y, vx, vy, ax, ay, jx, jy), one row per sample. */
export type EndpointColumns = [
  Float64Array,
  Float64Array,
  Float64Array,
  Float64Array,
  Float64Array,
  Float64Array,
  Float64Array,
  Float64Array,
];

export function endpointColumns(n: number): EndpointColumns {
  const c = (): Float64Array => new Float64Array(n);
  return [c(), c(), c(), c(), c(), c(), c(), c()];
}

/** Domains of equal span for x and y (so that a path keeps its shape in a square panel). */
export function equalDomains(xs: ArrayLike<number>, ys: ArrayLike<number>): [[number, number], [number, number]] {
  let x0 = Infinity;
  let x1 = -Infinity;
  let y0 = Infinity;
  let y1 = -Infinity;
  for (let i = 0; i < xs.length; i++) {
    const x = xs[i]!;
    const y = ys[i]!;
    if (Number.isFinite(x)) {
      x0 = Math.min(x0, x);
      x1 = Math.max(x1, x);
    }
    if (Number.isFinite(y)) {
      y0 = Math.min(y0, y);
      y1 = Math.max(y1, y);
    }
  }
  if (!Number.isFinite(x0) || !Number.isFinite(y0))
    return [
      [0, 1],
      [0, 1],
    ];
  const span = Math.max(x1 - x0, y1 - y0, 1e-6) * 1.1;
  const cx = (x0 + x1) / 2;
  const cy = (y0 + y1) / 2;
  const r6 = (v: number): number => Number(v.toPrecision(6));
  return [
    [r6(cx - span / 2), r6(cx + span / 2)],
    [r6(cy - span / 2), r6(cy + span / 2)],
  ];
}
