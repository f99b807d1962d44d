/**
 * Figures of runs and trajectories, as vega-lite specifications rendered headless by vega (no
 * browser, no canvas): seed 002's grid of angle, velocity, acceleration and jerk (joints and
 * endpoint), the endpoint path, the twin's residual against its alarm threshold, and the torques.
 * The trajectory figure (a plan's own curves) is in trajectory-figure.ts; this file has the run's.
 *
 * What the curves are (all on a uniform grid of loop time at the loop rate, by linear interpolation,
 * then thinned to at most `maxPoints` points per curve for drawing):
 * - desired: the plan at the moment of each reading (what the loop compares the reading with), at its
 *   tick's time; its angle, velocity and acceleration are recorded, its jerk is the derivative of the
 *   recorded acceleration by a cubic Savitzky-Golay filter over `smoothS`.
 * - measured: the encoder angle of each fresh reading and the estimator's velocity, as recorded, at
 *   the time the board took the reading (its timestamp, see signal.ts readingTimes); acceleration
 *   and jerk are derivatives of the measured angle by a cubic Savitzky-Golay filter (zero lag) over
 *   `smoothS`, and `JERK_WINDOW_FACTOR` times that for the jerk.
 * - twin: its recorded angle and velocity (it steps on each reading), acceleration and jerk by the
 *   same filters as measured, so that the two compare like for like.
 * - endpoint: the chain rule (endpointDerivatives) on each curve's joint angles and derivatives.
 */
import type { TopLevelSpec } from 'vega-lite';
import type { Rig } from '../config/load.js';
import { LOOP_STATES, PHASES, type TickField } from '../telemetry/tick.js';
import type { EndpointState } from '../model/trajectory.js';
import { isTwoLink, type ArmParams } from '../model/types.js';
import type { LoadedRecording } from './read.js';
import {
  ALARM_COLOR,
  figure,
  panel,
  pointsOf,
  renderHtml,
  renderSvg,
  robustRange,
  round,
  STYLES,
  type Json,
  type Point,
  type SeriesStyle,
} from './plot-panels.js';
import { readingTimes, resampleLinear, savitzkyGolay, strideIndices, uniformGrid } from './signal.js';

const DEG = 180 / Math.PI;

/** The jerk of a measured curve is filtered over this many times the acceleration's window. */
export const JERK_WINDOW_FACTOR = 2;

/** The tick fields a run figure needs. */
export const PLOT_FIELDS: readonly TickField[] = [
  't',
  'trajT',
  'state',
  'phase',
  'fresh',
  'boardT',
  'qDes0',
  'qDes1',
  'qdDes0',
  'qdDes1',
  'qddDes0',
  'qddDes1',
  'q0',
  'q1',
  'qd0',
  'qd1',
  'twinQ0',
  'twinQ1',
  'twinQd0',
  'twinQd1',
  'res0',
  'res1',
  'tauFf0',
  'tauFf1',
  'tauPid0',
  'tauPid1',
  'tauCmd0',
  'tauCmd1',
];

/** The run figure's series styles (see plot-panels.ts STYLES: one colour per meaning). */
export const SERIES = { desired: STYLES.desired, measured: STYLES.measured, twin: STYLES.twin, measuredB: STYLES.measuredB } as const;

export { renderHtml, renderSvg };

// ---------------------------------------------------------------------------------------------
// Kinematics of the endpoint, for the trajectory figure (analytic, no differentiation)

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

// ---------------------------------------------------------------------------------------------
// The run figure

/** Options of the run figure. */
export interface RunFigureOptions {
  title: string;
  /** Window of the smoothing differentiator for measured and twin acceleration and jerk [s]. @default 0.08 */
  smoothS?: number;
  /** Points per curve at most. @default 600 */
  maxPoints?: number;
  /** Another run's readings on this run's loop time (see compare.ts alignRuns), drawn as 'measured B'. */
  other?: { t: Float64Array; q: Float64Array[] };
  /** Draw only this window of loop time [s] (the curves are filtered over the whole run first, so the window's edges are not filter edges). */
  from?: number;
  to?: number;
}

