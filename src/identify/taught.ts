/**
 * From a motion shown by hand (twolink teach: the arm floating, its angles recorded on the board's
 * clock) to a trajectory file `twolink run --traj` accepts: the recorded joint angles low-passed
 * without phase lag (the hand's tremor and the encoders' steps out), resampled every `dtS` as the
 * control points of a cubic B-spline (src/model/sampled-path.ts: rest to rest, continuous
 * acceleration), and checked against what the motors can do (src/control/feasibility.ts). A motion the
 * motors cannot follow at the speed it was shown is slowed down as a whole, by the smallest factor
 * in SLOWDOWNS that makes it feasible, and the file says by how much. The waypoints marked while
 * teaching are written with their time on the path.
 */
import type { Rig } from '../config/load.js';
import { pathFromFile, type TrajectoryFile } from '../config/trajectory-file.js';
import type { FeasibilityPart } from '../config/parts.js';
import { checkFeasible, FeasibilityError } from '../control/feasibility.js';
import type { PathSpec } from '../model/builtins.js';
import { buildPath } from '../model/trajectory.js';
import { zeroPhaseLowpass } from './filter.js';

const DEG = 180 / Math.PI;

/** What teach recorded: board times [s] and joint angles [rad] per sample, and the marks' times [s]. */
export interface TeachRecording {
  t: number[];
  q: number[][];
  marks: { t: number; label?: string }[];
}

export interface TaughtOptions {
  /** Spacing of the B-spline's control points [s]. @default 0.02 */
  dtS?: number;
  /** Zero-phase low-pass cutoff on the recorded angles [Hz]. @default 4 */
  smoothingHz?: number;
  name?: string;
  /** Where it was recorded, for the file ("mock", a port). */
  target: string;
  /** The rig file's content hash (config/rig-hash.ts), written so that replay can refuse another rig. */
  rigSha256?: string;
}

/** Slow-down factors tried, in order, when the motion as shown is beyond the motors. */
export const SLOWDOWNS = [1, 1.25, 1.5, 2, 2.5, 3, 4, 6, 8];

export interface Taught {
  file: TrajectoryFile;
  spec: PathSpec;
  /** The factor the motion was slowed down by (1: as shown). */
  slowdown: number;
  /** Why it was slowed down (the first limit at the speed shown), when it was. */
  why?: string;
}

/** Angles rounded for the file [deg, 1e-4]: the start and the first sample stay identical. */
const round = (rad: number): number => Math.round(rad * DEG * 1e4) / 1e4;

/** The recording's angles resampled every `dt` from its first time, linearly. */
function resample(t: readonly number[], x: ArrayLike<number>, dt: number): number[] {
  const out: number[] = [];
  const t0 = t[0]!;
  const end = t[t.length - 1]!;
  let k = 0;
  for (let tt = t0; tt <= end + 1e-9; tt += dt) {
    while (k < t.length - 2 && t[k + 1]! < tt) k++;
    const u = t[k + 1]! > t[k]! ? Math.max(0, Math.min(1, (tt - t[k]!) / (t[k + 1]! - t[k]!))) : 0;
    out.push(x[k]! + u * (x[k + 1]! - x[k]!));
  }
  return out;
}

/** Builds the taught trajectory; throws an Error when the recording is too short or cannot be made feasible. */
export function buildTaught(rig: FeasibilityPart & Pick<Rig, 'file'>, rec: TeachRecording, o: TaughtOptions): Taught {
  const n = rig.joints;
  const dt = o.dtS ?? 0.02;
  const fc = o.smoothingHz ?? 4;
  const span = rec.t.length > 1 ? rec.t[rec.t.length - 1]! - rec.t[0]! : 0;
  if (rec.t.length < 10 || span < 4 * dt)
    throw new Error(
      `the recording is too short to teach from (${rec.t.length} samples, ${span.toFixed(2)} s): record a motion of at least ${(4 * dt).toFixed(2)} s`,
    );
  const rateHz = (rec.t.length - 1) / span;
  // Zero-phase low-pass per joint (at least 3 samples per cutoff period), then resampled every dt.
  const cut = Math.min(fc, rateHz / 6);
  const joint = Array.from({ length: n }, (_, i) =>
    resample(
      rec.t,
      zeroPhaseLowpass(
        rec.q.map((row) => row[i]!),
        cut,
        rateHz,
      ),
      dt,
    ),
  );
  const samples = joint[0]!.map((_, k) => joint.map((j) => round(j[k]!)));
  let why: string | undefined;
  for (const slowdown of SLOWDOWNS) {
    const file = taughtFile(rig, rec, samples, dt * slowdown, slowdown, { ...o, smoothingHz: cut, rateHz, span });
    const spec = pathFromFile(file, 'taught');
    try {
      checkFeasible(rig, buildPath(rig.arm, spec.start, spec.steps), 'the taught motion');
      return { file, spec, slowdown, ...(why ? { why } : {}) };
    } catch (e) {
      if (!(e instanceof FeasibilityError)) throw e;
      why ??= e.message;
    }
  }
  throw new Error(`the taught motion is beyond the motors even ${SLOWDOWNS.at(-1)}x slower: ${why}`);
}

/** The trajectory file of the samples [deg] every `dt` [s] (already slowed down by `slowdown`). */
function taughtFile(
  rig: Pick<Rig, 'file'>,
  rec: TeachRecording,
  samples: number[][],
  dt: number,
  slowdown: number,
  o: TaughtOptions & { smoothingHz: number; rateHz: number; span: number },
): TrajectoryFile {
  const t0 = rec.t[0]!;
  const at = (t: number): number[] => {
    let k = 0;
    while (k < rec.t.length - 1 && rec.t[k + 1]! <= t) k++;
    return rec.q[k]!.map(round);
  };
  // Sample k is the B-spline's control point k + 2, centred at (k + 1) dt on the path.
  const waypoints = rec.marks.map((m) => ({
    t: Math.round(((m.t - t0) / (dt / slowdown) + 1) * dt * 1e4) / 1e4,
    q: at(m.t),
    ...(m.label ? { label: m.label } : {}),
  }));
  return {
    name: o.name ?? 'taught',
    description: `taught by hand (${o.target}): ${o.span.toFixed(2)} s recorded at ${o.rateHz.toFixed(0)} Hz, low-passed at ${o.smoothingHz} Hz${slowdown > 1 ? `, slowed down ${slowdown}x to what the motors can follow` : ''}`,
    units: 'deg',
    elbow: 'down',
    start: { q: samples[0]! },
    steps: [{ samples: { dt, q: samples } }],
    ...(waypoints.length ? { waypoints } : {}),
    taught: {
      rig: rig.file,
      ...(o.rigSha256 ? { rigSha256: o.rigSha256 } : {}),
      target: o.target,
      recordedS: o.span,
      rateHz: o.rateHz,
      smoothingHz: o.smoothingHz,
      slowdown,
    },
  };
}
