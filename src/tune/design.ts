/**
 * From the experiments to the gains: the measured response (the chirp's whole record, spectra.ts sweptBands), the joint
 * model fitted to it (joint-model.ts, its delay found on a grid), the velocity estimator's bandwidth
 * and the PID for the target crossover at three elbow angles (joint 1's inertia follows the elbow:
 * the fitted inertia is scaled by the model's M_jj(elbow) / M_jj(pose)), the margins the design
 * promises, and the highest crossover the loop's rate and delay allow. Pure.
 */
import { scheduledGains } from '../control/pid.js';
import { abs, type C, div } from './complex.js';
import { coupledResponse, estimatorResponse, fitCoupled, lockedModel, type CoupledModel, type FitJob } from './joint-model.js';
import { logGrid, margins, type Margins } from './margins.js';
import { loopResponse, maxCrossoverHz, pidForCrossover, type PidGainsNm } from './pid-design.js';
import type { FrequencyResponse } from './spectra.js';
import { spectraHere, type SpectraJob } from './spectra-job.js';
import type { RealTimeCompute } from './realtime-compute.js';

/** The design's phase margin [deg]: the 45 asked for plus what the model's error below crossover can cost. */
export const DESIGN_PM_DEG = 52;
export const MIN_PM_DEG = 45;
export const MIN_GM_DB = 6;
/** The model is fitted from the crossover / FIT_FROM to FIT_TO times it. */
export const FIT_FROM = 3;
/** ... and checked from the crossover / CHECK_FROM up, and from FIT_FROM_HZ at least. */
export const CHECK_FROM = 4;
/**
 * Past the phase crossover (3.7-3.9x the crossover on the mock behind a 16U2), where the gain margin is
 * read. Fitted from the crossover / 4 to the chirp's top, weighted by coherence, the 15-30 Hz bands
 * (coherence 0.97-0.99) outweighed the rest and the fit traded delay for viscous friction: on the
 * perturbed rig's joint 1 b = 0.24 N m s/rad (the plant's 0.0375), and the bands below the crossover
 * missed by 4.2-5.0 deg (seeds 7, 1, 2, virtual time); fitted from the crossover / 3 (1.6 Hz) to 4x it,
 * 3.2-3.9 deg, and within 3.9 deg up to 20 Hz. The bands below FIT_FROM_HZ that enter the fit (with
 * their lower coherence) pin the friction the delay cannot imitate there; from the crossover / 4 they
 * spread joint 2's kp over 6 % between plant seeds (rigs/mock-arm.json), from / 3 over 1.8 %.
 */
export const FIT_TO = 4;
/**
 * [Hz] Below about 2.5 Hz Coulomb friction dominates the chirp's 4 deg motions whatever the target: at
 * the lower targets the 16U2's delay leaves (6.6 Hz, crossover / 4 = 1.65 Hz) the bands there scattered
 * 5-9 deg about the model (virtual time, rigs/mock-arm.json); at 10 Hz crossover / 4 was 2.5 Hz.
 */
export const FIT_FROM_HZ = 2.5;
/**
 * Log bands per decade the chirp's response is averaged in: 12 (was 20). Behind a 16U2 the host
 * answers one sample in two, the torque it records is the one it last sent, and the band-to-band
 * scatter of the estimate grew to 6-8 deg at 20 a decade (virtual time, rigs/mock-arm.json).
 */
export const BANDS_PER_DECADE = 12;
/** Frequencies whose coherence is below this are not used. */
export const MIN_COHERENCE = 0.8;
/** Elbow angles of the schedule [deg] (the pose's elbow is interpolated between them). */
export const SCHEDULE_ELBOW_DEG = [-120, 0, 120] as const;
/** Estimator bandwidths tried, in order (the narrowest that reaches the target wins: less noise) [Hz]. */
export const FILTER_CANDIDATES_HZ = [25, 40, 60, 80, 120, 160, 250];

export interface Identified {
  raw: FrequencyResponse;
  /** Trusted and averaged in log bands. */
  bands: FrequencyResponse;
  model: CoupledModel;
  /** The fitted mass scale against the rig's model and the joint's viscous friction [N m s/rad]. */
  mass: number;
  b: number;
  /** Model against the banded measurement below `belowHz`: worst |dB| and |deg|. */
  fitErrorDb: number;
  fitErrorDeg: number;
  /** The fitted model's response on the bands' frequencies. */
  modelH: C[];
}

