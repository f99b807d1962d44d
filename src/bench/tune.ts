/**
 * `twolink tune` on rigs/mock-arm.json (16U2 cable model) twice: in virtual time (the mock on a
 * VirtualClock) and in real time with --rt (the mock in its own thread, SCHED_FIFO asked for both
 * threads, as `twolink run --mock` runs it). Per run: the motion time, the target, and per joint the
 * measured crossover against the target, the margins, the model's fit below the crossover and the
 * step; then the reach (virtual time, the mean of 5 plant seeds) with the tuned rig file against the
 * file's own gains; and --bandwidth 40 refused before any motion, with the bound, in both. Every row
 * says which clock it was measured on and the machine's load.
 */
import { readFileSync } from 'node:fs';
import { loadRig, parseJsonText, resolveRig, type Rig } from '../config/load.js';
import { parseRigFile } from '../config/rig.js';
import { builtinPath } from '../model/builtins.js';
import { virtualRun } from '../run/virtual.js';
import { runTune, type TuneOutcome } from '../tune/driver.js';
import { openTuneMock, openTuneMockRealtime } from '../tune/mock.js';
import { gainSpread } from '../tune/pid-design.js';
import { tunedRigFile } from '../tune/rigfile.js';
import { load1, section, type BenchResult } from './report.js';
import { asPair, J, type Pair } from '../model/types.js';
import { realTimeCompute } from '../tune/realtime-compute.js';

const RIG = 'rigs/mock-arm.json';
const SEEDS = [1, 2, 3, 4, 5];
/** A bandwidth the loop's rate and delay cannot reach (the bound is 10-11 Hz even with the estimator widened). */
const REFUSED_HZ = 40;

interface TuneBenchRun {
  label: string;
  outcome: TuneOutcome;
  pose: number[];
  wallS: number;
  load: [number, number];
  note: string;
}

async function tuneOnce(rig: Rig, realtime: boolean, bandwidthHz?: number): Promise<TuneBenchRun> {
  const said: string[] = [];
  const operator = {
    say: (s: string) => void said.push(s),
    confirm: async () => undefined,
    ask: async () => undefined,
    signal: new AbortController().signal,
  };
  const load0 = load1();
  const t0 = process.hrtime.bigint();
  let pose: number[] = [];
  const options = {
    joints: [...Array(rig.joints).keys()],
    bandwidthHz: bandwidthHz ?? rig.control.rateHz / 40,
    explicit: bandwidthHz !== undefined,
    rateHz: rig.control.rateHz,
  };
  const onPose = (q: readonly number[]): void => void (pose = q.slice());
  let outcome: TuneOutcome;
  let note: string;
  if (realtime) {
    const m = await openTuneMockRealtime(rig, true);
    try {
      outcome = await runTune({ rig, link: m.link, operator, options, onPose, compute: realTimeCompute() });
    } finally {
      await m.close();
    }
    const rt = m.rt!;
    const s = m.mockStats();
    note = `real time, --rt: SCHED_FIFO host ${rt.host.granted ? 'granted' : `refused (${rt.host.reason})`}, mock thread ${rt.mock.granted ? 'granted' : `refused (${rt.mock.reason})`}; mock timers late by up to ${s ? s.maxLateMs.toFixed(1) : '?'} ms, starved ${s ? s.starvedMs.toFixed(0) : '?'} ms`;
  } else {
    const m = await openTuneMock(rig);
    try {
      outcome = await m.drive(runTune({ rig, link: m.link, operator, options, onPose }));
    } finally {
      await m.close();
    }
    note = 'virtual time';
  }
  const wallS = Number(process.hrtime.bigint() - t0) / 1e9;
  return { label: realtime ? 'real time --rt' : 'virtual time', outcome, pose, wallS, load: [load0, load1()], note };
}

/** The reach's tracking RMS per joint [deg], the mean over the plant seeds (virtual time). */
async function reachRms(raw: Record<string, unknown>): Promise<Pair> {
  const sum: Pair = [0, 0];
  for (const seed of SEEDS) {
    const f = { ...raw, plant: { ...(raw.plant as object), seed } };
    const rig = resolveRig(parseRigFile(f, 'seeded.json'), 'seeded.json');
    const r = await virtualRun(rig, [builtinPath(rig.arm, 'reach')!], { keepRows: false });
    const rms = asPair(r.summary.tracking.rmsDeg, "the reach's tracking.rmsDeg");
    for (const j of J) sum[j] += rms[j] / SEEDS.length;
  }
  return sum;
}

