// Teach and replay on the mock rig in virtual time: the arm floats (src/control/float.ts) while the
// scripted hand (src/mock/hand.ts) leads it along a 10 s circle; the recording becomes a trajectory
// file (src/identify/taught.ts) that `run --traj` reads back, and the replay follows it with
// feedforward + PID within 0.3 deg per joint and 2 mm at the endpoint (RMS), also at twice the speed
// when the motors allow it (else refused beforehand with the time and the joint).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadRig } from '../src/config/load.js';
import { loadTrajectoryFile, taughtOrigin } from '../src/config/trajectory-file.js';
import { rigFileSha256 } from '../src/config/rig-hash.js';
import { checkFeasible, FeasibilityError } from '../src/control/feasibility.js';
import { FloatLaw, floatSettings } from '../src/control/float.js';
import { expectSpeedCapHeld } from './helpers/float-speed.js';
import { buildTaught, type TeachRecording } from '../src/identify/taught.js';
import { HAND_DAMPING, HAND_STIFFNESS, handPath, handPathSpan } from '../src/mock/hand.js';
import { scalePath, type PathSpec } from '../src/model/builtins.js';
import { buildPath } from '../src/model/trajectory.js';
import type { TwoLinkParams } from '../src/model/types.js';
import type { StopReason } from '../src/control/stop.js';
import { virtualRun } from '../src/run/virtual.js';
import { F } from '../src/telemetry/tick.js';
import { hangGuardMs } from './helpers/hang-guard.js';

const rig = loadRig('rigs/mock-arm-identified.json');
const dir = mkdtempSync(join(tmpdir(), 'twolink-teach-'));

/** Floats with the hand on from 1 s along `path`; the recording spans the hand's hold and half a second after. */
async function teach(path: string): Promise<{ rec: TeachRecording; stop: StopReason; travelled: number }> {
  const hand = handPath(path, rig.arm as TwoLinkParams);
  const at = 1;
  // the recording spans the hand's path (after it has led the arm to the start)
  const span = handPathSpan(hand);
  const from = at + span.fromS;
  const end = at + span.toS;
  const hold: PathSpec = { name: 'hold', description: 'hold where the arm is', start: {}, steps: [{ kind: 'hold', duration: end + 1 }] };
  const law = new FloatLaw(rig, floatSettings(rig));
  const rec: TeachRecording = { t: [], q: [], marks: [] };
  let travelled = 0;
  const run = await virtualRun(rig, [hold], {
    controller: law,
    park: false,
    maxSeconds: end + 5,
    injections: [{ name: 'hand', value: path, at }],
    onTick: (core) => {
      const t = core.row[F.t]!;
      if (t < from || t > end) return;
      const q = [core.row[F.q0]!, core.row[F.q1]!];
      if (rec.q.length) travelled = Math.max(travelled, Math.abs(q[0]! - rec.q[0]![0]!));
      rec.t.push(t);
      rec.q.push(q);
      // a waypoint at the hand's half-way point
      if (rec.marks.length === 0 && t >= (from + end) / 2) rec.marks.push({ t, label: 'half-way' });
    },
  });
  expectSpeedCapHeld(run.rows, law); // the hand leads the arm in float: within its speed cap + 10 %
  return { rec, stop: run.summary.stop, travelled };
}

describe('the scripted hand', () => {
  it('holds like a human hand (Mussa-Ivaldi et al. 1985: 200-700 N/m)', () => {
    expect(HAND_STIFFNESS).toBe(300);
    expect(HAND_DAMPING).toBe(25);
  });
});

describe('teach with the scripted hand, then replay', () => {
  it(
    'replays the taught circle within 0.3 deg per joint and 2 mm at the endpoint (RMS)',
    async () => {
      const { rec, stop, travelled } = await teach('circle');
      expect(stop).toEqual({ kind: 'done' });
      expect(travelled).toBeGreaterThan(0.3); // the hand moved the arm (joint 1 over 17 deg)
      const taught = buildTaught(rig, rec, { target: 'mock', name: 'circle-taught', rigSha256: rigFileSha256(rig.file) });
      expect(taught.file.waypoints).toHaveLength(1);
      const file = join(dir, 'demo.json');
      writeFileSync(file, `${JSON.stringify(taught.file, null, 1)}\n`);
      const spec = loadTrajectoryFile(file);
      expect(spec.taught).toBe(true);
      // the file says where it was taught, by the rig file's content hash (replay checks it)
      expect(taughtOrigin(file)).toEqual({ rig: rig.file, rigSha256: rigFileSha256(rig.file) });
      const r = await virtualRun(rig, [spec], { maxSeconds: 60 });
      expect(r.summary.stop).toEqual({ kind: 'done' });
      const rep = r.summary.replay!;
      console.log(
        `replay of the taught circle (virtual time, line mock; slowed ${taught.slowdown}x): RMS [${rep.rmsDeg.map((v) => v.toFixed(3)).join(',')}] deg, max [${rep.maxDeg.map((v) => v.toFixed(3)).join(',')}] deg, endpoint RMS ${rep.endpointRmsMm.toFixed(2)} mm, max ${rep.endpointMaxMm.toFixed(2)} mm over ${rep.samples} samples`,
      );
      for (const e of rep.rmsDeg) expect(e).toBeLessThanOrEqual(0.3);
      expect(rep.endpointRmsMm).toBeLessThanOrEqual(2);

      // twice as fast: within what the motors allow, or refused beforehand with the time and the joint
      const fast = scalePath(spec, 2);
      let refused: FeasibilityError | undefined;
      try {
        checkFeasible(rig, buildPath(rig.arm, fast.start, fast.steps), 'x2');
      } catch (e) {
        if (!(e instanceof FeasibilityError)) throw e;
        refused = e;
      }
      if (refused) {
        console.log(`replay at 2x: refused beforehand: ${refused.message}`);
        expect(refused.message).toMatch(/at t = \d+\.\d+ s, joint \d/);
      } else {
        const r2 = await virtualRun(rig, [fast], { maxSeconds: 60 });
        expect(r2.summary.stop).toEqual({ kind: 'done' });
        const rep2 = r2.summary.replay!;
        console.log(
          `replay at 2x (virtual time): RMS [${rep2.rmsDeg.map((v) => v.toFixed(3)).join(',')}] deg, endpoint RMS ${rep2.endpointRmsMm.toFixed(2)} mm, max ${rep2.endpointMaxMm.toFixed(2)} mm`,
        );
        for (const e of rep2.rmsDeg) expect(e).toBeLessThanOrEqual(0.3);
        expect(rep2.endpointRmsMm).toBeLessThanOrEqual(2);
      }
    },
    hangGuardMs(60_000),
  );
});
