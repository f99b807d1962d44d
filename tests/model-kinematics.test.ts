// Kinematics and trajectories: the Jacobian against finite differences of FK, IK of FK is identity for
// both elbows, seed 002's acceleration split and reach, and no NaN at the singular boundaries.
import { describe, expect, it } from 'vitest';
import {
  endpoint,
  endpointAcceleration,
  forwardKinematics,
  fromDownwardVertical,
  inverseKinematics,
  jacobian,
  jacobianDot,
  jointAngles,
  ReachError,
  segmentAngles,
  toDownwardVertical,
} from '../src/model/kinematics.js';
import { buildPath, endpointMinJerk, jointMinJerk, minJerkProfile, TrajectoryError } from '../src/model/trajectory.js';
import type { TwoLinkParams } from '../src/model/types.js';
import { builtinPath } from '../src/model/builtins.js';
import { mulberry32, randomArm } from './helpers/random.js';

const seedArm: TwoLinkParams = { L1: 0.5, L2: 0.5, d1: 0.25, d2: 0.25, m1: 1, m2: 0.8, I1: 0.02, I2: 0.016, g: 9.81 };

describe('forward kinematics and the Jacobian', () => {
  it('J equals central finite differences of the endpoint, and Jdot those of J', () => {
    const rnd = mulberry32(1);
    const h = 1e-6;
    for (let k = 0; k < 300; k++) {
      const p = randomArm(rnd);
      const q = [rnd() * 6 - 3, rnd() * 6 - 3];
      const qd = [rnd() * 4 - 2, rnd() * 4 - 2];
      const J = jacobian(p, q);
      for (let j = 0; j < 2; j++) {
        const qp = q.slice();
        const qm = q.slice();
        qp[j]! += h;
        qm[j]! -= h;
        const ep = endpoint(p, qp);
        const em = endpoint(p, qm);
        for (let i = 0; i < 2; i++) expect(J[i]![j]).toBeCloseTo((ep[i]! - em[i]!) / (2 * h), 7);
      }
      // d/dt J(q(t)) along q(t) = q + qd t
      const Jp = jacobian(p, [q[0]! + qd[0]! * h, q[1]! + qd[1]! * h]);
      const Jm = jacobian(p, [q[0]! - qd[0]! * h, q[1]! - qd[1]! * h]);
      const Jd = jacobianDot(p, q, qd);
      for (let i = 0; i < 2; i++) for (let j = 0; j < 2; j++) expect(Jd[i]![j]).toBeCloseTo((Jp[i]![j]! - Jm[i]![j]!) / (2 * h), 6);
    }
  });

  it('endpoint velocity and acceleration from FK equal J qd and Jdot qd + J qdd; the seed 002 split adds up', () => {
    const rnd = mulberry32(2);
    for (let k = 0; k < 200; k++) {
      const p = randomArm(rnd);
      const q = [rnd() * 6 - 3, rnd() * 6 - 3];
      const qd = [rnd() * 4 - 2, rnd() * 4 - 2];
      const qdd = [rnd() * 4 - 2, rnd() * 4 - 2];
      const fk = forwardKinematics(p, q, qd, qdd);
      const J = jacobian(p, q);
      const Jd = jacobianDot(p, q, qd);
      const acc = endpointAcceleration(p, q, qd, qdd);
      for (let i = 0; i < 2; i++) {
        expect(fk.endpoint.velocity[i]).toBeCloseTo(J[i]![0] * qd[0]! + J[i]![1] * qd[1]!, 12);
        const a = Jd[i]![0] * qd[0]! + Jd[i]![1] * qd[1]! + J[i]![0] * qdd[0]! + J[i]![1] * qdd[1]!;
        expect(fk.endpoint.acceleration[i]).toBeCloseTo(a, 12);
        expect(acc.total[i]).toBeCloseTo(a, 12);
        // tangential = J qdd; centripetal + Coriolis = Jdot qd
        expect(acc.tangential[i]).toBeCloseTo(J[i]![0] * qdd[0]! + J[i]![1] * qdd[1]!, 12);
        expect(acc.centripetal[i]! + acc.coriolis[i]!).toBeCloseTo(Jd[i]![0] * qd[0]! + Jd[i]![1] * qd[1]!, 12);
      }
      // Seed 002: the Coriolis term is -2 L2 (cos, sin)(a1 + a2) a1' a2'.
      expect(acc.coriolis[0]).toBeCloseTo(-2 * p.L2 * Math.cos(q[0]! + q[1]!) * qd[0]! * qd[1]!, 12);
    }
  });

  it('elbow and centres of mass lie where the seed puts them', () => {
    const fk = forwardKinematics(seedArm, [Math.PI / 2, -Math.PI / 2]);
    expect(fk.elbow!.position[0]).toBeCloseTo(0, 12);
    expect(fk.elbow!.position[1]).toBeCloseTo(0.5, 12);
    expect(fk.endpoint.position[0]).toBeCloseTo(0.5, 12);
    expect(fk.endpoint.position[1]).toBeCloseTo(0.5, 12);
    expect(fk.com[1]!.position[0]).toBeCloseTo(0.25, 12);
    expect(fk.com[1]!.position[1]).toBeCloseTo(0.5, 12);
  });
});

