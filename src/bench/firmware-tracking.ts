/**
 * `npm run bench -- --only firmware`, the tracking part: the seed reach through our firmware in simavr
 * next to the TS mock board, and the difference taken apart.
 *
 * In board time (wall-clock effects drop out): the firmware with the harness in host lock-step (a
 * slice does not start before the host answered the last sample, src/mock/firmware-sim.ts), against
 * the TS mock's virtual-time run of the same rig file. The measured causes of a difference:
 * - the encoder quantum: each side quantizes the same angle at different instants [deg per count];
 * - the harness's encoder lag: the pins following the plant one slice late, measured by running the
 *   harness without its one-slice prediction (the artefact as it was) and with it (as it is);
 * - the slice: the lock-step delivers the host's answer at a slice boundary, measured by running with
 *   a slice 5x shorter.
 * In real time the same comparison also carries the machine: each side's spread over its runs, and the
 * slices the harness ran ahead of a slow plant process (encoders frozen), measured in the runs.
 * All of it is on two-link rigs: the per-joint figures are pairs.
 */
import { childDone, childEndText, lastSummary, trackingRmsDeg, type ChildEnd } from './child-summary.js';
import { spawn } from 'node:child_process';
import type { Rig } from '../config/load.js';
import { builtinPath } from '../model/builtins.js';
import { virtualRun } from '../run/virtual.js';
import { FirmwareSim, type EncoderPinStats } from '../mock/firmware-sim.js';
import { asPair, J, mapPair, pairOf, type Joint, type Pair, type ReadonlyPair } from '../model/types.js';

/** One reach through the firmware with the harness in host lock-step (board time). */
export interface LockstepReach {
  end: ChildEnd;
  rmsDeg: ReadonlyPair;
  pins: EncoderPinStats;
  /** Wall time the run took [s] (not a figure of the run). */
  wallS: number;
  /** The harness's lock-step line: how often it waited for the host, and went on without it. */
  lockstep: string;
  /** Times the harness went on without the host's answer (the end of the run, when the host is gone; maybe its start). */
  timeouts: number;
}