/** The curves of a run on a uniform grid (angles in rad). */
export interface RunCurves {
  t: Float64Array;
  /** Per series, per joint: angle, velocity, acceleration, jerk. */
  joint: Record<string, { q: Float64Array; qd: Float64Array; qdd: Float64Array; qddd: Float64Array }[]>;
  /** Per series: x, y and their three derivatives [m, m/s, m/s², m/s³]. */
  endpoint: Record<string, EndpointColumns>;
}

const PLAN_STATES = new Set(['track', 'hold', 'paused'].map((s) => LOOP_STATES.indexOf(s as (typeof LOOP_STATES)[number])));
const IDLE = LOOP_STATES.indexOf('idle');

/** Resamples (xs, ys) onto the grid, with NaN samples as breaks (a gap is not bridged). */
function onGrid(xs: ArrayLike<number>, ys: ArrayLike<number>, grid: Float64Array): Float64Array {
  return resampleLinear(xs, ys, grid);
}

/** The values of `y` at the ticks `idx`, NaN where `ok` fails. */
function pick(y: Float64Array, idx: readonly number[], ok: (i: number) => boolean = () => true): Float64Array {
  return Float64Array.from(idx, (i) => (ok(i) ? y[i]! : Number.NaN));
}

/**
 * The curves the run figure draws: desired, measured and twin (and another run's measured) on a
 * uniform grid of loop time at the loop rate, with their derivatives (see the file's comment).
 *
 * Time base: the desired is placed at its tick's loop time. Readings (measured, and the twin, which
 * steps on each reading with the board's time step) are placed at the loop time the board took them,
 * from the board's timestamps (signal.ts readingTimes): a tick picks a reading up 0 to 2 periods
 * after it was taken, and differentiating at tick times would turn that jitter into noise.
 */
export function runCurves(
  rec: LoadedRecording,
  arm: ArmParams,
  smoothS: number,
  other?: { t: Float64Array; q: Float64Array[] },
): RunCurves {
  const c = rec.columns;
  const n = rec.info.header.joints;
  const dt = 1 / rec.info.header.rateHz;
  const t = c.get('t');
  const state = c.get('state');
  const fresh = c.get('fresh');
  let first = 0;
  while (first < c.length - 1 && state[first] === IDLE) first++;
  const grid = uniformGrid(t[first]!, t[c.length - 1]!, dt);
  const all = Array.from({ length: c.length }, (_, i) => i);
  const readings = all.filter((i) => fresh[i] === 1);
  const tr = readingTimes(pick(t, readings), pick(c.get('boardT'), readings));
  const plan = (i: number): boolean => PLAN_STATES.has(state[i]!);
  const live = (i: number): boolean => state[i] !== IDLE;
  const win = Math.max(5, Math.round(smoothS / dt) | 1);
  // A third derivative amplifies noise far more than a second: its window is JERK_WINDOW_FACTOR times longer.
  const sg = (y: Float64Array, deriv: number): Float64Array =>
    savitzkyGolay(y, dt, { window: deriv === 3 ? Math.round(JERK_WINDOW_FACTOR * win) | 1 : win, order: 3, deriv });
  const joint: RunCurves['joint'] = { desired: [], measured: [], twin: [] };
  for (let j = 0; j < n; j++) {
    const f = (name: string): Float64Array => c.get(`${name}${j}` as TickField);
    const qdd = onGrid(t, pick(f('qddDes'), all, plan), grid);
    joint.desired!.push({
      q: onGrid(t, pick(f('qDes'), all, plan), grid),
      qd: onGrid(t, pick(f('qdDes'), all, plan), grid),
      qdd,
      qddd: sg(qdd, 1),
    });
    const qm = onGrid(tr, pick(f('q'), readings), grid);
    joint.measured!.push({ q: qm, qd: onGrid(tr, pick(f('qd'), readings, live), grid), qdd: sg(qm, 2), qddd: sg(qm, 3) });
    const qt = onGrid(tr, pick(f('twinQ'), readings, live), grid);
    joint.twin!.push({ q: qt, qd: onGrid(tr, pick(f('twinQd'), readings, live), grid), qdd: sg(qt, 2), qddd: sg(qt, 3) });
  }
  if (other) {
    // Another run's readings are on this run's time only where both are on the trajectory proper:
    // break the curve where they have a gap (between trajectories).
    const xs: number[] = [];
    const idx: number[] = [];
    for (let i = 0; i < other.t.length; i++) {
      if (i > 0 && other.t[i]! - other.t[i - 1]! > 3 * dt) {
        xs.push((other.t[i]! + other.t[i - 1]!) / 2);
        idx.push(-1);
      }
      xs.push(other.t[i]!);
      idx.push(i);
    }
    joint.measuredB = other.q.slice(0, n).map((q) => {
      const qb = onGrid(
        xs,
        Float64Array.from(idx, (i) => (i < 0 ? Number.NaN : q[i]!)),
        grid,
      );
      return { q: qb, qd: sg(qb, 1), qdd: sg(qb, 2), qddd: sg(qb, 3) };
    });
  }
  // The endpoint by the chain rule from each curve's joint angle and its derivatives.
  const endpoint: RunCurves['endpoint'] = {};
  for (const [key, curves] of Object.entries(joint)) {
    const cols = endpointColumns(grid.length);
    const at = (a: Float64Array[], k: number): number[] => a.map((x) => x[k]!);
    const [q, qd, qdd, qddd] = (['q', 'qd', 'qdd', 'qddd'] as const).map((name) => curves.map((s) => s[name]));
    for (let k = 0; k < grid.length; k++) {
      const e = endpointDerivatives(arm, at(q!, k), at(qd!, k), at(qdd!, k), at(qddd!, k));
      for (let m = 0; m < 8; m++) cols[m]![k] = e[m]!;
    }
    endpoint[key] = cols;
  }
  return { t: grid, joint, endpoint };
}

