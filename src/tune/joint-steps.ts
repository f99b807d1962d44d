/**
 * tune's four steps on one joint (driver.ts runs them in turn): the relay, the response, the gains,
 * the validation. Each runs its experiment through the loop, analyses it with the pure numerics and
 * adds a StepResult with its evidence and fix.
 *
 * Tune works joint by joint, on one-joint rigs too: `j` indexes the rig's per-joint arrays (one or two
 * entries, Rig.joints), and traces and bands are samples and frequency bins; those indices keep their `!`.
 */
import { adapterFlushS, cableAdvice, runCable } from '../config/cable.js';
import type { Rig } from '../config/load.js';
import { computeGravity, computeMassMatrix, createActuatedArmData, motorDamping } from '../model/actuated.js';
import { asPair } from '../model/types.js';
import type { StepResult } from '../setup/steps.js';
import { add, type C, div, mul } from './complex.js';
import {
  ACCEPT_GM_DB,
  ACCEPT_PM_DEG,
  designChoices,
  designGains,
  FILTER_CANDIDATES_HZ,
  identify,
  interpolateGains,
  MIN_GM_DB,
  MIN_PM_DEG,
  nfftFor,
  type Design,
  type Identified,
  type Plan,
} from './design.js';
import { gravityStiffness, torqueAtDuty, type TuneOptions } from './driver.js';
import { pdChirpLaw, pidLaw, relayLaw, type ChirpOptions } from './experiments.js';
import { coupledResponse, diag, estimatorResponse, scaledModel, type CoupledModel } from './joint-model.js';
import type { Trace, TuneLoop } from './loop.js';
import { logBands, trusted, type FrequencyResponse } from './spectra.js';
import { spectraHere, type SpectraJob } from './spectra-job.js';
import type { RealTimeCompute } from './realtime-compute.js';
import { margins, type Margins } from './margins.js';
import { loopResponse, pidForCrossover, pidResponse } from './pid-design.js';
import { analyzeRelay, cohenCoon, tyreusLuyben, zieglerNichols, type RelayAnalysis } from './relay.js';

const DEG = 180 / Math.PI;
const r3 = (v: number): number => Number(v.toPrecision(3));

export interface Measured extends Margins {
  overshootPct: number;
  settlingS: number;
  /** The loop's measured response (for the figures). */
  loop: FrequencyResponse;
  step: Trace;
  stepRad: number;
  /** The gain margin, or its lower bound -|L| at the last coherent band when the phase does not cross -180 deg there [dB]. */
  gainMarginAtLeastDb: number;
  /** Within 10 % of the target, PM >= 45 deg, GM >= 6 dB. */
  ok?: boolean;
}

export interface JointTune {
  joint: number;
  relay: RelayAnalysis | null;
  identified: Identified | null;
  design: Design | null;
  measured: Measured | null;
  ok: boolean;
}

export interface JointStepsContext {
  rig: Rig;
  loop: TuneLoop;
  joint: number;
  options: TuneOptions;
  plan: Plan;
  guard<T>(p: Promise<T>): Promise<T>;
  add(r: StepResult): StepResult;
  /** The status of the last step added. */
  lastStatus(): string;
  /** In real time, how long computations leave the loop's thread free to answer the board's samples (TuneContext.compute). */
  compute?: RealTimeCompute;
}

/** The light PD the chirp runs under: a crossover of LIGHT_HZ on the model's inertia at the pose. */
const LIGHT_HZ = 2;
/** Chirp: the angle amplitude aimed at [rad], the lengths [s] of the open and the closed-loop chirp. */
const CHIRP_AMPLITUDE_RAD = 6 / DEG;
const CL_CHIRP_AMPLITUDE_RAD = 4 / DEG;
const CHIRP_S = 12;
const CL_CHIRP_S = 8;
/** The validation's step: at most STEP_MAX_RAD, and small enough that kp times it stays within STEP_TORQUE of the torque limit (a linear step, not a saturated one). It settles into 5 % of it or 1.5 counts, whichever is wider. */
const STEP_MAX_RAD = 3 / DEG;
const STEP_TORQUE = 0.5;

function stepFor(d: Design, maxTorque: number): number {
  const kp = Math.max(...d.gains.map((g) => g.kp));
  return Math.min(STEP_MAX_RAD, (STEP_TORQUE * maxTorque) / kp);
}

