// A run is `done` only when it did what was asked: one cut short by its time limit is `timeout` (exit
// code 4), its tracking covers what ran (the approach, when the trajectory proper never began), and a
// HIL scenario cut short fails unless it expects the timeout. Tracking RMS of exactly 0 on a moving arm
// is a bug: every way a run can end is checked for it. Virtual time.
import { describe, expect, it } from 'vitest';
import { loadRig } from '../src/config/load.js';
import { builtinPath } from '../src/model/builtins.js';
import { F } from '../src/telemetry/tick.js';
import { describeStop, type StopReason } from '../src/control/stop.js';
import { exitCodeOf, trackingLine } from '../src/cli/run-command.js';
import { evaluate } from '../src/hil/expect.js';
import { runSuite } from '../src/hil/run.js';
import { virtualEngine } from '../src/hil/engines.js';
import { loadSuite } from '../src/hil/suite.js';
import { parseInjection } from '../src/mock/injections.js';
import { virtualRun, type VirtualRun } from './helpers/virtual-run.js';

const rig = loadRig('rigs/mock-arm.json');
const reach = [builtinPath(rig.arm, 'reach')!];
const DEG = 180 / Math.PI;

/** How far the arm moved from where it was at the first row [deg], the most of any joint. */
function moved(r: VirtualRun): number {
  const first = r.rows[0]!;
  let most = 0;
  for (const row of r.rows) for (let j = 0; j < rig.joints; j++) most = Math.max(most, Math.abs(row[F.q0 + j]! - first[F.q0 + j]!) * DEG);
  return most;
}

/** Tracking of exactly zero is never printed as a figure of a moving arm. */
function honest(r: VirtualRun): void {
  const t = r.summary.tracking;
  if (moved(r) > 1) {
    if (t.covers === 'none') expect(trackingLine(t)).toMatch(/^tracking: no sample tracked/);
    else for (const v of t.rmsDeg) expect(v).toBeGreaterThan(0);
  }
  if (t.samples === 0) expect(t.covers).toBe('none');
}

describe('a run cut short by its time limit', () => {
  it('is `timeout`, not `done`: exit code 4, the motors stopped, tracking over the approach it ran', async () => {
    const r = await virtualRun(rig, reach, { maxSeconds: 1 });
    expect(r.summary.stop).toEqual({ kind: 'timeout', seconds: 1 });
    // the words for people, beside the value
    expect(r.summary.stopReason).toBe("timeout: the run's time limit of 1 s came before its trajectories were done");
    expect(exitCodeOf(r.summary.stop)).toBe(4);
    expect(r.summary.stopOutcome).toBe('acknowledged');
    // The reach's approach lasts longer than 1 s: the trajectory proper never began.
    expect(r.events.some((e) => e.kind === 'trajectory' && e.phase === 'track')).toBe(false);
    expect(r.summary.tracking.covers).toBe('approach');
    expect(r.summary.tracking.samples).toBeGreaterThan(100);
    for (const v of r.summary.tracking.rmsDeg) expect(v).toBeGreaterThan(0.001);
    expect(trackingLine(r.summary.tracking)).toMatch(/^tracking RMS \[deg\] on the approach only .*: \d\.\d{3}, \d\.\d{3}/);
    honest(r);
  });

  it('cut during the trajectory proper: tracking covers the part that ran', async () => {
    const full = await virtualRun(rig, reach);
    const trackAt = full.events.find((e) => e.kind === 'trajectory' && e.phase === 'track')!.t;
    const r = await virtualRun(rig, reach, { maxSeconds: trackAt + 0.5 });
    expect(r.summary.stop).toEqual({ kind: 'timeout', seconds: trackAt + 0.5 });
    expect(r.summary.tracking.covers).toBe('trajectory');
    expect(r.summary.tracking.samples).toBeGreaterThan(0);
    expect(r.summary.tracking.samples).toBeLessThan(full.summary.tracking.samples);
    honest(r);
  });

  it('a limit that comes after the trajectories are done changes nothing: `done`, exit code 0', async () => {
    const r = await virtualRun(rig, reach, { maxSeconds: 60 });
    expect(r.summary.stop).toEqual({ kind: 'done' });
    expect(exitCodeOf(r.summary.stop)).toBe(0);
    expect(r.summary.tracking.covers).toBe('trajectory');
    honest(r);
  });

  it("the exit code is a switch on the stop's kind: done and quit 0, interrupted 130, timeout 4, anything else 1", () => {
    const codes: [StopReason, number][] = [
      [{ kind: 'done' }, 0],
      [{ kind: 'quit' }, 0],
      [{ kind: 'interrupted', signal: 'SIGINT' }, 130],
      [{ kind: 'interrupted', signal: 'SIGTERM', threadCut: 'the loop thread did not answer' }, 130],
      [{ kind: 'timeout', seconds: 2.5 }, 4],
      [{ kind: 'estop', by: 'key' }, 1],
      [{ kind: 'requested', text: 'recording stopped' }, 1],
      [{ kind: 'fault', fault: { kind: 'watchdog' } }, 1],
      [{ kind: 'fault', fault: { kind: 'host', message: 'timeout: a message that reads like one' } }, 1],
    ];
    for (const [stop, code] of codes) expect(exitCodeOf(stop), describeStop(stop)).toBe(code);
  });
});

