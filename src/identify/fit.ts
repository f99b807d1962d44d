/**
 * The fit: from a run's ticks (measured angles, board times, the plan, the duties sent) to the base
 * parameters with their uncertainties.
 *
 * 1. Readings. Each fresh tick carries the encoder angles the board read at its time `boardT`, right
 *    when it applied the duty the host had sent `commandLag` ticks before (1 on the line protocol at
 *    the loop's rate: the reading of tick k reports the command of tick k-1). That duty stays in force
 *    until the next command applies. Runs of consecutive ticks while the loop drives the arm along a
 *    plan (track, hold, pause, release) make segments; a tick whose reading the loop never saw (it
 *    came late, behind a newer one) has its command's switch put evenly between the readings around.
 * 2. A uniform grid per segment at the median reading interval: angles and the plan interpolated
 *    linearly (the board's times jitter; the filter wants even steps), the duty averaged over each
 *    grid step (it is piecewise constant; sampling it would lead by half a step).
 * 3. Zero-phase low-pass of the angles (Butterworth, forward-backward: no lag), then velocities and
 *    accelerations by central differences of the filtered angles.
 * 4. Joint torques from the duties with the rig's nominal motor model (tau = eta N kt (duty Vs -
 *    ke N qd) / R, with the filtered qd), as the controller and the twin use it.
 * 5. The regressor Y at the filtered states, and the same regressor along the plan (the
 *    instruments); then Y, the instruments and the torques all through the same zero-phase filter
 *    (parallel filtering: filt(tau) = filt(Y) theta holds exactly since theta is constant), the
 *    filter's start-up at each end dropped, and decimation to about four samples per cutoff period so
 *    that the residuals are close to independent (the covariance assumes they are).
 * 6. A joint's equations near its velocity reversals are dropped: there the sign of the Coulomb term
 *    rests on a velocity the encoder's quantization blurs. Keeping them biases Coulomb friction low
 *    and viscous friction high (on the mock rig: fv1 +11 %, fc2 -6 % with least squares; +5 %, -2 %
 *    with instrumental variables; both within 1 % with the reversals dropped).
 * 7. Instrumental variables: Y is projected onto the span of the instruments, which the encoder
 *    noise and the feedback's reaction to it do not reach (least squares on a noisy regressor is
 *    biased; in closed loop the torque's noise is correlated with it too), then least squares
 *    weighted per joint by the residual level of an unweighted first pass, with the columns scaled to
 *    unit norm, and every base parameter constrained non-negative (masses, inertias, friction;
 *    Lawson-Hanson). Covariance s^2 (Yp^T Yp)^-1 on the free parameters, s from the residual with Y
 *    itself.
 */
import { Matrix, QrDecomposition } from 'ml-matrix';
import type { Rig } from '../config/load.js';
import { twoLinkArm } from '../config/load.js';
import { createActuatedArmModel, motorTorque, type ActuatedArmModel } from '../model/actuated.js';
import { asPair, J, mapPair, pairOf, type Joint, type Pair, type PairOf, type ReadonlyPair } from '../model/types.js';
import { F, LOOP_STATES, type LoopState, type TickObject } from '../telemetry/tick.js';
import { derivatives, zeroPhaseLowpass } from './filter.js';
import type { ReplayTick } from './replay.js';
import { conditionNumber, nnls } from './lsq.js';
import {
  BASE_PARAMETERS,
  modelBaseParameters,
  P,
  regressorConstants,
  regressorRows,
  toVector,
  type BaseParameterKey,
  type RegressorConstants,
} from './regressor.js';

/**
 * What the fit needs of one tick: what the twin's replay needs (the reading, the loop's velocity
 * estimates, which the fit does not use, and the duty sent; `dutyIn`, when present, is used instead of
 * `duty` `commandLag` ticks before), and the plan at the reading's time.
 */
export interface FitTick extends ReplayTick {
  q: ReadonlyPair;
  qd: ReadonlyPair;
  duty: ReadonlyPair;
  dutyIn?: ReadonlyPair;
  /** The plan at the reading's time: angles [rad], velocities [rad/s], accelerations [rad/s^2]. */
  des: { q: ReadonlyPair; qd: ReadonlyPair; qdd: ReadonlyPair };
}

