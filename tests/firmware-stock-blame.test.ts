// Whose fault a failed stock Firmata run in simavr was (src/bench/firmware-stock.ts blameOf): the
// rig's when the simulated board stalled, its clock lagged, or its plant was starved; the host's
// otherwise. Constructed runs, and the lag tracker on constructed arrivals: no clock, no simulator.
import { describe, expect, it } from 'vitest';
import {
  blameOf,
  LagTracker,
  retryIfStarved,
  RIG_BEHIND_MS,
  RIG_LAG_MS,
  RIG_PLANT_LATE,
  rigFault,
  type StockRun,
} from '../src/bench/firmware-stock.js';
import { cpuUsers, cpuUsersText, type CpuSnapshot } from '../src/time/cpu-users.js';
import { RIG_STARVED_ATTEMPTS } from '../src/mock/starvation.js';

const FOLLOWING = {
  kind: 'stopped',
  stop: { kind: 'fault', fault: { kind: 'following-error', joint: 1, errorDeg: 10.2, limitDeg: 10, t: 0.6 } },
} as const;

/** A run that stopped with a following error while its rig kept time; `over` changes that. */
function run(over: Partial<StockRun> = {}): StockRun {
  return {
    end: FOLLOWING,
    rmsDeg: [0.6, 4.1],
    boardBehindMs: 27,
    plant: { slices: 27_000, lateSlices: 258, maxLate: 34, lateMs: 64 },
    lagMs: { peak: 30, held: 4 },
    busy: { users: [{ pid: 8258, tid: 8258, comm: 'fil_harness', cmd: 'fil_harness uno-firmata', sched: 'FIFO 45', pct: 41 }], load: 1.2 },
    ...over,
  };
}