/**
 * The loop's delay before it is measured [periods]: the cable's expected answer delay (src/config/cable.ts
 * cableAdvice, as `twolink run` states it: the newest sample's hold in the adapter, a USB frame each way
 * and the host's turn, counted to the board sample that applies the answer) plus half the time each
 * command is held: a period, or the adapter's delivery period when that is longer (behind a 16U2 the
 * host answers only the newest sample of each 4.096 ms Timer0 burst, so a command stays applied 4.096 ms).
 * 1.5 with no adapter; 3 + 1.02 = 4.02 behind a 16U2 at 500 Hz (8.05 ms), where the chirp's fit finds
 * 6.0-6.7 ms on the mock (virtual time): the design takes the longer of the two, the preflight's bound this.
 */
export function nominalDelayPeriods(rig: Rig, o: Pick<TuneOptions, 'rateHz' | 'cable'>): number {
  const c = o.cable ?? runCable(rig, rig.plant !== undefined);
  const heldPeriods = Math.max(1, adapterFlushS(c.kind, c.latencyMs) * o.rateHz);
  return cableAdvice(c.kind, c.latencyMs, o.rateHz).answerDelaySamples + heldPeriods / 2;
}

/** The run's disturbance observer is on for this rig (with the feedforward, as control/loop.ts applies it): the design's choices follow (design.ts designChoices). */
export function observerOn(rig: Rig): boolean {
  return rig.control.disturbanceObserver && rig.control.feedforward !== 'none';
}

/** The rig's linearised model about the pose with the elbow at `elbowRad` (M, the gravity stiffness K by central differences, friction, back-EMF, `delayS`). */
export function rigModel(loop: TuneLoop, rig: Rig, elbowRad: number, delayS: number): CoupledModel {
  const data = createActuatedArmData(loop.model);
  const q = loop.pose.slice();
  if (q.length > 1) q[1] = elbowRad;
  const M = computeMassMatrix(loop.model, data, q).map((r) => r.slice());
  const h = 1e-4;
  const K = M.map((_, a) =>
    M.map((__, k) => {
      const p = q.slice();
      p[k] = q[k]! + h;
      const g1 = computeGravity(loop.model, data, p)[a]!;
      p[k] = q[k]! - h;
      return (g1 - computeGravity(loop.model, data, p)[a]!) / (2 * h);
    }),
  );
  return { M, K, b: rig.friction.viscous.slice(), B: M.map((_, i) => motorDamping(loop.model, i)), delayS };
}

/** The held joint's PD as the tested joint sees it (null with one joint). */
function holdResponse(x: JointStepsContext, fHz: number): ((w: number) => C) | null {
  if (x.rig.joints < 2) return null;
  // A two-link arm from here: the plan's gains are a pair, and the held joint is the other one.
  const held = asPair(x.plan.nominal, "the plan's nominal gains");
  const g = held[x.joint === 0 ? 1 : 0];
  const dt = 1 / x.options.rateHz;
  return (w) => add([g.kp, 0], mul([g.kd, 0], estimatorResponse(w, fHz, dt)));
}

export async function jointSteps(x: JointStepsContext): Promise<JointTune> {
  const out: JointTune = { joint: x.joint, relay: null, identified: null, design: null, measured: null, ok: false };
  out.relay = await relayStep(x);
  out.identified = await responseStep(x);
  if (!out.identified) return out;
  out.design = gainsStep(x, out.identified);
  if (!out.design) return out;
  out.measured = await validationStep(x, out.design, false, out.identified);
  if (out.measured && !out.measured.ok) {
    // The margins fell short on the measured loop: redesign on the plant that loop measured, and validate again.
    const again = redesign(x, out.design, out.measured);
    if (again) {
      out.design = again;
      out.measured = await validationStep(x, again, true, out.identified);
    } else {
      x.add({
        name: `validation ${x.joint + 1}`,
        status: 'fail',
        summary: 'no other design keeps the margins on the measured loop',
        evidence: {},
        fix: 'ask for a lower --bandwidth',
        corrected: false,
      });
    }
  }
  out.ok = x.lastStatus() !== 'fail';
  return out;
}