/** A loop row (the Float64Array layout of src/telemetry/tick.ts) as a FitTick. */
export function fitTickFromRow(r: ArrayLike<number>): FitTick {
  return {
    i: r[F.i]!,
    state: LOOP_STATES[r[F.state]!] ?? 'idle',
    fresh: r[F.fresh] === 1,
    boardT: r[F.boardT]!,
    q: [r[F.q0]!, r[F.q1]!],
    qd: [r[F.qd0]!, r[F.qd1]!],
    duty: [r[F.duty0]!, r[F.duty1]!],
    ...(r[F.sample]! >= 0 ? { dutyIn: [r[F.dutyIn0]!, r[F.dutyIn1]!] } : {}),
    des: { q: [r[F.qDes0]!, r[F.qDes1]!], qd: [r[F.qdDes0]!, r[F.qdDes1]!], qdd: [r[F.qddDes0]!, r[F.qddDes1]!] },
  };
}

/** A recorded tick (an NDJSON tick line) as a FitTick. */
export function fitTickFromObject(
  o: Pick<TickObject, 'i' | 'state' | 'fresh' | 'boardT' | 'meas' | 'duty' | 'des' | 'sample' | 'dutyIn'>,
): FitTick {
  const din = o.dutyIn && (o.sample ?? -1) >= 0 ? { dutyIn: asPair(o.dutyIn, `tick ${o.i}: dutyIn`) } : {};
  const pair = (v: readonly number[], what: string): ReadonlyPair => asPair(v, `tick ${o.i}: ${what}`);
  const des = { q: pair(o.des.q, 'des.q'), qd: pair(o.des.qd, 'des.qd'), qdd: pair(o.des.qdd, 'des.qdd') };
  return {
    i: o.i,
    state: o.state,
    fresh: o.fresh === 1,
    boardT: o.boardT,
    q: pair(o.meas.q, 'meas.q'),
    qd: pair(o.meas.qd, 'meas.qd'),
    duty: pair(o.duty, 'duty'),
    ...din,
    des,
  };
}

export interface FitOptions {
  /** Cutoff of the zero-phase low-pass [Hz]. @default 10 */
  cutoffHz?: number;
  /** Butterworth order of one pass. @default 4 */
  order?: number;
  /**
   * Ticks from a command to the reading the board took when it applied it: 1 when the board answers
   * within the period (the line protocol at the loop's rate); 2 on a link slower than that. @default 1
   */
  commandLag?: number;
  /**
   * `iv`: instrumental variables with the regressor along the plan as instruments (unbiased under
   * encoder noise and feedback); `ls`: plain least squares on the measured regressor. @default 'iv'
   */
  estimator?: 'iv' | 'ls';
  /**
   * A joint's equations where its speed is below this [rad/s] (a reversal), and half a filter
   * period around, are left out: there the Coulomb term's sign rests on a velocity that encoder
   * quantization blurs, which biases Coulomb friction low and viscous high. 0 keeps them. @default 0.02
   */
  reversalSpeed?: number;
}

/** One identified parameter. */
export interface ParameterEstimate {
  value: number;
  /** Standard deviation [same unit]; 0 for a parameter on its bound or not excited. */
  std: number;
  unit: string;
  meaning: string;
  /** The non-negativity constraint is active (the estimate is 0). */
  atBound: boolean;
  /** The data do not excite it (its regressor column is zero): kept at the rig's nominal value. */
  fixed: boolean;
}

export interface FitResult {
  parameters: Record<BaseParameterKey, ParameterEstimate>;
  /** Estimates in BASE_PARAMETERS order. */
  theta: number[];
  /** Their covariance. */
  covariance: number[][];
  /** Condition number of the weighted regressor with unit-norm columns (independent of units). */
  condition: number;
  /** Condition number of the regressor as it is, in SI units (depends on the units chosen). */
  conditionRaw: number;
  /** RMS of the torque residual per joint [N m], and of the torque itself. */
  residualRmsNm: number[];
  torqueRmsNm: number[];
  /** Samples (after decimation) and seconds of data used. */
  samples: number;
  seconds: number;
  segments: number;
  commandLag: number;
  sampleHz: number;
  cutoffHz: number;
  estimator: 'iv' | 'ls';
}

/** Why a fit could not be made (too little data, nothing moved). */
export class FitError extends Error {
  override readonly name = 'FitError';
}

/** States in which the host sends duties and the plan (the instrument) is meaningful. */
const DRIVEN: ReadonlySet<LoopState> = new Set(['hold', 'track', 'paused', 'release']);

