// Whose fault a failed stock Firmata run in simavr was (src/bench/firmware-stock.ts blameOf): the
// rig's when the simulated board stalled, its clock lagged, or its plant was starved; the host's
// otherwise. Constructed runs, and the lag tracker on constructed arrivals: no clock, no simulator.
import { describe, expect, it } from 'vitest';
import { blameOf, LagTracker, RIG_BEHIND_MS, RIG_LAG_MS, RIG_PLANT_LATE, rigFault, type StockRun } from '../src/bench/firmware-stock.js';

const FOLLOWING = { kind: 'stopped', stop: { kind: 'fault', fault: { kind: 'following-error', joint: 1, errorDeg: 10.2, limitDeg: 10, t: 0.6 } } } as const;

/** A run that stopped with a following error while its rig kept time; `over` changes that. */
function run(over: Partial<StockRun> = {}): StockRun {
  return {
    end: FOLLOWING as unknown as StockRun['end'],
    rmsDeg: [0.6, 4.1],
    boardBehindMs: 27,
    plant: { slices: 27_000, lateSlices: 258, maxLate: 34, lateMs: 64 },
    lagMs: { peak: 30, held: 4 },
    ...over,
  };
}

describe('blameOf: the rig or the host', () => {
  it('a rig that kept time: the host is to blame, with the figures that clear the rig', () => {
    expect(rigFault(run())).toBeUndefined();
    expect(blameOf(run())).toBe('the simulated board kept time (at most 27 ms behind the wall clock, its clock lagging 4 ms for 100 ms at most, the plant late on 1.0 % of the slices): the host is to blame');
  });

  it('a board that stalled 100 ms or more is the rig', () => {
    const b = blameOf(run({ boardBehindMs: RIG_BEHIND_MS + 12 }));
    expect(b).toMatch(/^the simulated board fell 112 ms behind the wall clock: the rig was starved by a busy machine \(the rig's fault, not the host's/);
  });

  it('a board clock that lagged for 100 ms is the rig, with the lag (a following error while the plant kept up: 69 ms held)', () => {
    expect(rigFault(run({ lagMs: { peak: RIG_LAG_MS - 1, held: RIG_LAG_MS - 1 } }))).toBeUndefined();
    const b = blameOf(run({ lagMs: { peak: 84.7, held: 69.3 } }));
    expect(b).toMatch(/^its clock lagged the wall clock by 69 ms for 100 ms \(at most 85 ms\): the host took every report for that much older: the rig was starved/);
  });

  it('a starved plant (the encoder pins on old counts) is the rig, with how late it was', () => {
    const slices = 6628;
    const lateSlices = Math.ceil(slices * RIG_PLANT_LATE);
    expect(rigFault(run({ plant: { slices, lateSlices: lateSlices - 1, maxLate: 40, lateMs: 80 } }))).toBeUndefined();
    const b = blameOf(run({ plant: { slices, lateSlices: 2827, maxLate: 40, lateMs: 706.5 } }));
    expect(b).toMatch(/^the plant was late on 42\.7 % of the slices \(2827 of 6628, 707 ms of board time, up to 40 slices at once\): the encoder pins did not follow the arm: the rig was starved/);
  });

  it('every cause is named when there are several', () => {
    const r = rigFault(run({ boardBehindMs: 150, lagMs: { peak: 90, held: 40 }, plant: { slices: 100, lateSlices: 50, maxLate: 40, lateMs: 12 } }))!;
    expect(r.split('; ')).toHaveLength(3);
  });
});

describe('LagTracker: how far a simulated board clock lags the wall clock', () => {
  it('a board on time: no lag; a board that stalls 30 ms and then goes on that late: 30 ms peak and held', () => {
    const t = new LagTracker(0.1);
    // 250 us slices arriving 5 ms (a constant pipe delay) after their board time: no lag.
    for (let k = 0; k < 800; k++) t.add(k * 250e-6, 1000 + 0.005 + k * 250e-6);
    expect(t.result()).toEqual({ peak: 0, held: 0 });
    // Then 30 ms later for 0.3 s of board time.
    for (let k = 800; k < 2000; k++) t.add(k * 250e-6, 1000 + 0.035 + k * 250e-6);
    const r = t.result();
    expect(r.peak).toBeCloseTo(30, 6);
    expect(r.held).toBeCloseTo(30, 6);
  });

  it('one late slice is a peak, not a held lag', () => {
    const t = new LagTracker(0.1);
    for (let k = 0; k < 2000; k++) t.add(k * 250e-6, 1000 + k * 250e-6 + (k === 900 ? 0.05 : 0));
    const r = t.result();
    expect(r.peak).toBeCloseTo(50, 6);
    expect(r.held).toBe(0);
  });
});