describe('inverse kinematics', () => {
  it('IK(FK(q)) = q for both elbows on random arms', () => {
    const rnd = mulberry32(4);
    for (let k = 0; k < 1000; k++) {
      const p = randomArm(rnd);
      const a2 = (0.01 + rnd() * 3.1) * (rnd() < 0.5 ? 1 : -1);
      const q = [rnd() * 6.2 - 3.1, a2];
      const xy = endpoint(p, q);
      const back = inverseKinematics(p, xy, a2 > 0 ? 'down' : 'up');
      expect(back[0]).toBeCloseTo(q[0]!, 8);
      expect(back[1]).toBeCloseTo(q[1]!, 8);
      // the other elbow reaches the same point
      const other = inverseKinematics(p, xy, a2 > 0 ? 'up' : 'down');
      const xy2 = endpoint(p, other);
      expect(xy2[0]).toBeCloseTo(xy[0], 10);
      expect(xy2[1]).toBeCloseTo(xy[1], 10);
    }
  });

  it('a point out of reach is a ReachError that states the reach', () => {
    expect(() => inverseKinematics(seedArm, [1.2, 0.3])).toThrow(ReachError);
    expect(() => inverseKinematics(seedArm, [1.2, 0.3])).toThrow(
      /out of reach.*1\.23693 m from joint 1.*0 m \(\|L1 - L2\|\) to 1 m \(L1 \+ L2\)/,
    );
    const p = { ...seedArm, L2: 0.3 };
    expect(() => inverseKinematics(p, [0.1, 0])).toThrow(/reaches from 0.2 m/);
  });

  it('the straight-elbow boundary gives alpha2 = 0, not NaN, even a hair outside through rounding', () => {
    const q = inverseKinematics(seedArm, [Math.cos(0.3), Math.sin(0.3)]);
    expect(q[0]).toBeCloseTo(0.3, 12);
    expect(q[1]).toBe(0);
    const outside = inverseKinematics(seedArm, [1 + 1e-12, 0]);
    expect(outside.every(Number.isFinite)).toBe(true);
    const folded = inverseKinematics({ ...seedArm, L2: 0.3 }, [0.2, 0]);
    expect(Math.abs(folded[1])).toBeCloseTo(Math.PI, 12);
  });

  it("seed 002's atan picks the wrong branch when L1 + L2 cos a2 < 0; the atan2 form is right", () => {
    const p = { ...seedArm, L1: 0.3 }; // L2 > L1: L1 + L2 cos a2 < 0 for cos a2 < -0.6
    const q = [0.4, 2.5];
    const xy = endpoint(p, q);
    const seedA2 = Math.acos((xy[0] ** 2 + xy[1] ** 2 - 0.09 - 0.25) / (2 * 0.3 * 0.5));
    const seedA1 = Math.atan2(xy[1], xy[0]) - Math.atan((0.5 * Math.sin(seedA2)) / (0.3 + 0.5 * Math.cos(seedA2)));
    const seedXy = endpoint(p, [seedA1, seedA2]);
    expect(Math.hypot(seedXy[0] - xy[0], seedXy[1] - xy[1])).toBeGreaterThan(0.1);
    const ours = inverseKinematics(p, xy);
    expect(ours[0]).toBeCloseTo(0.4, 10);
    expect(ours[1]).toBeCloseTo(2.5, 10);
  });
});