interface Segment {
  /** Reading times [s] and angles per joint. */
  t: number[];
  q: PairOf<number[]>;
  /** The plan at t[k]: angles, velocities, accelerations per joint. */
  dq: PairOf<number[]>;
  dqd: PairOf<number[]>;
  dqdd: PairOf<number[]>;
  /** The duty per joint in force from sw[k] to sw[k + 1]. */
  sw: number[];
  duty: PairOf<number[]>;
  /** Row of the newest reading, and the rows since without one. */
  lastRow: number;
  missing: number;
}

/** At most this many readings in a row may be missing inside a segment. */
const MAX_MISSING = 5;

/**
 * Cuts the ticks into segments of consecutive ticks in a driven state, each with its readings and the
 * duty in force between them. A tick without a fresh reading (the reading came late and the loop
 * kept only the newer one) leaves the moment its command applied unseen: it is put evenly between
 * the readings around it.
 */
function segments(ticks: readonly FitTick[], lag: number): Segment[] {
  const out: Segment[] = [];
  let cur: Segment | undefined;
  const close = (): void => {
    if (cur && cur.t.length > 1) out.push(cur);
    cur = undefined;
  };
  for (let r = 0; r < ticks.length; r++) {
    const k = ticks[r]!;
    const prev = ticks[r - 1];
    if (cur && (!prev || k.i !== prev.i + 1 || !DRIVEN.has(k.state))) close();
    if (!DRIVEN.has(k.state)) continue;
    if (!k.fresh) {
      if (cur && ++cur.missing > MAX_MISSING) close();
      continue;
    }
    const src = ticks[r - lag];
    let ok = src !== undefined && k.i - src.i === lag;
    for (let j = r - lag; ok && j < r; j++) ok = DRIVEN.has(ticks[j]!.state);
    if (!ok) {
      close();
      continue;
    }
    const lastT = cur ? cur.t[cur.t.length - 1]! : -Infinity;
    if (cur && !(k.boardT > lastT && k.boardT - lastT <= 0.1)) close();
    if (cur && cur.missing > 0) {
      const m = cur.missing + 1;
      for (let p = 1; p < m; p++) {
        cur.sw.push(lastT + ((k.boardT - lastT) * p) / m);
        const d = ticks[cur.lastRow + p - lag]!.duty;
        for (const j of J) cur.duty[j].push(d[j]);
      }
    }
    if (!cur) cur = { t: [], q: [[], []], dq: [[], []], dqd: [[], []], dqdd: [[], []], sw: [], duty: [[], []], lastRow: r, missing: 0 };
    cur.t.push(k.boardT);
    cur.sw.push(k.boardT);
    for (const j of J) {
      cur.q[j].push(k.q[j]);
      cur.duty[j].push((k.dutyIn ?? src!.duty)[j]);
      cur.dq[j].push(k.des.q[j]);
      cur.dqd[j].push(k.des.qd[j]);
      cur.dqdd[j].push(k.des.qdd[j]);
    }
    cur.lastRow = r;
    cur.missing = 0;
  }
  close();
  return out;
}

/**
 * Means of the piecewise-constant signal v (v[k] from t[k] to t[k + 1], v[last] after) over the
 * windows [t0 + j h - h/2, t0 + j h + h/2], j = 0..n-1 (v[0] before t[0]).
 */
function zohMeans(t: readonly number[], v: readonly number[], t0: number, h: number, n: number): Float64Array {
  const out = new Float64Array(n);
  let k = 0;
  for (let j = 0; j < n; j++) {
    const a = t0 + (j - 0.5) * h;
    const b = a + h;
    while (k + 1 < t.length && t[k + 1]! <= a) k++;
    let acc = 0;
    let from = a;
    let m = k;
    while (from < b) {
      const until = m + 1 < t.length ? Math.min(b, t[m + 1]!) : b;
      acc += v[m]! * (until - from);
      from = until;
      if (m + 1 < t.length) m++;
      else break;
    }
    out[j] = acc / h;
  }
  return out;
}

function median(a: number[]): number {
  const s = a.slice().sort((x, y) => x - y);
  return s[Math.floor(s.length / 2)]!;
}

/** Filtered, decimated equations: rows of Y and of the instruments Z (2 per sample), torques. */
interface Equations {
  Y: number[][];
  Z: number[][];
  tau: number[];
  joint: Joint[];
  samples: number;
  seconds: number;
  segments: number;
  sampleHz: number;
}

