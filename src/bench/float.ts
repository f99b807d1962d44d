/**
 * Float, teach and replay figures (issue 23) on the mock rig with its identified model
 * (rigs/mock-arm-identified.json): hands-off drift at poses across the workspace over 2 s, the
 * transient of entering and leaving float, and a teach with the scripted hand along its 10 s circle
 * replayed at 1x and 2x (per-joint and endpoint error). Virtual time always; with `--rt` also real
 * time (the mock in its own thread, the loop in its worker): drift at `--float-rt-poses N` poses
 * (default 4) and teach + replay through the `twolink` command at 1x and 2x, and a quick swing
 * taught by a hand file whose 2x replay is refused beforehand (the motors cannot follow it).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tmpdir } from 'node:os';
import { loadRig, type Rig } from '../config/load.js';
import { loadTrajectoryFile } from '../config/trajectory-file.js';
import { checkFeasible, FeasibilityError } from '../control/feasibility.js';
import { floatSettings } from '../control/float.js';
import { buildTaught, type TeachRecording } from '../identify/taught.js';
import { handPath, handPathSpan } from '../mock/hand.js';
import { scalePath, type PathSpec } from '../model/builtins.js';
import { buildPath } from '../model/trajectory.js';
import { asPair, J, type Pair, type TwoLinkParams } from '../model/types.js';
import { Session } from '../run/session.js';
import { floatLaw } from '../run/modes.js';
import { virtualRun } from '../run/virtual.js';
import { F } from '../telemetry/tick.js';
import { load1, section, type BenchResult } from './report.js';

const RIG = 'rigs/mock-arm-identified.json';
const DEG = Math.PI / 180;
/** 20 poses across the workspace [deg], inside the soft limits. */
const POSES: [number, number][] = [];
for (const a1 of [-120, -60, 0, 60, 120]) for (const a2 of [-120, -40, 40, 120]) POSES.push([a1, a2]);

const posePath = (p: [number, number], holdS: number): PathSpec => ({
  name: 'pose',
  description: 'a pose',
  start: { q: [p[0] * DEG, p[1] * DEG] },
  steps: [{ kind: 'hold', duration: holdS }],
});

/** A time [s] and the two joint angles then [rad]. */
type AngleRow = [t: number, q1: number, q2: number];

/** Largest move per joint [deg] of the angles in `rows` over [t0, t1] from their value at t0. */
function moved(rows: readonly AngleRow[], t0: number, t1: number): Pair {
  const at = rows.find(([t]) => t >= t0);
  if (!at) return [NaN, NaN];
  const d: Pair = [0, 0];
  for (const [t, q1, q2] of rows) {
    if (!(t >= t0 && t <= t1)) continue;
    d[0] = Math.max(d[0], Math.abs(q1 - at[1]) / DEG);
    d[1] = Math.max(d[1], Math.abs(q2 - at[2]) / DEG);
  }
  return d;
}

/** Virtual time: drift over 2 s after the blend at each pose (the plant's angles), and enter/leave transients at one. */
async function virtualFloat(rig: Rig): Promise<{ drift: [number, number]; enter: [number, number]; leave: [number, number] }> {
  const drift: [number, number] = [0, 0];
  const enter: [number, number] = [0, 0];
  const leave: [number, number] = [0, 0];
  for (const pose of POSES) {
    const law = floatLaw(rig, floatSettings(rig, { startFloating: false }));
    const truth: AngleRow[] = [];
    let on = -1;
    let off = -1;
    await virtualRun(rig, [posePath(pose, 6)], {
      controller: law,
      park: false,
      onTick: (core, _c, mock) => {
        const t = core.row[F.t]!;
        const [q1, q2] = asPair(mock.plant.q, "the mock plant's angles");
        truth.push([t, q1, q2]);
        const p = core.progress;
        if (!p || p.phase !== 'track') return;
        if (on < 0) {
          law.setFloat(true);
          on = t;
        } else if (off < 0 && t >= on + 3) {
          law.setFloat(false);
          off = t;
        }
      },
    });
    const d = moved(truth, on + 0.5, on + 2.5);
    const e = moved(truth, on, on + 1.5);
    const l = moved(truth, off, off + 1.5);
    for (const j of J) {
      drift[j] = Math.max(drift[j], d[j]);
      enter[j] = Math.max(enter[j], e[j]);
      leave[j] = Math.max(leave[j], l[j]);
    }
  }
  return { drift, enter, leave };
}

