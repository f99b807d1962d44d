// The measured breakaway duty in the run's control (issue 33 items 2-3): `twolink setup` writes the duty
// that starts each joint from rest per direction (motors[j].breakawayDuty [ccw, cw]); the tracking law
// kicks a joint at rest with the torque that duty gives through the declared bridge, so the duty that
// reaches the board is the measured one, per direction. A declared friction.breakawayNm comes first.
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { parseRigFile } from '../src/config/rig.js';
import { resolveRig, type Rig } from '../src/config/load.js';
import { createActuatedArmModel, motorDuty, motorTorque } from '../src/model/actuated.js';
import { breakawayTorques } from '../src/control/breakaway.js';
import { TrackingLaw } from '../src/control/tracking-law.js';
import type { LawInput } from '../src/control/law.js';
import { driverEffectiveDuty, driverLostDuty } from '../src/model/driver.js';
import { builtinPath } from '../src/model/builtins.js';
import { virtualRun } from './helpers/virtual-run.js';

/** What setup measured on the flawed mock (docs/setup-flaws.md, tests/setup-flaws.test.ts). */
const MEASURED: [number, number][] = [
  [0.075, 0.07],
  [0.07, 0.055],
];

/** rigs/mock-arm-flawed.json, edited. */
function flawed(
  edit: (f: {
    motors: { breakawayDuty?: number[] }[];
    friction?: unknown;
    plant: { coulomb: number[]; breakawayNm: number[]; backlashDeg?: number[] };
  }) => void,
): Rig {
  const f = JSON.parse(readFileSync('rigs/mock-arm-flawed.json', 'utf8')) as Parameters<typeof edit>[0];
  edit(f);
  return resolveRig(parseRigFile(f, 'flawed (test)'), 'flawed (test)');
}
const withDuty = (f: { motors: { breakawayDuty?: number[] }[] }): void => f.motors.forEach((m, j) => (m.breakawayDuty = MEASURED[j]!));

/** A sample at rest with joint 1 `e1` [rad] and joint 2 `e2` short of its plan, the feedforward off. */
function restInput(e: [number, number]): LawInput {
  const q = [-Math.PI / 2, 0];
  return {
    sample: { t: 0, q, qd: [0, 0], qDesired: [q[0]! + e[0], q[1]! + e[1]], qdDesired: [0, 0], qddDesired: [0, 0] },
    ahead: { t: 0, q: q.slice(), qd: [0, 0], qdd: [0, 0], qddd: [0, 0] },
    dtS: 0.002,
    periodS: 0.002,
    disturbance: undefined,
    saturation: { sign: [0, 0], excess: [0, 0] },
  };
}

/** The PID's torque plus any kick for error `e`, feedforward off (the first sample after a reset). */
function feedback(rig: Rig, e: [number, number]): number[] {
  const law = new TrackingLaw(rig, 'none', createActuatedArmModel(rig));
  const ff = [0, 0];
  const fb = [0, 0];
  law.torques(restInput(e), ff, fb);
  return fb;
}

