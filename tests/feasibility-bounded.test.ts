// A check's cost does not grow without bound with a trajectory's length (issue 36's figures run: the
// inputs bench's rig-file fuzz hung in checkFromPose on the loop's thread, a mutated rig whose limits
// made a move last ~forever). Counted in samples the check takes, not in time.
import { describe, expect, it } from 'vitest';
import { loadRig } from '../src/config/load.js';
import { checkFeasible, checkFromPose, FeasibilityError, FROM_POSE_SAMPLES, MAX_SAMPLES } from '../src/control/feasibility.js';
import { createActuatedArmModel } from '../src/model/actuated.js';
import type { Trajectory, TrajectorySample } from '../src/model/trajectory.js';

const rig = loadRig('rigs/mock-arm.json');

/** The arm held still at [-90, 0] deg (hanging: no torque needed) for `duration` s, counting its samples. */
function still(duration: number): Trajectory & { calls: number } {
  const t = {
    joints: 2,
    duration,
    description: 'held still',
    calls: 0,
    sample(time: number, out?: TrajectorySample): TrajectorySample {
      t.calls++;
      const s = out ?? { t: 0, q: [0, 0], qd: [0, 0], qdd: [0, 0], qddd: [0, 0] };
      s.t = time;
      s.q[0] = -Math.PI / 2;
      s.q[1] = 0;
      for (const k of ['qd', 'qdd', 'qddd'] as const) s[k].fill(0);
      return s;
    },
  };
  return t;
}

describe('the feasibility checks take a bounded number of samples', () => {
  it('a 1e12 s trajectory: checkFeasible samples it at most MAX_SAMPLES + 1 times and finds it feasible', () => {
    const traj = still(1e12);
    expect(() => checkFeasible(rig, traj)).not.toThrow();
    expect(traj.calls).toBeGreaterThan(1000);
    expect(traj.calls).toBeLessThanOrEqual(MAX_SAMPLES + 1);
  });

  it('a 1e12 s approach and way back: checkFromPose samples each at most FROM_POSE_SAMPLES + 1 times', () => {
    const traj = still(3e12);
    checkFromPose(rig, { traj, approachEnd: 1e12, trackEnd: 2e12 }, 'long', [-Math.PI / 2, 0], true, createActuatedArmModel(rig));
    expect(traj.calls).toBeGreaterThan(2 * 100);
    expect(traj.calls).toBeLessThanOrEqual(2 * (FROM_POSE_SAMPLES + 1));
  });

  it('a trajectory whose length is not finite is a FeasibilityError, not a loop', () => {
    const traj = still(Number.POSITIVE_INFINITY);
    expect(() => checkFeasible(rig, traj)).toThrow(FeasibilityError);
    expect(() => checkFeasible(rig, traj)).toThrow(/length is not a finite number/);
    expect(traj.calls).toBe(0);
  });
});
