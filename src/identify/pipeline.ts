/**
 * Identification end to end, independent of where the arm is: a `RunPaths` function drives the arm
 * (the mock in virtual time, or a Session to hardware in real time) and hands back the ticks; this
 * module designs the excitation, fits, builds the identified rig, and compares the twin residual and
 * the tracking error before and after on a second, different trajectory.
 */
import type { Rig } from '../config/load.js';
import { resolveRig, twoLinkArm } from '../config/load.js';
import { parseRigFile } from '../config/rig.js';
import { createActuatedArmModel } from '../model/actuated.js';
import type { PathSpec } from '../model/builtins.js';
import type { RunSummary } from '../run/stats.js';
import { designExcitation, type Excitation, type ExcitationOptions } from './excitation.js';
import { fitTickFromRow, fitTicks, type FitOptions, type FitResult, type FitTick } from './fit.js';
import { fromVector, modelBaseParameters, type BaseParameterKey, type BaseParameters } from './regressor.js';
import { identifiedRigFile } from './rigfile.js';
import { describeStop, type StopReason } from '../control/stop.js';

/** Drives `rig`'s arm along `paths` (recording to `record` when given) and returns the run's rows. */
export type RunPaths = (rig: Rig, paths: PathSpec[], record?: string) => Promise<{ summary: RunSummary; rows: Float64Array[] }>;

/** A run that did not end as planned (a fault, a lost link): its stop, in words and (`stop`) as a value. */
export class RunError extends Error {
  override readonly name = 'RunError';
  constructor(
    message: string,
    /** The link could not be opened or was lost (rather than the loop stopping on a fault). */
    readonly connection = false,
    /** How the run stopped, when it ran. */
    readonly stop?: StopReason,
  ) {
    super(message);
  }
}

/** Twin residual and tracking error before and after, per joint [deg]. */
export interface ValidationFigures {
  twinRmsDegBefore: number[];
  twinRmsDegAfter: number[];
  trackingRmsDegBefore: number[];
  trackingRmsDegAfter: number[];
}

/** The validation trajectory: another sum of sines (other frequencies, other phases, smaller, shorter) than the excitation. */
export function validationPath(rig: Rig, o: ExcitationOptions = {}): Excitation {
  return designExcitation(rig, {
    ...o,
    amplitude: 0.75 * (o.amplitude ?? 0.6),
    duration: Math.max(6, 0.4 * (o.duration ?? 30)),
    maxFrequencyHz: 0.7 * (o.maxFrequencyHz ?? 1.5),
    harmonics: Math.max(2, (o.harmonics ?? 5) - 1),
    seed: (o.seed ?? 1) + 1000,
    candidates: 8,
    name: 'validation',
  });
}

/** Runs the excitation and returns its ticks for the fit. */
export async function runExcitation(rig: Rig, run: RunPaths, ex: Excitation, record?: string): Promise<FitTick[]> {
  const r = await run(rig, [ex.path], record);
  if (r.summary.stop.kind !== 'done')
    throw new RunError(`the excitation run stopped early: ${describeStop(r.summary.stop)}`, false, r.summary.stop);
  return r.rows.map(fitTickFromRow);
}

/** The fit and what follows from it. */
export interface Identified {
  fit: FitResult;
  parameters: BaseParameters;
  /** The identified rig file (raw JSON, valid against the schema) and the rig it resolves to. */
  rigFile: Record<string, unknown>;
  rig: Rig;
}

/** Fits `ticks` and builds the identified rig from the rig file `raw` (as written) that resolves to `rig`. */
export function identify(
  rig: Rig,
  raw: Record<string, unknown>,
  ticks: readonly FitTick[],
  o: FitOptions = {},
  label = 'identified',
): Identified {
  const fit = fitTicks(rig, ticks, o);
  const parameters = fromVector(fit.theta);
  const rigFile = identifiedRigFile(raw, rig, parameters);
  const next = resolveRig(parseRigFile(rigFile, label), label);
  return { fit, parameters, rigFile, rig: next };
}

/** The rig with the disturbance observer off: feedforward + PID alone, so that the tracking error shows the model. */
export function withoutObserver(rig: Rig): Rig {
  return { ...rig, control: { ...rig.control, disturbanceObserver: false } };
}

/**
 * Runs `path` with the rig before and after identification (the arm, or the mock's plant, is the
 * same), both with feedforward + PID and the disturbance observer off: the observer hides feedforward
 * errors, and the point is to see the model's.
 */
export async function validate(before: Rig, after: Rig, run: RunPaths, path: PathSpec): Promise<ValidationFigures> {
  before = withoutObserver(before);
  after = withoutObserver(after);
  const a = await run(before, [path]);
  if (a.summary.stop.kind !== 'done')
    throw new RunError(`the validation run with the old rig stopped early: ${describeStop(a.summary.stop)}`, false, a.summary.stop);
  const b = await run(after, [path]);
  if (b.summary.stop.kind !== 'done')
    throw new RunError(`the validation run with the identified rig stopped early: ${describeStop(b.summary.stop)}`, false, b.summary.stop);
  return {
    twinRmsDegBefore: a.summary.twin.rmsDeg,
    twinRmsDegAfter: b.summary.twin.rmsDeg,
    trackingRmsDegBefore: a.summary.tracking.rmsDeg,
    trackingRmsDegAfter: b.summary.tracking.rmsDeg,
  };
}

/** The base parameters of a mock rig's plant (the truth the fit should find), or undefined for hardware. */
export function plantParameters(rig: Rig): BaseParameters | undefined {
  const p = rig.plant;
  if (!p) return undefined;
  twoLinkArm({ ...rig, arm: p.arm }); // refuses a one-link plant, naming the file
  return modelBaseParameters(
    createActuatedArmModel({
      arm: p.arm,
      motors: p.motors,
      friction: { viscous: p.viscous, coulomb: p.coulomb },
      supplyV: p.supplyV,
      coulombVelocity: p.coulombVelocity,
    }),
  );
}

/** Relative error of each estimate against the truth (fraction). */
export function relativeErrors(est: BaseParameters, truth: BaseParameters): Record<BaseParameterKey, number> {
  return Object.fromEntries(
    Object.entries(truth).map(([k, v]) => [k, v !== 0 ? (est[k as BaseParameterKey] - v) / Math.abs(v) : est[k as BaseParameterKey]]),
  ) as Record<BaseParameterKey, number>;
}