/**
 * The run figure: rows joint 1, joint 2, endpoint x, endpoint y; columns angle (position),
 * velocity, acceleration, jerk; desired, measured and twin overlaid (and another run's measured);
 * then the endpoint path, the twin's residual with the alarm threshold, and the torques per joint.
 * The trajectory proper (the track phase) is shaded.
 */
export function runFigure(rec: LoadedRecording, rig: Rig, o: RunFigureOptions): TopLevelSpec {
  const smoothS = o.smoothS ?? 0.08;
  const maxPoints = o.maxPoints ?? 600;
  const arm = rig.arm;
  const n = rec.info.header.joints;
  const curves = runCurves(rec, arm, smoothS, o.other);
  const grid = curves.t;
  const inWindow = (x: number): boolean => x >= (o.from ?? -Infinity) && x <= (o.to ?? Infinity);
  const shown: number[] = [];
  for (let k = 0; k < grid.length; k++) if (inWindow(grid[k]!)) shown.push(k);
  if (shown.length < 2)
    throw new RangeError(
      `the window ${o.from ?? '-'}..${o.to ?? '-'} s holds fewer than 2 samples of the run (${grid[0]!.toFixed(3)}..${grid[grid.length - 1]!.toFixed(3)} s)`,
    );
  const keep = strideIndices(shown.length, maxPoints).map((k) => shown[k]!);
  const xDomain: [number, number] = [round(grid[shown[0]!]!) ?? 0, round(grid[shown[shown.length - 1]!]!) ?? 1];
  const styles = [SERIES.desired, SERIES.measured, SERIES.twin, ...(o.other ? [SERIES.measuredB] : [])];
  const keys = ['desired', 'measured', 'twin', ...(o.other ? ['measuredB'] : [])];
  const bands = trackBands(rec)
    .map((b) => ({ x0: Math.max(b.x0, xDomain[0]), x1: Math.min(b.x1, xDomain[1]) }))
    .filter((b) => b.x1 > b.x0);
  const kinds = [
    ['angle', 'deg', 'position', 'm'],
    ['velocity', 'deg/s', 'velocity', 'm/s'],
    ['acceleration', 'deg/s²', 'acceleration', 'm/s²'],
    ['jerk', 'deg/s³', 'jerk', 'm/s³'],
  ] as const;
  const ms = (smoothS * 1000).toFixed(0);
  // What each column's measured and twin curves are: as recorded, or derivatives by the filter.
  const notes = [
    'as recorded',
    'measured: the estimator, as recorded',
    `measured, twin: filtered (S-G ${ms} ms)`,
    `measured, twin: filtered (S-G ${(JERK_WINDOW_FACTOR * smoothS * 1000).toFixed(0)} ms)`,
  ];
  const rows: Json[][] = [];
  let legend = true;
  for (let j = 0; j < n; j++) {
    rows.push(
      kinds.map(([what, unit], c) => {
        const field = (['q', 'qd', 'qdd', 'qddd'] as const)[c]!;
        const points = pointsOf(
          grid,
          keep,
          keys.map((k, m) => ({ style: styles[m]!, values: curves.joint[k]![j]![field], scale: DEG })),
        );
        const p = panel({
          title: `Joint ${j + 1} ${what} [${unit}]`,
          subtitle: notes[c]!,
          xTitle: 'Time [s]',
          yTitle: `[${unit}]`,
          points,
          series: styles,
          legend,
          bands,
          xDomain,
          ...robustDomain(points),
        });
        legend = false;
        return p;
      }),
    );
  }
  const endpointKinds = kinds.map(([, , what, unit]) => [what, unit] as const);
  rows.push(...endpointRows({ curves, keep, keys, styles, bands, xDomain }, endpointKinds, notes));
  rows.push(bottomRow(rec, rig, curves, keys, styles, keep, bands, xDomain));
  if (rec.info.header.trajectories.some((x) => (x as { taught?: unknown }).taught === true))
    rows.push(replayRow(curves, keep, bands, xDomain));
  const a = rec.info.header;
  const sub = [
    `${rec.info.file}: ${a.trajectories.map((x) => x.name).join(', ') || 'no trajectory'} on ${a.rig.name} at ${a.rateHz} Hz, feedforward ${a.feedforward ?? '?'}${o.other ? "; B: another run, on this run's time by trajectory time (track phase only)" : ''}`,
    `desired: the plan at each reading (jerk: derivative of its recorded acceleration); measured: encoder angle and estimator velocity as recorded, acceleration and jerk by a cubic Savitzky-Golay filter over ${(smoothS * 1000).toFixed(0)} ms (jerk: ${(JERK_WINDOW_FACTOR * smoothS * 1000).toFixed(0)} ms); twin: recorded angle and velocity, same filter. Shaded: the trajectory proper (track phase).`,
  ];
  return figure(o.title, sub, rows);
}