describe('tracking of exactly zero on a moving arm', () => {
  it('every way a run ends: tracking is measured, or says it measured nothing', async () => {
    const ends: [string, Promise<VirtualRun>][] = [
      ['timeout in the approach', virtualRun(rig, reach, { maxSeconds: 0.3 })],
      ['a lost link in the approach', virtualRun(rig, reach, { injections: [parseInjection('silent@0.4')] })],
      ['a fault during the reach', virtualRun(rig, reach, { injections: [parseInjection('stall=2@2')] })],
      ['done', virtualRun(rig, reach)],
    ];
    for (const [what, p] of ends) {
      const r = await p;
      expect(moved(r), what).toBeGreaterThan(1);
      honest(r);
    }
  });

  it('a run stopped before anything moved says so, and a HIL limit on its tracking fails', async () => {
    const r = await virtualRun(rig, reach, { onReady: ({ send }) => send({ kind: 'stop', reason: { kind: 'quit' } }) });
    expect(r.summary.tracking).toMatchObject({ samples: 0, covers: 'none' });
    expect(trackingLine(r.summary.tracking)).toBe('tracking: no sample tracked (the run ended before any trajectory began)');
    const figures = evaluate({ stopReason: 'quit', maxRmsDeg: 0.01, maxErrorDeg: 0.01 }, { summary: r.summary });
    expect(figures.map((f) => [f.key, f.pass])).toEqual([
      ['stopReason', true],
      ['maxRmsDeg', false],
      ['maxErrorDeg', false],
    ]);
    expect(figures[1]!.measured).toMatch(/^nothing tracked/);
  });
});

describe('HIL: a scenario cut short by maxSeconds', () => {
  it('examples/hil/cut-short.json: fails unless it expects the timeout', async () => {
    const report = await runSuite(loadSuite('examples/hil/cut-short.json'), virtualEngine, { clock: 'virtual' });
    const byName = Object.fromEntries(report.results.map((r) => [r.name, r]));
    const short = byName['cut short']!;
    expect(short.status).toBe('fail');
    expect(short.summary!.stop).toEqual({ kind: 'timeout', seconds: 1 });
    expect(short.figures.find((f) => f.key === 'stopReason')).toMatchObject({ pass: false, limit: 'kind done' });
    // Its tracking limit holds on what ran (the approach), and says so: the stop reason is what fails.
    expect(short.figures.find((f) => f.key === 'maxRmsDeg')).toMatchObject({ pass: true, label: 'tracking RMS [deg] (approach only)' });
    expect(byName['cut short on purpose']!.status).toBe('pass');
  });
});
