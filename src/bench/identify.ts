/**
 * Identification figures: `twolink identify` on rigs/mock-arm-far.json (a plant 30% off in mass, with
 * friction the nominal model lacks) in virtual time: each recovered base parameter against the
 * plant's, the regressor's condition number, and the twin residual and tracking error (feedforward +
 * PID) before and after on the validation trajectory.
 */
import { readFileSync } from 'node:fs';
import { loadRig, parseJsonText } from '../config/load.js';
import { designExcitation } from '../identify/excitation.js';
import { identify, plantParameters, runExcitation, validate, validationPath, type RunPaths } from '../identify/pipeline.js';
import { BASE_PARAMETERS } from '../identify/regressor.js';
import { virtualRun } from '../identify/virtual.js';
import { section, type BenchResult } from './report.js';
import { asPair, mapPair } from '../model/types.js';

const RIG = 'rigs/mock-arm-far.json';

export async function benchIdentify(): Promise<BenchResult> {
  const t0 = process.hrtime.bigint();
  const rig = loadRig(RIG);
  const raw = parseJsonText(readFileSync(RIG, 'utf8'), RIG) as Record<string, unknown>;
  const truth = plantParameters(rig)!;
  const run: RunPaths = async (r, paths) => {
    const v = await virtualRun(r, paths);
    return { summary: v.summary, rows: v.rows };
  };
  const ex = designExcitation(rig);
  const ticks = await runExcitation(rig, run, ex);
  const id = identify(rig, raw, ticks);
  const vp = validationPath(rig);
  const v = await validate(rig, id.rig, run, vp.path);
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  const pct = (x: number): string => `${(100 * x).toFixed(2)} %`;
  const pair = (a: readonly number[]): string => a.map((x) => x.toFixed(3)).join(', ');
  const errors: Record<string, number> = {};
  const twinAfter = asPair(v.twinRmsDegAfter, 'the twin residual RMS after');
  const rows: [string, string, string][] = BASE_PARAMETERS.map((b) => {
    const e = id.fit.parameters[b.key];
    const err = (e.value - truth[b.key]) / truth[b.key];
    errors[b.key] = err;
    return [
      `${b.key} [${b.unit}]`,
      `${e.value.toPrecision(5)} vs ${truth[b.key].toPrecision(5)}`,
      `error ${pct(err)}, std ${pct(e.std / truth[b.key])}`,
    ];
  });
  const worst = Math.max(...Object.values(errors).map(Math.abs));
  rows.push(
    ['largest parameter error', pct(worst), 'target: a few percent'],
    [
      'condition number (fit, columns scaled)',
      id.fit.condition.toFixed(2),
      `excitation by design ${ex.condition.toFixed(2)}; ${id.fit.conditionRaw.toFixed(0)} in SI units`,
    ],
    [
      'twin residual RMS before -> after [deg]',
      `${pair(v.twinRmsDegBefore)} -> ${pair(v.twinRmsDegAfter)}`,
      `falls ${pair(mapPair(asPair(v.twinRmsDegBefore, 'the twin residual RMS before'), (b, j) => b / twinAfter[j]))} x (target >= 5)`,
    ],
    [
      'tracking RMS before -> after [deg]',
      `${pair(v.trackingRmsDegBefore)} -> ${pair(v.trackingRmsDegAfter)}`,
      'feedforward + PID, no disturbance observer',
    ],
    [
      'whole identification (virtual time)',
      `${seconds.toFixed(1)} s`,
      `${ticks.length} ticks of excitation, ${id.fit.samples} samples fitted`,
    ],
  );
  return section('Identification (src/identify, mock-arm-far)', rows, {
    ...Object.fromEntries(Object.entries(errors).map(([k, e]) => [`error_${k}`, e])),
    worstParameterError: worst,
    conditionNumber: id.fit.condition,
    excitationConditionNumber: ex.condition,
    twinRmsDegBefore: v.twinRmsDegBefore,
    twinRmsDegAfter: v.twinRmsDegAfter,
    trackingRmsDegBefore: v.trackingRmsDegBefore,
    trackingRmsDegAfter: v.trackingRmsDegAfter,
    seconds,
  });
}