async function relayStep(x: JointStepsContext): Promise<RelayAnalysis | null> {
  const { loop, joint: j, rig } = x;
  const d = 0.1 * rig.limits[j]!.maxTorque;
  const eps = (3 * 2 * Math.PI) / rig.encoders[j]!.countsPerRev;
  const { law, bias } = relayLaw({ pose: loop.pose[j]!, bias0: loop.gravityAtPose()[j]!, d, eps, periods: 8, maxS: 4 });
  const tr = await x.guard(loop.run(j, law));
  const r = analyzeRelay(tr.t, tr.q, tr.c, d, eps, 4);
  const name = `relay ${j + 1}`;
  if (!r) {
    x.add({
      name,
      status: 'warn',
      summary: `joint ${j + 1} did not oscillate steadily under a relay of +-${r3(d)} N m in ${r3(tr.t[tr.t.length - 1] ?? 0)} s`,
      evidence: { relayNm: d },
      fix: 'check that the joint moves freely (friction, a stop); the frequency response does not need the relay',
      corrected: false,
    });
    return null;
  }
  const k = gravityStiffness(loop, j);
  const cc = k > 0 ? cohenCoon(r.ku, r.tu, 1 / k) : null;
  const zn = zieglerNichols(r.ku, r.tu);
  const tl = tyreusLuyben(r.ku, r.tu);
  const g = (p: { kp: number; ki: number; kd: number } | null): unknown => (p ? { kp: r3(p.kp), ki: r3(p.ki), kd: r3(p.kd) } : null);
  x.add({
    name,
    status: r.periodSpread < 0.2 ? 'pass' : 'warn',
    summary: `Ku ${r3(r.ku)} N m/rad, Tu ${r3(r.tu)} s (amplitude ${r3(r.amplitudeRad * DEG)} deg, relay +-${r3(d)} N m, bias ${r3(bias())} N m, high ${Math.round(r.dutyHigh * 100)} % of each period); Ziegler-Nichols kp ${r3(zn.kp)}, ki ${r3(zn.ki)}, kd ${r3(zn.kd)}`,
    evidence: {
      ku: r3(r.ku),
      tu: r3(r.tu),
      amplitudeDeg: r3(r.amplitudeRad * DEG),
      phaseDeg: r3(r.phaseDeg),
      relayNm: r3(d),
      biasNm: r3(bias()),
      dutyHigh: r3(r.dutyHigh),
      periodSpread: r3(r.periodSpread),
      zieglerNichols: g(zn),
      tyreusLuyben: g(tl),
      cohenCoon: cc ? { ...(g(cc) as object), tauS: r3(cc.tau), thetaS: r3(cc.theta) } : null,
      cohenCoonNote: cc
        ? 'FOPDT through the relay point with the static gain 1/k of gravity at the pose'
        : 'no self-regulating first-order model here (no gravity stiffness at the pose)',
    },
    fix:
      r.periodSpread < 0.2
        ? null
        : 'the periods varied by more than 20 %: friction or a loose coupling; the frequency response below decides the gains',
    corrected: false,
  });
  return r;
}

/** The chirp's band: 0.5-50 Hz, capped at a fifth of the sample rate. */
function chirpBand(rateHz: number): [number, number] {
  return [0.5, Math.min(50, rateHz / 5)];
}