describe('angle conventions', () => {
  it('segment and joint angles convert both ways', () => {
    expect(segmentAngles([0.3, 0.5])).toEqual([0.3, 0.8]);
    const a = jointAngles([0.3, 0.8]);
    expect(a[0]).toBeCloseTo(0.3, 15);
    expect(a[1]).toBeCloseTo(0.5, 15);
  });

  it("seed 001's absolute angles from the downward vertical: 0 is hanging, alpha1 = -90 deg", () => {
    const a = fromDownwardVertical([0, 0]);
    expect(a[0]).toBeCloseTo(-Math.PI / 2, 15);
    expect(a[1]).toBeCloseTo(0, 15);
    // positions agree: seed 001 draws (l1 sin th1, -l1 cos th1)
    const phi = [0.4, -0.7];
    const q = fromDownwardVertical(phi);
    const e = endpoint(seedArm, q);
    expect(e[0]).toBeCloseTo(0.5 * Math.sin(0.4) + 0.5 * Math.sin(-0.7), 12);
    expect(e[1]).toBeCloseTo(-0.5 * Math.cos(0.4) - 0.5 * Math.cos(-0.7), 12);
    const back = toDownwardVertical(q);
    expect(back[0]).toBeCloseTo(0.4, 12);
    expect(back[1]).toBeCloseTo(-0.7, 12);
  });
});

