/**
 * Impedance mode (issue 23): a 2 N push on the endpoint of the mock, at K = 50, 200 and 500 N/m,
 * damping ratio 1. Virtual time: static deflection against F/K, the time to half of it against the
 * ideal spring-damper with the arm's endpoint inertia, and the observer's force estimate. Real time
 * (threaded, --rt asked for): the same figures from the run's recording, and how the run ended.
 *
 * The standard mock (rigs/mock-arm-identified.json: the plant of rigs/mock-arm.json behind the 16U2 at
 * 500 Hz, the law on the identified model) keeps at most 170.4 N/m passive at (-60, 90) deg and 228.5
 * N/m at its best pose (a 150 deg elbow): 50 N/m runs at (-60, 90), 200 N/m at (-90, 120) and, along
 * the arm's light direction, at (-60, 120). 500 N/m is refused on it at every pose (the row says so
 * with the bound) and runs on the mock at 1 kHz with no USB adapter (answers one sample late).
 */
import { loadRig, type Rig } from '../config/load.js';
import { virtualRun } from '../run/virtual.js';
import { Session } from '../run/session.js';
import { parseInjection } from '../mock/injections.js';
import { F } from '../telemetry/tick.js';
import { endpoint, jacobian } from '../model/kinematics.js';
import { createActuatedArmData, createActuatedArmModel } from '../model/actuated.js';
import { designDamping, endpointInertia, jointDamping, passiveStiffnessBound, passivityTimeS } from '../control/impedance-math.js';
import { checkImpedance, ImpedanceError, loopPassivity, type ImpedanceSettings } from '../control/impedance.js';
import { impedanceLaw } from '../run/modes.js';
import { allocationPerCall } from './alloc.js';
import type { PathSpec } from '../model/builtins.js';
import type { TwoLinkParams, Vec2 } from '../model/types.js';
import { load1, section, type BenchResult } from './report.js';
import { loadRecording } from '../record/read.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const D = Math.PI / 180;
const FX = 2;
/** The standard mock with the law on its identified model. */
const STANDARD = 'rigs/mock-arm-identified.json';

/** The mock at 1 kHz with no USB adapter: where 500 N/m is accepted. */
function fastRig(): Rig {
  const rig = loadRig(STANDARD);
  rig.plant!.adapter = { kind: 'none', latencyMs: 1 };
  rig.control.rateHz = 1000;
  return rig;
}

/** One row's set-up: the rig, its label, the pose [rad] and the stiffness [N/m]. */
interface Push {
  rig: Rig;
  label: string;
  pose: number[];
  k: number;
}

const hold = (s: number, pose: number[]): PathSpec => ({
  name: 'hold',
  description: 'hold a pose',
  start: { q: pose },
  steps: [{ kind: 'hold', duration: s }],
});
const deg = (q: number[]): string => `(${q.map((v) => (v / D).toFixed(0)).join(', ')}) deg`;
const mean = (a: number[]): number => a.reduce((s, v) => s + v, 0) / a.length;

/** Time for the ideal Lambda xdd + D xd + k x = F e_x to reach half its final x [s]. */
function idealHalfTime(rig: Rig, k: number, pose: number[]): number {
  const model = createActuatedArmModel(rig);
  const L = endpointInertia(model, createActuatedArmData(model), pose, jacobian(rig.arm as TwoLinkParams, pose));
  const Dm = designDamping(L, k, k, 1);
  const det = L[0][0] * L[1][1] - L[0][1] * L[1][0];
  let x: Vec2 = [0, 0];
  let v: Vec2 = [0, 0];
  const h = 1e-5;
  for (let t = 0; t < 5; t += h) {
    const f: Vec2 = [FX - k * x[0] - Dm[0][0] * v[0] - Dm[0][1] * v[1], -k * x[1] - Dm[1][0] * v[0] - Dm[1][1] * v[1]];
    const a: Vec2 = [(L[1][1] * f[0] - L[0][1] * f[1]) / det, (-L[1][0] * f[0] + L[0][0] * f[1]) / det];
    v = [v[0] + h * a[0], v[1] + h * a[1]];
    x = [x[0] + h * v[0], x[1] + h * v[1]];
    if (x[0] >= FX / k / 2) return t;
  }
  return NaN;
}