async function responseStep(x: JointStepsContext): Promise<Identified | null> {
  const { loop, joint: j, rig, options } = x;
  const dt = 1 / options.rateHz;
  const nominal = rigModel(loop, rig, loop.pose[1] ?? 0, nominalDelayPeriods(rig, options) * dt);
  const J0 = diag(nominal.M, j);
  const w0 = 2 * Math.PI * LIGHT_HZ;
  const kp = J0 * w0 * w0;
  const kd = 1.4 * J0 * w0;
  const fHz = loop.velocityFilterHz;
  const V = (w: number): C => estimatorResponse(w, fHz, dt);
  const Ch = holdResponse(x, fHz);
  // Torque amplitude for about CHIRP_AMPLITUDE_RAD of motion (the nominal closed loop), at most half the duty.
  const cap = 0.5 * torqueAtDuty(loop, rig, j, 1);
  const amplitude = (f: number): number => {
    const w = 2 * Math.PI * f;
    const P = coupledResponse(nominal, j, w, V(w), Ch ? Ch(w) : null);
    const Cw = add([kp, 0], mul([kd, 0], V(w)));
    const T = Math.hypot(...div(P, add([1, 0], mul(Cw, P))));
    return Math.min(cap, CHIRP_AMPLITUDE_RAD / T);
  };
  const [f0, f1] = chirpBand(options.rateHz);
  const chirp: ChirpOptions = { f0, f1, T: CHIRP_S, amplitude, fadeS: 0.3 };
  const tr = await x.guard(loop.run(j, pdChirpLaw(loop.pose[j]!, loop.gravityAtPose()[j]!, kp, kd, chirp)));
  const name = `response ${j + 1}`;
  try {
    const id = await identify({ r: tr.r, u: tr.u, y: tr.q }, options.rateHz, [f0, f1], nominal, j, V, Ch, options.bandwidthHz, x.compute);
    const m = id.model;
    const kj = diag(m.K, j);
    const Jj = diag(m.M, j);
    const ok = id.fitErrorDb <= 1 && id.fitErrorDeg <= 5;
    x.add({
      name,
      status: ok ? 'pass' : 'warn',
      summary: `${id.bands.freqHz.length} bands ${r3(id.bands.freqHz[0]!)}-${r3(id.bands.freqHz[id.bands.freqHz.length - 1]!)} Hz with coherence >= 0.8; masses x${r3(id.mass)} the rig's (J ${r3(Jj)} kg m^2, rig ${r3(J0)}), b ${r3(id.b)} N m s/rad (rig ${r3(nominal.b[j]!)}), delay ${r3(m.delayS * 1000)} ms; model vs measured below ${r3(options.bandwidthHz)} Hz within ${r3(id.fitErrorDb)} dB, ${r3(id.fitErrorDeg)} deg`,
      evidence: {
        chirpHz: [f0, f1],
        chirpS: CHIRP_S,
        lightPd: { kp: r3(kp), kd: r3(kd) },
        model: { massScale: r3(id.mass), J: r3(Jj), b: r3(id.b), B: r3(m.B[j]!), k: r3(kj), delayMs: r3(m.delayS * 1000) },
        nominal: { J: r3(J0), b: nominal.b[j]!, k: r3(diag(nominal.K, j)) },
        fitErrorDb: r3(id.fitErrorDb),
        fitErrorDeg: r3(id.fitErrorDeg),
        otherJointDevDeg: r3(tr.otherDev * DEG),
      },
      fix: ok
        ? null
        : 'the joint does not behave like inertia, friction and delay about this pose (backlash, a loose coupling, a stop): check the mechanics, then tune again',
      corrected: false,
    });
    return id;
  } catch (e) {
    x.add({
      name,
      status: 'fail',
      summary: `no usable response: ${(e as Error).message}`,
      evidence: { samples: tr.t.length },
      fix: 'the encoder barely moved: check the joint moves freely and the encoder counts',
      corrected: false,
    });
    return null;
  }
}

/** The identified plant at an elbow angle: the rig's model there with the fitted mass scale, friction and delay; no gravity stiffness (the arm moves away from the pose). */
function plantAtElbow(x: JointStepsContext, id: Identified, fHz: number): (elbowRad: number) => (w: number) => C {
  const { loop, joint: j, rig, options } = x;
  const dt = 1 / options.rateHz;
  const Ch = holdResponse(x, fHz);
  return (e) => {
    const base = rigModel(loop, rig, e, 0);
    // The longer of the fitted delay and the cable's expected one: the fit sees the mean of a hold that
    // varies sample to sample (0-4.096 ms behind a 16U2), which near the phase crossover costs more.
    const delayS = Math.max(id.model.delayS, nominalDelayPeriods(rig, options) * dt);
    const m = scaledModel({ ...base, K: base.K.map((r) => r.map(() => 0)) }, j, id.mass, id.b, delayS);
    return (w) => coupledResponse(m, j, w, estimatorResponse(w, fHz, dt), Ch ? Ch(w) : null);
  };
}