const f3 = (v: number): string => (Number.isFinite(v) ? Number(v.toPrecision(3)).toString() : 'n/a');

function runRows(r: TuneBenchRun, rows: [string, string, string][], figures: BenchResult['figures']): void {
  const o = r.outcome;
  const L = r.label;
  const load = `load ${r.load[0].toFixed(2)} -> ${r.load[1].toFixed(2)} (2 cores shared with other sessions)`;
  rows.push([
    `${L}: completed, motion / wall [s]`,
    `${o.completed ? 'yes' : 'NO'}, ${o.motionS.toFixed(1)} / ${r.wallS.toFixed(1)}`,
    `${r.note}; ${load}; target <= 60 s of motion`,
  ]);
  rows.push([
    `${L}: target crossover [Hz]`,
    f3(o.bandwidthHz),
    `the model's bound ${o.boundHz.map(f3).join(', ')} Hz with the rig's ${o.velocityFilterHz} Hz velocity estimator`,
  ]);
  figures[`${L} motionS`] = o.motionS;
  figures[`${L} wallS`] = r.wallS;
  figures[`${L} targetHz`] = o.bandwidthHz;
  for (const t of o.joints) {
    const m = t.measured;
    const id = t.identified;
    const j = `${L}: joint ${t.joint + 1}`;
    if (m) {
      rows.push([
        `${j} crossover [Hz], PM [deg], GM [dB]`,
        `${f3(m.crossoverHz)}, ${f3(m.phaseMarginDeg)}, ${Number.isFinite(m.gainMarginDb) ? f3(m.gainMarginDb) : `>= ${f3(m.gainMarginAtLeastDb)}`}`,
        `crossover ${((m.crossoverHz / o.bandwidthHz - 1) * 100).toFixed(1)} % off the target (<= 10 %); PM >= 45, GM >= 6`,
      ]);
      rows.push([
        `${j} step: overshoot [%], settling [s]`,
        `${f3(m.overshootPct)}, ${f3(m.settlingS)}`,
        `a ${f3((m.stepRad * 180) / Math.PI)} deg step`,
      ]);
      figures[`${j} crossoverHz`] = m.crossoverHz;
      figures[`${j} phaseMarginDeg`] = m.phaseMarginDeg;
      figures[`${j} gainMarginAtLeastDb`] = m.gainMarginAtLeastDb;
    }
    if (id) {
      rows.push([
        `${j} model vs measured below crossover`,
        `${f3(id.fitErrorDb)} dB, ${f3(id.fitErrorDeg)} deg`,
        `target <= 1 dB, 5 deg; masses x${f3(id.mass)} the rig's`,
      ]);
      figures[`${j} fitErrorDb`] = id.fitErrorDb;
      figures[`${j} fitErrorDeg`] = id.fitErrorDeg;
    }
    if (t.design) {
      const g = t.design.gains.map((x) => `${x.elbowDeg}: ${f3(x.kp)}/${f3(x.ki)}/${f3(x.kd)}`).join('; ');
      rows.push([`${j} gains by elbow [deg]: kp/ki/kd`, g.split('; ')[1] ?? g, g]);
    }
  }
}

