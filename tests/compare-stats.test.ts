// twolink compare's numbers against plain computations on synthetic recordings whose errors are
// known functions: measured - desired, measured - twin (with where the largest error occurs), and run
// vs run aligned on trajectory time although the two runs' approaches and reading ages differ.
import { describe, expect, it } from 'vitest';
import { alignRuns, COMPARE_FIELDS, compareRecordings, describeRun, formatReport } from '../src/record/compare.js';
import { trajectoryClock } from '../src/record/align.js';
import { loadRecording } from '../src/record/read.js';
import { DEG, plainStats, RIG, writeSynthetic, type SyntheticRun } from './compare-synthetic.js';

const base: SyntheticRun = {
  rateHz: 100,
  q0: [-0.2, 0.1],
  approachS: 0.3,
  parkS: 0.3,
  idleTicks: 5,
  error: (tau, j) => (j === 0 ? 0.01 * Math.sin(3 * tau) + 0.002 : -0.004 + 0.003 * Math.cos(5 * tau)),
  residual: (t, j) => (j === 0 ? 0.02 * Math.sin(2 * t) : 0.01 * t - 0.005),
  stale: (k) => k % 9 === 4,
};

describe('compare: measured - desired and measured - twin', () => {
  it('equal the plain statistics of the known errors, per joint and per phase, with where the max is', async () => {
    const { file, ticks } = writeSynthetic(base);
    const rec = await loadRecording(file, COMPARE_FIELDS);
    const report = compareRecordings(rec);
    const md = report.comparisons.find((c) => c.id === 'measured-desired')!;
    const mt = report.comparisons.find((c) => c.id === 'measured-twin')!;
    for (let j = 0; j < 2; j++) {
      // measured - desired: every tick with a plan in force (not idle).
      const sel = ticks.filter((k) => k.state !== 'idle');
      const e = sel.map((k) => (k.meas[j]! - k.des[j]!) * DEG);
      const s = plainStats(e);
      const got = md.joints[j]!;
      expect(got.samples).toBe(s.n);
      expect(got.rmsDeg).toBeCloseTo(s.rms, 10);
      expect(got.meanDeg).toBeCloseTo(s.mean, 10);
      expect(got.maxAbsDeg).toBeCloseTo(s.maxAbs, 10);
      expect(got.max!.t).toBeCloseTo(sel[s.at]!.t, 12);
      expect(got.max!.valueDeg).toBeCloseTo(e[s.at]!, 10);
      const where = sel[s.at]!;
      expect(got.max!.phase).toBe(where.state === 'track' ? where.phase : where.state);
      // The track phase alone.
      const tr = plainStats(ticks.filter((k) => k.state === 'track' && k.phase === 'track').map((k) => (k.meas[j]! - k.des[j]!) * DEG));
      expect(got.byPhase.track!.samples).toBe(tr.n);
      expect(got.byPhase.track!.rmsDeg).toBeCloseTo(tr.rms, 10);

      // measured - twin: the residual on fresh readings outside idle.
      const fr = ticks.filter((k) => k.fresh && k.state !== 'idle');
      const r = plainStats(fr.map((k) => k.res[j]! * DEG));
      const gt = mt.joints[j]!;
      expect(gt.samples).toBe(r.n);
      expect(gt.rmsDeg).toBeCloseTo(r.rms, 10);
      expect(gt.meanDeg).toBeCloseTo(r.mean, 10);
      expect(gt.max!.t).toBeCloseTo(fr[r.at]!.t, 12);
      expect(gt.overThreshold!.thresholdDeg).toBe(RIG.twin.alarmDeg);
      expect(gt.overThreshold!.samples).toBe(fr.filter((k) => Math.abs(k.res[j]! * DEG) > RIG.twin.alarmDeg).length);
    }
    expect(report.runs[0]!.complete).toBe(true);
    const text = formatReport(report);
    expect(text).toMatch(/joint 1/);
    expect(text).toMatch(/A measured - desired/);
    expect(text).toMatch(/A measured - twin/);
  });
});