/** A segment's angles and plan (angles, speeds, accelerations) linearly interpolated on the grid t0 + j h, j < n. */
type Grid = PairOf<Float64Array>;

function onUniformGrid(s: Segment, h: number, n: number): { qg: Grid; pq: Grid; pqd: Grid; pqdd: Grid } {
  const grid = (): Grid => [new Float64Array(n), new Float64Array(n)];
  const out = { qg: grid(), pq: grid(), pqd: grid(), pqdd: grid() };
  let k = 0;
  for (let j = 0; j < n; j++) {
    const t = s.t[0]! + j * h;
    while (k + 1 < s.t.length - 1 && s.t[k + 1]! <= t) k++;
    const t0 = s.t[k]!;
    const t1 = s.t[k + 1]!;
    const u = t1 > t0 ? Math.min(1, Math.max(0, (t - t0) / (t1 - t0))) : 0;
    for (const i of J) {
      const lerp = (a: number[]): number => a[k]! + u * (a[k + 1]! - a[k]!);
      out.qg[i][j] = lerp(s.q[i]);
      out.pq[i][j] = lerp(s.dq[i]);
      out.pqd[i][j] = lerp(s.dqd[i]);
      out.pqdd[i][j] = lerp(s.dqdd[i]);
    }
  }
  return out;
}

/** Per joint, 1 where its speed [rad/s] is below `reversal`, widened by `reach` grid points each side. */
function nearReversals(speeds: Readonly<Grid>, reversal: number, reach: number): PairOf<Uint8Array> {
  return mapPair(speeds, (v) => {
    const n = v.length;
    const near = new Uint8Array(n);
    for (let j = 0; j < n; j++) {
      if (Math.abs(v[j]!) < reversal) for (let l = Math.max(0, j - reach); l <= Math.min(n - 1, j + reach); l++) near[l] = 1;
    }
    return near;
  });
}

/** A run's driven readings on a uniform grid: per segment, its start [s], angles, duties (each step's mean) and plan. */
export interface GriddedSegment {
  t0: number;
  n: number;
  q: PairOf<Float64Array>;
  duty: PairOf<Float64Array>;
  plan: { q: PairOf<Float64Array>; qd: PairOf<Float64Array>; qdd: PairOf<Float64Array> };
}

/** The median reading interval [s] over the driven segments; too few readings to fit is a FitError. */
function medianInterval(segs: readonly { t: ArrayLike<number> }[]): number {
  const allDt: number[] = [];
  for (const s of segs) for (let k = 1; k < s.t.length; k++) allDt.push(s.t[k]! - s.t[k - 1]!);
  if (allDt.length < 10)
    throw new FitError('the recording has no run of consecutive readings with the motors driven along a plan: nothing to fit');
  return median(allDt);
}

/** The ticks' driven segments on a uniform grid at the median reading interval `h` [s] (steps 1-2 of the module comment). */
export function griddedSegments(ticks: readonly FitTick[], lag = 1): { h: number; segments: GriddedSegment[] } {
  const segs = segments(ticks, lag);
  const h = medianInterval(segs);
  const out = segs.map((s) => {
    const n = Math.floor((s.t[s.t.length - 1]! - s.t[0]!) / h) + 1;
    const g = onUniformGrid(s, h, n);
    const duty: PairOf<Float64Array> = [zohMeans(s.sw, s.duty[0], s.t[0]!, h, n), zohMeans(s.sw, s.duty[1], s.t[0]!, h, n)];
    return { t0: s.t[0]!, n, q: g.qg, duty, plan: { q: g.pq, qd: g.pqd, qdd: g.pqdd } };
  });
  return { h, segments: out };
}

/**
 * On a segment's uniform grid of `n` points: the regressor's rows from the filtered angles `qf` and
 * their derivatives `dv`, the instruments' from the plan, and the motor torque from the duty `dg`.
 */