function gainsStep(x: JointStepsContext, id: Identified): Design | null {
  const { loop, joint: j, rig, options } = x;
  const dt = 1 / options.rateHz;
  const fHz = x.plan.velocityFilterHz;
  const M0 = diag(rigModel(loop, rig, loop.pose[1] ?? 0, 0).M, j);
  const d = designGains(
    (e, f) => plantAtElbow(x, id, f)(e),
    (e) => diag(rigModel(loop, rig, e, 0).M, j) / M0,
    loop.pose[1] ?? 0,
    options.bandwidthHz,
    dt,
    fHz,
    id.bands,
    designChoices(observerOn(rig)),
  );
  const name = `gains ${j + 1}`;
  if (!d) {
    x.add({
      name,
      status: 'fail',
      summary: `no PID reaches a ${r3(options.bandwidthHz)} Hz crossover with ${ACCEPT_PM_DEG} deg of phase margin and ${ACCEPT_GM_DB} dB of gain margin on the measured joint ${j + 1} (delay ${r3(id.model.delayS * 1000)} ms, masses x${r3(id.mass)} the rig's); the rig's model allowed up to ${r3(x.plan.boundHz[j]!)} Hz`,
      evidence: { targetHz: options.bandwidthHz, delayMs: r3(id.model.delayS * 1000), boundHzModel: r3(x.plan.boundHz[j]!) },
      fix: `ask for a lower --bandwidth, or raise control.rateHz`,
      corrected: false,
    });
    return null;
  }
  const p = d.predicted;
  x.add({
    name,
    status: 'pass',
    summary: `for ${r3(options.bandwidthHz)} Hz: ${d.gains.map((g) => `elbow ${g.elbowDeg} deg kp ${r3(g.kp)} ki ${r3(g.ki)} kd ${r3(g.kd)}`).join('; ')}; predicted crossover ${r3(p.crossoverHz)} Hz, PM ${r3(p.phaseMarginDeg)} deg, GM ${r3(p.gainMarginDb)} dB (on the measured response: ${r3(d.predictedMeasured.crossoverHz)} Hz, ${r3(d.predictedMeasured.phaseMarginDeg)} deg); velocity estimator ${d.velocityFilterHz} Hz; the rig's model reaches up to ${r3(x.plan.boundHz[j]!)} Hz`,
    evidence: {
      targetHz: options.bandwidthHz,
      designPmDeg: d.pmDeg,
      integratorCornerFactor: d.alpha,
      gains: d.gains.map((g) => ({ elbowDeg: g.elbowDeg, kp: r3(g.kp), ki: r3(g.ki), kd: r3(g.kd) })),
      predicted: roundMargins(p),
      predictedOnMeasured: roundMargins(d.predictedMeasured),
      velocityFilterHz: d.velocityFilterHz,
      boundHz: r3(x.plan.boundHz[j]!),
    },
    fix: null,
    corrected: true,
  });
  return d;
}

function roundMargins(m: Margins): Record<string, number> {
  return {
    crossoverHz: r3(m.crossoverHz),
    phaseMarginDeg: r3(m.phaseMarginDeg),
    gainMarginDb: r3(m.gainMarginDb),
    phaseCrossoverHz: r3(m.phaseCrossoverHz),
  };
}

/** Overshoot [%] and settling time [s] of a step of `step` [rad] taken at `at` [s] from `y0`, settling into `band` [rad]. */
export function stepFigures(
  t: readonly number[],
  y: readonly number[],
  y0: number,
  step: number,
  at: number,
  band: number,
): { overshootPct: number; settlingS: number } {
  let peak = 0;
  let last = at;
  for (let i = 0; i < t.length; i++) {
    if (t[i]! < at) continue;
    const r = (y[i]! - y0) / step;
    peak = Math.max(peak, r);
    if (Math.abs(y[i]! - y0 - step) > band) last = t[i]!;
  }
  return { overshootPct: Math.max(0, (peak - 1) * 100), settlingS: last - at };
}

/**
 * The closed-loop chirp's torque amplitude at f [Hz]: `cap`, or less where the identified plant P under
 * the design's PID would move more than CL_CHIRP_AMPLITUDE_RAD (|P / (1 + C P)|): below the crossover a
 * loop tuned for a few Hz yields to a torque of a third of the limit by more than the 10 deg tune allows.
 */
function closedLoopAmplitude(x: JointStepsContext, d: Design, id: Identified, cap: number): (fHz: number) => number {
  const dt = 1 / x.options.rateHz;
  const elbow = x.loop.pose[1] ?? 0;
  const P = plantAtElbow(x, id, d.velocityFilterHz)(elbow);
  const g = interpolateGains(d.gains, elbow * DEG);
  return (f) => {
    const w = 2 * Math.PI * f;
    const p = P(w);
    const T = Math.hypot(...div(p, add([1, 0], mul(pidResponse(g, w, estimatorResponse(w, d.velocityFilterHz, dt)), p))));
    return Math.min(cap, CL_CHIRP_AMPLITUDE_RAD / T);
  };
}

