// twolink tune on the mock rig in virtual time (issue 24): both joints tuned within 60 s of motion,
// the measured crossover within 10 % of the target with PM >= 45 deg and GM >= 6 dB, the model
// against the measurement within 1 dB and 5 deg below the crossover, the reach with the tuned rig
// file, the rig file and the JSON, and the refusal of a bandwidth out of reach with its bound.
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { hangGuardMs } from './helpers/hang-guard.js';
import { tuneOnMock, type TuneRun } from './helpers/tune.js';
import { parseJsonText, resolveRig } from '../src/config/load.js';
import { parseRigFile } from '../src/config/rig.js';
import { builtinPath } from '../src/model/builtins.js';
import { virtualRun } from '../src/run/virtual.js';
import { tunedRigFile } from '../src/tune/rigfile.js';
import { tuneJson } from '../src/tune/summary.js';

const MOCK = 'rigs/mock-arm.json';
const PERTURBED = 'tests/fixtures/tune-perturbed-arm.json';

async function reachRms(rig: Parameters<typeof virtualRun>[0]): Promise<number[]> {
  const r = await virtualRun(rig, [builtinPath(rig.arm, 'reach')!], { keepRows: false });
  expect(r.summary.stop).toEqual({ kind: 'done' });
  return r.summary.tracking.rmsDeg;
}

/**
 * The reach's tracking RMS per joint [deg], the mean over the plant's seeds 1-5 (its encoder noise and
 * friction draws): with the observer on, the reach tracks near the encoder's steps, and one noise draw
 * moves a joint's RMS by +-5 % (the perturbed rig's own seed 7 put the file's gains 4 % ahead on joint 1
 * where the 5-seed mean puts them 6 % behind, virtual time).
 */
async function meanReachRms(raw: Record<string, unknown>): Promise<number[]> {
  const seeds = [1, 2, 3, 4, 5];
  const sum = [0, 0];
  for (const seed of seeds) {
    const f = { ...raw, plant: { ...(raw.plant as object), seed } };
    const r = await reachRms(resolveRig(parseRigFile(f, 'seeded.json'), 'seeded.json'));
    r.forEach((v, j) => (sum[j]! += v / seeds.length));
  }
  return sum;
}

/** The tuned rig file's reach against the file it came from (5-seed means), both printed for the record. */
async function tunedTracksNoWorse(run: TuneRun, file: string): Promise<void> {
  const t = tunedRig(run, file);
  expect(t.rig.control.pid.schedule).toHaveLength(3);
  expect(t.changes.map((c) => c.field)).toContain('control.pid.schedule');
  // The observer stays as the file has it (the design's integrator corner is chosen for it).
  expect(t.changes.map((c) => c.field)).not.toContain('control.disturbanceObserver');
  const before = await meanReachRms(parseJsonText(readFileSync(file, 'utf8'), file) as Record<string, unknown>);
  const after = await meanReachRms(t.file);
  console.log(
    `${file}: reach RMS [deg], mean of 5 plant seeds (virtual time, 16U2 model): file's gains ${before.map((v) => v.toFixed(4)).join(' / ')}, tuned ${after.map((v) => v.toFixed(4)).join(' / ')}`,
  );
  expect(after[0]!).toBeLessThanOrEqual(before[0]!);
  expect(after[1]!).toBeLessThanOrEqual(before[1]!);
}

function tunedRig(run: TuneRun, file: string) {
  const raw = parseJsonText(readFileSync(file, 'utf8'), file) as Record<string, unknown>;
  const t = tunedRigFile(raw, run.rig, run.outcome, ((run.pose[1] ?? 0) * 180) / Math.PI);
  return { ...t, rig: resolveRig(parseRigFile(t.file, 'tuned.json'), 'tuned.json') };
}