describe('the breakaway torques the law kicks with', () => {
  it('from the measured duty per direction: through the declared TB6612 the map gives back the measured duty at rest', () => {
    const rig = flawed(withDuty);
    const model = createActuatedArmModel(rig);
    const { nm, source } = breakawayTorques(model);
    expect(source).toEqual(['measured-duty', 'measured-duty']);
    // The bridge's lost duty (its dead time) is in the measured duty: taken out for the torque, put back by the map.
    const lost = driverLostDuty(model.motors[0]!.driver!);
    expect(lost).toBeGreaterThan(0);
    for (let j = 0; j < 2; j++) {
      const [ccw, cw] = nm[j]!;
      expect(ccw).toBeGreaterThan(0);
      expect(cw).toBeGreaterThan(0);
      // To the PWM's step (8 bit: the bridge model rounds the duty it is given).
      expect(Math.abs(motorDuty(model, j, ccw, 0) - MEASURED[j]![0])).toBeLessThanOrEqual(0.5 / 255 + 1e-12);
      expect(Math.abs(motorDuty(model, j, -cw, 0) + MEASURED[j]![1])).toBeLessThanOrEqual(0.5 / 255 + 1e-12);
      // Less than the duty's torque on an ideal bridge: the dead duty starts nothing.
      expect(ccw).toBeLessThan(
        motorTorque({ ...model, motors: model.motors.map((m) => ({ ...m, driver: undefined })) }, j, MEASURED[j]![0], 0),
      );
    }
    // Per direction: joint 2's ccw and cw differ as measured.
    const d = model.motors[1]!.driver!;
    expect(nm[1]![0] / nm[1]![1]).toBeCloseTo(driverEffectiveDuty(d, 0.07) / driverEffectiveDuty(d, 0.055), 9);
    expect(nm[1]![0]).toBeGreaterThan(1.2 * nm[1]![1]);
  });

  it('a declared friction.breakawayNm comes first (both ways); with neither, none', () => {
    const declared = breakawayTorques(
      createActuatedArmModel(
        flawed((f) => {
          withDuty(f);
          f.friction = { coulomb: [0.06, 0.03], breakawayNm: [0.24, 0.12] };
        }),
      ),
    );
    expect(declared.source).toEqual(['friction', 'friction']);
    expect(declared.nm[0]![0]).toBeCloseTo(0.24, 12);
    expect(declared.nm[1]).toEqual([declared.nm[1]![0], declared.nm[1]![0]]);
    const none = breakawayTorques(createActuatedArmModel(flawed(() => undefined)));
    expect(none).toEqual({ nm: [0, 0].map(() => [0, 0]), source: ['none', 'none'] });
  });

  it("the law at rest: an error past two encoder counts adds the measured direction's torque, in full at four; within two counts nothing", () => {
    const plain = flawed(() => undefined);
    const rig = flawed(withDuty);
    const { nm } = breakawayTorques(createActuatedArmModel(rig));
    const count = [(2 * Math.PI) / 4800, (2 * Math.PI) / 2400];
    const kick = (e: [number, number]): number[] => feedback(rig, e).map((v, j) => v - feedback(plain, e)[j]!);
    const full = kick([4 * count[0]!, -4 * count[1]!]);
    expect(full[0]).toBeCloseTo(nm[0]![0], 12);
    expect(full[1]).toBeCloseTo(-nm[1]![1], 12);
    const back = kick([-4 * count[0]!, 4 * count[1]!]);
    expect(back[0]).toBeCloseTo(-nm[0]![1], 12);
    expect(back[1]).toBeCloseTo(nm[1]![0], 12);
    expect(kick([1.5 * count[0]!, -1.5 * count[1]!])).toEqual([0, 0]);
  });
});

describe('the reach on the mock with stiction (virtual time)', () => {
  it('breakaway 4x Coulomb, TB6612, no play: with the measured duty the reach is done and tracks within 0.1 deg of the run without it in every phase', async () => {
    const noPlay = (f: { plant: { backlashDeg?: number[] } }): void => void (f.plant.backlashDeg = [0, 0]);
    const without = await virtualRun(flawed(noPlay), [builtinPath(flawed(noPlay).arm, 'reach')!], { keepRows: false });
    const rig = flawed((f) => {
      noPlay(f);
      withDuty(f);
    });
    const withMeasured = await virtualRun(rig, [builtinPath(rig.arm, 'reach')!], { keepRows: false });
    expect(without.summary.stop).toEqual({ kind: 'done' });
    expect(withMeasured.summary.stop).toEqual({ kind: 'done' });
    for (const k of ['approach', 'trajectory', 'park'] as const) {
      const a = without.summary.phases![k]!.link!.rmsDeg;
      const b = withMeasured.summary.phases![k]!.link!.rmsDeg;
      for (let j = 0; j < 2; j++) expect(b[j]!).toBeLessThan(a[j]! + 0.1);
    }
    for (const v of withMeasured.summary.reversals!.perS) expect(v).toBeLessThan(10);
  });
});
