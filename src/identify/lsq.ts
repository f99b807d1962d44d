/**
 * Least squares with sign constraints, its covariance and its conditioning, for the identification's
 * small dense problems (thousands of rows, about ten columns).
 *
 * ml-matrix does the dense linear algebra (Householder QR, SVD, inverse): it is the maintained
 * JavaScript matrix library, and an SVD is the right tool for a condition number and the one thing
 * here that should not be hand-written. Non-negative least squares is Lawson and Hanson's active-set
 * method (Solving Least Squares Problems, 1974, ch. 23), written here on the QR-reduced problem: with
 * A = Q R, ||A x - b||^2 = ||R x - Q^T b||^2 + const, so every inner solve is p x p.
 */
import { inverse, Matrix, QrDecomposition, SingularValueDecomposition } from 'ml-matrix';

/** The solution of a (constrained) least-squares problem. */
export interface LsqResult {
  /** The estimate, one per column. */
  x: number[];
  /** Columns whose constraint is active (the estimate sits on its bound, 0). */
  atBound: boolean[];
  /** Residual sum of squares. */
  rss: number;
  /** Rows used. */
  rows: number;
  /**
   * Covariance of x: s^2 (A_F^T A_F)^-1 over the free columns F with s^2 = rss / (rows - |F|);
   * rows and columns of bound parameters are 0.
   */
  covariance: number[][];
  /** Ratio of the largest to the smallest singular value of A. */
  condition: number;
  /** Singular values of A, largest first. */
  singularValues: number[];
}

/** Singular values of A (largest first) and their ratio. */
export function conditionNumber(A: Matrix): { condition: number; singularValues: number[] } {
  const svd = new SingularValueDecomposition(A, {
    computeLeftSingularVectors: false,
    computeRightSingularVectors: false,
    autoTranspose: true,
  });
  const s = svd.diagonal.slice().sort((a, b) => b - a);
  const min = s[s.length - 1]!;
  return { condition: min > 0 ? s[0]! / min : Infinity, singularValues: s };
}

/** Solves min ||R[:, cols] y - c|| for the listed columns (R is p x p upper triangular, full rank on them). */
function subsolve(R: Matrix, c: Matrix, cols: number[]): number[] {
  const sub = R.subMatrixColumn(cols);
  return new QrDecomposition(sub).solve(c).getColumn(0);
}

/** The unconstrained solution on the passive columns, 0 on the others (the inner solve of each step). */
function solvePassive(R: Matrix, c: Matrix, passive: readonly boolean[], p: number): number[] {
  const cols = passive.flatMap((on, k) => (on ? [k] : []));
  const s = new Array<number>(p).fill(0);
  if (cols.length) subsolve(R, c, cols).forEach((v, i) => (s[cols[i]!] = v));
  return s;
}

/** Gradient of -1/2 ||R x - c||^2 at x: w = R^T (c - R x). */
function gradient(R: Matrix, cv: readonly number[], x: readonly number[], p: number): number[] {
  const r = cv.map((ci, i) => {
    let s = ci;
    for (let k = i; k < p; k++) s -= R.get(i, k) * x[k]!;
    return s;
  });
  return x.map((_, k) => {
    let s = 0;
    for (let i = 0; i <= k; i++) s += R.get(i, k) * r[i]!;
    return s;
  });
}

/** The bound column whose gradient is largest above tol (the one to free next), or -1 when none is: the optimum. */
function enteringColumn(w: readonly number[], passive: readonly boolean[], tol: number, p: number): number {
  let t = -1;
  let best = tol;
  for (let k = 0; k < p; k++)
    if (!passive[k] && w[k]! > best) {
      best = w[k]!;
      t = k;
    }
  return t;
}

/** The inner loop: moves x towards the passive-set solution as far as stays feasible, returning columns that reach 0 to their bound. */
function restoreFeasibility(R: Matrix, c: Matrix, x: number[], passive: boolean[], cons: readonly boolean[], tol: number, p: number): void {
  for (let inner = 0; inner < 10 * p; inner++) {
    const s = solvePassive(R, c, passive, p);
    const bad = passive.flatMap((on, k) => (on && cons[k] && s[k]! <= 0 ? [k] : []));
    if (bad.length === 0) {
      s.forEach((v, k) => (x[k] = v));
      break;
    }
    let alpha = Infinity;
    for (const k of bad) alpha = Math.min(alpha, x[k]! / (x[k]! - s[k]!));
    for (let k = 0; k < p; k++) x[k]! += alpha * (s[k]! - x[k]!);
    for (let k = 0; k < p; k++) {
      if (passive[k] && cons[k] && x[k]! <= tol) {
        passive[k] = false;
        x[k] = 0;
      }
    }
  }
}

/** ||A x - b||^2, summed over the rows in order. */
function residualSumOfSquares(A: Matrix, b: readonly number[], x: number[]): number {
  const r = A.mmul(Matrix.columnVector(x)).getColumn(0);
  let rss = 0;
  for (let i = 0; i < A.rows; i++) rss += (b[i]! - r[i]!) ** 2;
  return rss;
}

/** s^2 (R_F^T R_F)^-1 on the free columns F (R_F^T R_F = A_F^T A_F), 0 elsewhere; all 0 when no degree of freedom is left. */
function freeCovariance(R: Matrix, free: number[], rss: number, m: number, p: number): number[][] {
  const covariance = Array.from({ length: p }, () => new Array<number>(p).fill(0));
  if (free.length > 0 && m > free.length) {
    const Rf = R.subMatrixColumn(free);
    const inv = inverse(Rf.transpose().mmul(Rf));
    const s2 = rss / (m - free.length);
    free.forEach((i, a) => free.forEach((j, bb) => (covariance[i]![j] = s2 * inv.get(a, bb))));
  }
  return covariance;
}

/**
 * min ||A x - b|| subject to x[k] >= 0 where `nonneg[k]` (default: every column). Lawson-Hanson:
 * the unconstrained columns start in the passive set and never leave it.
 */
export function nnls(A: Matrix, b: readonly number[], nonneg?: readonly boolean[]): LsqResult {
  const m = A.rows;
  const p = A.columns;
  if (b.length !== m) throw new RangeError(`"b" has ${b.length} rows, A has ${m}`);
  if (m < p) throw new RangeError(`least squares needs at least as many rows (${m}) as columns (${p})`);
  const cons = nonneg ?? new Array<boolean>(p).fill(true);
  const qr = new QrDecomposition(A);
  const R = qr.upperTriangularMatrix;
  const c = qr.orthogonalMatrix.transpose().mmul(Matrix.columnVector(b));
  const cv = c.getColumn(0);
  const x = new Array<number>(p).fill(0);
  const passive = cons.map((k) => !k);
  const tol = 1e-12 * Math.max(1, A.norm('frobenius')) * Math.max(1, Math.hypot(...cv));
  if (passive.some(Boolean)) solvePassive(R, c, passive, p).forEach((v, k) => (x[k] = v));
  for (let outer = 0; outer < 10 * p; outer++) {
    const t = enteringColumn(gradient(R, cv, x, p), passive, tol, p);
    if (t < 0) break;
    passive[t] = true;
    restoreFeasibility(R, c, x, passive, cons, tol, p);
  }
  const atBound = x.map((_, k) => cons[k]! && !passive[k]);
  const rss = residualSumOfSquares(A, b, x);
  const free = atBound.flatMap((bd, k) => (bd ? [] : [k]));
  const covariance = freeCovariance(R, free, rss, m, p);
  const { condition, singularValues } = conditionNumber(R);
  return { x, atBound, rss, rows: m, covariance, condition, singularValues };
}