/** Segment length of the Welch estimate for the sample rate: about 2 s. */
export function nfftFor(fs: number): number {
  return 2 ** Math.round(Math.log2(fs * 2));
}

/** Worst magnitude [dB] and phase [deg] error of `model` against the bands up to `belowHz`. */
export function fitError(b: FrequencyResponse, P: (w: number) => C, belowHz: number): { db: number; deg: number } {
  let db = 0;
  let deg = 0;
  b.freqHz.forEach((f, i) => {
    if (f > belowHz) return;
    const r = div(b.h[i]!, P(2 * Math.PI * f));
    db = Math.max(db, Math.abs(20 * Math.log10(abs(r))));
    deg = Math.max(deg, Math.abs((Math.atan2(r[1], r[0]) * 180) / Math.PI));
  });
  return { db, deg };
}

/**
 * The closed-loop response of the chirp (excitation r, torque u, angle y) and the rig's model fitted
 * to it (mass scale, viscous friction, delay from 0.5 periods to twice the nominal model's, at least 4).
 * `compute`: in real time (a loop answering the board's samples on this thread), the spectra and the fit
 * in a worker thread at normal priority (realtime-compute.ts); without it, all here (virtual time).
 */
export async function identify(
  e: { r: readonly number[]; u: readonly number[]; y: readonly number[] },
  fs: number,
  band: [number, number],
  nominal: CoupledModel,
  j: number,
  V: (w: number) => C,
  Ch: ((w: number) => C) | null,
  belowHz: number,
  compute?: RealTimeCompute,
): Promise<Identified> {
  // The response from the whole record (spectra.ts sweptBands), Welch's segments for the coherence only.
  const job: SpectraJob = {
    ...e,
    fs,
    nfft: nfftFor(fs),
    bands: { min: MIN_COHERENCE, f0: band[0], f1: band[1], perDecade: BANDS_PER_DECADE },
  };
  const { raw, bands } = compute ? await compute.spectra(job) : spectraHere(job);
  if (!bands) throw new Error('tune: the spectra came back without their bands');
  if (bands.freqHz.length < 5) throw new RangeError(`only ${bands.freqHz.length} frequency bands with coherence >= ${MIN_COHERENCE}`);
  // The delay from half a period to twice the cable's expected one (nominal.delayS), at least 4 periods.
  const top = Math.max(4, 2 * nominal.delayS * fs);
  const delays = Array.from({ length: Math.round((top - 0.5) / 0.1) + 1 }, (_, i) => (0.5 + 0.1 * i) / fs);
  // Fitted from a third of the crossover to FIT_TO times it; checked from a quarter of it and FIT_FROM_HZ
  // up: below, Coulomb friction (which a linear model has no place for) dominates the small motions of a chirp.
  const use = bands.freqHz.map((f) => f >= belowHz / FIT_FROM && f <= FIT_TO * belowHz);
  const pick = <T>(a: T[], keep = use): T[] => a.filter((_, i) => keep[i]);
  const checked = bands.freqHz.map((f) => f >= Math.min(Math.max(belowHz / CHECK_FROM, FIT_FROM_HZ), belowHz / 2));
  // Weighted by coherence alone: weighting toward the crossover (f^2) moved the error below it to 6 deg
  // on rigs/mock-arm.json without rescuing the perturbed rig's gain margin (5.9 dB).
  const freqHz = pick(bands.freqHz);
  const ws = freqHz.map((f) => 2 * Math.PI * f);
  const fitJob: FitJob = {
    nominal,
    j,
    freqHz,
    P: pick(bands.h),
    coherence: pick(bands.coherence),
    delays,
    Vs: ws.map(V),
    Chs: ws.map((w) => (Ch ? Ch(w) : null)),
  };
  const fit = compute ? await compute.fit(fitJob) : fitCoupled(fitJob);
  const P = (w: number): C => coupledResponse(fit.model, j, w, V(w), Ch ? Ch(w) : null);
  const err = fitError({ ...bands, freqHz: pick(bands.freqHz, checked), h: pick(bands.h, checked) }, P, belowHz);
  return {
    raw,
    bands,
    model: fit.model,
    mass: fit.mass,
    b: fit.b,
    fitErrorDb: err.db,
    fitErrorDeg: err.deg,
    modelH: bands.freqHz.map((f) => P(2 * Math.PI * f)),
  };
}

