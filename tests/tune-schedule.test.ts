// The rig file's gain schedule (control.pid.schedule, written by twolink tune): validated (rising
// elbow angles, one entry per joint, two links only), interpolated linearly and held beyond its
// ends (control/pid.ts scheduledGains), and used by the controller at the measured elbow.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseJsonText, resolveRig } from '../src/config/load.js';
import { parseRigFile } from '../src/config/rig.js';
import { Controller } from '../src/control/controller.js';
import { scheduledGains } from '../src/control/pid.js';

const raw = (): Record<string, any> =>
  parseJsonText(readFileSync('rigs/mock-arm.json', 'utf8'), 'rigs/mock-arm.json') as Record<string, any>;
const SCHEDULE = [
  { elbowDeg: -120, kp: [100, 10], ki: [1000, 100], kd: [3, 0.5] },
  { elbowDeg: 0, kp: [200, 20], ki: [2000, 200], kd: [6, 0.5] },
  { elbowDeg: 120, kp: [100, 10], ki: [1000, 100], kd: [3, 0.5] },
];

describe('gain schedule', () => {
  it('interpolates linearly between points and holds beyond the ends', () => {
    expect(scheduledGains(SCHEDULE, 0, 0)).toEqual({ kp: 200, ki: 2000, kd: 6 });
    expect(scheduledGains(SCHEDULE, 0, 60)).toEqual({ kp: 150, ki: 1500, kd: 4.5 });
    expect(scheduledGains(SCHEDULE, 1, -60).kp).toBeCloseTo(15, 12);
    expect(scheduledGains(SCHEDULE, 0, 170)).toEqual({ kp: 100, ki: 1000, kd: 3 });
    expect(scheduledGains(SCHEDULE, 0, -170)).toEqual({ kp: 100, ki: 1000, kd: 3 });
  });

  it('the controller uses the schedule at the measured elbow, and the file gains without one', () => {
    const f = raw();
    f.control.pid = { schedule: SCHEDULE };
    const rig = resolveRig(parseRigFile(f, 'scheduled.json'), 'scheduled.json');
    const c = new Controller(rig, 'none');
    const s = (q: number[]) => ({ t: 0, q, qd: [0, 0], qdd: [0, 0], qddd: [0, 0] });
    // A 0.01 rad error on joint 1 at elbow 60 deg: kp 150 -> 1.5 N m of P.
    const elbow = Math.PI / 3;
    c.update(s([0.01, elbow]), s([0.01, elbow]), [0, elbow], [0, 0], 0.002, 1);
    expect(c.pid[0]!.p).toBeCloseTo(1.5, 9);
    expect(c.pid[0]!.gains.kp).toBeCloseTo(150, 9);
    const plain = new Controller(resolveRig(parseRigFile(raw(), 'plain.json'), 'plain.json'), 'none');
    const kp = plain.pid[0]!.gains.kp;
    plain.update(s([0.01, elbow]), s([0.01, elbow]), [0, elbow], [0, 0], 0.002, 1);
    expect(plain.pid[0]!.gains.kp).toBe(kp);
  });

  it('refuses a schedule whose elbow angles do not rise, with the field named, and one on a one-link arm', () => {
    const f = raw();
    f.control.pid = { schedule: [SCHEDULE[1], SCHEDULE[0]] };
    expect(() => parseRigFile(f, 'bad.json')).toThrow(/control\.pid\.schedule.*rise|rise.*control\.pid\.schedule/s);
    const g = raw();
    g.control.pid = { schedule: [{ ...SCHEDULE[0], kp: [1] }, SCHEDULE[1]] };
    expect(() => parseRigFile(g, 'bad.json')).toThrow(/schedule/);
  });
});
