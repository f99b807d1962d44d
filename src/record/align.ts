/**
 * Where on its trajectory each reading of a run was taken, so that two runs can be compared at the
 * same point of the same trajectory.
 *
 * A tick records `trajT`, the trajectory time when the tick ran, but its reading was taken earlier
 * (by the reading's age, 0 to 2 periods, which jitters), and the loop records as `des` the plan at
 * the moment of the reading. The plan itself is in the header (the trajectories and the rig file),
 * so the trajectory time of each reading is found by solving plan(tau) = des for tau (Gauss-Newton,
 * starting from trajT), to machine precision wherever the plan moves. Where the plan rests (a hold),
 * des says nothing about tau, and tau = trajT - (the segment's median of trajT - tau) is used.
 *
 * Only the trajectory proper (the 'track' phase) is aligned: the approach and the park depend on
 * where the arm was when the run started, so two runs need not share them.
 */
import { LOOP_STATES, PHASES } from '../telemetry/tick.js';
import type { PathSpec } from '../model/builtins.js';
import { buildPath, type Trajectory } from '../model/trajectory.js';
import type { Columns, LoadedRecording } from './read.js';
import { recordedRig } from './read.js';

/** The readings of one trajectory of a run, with their trajectory times. */
export interface SegmentClock {
  /** 0-based order of the trajectory in the run. */
  index: number;
  name: string;
  /** Duration of the trajectory proper [s] (from the plan, or the last reading's tau). */
  durationS: number;
  /** Tick indices of the fresh readings in the track phase, in order. */
  ticks: number[];
  /** Time on the trajectory proper of each of those readings [s], non-decreasing. */
  tau: Float64Array;
  /** Readings whose tau was solved from the plan (the rest are at rest in the plan, or unsolved). */
  solved: number;
  /** 'plan' when the plan could be rebuilt from the header; 'trajT' otherwise (tau = trajT - the track phase's start). */
  method: 'plan' | 'trajT';
}

const TRACK_STATE = LOOP_STATES.indexOf('track');
const TRACK_PHASE = PHASES.indexOf('track');

function mainPath(rec: LoadedRecording, index: number): { name: string; plan?: Trajectory } {
  const specs = rec.info.header.trajectories as unknown as PathSpec[];
  if (!specs.length) return { name: `trajectory ${index + 1}` };
  const spec = specs[index % specs.length]!;
  try {
    const arm = recordedRig(rec.info).arm;
    // As the loop builds it (loop.ts, command 'start'): from the path's start pose, its steps.
    const start = spec.start;
    const startQ = start.q ?? buildPath(arm, start, [{ kind: 'hold', duration: 0 }]).sample(0).q;
    const plan = buildPath(arm, { q: startQ, ...(start.elbow ? { elbow: start.elbow } : {}) }, spec.steps);
    return { name: spec.name, plan };
  } catch {
    return { name: spec.name };
  }
}

/** Solves plan(tau) = des near tau0; undefined where the plan does not move or no solution is near. */
function solveTau(plan: Trajectory, des: readonly number[], tau0: number, lo: number, hi: number): number | undefined {
  let tau = Math.min(hi, Math.max(lo, tau0));
  const n = des.length;
  for (let it = 0; it < 12; it++) {
    const s = plan.sample(tau);
    let num = 0;
    let den = 0;
    for (let j = 0; j < n; j++) {
      num += (s.q[j]! - des[j]!) * s.qd[j]!;
      den += s.qd[j]! * s.qd[j]!;
    }
    if (den < 1e-6) return undefined; // the plan is at rest here (|qd| < 1e-3 rad/s)
    const step = num / den;
    tau = Math.min(hi, Math.max(lo, tau - step));
    if (Math.abs(step) < 1e-12) break;
  }
  const s = plan.sample(tau);
  let err = 0;
  for (let j = 0; j < n; j++) err = Math.max(err, Math.abs(s.q[j]! - des[j]!));
  return err < 1e-7 ? tau : undefined;
}

function median(xs: number[]): number {
  if (!xs.length) return Number.NaN;
  const s = xs.slice().sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/**
 * The trajectory time of every fresh reading in the track phase, per trajectory of the run (a new
 * trajectory starts when trajT goes back). Needs the columns t, trajT, state, phase, fresh, qDes0,
 * qDes1.
 */
export function trajectoryClock(rec: LoadedRecording): SegmentClock[] {
  const c: Columns = rec.columns;
  const n = rec.info.header.joints;
  const state = c.get('state');
  const phase = c.get('phase');
  const trajT = c.get('trajT');
  const fresh = c.get('fresh');
  const qDes = [c.get('qDes0'), c.get('qDes1')];
  const period = 1 / rec.info.header.rateHz;
  // Split into trajectories, keeping the fresh track-phase ticks of each.
  const groups: number[][] = [];
  let last = Number.POSITIVE_INFINITY;
  for (let i = 0; i < c.length; i++) {
    if (state[i] !== TRACK_STATE) continue;
    if (!groups.length || trajT[i]! < last - 1e-9) groups.push([]);
    last = trajT[i]!;
    if (phase[i] === TRACK_PHASE && fresh[i] === 1) groups[groups.length - 1]!.push(i);
  }
  const out: SegmentClock[] = [];
  groups.forEach((ticks, index) => {
    if (!ticks.length) return;
    const { name, plan } = mainPath(rec, index);
    const start = trajT[ticks[0]!]!; // the track phase began at most a period or so before
    const tau = new Float64Array(ticks.length).fill(Number.NaN);
    let solved = 0;
    if (plan) {
      const des = new Array<number>(n).fill(0);
      ticks.forEach((i, k) => {
        for (let j = 0; j < n; j++) des[j] = qDes[j]![i]!;
        const guess = trajT[i]! - start;
        const t = solveTau(plan, des, guess, Math.max(0, guess - 4 * period - 0.05), Math.min(plan.duration, guess + 4 * period + 0.05));
        if (t !== undefined) {
          tau[k] = t;
          solved++;
        }
      });
    }
    const offsets: number[] = [];
    ticks.forEach((i, k) => {
      if (Number.isFinite(tau[k]!)) offsets.push(trajT[i]! - tau[k]!);
    });
    const off = offsets.length ? median(offsets) : start;
    let prev = Number.NEGATIVE_INFINITY;
    ticks.forEach((i, k) => {
      if (!Number.isFinite(tau[k]!)) tau[k] = trajT[i]! - off;
      // A reading is never earlier on the trajectory than the one before it.
      if (tau[k]! < prev) tau[k] = prev;
      prev = tau[k]!;
    });
    out.push({
      index,
      name,
      durationS: plan ? plan.duration : tau[tau.length - 1]!,
      ticks,
      tau,
      solved,
      method: plan ? 'plan' : 'trajT',
    });
  });
  return out;
}