/** Virtual time: the scripted hand teaches its circle; the replay at 1x and 2x (or 2x's refusal). */
async function virtualTeach(rig: Rig): Promise<{ rows: [string, string, string][]; figures: BenchResult['figures'] }> {
  const at = 1;
  const span = handPathSpan(handPath('circle', rig.arm as TwoLinkParams));
  const from = at + span.fromS;
  const end = at + span.toS;
  const rec: TeachRecording = { t: [], q: [], marks: [] };
  await virtualRun(rig, [{ name: 'hold', description: 'hold', start: {}, steps: [{ kind: 'hold', duration: end + 1 }] }], {
    controller: floatLaw(rig, floatSettings(rig)),
    park: false,
    injections: [{ name: 'hand', value: 'circle', at }],
    onTick: (core) => {
      const t = core.row[F.t]!;
      if (t < from || t > end) return;
      rec.t.push(t);
      rec.q.push([core.row[F.q0]!, core.row[F.q1]!]);
    },
  });
  const taught = buildTaught(rig, rec, { target: 'mock' });
  const file = join(mkdtempSync(join(tmpdir(), 'twolink-bench-float-')), 'circle.json');
  writeFileSync(file, JSON.stringify(taught.file));
  const spec = loadTrajectoryFile(file);
  const rows: [string, string, string][] = [];
  const figures: BenchResult['figures'] = { virtualTaughtSlowdown: taught.slowdown };
  for (const speed of [1, 2]) {
    const p = scalePath(spec, speed);
    try {
      checkFeasible(rig, buildPath(rig.arm, p.start, p.steps), `x${speed}`);
    } catch (e) {
      if (!(e instanceof FeasibilityError)) throw e;
      rows.push([`replay x${speed} (virtual)`, 'refused beforehand', e.message]);
      figures[`virtualReplayX${speed}Refused`] = e.message;
      continue;
    }
    const r = (await virtualRun(rig, [p], { keepRows: false })).summary.replay!;
    rows.push([
      `replay x${speed} (virtual)`,
      `RMS ${r.rmsDeg.map((v) => v.toFixed(3)).join(', ')} deg; ${r.endpointRmsMm.toFixed(2)} mm`,
      `max ${r.maxDeg.map((v) => v.toFixed(3)).join(', ')} deg; ${r.endpointMaxMm.toFixed(2)} mm (target RMS <= 0.3 deg, 2 mm)`,
    ]);
    Object.assign(figures, {
      [`virtualReplayX${speed}RmsDeg`]: r.rmsDeg,
      [`virtualReplayX${speed}MaxDeg`]: r.maxDeg,
      [`virtualReplayX${speed}EndpointRmsMm`]: r.endpointRmsMm,
      [`virtualReplayX${speed}EndpointMaxMm`]: r.endpointMaxMm,
    });
  }
  return { rows, figures };
}

/** A moving mean over `k` rows of the angles (the encoders' step and noise: 1 count is 0.15 deg on joint 2). */
function meanOver(rows: readonly AngleRow[], k: number): AngleRow[] {
  return rows.map((r, i): AngleRow => {
    const w = rows.slice(Math.max(0, i - k + 1), i + 1);
    const meanOf = (c: 1 | 2): number => w.reduce((a, x) => a + x[c], 0) / w.length;
    return [r[0], meanOf(1), meanOf(2)];
  });
}

