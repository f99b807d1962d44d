// The figures that say how the arm followed its plan: tracking per phase (approach, trajectory, way
// back), where the encoder sits, and the duty reversals per joint while it moves
// (src/control/reversals.ts: the definition), on synthetic samples and on a virtual-time reach.
import { describe, expect, it } from 'vitest';
import { DUTY_FLOOR, DutyReversals, MOTION_RAD_S, ReversalWatch, WARN_REVERSALS_PER_S } from '../src/control/reversals.js';
import { loadRig } from '../src/config/load.js';
import { builtinPath } from '../src/model/builtins.js';
import { RunStats } from '../src/run/stats.js';
import { F, LOOP_STATES, PHASES, TICK_WIDTH } from '../src/telemetry/tick.js';
import { phaseLines } from '../src/cli/run-command.js';
import { virtualRun } from './helpers/virtual-run.js';
import { describeEvent } from '../src/control/events.js';

const moving = [2 * MOTION_RAD_S, 2 * MOTION_RAD_S];

describe('duty reversals', () => {
  it('counts a sign change of the duty while the joint moves, per joint, over the time in motion', () => {
    const r = new DutyReversals(2);
    // Joint 1 flips 0.2 -> -0.2 -> 0.2 (two reversals); joint 2 stays positive.
    const duties = [
      [0.2, 0.1],
      [-0.2, 0.1],
      [0.2, 0.1],
      [0.2, 0.1],
    ];
    const masks = duties.map((d, k) => r.add(k * 0.01, true, moving, d));
    expect(masks).toEqual([0, 1, 1, 0]);
    expect(r.count).toEqual([2, 0]);
    expect(r.movingS[0]).toBeCloseTo(0.03, 12);
    expect(r.perS()[0]).toBeCloseTo(2 / 0.03, 9);
    expect(r.perS()[1]).toBe(0);
  });

  it('ignores duties under the floor, the joints at rest, and a reversal across a rest', () => {
    const r = new DutyReversals(1);
    const small = DUTY_FLOOR / 2;
    r.add(0, true, moving, [0.3]);
    r.add(0.01, true, moving, [-small]); // under the floor: no sign
    r.add(0.02, true, moving, [0.3]);
    expect(r.count).toEqual([0]);
    r.add(0.03, true, [0], [-0.3]); // the plan at rest: the stretch ends
    r.add(0.04, true, moving, [-0.3]); // a new stretch: its first duty has nothing to reverse
    r.add(0.05, false, moving, [0.3]); // not tracking: not in motion
    expect(r.count).toEqual([0]);
    // Time in motion: 0..0.02 and the single sample at 0.04 (no interval).
    expect(r.movingS[0]).toBeCloseTo(0.02, 12);
  });

  it('the watch warns once when a joint reverses faster than the threshold over its window, and again only after it calmed down', () => {
    // 20 reversals/s, over the threshold.
    expect(20).toBeGreaterThan(WARN_REVERSALS_PER_S);
    const w = new ReversalWatch(2);
    const rises: number[][] = [];
    // Joint 2 reverses every 0.05 s (20/s) for 2 s, then stops reversing for 2 s, then again.
    for (let k = 0; k <= 600; k++) {
      const t = k * 0.01;
      const burst = t < 2 || t >= 4;
      const rose = w.update(t, burst && k % 5 === 0 ? 2 : 0);
      if (rose) rises.push([t, ...rose]);
    }
    expect(rises.map((r) => r.slice(1))).toEqual([[1], [1]]);
    expect(rises[0]![0]!).toBeLessThan(1);
    expect(rises[1]![0]!).toBeGreaterThanOrEqual(4);
    expect(describeEvent({ kind: 'reversals', joints: [1], perS: [0, 6], feedHz: [6], t: 1.5 })).toBe(
      "[1.50 s] WARNING: the duty of joint 2 reverses 6 times a second while moving: a gearbox with play rattles (declare its play, encoders[].backlashDeg); the disturbance observer's feed lowered to 6 Hz",
    );
  });
});

/** A row of the tick with what the figures read. */
function row(phase: (typeof PHASES)[number], qDes: number[], q: number[]): Float64Array {
  const r = new Float64Array(TICK_WIDTH);
  r[F.state] = LOOP_STATES.indexOf('track');
  r[F.phase] = PHASES.indexOf(phase);
  r[F.qDes0] = qDes[0]!;
  r[F.qDes1] = qDes[1]!;
  r[F.q0] = q[0]!;
  r[F.q1] = q[1]!;
  return r;
}

describe('tracking per phase', () => {
  it('gives each phase its own RMS and max, and the link figures from the column it is told', () => {
    const s = new RunStats(2, 500).encoders([{ side: 'motor' }, {}]);
    const d = Math.PI / 180;
    s.add(row('approach', [0, 0], [1 * d, -2 * d]));
    s.add(row('approach', [0, 0], [-1 * d, 0]));
    s.add(row('track', [0, 0], [0.5 * d, 0.5 * d]));
    const sum = s.summary({ kind: 'done' });
    expect(sum.encoderSide).toEqual(['motor', 'motor']);
    expect(sum.phases!.approach!.samples).toBe(2);
    expect(sum.phases!.approach!.encoder.rmsDeg[0]).toBeCloseTo(1, 9);
    expect(sum.phases!.approach!.encoder.rmsDeg[1]).toBeCloseTo(Math.sqrt(2), 9);
    expect(sum.phases!.approach!.encoder.maxDeg).toEqual([expect.closeTo(1, 9), expect.closeTo(2, 9)]);
    expect(sum.phases!.trajectory!.encoder.rmsDeg[0]).toBeCloseTo(0.5, 9);
    expect(sum.phases!.park).toBeUndefined();
    expect(sum.phases!.approach!.link).toBeUndefined();
    // The same rows scored against another column (here the plan itself: no error).
    const l = new RunStats(2, 500);
    l.scoreLink(F.qDes0);
    l.add(row('park', [0.1, 0.2], [0.1 + d, 0.2]));
    const ls = l.summary({ kind: 'done' });
    expect(ls.phases!.park!.link!.rmsDeg).toEqual([0, 0]);
    expect(ls.phases!.park!.encoder.rmsDeg[0]).toBeCloseTo(1, 9);
  });

  it("a virtual-time reach reports all three phases, the trajectory's equal to the summary's tracking, and the text says where the encoder sits", async () => {
    const rig = loadRig('rigs/mock-arm.json');
    const r = await virtualRun(rig, [builtinPath(rig.arm, 'reach')!], { keepRows: false });
    const s = r.summary;
    expect(s.stop).toEqual({ kind: 'done' });
    expect(s.phases!.trajectory!.encoder.rmsDeg).toEqual(s.tracking.rmsDeg);
    expect(s.phases!.trajectory!.samples).toBe(s.tracking.samples);
    for (const k of ['approach', 'park'] as const) {
      expect(s.phases![k]!.samples).toBeGreaterThan(100);
      for (const v of s.phases![k]!.encoder.rmsDeg) expect(v).toBeGreaterThan(0);
    }
    expect(s.encoderSide).toEqual(['motor', 'motor']);
    // Both joints move for most of the 4.3 s reach (approach, trajectory, way back).
    for (const m of s.reversals!.movingS) expect(m).toBeGreaterThan(3);
    const text = phaseLines(s).join('\n');
    expect(text).toMatch(/^tracking per phase, encoder \(motor side\), RMS \/ max \[deg\]: approach .*; trajectory .*; way back /m);
    expect(text).toMatch(/^duty reversals per second in motion: /m);
  });
});
