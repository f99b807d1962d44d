// Identification on the flawed mock (issue 33 item 5), in virtual time (deterministic): the excitation
// fits the masses, each joint's play sweep the friction per direction, the breakaway and the play; the
// identified rig then runs with the disturbance observer on, as `run` uses it. The truth is the rig
// file's own plant section (rigs/mock-arm-flawed.json), never a number written here.
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { hangGuardMs } from './helpers/hang-guard.js';
import { loadRig, parseJsonText, resolveRig, type Rig } from '../src/config/load.js';
import { parseRigFile } from '../src/config/rig.js';
import { designExcitation } from '../src/identify/excitation.js';
import { fitTickFromRow } from '../src/identify/fit.js';
import {
  measured,
  measureFlaws,
  playSignificant,
  sweepRig,
  validateWithObserver,
  withFlaws,
  type JointFlaws,
  type ObserverRun,
} from '../src/identify/flaws.js';
import { identify, plantParameters, validationPath, type Identified, type RunPaths } from '../src/identify/pipeline.js';
import type { BaseParameters } from '../src/identify/regressor.js';
import type { SweepFigures } from '../src/identify/sweep.js';
import { virtualRun } from '../src/identify/virtual.js';
import { gapDerivativeCap } from '../src/control/tracking-law.js';
import { createActuatedArmModel } from '../src/model/actuated.js';

const RIG = 'rigs/mock-arm-flawed.json';
const DEG = 180 / Math.PI;
const run: RunPaths = async (rig, paths) => {
  const r = await virtualRun(rig, paths);
  return { summary: r.summary, rows: r.rows };
};

describe('identify on the flawed mock: masses, friction per direction, breakaway and play', () => {
  let rig: Rig;
  let id: Identified;
  let truth: BaseParameters;
  let flaws: JointFlaws[];
  let file: Record<string, unknown>;
  let identified: Rig;
  let valid: { before: ObserverRun; after: ObserverRun };

  beforeAll(async () => {
    rig = loadRig(RIG);
    const raw = parseJsonText(readFileSync(RIG, 'utf8'), RIG) as Record<string, unknown>;
    truth = plantParameters(rig)!;
    const ex = designExcitation(rig);
    const r = await virtualRun(rig, [ex.path]);
    expect(r.summary.stop).toEqual({ kind: 'done' });
    id = identify(rig, raw, r.rows.map(fitTickFromRow));
    flaws = await measureFlaws(rig, run);
    file = withFlaws(id.rigFile, rig, flaws);
    identified = resolveRig(parseRigFile(file, 'identified'), 'identified');
    valid = await validateWithObserver(rig, identified, run, validationPath(rig).path);
  }, hangGuardMs(120_000));

  /** The plant's flaws, from the rig file (the mock's truth). */
  const plant = (): { coulomb: number[]; viscous: number[]; breakaway: number[]; backlash: number[] } => {
    const p = rig.plant!;
    return { coulomb: p.coulomb, viscous: p.viscous, breakaway: p.breakaway!, backlash: p.backlash! };
  };
  const sweep = (j: number): SweepFigures => {
    const f = flaws[j]!;
    if (!measured(f)) throw new Error(`joint ${j + 1}'s sweep was skipped: ${f.skipped}`);
    return f;
  };
  const within = (est: number, want: number, frac: number, what: string): void => {
    expect(Math.abs(est - want) / want, `${what}: ${est} against the plant's ${want}`).toBeLessThan(frac);
  };

  it('the rig file declares no flaw the host knows of, and the plant has them (play, breakaway above Coulomb)', () => {
    const p = plant();
    expect(rig.encoders.map((e) => e.backlash)).toEqual([0, 0]);
    expect(rig.friction.breakaway).toBeUndefined();
    expect(p.backlash.every((b) => b > 0)).toBe(true);
    expect(p.breakaway.every((b, j) => b > p.coulomb[j]!)).toBe(true);
  });

  it("masses within 5 %: the identified rig file's m1, m2 and the base parameters of inertia and mass", () => {
    const arm = file.arm as { m1: number; m2: number };
    const plantArm = rig.plant!.arm as { m1: number; m2: number };
    within(arm.m1, plantArm.m1, 0.05, 'm1');
    within(arm.m2, plantArm.m2, 0.05, 'm2');
    for (const k of ['J1', 'J2', 'mL', 'mG', 'Jm2'] as const) within(id.parameters[k], truth[k], 0.05, k);
  });

  it('joint 1: Coulomb per direction and viscous within 15 %, the play within 0.3 deg', () => {
    const p = plant();
    const s = sweep(0);
    within(s.coulombNm[0], p.coulomb[0]!, 0.15, 'joint 1 Coulomb ccw');
    within(s.coulombNm[1], p.coulomb[0]!, 0.15, 'joint 1 Coulomb cw');
    within(s.viscousNms, p.viscous[0]!, 0.15, 'joint 1 viscous');
    expect(s.starts.every((n) => n >= 1)).toBe(true);
    expect(Math.abs(s.playDeg - p.backlash[0]! * DEG), `play ${s.playDeg} deg`).toBeLessThan(0.3);
  });

  it('joint 2: Coulomb per direction and viscous within 15 %, the play within 0.3 deg', () => {
    // The light link's play is a torque step of only m2 d2 g b = 0.01 N m across hanging: it is measured
    // because the rows the equations do not model are left out (the breakaway's transient after each start
    // from rest, the loop rattling through the play) and link 1's own play is put back (src/identify/sweep.ts).
    const p = plant();
    const s = sweep(1);
    within(s.coulombNm[0], p.coulomb[1]!, 0.15, 'joint 2 Coulomb ccw');
    within(s.coulombNm[1], p.coulomb[1]!, 0.15, 'joint 2 Coulomb cw');
    within(s.viscousNms, p.viscous[1]!, 0.15, 'joint 2 viscous');
    expect(s.starts.every((n) => n >= 1)).toBe(true);
    expect(Math.abs(s.playDeg - p.backlash[1]! * DEG), `play ${s.playDeg} deg`).toBeLessThan(0.3);
    expect(playSignificant(s), `play ${s.playDeg} +- ${s.playStdDeg} deg`).toBe(true);
  });

  it('writes what it measured where the controller reads it: encoders[].backlashDeg, friction.breakawayNm (at least Coulomb)', () => {
    for (const j of [0, 1]) expect(identified.encoders[j]!.backlash! * DEG).toBeCloseTo(sweep(j).playDeg, 1);
    const f = identified.friction;
    expect(f.breakaway).toBeDefined();
    f.breakaway!.forEach((b, j) => expect(b).toBeGreaterThanOrEqual(f.coulomb[j]!));
    expect(f.coulomb[0]).toBeCloseTo((sweep(0).coulombNm[0] + sweep(0).coulombNm[1]) / 2, 3);
  });

  it('validates with the disturbance observer on, as run uses it: the identified rig is done and the link is scored', () => {
    expect(valid.after.stop).toEqual({ kind: 'done' });
    expect(valid.after.linkRmsDeg).not.toBeNull();
    expect(valid.after.encoderRmsDeg).not.toBeNull();
    // each link follows the plan better with its play and friction declared than with the nominal rig
    for (const j of [0, 1]) expect(valid.after.linkRmsDeg![j]!).toBeLessThan(valid.before.linkRmsDeg![j]!);
    console.log(JSON.stringify(valid));
  });
});