/** The deflection along x at rest under the push (its last 0.3 s) and the time from `at` to half of it [m, s], from [t, x] pairs. */
function halfDeflection(xs: readonly (readonly [number, number])[], at: number, forS: number): { fin: number; half: number } {
  const x0 = mean(xs.filter((p) => p[0] > at - 0.3 && p[0] < at).map((p) => p[1]));
  const d = xs.filter((p) => p[0] >= at && p[0] < at + forS).map((p) => ({ t: p[0] - at, dx: p[1] - x0 }));
  const fin = mean(d.filter((p) => p.t > forS - 0.3).map((p) => p.dx));
  return { fin, half: d.find((p) => p.dx >= fin / 2)?.t ?? NaN };
}

async function virtualPush(p: Push, rows: [string, string, string][], figures: BenchResult['figures']): Promise<void> {
  const { rig, k, pose } = p;
  const at = 3;
  const forS = k < 100 ? 8 : 3;
  // The plant's true endpoint x at each tick besides the encoders' (a count of joint 2 is 0.65 mm there).
  const truth: [number, number][] = [];
  const r = await virtualRun(rig, [hold(at + forS + 1, pose)], {
    impedance: { space: 'endpoint', stiffness: k, dampingRatio: 1 },
    injections: [parseInjection(`force=${FX},0@${at}+${forS}`)],
    park: false,
    maxSeconds: at + forS + 6,
    onTick: (core, _clock, mock) => void truth.push([core.row[F.t]!, endpoint(rig.arm as TwoLinkParams, mock.plant.q)[0]]),
  });
  const x = (row: Float64Array): number => endpoint(rig.arm as TwoLinkParams, [row[F.q0]!, row[F.q1]!])[0];
  const { fin, half } = halfDeflection(
    r.rows.map((w): [number, number] => [w[F.t]!, x(w)]),
    at,
    forS,
  );
  const plantHalf = halfDeflection(truth, at, forS).half;
  const ideal = idealHalfTime(rig, k, pose);
  const f = mean(r.rows.filter((w) => w[F.t]! > at + forS - 0.3 && w[F.t]! < at + forS).map((w) => w[F.fEst0]!));
  rows.push([
    `K = ${k} N/m at ${deg(pose)}, ${p.label}`,
    `deflection ${(fin * 1000).toFixed(2)} mm (F/K ${((FX / k) * 1000).toFixed(2)}, ${(((fin - FX / k) / (FX / k)) * 100).toFixed(1)} %)`,
    `half-deflection time ${(half * 1000).toFixed(0)} ms (ideal ${(ideal * 1000).toFixed(0)} ms, ${(((half - ideal) / ideal) * 100).toFixed(1)} %; the plant's angles: ${(plantHalf * 1000).toFixed(0)} ms, ${(((plantHalf - ideal) / ideal) * 100).toFixed(1)} %); force estimate ${f.toFixed(3)} N (${(((f - FX) / FX) * 100).toFixed(1)} %), virtual time, ${r.summary.stopReason}`,
  ]);
  const key = `${k}_${pose.map((v) => Math.round(v / D)).join('_')}`;
  figures[`deflectionMm_${key}`] = fin * 1000;
  figures[`halfTimeMs_${key}`] = half * 1000;
  figures[`idealHalfTimeMs_${key}`] = ideal * 1000;
  figures[`plantHalfTimeMs_${key}`] = plantHalf * 1000;
  figures[`forceEstimateN_${key}`] = f;
}