/** Styles of the replay's error curves (a taught motion followed by `run --traj`). */
const REPLAY_SERIES: SeriesStyle[] = [
  { name: 'joint 1', color: '#1f77b4', dash: [] },
  { name: 'joint 2', color: '#d62728', dash: [] },
  { name: 'endpoint', color: '#2ca02c', dash: [] },
];

/** The replay report as a figure: desired less measured per joint [deg], and the endpoint's distance from where it should be [mm]. */
function replayRow(curves: RunCurves, keep: number[], bands: { x0: number; x1: number }[], xDomain: [number, number]): Json[] {
  const d = curves.joint.desired!;
  const m = curves.joint.measured!;
  const err = d.map((dj, j) => Float64Array.from(dj.q, (v, k) => v - m[j]!.q[k]!));
  const ed = curves.endpoint.desired!;
  const em = curves.endpoint.measured!;
  const mm = Float64Array.from(ed[0], (x, k) => Math.hypot(x - em[0][k]!, ed[1][k]! - em[1][k]!) * 1000);
  const jp = pointsOf(
    curves.t,
    keep,
    err.map((values, j) => ({ style: REPLAY_SERIES[j]!, values, scale: DEG })),
  );
  const ep = pointsOf(curves.t, keep, [{ style: REPLAY_SERIES[2]!, values: mm }]);
  return [
    panel({
      title: 'Replay error per joint [deg]',
      subtitle: "desired less measured (the summary's replay figures: the shaded part)",
      xTitle: 'Time [s]',
      yTitle: '[deg]',
      points: jp,
      series: REPLAY_SERIES.slice(0, err.length),
      legend: true,
      bands,
      xDomain,
      ...robustDomain(jp),
    }),
    panel({
      title: 'Replay endpoint error [mm]',
      subtitle: 'distance from the planned endpoint',
      xTitle: 'Time [s]',
      yTitle: '[mm]',
      points: ep,
      series: [REPLAY_SERIES[2]!],
      legend: true,
      bands,
      xDomain,
      ...robustDomain(ep),
    }),
  ];
}

