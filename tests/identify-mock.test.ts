// Identification end to end on the mock rig in virtual time (deterministic): a plant far from the
// nominal model (rigs/mock-arm-far.json: link masses 30% off, friction the nominal lacks, motor 2's
// rotor inertia off). The expected values are the plant's own parameters from the rig file.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { hangGuardMs } from './helpers/hang-guard.js';
import { loadRig, parseJsonText, resolveRig, type Rig } from '../src/config/load.js';
import { parseRigFile } from '../src/config/rig.js';
import { designExcitation } from '../src/identify/excitation.js';
import { fitTickFromRow, fitTicks, type FitTick } from '../src/identify/fit.js';
import {
  identify,
  plantParameters,
  validate,
  validationPath,
  type Identified,
  type RunPaths,
  type ValidationFigures,
} from '../src/identify/pipeline.js';
import { readRecording } from '../src/identify/recording.js';
import { BASE_PARAMETERS, type BaseParameters } from '../src/identify/regressor.js';
import { replayTwinRmsDeg } from '../src/identify/replay.js';
import { virtualRun, type VirtualRunResult } from '../src/identify/virtual.js';

const RIG = 'rigs/mock-arm-far.json';
const run: RunPaths = async (rig, paths, record) => {
  const r = await virtualRun(rig, paths, record ? { record } : {});
  return { summary: r.summary, rows: r.rows };
};

describe('identification on the mock rig with a plant far from the nominal model', () => {
  let rig: Rig;
  let raw: Record<string, unknown>;
  let truth: BaseParameters;
  let excitationRun: VirtualRunResult;
  let ticks: FitTick[];
  let id: Identified;
  let recording: string;

  beforeAll(async () => {
    rig = loadRig(RIG);
    raw = parseJsonText(readFileSync(RIG, 'utf8'), RIG) as Record<string, unknown>;
    truth = plantParameters(rig)!;
    const ex = designExcitation(rig);
    recording = join(mkdtempSync(join(tmpdir(), 'twolink-identify-')), 'excitation.ndjson');
    excitationRun = await virtualRun(rig, [ex.path], { record: recording });
    ticks = excitationRun.rows.map(fitTickFromRow);
    id = identify(rig, raw, ticks);
  }, hangGuardMs(60_000));

  it('starts from a nominal model that is far off: link masses 30% off, no friction', () => {
    const a = rig.arm as { m1: number; m2: number };
    const p = rig.plant!.arm as { m1: number; m2: number };
    expect(Math.abs(p.m1 / a.m1 - 1)).toBeGreaterThanOrEqual(0.29);
    expect(Math.abs(p.m2 / a.m2 - 1)).toBeGreaterThanOrEqual(0.29);
    expect(rig.friction.viscous).toEqual([0, 0]);
    expect(truth.fv1).toBeGreaterThan(0);
  });

  it('recovers every base parameter of the plant within a few percent, and within 4 of its reported standard deviations', () => {
    expect(excitationRun.summary.stop).toEqual({ kind: 'done' });
    for (const b of BASE_PARAMETERS) {
      const est = id.fit.parameters[b.key];
      const err = est.value - truth[b.key];
      expect(Math.abs(err) / truth[b.key], `${b.key}: ${est.value} vs ${truth[b.key]}`).toBeLessThan(0.03);
      expect(Math.abs(err), `${b.key}: error ${err} vs std ${est.std}`).toBeLessThan(4 * est.std + 1e-4 * truth[b.key]);
      expect(est.std).toBeGreaterThan(0);
      expect(est.atBound || est.fixed).toBe(false);
    }
    expect(id.fit.condition).toBeGreaterThan(1);
    expect(id.fit.condition).toBeLessThan(20);
  });

  it('fits the same from the NDJSON recording as from the rows in memory', async () => {
    const rec = await readRecording(recording);
    expect(rec.ticks.length).toBe(excitationRun.rows.length);
    expect(fitTicks(rig, rec.ticks).theta).toEqual(id.fit.theta);
  });

  it('copes with readings the loop never saw (late, behind a newer one), as on a real serial line', () => {
    // Every 7th tick (each of the 7 alignments of those holes), and now and then three in a row, without
    // a fresh reading. Behind the 16U2 model's 4.096 ms flush (src/config/cable.ts) about half the samples
    // already come in bursts and are not answered; with these holes on top the masses, inertias and
    // Coulomb levels stay within 5 %, while joint 1's viscous friction (a small term: 0.03 N m s/rad)
    // moves with where the holes fall: -9.6 % to +8.6 % over the alignments (2.3 % with no holes). One
    // alignment was pinned before at 3.9 %; a shift of one sample (the first sample now counted) made
    // it 8.6 %, so the bound states the spread instead.
    for (let k = 0; k < 7; k++) {
      const holey = ticks.map((t, r) => (r % 7 === k || r % 211 < 3 ? { ...t, fresh: false } : t));
      const fit = fitTicks(rig, holey);
      expect(fit.segments).toBe(id.fit.segments);
      for (const b of BASE_PARAMETERS) {
        const bound = b.key === 'fv1' ? 0.12 : 0.05;
        expect(Math.abs(fit.parameters[b.key].value - truth[b.key]) / truth[b.key], `${b.key}, holes at r % 7 = ${k}`).toBeLessThan(bound);
      }
    }
  });

  it('replays the twin offline exactly as it ran live', () => {
    const replay = replayTwinRmsDeg(rig, ticks);
    replay.forEach((v, j) => expect(v).toBeCloseTo(excitationRun.summary.twin.rmsDeg[j]!, 9));
  });

  it('writes a rig file that is valid, keeps everything but the arm, the friction and motor 2 rotor inertia, and keeps the plant', () => {
    const f = parseRigFile(JSON.parse(JSON.stringify(id.rigFile)), 'identified');
    const r = resolveRig(f, 'identified');
    const strip = (o: Record<string, unknown>): Record<string, unknown> => {
      const { arm: _a, friction: _f, motors: _m, plant: _p, ...rest } = o;
      return rest;
    };
    expect(strip(id.rigFile)).toEqual(strip(raw));
    expect(r.motors[0]).toEqual(rig.motors[0]);
    expect({ ...r.motors[1], rotorInertia: 0 }).toEqual({ ...rig.motors[1], rotorInertia: 0 });
    expect(r.plant).toEqual(rig.plant);
    expect(r.friction.viscous[0]).toBeCloseTo(truth.fv1, 2);
  });

  describe('validation on a second, different trajectory', () => {
    let v: ValidationFigures;
    beforeAll(async () => {
      const vp = validationPath(rig);
      const ex = designExcitation(rig);
      expect(vp.path).not.toEqual(ex.path);
      v = await validate(rig, id.rig, run, vp.path);
    }, hangGuardMs(60_000));

    it('the twin residual RMS falls at least 5 times on each joint', () => {
      for (let j = 0; j < 2; j++) expect(v.twinRmsDegAfter[j]!, `joint ${j + 1}`).toBeLessThan(v.twinRmsDegBefore[j]! / 5);
    });

    it('the tracking error with feedforward + PID falls on each joint', () => {
      for (let j = 0; j < 2; j++) expect(v.trackingRmsDegAfter[j]!, `joint ${j + 1}`).toBeLessThan(v.trackingRmsDegBefore[j]!);
    });
  });
});
