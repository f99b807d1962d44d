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
import { measured, measureFlaws, playDetermined, validateWithObserver, withFlaws, type JointFlaws, type ObserverRun } from '../src/identify/flaws.js';
import { identify, plantParameters, validationPath, type Identified, type RunPaths } from '../src/identify/pipeline.js';
import type { BaseParameters } from '../src/identify/regressor.js';
import type { SweepFigures } from '../src/identify/sweep.js';
import { virtualRun } from '../src/identify/virtual.js';

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

  it('joint 1: Coulomb per direction and viscous within 15 %, the breakaway per direction within 15 %, the play within 0.3 deg', () => {
    const p = plant();
    const s = sweep(0);
    within(s.coulombNm[0], p.coulomb[0]!, 0.15, 'joint 1 Coulomb ccw');
    within(s.coulombNm[1], p.coulomb[0]!, 0.15, 'joint 1 Coulomb cw');
    within(s.viscousNms, p.viscous[0]!, 0.15, 'joint 1 viscous');
    expect(s.starts.every((n) => n >= 1)).toBe(true);
    within(s.breakawayNm[0], p.breakaway[0]!, 0.15, 'joint 1 breakaway ccw');
    within(s.breakawayNm[1], p.breakaway[0]!, 0.15, 'joint 1 breakaway cw');
    expect(Math.abs(s.playDeg - p.backlash[0]! * DEG), `play ${s.playDeg} deg`).toBeLessThan(0.3);
  });

  it('joint 2: the breakaway per direction within 15 %', () => {
    const p = plant();
    const s = sweep(1);
    within(s.breakawayNm[0], p.breakaway[1]!, 0.15, 'joint 2 breakaway ccw');
    within(s.breakawayNm[1], p.breakaway[1]!, 0.15, 'joint 2 breakaway cw');
  });

  // Not met yet: joint 2's gravity stiffness at hanging (m2 d2 g, 0.38 N m/rad on this arm) turns its
  // 1.5 deg of play into a torque step of 0.01 N m, the size of the sweep's residual there.
  it.fails('joint 2: Coulomb within 15 % and the play within 0.3 deg (not met: see docs/identify.md)', () => {
    const p = plant();
    const s = sweep(1);
    within(s.coulombNm[0], p.coulomb[1]!, 0.15, 'joint 2 Coulomb ccw');
    within(s.coulombNm[1], p.coulomb[1]!, 0.15, 'joint 2 Coulomb cw');
    expect(Math.abs(s.playDeg - p.backlash[1]! * DEG), `play ${s.playDeg} deg`).toBeLessThan(0.3);
  });

  it('writes what it measured where the controller reads it: encoders[].backlashDeg, friction.breakawayNm (at least Coulomb)', () => {
    expect(identified.encoders[0]!.backlash! * DEG).toBeCloseTo(sweep(0).playDeg, 1);
    // a play the sweep did not determine (joint 2's here: its standard deviation is above PLAY_STD_MAX_DEG) is not written
    expect(playDetermined(sweep(1))).toBe(false);
    expect(identified.encoders[1]!.backlash).toBe(0);
    const f = identified.friction;
    expect(f.breakaway).toBeDefined();
    f.breakaway!.forEach((b, j) => expect(b).toBeGreaterThanOrEqual(f.coulomb[j]!));
    expect(f.coulomb[0]).toBeCloseTo((sweep(0).coulombNm[0] + sweep(0).coulombNm[1]) / 2, 3);
  });

  it('validates with the disturbance observer on, as run uses it: the identified rig is done and the link is scored', () => {
    expect(valid.after.stop).toEqual({ kind: 'done' });
    expect(valid.after.linkRmsDeg).not.toBeNull();
    expect(valid.after.encoderRmsDeg).not.toBeNull();
    // joint 1's link follows the plan better with its play and friction declared than with the nominal rig
    expect(valid.after.linkRmsDeg![0]!).toBeLessThan(valid.before.linkRmsDeg![0]!);
    console.log(JSON.stringify(valid));
  });
});
