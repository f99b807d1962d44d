/** Model benchmarks: ns per call of the hot functions, and seed 001's double pendulum scenario. */
import { computeEnergy, createActuatedArmData, createRigidArmModel } from '../model/actuated.js';
import { simulate } from '../model/arm.js';
import { forwardDynamics, inverseDynamics, TwoLinkDynamics } from '../model/dynamics.js';
import { FixedStepIntegrator } from '../model/integrate.js';
import { endpoint, fromDownwardVertical, inverseKinematics } from '../model/kinematics.js';
import type { TwoLinkParams } from '../model/types.js';
import { asOutPair, asPair, type Pair } from '../model/types.js';
import { section, type BenchResult } from './report.js';

function nsPerCall(n: number, fn: (i: number) => number): { ns: number; sink: number } {
  let sink = 0;
  for (let i = 0; i < Math.min(n, 200_000); i++) sink += fn(i); // warm-up
  let best = Infinity;
  for (let rep = 0; rep < 5; rep++) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < n; i++) sink += fn(i);
    const dt = Number(process.hrtime.bigint() - t0) / n;
    best = Math.min(best, dt);
  }
  return { ns: best, sink };
}

export function benchModel(): BenchResult {
  const p: TwoLinkParams = { L1: 0.3, L2: 0.25, d1: 0.17, d2: 0.1, m1: 0.6, m2: 0.35, I1: 0.006, I2: 0.0025, g: 9.81 };
  const qs: Pair[] = [];
  for (let i = 0; i < 1024; i++) qs.push([Math.sin(i) * 2, Math.cos(i * 1.3) * 2]);
  const out: Pair = [0, 0];
  const N = 2_000_000;
  const d = new TwoLinkDynamics(p);
  const id = nsPerCall(N, (i) => d.inverseDynamics(qs[i & 1023]!, qs[(i + 1) & 1023]!, qs[(i + 2) & 1023]!, out)[0]);
  const fd = nsPerCall(N, (i) => d.forwardDynamics(qs[i & 1023]!, qs[(i + 1) & 1023]!, qs[(i + 2) & 1023]!, out)[0]);
  const idFree = nsPerCall(N, (i) => inverseDynamics(p, qs[i & 1023]!, qs[(i + 1) & 1023]!, qs[(i + 2) & 1023]!, out)[0]);
  const fdFree = nsPerCall(N, (i) => forwardDynamics(p, qs[i & 1023]!, qs[(i + 1) & 1023]!, qs[(i + 2) & 1023]!, out)[0]);
  const fk = nsPerCall(N, (i) => endpoint(p, qs[i & 1023]!, out)[0]);
  const pts = qs.map((q) => endpoint(p, [q[0], 0.2 + Math.abs(q[1])]));
  const ik = nsPerCall(N, (i) => inverseKinematics(p, pts[i & 1023]!)[0]);
  const zero: Pair = [0, 0];
  const integ = new FixedStepIntegrator(2, 'rk4', (_t, q, qd, o) => void d.forwardDynamics(asPair(q), asPair(qd), zero, asOutPair(o)));
  const q: Pair = [0.1, 0.2];
  const qd: Pair = [0, 0];
  const rk4 = nsPerCall(500_000, () => {
    integ.step(0, q, qd, 1e-4);
    return q[0];
  });

  // Seed 001: thin rods, l1 = 1, l2 = 0.5, m = 1, absolute angles from the vertical, 20 s at 1e-4.
  const seed: TwoLinkParams = { L1: 1, L2: 0.5, d1: 0.5, d2: 0.25, m1: 1, m2: 1, I1: 1 / 12, I2: 0.25 / 12, g: 9.81 };
  const m = createRigidArmModel(seed);
  const mData = createActuatedArmData(m);
  const q0 = fromDownwardVertical([Math.PI / 10, Math.PI / 3]);
  const qd0 = fromDownwardVertical([2 * Math.PI, -6 * Math.PI], true);
  const e0 = computeEnergy(m, mData, q0, qd0).total;
  const scenario = (integrator: 'rk4' | 'euler' | 'semi-implicit'): { ms: number; drift: number } => {
    simulate(m, { q0, qd0, duration: 1, integrator }); // warm-up
    let best = Infinity;
    let drift = 0;
    for (let rep = 0; rep < 3; rep++) {
      const t0 = process.hrtime.bigint();
      const r = simulate(m, { q0, qd0, duration: 20, dt: 1e-4, integrator });
      best = Math.min(best, Number(process.hrtime.bigint() - t0) / 1e6);
      drift = Math.abs(computeEnergy(m, mData, r.q, r.qd).total - e0) / Math.abs(e0);
    }
    return { ms: best, drift };
  };
  const euler = scenario('euler');
  const semi = scenario('semi-implicit');
  const rk = scenario('rk4');
  const rows: [string, string, string][] = [
    ['inverse dynamics (2 links, as the loop calls it)', `${id.ns.toFixed(1)} ns/call`, 'target < 100 ns'],
    ['forward dynamics (2 links, as the plant calls it)', `${fd.ns.toFixed(1)} ns/call`, 'target < 100 ns'],
    ['inverseDynamics(p, ...) free function', `${idFree.ns.toFixed(1)} ns/call`, '(parameter cache lookup included)'],
    ['forwardDynamics(p, ...) free function', `${fdFree.ns.toFixed(1)} ns/call`, ''],
    ['forward kinematics (endpoint)', `${fk.ns.toFixed(1)} ns/call`, ''],
    ['inverse kinematics (analytic)', `${ik.ns.toFixed(1)} ns/call`, ''],
    ['RK4 step (4 x FD)', `${rk4.ns.toFixed(1)} ns/step`, ''],
    ['seed 001 scenario, explicit Euler (20 s, dt 1e-4)', `${euler.ms.toFixed(1)} ms`, `energy drift ${(euler.drift * 100).toFixed(2)} %`],
    ['seed 001 scenario, semi-implicit Euler', `${semi.ms.toFixed(1)} ms`, `energy drift ${(semi.drift * 100).toFixed(4)} %`],
    ['seed 001 scenario, RK4', `${rk.ms.toFixed(1)} ms`, `energy drift ${rk.drift.toExponential(2)} (target < 50 ms)`],
  ];
  return section('Model (src/model)', rows, {
    idNs: id.ns,
    fdNs: fd.ns,
    fkNs: fk.ns,
    ikNs: ik.ns,
    rk4StepNs: rk4.ns,
    seed001EulerMs: euler.ms,
    seed001Rk4Ms: rk.ms,
    seed001Rk4Drift: rk.drift,
    seed001EulerDrift: euler.drift,
    sink: idFree.sink + fdFree.sink + id.sink + fd.sink + fk.sink + ik.sink + rk4.sink > 0 ? 1 : 0,
  });
}
