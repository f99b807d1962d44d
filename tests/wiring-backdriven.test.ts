// Issue 33.7: a joint driven backwards by the other joint is not called jammed (virtual time). The
// wiring monitor names a joint's trouble for a following-error stop; a joint that turns is never
// "jammed", and one that turns against its motor because the other joint's motion (its inertia and
// Coriolis torque) overcomes that motor is named `back-driven`.
import { describe, expect, it } from 'vitest';
import { loadRig } from '../src/config/load.js';
import { WiringMonitor } from '../src/control/wiring-monitor.js';
import { createActuatedArmModel, computeForwardDynamicsUnderDuty, createActuatedArmData } from '../src/model/actuated.js';
import { describeStop } from '../src/control/stop.js';
import { builtinPath } from '../src/model/builtins.js';
import { parseInjection } from '../src/mock/injections.js';
import { virtualRun } from './helpers/virtual-run.js';

const rig = loadRig('rigs/mock-arm.json');

describe('a back-driven joint is not jammed', () => {
  it("the issue's case: an L298N the rig does not know of on joint 1 (the reach, virtual time): the following-error stop names no jam (it named one before)", async () => {
    const r = loadRig('rigs/mock-arm.json');
    const run = await virtualRun(r, [builtinPath(r.arm, 'reach')!], { injections: [parseInjection('bridge=1:l298n@0', r.joints)] });
    const stop = run.result.core.stop;
    expect(stop).toMatchObject({ kind: 'fault', fault: { kind: 'following-error', joint: 0 } });
    // Joint 1 turns backwards at the stop (gravity and the weak driver, not the other joint): no cause.
    expect(stop?.kind === 'fault' && stop.fault.kind === 'following-error' ? stop.fault.cause : 'none').toBeUndefined();
    expect(describeStop(stop!)).not.toMatch(/jammed/);
  });

  it('joint 2 at +8 % duty, driven backwards by joint 1 accelerating at full duty from hanging (the model integrated at 1 kHz): back-driven, not jammed', () => {
    const model = createActuatedArmModel(rig);
    const data = createActuatedArmData(model);
    const m = new WiringMonitor(model, { encoders: rig.encoders });
    const dt = 0.001;
    const q = [-Math.PI / 2, 0];
    const qd = [0, 0];
    const duty = [1, 0.08];
    const qdd = [0, 0];
    for (let k = 0; k < 120; k++) {
      m.update(dt, duty, q, qd);
      computeForwardDynamicsUnderDuty(model, data, q, qd, duty, qdd);
      for (let i = 0; i < 2; i++) {
        qd[i]! += qdd[i]! * dt;
        q[i]! += qd[i]! * dt;
      }
    }
    // The premise: joint 2 turns against its positive duty (pushed back by joint 1's acceleration).
    expect(qd[1]!).toBeLessThan(-1); // [rad/s]
    expect(m.trouble(1)).toEqual({ cause: 'back-driven' });
    expect(
      describeStop({
        kind: 'fault',
        fault: { kind: 'following-error', joint: 1, errorDeg: 5.1, limitDeg: 5, t: 0.12, cause: 'back-driven' },
      }),
    ).toMatch(/joint 2 is driven backwards by the other joint's motion/);
  });

  it('the same joint 2 held still (a jam: its angle fixed while joint 1 accelerates): still called jammed or stuck', () => {
    const model = createActuatedArmModel(rig);
    const data = createActuatedArmData(model);
    const m = new WiringMonitor(model, { encoders: rig.encoders });
    const dt = 0.001;
    const q = [-Math.PI / 2, 0];
    const qd = [0, 0];
    const duty = [1, 0.08];
    const qdd = [0, 0];
    for (let k = 0; k < 120; k++) {
      m.update(dt, duty, q, qd);
      computeForwardDynamicsUnderDuty(model, data, q, qd, duty, qdd);
      qd[0]! += qdd[0]! * dt; // joint 1 free (its own row is near enough for the monitor), joint 2 fixed
      q[0]! += qd[0]! * dt;
    }
    expect(['jammed', 'stuck']).toContain(m.trouble(1).cause);
  });
});