/** The rows of the endpoint's x and y: one panel per derivative (`kinds`: what, unit), each series on the run's grid. */
function endpointRows(
  d: {
    curves: RunCurves;
    keep: number[];
    keys: string[];
    styles: SeriesStyle[];
    bands: { x0: number; x1: number }[];
    xDomain: [number, number];
  },
  kinds: readonly (readonly [string, string])[],
  notes: readonly string[],
): Json[][] {
  return (['x', 'y'] as const).map((axis, off) =>
    kinds.map(([what, unit], c) => {
      const points = pointsOf(
        d.curves.t,
        d.keep,
        d.keys.map((k, m) => ({ style: d.styles[m]!, values: d.curves.endpoint[k]![2 * c + off]! })),
      );
      return panel({
        title: `Endpoint ${axis} ${what} [${unit}]`,
        subtitle: notes[c]!.replace('the estimator', "from the estimator's"),
        xTitle: 'Time [s]',
        yTitle: `${axis} [${unit}]`,
        points,
        series: d.styles,
        bands: d.bands,
        xDomain: d.xDomain,
        ...robustDomain(points),
      });
    }),
  );
}

function robustDomain(points: readonly Point[]): { yDomain?: [number, number] } {
  const d = robustRange(points);
  return d ? { yDomain: d } : {};
}

/** Intervals of loop time in the track phase. */
function trackBands(rec: LoadedRecording): { x0: number; x1: number }[] {
  const c = rec.columns;
  const t = c.get('t');
  const state = c.get('state');
  const phase = c.get('phase');
  const TRACK_S = LOOP_STATES.indexOf('track');
  const TRACK_P = PHASES.indexOf('track');
  const out: { x0: number; x1: number }[] = [];
  let start = -1;
  for (let i = 0; i <= c.length; i++) {
    const inTrack = i < c.length && state[i] === TRACK_S && phase[i] === TRACK_P;
    if (inTrack && start < 0) start = i;
    if (!inTrack && start >= 0) {
      out.push({ x0: round(t[start]!)!, x1: round(t[i - 1]!)! });
      start = -1;
    }
  }
  return out;
}

/** The endpoint path of each series, in the order of the kept ticks, with equal scales on x and y. */
function endpointPanel(curves: RunCurves, keys: string[], styles: SeriesStyle[], keep: number[]): Json {
  const pts: Point[] = [];
  keys.forEach((k, m) => {
    const e = curves.endpoint[k]!;
    keep.forEach((i, order) => pts.push({ x: round(e[0][i]!), y: round(e[1][i]!), s: styles[m]!.name, k: order }));
  });
  const xs = Float64Array.from(pts.map((p) => p.x ?? Number.NaN));
  const ys = Float64Array.from(pts.map((p) => p.y ?? Number.NaN));
  const [dx, dy] = equalDomains(xs, ys);
  return panel({
    title: 'Endpoint path',
    subtitle: 'equal scales on x and y',
    xTitle: 'x [m]',
    yTitle: 'y [m]',
    points: pts,
    series: styles,
    path: true,
    height: 210,
    xDomain: dx,
    yDomain: dy,
  });
}

