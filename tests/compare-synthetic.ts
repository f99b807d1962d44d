// A small synthetic recording, written the way the recorder writes one, whose errors are known
// functions: the compare tests check the code against these functions, not against its own output.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { loadRig } from '../src/config/load.js';
import type { PathSpec } from '../src/model/builtins.js';
import { buildPath } from '../src/model/trajectory.js';

export const RIG = loadRig('rigs/mock-arm.json');

/** The plan of the synthetic runs: a joint-space move and a hold. */
export const SPEC: PathSpec = {
  name: 'synthetic',
  description: 'joint-space minimum jerk to (0.5, -0.3) rad in 1 s, then a 0.2 s hold',
  start: { q: [0, 0] },
  steps: [
    { kind: 'joint', to: [0.5, -0.3], duration: 1 },
    { kind: 'hold', duration: 0.2 },
  ],
};

export interface SyntheticRun {
  /** Loop rate [Hz]. */
  rateHz: number;
  /** Where the arm starts (the approach goes from here to the plan's start) [rad]. */
  q0: [number, number];
  /** Approach and park durations [s]. */
  approachS: number;
  parkS: number;
  /** Idle ticks before the trajectory. */
  idleTicks: number;
  /** Measured - desired [rad] as a function of the trajectory time of the reading (tau, from the trajectory proper's start; negative in the approach). */
  error(tau: number, joint: number): number;
  /** Measured - twin [rad] as a function of loop time. */
  residual(t: number, joint: number): number;
  /** Age of the reading a tick gets [s] (0 .. 2 periods), by tick index. */
  age?(k: number): number;
  /** Ticks with no fresh reading (the previous one is repeated), by tick index. */
  stale?(k: number): boolean;
}

/** One tick as the test knows it, for independent computations. */
export interface KnownTick {
  t: number;
  state: string;
  phase: string;
  trajT: number;
  /** Trajectory time of the reading from the trajectory proper's start [s] (NaN outside a trajectory). */
  tau: number;
  fresh: boolean;
  des: number[];
  meas: number[];
  res: number[];
}

const dir = mkdtempSync(`${tmpdir()}/twolink-compare-`);
let files = 0;

/** A temporary file name. */
export function tmp(name: string): string {
  return `${dir}/${files++}-${name}`;
}

