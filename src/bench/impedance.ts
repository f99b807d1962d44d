/**
 * Impedance mode (issue 23): a 2 N push on the endpoint of the mock held at (-60, 90) deg, at
 * K = 50, 200 and 500 N/m, damping ratio 1. Virtual time: static deflection against F/K, the time to
 * half of it against the ideal spring-damper with the arm's endpoint inertia, and the observer's force
 * estimate. Real time (threaded, --rt asked for) at 200 and 500 N/m: the same figures from the run's
 * recording, and how the run ended. The mock runs at 1 kHz with no USB adapter (answers one sample late): the
 * default 16U2 mock at 500 Hz keeps only 170 N/m passive at this pose and refuses 500.
 */
import { loadavg } from 'node:os';
import { loadRig, type Rig } from '../config/load.js';
import { virtualRun } from '../run/virtual.js';
import { Session } from '../run/session.js';
import { parseInjection } from '../mock/injections.js';
import { F } from '../telemetry/tick.js';
import { endpoint, jacobian } from '../model/kinematics.js';
import { createActuatedArmData, createActuatedArmModel } from '../model/actuated.js';
import { designDamping, endpointInertia } from '../control/impedance-math.js';
import type { PathSpec } from '../model/builtins.js';
import type { TwoLinkParams } from '../model/types.js';
import { section, type BenchResult } from './report.js';
import { loadRecording } from '../record/read.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const D = Math.PI / 180;
const POSE = [-60 * D, 90 * D];
const FX = 2;

function fastRig(): Rig {
  const rig = loadRig('rigs/mock-arm.json');
  rig.plant!.adapter = { kind: 'none', latencyMs: 1 };
  rig.control.rateHz = 1000;
  return rig;
}

const hold = (s: number): PathSpec => ({ name: 'hold', description: 'hold a pose', start: { q: POSE }, steps: [{ kind: 'hold', duration: s }] });
const mean = (a: number[]): number => a.reduce((s, v) => s + v, 0) / a.length;

/** Time for the ideal Lambda xdd + D xd + k x = F e_x to reach half its final x [s]. */
function idealHalfTime(rig: Rig, k: number): number {
  const model = createActuatedArmModel(rig);
  const L = endpointInertia(model, createActuatedArmData(model), POSE, jacobian(rig.arm as TwoLinkParams, POSE));
  const Dm = designDamping(L, k, k, 1);
  const det = L[0][0] * L[1][1] - L[0][1] * L[1][0];
  let x = [0, 0];
  let v = [0, 0];
  const h = 1e-5;
  for (let t = 0; t < 5; t += h) {
    const f = [FX - k * x[0]! - Dm[0][0] * v[0]! - Dm[0][1] * v[1]!, -k * x[1]! - Dm[1][0] * v[0]! - Dm[1][1] * v[1]!];
    const a = [(L[1][1] * f[0]! - L[0][1] * f[1]!) / det, (-L[1][0] * f[0]! + L[0][0] * f[1]!) / det];
    v = [v[0]! + h * a[0]!, v[1]! + h * a[1]!];
    x = [x[0]! + h * v[0]!, x[1]! + h * v[1]!];
    if (x[0]! >= FX / k / 2) return t;
  }
  return NaN;
}

