/**
 * Seed 002's figure of a trajectory, as a vega-lite specification (figures.ts renders it): the
 * endpoint's and the joints' angle, velocity, acceleration and jerk, all analytic (the plan's own
 * derivatives and the chain rule, endpointDerivatives), then the endpoint path and the path in joint space.
 */
import type { TopLevelSpec } from 'vega-lite';
import type { Trajectory } from '../model/trajectory.js';
import { J, type ArmParams, type PairOf } from '../model/types.js';
import { figure, panel, pointsOf, round, STYLES, type Json, type Point, type SeriesStyle } from './plot-panels.js';
import { strideIndices } from './signal.js';
import { endpointColumns, endpointDerivatives, equalDomains, type EndpointColumns } from './endpoint.js';

const DEG = 180 / Math.PI;

/** Options of the trajectory figure. */
export interface TrajectoryFigureOptions {
  title: string;
  /** Sample rate [Hz]. @default 200 */
  rateHz?: number;
}

/**
 * Seed 002's figure of a trajectory: the endpoint's x and y and the joint angles, each with velocity,
 * acceleration and jerk (all analytic: the plan's own derivatives and the chain rule), then the
 * endpoint path and the path in joint space.
 */
export function trajectoryFigure(traj: Trajectory, arm: ArmParams, o: TrajectoryFigureOptions): TopLevelSpec {
  const rate = o.rateHz ?? 200;
  const { t, cols, q, qd, qdd, qddd } = sampleTrajectory(traj, arm, rate);
  const keep = strideIndices(t.length, 1000);
  const X: SeriesStyle = STYLES.x;
  const Y: SeriesStyle = STYLES.y;
  const A1: SeriesStyle = STYLES.joint1;
  const A2: SeriesStyle = STYLES.joint2;
  const joints = traj.joints === 2 ? [A1, A2] : [A1];
  const xDomain: [number, number] = [0, traj.duration];
  const kinds = [
    ['displacement', 'm', 'deg'],
    ['velocity', 'm/s', 'deg/s'],
    ['acceleration', 'm/s²', 'deg/s²'],
    ['jerk', 'm/s³', 'deg/s³'],
  ] as const;
  const jointData = [q, qd, qdd, qddd];
  const endpointRow = kinds.map(([what, unit], c) =>
    panel({
      title: `Endpoint linear ${what} [${unit}]`,
      xTitle: 'Time [s]',
      yTitle: `x, y [${unit}]`,
      points: pointsOf(t, keep, [
        { style: X, values: cols[2 * c]! },
        { style: Y, values: cols[2 * c + 1]! },
      ]),
      series: [X, Y],
      legend: c === 0,
      xDomain,
    }),
  );
  const jointRow = kinds.map(([what, , unit], c) =>
    panel({
      title: `Joint angular ${what} [${unit}]`,
      xTitle: 'Time [s]',
      yTitle: `[${unit}]`,
      points: pointsOf(
        t,
        keep,
        joints.map((style, j) => ({ style, values: jointData[c]![j]!, scale: DEG })),
      ),
      series: joints,
      legend: c === 0,
      xDomain,
    }),
  );
  return figure(
    o.title,
    [
      traj.description,
      `minimum-jerk kinematics, ${traj.duration.toFixed(3)} s, sampled at ${rate} Hz; derivatives are the plan's own (no differentiation)`,
    ],
    [endpointRow, jointRow, pathPanels(keep, cols, traj.joints === 2 ? q : undefined)],
  );
}

/** The plan sampled at `rate` [Hz] (the end included): times, the endpoint's 8 derivatives (endpointDerivatives), and per joint q, qd, qdd, qddd. */
function sampleTrajectory(
  traj: Trajectory,
  arm: ArmParams,
  rate: number,
): {
  t: Float64Array;
  cols: EndpointColumns;
  q: PairOf<Float64Array>;
  qd: PairOf<Float64Array>;
  qdd: PairOf<Float64Array>;
  qddd: PairOf<Float64Array>;
} {
  const n = Math.max(2, Math.round(traj.duration * rate) + 1);
  const t = Float64Array.from({ length: n }, (_, k) => (k === n - 1 ? traj.duration : k / rate));
  const cols = endpointColumns(n);
  const pair = (): PairOf<Float64Array> => [new Float64Array(n), new Float64Array(n)];
  const out = { t, cols, q: pair(), qd: pair(), qdd: pair(), qddd: pair() };
  for (let k = 0; k < n; k++) {
    const s = traj.sample(t[k]!);
    const e = endpointDerivatives(arm, s.q, s.qd, s.qdd, s.qddd);
    for (let c = 0; c < 8; c++) cols[c]![k] = e[c]!;
    for (const j of J.slice(0, traj.joints)) {
      out.q[j][k] = s.q[j]!;
      out.qd[j][k] = s.qd[j]!;
      out.qdd[j][k] = s.qdd[j]!;
      out.qddd[j][k] = s.qddd[j]!;
    }
  }
  return out;
}

/** The endpoint's path (x, y in cols 0, 1) and, for two joints (`q`), the path in joint space. */
function pathPanels(keep: readonly number[], cols: EndpointColumns, q: PairOf<Float64Array> | undefined): Json[] {
  const pathPoints = (xs: ArrayLike<number>, ys: ArrayLike<number>, s: string, k = 1): Point[] =>
    keep.map((i, m) => ({ x: round(xs[i]! * k), y: round(ys[i]! * k), s, k: m }));
  const EP: SeriesStyle = STYLES.endpointPath;
  const JS: SeriesStyle = STYLES.jointPath;
  const [ex, ey] = equalDomains(cols[0], cols[1]);
  const paths = [
    panel({
      title: 'Endpoint space',
      xTitle: 'x [m]',
      yTitle: 'y [m]',
      points: pathPoints(cols[0], cols[1], EP.name),
      series: [EP],
      path: true,
      width: 210,
      height: 210,
      xDomain: ex,
      yDomain: ey,
    }),
  ];
  if (q) {
    const [jx, jy] = equalDomains(
      q[0].map((v) => v * DEG),
      q[1].map((v) => v * DEG),
    );
    paths.push(
      panel({
        title: 'Joint space',
        xTitle: 'joint 1 [deg]',
        yTitle: 'joint 2 [deg]',
        points: pathPoints(q[0], q[1], JS.name, DEG),
        series: [JS],
        path: true,
        width: 210,
        height: 210,
        xDomain: jx,
        yDomain: jy,
      }),
    );
  }
  return paths;
}
