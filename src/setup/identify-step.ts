/**
 * Setup's step 5a: a short, gentle identification with the rig file setup has just corrected (the
 * identify pipeline of src/identify: an excitation designed inside the rig's limits, the run, the fit
 * of the base parameters). Only the parameters the fit determines well go into the rig file: an
 * estimate whose standard deviation is within WELL_IDENTIFIED of its value, not pinned to its bound
 * and excited at all; the others keep the file's value. Where the arm is (the mock in virtual time, a
 * port through a Session) is the caller's `RunPaths`.
 */
import type { Rig } from '../config/load.js';
import { twoLinkArm } from '../config/load.js';
import { preflight } from '../control/feasibility.js';
import { designExcitation, ExcitationError, type Excitation, type ExcitationOptions } from '../identify/excitation.js';
import { FitError, fitTicks, type FitResult } from '../identify/fit.js';
import { plantParameters, runExcitation, RunError, type RunPaths } from '../identify/pipeline.js';
import { BASE_PARAMETERS, baseParameters, type BaseParameterKey, type BaseParameters } from '../identify/regressor.js';
import { identifiedRigFile, RealizationError } from '../identify/rigfile.js';
import { reflectedInertia } from '../model/motor.js';
import { isTwoLink } from '../model/types.js';
import type { StepResult } from './steps.js';

/**
 * The gentle excitation: a third of the angle room and of the speed limits, half the torque, 20 s
 * of sines up to 1 Hz (`twolink identify` defaults to 0.6 of the room, 30 s, 1.5 Hz).
 */
export const GENTLE_EXCITATION: ExcitationOptions = { amplitude: 0.3, torque: 0.5, duration: 20, maxFrequencyHz: 1 };

/** Relative standard deviation under which an estimate is taken into the rig file. */
export const WELL_IDENTIFIED = 0.1;

/** Which estimates are good enough, and why the others are not. */
export function chooseParameters(
  fit: FitResult,
  nominal: BaseParameters,
): { chosen: BaseParameters; used: BaseParameterKey[]; why: Partial<Record<BaseParameterKey, string>> } {
  const chosen = { ...nominal };
  const used: BaseParameterKey[] = [];
  const why: Partial<Record<BaseParameterKey, string>> = {};
  for (const { key } of BASE_PARAMETERS) {
    const e = fit.parameters[key];
    if (e.fixed) why[key] = 'not excited';
    else if (e.atBound) why[key] = 'at its bound 0, the data want it negative';
    else if (!(e.value > 0) || !(e.std <= WELL_IDENTIFIED * Math.abs(e.value)))
      why[key] = `std ${e.value !== 0 ? Math.round((100 * e.std) / Math.abs(e.value)) : '-'}% of its value`;
    else {
      chosen[key] = e.value;
      used.push(key);
    }
  }
  return { chosen, used, why };
}

const sig4 = (v: number): number => Number(v.toPrecision(4));

/** What the step found and the rig file with what it identified well (unchanged when nothing). */
export interface IdentifyOutcome {
  step: StepResult;
  file: Record<string, unknown>;
  /** The run stopped on a fault: the arm is not ready for the first reach. */
  stopped: boolean;
}

/** Runs the gentle excitation with `rig` (the file `raw`, corrected), fits, and takes in what it identified well. */
/** The evidence of the identification step: the excitation, the fit's figures, and each parameter against the nominal (and the mock's plant). */
function fitEvidence(
  excitation: ReturnType<typeof designExcitation>,
  fit: FitResult,
  nominal: ReturnType<typeof baseParameters>,
  used: readonly string[],
  why: Readonly<Record<string, string>>,
  truth: ReturnType<typeof plantParameters>,
): Record<string, unknown> {
  return {
    excitation: excitation.path.description,
    peakDeg: excitation.peak.angle.map((a) => Math.round((a * 180) / Math.PI)),
    seconds: sig4(fit.seconds),
    condition: sig4(fit.condition),
    residualRmsNm: fit.residualRmsNm.map(sig4),
    parameters: Object.fromEntries(
      BASE_PARAMETERS.map(({ key, unit }) => [
        key,
        {
          estimate: sig4(fit.parameters[key].value),
          std: sig4(fit.parameters[key].std),
          nominal: sig4(nominal[key]),
          unit,
          written: used.includes(key),
          ...(why[key] ? { kept: why[key] } : {}),
          ...(truth ? { plant: sig4(truth[key]) } : {}),
        },
      ]),
    ),
  };
}

