/**
 * The tracking of the seed reach with and without feedforward, in VIRTUAL time (the same physics
 * whatever the machine does): the reference the real-time section (realtime.ts) is compared with.
 */
import { loadRig } from '../config/load.js';
import { virtualRun } from '../run/virtual.js';
import { builtinPath } from '../model/builtins.js';
import { section, type BenchResult } from './report.js';
import { asPair, J } from '../model/types.js';

export async function benchLoop(): Promise<BenchResult> {
  const rows: [string, string, string][] = [];
  const figures: Record<string, number> = {};
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
    const rms = asPair(t.rmsDeg, "the reach's tracking.rmsDeg");
    for (const j of J) figures[`reachRms_${ff}_${j}`] = rms[j];
  }
  return section('Control loop tracking (VIRTUAL time, 500 Hz, mismatched plant, 16U2 adapter model)', rows, figures);
}