export interface Design {
  velocityFilterHz: number;
  gains: (PidGainsNm & { elbowDeg: number })[];
  /** At the pose's elbow, on the model. */
  predicted: Margins;
  /** The same gains on the measured response. */
  predictedMeasured: Margins;
  /** The phase margin aimed at [deg] and the integrator's corner factor chosen. */
  pmDeg: number;
  alpha: number;
}

/** A plant's response at an elbow angle [rad] with the velocity estimator at a bandwidth [Hz]: w [rad/s] -> P(j w). */
export type PlantAt = (elbowRad: number, velocityFilterHz: number) => (w: number) => C;

const gridFor = (dt: number): number[] => logGrid(0.1, 0.5 / dt, 600);

/** Margins of the PID `g` on plant P with the estimator at `fHz`. */
function marginsOn(P: (w: number) => C, g: PidGainsNm, fHz: number, dt: number): Margins {
  const f = gridFor(dt);
  const V = (w: number): C => estimatorResponse(w, fHz, dt);
  return margins(
    f,
    loopResponse(
      g,
      f,
      f.map((x) => P(2 * Math.PI * x)),
      V,
    ),
  );
}

/** The highest crossover [Hz] plant P reaches with the design's margins, the estimator at `fHz`. */
export function boundHz(P: (w: number) => C, fHz: number, dt: number, fromHz: number, alpha: number): number {
  const V = (w: number): C => estimatorResponse(w, fHz, dt);
  return maxCrossoverHz(fromHz, 0.25 / dt, DESIGN_PM_DEG, ACCEPT_GM_DB, P, V, (g) => marginsOn(P, g, fHz, dt).gainMarginDb, alpha);
}

export interface Plan {
  velocityFilterHz: number;
  /** The highest crossover per joint with that estimator [Hz]. */
  boundHz: number[];
  /** The PID per joint for the target on the rig's model (the other joint locked): the hold during the experiments uses its kp and kd. */
  nominal: PidGainsNm[];
}

/**
 * Before any motion: the narrowest velocity estimator with which every joint's model (the other
 * joint locked) reaches the target crossover with the design's margins, and the nominal PID there;
 * or the bound when none does (the loop's rate and delay cannot reach it). `widen` false: the rig's
 * own estimator (`floorHz`) only. `alpha`: the integrator's corner factor of the first design choice.
 */
export function preflight(
  locked: ((w: number) => C)[],
  targetHz: number,
  dt: number,
  floorHz: number,
  o: { widen: boolean; alpha: number },
): Plan | { refused: true; boundHz: number[]; velocityFilterHz: number } {
  let last = { boundHz: locked.map(() => 0), velocityFilterHz: floorHz };
  for (const fHz of o.widen ? [floorHz, ...FILTER_CANDIDATES_HZ.filter((x) => x > floorHz)] : [floorHz]) {
    const bounds = locked.map((P) => boundHz(P, fHz, dt, Math.min(1, targetHz / 4), o.alpha));
    last = { boundHz: bounds, velocityFilterHz: fHz };
    if (bounds.some((b) => b < targetHz)) continue;
    const w = 2 * Math.PI * targetHz;
    const V = estimatorResponse(w, fHz, dt);
    return { velocityFilterHz: fHz, boundHz: bounds, nominal: locked.map((P) => pidForCrossover(w, P(w), V, DESIGN_PM_DEG, o.alpha)!) };
  }
  return { refused: true, ...last };
}

/** The preflight as plain data (a worker thread can be given it): the rig's model at the pose with the loop's delay. */
export interface PreflightJob {
  model: CoupledModel;
  targetHz: number;
  dt: number;
  /** The rig's velocity estimator [Hz]. */
  floorHz: number;
  widen: boolean;
  alpha: number;
}

/** The preflight on each joint of `model` alone (the other locked), the estimator at the rig's. */
export function preflightOnModel(job: PreflightJob): ReturnType<typeof preflight> {
  const { model, dt, floorHz } = job;
  const locked = model.M.map((_, j) => {
    const l = lockedModel(model, j);
    return (w: number): C => coupledResponse(l, 0, w, estimatorResponse(w, floorHz, dt), null);
  });
  return preflight(locked, job.targetHz, dt, floorHz, { widen: job.widen, alpha: job.alpha });
}

export interface DesignChoice {
  /** The phase margin aimed at [deg]. */
  pm: number;
  /** The integrator's corner factor: ki = kp wc / alpha. */
  alpha: number;
}

