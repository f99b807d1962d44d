/**
 * Comparing runs: tracking error (measured - desired), the twin's residual (measured - twin) and one
 * run against another, per joint, with where the errors occur.
 *
 * Which samples count:
 * - measured - desired: every tick with a plan in force (states track, hold, paused), as stats.ts
 *   counts tracking error; so its 'track' phase equals the recorded summary's tracking figures.
 * - measured - twin: the twin's residual as the loop computed it (the quantity the alarm watches), on
 *   ticks with a fresh reading outside idle, as stats.ts counts it.
 * - run vs run: see `alignRuns`.
 */
import { z } from 'zod';
import { knownLawSchema, type RunLaw } from '../telemetry/header.js';
import { LOOP_STATES, PHASES, type TickField } from '../telemetry/tick.js';
import type { LoadedRecording, RecordingInfo, RecordingSummaryLine } from './read.js';
import { trajectoryClock, type SegmentClock } from './align.js';
import { interpAt } from './signal.js';

const DEG = 180 / Math.PI;

/** The tick fields compare needs (what `loadRecording` should keep). */
export const COMPARE_FIELDS: readonly TickField[] = [
  't',
  'trajT',
  'state',
  'phase',
  'fresh',
  'alarm',
  'qDes0',
  'qDes1',
  'qdDes0',
  'qdDes1',
  'q0',
  'q1',
  'res0',
  'res1',
];

const STATE_TRACK = LOOP_STATES.indexOf('track');
const STATE_IDLE = LOOP_STATES.indexOf('idle');
const PLAN_STATES = new Set(['track', 'hold', 'paused'].map((s) => LOOP_STATES.indexOf(s as (typeof LOOP_STATES)[number])));

/** Where a tick is: the trajectory's phase while tracking, the loop state otherwise. */
export function phaseLabel(state: number, phase: number): string {
  return state === STATE_TRACK ? (PHASES[phase] ?? 'none') : (LOOP_STATES[state] ?? 'idle');
}

const LABEL_ORDER = ['approach', 'track', 'park', 'hold', 'paused', ...LOOP_STATES];

/** Error statistics of one phase. All in degrees. */
export interface PhaseStats {
  samples: number;
  rmsDeg: number;
  meanDeg: number;
  maxAbsDeg: number;
}

/** Error statistics of one joint over a comparison, and where the largest error occurs. */
export interface ErrorStats extends PhaseStats {
  /** 1-based. */
  joint: number;
  /** The sample with the largest |error|: its signed value, loop time [s], trajectory time [s], phase. */
  max: { valueDeg: number; t: number; trajT: number; phase: string } | null;
  /** The same statistics in each phase (approach, track, park, hold, ...) that has samples. */
  byPhase: Record<string, PhaseStats>;
  /** Samples whose |error| exceeds a threshold (the twin alarm's), with the first time it happens. */
  overThreshold?: { thresholdDeg: number; samples: number; firstT: number | null };
}

/** One comparison, per joint. */
export interface Comparison {
  id: 'measured-desired' | 'measured-twin' | 'run-run';
  /** Which recording: 'A', 'B', or 'B-A' for run vs run. */
  run: string;
  title: string;
  /** Which samples count. */
  scope: string;
  joints: ErrorStats[];
}

/** A recording, described for the report. */
export interface RunDescription {
  label: string;
  file: string;
  rig: string;
  trajectories: string[];
  rateHz: number;
  ticks: number;
  /** Loop time of the last tick [s]. */
  durationS: number;
  feedforward?: string;
  /** The control law as the header records it; absent in recordings made before it was. */
  law?: RunLaw | { kind: string };
  /** The law in words: "feedforward desired + PID (...)", "controller FILE (sha256 ...)", "float (...)", "impedance (...)", or "law not recorded". */
  lawText: string;
  /** The file's format. */
  format: 'ndjson' | 'mcap';
  /** How the run stopped, in words, as its summary line says (old recordings have no `stop` value: only these). */
  stopText?: string;
  /** How the run stopped, as a value (switch on its kind); absent in recordings made before it was written. */
  stop?: RecordingSummaryLine['stop'];
  /** The twin alarm's threshold from the recorded rig file [deg]. */
  alarmDeg?: number;
  /** Set when the last line was cut short. */
  truncated?: { line: number; bytes: number };
  /** False when the run did not write its summary line (it crashed or was killed). */
  complete: boolean;
  /** Why the recording stopped before the run did (a full disk), as its summary says, and the ticks the run had. */
  recordingFailure?: { message: string; runTicks: number };
}