// One noise realisation pins little: the same plant with the rig file's seed and the next three
// (rig.plant.seed), the play sweeps and their fits alone, as identify runs them.
describe("identify's play sweeps over four noise realisations of the flawed mock", () => {
  const SEEDS = 4;
  const rig = loadRig(RIG);
  const p = rig.plant!;
  const per: SweepFigures[][] = [];
  beforeAll(async () => {
    for (let k = 0; k < SEEDS; k++) {
      const flaws = await measureFlaws({ ...rig, plant: { ...p, seed: p.seed + k } }, run);
      per.push(
        flaws.map((f) => {
          if (!measured(f)) throw new Error(`seed +${k}: joint ${f.joint + 1}'s sweep was skipped: ${f.skipped}`);
          return f;
        }),
      );
    }
  }, hangGuardMs(240_000));
  const frac = (est: number, want: number): number => Math.abs(est - want) / want;

  it('both joints, every realisation: the play within 0.3 deg (and written: significant), Coulomb per direction within 15 %', () => {
    per.forEach((flaws, k) =>
      flaws.forEach((s, j) => {
        const what = `seed +${k} joint ${j + 1}`;
        expect(Math.abs(s.playDeg - p.backlash![j]! * DEG), `${what}: play ${s.playDeg} deg`).toBeLessThan(0.3);
        expect(playSignificant(s), `${what}: play ${s.playDeg} +- ${s.playStdDeg} deg`).toBe(true);
        for (const d of [0, 1]) expect(frac(s.coulombNm[d]!, p.coulomb[j]!), `${what}: Coulomb ${s.coulombNm[d]} N m`).toBeLessThan(0.15);
      }),
    );
  });

  // Each (realisation, direction) pair is one figure, the median of the starts from rest at hanging.
  // Measured (virtual time): within 15 % in 8 of 8 on each joint for these four realisations; over
  // plant.seed +0..+7, 15 of 16 on joint 1 (-18 % the worst) and 16 of 16 on joint 2 (docs/identify.md).
  for (const j of [0, 1]) {
    it(`joint ${j + 1}: the breakaway per direction within 15 % in at least 7 of the 8 (realisation, direction) pairs, all within 20 %`, () => {
      const errs = per.flatMap((f) => f[j]!.breakawayNm.map((b) => frac(b, p.breakaway![j]!)));
      const said = JSON.stringify(per.map((f) => f[j]!.breakawayNm));
      expect(errs.filter((e) => e < 0.15).length, said).toBeGreaterThanOrEqual(7);
      expect(Math.max(...errs), said).toBeLessThan(0.2);
    });
  }
});

// The sweeps measure the play, so the loop they run with does not ring through a play it does not
// know: its derivative gain at most the motor side's alone (src/identify/flaws.ts sweepRig).
describe('the rig the play sweeps run with', () => {
  it("has the observer off and each derivative gain within the motor side's cap, the rest as given", () => {
    const rig = loadRig(RIG);
    const s = sweepRig(rig);
    const model = createActuatedArmModel(rig);
    expect(s.control.disturbanceObserver).toBe(false);
    s.control.pid.kd.forEach((kd, i) => expect(kd).toBe(Math.min(rig.control.pid.kd[i]!, gapDerivativeCap(model.rotorInertia[i]!))));
    // joint 1's gain made for the whole arm is above its motor side's: capped
    expect(s.control.pid.kd[0]).toBeLessThan(rig.control.pid.kd[0]!);
    expect(s.control.pid.kp).toEqual(rig.control.pid.kp);
    expect(s.friction).toEqual(rig.friction);
  });
});