export async function benchTune(): Promise<BenchResult> {
  const rig = loadRig(RIG);
  const raw = parseJsonText(readFileSync(RIG, 'utf8'), RIG) as Record<string, unknown>;
  const rows: [string, string, string][] = [];
  const figures: BenchResult['figures'] = {};
  const before = await reachRms(raw);
  rows.push(["reach with the file's gains: RMS [deg]", before.map(f3).join(' / '), `virtual time, mean of ${SEEDS.length} plant seeds`]);
  figures['reach file rmsDeg'] = before;
  for (const realtime of [false, true]) {
    const r = await tuneOnce(rig, realtime);
    runRows(r, rows, figures);
    if (!r.outcome.joints.some((t) => t.design && t.measured)) continue;
    const t = tunedRigFile(raw, rig, r.outcome, ((r.pose[1] ?? 0) * 180) / Math.PI);
    const after = await reachRms(t.file);
    rows.push([
      `${r.label}: reach with the tuned file: RMS [deg]`,
      after.map(f3).join(' / '),
      `virtual time, mean of ${SEEDS.length} plant seeds; no worse than the file's on both joints: ${J.every((j) => after[j] <= before[j]) ? 'yes' : 'NO'}`,
    ]);
    figures[`${r.label} reach tuned rmsDeg`] = after;
  }
  // A bandwidth out of reach: refused before any motion, with the bound.
  for (const realtime of [false, true]) {
    const r = await tuneOnce(rig, realtime, REFUSED_HZ);
    const s = r.outcome.steps.find((x) => x.name === 'bandwidth');
    rows.push([
      `${r.label}: --bandwidth ${REFUSED_HZ}`,
      s?.status === 'fail' ? `refused, ${r.outcome.motionS.toFixed(1)} s of motion` : 'NOT refused',
      `the bound ${r.outcome.boundHz.map(f3).join(', ')} Hz (estimator up to ${r.outcome.velocityFilterHz} Hz); fix: ${s?.fix ?? ''}`,
    ]);
    figures[`${r.label} refused boundHz`] = r.outcome.boundHz;
  }
  return section(`twolink tune on ${RIG} (16U2 cable model): virtual time and real time --rt`, rows, figures);
}

/**
 * `--tune-repeats N` (with `--rt`: real time, the mock in its own thread at SCHED_FIFO as asked; else
 * virtual time, each repeat its own plant seed): N tunes of `file` one after the other, and the largest
 * spread of kp, ki and kd between them ((max - min) / mean) at each scheduled elbow angle, per joint
 * (issue 24: within 5 %). In real time every repeat's noise and timing are the machine's; the rows say
 * the load and whether SCHED_FIFO was granted.
 */
export async function benchTuneRepeats(n: number, realtime: boolean, file = RIG): Promise<BenchResult> {
  const base = loadRig(file);
  const raw = parseJsonText(readFileSync(file, 'utf8'), file) as Record<string, unknown>;
  const rows: [string, string, string][] = [];
  const figures: BenchResult['figures'] = {};
  const runs: TuneBenchRun[] = [];
  for (let i = 0; i < n; i++) {
    // Virtual time repeats the same clock: each repeat takes its own plant seed (encoder noise, friction draws).
    const rig = realtime ? base : resolveRig(parseRigFile({ ...raw, plant: { ...(raw.plant as object), seed: i + 1 } }, file), file);
    const r = await tuneOnce(rig, realtime);
    runs.push(r);
    const g = r.outcome.joints
      .map((t) => (t.design ? t.design.gains.map((x) => `${f3(x.kp)}/${f3(x.ki)}/${f3(x.kd)}`).join('; ') : 'none'))
      .join(' | ');
    const failed = r.outcome.steps.find((x) => x.status === 'fail');
    rows.push([
      `${r.label} repeat ${i + 1}: completed, motion [s]`,
      `${r.outcome.completed ? 'yes' : 'NO'}, ${r.outcome.motionS.toFixed(1)}`,
      `${r.note}; load ${r.load[0].toFixed(2)} -> ${r.load[1].toFixed(2)}; kp/ki/kd at elbow -120; 0; 120 deg per joint: ${g}${failed ? `; stopped at ${failed.name}: ${failed.summary}` : ''}`,
    ]);
  }
  const done = runs.filter((r) => r.outcome.completed && r.outcome.joints.every((t) => t.design));
  for (const j of [...Array(base.joints).keys()]) {
    const spreads = [0, 1, 2].map((e) => gainSpread(done.map((r) => r.outcome.joints.find((t) => t.joint === j)!.design!.gains[e]!)));
    const worst = Math.max(...spreads);
    rows.push([
      `joint ${j + 1}: largest spread of kp, ki, kd [%]`,
      (100 * worst).toFixed(2),
      `${done.length} of ${n} repeats completed; at elbow -120 / 0 / 120 deg: ${spreads.map((x) => (100 * x).toFixed(2)).join(' / ')} %; target <= 5 %: ${done.length >= 2 && worst <= 0.05 ? 'yes' : 'NO'}`,
    ]);
    figures[`joint ${j + 1} spreadPct`] = 100 * worst;
  }
  return section(
    `twolink tune repeated ${n} times on ${file} (16U2 cable model): ${realtime ? 'real time --rt' : 'virtual time, a plant seed each'}`,
    rows,
    figures,
  );
}