describe('blameOf: the rig or the host', () => {
  it('a rig that kept time: the host is to blame, with the figures that clear the rig', () => {
    expect(rigFault(run())).toBeUndefined();
    expect(blameOf(run())).toBe(
      'the simulated board kept time (at most 27 ms behind the wall clock, its clock lagging 4 ms for 100 ms at most, the plant late on 1.0 % of the slices): the host is to blame',
    );
  });

  it('a board that stalled 100 ms or more is the rig', () => {
    const b = blameOf(run({ boardBehindMs: RIG_BEHIND_MS + 12 }));
    expect(b).toMatch(
      /^the simulated board fell 112 ms behind the wall clock: the rig was starved by a busy machine \(the rig's fault, not the host's/,
    );
  });

  it('a board clock that lagged for 100 ms is the rig, with the lag (a following error while the plant kept up: 69 ms held)', () => {
    expect(rigFault(run({ lagMs: { peak: RIG_LAG_MS - 1, held: RIG_LAG_MS - 1 } }))).toBeUndefined();
    const b = blameOf(run({ lagMs: { peak: 84.7, held: 69.3 } }));
    expect(b).toMatch(
      /^its clock lagged the wall clock by 69 ms for 100 ms \(at most 85 ms\): the host took every report for that much older: the rig was starved/,
    );
  });

  it('a starved plant (the encoder pins on old counts) is the rig, with how late it was', () => {
    const slices = 6628;
    const lateSlices = Math.ceil(slices * RIG_PLANT_LATE);
    expect(rigFault(run({ plant: { slices, lateSlices: lateSlices - 1, maxLate: 40, lateMs: 80 } }))).toBeUndefined();
    const b = blameOf(run({ plant: { slices, lateSlices: 2827, maxLate: 40, lateMs: 706.5 } }));
    expect(b).toMatch(
      /^the plant was late on 42\.7 % of the slices \(2827 of 6628, 707 ms of board time, up to 40 slices at once\): the encoder pins did not follow the arm: the rig was starved/,
    );
  });

  it('a starved rig names what had the CPU meanwhile, with its scheduling', () => {
    expect(blameOf(run({ boardBehindMs: 150 }))).toMatch(
      /on the CPU meanwhile \(load 1\.2\): fil_harness uno-firmata \(pid 8258\) \[FIFO 45\] 41 %$/,
    );
  });

  it('every cause is named when there are several', () => {
    const r = rigFault(
      run({ boardBehindMs: 150, lagMs: { peak: 90, held: 40 }, plant: { slices: 100, lateSlices: 50, maxLate: 40, lateMs: 12 } }),
    )!;
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

describe('retryIfStarved: a starved rig runs again, RIG_STARVED_ATTEMPTS times in all', () => {
  const DONE = { kind: 'stopped', stop: { kind: 'done' } } as const;
  const starved = run({ boardBehindMs: 640 });
  const ok = (rs: StockRun[]): boolean => rs.every((r) => r.end.kind === 'stopped' && r.end.stop.kind === 'done');
  const script = (...attempts: StockRun[][]): { next: () => Promise<StockRun[]>; calls: () => number } => {
    let k = 0;
    return { next: async () => attempts[k++]!, calls: () => k };
  };

  it('runs that ended as expected: one attempt, nothing said', async () => {
    const s = script([run({ end: DONE })]);
    const said: string[] = [];
    const r = await retryIfStarved(s.next, ok, (l) => said.push(l));
    expect([s.calls(), said, r.starvedBefore]).toEqual([1, [], undefined]);
  });

  it('a failure with the rig keeping time is the host: no second attempt', async () => {
    const s = script([run()], [run({ end: DONE })]);
    const r = await retryIfStarved(s.next, ok, () => undefined);
    expect(s.calls()).toBe(1);
    expect(ok(r.runs)).toBe(false);
  });

  it('a failure with a starved rig is said, with what had the CPU, and run again', async () => {
    const s = script([starved], [run({ end: DONE })]);
    const said: string[] = [];
    const r = await retryIfStarved(s.next, ok, (l) => said.push(l));
    expect(s.calls()).toBe(2);
    expect(ok(r.runs)).toBe(true);
    expect(said).toHaveLength(1);
    expect(said[0]).toMatch(
      /^the rig was starved: the simulated board fell 640 ms behind the wall clock \(busy: fil_harness .*\[FIFO 45\] 41 %\); running again \(attempt 2 of 3\)$/,
    );
  });

  it('starved on every attempt: RIG_STARVED_ATTEMPTS attempts, the last given back failed, the earlier blames with it', async () => {
    expect(RIG_STARVED_ATTEMPTS).toBe(3);
    const s = script([starved], [starved], [starved], [run({ end: DONE })]);
    const said: string[] = [];
    const r = await retryIfStarved(s.next, ok, (l) => said.push(l));
    expect(s.calls()).toBe(3);
    expect(ok(r.runs)).toBe(false);
    expect(said.map((l) => /attempt (\d) of 3/.exec(l)?.[1])).toEqual(['2', '3']);
    expect(r.starvedBefore!.split(' || ')).toHaveLength(2);
    expect(r.starvedBefore).toMatch(/fell 640 ms behind/);
  });

  it('starved, then a failure with the rig keeping time: no third attempt (the host is at fault)', async () => {
    const s = script([starved], [run()], [run({ end: DONE })]);
    const r = await retryIfStarved(s.next, ok, () => undefined);
    expect(s.calls()).toBe(2);
    expect(ok(r.runs)).toBe(false);
  });
});

describe('cpuUsers: who had the CPU between two snapshots', () => {
  const snap = (atMs: number, ticks: [number, number, number]): CpuSnapshot => ({
    atMs,
    tasks: new Map([
      ['1/1', { pid: 1, tid: 1, comm: 'harness', ticks: ticks[0], policy: 1, rtPrio: 45 }],
      ['1/2', { pid: 1, tid: 2, comm: 'helper', ticks: ticks[1], policy: 0, rtPrio: 0 }],
      ['3/3', { pid: 3, tid: 3, comm: 'idle', ticks: ticks[2], policy: 0, rtPrio: 0 }],
    ]),
  });

  it('shares of a core over the interval, busiest first, the idle left out; a thread born meanwhile counts from zero', () => {
    const a = snap(0, [100, 50, 7]);
    const b = snap(2000, [180, 70, 8]); // 2 s: 80 ticks = 0.8 s = 40 %, 20 ticks = 10 %, 1 tick = 0.5 %
    b.tasks.set('4/4', { pid: 4, tid: 4, comm: 'new', ticks: 60, policy: 2, rtPrio: 10 });
    const u = cpuUsers(a, b).map((x) => [x.comm, x.sched, x.pct]);
    expect(u).toEqual([
      ['harness', 'FIFO 45', 40],
      ['new', 'RR 10', 30],
      ['helper', 'normal', 10],
    ]);
    expect(cpuUsersText([])).toBe('no thread used 5 % of a core or more');
  });
});