/** Writes a synthetic recording; returns its file and the ticks as the test made them. */
export function writeSynthetic(
  run: SyntheticRun,
  opts: { truncate?: boolean; summary?: boolean; stop?: { kind: string; [k: string]: unknown }; stopReason?: string } = {},
): { file: string; ticks: KnownTick[]; lines: string[] } {
  const arm = RIG.arm;
  const main = buildPath(arm, SPEC.start, SPEC.steps);
  const startQ = main.sample(0).q;
  const whole = buildPath(arm, { q: run.q0 }, [
    { kind: 'joint', to: startQ, duration: run.approachS },
    ...SPEC.steps,
    { kind: 'joint', to: run.q0, duration: run.parkS },
  ]);
  const dt = 1 / run.rateHz;
  const header = {
    kind: 'header',
    twolink: '0.1.0',
    protocol: 1,
    startedAt: '2026-01-02T03:04:05.000Z',
    joints: 2,
    rateHz: run.rateHz,
    feedforward: 'desired',
    target: { kind: 'mock' },
    rig: { file: RIG.file, name: RIG.name, content: RIG.source },
    trajectories: [SPEC],
    injections: [],
  };
  const lines = [JSON.stringify(header)];
  const ticks: KnownTick[] = [];
  const total = run.idleTicks + Math.round((run.approachS + main.duration + run.parkS) / dt) + 5;
  let last: { q: number[]; des: number[]; qd: number[]; qdd: number[]; tau: number } | undefined;
  const tStart = run.idleTicks * dt;
  for (let k = 0; k < total; k++) {
    const t = k * dt;
    let state = 'idle';
    let phase = 'none';
    let trajT = -1;
    if (k >= run.idleTicks) {
      trajT = t - tStart;
      if (trajT < whole.duration) {
        state = 'track';
        phase = trajT < run.approachS ? 'approach' : trajT < run.approachS + main.duration ? 'track' : 'park';
      } else {
        state = 'hold';
        trajT = -1;
      }
    }
    const stale = k > 0 && (run.stale?.(k) ?? false) && last !== undefined;
    let reading = last!;
    if (!stale) {
      // A reading taken `age` before the tick: the plan at that moment, the arm off it by error().
      const u = state === 'idle' ? 0 : state === 'hold' ? whole.duration : Math.max(0, trajT - (run.age?.(k) ?? 0));
      const s = whole.sample(u);
      const tau = u - run.approachS;
      reading = {
        des: s.q.slice(),
        qd: s.qd.slice(),
        qdd: s.qdd.slice(),
        q: s.q.map((v, j) => v + run.error(tau, j)),
        tau,
      };
      last = reading;
    }
    const res = [0, 1].map((j) => run.residual(t, j));
    const tick = {
      kind: 'tick',
      t,
      i: k,
      state,
      trajT,
      phase,
      des: { q: reading.des, qd: reading.qd, qdd: reading.qdd },
      meas: { q: reading.q, qd: reading.qd, linkKnown: 0, qLink: [0, 0] },
      twin: { q: reading.q.map((v, j) => v - res[j]!), qd: reading.qd, res, tauExt: [0, 0] },
      tau: { ff: [Math.sin(t), Math.cos(t)], pid: [0.1 * t, -0.1 * t], cmd: [Math.sin(t) + 0.1 * t, Math.cos(t) - 0.1 * t] },
      duty: [0.01 * k, -0.01 * k],
      timing: { errUs: 10 + (k % 7), execUs: 50, overruns: 0, missed: 0, burst: 0 },
      link: { sent: k, received: k, lost: 0, corrupt: 0 },
      alarm: 0,
      flags: 0,
      boardT: t - (run.age?.(k) ?? 0) + 100,
      fresh: stale ? 0 : 1,
      sat: 0,
      sample: k,
      dutyIn: [0.01 * k, -0.01 * k],
      fEst: [0, 0],
      stiffness: 0,
      float: 0,
      plant: { known: 0, q: [0, 0] },
    };
    lines.push(JSON.stringify(tick));
    ticks.push({
      t,
      state,
      phase,
      trajT,
      tau: state === 'track' ? reading.tau : Number.NaN,
      fresh: !stale,
      des: reading.des,
      meas: reading.q,
      res,
    });
    if (k === run.idleTicks) lines.push(JSON.stringify({ kind: 'trajectory', event: 'loop', name: SPEC.name, phase: 'approach', t }));
  }
  if (opts.summary !== false)
    lines.push(
      JSON.stringify({
        kind: 'summary',
        ticks: ticks.length,
        stopReason: opts.stopReason ?? 'done',
        ...(opts.stop ? { stop: opts.stop } : {}),
      }),
    );
  let text = `${lines.join('\n')}\n`;
  if (opts.truncate) text += '{"kind":"tick","t":9.99,"i":';
  const file = tmp('synthetic.ndjson');
  writeFileSync(file, text);
  return { file, ticks, lines };
}

export const DEG = 180 / Math.PI;

/** RMS, mean and the largest |value| (with its index) of a list, computed plainly. */
export function plainStats(values: readonly number[]): { n: number; rms: number; mean: number; maxAbs: number; at: number } {
  let sq = 0;
  let sum = 0;
  let maxAbs = -1;
  let at = -1;
  values.forEach((v, i) => {
    sq += v * v;
    sum += v;
    if (Math.abs(v) > maxAbs) {
      maxAbs = Math.abs(v);
      at = i;
    }
  });
  return { n: values.length, rms: Math.sqrt(sq / values.length), mean: sum / values.length, maxAbs, at };
}