function gridRegressors(
  model: ActuatedArmModel,
  c: RegressorConstants,
  qf: Grid,
  dv: PairOf<{ d1: Float64Array; d2: Float64Array }>,
  dg: Grid,
  plan: { pq: Grid; pqd: Grid; pqdd: Grid },
  n: number,
): { cols: Float64Array[]; inst: Float64Array[]; tq: Grid } {
  const rows = new Array<number>(2 * P).fill(0);
  const cols = Array.from({ length: 2 * P }, () => new Float64Array(n));
  const inst = Array.from({ length: 2 * P }, () => new Float64Array(n));
  const tq: Grid = [new Float64Array(n), new Float64Array(n)];
  const q: Pair = [0, 0];
  const qd: Pair = [0, 0];
  const qdd: Pair = [0, 0];
  for (let j = 0; j < n; j++) {
    for (const i of J) {
      q[i] = qf[i][j]!;
      qd[i] = dv[i].d1[j]!;
      qdd[i] = dv[i].d2[j]!;
      tq[i][j] = motorTorque(model, i, dg[i][j]!, qd[i]);
    }
    regressorRows(c, q, qd, qdd, rows);
    for (let r = 0; r < 2 * P; r++) cols[r]![j] = rows[r]!;
    const at = (g: Grid): Pair => pairOf((i) => g[i][j]!);
    regressorRows(c, at(plan.pq), at(plan.pqd), at(plan.pqdd), rows);
    for (let r = 0; r < 2 * P; r++) inst[r]![j] = rows[r]!;
  }
  return { cols, inst, tq };
}

/** The filtered rows at `at` (every `step`-th grid point between the filter's edges) into `eq`, but a joint's rows `near` its reversals. */
function takeRows(
  eq: Equations,
  colsF: Float64Array[],
  instF: Float64Array[],
  tqF: Grid,
  near: PairOf<Uint8Array>,
  at: { from: number; to: number; step: number },
): void {
  for (let j = at.from; j < at.to; j += at.step) {
    for (const i of J) {
      if (near[i][j]) continue;
      const y = new Array<number>(P);
      const z = new Array<number>(P);
      for (let p = 0; p < P; p++) {
        y[p] = colsF[i * P + p]![j]!;
        z[p] = instF[i * P + p]![j]!;
      }
      eq.Y.push(y);
      eq.Z.push(z);
      eq.tau.push(tqF[i][j]!);
      eq.joint.push(i);
    }
    eq.samples++;
  }
}

function equations(
  model: ActuatedArmModel,
  ticks: readonly FitTick[],
  lag: number,
  cutoffHz: number,
  order: number,
  reversal: number,
  c: RegressorConstants,
): Equations {
  const segs = segments(ticks, lag);
  const h = medianInterval(segs);
  const fs = 1 / h;
  if (!(cutoffHz < 0.4 * fs))
    throw new FitError(
      `the cutoff ${cutoffHz} Hz is too high for readings at ${fs.toFixed(0)} Hz (keep it below ${(0.4 * fs).toFixed(0)} Hz)`,
    );
  const edge = Math.ceil((3 * fs) / cutoffHz);
  const decim = Math.max(1, Math.floor(fs / (4 * cutoffHz)));
  const eq: Equations = { Y: [], Z: [], tau: [], joint: [], samples: 0, seconds: 0, segments: 0, sampleHz: fs };
  const lowpass = (x: ArrayLike<number>): Float64Array => zeroPhaseLowpass(x, cutoffHz, fs, order);
  for (const s of segs) {
    const n = Math.floor((s.t[s.t.length - 1]! - s.t[0]!) / h) + 1;
    if (n <= 2 * edge + 4 * decim) continue;
    eq.segments++;
    // Uniform grid: angles and the plan interpolated, duty averaged.
    const grid = (): Grid => [new Float64Array(n), new Float64Array(n)];
    const { qg, pq, pqd, pqdd } = onUniformGrid(s, h, n);
    const dg = grid();
    // The duty is piecewise constant, switching at the readings: its value for grid point j is its
    // mean over [t_j - h/2, t_j + h/2] (taking the value just after t_j would lead by half a step).
    for (const i of J) dg[i].set(zohMeans(s.sw, s.duty[i], s.t[0]!, h, n));
    const qf = mapPair(qg, lowpass);
    const dv = mapPair(qf, (x) => derivatives(x, h));
    // Regressor, instruments and torque on the grid, then all through the same filter.
    const { cols, inst, tq } = gridRegressors(model, c, qf, dv, dg, { pq, pqd, pqdd }, n);
    // A joint's rows near its velocity reversals are left out (see the module comment): where |qd| is
    // below `reversal`, widened by half the filter's reach.
    const near = nearReversals(
      mapPair(dv, (d) => d.d1),
      reversal,
      Math.ceil((0.5 * fs) / cutoffHz),
    );
    const colsF = cols.map(lowpass);
    const instF = inst.map(lowpass);
    const tqF = mapPair(tq, lowpass);
    takeRows(eq, colsF, instF, tqF, near, { from: edge, to: n - edge, step: decim });
    eq.seconds += (n - 2 * edge) * h;
  }
  if (eq.samples < 4 * P) {
    throw new FitError(
      `only ${eq.samples} usable samples after filtering (${eq.seconds.toFixed(1)} s of data): record a longer run ` +
        `(at least ${Math.ceil((4 * P) / (4 * cutoffHz) + 6 / cutoffHz)} s of motion along a trajectory)`,
    );
  }
  return eq;
}