/** Real time: drift at `n` of the poses (the encoders: the plant is in the mock's thread), float from 3 s of board time, hold again from 6 s; and the enter/leave transients. */
async function realtimeDrift(rig: Rig, n: number): Promise<{ drift: [number, number]; enter: [number, number]; leave: [number, number] }> {
  const worst: [number, number] = [0, 0];
  const enter: [number, number] = [0, 0];
  const leave: [number, number] = [0, 0];
  for (const pose of POSES.filter((_, k) => k % Math.max(1, Math.floor(POSES.length / n)) === 0).slice(0, n)) {
    const rows: AngleRow[] = [];
    const s = new Session({
      rig,
      target: { kind: 'mock' },
      paths: [posePath(pose, 7)],
      cycle: false,
      park: false,
      feedforward: 'desired',
      rateHz: rig.control.rateHz,
      injections: [],
      maxSeconds: 20,
      rt: true,
      float: floatSettings(rig, { startFloating: false, floatFromS: 3, floatUntilS: 6 }),
      onRow: (r) => rows.push([r[F.t]!, r[F.q0]!, r[F.q1]!]),
    });
    const res = await s.run();
    const t0 = rows[0]?.[0] ?? 0;
    // the angles averaged over 50 ms: the figures are the arm's motion, not its encoders' last count
    const avg = meanOver(rows, Math.round(0.05 * rig.control.rateHz));
    const d = moved(avg, t0 + 3.5, t0 + 5.5);
    if (res.summary.stop.kind !== 'done') throw new Error(`float pose ${pose.join(', ')}: ${res.summary.stopReason}`);
    const e = moved(avg, t0 + 3, t0 + 4.5);
    const l = moved(avg, t0 + 6, t0 + 7.5);
    for (const j of J) {
      worst[j] = Math.max(worst[j], d[j]);
      enter[j] = Math.max(enter[j], e[j]);
      leave[j] = Math.max(leave[j], l[j]);
    }
  }
  return { drift: worst, enter, leave };
}

/** A replay's report (the summary JSON's `replay`). */
interface ReplayReport {
  rmsDeg: number[];
  maxDeg: number[];
  endpointRmsMm: number;
  endpointMaxMm: number;
}

/** What `twolink ARGS` gave: its exit code, its last stdout line and its stderr. */
function twolink(args: string[]): Promise<{ code: number | null; last: string; err: string }> {
  const bin = fileURLToPath(new URL('../../bin/twolink.js', import.meta.url));
  return new Promise((resolve, reject) => {
    const c = spawn(process.execPath, [bin, ...args]);
    let so = '';
    let se = '';
    c.stdout.on('data', (d: Buffer) => (so += d.toString()));
    c.stderr.on('data', (d: Buffer) => (se += d.toString()));
    c.on('error', reject);
    c.on('close', (code) => resolve({ code, last: so.trim().split('\n').at(-1) ?? '', err: se.trim() }));
  });
}

async function ok(args: string[]): Promise<string> {
  const r = await twolink(args);
  if (r.code !== 0) throw new Error(`twolink ${args.join(' ')} exited ${r.code}: ${r.err}`);
  return r.last;
}

/**
 * Real time (the CLI, --rt by default): `twolink teach --mock --hand circle`, then `twolink replay
 * --json` at 1x and 2x; and a quick swing taught by a hand file (the line there and back twice in
 * 2 s), whose 2x the motors cannot follow: the replay is refused before anything moves, with the time
 * and the joint (exit code 2).
 */
async function realtimeTeach(
  rig: Rig,
): Promise<{ replay: Record<'x1' | 'x2', ReplayReport>; swing: { x1: ReplayReport; x2Code: number | null; x2Refusal: string } }> {
  const dir = mkdtempSync(join(tmpdir(), 'twolink-bench-teach-'));
  const out = join(dir, 'demo.json');
  await ok(['teach', '--rig', RIG, '--mock', '--hand', 'circle', '--out', out, '--json']);
  const replay = async (file: string, speed: number): Promise<ReplayReport> =>
    (JSON.parse(await ok(['replay', file, '--rig', RIG, '--mock', '--speed', String(speed), '--json'])) as { replay: ReplayReport }).replay;
  const x1 = await replay(out, 1);
  const x2 = await replay(out, 2);
  const arm = rig.arm as TwoLinkParams;
  const R = arm.L1 + arm.L2;
  const a = [0.25 * R, -0.65 * R];
  const b = [0.65 * R, -0.1 * R];
  const hand = join(dir, 'swing.json');
  writeFileSync(hand, JSON.stringify({ points: [a, b, a, b, a], seconds: 2 }));
  const swing = join(dir, 'swing-demo.json');
  await ok(['teach', '--rig', RIG, '--mock', '--hand', hand, '--out', swing, '--json']);
  const s1 = await replay(swing, 1);
  const refused = await twolink(['replay', swing, '--rig', RIG, '--mock', '--speed', '2', '--json']);
  return { replay: { x1, x2 }, swing: { x1: s1, x2Code: refused.code, x2Refusal: refused.err.replace(/^twolink: /, '') } };
}

