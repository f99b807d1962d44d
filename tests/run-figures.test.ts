// The summary's timing figures, each defined once (src/run/stats.ts, TimingFigures) and computed from
// the rows alone: a quantile is never a histogram's cap; the figures of a run equal those recomputed
// from its recording; and the line link's latency does not stay inflated for a whole window after a
// simulated board's clock stood still (as the mock's thread does when starved). Virtual time.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { loadRig, type Rig } from '../src/config/load.js';
import { runLoop } from '../src/control/runner.js';
import { builtinPath } from '../src/model/builtins.js';
import { createLineMock } from '../src/mock/line-mock.js';
import { nearestRankUs, RunStats, UsHistogram } from '../src/run/stats.js';
import { F } from '../src/telemetry/tick.js';
import { settle, VirtualClock, type Clock } from '../src/time/clock.js';
import { LineLink } from '../src/transport/line-link.js';
import { virtualRun } from './helpers/virtual-run.js';
import { fromRecording } from './helpers/recording-figures.js';

describe('UsHistogram', () => {
  it('quantiles by nearest rank, whole microseconds, the same as on the sorted values; never a cap', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: 0, max: 5e6, noNaN: true }), { minLength: 1, maxLength: 300 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (values, q) => {
          const h = new UsHistogram();
          for (const v of values) h.add(v);
          expect(h.quantile(q)).toBe(nearestRankUs(values, q));
        },
      ),
    );
    const h = new UsHistogram();
    for (const v of [400, 450, 31_506.7, 250_000.4]) h.add(v);
    // Above the 1 us bins (100 ms) a value is kept as it was: the p99 is the value, not 100001.
    expect(h.quantile(0.99)).toBe(250_000);
    expect(h.quantile(0.75)).toBe(31_506);
    expect(h.quantile(0.5)).toBe(450);
  });
});

describe('the summary and the recording of the same run', () => {
  it('at 1 kHz behind the 16U2 (half the samples superseded): latency, sample period and the longest gap agree', async () => {
    const base = loadRig('rigs/mock-arm.json');
    const rig: Rig = { ...base, control: { ...base.control, rateHz: 1000 } };
    const file = join(mkdtempSync(join(tmpdir(), 'twolink-figures-')), 'run.ndjson');
    const r = await virtualRun(rig, [builtinPath(rig.arm, 'reach')!], { record: file });
    expect(r.summary.stop).toEqual({ kind: 'done' });
    const rec = fromRecording(file);
    expect(rec.answered).toBeGreaterThan(1000);
    expect(r.summary.period).toEqual({ p50Us: rec.p50, p99Us: rec.p99, maxUs: rec.max });
    // The same rows through RunStats give the same TimingFigures (what `twolink run` puts in `timing`).
    const stats = new RunStats(rig.joints, 1000);
    for (const row of r.rows) stats.add(row);
    expect(stats.timing()).toEqual({
      latencyP50Us: rec.p50,
      latencyP99Us: rec.p99,
      latencyMaxUs: rec.max,
      samplePeriodP99Us: rec.periodP99,
      maxStallMs: rec.stallMs,
    });
    // The summary line of the recording is the run's summary.
    const last = JSON.parse(readFileSync(file, 'utf8').trim().split('\n').at(-1)!) as { kind: string; period: unknown };
    expect(last.kind).toBe('summary');
    expect(last.period).toEqual(r.summary.period);
  });
});

/**
 * The mock rig on a clock of its own that stands still for `pauseS` at host time `atS` (as the mock's
 * thread does when it is starved), then runs on behind the host's; the loop on the host's clock.
 */
async function pausedBoardRun(rig: Rig, atS: number, pauseS: number): Promise<Float64Array[]> {
  const host = new VirtualClock();
  const board = new VirtualClock();
  const toBoard = (h: number): number => (h < atS ? h : h < atS + pauseS ? atS : h - pauseS);
  const toHost = (b: number): number => (b < atS ? b : b + pauseS);
  const boardClock: Clock = board;
  const mock = createLineMock(rig, boardClock);
  const stream = await mock.openStream();
  const link = new LineLink({
    stream,
    name: mock.path,
    baudRate: rig.link.baudRate,
    clock: host,
    encoders: rig.encoders,
    watchdogMs: rig.link.watchdogMs,
    handshakeMs: rig.link.handshakeMs,
  });
  const rows: Float64Array[] = [];
  let done = false;
  const run = runLoop({
    rig,
    link,
    clock: host,
    rateHz: rig.control.rateHz,
    feedforward: 'desired',
    paths: [builtinPath(rig.arm, 'reach')!],
    sink: (row) => rows.push(Float64Array.from(row)),
    maxSeconds: 30,
  });
  run.then(
    () => (done = true),
    () => (done = true),
  );
  try {
    while (!done) {
      const next = Math.min(host.nextTimerAt(), toHost(board.nextTimerAt()));
      if (next === Infinity) throw new Error('nothing pending');
      host.advanceTo(next);
      board.advanceTo(toBoard(next));
      await settle();
    }
    expect((await run).stop).toEqual({ kind: 'done' });
  } finally {
    mock.dispose();
  }
  return rows;
}

describe("the latency after the board's clock stood still", () => {
  it('a 5 ms pause of the simulated board inflates the latency of at most two blocks of samples, not a window of 512', async () => {
    const base = loadRig('rigs/mock-arm.json');
    const rig: Rig = { ...base, plant: { ...base.plant!, adapter: { kind: 'none', latencyMs: 0 } } };
    const rows = await pausedBoardRun(rig, 1.5, 0.005);
    const answered = rows.filter((r) => r[F.fresh] === 1 && r[F.errUs]! > 0);
    const before = answered.filter((r) => r[F.boardT]! < 1.4).map((r) => r[F.errUs]!);
    const normal = Math.max(...before);
    const inflated = answered.filter((r) => r[F.errUs]! > normal + 2000);
    // 2 blocks of 32 samples and the one in progress at most; the old window kept it for up to 512.
    expect(inflated.length).toBeGreaterThan(0);
    expect(inflated.length).toBeLessThanOrEqual(3 * 32);
    const last = answered.at(-1)!;
    expect(last[F.errUs]!).toBeLessThanOrEqual(normal + 1);
  });
});