class Accumulator {
  private n = 0;
  private sum = 0;
  private sq = 0;
  private maxAbs = -1;
  private maxAt: ErrorStats['max'] = null;
  private readonly phases = new Map<string, { n: number; sum: number; sq: number; maxAbs: number }>();
  private over = 0;
  private firstOver: number | null = null;

  constructor(
    private readonly joint: number,
    private readonly threshold?: number,
  ) {}

  add(v: number, t: number, trajT: number, label: string): void {
    if (!Number.isFinite(v)) return;
    this.n++;
    this.sum += v;
    this.sq += v * v;
    const a = Math.abs(v);
    if (a > this.maxAbs) {
      this.maxAbs = a;
      this.maxAt = { valueDeg: v, t, trajT, phase: label };
    }
    let p = this.phases.get(label);
    if (!p) this.phases.set(label, (p = { n: 0, sum: 0, sq: 0, maxAbs: 0 }));
    p.n++;
    p.sum += v;
    p.sq += v * v;
    if (a > p.maxAbs) p.maxAbs = a;
    if (this.threshold !== undefined && a > this.threshold) {
      this.over++;
      if (this.firstOver === null) this.firstOver = t;
    }
  }

  result(): ErrorStats {
    const stats = (n: number, sum: number, sq: number, maxAbs: number): PhaseStats => ({
      samples: n,
      rmsDeg: n ? Math.sqrt(sq / n) : 0,
      meanDeg: n ? sum / n : 0,
      maxAbsDeg: n ? maxAbs : 0,
    });
    const byPhase: Record<string, PhaseStats> = {};
    const labels = [...this.phases.keys()].sort((a, b) => LABEL_ORDER.indexOf(a) - LABEL_ORDER.indexOf(b));
    for (const l of labels) {
      const p = this.phases.get(l)!;
      byPhase[l] = stats(p.n, p.sum, p.sq, p.maxAbs);
    }
    return {
      joint: this.joint,
      ...stats(this.n, this.sum, this.sq, this.maxAbs),
      max: this.maxAt,
      byPhase,
      ...(this.threshold !== undefined
        ? { overThreshold: { thresholdDeg: this.threshold, samples: this.over, firstT: this.firstOver } }
        : {}),
    };
  }
}

const alarmSchema = z.object({ twin: z.object({ alarmDeg: z.number() }) });

/** The twin alarm threshold of the rig a run used [deg], if the header has it. */
export function alarmThresholdDeg(info: RecordingInfo): number | undefined {
  const r = alarmSchema.safeParse(info.header.rig.content);
  return r.success ? r.data.twin.alarmDeg : undefined;
}

const DEG_PER_RAD = 180 / Math.PI;
const list = (xs: readonly number[], d = 3): string => xs.map((x) => String(Number(x.toFixed(d)))).join('/');

/**
 * A recorded law in words (compare's label of a run). `feedforward`: the header's older field, said
 * beside "law not recorded" for a recording made before the law was (it did not say whether a
 * controller or a mode replaced the feedforward + PID it names).
 */
export function lawText(law: RunLaw | { kind: string } | undefined, feedforward?: string): string {
  if (!law)
    return `law not recorded${feedforward !== undefined ? ` (an older recording; its header names feedforward ${feedforward})` : ''}`;
  const r = knownLawSchema.safeParse(law);
  if (!r.success) return `law "${law.kind}" (not known to this version of twolink)`;
  const l = r.data;
  switch (l.kind) {
    case 'pid': {
      const p = l.pid;
      const gains = p.schedule
        ? `gains scheduled on the elbow angle at ${p.schedule.length} points`
        : `kp ${list(p.kp)} N m/rad, ki ${list(p.ki)} N m/(rad s), kd ${list(p.kd)} N m s/rad`;
      const extra = [
        ...(l.feedforward !== 'none' && !l.disturbanceObserver ? ['no disturbance observer'] : []),
        ...(l.predict ? [] : ['no delay compensation']),
      ];
      return `${l.feedforward === 'none' ? 'PID alone' : `feedforward ${l.feedforward} + PID`} (${[gains, ...extra].join('; ')})`;
    }
    case 'controller':
      return `controller ${l.file} (sha256 ${l.sha256.slice(0, 12)})`;
    case 'float': {
      const f = l.settings as Record<string, unknown>;
      const lock = typeof f.lock === 'number' ? `; joint ${f.lock + 1} locked` : '';
      const c = f.constraint as { kind?: string } | undefined;
      return `float (friction assist ${l.settings.frictionAssist}, torque cap ${list(l.settings.torqueCapNm)} N m, speed cap ${list(
        l.settings.speedCapRadS.map((v) => v * DEG_PER_RAD),
        0,
      )} deg/s${lock}${c?.kind ? `; endpoint kept on a ${c.kind}` : ''})`;
    }
    case 'impedance':
      return `impedance (${l.space} space, stiffness ${l.stiffness} ${l.space === 'joint' ? 'N m/rad' : 'N/m'}, damping ratio ${l.dampingRatio})`;
    case 'code':
      return `a ControlLaw given in code (${l.name})`;
  }
}