async function realtimePush(p: Push, rows: [string, string, string][], figures: BenchResult['figures']): Promise<void> {
  const { rig, k, pose } = p;
  // Recorded, then read back: the deflection and the estimate from the ticks of a real-time run.
  const dir = mkdtempSync(join(tmpdir(), 'twolink-bench-impedance-'));
  const file = join(dir, `k${k}.ndjson`);
  // Late enough that the approach from the hanging pose is over and the force estimate tared at rest before the push.
  const at = 4;
  const session = new Session({
    rig,
    target: { kind: 'mock' },
    paths: [hold(6, pose)],
    cycle: false,
    park: false,
    feedforward: 'desired',
    rateHz: rig.control.rateHz,
    injections: [parseInjection(`force=${FX},0@${at}+10`)],
    maxSeconds: 20,
    rt: true,
    record: file,
    impedance: { space: 'endpoint', stiffness: k, dampingRatio: 1 },
  });
  const res = await session.run();
  const s = res.summary;
  const { columns } = await loadRecording(file, ['t', 'q0', 'q1', 'fEst0']);
  rmSync(dir, { recursive: true, force: true });
  const t = columns.get('t');
  const x: number[] = [];
  for (let i = 0; i < t.length; i++) x.push(endpoint(rig.arm as TwoLinkParams, [columns.get('q0')[i]!, columns.get('q1')[i]!])[0]);
  const ideal = idealHalfTime(rig, k, pose);
  const within = (from: number, to: number, v: ArrayLike<number>): number[] =>
    Array.from(t).flatMap((ti, i) => (ti > from && ti < to ? [v[i]!] : []));
  const x0 = mean(within(at - 0.3, at, x));
  const fin = mean(within(at + 2, at + 2.4, x)) - x0;
  const idx = Array.from(t).findIndex((ti, i) => ti >= at && x[i]! - x0 >= fin / 2);
  const half = idx >= 0 ? t[idx]! - at : NaN;
  const f = mean(within(at + 2, at + 2.4, columns.get('fEst0')));
  rows.push([
    `K = ${k} N/m at ${deg(pose)}, ${p.label}`,
    `deflection ${(fin * 1000).toFixed(2)} mm (F/K ${((FX / k) * 1000).toFixed(2)}, ${(((fin - FX / k) / (FX / k)) * 100).toFixed(1)} %)`,
    `half-deflection time ${(half * 1000).toFixed(0)} ms (ideal ${(ideal * 1000).toFixed(0)} ms, ${(((half - ideal) / ideal) * 100).toFixed(1)} %); force estimate ${f.toFixed(3)} N; REAL time, threaded mock, rt ${s.timing?.rt ? 'on' : 'off'}, late ${s.overruns}, ${s.stopReason}, load ${load1().toFixed(2)}`,
  ]);
  const key = `${k}_${pose.map((v) => Math.round(v / D)).join('_')}`;
  figures[`rtDeflectionMm_${key}`] = fin * 1000;
  figures[`rtHalfTimeMs_${key}`] = half * 1000;
  figures[`rtForceEstimateN_${key}`] = f;
}

/**
 * One tick of the law after another, as the loop calls it (one sample object, its arrays rewritten in
 * place), through four poses: two at rest on the plan, one moving, one 0.6 rad off the plan (the force
 * cap) near the straight elbow; the twin's observer attached. Throws if a step fails.
 */
export function impedanceTicks(rig: Rig, settings: ImpedanceSettings): () => void {
  const law = impedanceLaw({ rig, rateHz: rig.control.rateHz, mock: true }, settings);
  law.attach({ tauExt: [0.05, -0.02] });
  const poses = [
    [-60 * D, 90 * D, 0, 0],
    [-20 * D, 30 * D, 0.01, 0.3],
    [10 * D, 5 * D, 0.6, 0],
    [-100 * D, 120 * D, -0.02, 0],
  ] as const;
  const s = { t: 0, q: [0, 0], qd: [0, 0], qDesired: [0, 0], qdDesired: [0, 0], qddDesired: [0.1, -0.1] };
  const out = [0, 0];
  const periodS = 1 / rig.control.rateHz;
  let i = 0;
  return () => {
    const p = poses[i++ & 3]!;
    s.q[0] = p[0];
    s.q[1] = p[1];
    s.qDesired[0] = p[0] + p[2];
    s.qDesired[1] = p[1] - p[2];
    s.qd[0] = p[3];
    s.qdDesired[0] = p[3];
    const r = law.step(s, periodS, out);
    if (!r.ok) throw new Error(r.reason);
  };
}

