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
import type { ArmParams } from '../model/types.js';
import { endpointColumns, endpointDerivatives, equalDomains, type EndpointColumns } from './endpoint.js';
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

/** The four curves of each joint and series, in the order of the figure's columns. */
const DERIVATIVES = ['q', 'qd', 'qdd', 'qddd'] as const;

/** A smoothing differentiator on the grid: the `deriv`th derivative of `y`. */
type Differentiator = (y: Float64Array, deriv: number) => Float64Array;

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
  const dt = 1 / rec.info.header.rateHz;
  const tb = timeBase(rec, dt);
  const sg = differentiator(dt, smoothS);
  const joint = recordedJointCurves(rec, tb, sg);
  if (other) joint.measuredB = otherJointCurves(other, rec.info.header.joints, dt, tb.grid, sg);
  return { t: tb.grid, joint, endpoint: endpointCurves(arm, joint, tb.grid.length) };
}

/** Where a run's curves are drawn and sampled: the grid, every tick, the ticks with a fresh reading and the loop time each was taken. */
interface TimeBase {
  grid: Float64Array;
  all: number[];
  readings: number[];
  tr: Float64Array;
}

/** The run's time base: a grid at the loop rate from the first tick out of idle, and the readings at the loop time the board took them. */
function timeBase(rec: LoadedRecording, dt: number): TimeBase {
  const c = rec.columns;
  const t = c.get('t');
  const state = c.get('state');
  const fresh = c.get('fresh');
  let first = 0;
  while (first < c.length - 1 && state[first] === IDLE) first++;
  const grid = uniformGrid(t[first]!, t[c.length - 1]!, dt);
  const all = Array.from({ length: c.length }, (_, i) => i);
  const readings = all.filter((i) => fresh[i] === 1);
  const tr = readingTimes(pick(t, readings), pick(c.get('boardT'), readings));
  return { grid, all, readings, tr };
}

/** The cubic Savitzky-Golay differentiator over `smoothS` (at least 5 samples), for the derivatives the run did not record. */
function differentiator(dt: number, smoothS: number): Differentiator {
  const win = Math.max(5, Math.round(smoothS / dt) | 1);
  // A third derivative amplifies noise far more than a second: its window is JERK_WINDOW_FACTOR times longer.
  return (y, deriv) => savitzkyGolay(y, dt, { window: deriv === 3 ? Math.round(JERK_WINDOW_FACTOR * win) | 1 : win, order: 3, deriv });
}