export function describeRun(rec: LoadedRecording, label: string): RunDescription {
  const { info, columns } = rec;
  const h = info.header;
  const t = columns.get('t');
  const alarmDeg = alarmThresholdDeg(info);
  return {
    label,
    file: info.file,
    rig: h.rig.name,
    trajectories: h.trajectories.map((x) => x.name),
    rateHz: h.rateHz,
    ticks: info.ticks,
    durationS: t.length ? t[t.length - 1]! : 0,
    ...(h.feedforward !== undefined ? { feedforward: h.feedforward } : {}),
    ...(h.law ? { law: h.law } : {}),
    lawText: lawText(h.law, h.feedforward),
    format: info.format,
    ...(info.summary ? { stopText: info.summary.stopReason } : {}),
    ...(info.summary?.stop ? { stop: info.summary.stop } : {}),
    ...(alarmDeg !== undefined ? { alarmDeg } : {}),
    ...(info.truncated ? { truncated: info.truncated } : {}),
    complete: info.summary !== undefined,
    ...(typeof info.summary?.recordingFailure === 'string'
      ? { recordingFailure: { message: info.summary.recordingFailure, runTicks: info.summary.ticks } }
      : {}),
  };
}

/** measured - desired and measured - twin of one run. */
export function compareRun(rec: LoadedRecording, label: string): Comparison[] {
  const c = rec.columns;
  const n = rec.info.header.joints;
  const alarmDeg = alarmThresholdDeg(rec.info);
  const t = c.get('t');
  const trajT = c.get('trajT');
  const state = c.get('state');
  const phase = c.get('phase');
  const fresh = c.get('fresh');
  const q = [c.get('q0'), c.get('q1')];
  const qDes = [c.get('qDes0'), c.get('qDes1')];
  const res = [c.get('res0'), c.get('res1')];
  const track = Array.from({ length: n }, (_, j) => new Accumulator(j + 1));
  const twin = Array.from({ length: n }, (_, j) => new Accumulator(j + 1, alarmDeg));
  for (let i = 0; i < c.length; i++) {
    const s = state[i]!;
    const l = phaseLabel(s, phase[i]!);
    if (PLAN_STATES.has(s)) {
      for (let j = 0; j < n; j++) track[j]!.add((q[j]![i]! - qDes[j]![i]!) * DEG, t[i]!, trajT[i]!, l);
    }
    if (fresh[i] === 1 && s !== STATE_IDLE) {
      for (let j = 0; j < n; j++) twin[j]!.add(res[j]![i]! * DEG, t[i]!, trajT[i]!, l);
    }
  }
  return [
    {
      id: 'measured-desired',
      run: label,
      title: 'measured - desired',
      scope: 'every tick with a plan in force (track, hold, paused)',
      joints: track.map((a) => a.result()),
    },
    {
      id: 'measured-twin',
      run: label,
      title: 'measured - twin',
      scope: "the twin's residual (what its alarm watches) on ticks with a fresh reading, outside idle",
      joints: twin.map((a) => a.result()),
    },
  ];
}

// ---------------------------------------------------------------------------------------------
// Run vs run