/** What the law's tick allocates, counted (bench/alloc.ts): none of its own, V8's boxed numbers only. */
function allocationRow(rig: Rig, rows: [string, string, string][], figures: BenchResult['figures']): void {
  const endpointSpace = allocationPerCall(impedanceTicks(rig, { space: 'endpoint', stiffness: 50, dampingRatio: 1 }));
  const jointSpace = allocationPerCall(impedanceTicks(rig, { space: 'joint', stiffness: 1, dampingRatio: 1 }));
  rows.push([
    "the law's tick: bytes allocated (counted, not timed)",
    `endpoint space ${endpointSpace.bytesPerCall.toFixed(1)} B, joint space ${jointSpace.bytesPerCall.toFixed(1)} B per tick`,
    `least of 20 windows of 10 000 ticks after 50 000 (V8's heap, its GC profiler); what remains is V8 boxing numbers across calls it did not inline (16 B each), not the law's arrays; Node ${process.version}, load ${load1().toFixed(2)}`,
  ]);
  figures['allocBytesPerTick_endpoint'] = endpointSpace.bytesPerCall;
  figures['allocBytesPerTick_joint'] = jointSpace.bytesPerCall;
}

/** The standard mock's refusal of 500 N/m, with its bound (the largest over the soft range). */
function refusalRow(rig: Rig, rows: [string, string, string][], figures: BenchResult['figures']): void {
  const p = loopPassivity(rig, true, rig.control.rateHz);
  const tau = passivityTimeS(p.rateHz, p.answerDelaySamples);
  const b = jointDamping(createActuatedArmModel(rig));
  let best = { bound: 0, q2: 0 };
  for (let d = 20; d <= 160; d++) {
    const bound = passiveStiffnessBound(rig.arm as TwoLinkParams, b, d * D, tau, 'endpoint');
    if (bound > best.bound) best = { bound, q2: d };
  }
  let text = 'accepted';
  try {
    checkImpedance(rig, { space: 'endpoint', stiffness: 500, dampingRatio: 1 }, p, [[-60 * D, best.q2 * D]]);
  } catch (e) {
    text = e instanceof ImpedanceError ? `refused: ${e.message.split(':')[0]}` : String(e);
  }
  rows.push([
    `K = 500 N/m, standard mock (16U2, ${rig.control.rateHz} Hz)`,
    `bound ${best.bound.toFixed(1)} N/m at its best elbow (${best.q2} deg)`,
    `${text}; T/2 + t_d = ${(tau * 1000).toFixed(1)} ms, joint damping ${b.map((v) => v.toFixed(2)).join(', ')} N m s/rad`,
  ]);
  figures['standardBoundNPerM'] = best.bound;
}

export async function benchImpedance(): Promise<BenchResult> {
  const rows: [string, string, string][] = [];
  const figures: BenchResult['figures'] = {};
  const standard = loadRig(STANDARD);
  const fast = fastRig();
  const label = `standard mock (16U2, ${standard.control.rateHz} Hz)`;
  const pushes: [Push, Push, Push, Push] = [
    { rig: standard, label, pose: [-60 * D, 90 * D], k: 50 },
    { rig: standard, label, pose: [-90 * D, 120 * D], k: 200 },
    { rig: standard, label: `${label}, the arm's light direction`, pose: [-60 * D, 120 * D], k: 200 },
    { rig: fast, label: 'mock at 1 kHz, no USB adapter', pose: [-60 * D, 90 * D], k: 500 },
  ];
  allocationRow(fast, rows, figures);
  refusalRow(standard, rows, figures);
  for (const p of pushes) await virtualPush(p, rows, figures);
  for (const p of [pushes[1], pushes[3]]) await realtimePush(p, rows, figures);
  return section('Impedance mode: a 2 N push along x (identified model, damping ratio 1)', rows, figures);
}
