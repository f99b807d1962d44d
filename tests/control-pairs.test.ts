// The edges where control/ reads per-joint arrays as pairs (issue 22 item 7): a wrong length is said
// (a PairLengthError naming what, or the impedance law's failure value inside the loop), never NaN.
import { describe, expect, it } from 'vitest';
import { loadRig } from '../src/config/load.js';
import { controllerModel } from '../src/control/controller-model.js';
import { describeEvent } from '../src/control/events.js';
import { ImpedanceLaw, loopPassivity } from '../src/control/impedance.js';
import { describeStop } from '../src/control/stop.js';
import { PairLengthError } from '../src/model/types.js';

const rig = loadRig('rigs/mock-arm.json');
const D = Math.PI / 180;

describe('control: per-joint pairs at the edges', () => {
  it("the controller model's Jacobian checks the rows of its out (x and y) and, for two links, their length", () => {
    const m = controllerModel(rig);
    expect(
      m.jacobian(
        [0.3, -0.7],
        [
          [0, 0],
          [0, 0],
        ],
      )[1],
    ).toHaveLength(2);
    expect(() => m.jacobian([0.3, -0.7], [[0, 0]])).toThrow(PairLengthError);
    expect(() => m.jacobianDot([0.3, -0.7], [1, 0], [[0, 0], [0]])).toThrow("the Jacobian's out's row 2 has 1 entry");
    const one = controllerModel({ ...rig, arm: { L1: 0.3, d1: 0.15, m1: 0.5, I1: 0.004, g: 9.81 }, motors: rig.motors.slice(0, 1) });
    expect(one.jacobian([0.3], [[0], [0]])).toEqual([[-0.3 * Math.sin(0.3)], [0.3 * Math.cos(0.3)]]);
    expect(() => one.jacobian([0.3], [[0]])).toThrow("the Jacobian's out rows has 1 entry");
  });

  it('the impedance law given a one-joint sample fails with a reason (a value, no throw in the loop) and writes nothing', () => {
    const law = new ImpedanceLaw(rig, { space: 'endpoint', stiffness: 100, dampingRatio: 1 }, loopPassivity(rig, true, 500));
    const out = [7];
    const r = law.step({ t: 0, q: [0.1], qd: [0], qDesired: [0.1], qdDesired: [0], qddDesired: [0] }, 0.002, out);
    expect(r).toEqual({ ok: false, reason: 'impedance: the sample or the output is not of a two-link arm' });
    expect(out).toEqual([7]);
    const pose = [-60 * D, 90 * D];
    expect(law.step({ t: 0, q: pose, qd: [0, 0], qDesired: pose, qdDesired: [0, 0], qddDesired: [0, 0] }, 0.002, [0, 0, 0]).ok).toBe(false);
    expect(law.step({ t: 0, q: pose, qd: [0, 0], qDesired: pose, qdDesired: [0, 0], qddDesired: [0, 0] }, 0.002, [0, 0])).toEqual({
      ok: true,
    });
  });

  it('the joints of a twin alarm are named as before: "joint 2", "joints 1 and 2"', () => {
    expect(describeEvent({ kind: 'alarm', t: 1, joints: [1] })).toBe('[1.00 s] TWIN ALARM: joint 2 diverges from the model');
    expect(describeEvent({ kind: 'alarm', t: 1, joints: [0, 1] })).toBe('[1.00 s] TWIN ALARM: joints 1 and 2 diverge from the model');
    expect(describeStop({ kind: 'fault', fault: { kind: 'twin-alarm', joints: [0] } })).toContain(
      'twin-alarm joint 1 diverges from the model',
    );
  });
});