/** How run B was put on run A's time base. */
export interface AlignmentSummary {
  method: string;
  /** Step of the common grid [s]. */
  stepS: number;
  segments: {
    index: number;
    name: string;
    /** Grid points compared. */
    samples: number;
    /** Readings whose trajectory time was solved from the plan, in A and in B (the rest rest in the plan). */
    solvedA: string;
    solvedB: string;
    method: 'plan' | 'trajT';
  }[];
  /** Trajectories in one run and not the other (not compared). */
  unmatched: number;
}

/** Run B put on run A's trajectory time. */
export interface RunAlignment {
  summary: AlignmentSummary;
  /** The comparison of the measured angles. */
  comparison: Comparison;
  /** B's readings on A's loop time (for plots): the loop time at which A was at the same point of the trajectory. */
  bOnA: { t: Float64Array; q: Float64Array[] };
}

/** A copy of xs made non-decreasing. */
function monotone(xs: Float64Array): Float64Array {
  const out = Float64Array.from(xs);
  for (let i = 1; i < out.length; i++) if (out[i]! < out[i - 1]!) out[i] = out[i - 1]!;
  return out;
}

/**
 * Run B's measured angles minus run A's at the same time on the same trajectory: for each
 * trajectory both runs made (in order), every fresh reading's time on the trajectory proper is
 * recovered from the plan (see align.ts), both runs' angles are linearly interpolated onto a common
 * grid of that time (step: the slower run's period), and compared there. The approach and the park
 * are not compared: they depend on where each run started.
 */
export function alignRuns(a: LoadedRecording, b: LoadedRecording): RunAlignment {
  const n = Math.min(a.info.header.joints, b.info.header.joints);
  const ca = trajectoryClock(a);
  const cb = trajectoryClock(b);
  const step = 1 / Math.min(a.info.header.rateHz, b.info.header.rateHz);
  const acc = Array.from({ length: n }, (_, j) => new Accumulator(j + 1));
  const qa = [a.columns.get('q0'), a.columns.get('q1')];
  const qb = [b.columns.get('q0'), b.columns.get('q1')];
  const tA = a.columns.get('t');
  const trajA = a.columns.get('trajT');
  const summary: AlignmentSummary = {
    method:
      'trajectory time of each reading, solved from the plan in the header (plan(tau) = desired); the trajectory proper only (track phase), trajectories matched in order',
    stepS: step,
    segments: [],
    unmatched: Math.abs(ca.length - cb.length),
  };
  const bt: number[] = [];
  const bq: number[][] = Array.from({ length: n }, () => []);
  const many = Math.min(ca.length, cb.length) > 1;
  for (let k = 0; k < Math.min(ca.length, cb.length); k++) {
    const A = ca[k]!;
    const B = cb[k]!;
    const tauA = monotone(A.tau);
    const tauB = monotone(B.tau);
    const at = Float64Array.from(A.ticks, (i) => tA[i]!);
    const au = Float64Array.from(A.ticks, (i) => trajA[i]!);
    const ya = Array.from({ length: n }, (_, j) => Float64Array.from(A.ticks, (i) => qa[j]![i]!));
    const yb = Array.from({ length: n }, (_, j) => Float64Array.from(B.ticks, (i) => qb[j]![i]!));
    const label = many ? `track: ${A.name}` : 'track';
    const hi = Math.min(tauA[tauA.length - 1]!, tauB[tauB.length - 1]!);
    const lo = Math.max(tauA[0]!, tauB[0]!);
    let samples = 0;
    for (let g = 0; lo + g * step <= hi + 1e-12; g++) {
      const u = lo + g * step;
      const t = interpAt(tauA, at, u);
      const tj = interpAt(tauA, au, u);
      for (let j = 0; j < n; j++) acc[j]!.add((interpAt(tauB, yb[j]!, u) - interpAt(tauA, ya[j]!, u)) * DEG, t, tj, label);
      samples++;
    }
    // B's own readings, placed where A was at the same trajectory time.
    for (let m = 0; m < B.ticks.length; m++) {
      const t = interpAt(tauA, at, tauB[m]!);
      if (!Number.isFinite(t)) continue;
      bt.push(t);
      for (let j = 0; j < n; j++) bq[j]!.push(yb[j]![m]!);
    }
    const pct = (c: SegmentClock): string => `${c.solved}/${c.ticks.length}`;
    summary.segments.push({
      index: k,
      name: A.name,
      samples,
      solvedA: pct(A),
      solvedB: pct(B),
      method: A.method === 'plan' && B.method === 'plan' ? 'plan' : 'trajT',
    });
  }
  return {
    summary,
    comparison: {
      id: 'run-run',
      run: 'B-A',
      title: 'measured B - measured A',
      scope: `at the same trajectory time (track phase), every ${(step * 1000).toFixed(3)} ms`,
      joints: acc.map((x) => x.result()),
    },
    bOnA: { t: Float64Array.from(bt), q: bq.map((x) => Float64Array.from(x)) },
  };
}