describe('minimum-jerk trajectories', () => {
  it('the quintic profile: s(0) = 0, s(1) = 1, zero rates at both ends, symmetric', () => {
    expect(minJerkProfile(0)).toEqual([0, 0, 0, 0]);
    expect(minJerkProfile(1)).toEqual([1, 0, 0, 0]);
    const mid = minJerkProfile(0.5);
    expect(mid[0]).toBeCloseTo(0.5, 15);
    expect(mid[1]).toBeCloseTo(1.875, 15); // peak velocity 15/8 of the mean
    expect(mid[2]).toBeCloseTo(0, 15);
  });

  it('joint-space rates equal finite differences of the positions', () => {
    const tr = jointMinJerk(seedArm, [0.1, -0.4], [1.2, 0.9], 1.3);
    const h = 1e-5;
    for (const t of [0.1, 0.4, 0.65, 1.0, 1.2]) {
      const s = tr.sample(t);
      const a = tr.sample(t + h);
      const b = tr.sample(t - h);
      for (let i = 0; i < 2; i++) {
        expect(s.qd[i]).toBeCloseTo((a.q[i]! - b.q[i]!) / (2 * h), 6);
        expect(s.qdd[i]).toBeCloseTo((a.qd[i]! - b.qd[i]!) / (2 * h), 5);
        expect(s.qddd[i]).toBeCloseTo((a.qdd[i]! - b.qdd[i]!) / (2 * h), 4);
      }
    }
  });

  it("endpoint space: seed 002's reach (from 98% of the reach) moves the endpoint on a min-jerk line, rates from the Jacobian match finite differences", () => {
    const R = 1;
    const tr = endpointMinJerk(seedArm, [0.98 * R, 0], [0.5, 0.5], 1);
    const s = [0, 0, 0, 0];
    const h = 1e-6;
    for (let k = 0; k <= 100; k++) {
      const t = k / 100;
      const x = tr.sample(t);
      // the seed's endpoint: p0 + (pf - p0)(10 tau^3 - 15 tau^4 + 6 tau^5)
      minJerkProfile(t, s);
      const ep = endpoint(seedArm, x.q);
      expect(ep[0]).toBeCloseTo(0.98 + (0.5 - 0.98) * s[0]!, 10);
      expect(ep[1]).toBeCloseTo(0.5 * s[0]!, 10);
      // seed 002's IK (acos, atan2 - atan2): elbow-down branch
      const a2 = Math.acos((ep[0] ** 2 + ep[1] ** 2 - 0.5) / 0.5);
      expect(x.q[1]).toBeCloseTo(a2, 7);
      for (const v of [...x.q, ...x.qd, ...x.qdd, ...x.qddd]) expect(Number.isFinite(v)).toBe(true);
      if (t > 0.01 && t < 0.99) {
        const a = tr.sample(t + h);
        const b = tr.sample(t - h);
        for (let i = 0; i < 2; i++) {
          expect(x.qd[i]).toBeCloseTo((a.q[i]! - b.q[i]!) / (2 * h), 5);
          expect(x.qdd[i]).toBeCloseTo((a.qd[i]! - b.qd[i]!) / (2 * h), 4);
          expect(x.qddd[i]).toBeCloseTo((a.qdd[i]! - b.qdd[i]!) / (2 * h), 2);
        }
      }
    }
    // It ends where seed 002's reach ends: (0, 90) deg.
    const end = tr.sample(1);
    expect(end.q[0]).toBeCloseTo(0, 12);
    expect(end.q[1]).toBeCloseTo(Math.PI / 2, 12);
  });

  it("seed 002's exact reach starts on the straight-elbow singularity and is refused, naming the singularity and t = 0", () => {
    let err: unknown;
    try {
      endpointMinJerk(seedArm, [1, 0], [0.5, 0.5], 1);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(TrajectoryError);
    expect((err as TrajectoryError).t).toBe(0);
    expect((err as Error).message).toMatch(/straight-elbow singularity at t = 0.000 s/);
    // Ending on the boundary is refused at the end time.
    expect(() => endpointMinJerk(seedArm, [0.5, 0.5], [0, 1], 2)).toThrow(/t = 2.000 s/);
  });

  it('a problem in the spec carries its place as a value (the start, or the step and its kind), beside its words', () => {
    const placeOf = (f: () => unknown): TrajectoryError['place'] => {
      try {
        f();
      } catch (e) {
        if (e instanceof TrajectoryError) return e.place;
        throw e;
      }
      throw new Error('no TrajectoryError');
    };
    expect(placeOf(() => buildPath(seedArm, { q: [0] }, []))).toEqual({ at: { start: true }, detail: 'expected 2 joint angles, got 1' });
    const p = placeOf(() =>
      buildPath(seedArm, { q: [0, 0.5] }, [
        { kind: 'hold', duration: 1 },
        { kind: 'joint', to: [0], duration: 1 },
      ]),
    );
    expect(p).toEqual({ at: { step: 1, kind: 'joint' }, detail: 'expected 2 joint angles, got 1' });
  });

  it('a path that leaves the workspace or passes over joint 1 is refused with the time', () => {
    expect(() => endpointMinJerk(seedArm, [0.5, 0.5], [0.9, 0.6], 1)).toThrow(/leaves the workspace at t = 1.000 s/);
    // L1 = L2: the line from (0.3, 0) to (-0.3, 0) passes over joint 1 at half time
    expect(() => endpointMinJerk(seedArm, [0.3, 0.01], [-0.3, 0.01], 2)).not.toThrow();
    expect(() => endpointMinJerk(seedArm, [0.3, 0], [-0.3, 0], 2)).toThrow(/folded-elbow singularity at t = 1.000 s/);
    const short = { ...seedArm, L2: 0.3 };
    expect(() => endpointMinJerk(short, [0.5, 0], [-0.5, 0], 2)).toThrow(/enters the unreachable disc at t = 1.000 s/);
  });

  it('a hold on the straight-elbow boundary has the finite limit qd = qdd = 0', () => {
    const tr = buildPath(seedArm, { xy: [1, 0] }, [{ kind: 'hold', duration: 1 }]);
    const s = tr.sample(0.5);
    expect(s.q).toEqual([0, 0]);
    expect(s.qd).toEqual([0, 0]);
    expect(s.qdd).toEqual([0, 0]);
  });

  it('via points chain rest to rest with continuous position, velocity and acceleration', () => {
    const tr = buildPath(seedArm, { q: [0, 1.2] }, [
      { kind: 'joint', to: [0.3, 1.0], duration: 1 },
      { kind: 'line', to: [0.4, 0.6], duration: 1 },
      { kind: 'hold', duration: 0.5 },
      { kind: 'circle', centre: [0.5, 0.5], turns: 1, duration: 2 },
    ]);
    expect(tr.duration).toBeCloseTo(4.5, 12);
    for (const tj of [1, 2, 2.5]) {
      const a = tr.sample(tj - 1e-9);
      const b = tr.sample(tj + 1e-9);
      for (let i = 0; i < 2; i++) {
        expect(a.q[i]).toBeCloseTo(b.q[i]!, 6);
        expect(a.qd[i]).toBeCloseTo(b.qd[i]!, 6);
        expect(a.qdd[i]).toBeCloseTo(b.qdd[i]!, 5);
      }
    }
    // the circle ends where it started
    const e0 = endpoint(seedArm, tr.sample(2.5).q);
    const e1 = endpoint(seedArm, tr.sample(4.5).q);
    expect(e1[0]).toBeCloseTo(e0[0], 9);
    expect(e1[1]).toBeCloseTo(e0[1], 9);
  });

  it('the built-in trajectories build and sample without NaN or Infinity at 1 kHz', () => {
    for (const name of ['reach', 'point', 'circle']) {
      const spec = builtinPath(seedArm, name)!;
      const tr = buildPath(seedArm, spec.start, spec.steps);
      for (let k = 0; k <= tr.duration * 1000; k++) {
        const s = tr.sample(k / 1000);
        for (const v of [...s.q, ...s.qd, ...s.qdd, ...s.qddd]) expect(Number.isFinite(v)).toBe(true);
      }
    }
  });
});
