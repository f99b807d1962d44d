/**
 * The control loop's timing in real time (the worker, RealPacer) over 10 s at 500 Hz and 1 kHz, with
 * the in-process mock rig and with the mock rig on a pty in its own process; and the tracking of the
 * seed reach with and without feedforward (virtual time: the same physics whatever the machine does).
 */
import { loadRig } from '../config/load.js';
import { Session } from '../control/session.js';
import { virtualRun } from '../control/virtual.js';
import { builtinNames, builtinPath } from '../model/builtins.js';
import type { Target } from '../transport/open.js';
import { startRigProcess } from './link.js';
import { section, type BenchResult } from './report.js';

async function timed(rateHz: number, target: Target, seconds: number): Promise<{ p50: number; p99: number; max: number; overruns: number; cpu: number; lost: number; ticks: number }> {
  const rig = loadRig('rigs/mock-arm.json');
  const paths = builtinNames(rig.arm).map((n) => builtinPath(rig.arm, n)!);
  const s = new Session({ rig, target, paths, cycle: true, park: true, feedforward: 'desired', rateHz, faults: [], maxSeconds: seconds });
  const r = await s.run();
  if (r.error) throw new Error(r.error.message);
  const m = r.summary;
  return { p50: m.period.p50Us, p99: m.period.p99Us, max: m.period.maxUs, overruns: m.overruns, cpu: m.cpu ?? 0, lost: m.link.lost, ticks: m.ticks };
}

export async function benchLoop(seconds = 10): Promise<BenchResult> {
  const rows: [string, string, string][] = [];
  const figures: Record<string, number> = {};
  const fmt = (x: Awaited<ReturnType<typeof timed>>): string => `p50 ${x.p50} / p99 ${x.p99} / max ${x.max} us`;
  for (const hz of [500, 1000]) {
    const x = await timed(hz, { kind: 'mock' }, seconds);
    rows.push([`${hz} Hz, in-process mock rig`, fmt(x), `overruns ${x.overruns}, CPU ${(x.cpu * 100).toFixed(0)}% of a core, ${x.ticks} ticks${hz === 1000 ? ' (target p99 < 200 us)' : ''}`]);
    figures[`mock${hz}P99Us`] = x.p99;
  }
  const proc = await startRigProcess('rigs/mock-arm.json');
  try {
    for (const hz of [500, 1000]) {
      const x = await timed(hz, { kind: 'port', path: proc.path }, seconds);
      rows.push([`${hz} Hz, mock rig on a pty`, fmt(x), `overruns ${x.overruns}, CPU ${(x.cpu * 100).toFixed(0)}%, lost frames ${x.lost}`]);
      figures[`pty${hz}P99Us`] = x.p99;
    }
  } finally {
    proc.stop();
  }
  const rig = loadRig('rigs/mock-arm.json');
  const reach = builtinPath(rig.arm, 'reach')!;
  for (const ff of ['desired', 'measured', 'none'] as const) {
    const r = await virtualRun(rig, [reach], { feedforward: ff, keepRows: false });
    const t = r.summary.tracking;
    rows.push([
      `seed reach, ${ff === 'none' ? 'PID alone' : `feedforward (${ff}) + PID`}`,
      `RMS ${t.rmsDeg.map((v) => v.toFixed(3)).join(' / ')} deg`,
      `max ${t.maxDeg.map((v) => v.toFixed(3)).join(' / ')} deg (virtual time, 500 Hz, mismatched plant)`,
    ]);
    figures[`reachRms_${ff}_0`] = t.rmsDeg[0]!;
    figures[`reachRms_${ff}_1`] = t.rmsDeg[1]!;
  }
  return section('Control loop (real time, worker thread; tracking in virtual time)', rows, figures);
}