/** What `twolink compare` reports. */
export interface CompareReport {
  runs: RunDescription[];
  comparisons: Comparison[];
  alignment?: AlignmentSummary;
  /** Things the reader should know (a cut-short file, unlike trajectories, ...). */
  notes: string[];
}

/** What follows an MCAP's last whole record, for the note. */
const mcapRest = (bytes: number): string => (bytes ? `; the ${bytes} bytes after its last whole record (a cut chunk) were ignored` : '');

/** Compares one run with its plan and its twin, and with another run when given (`al`: their alignment, if already made). */
export function compareRecordings(a: LoadedRecording, b?: LoadedRecording, al0?: RunAlignment): CompareReport {
  const runA = describeRun(a, 'A');
  const runs = [runA];
  const comparisons = compareRun(a, 'A');
  const notes: string[] = [];
  let alignment: AlignmentSummary | undefined;
  if (b) {
    const runB = describeRun(b, 'B');
    runs.push(runB);
    comparisons.push(...compareRun(b, 'B'));
    const al = al0 ?? alignRuns(a, b);
    alignment = al.summary;
    comparisons.push(al.comparison);
    const ta = runA.trajectories.join(', ');
    const tb = runB.trajectories.join(', ');
    if (ta !== tb) notes.push(`the runs followed different trajectories (A: ${ta}; B: ${tb}): run vs run compares unlike motions`);
    if (al.summary.segments.some((s) => s.method === 'trajT')) {
      notes.push(
        "a plan could not be rebuilt from a header: run vs run aligned those trajectories on trajT from the track phase's first tick (to within a period)",
      );
    }
    if (al.summary.unmatched)
      notes.push(`${al.summary.unmatched} trajectory run(s) in one recording have no counterpart in the other and are not compared`);
    if (a.info.header.joints !== b.info.header.joints)
      notes.push('the runs have different numbers of joints: run vs run compares the joints both have');
  }
  for (const r of runs) {
    if (r.recordingFailure)
      notes.push(
        `${r.label}: the recording stopped before the run did (${r.recordingFailure.message}): it holds ${r.ticks} of the run's ${r.recordingFailure.runTicks} ticks`,
      );
    if (r.truncated && r.format === 'mcap')
      notes.push(
        `${r.label}: the MCAP was cut short (no footer: a crash or a full disk while writing): read up to its last whole chunk, ${r.ticks} ticks${mcapRest(r.truncated.bytes)}`,
      );
    else if (r.truncated)
      notes.push(
        `${r.label}: the last line (line ${r.truncated.line}, ${r.truncated.bytes} bytes) was cut short, a crash while writing: ignored`,
      );
    else if (!r.complete)
      notes.push(`${r.label}: no summary${r.format === 'mcap' ? ' (metadata "twolink.summary")' : ' line'}: the run did not end cleanly`);
  }
  return { runs, comparisons, ...(alignment ? { alignment } : {}), notes };
}

// ---------------------------------------------------------------------------------------------
// The human table

function f(v: number, d = 3): string {
  return Number.isFinite(v) ? v.toFixed(d) : '-';
}

function pad(s: string, w: number, right = true): string {
  return right ? s.padStart(w) : s.padEnd(w);
}

/** The report as tables per joint, for a terminal. */
export function formatReport(r: CompareReport): string {
  const out = r.runs.map(runLine);
  out.push('');
  out.push('Errors in degrees. max: the largest |error|, with the loop time, phase and trajectory time where it occurs.');
  out.push(...jointTables(r.comparisons));
  out.push(...twinAlarmLines(r.comparisons));
  if (r.alignment) {
    out.push('');
    out.push(...alignmentLines(r.alignment));
  }
  if (r.notes.length) {
    out.push('');
    for (const n of r.notes) out.push(`note: ${n}`);
  }
  return `${out.join('\n')}\n`;
}