/** Desired, measured and twin per joint: the recorded curves on the grid, the others by the differentiator (see the file's comment). */
function recordedJointCurves(rec: LoadedRecording, tb: TimeBase, sg: Differentiator): RunCurves['joint'] {
  const c = rec.columns;
  const t = c.get('t');
  const state = c.get('state');
  const { grid, all, readings, tr } = tb;
  const plan = (i: number): boolean => PLAN_STATES.has(state[i]!);
  const live = (i: number): boolean => state[i] !== IDLE;
  const joint: RunCurves['joint'] = { desired: [], measured: [], twin: [] };
  for (let j = 0; j < rec.info.header.joints; j++) {
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
  return joint;
}

/** Another run's sample times with a break (index -1, at the gap's middle) wherever they skip more than 3 periods. */
function withBreaks(t: Float64Array, dt: number): { xs: number[]; idx: number[] } {
  const xs: number[] = [];
  const idx: number[] = [];
  for (let i = 0; i < t.length; i++) {
    if (i > 0 && t[i]! - t[i - 1]! > 3 * dt) {
      xs.push((t[i]! + t[i - 1]!) / 2);
      idx.push(-1);
    }
    xs.push(t[i]!);
    idx.push(i);
  }
  return { xs, idx };
}

/** Another run's readings (see compare.ts alignRuns) per joint on the grid, all derivatives by the differentiator. */
function otherJointCurves(
  other: { t: Float64Array; q: Float64Array[] },
  n: number,
  dt: number,
  grid: Float64Array,
  sg: Differentiator,
): RunCurves['joint'][string] {
  // Another run's readings are on this run's time only where both are on the trajectory proper:
  // break the curve where they have a gap (between trajectories).
  const { xs, idx } = withBreaks(other.t, dt);
  return other.q.slice(0, n).map((q) => {
    const qb = onGrid(
      xs,
      Float64Array.from(idx, (i) => (i < 0 ? Number.NaN : q[i]!)),
      grid,
    );
    return { q: qb, qd: sg(qb, 1), qdd: sg(qb, 2), qddd: sg(qb, 3) };
  });
}

/** The endpoint by the chain rule from each curve's joint angle and its derivatives. */
function endpointCurves(arm: ArmParams, joint: RunCurves['joint'], samples: number): RunCurves['endpoint'] {
  const endpoint: RunCurves['endpoint'] = {};
  for (const [key, curves] of Object.entries(joint)) {
    const cols = endpointColumns(samples);
    const at = (a: Float64Array[], k: number): number[] => a.map((x) => x[k]!);
    const [q, qd, qdd, qddd] = DERIVATIVES.map((name) => curves.map((s) => s[name]));
    for (let k = 0; k < samples; k++) {
      const e = endpointDerivatives(arm, at(q!, k), at(qd!, k), at(qdd!, k), at(qddd!, k));
      for (let m = 0; m < 8; m++) cols[m]![k] = e[m]!;
    }
    endpoint[key] = cols;
  }
  return endpoint;
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
  const curves = runCurves(rec, rig.arm, smoothS, o.other);
  const { keep, xDomain } = windowOf(curves.t, o, maxPoints);
  const styles = [SERIES.desired, SERIES.measured, SERIES.twin, ...(o.other ? [SERIES.measuredB] : [])];
  const keys = ['desired', 'measured', 'twin', ...(o.other ? ['measuredB'] : [])];
  const bands = trackBands(rec)
    .map((b) => ({ x0: Math.max(b.x0, xDomain[0]), x1: Math.min(b.x1, xDomain[1]) }))
    .filter((b) => b.x1 > b.x0);
  const view: SeriesView = { curves, keep, keys, styles, bands, xDomain };
  const notes = columnNotes(smoothS);
  const rows = jointRows(view, rec.info.header.joints, notes);
  const endpointKinds = KINDS.map(([, , what, unit]) => [what, unit] as const);
  rows.push(...endpointRows(view, endpointKinds, notes));
  rows.push(bottomRow(rec, rig, curves, keys, styles, keep, bands, xDomain));
  if (rec.info.header.trajectories.some((x) => (x as { taught?: unknown }).taught === true))
    rows.push(replayRow(curves, keep, bands, xDomain));
  return figure(o.title, figureSubtitle(rec, smoothS, Boolean(o.other)), rows);
}

/** What the time-series panels share: the curves, the ticks drawn, the series (key and style) and the time axis. */
interface SeriesView {
  curves: RunCurves;
  keep: number[];
  keys: string[];
  styles: SeriesStyle[];
  bands: { x0: number; x1: number }[];
  xDomain: [number, number];
}

/** The columns of the run figure: what and unit for a joint, then for the endpoint. */
const KINDS = [
  ['angle', 'deg', 'position', 'm'],
  ['velocity', 'deg/s', 'velocity', 'm/s'],
  ['acceleration', 'deg/s²', 'acceleration', 'm/s²'],
  ['jerk', 'deg/s³', 'jerk', 'm/s³'],
] as const;

/** The filters' windows in ms, for the figure's words: acceleration's and jerk's. */
function filterWindowsMs(smoothS: number): [string, string] {
  return [(smoothS * 1000).toFixed(0), (JERK_WINDOW_FACTOR * smoothS * 1000).toFixed(0)];
}

/** The grid samples in the window `from`..`to`, thinned to `maxPoints`, and the window's time axis; a window of fewer than 2 samples is an error. */
function windowOf(grid: Float64Array, o: RunFigureOptions, maxPoints: number): { keep: number[]; xDomain: [number, number] } {
  const inWindow = (x: number): boolean => x >= (o.from ?? -Infinity) && x <= (o.to ?? Infinity);
  const shown: number[] = [];
  for (let k = 0; k < grid.length; k++) if (inWindow(grid[k]!)) shown.push(k);
  if (shown.length < 2)
    throw new RangeError(
      `the window ${o.from ?? '-'}..${o.to ?? '-'} s holds fewer than 2 samples of the run (${grid[0]!.toFixed(3)}..${grid[grid.length - 1]!.toFixed(3)} s)`,
    );
  const keep = strideIndices(shown.length, maxPoints).map((k) => shown[k]!);
  const xDomain: [number, number] = [round(grid[shown[0]!]!) ?? 0, round(grid[shown[shown.length - 1]!]!) ?? 1];
  return { keep, xDomain };
}

/** What each column's measured and twin curves are: as recorded, or derivatives by the filter. */
function columnNotes(smoothS: number): string[] {
  const [ms, jerkMs] = filterWindowsMs(smoothS);
  return [
    'as recorded',
    'measured: the estimator, as recorded',
    `measured, twin: filtered (S-G ${ms} ms)`,
    `measured, twin: filtered (S-G ${jerkMs} ms)`,
  ];
}

/** One row per joint: one panel per derivative (KINDS), each series on the run's grid in degrees; the legend on the first panel only. */
function jointRows(d: SeriesView, n: number, notes: readonly string[]): Json[][] {
  const rows: Json[][] = [];
  for (let j = 0; j < n; j++) {
    rows.push(
      KINDS.map(([what, unit], c) => {
        const field = DERIVATIVES[c]!;
        const points = pointsOf(
          d.curves.t,
          d.keep,
          d.keys.map((k, m) => ({ style: d.styles[m]!, values: d.curves.joint[k]![j]![field], scale: DEG })),
        );
        return panel({
          title: `Joint ${j + 1} ${what} [${unit}]`,
          subtitle: notes[c]!,
          xTitle: 'Time [s]',
          yTitle: `[${unit}]`,
          points,
          series: d.styles,
          legend: j === 0 && c === 0,
          bands: d.bands,
          xDomain: d.xDomain,
          ...robustDomain(points),
        });
      }),
    );
  }
  return rows;
}

/** The figure's subtitle: the run, then how each series' curves were made. */
function figureSubtitle(rec: LoadedRecording, smoothS: number, withOther: boolean): string[] {
  const a = rec.info.header;
  const [ms, jerkMs] = filterWindowsMs(smoothS);
  return [
    `${rec.info.file}: ${a.trajectories.map((x) => x.name).join(', ') || 'no trajectory'} on ${a.rig.name} at ${a.rateHz} Hz, feedforward ${a.feedforward ?? '?'}${withOther ? "; B: another run, on this run's time by trajectory time (track phase only)" : ''}`,
    `desired: the plan at each reading (jerk: derivative of its recorded acceleration); measured: encoder angle and estimator velocity as recorded, acceleration and jerk by a cubic Savitzky-Golay filter over ${ms} ms (jerk: ${jerkMs} ms); twin: recorded angle and velocity, same filter. Shaded: the trajectory proper (track phase).`,
  ];
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
function endpointRows(d: SeriesView, kinds: readonly (readonly [string, string])[], notes: readonly string[]): Json[][] {
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