async function virtualPush(rig: Rig, k: number, rows: [string, string, string][], figures: BenchResult['figures']): Promise<void> {
  const at = 3;
  const forS = k < 100 ? 8 : 3;
  const r = await virtualRun(rig, [hold(at + forS + 1)], { impedance: { space: 'endpoint', stiffness: k, dampingRatio: 1 }, injections: [parseInjection(`force=${FX},0@${at}+${forS}`)], park: false, maxSeconds: at + forS + 6 });
  const x = (row: Float64Array): number => endpoint(rig.arm as TwoLinkParams, [row[F.q0]!, row[F.q1]!])[0]!;
  const x0 = mean(r.rows.filter((w) => w[F.t]! > at - 0.3 && w[F.t]! < at).map(x));
  const d = r.rows.filter((w) => w[F.t]! >= at && w[F.t]! < at + forS).map((w) => ({ t: w[F.t]! - at, dx: x(w) - x0 }));
  const fin = mean(d.filter((p) => p.t > forS - 0.3).map((p) => p.dx));
  const half = d.find((p) => p.dx >= fin / 2)?.t ?? NaN;
  const ideal = idealHalfTime(rig, k);
  const f = mean(r.rows.filter((w) => w[F.t]! > at + forS - 0.3 && w[F.t]! < at + forS).map((w) => w[F.fEst0]!));
  rows.push([
    `K = ${k} N/m, 2 N push`,
    `deflection ${(fin * 1000).toFixed(2)} mm (F/K ${((FX / k) * 1000).toFixed(2)}, ${(((fin - FX / k) / (FX / k)) * 100).toFixed(1)} %)`,
    `half-deflection time ${(half * 1000).toFixed(0)} ms (ideal ${(ideal * 1000).toFixed(0)} ms); force estimate ${f.toFixed(3)} N (${(((f - FX) / FX) * 100).toFixed(1)} %), virtual time, ${r.summary.stopReason}`,
  ]);
  figures[`deflectionMm_${k}`] = fin * 1000;
  figures[`halfTimeMs_${k}`] = half * 1000;
  figures[`forceEstimateN_${k}`] = f;
}

async function realtimePush(rig: Rig, k: number, rows: [string, string, string][], figures: BenchResult['figures']): Promise<void> {
  // Recorded, then read back: the deflection and the estimate from the ticks of a real-time run.
  const dir = mkdtempSync(join(tmpdir(), 'twolink-bench-impedance-'));
  const file = join(dir, `k${k}.ndjson`);
  const at = 2.5;
  const session = new Session({
    rig,
    target: { kind: 'mock' },
    paths: [hold(4)],
    cycle: false,
    park: false,
    feedforward: 'desired',
    rateHz: 1000,
    injections: [parseInjection(`force=${FX},0@${at}+10`)],
    maxSeconds: 15,
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
  for (let i = 0; i < t.length; i++) x.push(endpoint(rig.arm as TwoLinkParams, [columns.get('q0')[i]!, columns.get('q1')[i]!])[0]!);
  const within = (from: number, to: number, v: ArrayLike<number>): number[] => Array.from(t).flatMap((ti, i) => (ti > from && ti < to ? [v[i]!] : []));
  const x0 = mean(within(at - 0.3, at, x));
  const fin = mean(within(4.5, 4.9, x)) - x0;
  const idx = Array.from(t).findIndex((ti, i) => ti >= at && x[i]! - x0 >= fin / 2);
  const half = idx >= 0 ? t[idx]! - at : NaN;
  const f = mean(within(4.5, 4.9, columns.get('fEst0')));
  rows.push([
    `K = ${k} N/m, 2 N push`,
    `deflection ${(fin * 1000).toFixed(2)} mm (F/K ${((FX / k) * 1000).toFixed(2)}, ${(((fin - FX / k) / (FX / k)) * 100).toFixed(1)} %)`,
    `half-deflection time ${(half * 1000).toFixed(0)} ms (ideal ${(idealHalfTime(rig, k) * 1000).toFixed(0)} ms); force estimate ${f.toFixed(3)} N; REAL time, threaded mock, rt ${s.timing?.rt ? 'on' : 'off'}, late ${s.overruns}, ${s.stopReason}, load ${loadavg()[0]!.toFixed(2)}`,
  ]);
  figures[`rtDeflectionMm_${k}`] = fin * 1000;
  figures[`rtHalfTimeMs_${k}`] = half * 1000;
  figures[`rtForceEstimateN_${k}`] = f;
}

export async function benchImpedance(): Promise<BenchResult> {
  const rows: [string, string, string][] = [];
  const figures: BenchResult['figures'] = {};
  const rig = fastRig();
  for (const k of [50, 200, 500]) await virtualPush(rig, k, rows, figures);
  for (const k of [200, 500]) await realtimePush(rig, k, rows, figures);
  return section('Impedance mode: a 2 N push at (-60, 90) deg (mock at 1 kHz, no USB adapter, damping ratio 1)', rows, figures);
}
