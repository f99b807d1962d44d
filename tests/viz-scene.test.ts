// The scene's pieces that are physics: the endpoint force drawn is the one whose joint torques are the
// observer's (J^T F = tauExt), at random poses away from the singular ones; none at a stretched arm;
// the description's CDR bytes as ROS 2 lays out a std_msgs/String; decimation by the loop's clock.
import { describe, expect, it } from 'vitest';
import { jacobian } from '../src/model/kinematics.js';
import { F } from '../src/telemetry/tick.js';
import { ArmScene, cdrString, endpointForce, fgTime, jointStatesTopic, readCdrString, SCENE_ARMS, SCENE_TOPICS } from '../src/viz/scene.js';
import { mulberry32 } from './helpers/random.js';
import { MOCK_ARM, ONE_LINK, randomRow, SCENE_ARM_CASES } from './helpers/scene-arms.js';

const arm = MOCK_ARM;

describe('scene', () => {
  it('the endpoint force satisfies J^T F = tauExt (two links) and is absent at a stretched arm', () => {
    const rnd = mulberry32(3);
    let checked = 0;
    for (let k = 0; k < 200; k++) {
      const q = [rnd() * 6 - 3, rnd() * 6 - 3];
      const tau = [rnd() * 2 - 1, rnd() * 2 - 1];
      const f = endpointForce(arm, q, tau);
      const J = jacobian(arm, q);
      if (Math.abs(J[0][0] * J[1][1] - J[0][1] * J[1][0]) < 1e-3) continue;
      expect(f).toBeDefined();
      expect(J[0][0] * f![0] + J[1][0] * f![1]).toBeCloseTo(tau[0]!, 9);
      expect(J[0][1] * f![0] + J[1][1] * f![1]).toBeCloseTo(tau[1]!, 9);
      checked++;
    }
    expect(checked).toBeGreaterThan(150);
    expect(endpointForce(arm, [0.3, 0], [0.1, 0.1])).toBeUndefined();
  });

  it('a one-link arm: the force across the link end whose torque is tauExt', () => {
    const one = ONE_LINK;
    const f = endpointForce(one, [0.7], [0.6])!;
    // tau = r x F with r = L (cos q, sin q)
    expect(one.L1 * Math.cos(0.7) * f[1] - one.L1 * Math.sin(0.7) * f[0]).toBeCloseTo(0.6, 12);
  });

  it('std_msgs/String in CDR: little-endian encapsulation, length with the NUL, the bytes, the NUL', () => {
    const b = cdrString('<robot/>');
    expect([...b]).toEqual([0, 1, 0, 0, 9, 0, 0, 0, ...Buffer.from('<robot/>'), 0]);
    expect(readCdrString(b)).toBe('<robot/>');
  });

  it('draws the first row of each 1/rate slot of the loop clock', () => {
    const s = new ArmScene({ arm, joints: 2 }, 60);
    const drawn = Array.from({ length: 1000 }, (_, i) => i / 1000).filter((t) => s.accept(t));
    expect(drawn).toHaveLength(60);
    expect(drawn.slice(0, 3)).toEqual([0, 0.017, 0.034]);
    expect(s.accept(Number.NaN)).toBe(false);
  });
});

describe('scene messages from templates', () => {
  it('are the JSON of the scene objects (transforms, joint states, force) at random rows, NaN included, two links and one', () => {
    const rnd = mulberry32(11);
    let arrows = 0;
    for (const [src, joints] of SCENE_ARM_CASES) {
      const s = new ArmScene({ arm: src, joints }, 60);
      for (let k = 0; k < 50; k++) {
        const row = randomRow(rnd, F.tauExt1 + 40);
        // Half the rows with a tiny external torque: no arrow drawn (or none defined).
        if (k % 2) [row[F.tauExt0], row[F.tauExt1]] = [1e-6, -1e-6];
        const ns = 1_700_000_000_123_456_789n + BigInt(k) * 16_666_667n;
        const ts = fgTime(ns);
        const byTopic = new Map(s.messages(row, ns).map((m) => [m.topic, JSON.parse(m.json) as unknown]));
        const same = (o: object): unknown => JSON.parse(JSON.stringify(o));
        expect(byTopic.get(SCENE_TOPICS.tf)).toEqual(same(s.transforms(row, ts)));
        for (const a of SCENE_ARMS) expect(byTopic.get(jointStatesTopic(a.name))).toEqual(same(s.jointStates(a, row, ts)));
        expect(byTopic.get(SCENE_TOPICS.force)).toEqual(same(s.force(row, ts)));
        arrows += (byTopic.get(SCENE_TOPICS.force) as { entities: { arrows: unknown[] }[] }).entities[0]!.arrows.length;
      }
    }
    expect(arrows).toBeGreaterThan(20);
  });
});