type Solved = Omit<FitResult, 'commandLag' | 'sampleHz' | 'cutoffHz' | 'parameters' | 'estimator'> & {
  fixed: boolean[];
  atBound: boolean[];
};

/**
 * Weighted, column-scaled, non-negative least squares on the equations; with `iv`, instrumental
 * variables (two-stage least squares): the regressor is first projected onto the span of the
 * instruments (the regressor along the plan), which the encoder noise and the feedback's reaction to
 * it do not reach, then the constrained fit is made on the projection.
 */
/** RMS of `x` over the rows of each of the two joints (`joint[r]` is row r's joint). */
function jointRms(x: readonly number[], joint: readonly Joint[]): Pair {
  return pairOf((j) => {
    let s = 0;
    let n = 0;
    for (let r = 0; r < x.length; r++)
      if (joint[r] === j) {
        s += x[r]! ** 2;
        n++;
      }
    return Math.sqrt(s / Math.max(1, n));
  });
}

/** One (weighted) least-squares fit of the free columns: the regressor's fit and what it knows of itself. */
interface FreeFit {
  x: number[];
  atBound: boolean[];
  cov: number[][];
  condition: number;
}

/**
 * The free columns fitted to `b0` with each row weighted by its joint's `w`: columns scaled to unit
 * norm, projected on the instruments when `iv`, solved with the bounds (nnls), the covariance scaled by
 * the structural residuals (with the regressor itself, not its projection).
 */
function fitFree(eq: Equations, free: readonly number[], b0: readonly number[], w: ReadonlyPair, iv: boolean): FreeFit {
  const m = eq.Y.length;
  const nf = free.length;
  const A = new Matrix(m, nf);
  const Zm = new Matrix(m, nf);
  const b = new Array<number>(m);
  for (let r = 0; r < m; r++) {
    const wr = w[eq.joint[r]!];
    free.forEach((p, a) => {
      A.set(r, a, wr * eq.Y[r]![p]!);
      Zm.set(r, a, wr * eq.Z[r]![p]!);
    });
    b[r] = wr * b0[r]!;
  }
  const scale = free.map((_, a) => Math.hypot(...A.getColumn(a)) || 1);
  for (let r = 0; r < m; r++) for (let a = 0; a < nf; a++) A.set(r, a, A.get(r, a) / scale[a]!);
  const condition = conditionNumber(A).condition;
  let design = A;
  if (iv) {
    const Q = new QrDecomposition(Zm).orthogonalMatrix;
    design = Q.mmul(Q.transpose().mmul(A));
  }
  const sol = nnls(design, b);
  // Structural residuals (with the regressor itself, not its projection) for the noise level.
  const pred = A.mmul(Matrix.columnVector(sol.x)).getColumn(0);
  let rss = 0;
  for (let r = 0; r < m; r++) rss += (b[r]! - pred[r]!) ** 2;
  const k = sol.rss > 0 ? rss / sol.rss : 1;
  return {
    x: sol.x.map((z, a) => z / scale[a]!),
    atBound: sol.atBound,
    cov: sol.covariance.map((row, a) => row.map((v, bb) => (k * v) / (scale[a]! * scale[bb]!))),
    condition,
  };
}

/** Each joint's RMS torque residual [N m] of the free columns' values `x` against `b0`. */
function freeResidualRms(eq: Equations, free: readonly number[], b0: readonly number[], x: readonly number[]): Pair {
  const ss: Pair = [0, 0];
  const nn: Pair = [0, 0];
  for (let r = 0; r < eq.Y.length; r++) {
    let pred = 0;
    free.forEach((p, a) => (pred += eq.Y[r]![p]! * x[a]!));
    const j = eq.joint[r]!;
    ss[j] += (b0[r]! - pred) ** 2;
    nn[j]++;
  }
  return mapPair(ss, (s, j) => Math.sqrt(s / Math.max(1, nn[j])));
}