async function validationStep(
  x: JointStepsContext,
  d: Design,
  final: boolean,
  id: Identified,
): Promise<(Measured & { ok: boolean }) | null> {
  const { loop, joint: j, rig, options } = x;
  loop.setVelocityFilter(d.velocityFilterHz);

  const target = options.bandwidthHz;
  const common = {
    pose: loop.pose[j]!,
    gravity: loop.gravityAtPose()[j]!,
    gains: (e: number) => interpolateGains(d.gains, e * DEG),
    elbow: (q: readonly number[]) => q[1] ?? 0,
    iLimit: rig.control.pid.iLimitNm[j]!,
  };
  const stepRad = stepFor(d, rig.limits[j]!.maxTorque);
  const step = await x.guard(loop.run(j, pidLaw({ ...common, stepRad, stepAtS: 0.2, durationS: 1.5 })));
  const band = Math.max(0.05 * stepRad, (1.5 * 2 * Math.PI) / rig.encoders[j]!.countsPerRev);
  const sf = stepFigures(step.t, step.q, common.pose, stepRad, 0.2, band);
  const amp = Math.min(0.35 * rig.limits[j]!.maxTorque, 0.5 * torqueAtDuty(loop, rig, j, 1));
  const chirp: ChirpOptions = {
    f0: target / 5,
    f1: Math.min(options.rateHz / 5, 8 * target),
    T: CL_CHIRP_S,
    amplitude: closedLoopAmplitude(x, d, id, amp),
    fadeS: 0.3,
  };
  const cl = await x.guard(loop.run(j, pidLaw({ ...common, stepRad: 0, stepAtS: 0, durationS: CL_CHIRP_S, chirp })));
  // L = -C P: c = -L u, with the excitation as the instrument.
  const job: SpectraJob = { r: cl.r, u: cl.u, y: cl.c, fs: options.rateHz, nfft: nfftFor(options.rateHz) };
  const h = (x.compute ? await x.compute.spectra(job) : spectraHere(job)).raw;
  const L = logBands(trusted({ ...h, h: h.h.map((z): C => [-z[0], -z[1]]) }, 0.6, chirp.f0, chirp.f1), 20);
  const m = margins(L.freqHz, L.h);
  const measured: Measured = { ...m, ...sf, loop: L, step, stepRad, gainMarginAtLeastDb: 0 };
  const within = Math.abs(m.crossoverHz / target - 1) <= 0.1;
  // No phase crossover in the coherent bands: the gain margin is at least -|L| at the highest band (the phase stays above -180 deg up to there).
  const lastHz = L.freqHz[L.freqHz.length - 1] ?? 0;
  const lastH = L.h.at(-1);
  const gmAtLeast = Number.isFinite(m.gainMarginDb) ? m.gainMarginDb : lastH ? -20 * Math.log10(Math.hypot(...lastH)) : -Infinity;
  measured.gainMarginAtLeastDb = gmAtLeast;
  const ok = within && m.phaseMarginDeg >= MIN_PM_DEG && gmAtLeast >= MIN_GM_DB;
  const gmText = Number.isFinite(m.gainMarginDb)
    ? `${r3(m.gainMarginDb)} dB at ${r3(m.phaseCrossoverHz)} Hz`
    : `at least ${r3(gmAtLeast)} dB (no phase crossover up to ${r3(lastHz)} Hz, the last band with coherence >= 0.6)`;
  x.add({
    name: `validation ${j + 1}`,
    status: ok ? 'pass' : final ? 'fail' : 'warn',
    summary: `measured crossover ${r3(m.crossoverHz)} Hz (target ${r3(target)}, predicted ${r3(d.predicted.crossoverHz)}), PM ${r3(m.phaseMarginDeg)} deg (predicted ${r3(d.predicted.phaseMarginDeg)}), GM ${gmText} (predicted ${r3(d.predicted.gainMarginDb)} dB); a ${r3(stepRad * DEG)} deg step overshoots ${r3(sf.overshootPct)} % and settles in ${r3(sf.settlingS)} s`,
    evidence: {
      measured: roundMargins(m),
      predicted: roundMargins(d.predicted),
      overshootPct: r3(sf.overshootPct),
      settlingS: r3(sf.settlingS),
      stepDeg: r3(stepRad * DEG),
      settleBandDeg: r3(band * DEG),
      chirpHz: [r3(chirp.f0), r3(chirp.f1)],
      chirpNm: r3(amp),
      bands: L.freqHz.length,
    },
    fix: ok
      ? null
      : !final
        ? 'tune redesigns on the loop just measured and validates again'
        : within
          ? 'the margins fell short of the design: the joint is not what the model says above the crossover (resonance, backlash); ask for a lower --bandwidth'
          : 'the crossover missed the target by more than 10 %: the response changed between the chirp and the validation (the pose, a load); run tune again',
    corrected: false,
  });
  return { ...measured, ok };
}