describe('compare: run vs run', () => {
  // Run B: a longer approach (the arm started elsewhere) and readings that are 0 to 7.5 ms old, so
  // its ticks' trajT is not the time of its readings; its error is A's plus a known function of the
  // trajectory time.
  const extra = (tau: number, j: number): number => (j === 0 ? 0.02 + 0.01 * tau : -0.01);
  const runB: SyntheticRun = {
    ...base,
    q0: [-0.5, 0.4],
    approachS: 0.47,
    idleTicks: 8,
    age: (k) => ((k * 7) % 4) * 0.0025, // never more than a period older than the tick before's
    error: (tau, j) => base.error(tau, j) + extra(tau, j),
    stale: () => false,
  };

  it("solves each reading's trajectory time from the plan", async () => {
    const b = writeSynthetic(runB);
    const rec = await loadRecording(b.file, COMPARE_FIELDS);
    const [clock] = trajectoryClock(rec);
    const known = b.ticks.filter((k) => k.state === 'track' && k.phase === 'track' && k.fresh);
    expect(clock!.ticks.length).toBe(known.length);
    // Where the plan moves, the solved time is the reading's; in the final hold it cannot be.
    let solved = 0;
    known.forEach((k, m) => {
      if (k.tau > 0.01 && k.tau < 0.99) {
        expect(clock!.tau[m]!).toBeCloseTo(k.tau, 7);
        solved++;
      }
    });
    expect(solved).toBeGreaterThan(80);
    expect(clock!.solved).toBeGreaterThanOrEqual(solved);
  });

  it('B - A equals the known difference at the same trajectory time, located on A', async () => {
    const a = writeSynthetic(base);
    const b = writeSynthetic(runB);
    const ra = await loadRecording(a.file, COMPARE_FIELDS);
    const rb = await loadRecording(b.file, COMPARE_FIELDS);
    const al = alignRuns(ra, rb);
    const rr = al.comparison;
    expect(al.summary.segments).toHaveLength(1);
    // The common grid: A's period over the trajectory times both runs have readings at.
    const step = 1 / 100;
    const tauA = a.ticks.filter((k) => k.state === 'track' && k.phase === 'track' && k.fresh).map((k) => k.tau);
    const tauB = b.ticks.filter((k) => k.state === 'track' && k.phase === 'track' && k.fresh).map((k) => k.tau);
    const lo = Math.max(tauA[0]!, tauB[0]!);
    const hi = Math.min(tauA[tauA.length - 1]!, tauB[tauB.length - 1]!);
    const grid: number[] = [];
    for (let g = 0; lo + g * step <= hi + 1e-12; g++) grid.push(lo + g * step);
    for (let j = 0; j < 2; j++) {
      const s = plainStats(grid.map((u) => extra(u, j) * DEG));
      const got = rr.joints[j]!;
      expect(got.samples).toBe(s.n);
      // Linear interpolation between readings of a curved plan costs a few 1e-4 deg.
      expect(got.rmsDeg).toBeCloseTo(s.rms, 2);
      expect(got.meanDeg).toBeCloseTo(s.mean, 2);
      expect(Math.abs(got.maxAbsDeg - s.maxAbs)).toBeLessThan(0.01);
    }
    // Joint 1's difference grows with tau: the largest is at the end, which A reached at loop time
    // idle + approach + tau.
    const at = rr.joints[0]!.max!;
    const tEnd = base.idleTicks / 100 + base.approachS + hi;
    expect(Math.abs(at.t - tEnd)).toBeLessThan(0.011);
    expect(at.phase).toBe('track');

    const report = compareRecordings(ra, rb, al);
    expect(report.comparisons.map((c) => `${c.run} ${c.id}`)).toEqual([
      'A measured-desired',
      'A measured-twin',
      'B measured-desired',
      'B measured-twin',
      'B-A run-run',
    ]);
    expect(formatReport(report)).toMatch(/B - A measured/);
    // B's readings drawn on A's time: a reading at trajectory time tau lands where A was at tau.
    const m = Math.floor(al.bOnA.t.length / 2);
    expect(al.bOnA.t.length).toBeGreaterThan(80);
    expect(al.bOnA.q[0]![m]).toBeTypeOf('number');
  });
});

describe('compare: how each run stopped', () => {
  it("carries the summary line's stop as a value beside its text, and only the text for a recording made before the value was written", async () => {
    const stop = { kind: 'fault', fault: { kind: 'link-lost', ms: 120, samples: 60 } };
    const withValue = writeSynthetic(base, { stop, stopReason: 'fault:link-lost (no sample for 120 ms)' });
    const d = describeRun(await loadRecording(withValue.file, COMPARE_FIELDS), 'A');
    expect(d.stop).toEqual(stop);
    expect(d.stopText).toBe('fault:link-lost (no sample for 120 ms)');
    const old = writeSynthetic(base);
    const o = describeRun(await loadRecording(old.file, COMPARE_FIELDS), 'B');
    expect(o.stop).toBeUndefined();
    expect(o.stopText).toBe('done');
  });
});