function solve(eq: Equations, thetaNominal: readonly number[], iv: boolean): Solved {
  const m = eq.Y.length;
  // Columns the data do not excite (a horizontal arm has no gravity columns) keep the nominal value.
  const colNorm = Array.from({ length: P }, (_, p) => Math.sqrt(eq.Y.reduce((s, r) => s + r[p]! ** 2, 0)));
  const maxNorm = Math.max(...colNorm);
  const fixed = colNorm.map((v) => !(v > 1e-9 * maxNorm));
  const free = fixed.flatMap((f, p) => (f ? [] : [p]));
  const nf = free.length;
  const b0 = eq.tau.map((t, r) => t - fixed.reduce((s, f, p) => (f ? s + eq.Y[r]![p]! * thetaNominal[p]! : s), 0));
  const fitWith = (w: ReadonlyPair): FreeFit => fitFree(eq, free, b0, w, iv);
  const residualRms = (x: number[]): Pair => freeResidualRms(eq, free, b0, x);
  // First pass unweighted, for each joint's residual level; then weighted by its inverse.
  const sigma = mapPair(residualRms(fitWith([1, 1]).x), (s) => Math.max(s, 1e-9));
  const second = fitWith(mapPair(sigma, (s) => 1 / s));
  const theta = thetaNominal.slice();
  free.forEach((p, a) => (theta[p] = second.x[a]!));
  const covariance = Array.from({ length: P }, () => new Array<number>(P).fill(0));
  free.forEach((p, a) => free.forEach((q, bb) => (covariance[p]![q] = second.cov[a]![bb]!)));
  const atBound = new Array<boolean>(P).fill(false);
  free.forEach((p, a) => (atBound[p] = second.atBound[a]!));
  const raw = new Matrix(m, nf);
  for (let r = 0; r < m; r++) free.forEach((p, a) => raw.set(r, a, eq.Y[r]![p]!));
  const torqueRms = jointRms(eq.tau, eq.joint);
  return {
    theta,
    covariance,
    condition: second.condition,
    conditionRaw: conditionNumber(raw).condition,
    residualRmsNm: residualRms(second.x),
    torqueRmsNm: torqueRms,
    samples: eq.samples,
    seconds: eq.seconds,
    segments: eq.segments,
    fixed,
    atBound,
  };
}

/**
 * Fits the base parameters of `rig`'s arm to a run's ticks. Throws a FitError when the data cannot
 * give a fit (no driven motion, too short).
 */
export function fitTicks(rig: Rig, ticks: readonly FitTick[], o: FitOptions = {}): FitResult {
  twoLinkArm(rig); // refuses a one-link rig, naming the file
  const cutoffHz = o.cutoffHz ?? 10;
  const order = o.order ?? 4;
  const commandLag = o.commandLag ?? 1;
  const estimator = o.estimator ?? 'iv';
  if (!(Number.isInteger(commandLag) && commandLag >= 1))
    throw new RangeError(`"commandLag" must be a whole number of ticks >= 1, got ${commandLag}`);
  const model = createActuatedArmModel(rig);
  const c = regressorConstants(model);
  const nominal = toVector(modelBaseParameters(model));
  const eq = equations(model, ticks, commandLag, cutoffHz, order, o.reversalSpeed ?? 0.02, c);
  const s = solve(eq, nominal, estimator === 'iv');
  const parameters = Object.fromEntries(
    BASE_PARAMETERS.map((b, p) => [
      b.key,
      {
        value: s.theta[p]!,
        std: Math.sqrt(Math.max(0, s.covariance[p]![p]!)),
        unit: b.unit,
        meaning: b.meaning,
        atBound: s.atBound[p]!,
        fixed: s.fixed[p]!,
      },
    ]),
  ) as Record<BaseParameterKey, ParameterEstimate>;
  return {
    parameters,
    theta: s.theta,
    covariance: s.covariance,
    condition: s.condition,
    conditionRaw: s.conditionRaw,
    residualRmsNm: s.residualRmsNm,
    torqueRmsNm: s.torqueRmsNm,
    samples: s.samples,
    seconds: s.seconds,
    segments: s.segments,
    commandLag,
    sampleHz: eq.sampleHz,
    cutoffHz,
    estimator,
  };
}