export async function benchFloat(rt: boolean, rtPoses: number): Promise<BenchResult> {
  const rig = loadRig(RIG);
  const f = (a: number[]): string => a.map((v) => v.toFixed(3)).join(', ');
  const v = await virtualFloat(rig);
  const teach = await virtualTeach(rig);
  const rows: [string, string, string][] = [
    ['drift, 20 poses, 2 s (virtual)', `${f(v.drift)} deg`, "worst per joint, the plant's angles (target <= 0.5)"],
    ['enter float (virtual)', `${f(v.enter)} deg`, 'worst of 20 poses over 1.5 s (target <= 0.2)'],
    ['leave float (virtual)', `${f(v.leave)} deg`, 'worst of 20 poses over 1.5 s (target <= 0.2)'],
    ...teach.rows,
  ];
  const figures: BenchResult['figures'] = {
    virtualDriftDeg: v.drift,
    virtualEnterDeg: v.enter,
    virtualLeaveDeg: v.leave,
    ...teach.figures,
  };
  if (rt) {
    const d = await realtimeDrift(rig, rtPoses);
    const r = await realtimeTeach(rig);
    const load = `load ${load1().toFixed(2)}`;
    rows.push([
      `drift, ${rtPoses} poses, 2 s (real time)`,
      `${f(d.drift)} deg`,
      'worst per joint, the encoders averaged over 50 ms (a count: 0.075 / 0.15 deg)',
    ]);
    rows.push([`enter float, ${rtPoses} poses (real time)`, `${f(d.enter)} deg`, 'the encoders averaged over 50 ms, over 1.5 s']);
    rows.push([`leave float, ${rtPoses} poses (real time)`, `${f(d.leave)} deg`, 'the encoders averaged over 50 ms, over 1.5 s']);
    for (const [k, rep] of [
      ['x1', r.replay.x1],
      ['x2', r.replay.x2],
      ['x1 of the quick swing', r.swing.x1],
    ] as const) {
      rows.push([
        `replay ${k} (real time, CLI)`,
        `RMS ${f(rep.rmsDeg)} deg; ${rep.endpointRmsMm.toFixed(2)} mm`,
        `max ${f(rep.maxDeg)} deg; ${rep.endpointMaxMm.toFixed(2)} mm; mock (16U2, ${rig.control.rateHz} Hz), --rt, ${load}`,
      ]);
    }
    rows.push(['replay x2 of the quick swing (real time, CLI)', `exit ${r.swing.x2Code}`, `refused beforehand: ${r.swing.x2Refusal}`]);
    Object.assign(figures, {
      realtimeDriftDeg: d.drift,
      realtimeEnterDeg: d.enter,
      realtimeLeaveDeg: d.leave,
      realtimeReplayRmsDeg: r.replay.x1.rmsDeg,
      realtimeReplayMaxDeg: r.replay.x1.maxDeg,
      realtimeReplayEndpointRmsMm: r.replay.x1.endpointRmsMm,
      realtimeReplayEndpointMaxMm: r.replay.x1.endpointMaxMm,
      realtimeReplayX2RmsDeg: r.replay.x2.rmsDeg,
      realtimeReplayX2MaxDeg: r.replay.x2.maxDeg,
      realtimeReplayX2EndpointRmsMm: r.replay.x2.endpointRmsMm,
      realtimeReplayX2EndpointMaxMm: r.replay.x2.endpointMaxMm,
      realtimeSwingX2Refusal: r.swing.x2Refusal,
    });
  }
  return section('float, teach, replay (mock rig, identified model)', rows, figures);
}
