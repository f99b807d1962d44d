// Components take their part of the rig (src/config/parts.ts), not the whole rig file: a controller,
// a twin and the feasibility check built from only the fields of their part behave exactly as when
// they are given the whole resolved rig.
import { describe, expect, it } from 'vitest';
import { loadRig } from '../src/config/load.js';
import type { ControllerPart, FeasibilityPart, TwinPart } from '../src/config/parts.js';
import { Controller } from '../src/control/controller.js';
import { checkFeasible } from '../src/control/feasibility.js';
import { Twin } from '../src/control/twin.js';
import { builtinPath } from '../src/model/builtins.js';
import { buildPath } from '../src/model/trajectory.js';

const rig = loadRig('rigs/mock-arm.json');
const arm = { joints: rig.joints, arm: rig.arm, friction: rig.friction, motors: rig.motors, supplyV: rig.supplyV };

describe('rig parts', () => {
  it('a controller from its part: the same torques and duties as from the whole rig, over a saturating command', () => {
    const part: ControllerPart = { ...arm, control: rig.control, limits: rig.limits, maxDuty: rig.maxDuty };
    const a = new Controller(rig, 'desired');
    const b = new Controller(part, 'desired');
    let saturated = 0;
    for (let k = 0; k < 50; k++) {
      const s = { t: k * 0.002, q: [-1.2 + 0.02 * k, 0.8], qd: [3, -2], qdd: [40, -30], qddd: [0, 0] };
      const q = [-1.3, 0.9];
      const want = a.update(s, s, q, [0, 0], 0.002, 1).out;
      expect(b.update(s, s, q, [0, 0], 0.002, 1).out).toEqual(want);
      if (want.sat) saturated++;
    }
    expect(saturated).toBeGreaterThan(0);
  });

  it('a twin from its part: the same state, residual and alarms as from the whole rig', () => {
    const part: TwinPart = { ...arm, twin: rig.twin };
    const a = new Twin(rig);
    const b = new Twin(part);
    a.reset([-1.4, 0.5], [0, 0]);
    b.reset([-1.4, 0.5], [0, 0]);
    for (let k = 0; k < 200; k++) {
      const qm = [-1.4 + 0.001 * k, 0.5 - 0.002 * k];
      expect(b.step([0.3, -0.2], 0.002, qm, [0.5, -1])).toBe(a.step([0.3, -0.2], 0.002, qm, [0.5, -1]));
      expect(b.residual).toEqual(a.residual);
    }
  });

  it('the feasibility check from its part: passes and refuses the same trajectories with the same words', () => {
    const part: FeasibilityPart = { ...arm, limits: rig.limits, maxDuty: rig.maxDuty };
    const reach = builtinPath(rig.arm, 'reach')!;
    const traj = buildPath(rig.arm, reach.start, reach.steps);
    expect(() => checkFeasible(part, traj)).not.toThrow();
    const weak = { ...part, limits: part.limits.map((l) => ({ ...l, maxTorque: 0.05 })) };
    const whole = { ...rig, limits: weak.limits };
    let words = '';
    try {
      checkFeasible(whole, traj);
    } catch (e) {
      words = (e as Error).message;
    }
    expect(words).toMatch(/torque/);
    expect(() => checkFeasible(weak, traj)).toThrow(words);
  });
});