/** What the bottom row's panels share: the recording's columns, the ticks shown and the time axis. */
interface RowView {
  c: LoadedRecording['columns'];
  n: number;
  keep: number[];
  bands: { x0: number; x1: number }[];
  xDomain: [number, number];
  shown: (i: number) => boolean;
}

function bottomRow(
  rec: LoadedRecording,
  rig: Rig,
  curves: RunCurves,
  keys: string[],
  styles: SeriesStyle[],
  keep: number[],
  bands: { x0: number; x1: number }[],
  xDomain: [number, number],
): Json[] {
  const c = rec.columns;
  const t = c.get('t');
  const v: RowView = { c, n: rec.info.header.joints, keep, bands, xDomain, shown: (i) => t[i]! >= xDomain[0] && t[i]! <= xDomain[1] };
  return [endpointPanel(curves, keys, styles, keep), residualPanel(v, rig.twin.alarmDeg), ...torquePanels(v)];
}

/** The twin's residual, on the ticks where it was computed, with the alarm threshold. */
function residualPanel(v: RowView, alarm: number): Json {
  const { c, n, keep, bands, xDomain, shown } = v;
  const t = c.get('t');
  const state = c.get('state');
  const fresh = c.get('fresh');
  const live: number[] = [];
  for (let i = 0; i < c.length; i++) if (fresh[i] === 1 && state[i] !== IDLE && shown(i)) live.push(i);
  const sel = strideIndices(live.length, 2 * keep.length).map((k) => live[k]!);
  const jointStyles: SeriesStyle[] = [STYLES.joint1, STYLES.joint2].slice(0, n);
  const resPts: Point[] = [];
  for (let j = 0; j < n; j++) {
    const r = c.get(`res${j}` as TickField);
    for (const i of sel) resPts.push({ x: round(t[i]!), y: round(r[i]! * DEG), s: jointStyles[j]!.name });
  }
  // Always show the threshold, and every residual even beyond it.
  const lim = Number((1.05 * Math.max(1.2 * alarm, ...resPts.map((p) => Math.abs(p.y ?? 0)))).toPrecision(4));
  return panel({
    title: `Twin residual, alarm at ±${alarm} deg`,
    subtitle: 'measured − twin, at each reading',
    xTitle: 'Time [s]',
    yTitle: '[deg]',
    points: resPts,
    series: jointStyles,
    legend: true,
    rules: [
      { y: alarm, color: ALARM_COLOR },
      { y: -alarm, color: ALARM_COLOR },
    ],
    bands,
    xDomain,
    yDomain: [-lim, lim],
  });
}

/** Torques per joint: the command first (drawn underneath, wide and pale), then its parts on top of it. */
function torquePanels(v: RowView): Json[] {
  const { c, n, keep, bands, xDomain, shown } = v;
  const t = c.get('t');
  const state = c.get('state');
  const torqueStyles: SeriesStyle[] = [STYLES.command, STYLES.feedforward, STYLES.pid];
  const liveTicks: number[] = [];
  for (let i = 0; i < c.length; i++) if (state[i] !== IDLE && shown(i)) liveTicks.push(i);
  const tsel = strideIndices(liveTicks.length, 2 * keep.length).map((k) => liveTicks[k]!);
  const out: Json[] = [];
  for (let j = 0; j < n; j++) {
    const fields = [`tauCmd${j}`, `tauFf${j}`, `tauPid${j}`] as TickField[];
    const tp: Point[] = [];
    fields.forEach((f, m) => {
      const col = c.get(f);
      for (const i of tsel) tp.push({ x: round(t[i]!), y: round(col[i]!), s: torqueStyles[m]!.name });
    });
    out.push(
      panel({
        title: `Joint ${j + 1} torque [N m]`,
        subtitle: 'command (wide, pale) under its parts',
        xTitle: 'Time [s]',
        yTitle: '[N m]',
        points: tp,
        series: torqueStyles,
        legend: j === 0,
        bands,
        xDomain,
        ...robustDomain(tp),
      }),
    );
  }
  return out;
}