export async function identifyStep(rig: Rig, raw: Record<string, unknown>, run: RunPaths): Promise<IdentifyOutcome> {
  const name = 'identification';
  const skip = (summary: string, fix: string | null): IdentifyOutcome => ({
    step: { name, status: 'warn', summary, evidence: {}, fix, corrected: false },
    file: raw,
    stopped: false,
  });
  if (!isTwoLink(rig.arm)) return skip('identification fits a two-link arm; this one keeps its nominal model', null);
  let excitation;
  try {
    excitation = designExcitation(rig, GENTLE_EXCITATION);
    preflight(rig, [excitation.path], { what: () => 'the gentle excitation' });
  } catch (e) {
    if (e instanceof ExcitationError)
      return skip(
        `no gentle excitation fits the rig's limits: ${e.message}`,
        'widen limits[].minDeg/maxDeg around hanging, or run twolink identify by hand',
      );
    throw e;
  }
  let fit: FitResult;
  try {
    fit = fitTicks(rig, await runExcitation(rig, run, excitation));
  } catch (e) {
    if (e instanceof RunError) {
      return {
        step: {
          name,
          status: 'fail',
          summary: `the gentle excitation stopped: ${e.message}`,
          evidence: { excitation: excitation.path.description },
          fix: 'see the stop reason; the first reach is not run. Fix it and run setup again',
          corrected: false,
        },
        file: raw,
        stopped: true,
      };
    }
    if (e instanceof FitError) return skip(`the fit failed: ${e.message}`, 'run twolink identify by hand with a larger --amplitude');
    throw e;
  }
  return identifiedOutcome(rig, raw, excitation, fit);
}

/** What the fit gives the rig file: the parameters identified well enough written (a step that passes), or the file's model kept (a warning, with why). */
function identifiedOutcome(rig: Rig, raw: Record<string, unknown>, excitation: Excitation, fit: FitResult): IdentifyOutcome {
  const name = 'identification';
  const arm = twoLinkArm(rig);
  const nominal = baseParameters(arm, rig.motors.slice(0, 2).map(reflectedInertia), rig.friction);
  const { chosen, used, why } = chooseParameters(fit, nominal);
  const evidence = fitEvidence(excitation, fit, nominal, used, why, plantParameters(rig));
  let file = raw;
  try {
    if (used.length) file = identifiedRigFile(raw, rig, chosen);
  } catch (e) {
    if (!(e instanceof RealizationError)) throw e;
    return {
      step: {
        name,
        status: 'warn',
        summary: `the well identified parameters (${used.join(', ')}) give no physical arm: ${e.message}; the nominal model is kept`,
        evidence,
        fix: 'run twolink identify by hand with a larger --amplitude',
        corrected: false,
      },
      file: raw,
      stopped: false,
    };
  }
  const kept = Object.entries(why).map(([k, w]) => `${k} (${w})`);
  const summary = used.length
    ? `written: ${used.map((k) => `${k} ${sig4(chosen[k])} (nominal ${sig4(nominal[k])})`).join(', ')}${kept.length ? `; kept from the file: ${kept.join(', ')}` : ''}`
    : `nothing identified within ${WELL_IDENTIFIED * 100}%: the file's model is kept (${kept.join(', ')})`;
  return {
    step: {
      name,
      status: used.length ? 'pass' : 'warn',
      summary,
      evidence,
      fix: used.length ? null : 'run twolink identify by hand with a larger --amplitude and --duration',
      corrected: used.length > 0,
    },
    file,
    stopped: false,
  };
}