/**
 * A second design on the plant the validation measured, P = L / C (the loop's chirp reaches to 8x
 * the crossover, where the first chirp's model was extrapolated): the first of the choices whose
 * gains, scaled to the target crossover on that plant, keep PM >= ACCEPT_PM_DEG and GM >= ACCEPT_GM_DB.
 */
function redesign(x: JointStepsContext, d: Design, m: Measured): Design | null {
  const dt = 1 / x.options.rateHz;
  const V0 = (w: number): C => estimatorResponse(w, d.velocityFilterHz, dt);
  const at = interpolateGains(d.gains, ((x.loop.pose[1] ?? 0) * 180) / Math.PI);
  const P = m.loop.h.map((L, i) => div(L, pidResponse(at, 2 * Math.PI * m.loop.freqHz[i]!, V0(2 * Math.PI * m.loop.freqHz[i]!))));
  const wc = 2 * Math.PI * x.options.bandwidthHz;
  // The plant at the target crossover, interpolated in log frequency between the measured bands.
  const k = m.loop.freqHz.findIndex((fq) => fq >= x.options.bandwidthHz);
  const [fa, fb, pa, pb] = [m.loop.freqHz[k - 1], m.loop.freqHz[k], P[k - 1], P[k]];
  if (k <= 0 || fa === undefined || fb === undefined || !pa || !pb) return null;
  const s = Math.log(x.options.bandwidthHz / fa) / Math.log(fb / fa);
  const Pc: C = [pa[0] + s * (pb[0] - pa[0]), pa[1] + s * (pb[1] - pa[1])];
  // The estimator's bandwidth may change too (the plant measured keeps the old one's back-EMF term: small).
  for (const f of [d.velocityFilterHz, ...FILTER_CANDIDATES_HZ.filter((v) => v !== d.velocityFilterHz)])
    for (const c of designChoices(observerOn(x.rig))) {
      const V = (w: number): C => estimatorResponse(w, f, dt);
      const g = pidForCrossover(wc, Pc, V(wc), c.pm, c.alpha);
      if (!g) continue;
      const mm = margins(m.loop.freqHz, loopResponse(g, m.loop.freqHz, P, V));
      if (!(mm.phaseMarginDeg >= ACCEPT_PM_DEG && mm.gainMarginDb >= ACCEPT_GM_DB + 0.3)) continue;
      const gains = d.gains.map((p) => ({
        elbowDeg: p.elbowDeg,
        kp: (p.kp * g.kp) / at.kp,
        ki: (p.ki * g.ki) / at.ki,
        kd: (p.kd * g.kd) / at.kd,
      }));
      x.add({
        name: `gains ${x.joint + 1} (second design)`,
        status: 'pass',
        summary: `on the loop just measured, velocity estimator ${f} Hz: kp ${r3(g.kp)} ki ${r3(g.ki)} kd ${r3(g.kd)} at the pose (PM aimed ${c.pm} deg, integrator corner /${c.alpha}); predicted there crossover ${r3(mm.crossoverHz)} Hz, PM ${r3(mm.phaseMarginDeg)} deg, GM ${r3(mm.gainMarginDb)} dB`,
        evidence: { predictedOnMeasured: roundMargins(mm), pmDeg: c.pm, alpha: c.alpha },
        fix: null,
        corrected: true,
      });
      return { ...d, velocityFilterHz: f, gains, predicted: mm, predictedMeasured: mm, pmDeg: c.pm, alpha: c.alpha };
    }
  return null;
}
