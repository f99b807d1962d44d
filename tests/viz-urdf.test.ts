// The URDF of `twolink urdf` (src/viz/urdf.ts) read back by someone else's parser: urdf-loader (npm,
// three.js; in Node with linkedom's DOM). Its joint transforms give the same elbow and endpoint as
// `twolink model fk` (forwardKinematics) within 1e-9 m at 20 random poses inside the soft limits, and
// its links carry the rig's masses, centres of mass and inertias, its joints the rig's soft limits.
import { DOMParser as XmlDomParser } from '@xmldom/xmldom';
import { DOMParser } from 'linkedom';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadRig, type Rig } from '../src/config/load.js';
import { forwardKinematics } from '../src/model/kinematics.js';
import { armUrdf } from '../src/viz/urdf.js';
import { mulberry32 } from './helpers/random.js';
import { twolink } from './helpers/cli.js';

let URDFLoader: typeof import('urdf-loader').default;
/** urdf-loader's robot (its class types are not reachable under NodeNext resolution). */
type URDFRobot = ReturnType<InstanceType<typeof import('urdf-loader').default>['parse']>;

beforeAll(async () => {
  // urdf-loader parses with the browser's DOMParser and checks `instanceof Document/Element`.
  const doc = new DOMParser().parseFromString('<robot/>', 'text/xml');
  const g = globalThis as Record<string, unknown>;
  g.DOMParser = DOMParser;
  g.Document = doc.constructor;
  g.Element = Object.getPrototypeOf(doc.documentElement.constructor);
  URDFLoader = (await import('urdf-loader')).default;
});

function parseUrdf(text: string): URDFRobot {
  return new URDFLoader().parse(text);
}

/** Position of a link's frame in the robot's root frame (`base`), from the parser's joint transforms. */
function framePosition(robot: URDFRobot, link: string): number[] {
  robot.updateMatrixWorld(true);
  const e = robot.links[link]!.matrixWorld.elements;
  return [e[12]!, e[13]!, e[14]!];
}

describe('twolink urdf', () => {
  for (const file of ['rigs/mock-arm.json', 'rigs/seed-arm.json']) {
    it(`${file}: the parser's forward kinematics match twolink model fk within 1e-9 m at 20 random poses`, () => {
      const rig: Rig = loadRig(file);
      const robot = parseUrdf(armUrdf(rig));
      expect(Object.keys(robot.joints).sort()).toEqual(rig.joints === 2 ? ['joint1', 'joint2', 'tip_joint'] : ['joint1', 'tip_joint']);
      const rnd = mulberry32(25);
      let worst = 0;
      for (let k = 0; k < 20; k++) {
        const q = rig.limits.map((l) => l.min + (l.max - l.min) * rnd());
        q.forEach((v, j) => robot.setJointValue(`joint${j + 1}`, v));
        // The parser kept the angle (it is inside the limits, which it clamps to).
        q.forEach((v, j) => expect(robot.joints[`joint${j + 1}`]!.angle).toBe(v));
        const fk = forwardKinematics(rig.arm, q);
        const tip = framePosition(robot, 'tip');
        const want = [...fk.endpoint.position, 0];
        for (let i = 0; i < 3; i++) worst = Math.max(worst, Math.abs(tip[i]! - want[i]!));
        if (fk.elbow) {
          const elbow = framePosition(robot, 'link2');
          worst = Math.max(
            worst,
            Math.abs(elbow[0]! - fk.elbow.position[0]),
            Math.abs(elbow[1]! - fk.elbow.position[1]),
            Math.abs(elbow[2]!),
          );
        }
      }
      expect(worst).toBeLessThan(1e-9);
    });
  }

  it('a one-link arm: joint1 and the tip, its forward kinematics within 1e-9 m', () => {
    const arm = { L1: 0.3, d1: 0.12, m1: 0.4, I1: 0.003, g: 9.81 };
    const limits = [{ min: -2, max: 2, maxVel: 6, maxTorque: 1.5 }];
    const text = armUrdf({ name: 'one <link> & "arm"', arm, limits });
    // The name is escaped as XML wants (an XML parser reads it back; linkedom leaves entities as they are).
    expect(new XmlDomParser().parseFromString(text, 'text/xml').documentElement!.getAttribute('name')).toBe('one <link> & "arm"');
    const robot = parseUrdf(text);
    expect(Object.keys(robot.joints).sort()).toEqual(['joint1', 'tip_joint']);
    const rnd = mulberry32(7);
    for (let k = 0; k < 20; k++) {
      const q = -2 + 4 * rnd();
      robot.setJointValue('joint1', q);
      const tip = framePosition(robot, 'tip');
      const want = forwardKinematics(arm, [q]).endpoint.position;
      expect(Math.max(Math.abs(tip[0]! - want[0]), Math.abs(tip[1]! - want[1]), Math.abs(tip[2]!))).toBeLessThan(1e-9);
    }
  });

  it("carries the rig's masses, centres of mass, inertias (izz = I, every principal moment positive) and soft limits, joint axes z", () => {
    const rig = loadRig('rigs/mock-arm.json');
    const robot = parseUrdf(armUrdf(rig));
    const a = rig.arm as unknown as Record<string, number>;
    for (let i = 1; i <= rig.joints; i++) {
      const inertial = (
        robot.links[`link${i}`] as unknown as { inertial: { mass: number; origin: { xyz: number[] }; inertia: Record<string, number> } }
      ).inertial;
      expect(inertial.mass).toBe(a[`m${i}`]);
      expect(inertial.origin.xyz).toEqual([a[`d${i}`], 0, 0]);
      expect(inertial.inertia.izz).toBe(a[`I${i}`]);
      // Every principal moment positive (a zero ixx is refused by simulators that load URDF), and
      // the triangle inequalities of a physical body hold.
      const { ixx, iyy, izz } = inertial.inertia as { ixx: number; iyy: number; izz: number };
      expect(ixx).toBeGreaterThan(0);
      expect(ixx + iyy).toBeGreaterThanOrEqual(izz);
      expect(iyy + izz).toBeGreaterThanOrEqual(ixx);
      expect(ixx + izz).toBeGreaterThanOrEqual(iyy);
      const j = robot.joints[`joint${i}`]!;
      expect(j.jointType).toBe('revolute');
      expect(j.axis.toArray()).toEqual([0, 0, 1]);
      const lim = rig.limits[i - 1]!;
      expect([j.limit.lower, j.limit.upper, j.limit.effort, j.limit.velocity]).toEqual([lim.min, lim.max, lim.maxTorque, lim.maxVel]);
    }
  });

  it('the command writes the same URDF to --out and to stdout', async () => {
    const out = await twolink(['urdf', '--rig', 'rigs/mock-arm.json']);
    expect(out.code).toBe(0);
    expect(out.stdout).toBe(armUrdf(loadRig('rigs/mock-arm.json')));
    const bad = await twolink(['urdf', '--rig', 'rigs/no-such.json']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('no-such.json');
  });
});