/** `twolink run --port` against the firmware in host lock-step; this process steps the plant. */
export async function lockstepReach(
  rig: Rig,
  bin: string,
  root: string,
  o: { predict: boolean; sliceUs: number; hostWaitMs?: number },
): Promise<LockstepReach> {
  const sim = await FirmwareSim.start({
    rig,
    board: 'uno',
    hostLockstep: true,
    predict: o.predict,
    sliceUs: o.sliceUs,
    lead: 0,
    ...(o.hostWaitMs !== undefined ? { hostWaitMs: o.hostWaitMs } : {}),
  });
  let lockstep = 'no lock-step line from the harness';
  sim.on('log', (l) => {
    const m = /host lock-step: (.*)$/.exec(l);
    if (m) lockstep = m[1]!;
  });
  const t0 = performance.now();
  const run = spawn(process.execPath, [bin, 'run', '--rig', rig.file, '--port', sim.ptyPath, '--traj', 'reach', '--json', '--no-rt'], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  run.stdout.on('data', (d: Buffer) => (out += d.toString()));
  run.stderr.on('data', (d: Buffer) => (err += d.toString()));
  await new Promise<void>((r) => run.on('exit', () => r()));
  const wallS = (performance.now() - t0) / 1e3;
  const pins = sim.encoderStats();
  await sim.stop();
  const timeouts = Number(/(\d+) went on without it/.exec(lockstep)?.[1] ?? NaN);
  if (err.trim()) lockstep += `; the host said: ${err.trim().split('\n').pop()}`;
  const s = lastSummary(out, err);
  if (!('summary' in s)) return { end: { kind: 'no-summary', why: s.why }, rmsDeg: [NaN, NaN], pins, wallS, lockstep, timeouts };
  return { end: { kind: 'stopped', stop: s.summary.stop }, rmsDeg: trackingRmsDeg(s.summary), pins, wallS, lockstep, timeouts };
}

/** The TS mock's reach in virtual time, on the same rig file. */
export async function mockVirtualReach(rig: Rig): Promise<ReadonlyPair> {
  const r = await virtualRun(rig, [builtinPath(rig.arm, 'reach')!], { keepRows: false });
  return asPair(r.summary.tracking.rmsDeg, "the mock's tracking RMS");
}

/** One encoder count of each joint [deg]. */
const countDeg = (rig: Rig): ReadonlyPair =>
  asPair(
    rig.encoders.map((e) => 360 / e.countsPerRev),
    "the rig's encoders",
  );

const spread = (xs: number[]): number => (xs.length ? Math.max(...xs) - Math.min(...xs) : NaN);
const pair = (xs: readonly number[], digits = 3): string => xs.map((x) => x.toFixed(digits)).join(' / ');

/** The board-time comparison: rows, figures and whether the difference is within what is explained. */
export async function boardTimeComparison(
  rig: Rig,
  bin: string,
  root: string,
): Promise<{ rows: [string, string, string][]; figures: Record<string, readonly number[] | number>; pass: boolean; pinsDeg: Pair }> {
  const quantum = countDeg(rig);
  const mock = await mockVirtualReach(rig);
  const asIs = await lockstepReach(rig, bin, root, { predict: true, sliceUs: 250 });
  const lagged = await lockstepReach(rig, bin, root, { predict: false, sliceUs: 250 });
  const fine = await lockstepReach(rig, bin, root, { predict: true, sliceUs: 50 });
  const runs = [asIs, lagged, fine];
  // Lock-step held: every run done, and the harness went on without the host at most twice: a T before
  // the host's loop starts (the arm at rest) and the last one, when the host has gone.
  const ok = runs.every((r) => childDone(r.end) && r.timeouts <= 2);
  const diff = mapPair(asIs.rmsDeg, (x, j) => Math.abs(x - mock[j]));
  const lag = mapPair(asIs.rmsDeg, (x, j) => Math.abs(lagged.rmsDeg[j] - x));
  const slice = mapPair(asIs.rmsDeg, (x, j) => Math.abs(fine.rmsDeg[j] - x));
  const allowed = mapPair(quantum, (q, j) => q + lag[j] + slice[j]);
  const pass = ok && J.every((j) => diff[j] <= allowed[j]);
  const pinsDeg = (r: LockstepReach): Pair => mapPair(asPair(r.pins.rmsCounts, 'the encoder pins vs plant RMS'), (c, j) => c * quantum[j]);
  const deg = (r: LockstepReach): string => pair(pinsDeg(r), 4);
  const rows: [string, string, string][] = [
    ['TS mock board, virtual time', `${pair(mock)} deg`, 'tracking RMS j1 / j2, the reach (src/run/virtual.ts)'],
    [
      'our firmware, host lock-step, as built',
      `${pair(asIs.rmsDeg)} deg`,
      `${childEndText(asIs.end)}; pins vs plant RMS ${deg(asIs)} deg (slice 250 us, pins predicted one slice ahead); ${asIs.lockstep}`,
    ],
    [
      '  the same, pins one slice late (the old harness)',
      `${pair(lagged.rmsDeg)} deg`,
      `${childEndText(lagged.end)}; pins vs plant RMS ${deg(lagged)} deg`,
    ],
    ['  the same, slice 50 us', `${pair(fine.rmsDeg)} deg`, `${childEndText(fine.end)}; pins vs plant RMS ${deg(fine)} deg`],
    ['difference firmware - mock, |j1| / |j2|', `${pair(diff)} deg`, ''],
    ['  explained: encoder quantum', `${pair(quantum)} deg`, '360 / counts per revolution'],
    ['  explained: harness encoder lag (one slice)', `${pair(lag)} deg`, 'measured: |late pins - predicted pins|'],
    ['  explained: lock-step slice', `${pair(slice)} deg`, 'measured: |slice 50 us - slice 250 us|'],
    [
      `board time: ${pass ? 'PASS' : 'FAIL'}`,
      `${pair(diff)} <= ${pair(allowed)} deg`,
      ok
        ? 'difference within quantum + explained'
        : `a run did not complete in lock-step: ${runs.map((r) => `${childEndText(r.end)} (${r.lockstep})`).join(', ')}`,
    ],
  ];
  return {
    rows,
    pinsDeg: pinsDeg(asIs),
    figures: {
      lockstepMockRmsDeg: mock,
      lockstepFirmwareRmsDeg: asIs.rmsDeg,
      lockstepLaggedRmsDeg: lagged.rmsDeg,
      lockstepSlice50RmsDeg: fine.rmsDeg,
      lockstepPass: pass ? 1 : 0,
    },
    pass,
  };
}

/** Per side of the real-time comparison: the runs' tracking RMS per joint [deg], and the pins (firmware). */
export interface RealTimeSide {
  rmsDeg: ReadonlyPair[];
  /** The firmware rig's pins-vs-plant line per run (empty for the mock). */
  pinsDeg: ReadonlyPair[];
  staleSlices: number[];
}

/** The real-time comparison: medians, each side's run-to-run spread, the pins; PASS against all of it. */
export function realTimeComparison(
  rig: Rig,
  mock: RealTimeSide,
  fw: RealTimeSide,
  pinsLockstepDeg: ReadonlyPair,
): { rows: [string, string, string][]; pass: boolean } {
  const quantum = countDeg(rig);
  const med = (xs: number[]): number => {
    const s = xs.filter(Number.isFinite).sort((a, b) => a - b);
    return s.length ? s[Math.floor(s.length / 2)]! : NaN;
  };
  const col = (side: RealTimeSide, j: Joint): number[] => side.rmsDeg.map((r) => r[j]);
  const diff = pairOf((j) => Math.abs(med(col(fw, j)) - med(col(mock, j))));
  const machine = pairOf((j) => Math.max(spread(col(mock, j)), spread(col(fw, j))));
  // What the pins lost in real time over the lock-step run (the same noise and quantization): the slices
  // the harness ran ahead of a slow plant process, with frozen encoders. RMS adds in squares.
  const pins = pairOf((j) => Math.sqrt(Math.max(0, Math.max(...fw.pinsDeg.map((p) => p[j]), 0) ** 2 - pinsLockstepDeg[j] ** 2)));
  const allowed = pairOf((j) => quantum[j] + machine[j] + pins[j]);
  const pass = J.every((j) => Number.isFinite(diff[j]) && diff[j] <= allowed[j]);
  return {
    pass,
    rows: [
      ['difference firmware - mock (medians), |j1| / |j2|', `${pair(diff)} deg`, ''],
      ['  explained: encoder quantum', `${pair(quantum)} deg`, ''],
      [
        '  explained: the machine (largest run-to-run spread of one side)',
        `${pair(machine)} deg`,
        `mock ${pair(pairOf((j) => spread(col(mock, j))))}, firmware ${pair(pairOf((j) => spread(col(fw, j))))}`,
      ],
      [
        '  explained: frozen encoder pins (worst run, over lock-step)',
        `${pair(pins, 4)} deg`,
        `pins vs plant RMS ${fw.pinsDeg.map((p) => pair(p, 4)).join(', ')} deg; slices run ahead of the plant process: ${fw.staleSlices.join(', ')}`,
      ],
      [`real time: ${pass ? 'PASS' : 'FAIL'}`, `${pair(diff)} <= ${pair(allowed)} deg`, 'difference within quantum + explained'],
    ],
  };
}