/** A run in one line: its file, rig, trajectories, rate, length, law and how it stopped. */
function runLine(run: RunDescription): string {
  return `${run.label}  ${run.file}: ${run.rig}, ${run.trajectories.join(', ') || 'no trajectory'}, ${run.rateHz} Hz, ${run.ticks} ticks (${f(run.durationS, 2)} s), law: ${run.lawText}, stop: ${run.stopText ?? 'unknown (no summary)'}`;
}

/** The error tables' column heads and widths (the last column, RMS by phase, runs on unpadded). */
const TABLE_HEAD = ['', 'samples', 'RMS', 'mean', 'max', 'at t [s]', 'phase', 'trajT [s]', 'RMS by phase'];
const TABLE_WIDTHS = [26, 8, 7, 8, 8, 9, 9, 9, 0];

/** One table per joint, each after a blank line: a head, then a row per comparison that has the joint. */
function jointTables(comparisons: Comparison[]): string[] {
  const out: string[] = [];
  const joints = Math.max(...comparisons.map((c) => c.joints.length));
  const w = TABLE_WIDTHS;
  for (let j = 0; j < joints; j++) {
    out.push('');
    out.push(
      TABLE_HEAD.map((h, k) =>
        k === 0 ? pad(`joint ${j + 1}`, w[0]!, false) : k === TABLE_HEAD.length - 1 ? `  ${h}` : pad(h, w[k]!, k !== 6),
      ).join(' '),
    );
    for (const c of comparisons) {
      const s = c.joints[j];
      if (s) out.push(tableRow(c, s));
    }
  }
  return out;
}

/** A comparison's row in a joint's table: its statistics, where its largest error occurs, and its RMS in each phase. */
function tableRow(c: Comparison, s: ErrorStats): string {
  const w = TABLE_WIDTHS;
  const name = c.id === 'run-run' ? 'B - A measured' : `${c.run} ${c.title}`;
  const by = Object.entries(s.byPhase)
    .map(([k, p]) => `${k} ${f(p.rmsDeg)}`)
    .join(', ');
  return [
    pad(`  ${name}`, w[0]!, false),
    pad(String(s.samples), w[1]!),
    pad(f(s.rmsDeg), w[2]!),
    pad(f(s.meanDeg), w[3]!),
    pad(s.max ? f(s.max.valueDeg) : '-', w[4]!),
    pad(s.max ? f(s.max.t) : '-', w[5]!),
    pad(s.max ? s.max.phase : '-', w[6]!, false),
    pad(s.max && s.max.trajT >= 0 ? f(s.max.trajT) : '-', w[7]!),
    `  ${by}`,
  ].join(' ');
}

/** Per run, the twin alarm's threshold and the samples over it per joint (after a blank line, if any run has them). */
function twinAlarmLines(comparisons: Comparison[]): string[] {
  const out: string[] = [];
  const twins = comparisons.filter((c) => c.id === 'measured-twin');
  if (twins.some((c) => c.joints.some((s) => s.overThreshold))) out.push('');
  for (const c of twins) {
    const o = c.joints.map((s) => s.overThreshold).filter((x) => x !== undefined);
    if (!o.length) continue;
    out.push(
      `${c.run}: twin alarm threshold ${o[0]!.thresholdDeg} deg; samples over it: ${c.joints
        .map(
          (s) =>
            `joint ${s.joint} ${s.overThreshold!.samples}${s.overThreshold!.firstT !== null ? ` (first at ${f(s.overThreshold!.firstT)} s)` : ''}`,
        )
        .join(', ')}`,
    );
  }
  return out;
}

/** How run vs run was aligned, then each trajectory's points and how its readings' trajectory times were found. */
function alignmentLines(al: AlignmentSummary): string[] {
  const out = [
    "Run vs run: both runs' measured angles at the same time on the trajectory proper (track phase),",
    `linearly interpolated between readings onto a ${f(al.stepS * 1000)} ms grid. Each reading's trajectory time is solved from`,
    'the plan in the header (plan(tau) = the recorded desired angle); where the plan rests, trajT minus the',
    "median offset. t above is A's loop time.",
  ];
  for (const s of al.segments) {
    out.push(
      `  ${s.name}: ${s.samples} points; trajectory time from the plan for ${s.solvedA} readings of A, ${s.solvedB} of B${s.method === 'trajT' ? ' (plan not rebuilt: trajT)' : ''}`,
    );
  }
  return out;
}