describe('tune on rigs/mock-arm.json (virtual time)', () => {
  let run: TuneRun;
  beforeAll(async () => {
    run = await tuneOnMock(MOCK);
  }, hangGuardMs(60_000));

  it('tunes both joints within 60 s of motion, every step passing', () => {
    const o = run.outcome;
    expect(o.completed).toBe(true);
    expect(o.joints.map((j) => j.joint)).toEqual([0, 1]);
    expect(o.motionS).toBeGreaterThan(20);
    expect(o.motionS).toBeLessThanOrEqual(60);
    expect(o.steps.filter((s) => s.status === 'fail')).toEqual([]);
    // The default (the loop rate / 40 = 12.5 Hz) was lowered to 85 % of the model's bound with the rig's 25 Hz estimator, and said so.
    expect(o.bandwidthHz).toBeLessThan(12.5);
    expect(run.said.some((s) => s.includes('tuning for'))).toBe(true);
  });

  it('measures the crossover within 10 % of the target, PM >= 45 deg and GM >= 6 dB', () => {
    for (const j of run.outcome.joints) {
      const m = j.measured!;
      expect(Math.abs(m.crossoverHz / run.outcome.bandwidthHz - 1)).toBeLessThanOrEqual(0.1);
      expect(m.phaseMarginDeg).toBeGreaterThanOrEqual(45);
      // The gain margin, or when the phase stays above -180 deg up to the last coherent band, its lower bound there.
      expect(m.gainMarginAtLeastDb).toBeGreaterThanOrEqual(6);
      expect(m.gainMarginAtLeastDb).toBeLessThanOrEqual(m.gainMarginDb);
      expect(m.overshootPct).toBeGreaterThan(0);
      expect(m.settlingS).toBeGreaterThan(0);
    }
  });

  it('the identified model matches the measured response within 1 dB and 5 deg below the crossover', () => {
    for (const j of run.outcome.joints) {
      const id = j.identified!;
      expect(id.fitErrorDb).toBeLessThanOrEqual(1);
      expect(id.fitErrorDeg).toBeLessThanOrEqual(5);
      // The plant is 7-15 % heavier than the rig file says (rigs/mock-arm.json's plant section).
      expect(id.mass).toBeGreaterThan(1.03);
      expect(id.mass).toBeLessThan(1.2);
    }
  });

  it('the relay gives Ku and Tu; the JSON has every figure', () => {
    const j = tuneJson(run.outcome, 'out.json');
    expect(j.out).toBe('out.json');
    expect(j.motionSeconds).toBeCloseTo(run.outcome.motionS, 1);
    for (const x of j.joints) {
      expect(x.ku).toBeGreaterThan(0);
      expect(x.tu).toBeGreaterThan(0.05);
      expect(x.gains.map((g) => g.elbowDeg)).toEqual([-120, 0, 120]);
      expect(x.measured!.crossoverHz).toBeGreaterThan(0);
      expect(x.predicted!.phaseMarginDeg).toBeGreaterThanOrEqual(46);
    }
  });

  // Was it.fails: the tuned file widened the velocity estimator to 60 Hz (the encoder's steps in the torque,
  // through the run's prediction) and turned the observer off: 0.128 / 0.223 deg RMS against 0.052 / 0.147.
  it(
    'the tuned rig file is valid, scheduled, and its reach tracks no worse than with the file it came from',
    async () => {
      await tunedTracksNoWorse(run, MOCK);
    },
    hangGuardMs(60_000),
  );
});

describe('tune on a rig whose plant is 20-30 % off its model (virtual time)', () => {
  let run: TuneRun;
  beforeAll(async () => {
    run = await tuneOnMock(PERTURBED);
  }, hangGuardMs(60_000));

  it('finds the heavier arm and puts the crossover within 10 % of the target with PM >= 45 deg', () => {
    expect(run.outcome.motionS).toBeLessThanOrEqual(60);
    for (const j of run.outcome.joints) {
      // The plant is x1.24 / x1.21 heavier than the model; the fit finds x1.21 / x1.13 at the 4.8 Hz default (virtual time, 16U2 model).
      expect(j.identified!.mass).toBeGreaterThan(1.1);
      expect(j.identified!.mass).toBeLessThan(1.4);
      const m = j.measured!;
      expect(Math.abs(m.crossoverHz / run.outcome.bandwidthHz - 1)).toBeLessThanOrEqual(0.1);
      expect(m.phaseMarginDeg).toBeGreaterThanOrEqual(45);
      expect(m.gainMarginAtLeastDb).toBeGreaterThanOrEqual(6);
    }
  });

  it('the identified model matches the measured response within 1 dB and 5 deg below the crossover', () => {
    // Joint 1 was 5.4 deg off on every seed while the response came from Welch's 2 s segments (a ripple
    // about any model, spectra.ts sweptBands); from the whole record, fitted up to 4x the crossover:
    // 0.28 dB, 3.0 deg (joint 2 0.45 dB, 2.6 deg), virtual time, 16U2 model.
    for (const j of run.outcome.joints) {
      const id = j.identified!;
      expect(id.fitErrorDb).toBeLessThanOrEqual(1);
      expect(id.fitErrorDeg).toBeLessThanOrEqual(5);
    }
  });

  it(
    "the reach with the tuned file tracks no worse than with the file's gains",
    async () => {
      await tunedTracksNoWorse(run, PERTURBED);
    },
    hangGuardMs(60_000),
  );
});

describe('tune refuses a bandwidth out of reach', () => {
  it(
    'names the bound and does not move the arm',
    async () => {
      const run = await tuneOnMock(MOCK, { bandwidthHz: 40 });
      expect(run.outcome.motionS).toBe(0);
      expect(run.outcome.completed).toBe(false);
      const s = run.outcome.steps.find((x) => x.name === 'bandwidth')!;
      expect(s.status).toBe('fail');
      const bound = Math.min(...run.outcome.boundHz);
      expect(bound).toBeGreaterThan(5);
      expect(bound).toBeLessThan(40);
      expect(s.summary).toContain(`${Number(bound.toPrecision(3))} Hz on joint`);
      expect(s.fix).toContain('--bandwidth');
    },
    hangGuardMs(20_000),
  );
});