/**
 * The design's choices tried, in order of preference: the phase margin aimed at and the integrator's
 * corner factor. With the rig's disturbance observer on (control.disturbanceObserver, the default,
 * with the feedforward), the observer already integrates the torque the model does not explain (at
 * twin.observerHz): the PID's integrator is put far below the crossover (alpha 20 first), where it
 * costs 3 deg of phase instead of 11 and does not fight the observer. The reach with the observer
 * on (virtual time, 16U2 model), the file's gains with kp x2 and kd x1.41: ki x2 (an integral time of
 * 1 s) tracked 0.047 / 0.115 deg RMS on rigs/mock-arm.json and 0.047 / 0.110 on the perturbed rig,
 * ki x8 0.059 / 0.113 and 0.043 / 0.121; the first tuned gains (alpha 5, ki 9x the file's) 0.052 / 0.115
 * and 0.051 / 0.129. Without the observer the integrator carries the mass error and friction: alpha 5 first.
 */
export function designChoices(observer: boolean): DesignChoice[] {
  const alphas = observer ? [20, 12, 8, 5] : [5, 8, 12, 20];
  return [52, 50, 48, 46, 55].flatMap((pm) => alphas.map((alpha) => ({ pm, alpha })));
}
/** What the model must promise for a design to be taken: a little above the requirements (the model's error). */
export const ACCEPT_PM_DEG = 46;
/**
 * 2 dB over the 6 required: behind a 16U2 the host answers one sample in two and the command's hold
 * varies with the Timer0 phase, which a single delay models only on average; with 6 dB on the model
 * the mock's loop measured 5.4-6.0 dB (virtual time, rigs/mock-arm.json, joint 1).
 */
export const ACCEPT_GM_DB = 8;

/**
 * The PID for `targetHz` on the identified plant at the pose, and the margins it promises: the first
 * of the choices (phase margin aimed at, integrator corner) and the velocity estimators from `fHz`
 * up whose loop keeps PM >= ACCEPT_PM_DEG and GM >= ACCEPT_GM_DB on the model; null when none does.
 * The schedule scales the three gains by the joint's inertia at each elbow angle over its inertia at
 * the pose, `inertiaRatio` (near the crossover the joint is an inertia: the same crossover and phase
 * margin need gains in proportion to it).
 */
export function designGains(
  plantAt: PlantAt,
  inertiaRatio: (elbowRad: number) => number,
  poseElbowRad: number,
  targetHz: number,
  dt: number,
  fHz: number,
  measured: FrequencyResponse,
  choices: readonly DesignChoice[],
): Design | null {
  const w = 2 * Math.PI * targetHz;
  for (const f of [fHz, ...FILTER_CANDIDATES_HZ.filter((x) => x > fHz)]) {
    const V = (x: number): C => estimatorResponse(x, f, dt);
    const P = plantAt(poseElbowRad, f);
    for (const c of choices) {
      const g = pidForCrossover(w, P(w), V(w), c.pm, c.alpha);
      if (!g) continue;
      const predicted = marginsOn(P, g, f, dt);
      if (!(predicted.phaseMarginDeg >= ACCEPT_PM_DEG && predicted.gainMarginDb >= ACCEPT_GM_DB)) continue;
      const gains = SCHEDULE_ELBOW_DEG.map((e) => {
        const k = inertiaRatio((e * Math.PI) / 180);
        return { elbowDeg: e, kp: g.kp * k, ki: g.ki * k, kd: g.kd * k };
      });
      const at = interpolateGains(gains, (poseElbowRad * 180) / Math.PI);
      const predictedMeasured = margins(measured.freqHz, loopResponse(at, measured.freqHz, measured.h, V));
      return { velocityFilterHz: f, gains, predicted: marginsOn(P, at, f, dt), predictedMeasured, pmDeg: c.pm, alpha: c.alpha };
    }
  }
  return null;
}

/** Gains at `elbowDeg` from the schedule, interpolated as the controller does (control/pid.ts scheduledGains). */
export function interpolateGains(s: readonly (PidGainsNm & { elbowDeg: number })[], elbowDeg: number): PidGainsNm {
  return scheduledGains(
    s.map((p) => ({ elbowDeg: p.elbowDeg, kp: [p.kp], ki: [p.ki], kd: [p.kd] })),
    0,
    elbowDeg,
  );
}
