// The MCAP of a 10 s run (virtual time, the line-protocol mock of rigs/mock-arm.json) read back with
// @mcap/core: /robot_description (std_msgs/msg/String in CDR) is the first message and holds the
// rig's URDF; /tf poses the measured, desired and twin arms with the recorded angles, at 100 Hz of
// the loop's clock; the joint states carry the same angles; the paths and the force arrow are there.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { McapIndexedReader } from '@mcap/core';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadRig } from '../src/config/load.js';
import { builtinNames, builtinPath } from '../src/model/builtins.js';
import { forwardKinematics } from '../src/model/kinematics.js';
import { exportMcap, MCAP_TOPICS } from '../src/record/export.js';
import { readCdrString, SCENE_ARMS, SCENE_RATE_HZ, SCENE_TOPICS } from '../src/viz/scene.js';
import { armUrdf } from '../src/viz/urdf.js';
import { virtualRun } from './helpers/virtual-run.js';
import { hangGuardMs } from './helpers/hang-guard.js';

const rig = loadRig('rigs/mock-arm.json');
const dec = new TextDecoder();

interface Msg {
  topic: string;
  schema: string;
  encoding: string;
  logTime: bigint;
  data: Uint8Array;
}
let messages: Msg[] = [];

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'twolink-mcap-'));
  const rec = join(dir, 'run.ndjson');
  const paths = builtinNames(rig.arm).map((n) => builtinPath(rig.arm, n)!);
  await virtualRun(rig, paths, { record: rec, maxSeconds: 10, keepRows: false });
  const out = join(dir, 'run.mcap');
  await exportMcap(rec, out);
  const bytes = readFileSync(out);
  const reader = await McapIndexedReader.Initialize({
    readable: { size: async () => BigInt(bytes.length), read: async (o, s) => bytes.subarray(Number(o), Number(o + s)) },
  });
  messages = [];
  for await (const m of reader.readMessages()) {
    const c = reader.channelsById.get(m.channelId)!;
    const s = reader.schemasById.get(c.schemaId)!;
    messages.push({
      topic: c.topic,
      schema: `${s.name} ${s.encoding} ${dec.decode(s.data).slice(0, 40)}`,
      encoding: c.messageEncoding,
      logTime: m.logTime,
      data: m.data,
    });
  }
}, hangGuardMs(60_000));

const on = (topic: string): Msg[] => messages.filter((m) => m.topic === topic);
const parse = (m: Msg): any => JSON.parse(dec.decode(m.data));
/** The angle of a rotation about z from its quaternion. */
const angleZ = (r: { x: number; y: number; z: number; w: number }): number => 2 * Math.atan2(r.z, r.w);
const wrap = (a: number): number => Math.atan2(Math.sin(a), Math.cos(a));

describe('MCAP export: the arm in Foxglove', () => {
  it('/robot_description comes first: the URDF of the recorded rig as a ROS 2 std_msgs/String in CDR', () => {
    const first = messages[0]!;
    expect(first.topic).toBe(SCENE_TOPICS.description);
    expect(first.schema).toBe('std_msgs/msg/String ros2msg string data');
    expect(first.encoding).toBe('cdr');
    expect(readCdrString(first.data)).toBe(armUrdf(rig));
    expect(on(SCENE_TOPICS.description)).toHaveLength(1);
  });

  it('/tf poses the three arms with the recorded angles, at 100 Hz of the loop clock over the 10 s run', () => {
    const ticks = new Map(on(MCAP_TOPICS.tick).map((m) => [m.logTime, parse(m)]));
    const tfs = on(SCENE_TOPICS.tf);
    const last = [...ticks.values()].at(-1)!.t as number;
    expect(last).toBeGreaterThan(9.9);
    // One /tf per 10 ms slot of the loop's clock that has a tick.
    expect(tfs.length).toBeGreaterThanOrEqual(Math.floor(last * SCENE_RATE_HZ) - 1);
    expect(tfs.length / last).toBeGreaterThanOrEqual(60);
    expect(tfs[0]!.schema.startsWith('foxglove.FrameTransforms jsonschema')).toBe(true);
    let worst = 0;
    for (const m of tfs) {
      const tick = ticks.get(m.logTime);
      expect(tick, 'a /tf at the time of a tick').toBeDefined();
      const byChild = new Map((parse(m).transforms as any[]).map((t) => [t.child_frame_id, t]));
      const recorded: Record<string, number[]> = { measured: tick.meas.q, desired: tick.des.q, twin: tick.twin.q };
      for (const a of SCENE_ARMS) {
        const q = recorded[a.name]!;
        const l1 = byChild.get(`${a.name}/link1`);
        const l2 = byChild.get(`${a.name}/link2`);
        expect(l1.parent_frame_id).toBe(`${a.name}/base`);
        expect(l2.parent_frame_id).toBe(`${a.name}/link1`);
        expect(l2.translation).toEqual({ x: (rig.arm as { L1: number }).L1, y: 0, z: 0 });
        worst = Math.max(worst, Math.abs(wrap(angleZ(l1.rotation) - q[0]!)), Math.abs(wrap(angleZ(l2.rotation) - q[1]!)));
      }
      const sec = Number(m.logTime / 1_000_000_000n);
      expect(byChild.get('plane').timestamp).toEqual({ sec, nsec: Number(m.logTime - BigInt(sec) * 1_000_000_000n) });
    }
    expect(worst).toBeLessThan(1e-12);
    // The arms moved: the angles drawn are not all one pose.
    const q1 = tfs.map((m) => angleZ((parse(m).transforms as any[]).find((t) => t.child_frame_id === 'measured/link1').rotation));
    expect(Math.max(...q1) - Math.min(...q1)).toBeGreaterThan(0.3);
  });

  it("composed from world, each arm's tip is its forward kinematics upright: (x, 0, y) with the viewer's z up", () => {
    type V = { x: number; y: number; z: number };
    type Q = V & { w: number };
    const rotate = (q: Q, v: V): V => {
      // v' = q v q*, expanded.
      const tx = 2 * (q.y * v.z - q.z * v.y),
        ty = 2 * (q.z * v.x - q.x * v.z),
        tz = 2 * (q.x * v.y - q.y * v.x);
      return {
        x: v.x + q.w * tx + (q.y * tz - q.z * ty),
        y: v.y + q.w * ty + (q.z * tx - q.x * tz),
        z: v.z + q.w * tz + (q.x * ty - q.y * tx),
      };
    };
    const ticks = new Map(on(MCAP_TOPICS.tick).map((m) => [m.logTime, parse(m)]));
    const tfs = on(SCENE_TOPICS.tf);
    let worst = 0;
    for (const m of [tfs[0]!, tfs[Math.floor(tfs.length / 3)]!, tfs[Math.floor((2 * tfs.length) / 3)]!, tfs.at(-1)!]) {
      const byChild = new Map((parse(m).transforms as any[]).map((t) => [t.child_frame_id, t]));
      const tick = ticks.get(m.logTime);
      for (const a of SCENE_ARMS) {
        // Walk up from the tip to world: p_parent = R p_child + t.
        let p: V = { x: 0, y: 0, z: 0 };
        for (let f = `${a.name}/tip`; f !== 'world';) {
          const t = byChild.get(f);
          const r = rotate(t.rotation, p);
          p = { x: r.x + t.translation.x, y: r.y + t.translation.y, z: r.z + t.translation.z };
          f = t.parent_frame_id;
        }
        const q = { measured: tick.meas.q, desired: tick.des.q, twin: tick.twin.q }[a.name] as number[];
        const [x, y] = forwardKinematics(rig.arm, q).endpoint.position;
        worst = Math.max(worst, Math.abs(p.x - x), Math.abs(p.y), Math.abs(p.z - y));
      }
    }
    expect(worst).toBeLessThan(1e-12);
  });

  it('joint states per arm, the endpoint paths and the force arrow', () => {
    const ticks = new Map(on(MCAP_TOPICS.tick).map((m) => [m.logTime, parse(m)]));
    for (const a of SCENE_ARMS) {
      const js = on(`/${a.name}/joint_states`);
      expect(js.length).toBe(on(SCENE_TOPICS.tf).length);
      expect(js[0]!.schema.startsWith('foxglove.JointStates jsonschema')).toBe(true);
      const m = js[Math.floor(js.length / 2)]!;
      const tick = ticks.get(m.logTime);
      const q = { measured: tick.meas.q, desired: tick.des.q, twin: tick.twin.q }[a.name];
      expect(parse(m).joints.map((j: { position: number }) => j.position)).toEqual(q);
    }
    const paths = on(SCENE_TOPICS.path);
    expect(paths.length).toBeGreaterThanOrEqual(95);
    const ids = paths.flatMap((m) => parse(m).entities.map((e: { id: string }) => e.id));
    expect(new Set(ids).size).toBe(ids.length);
    const forces = on(SCENE_TOPICS.force).map(parse);
    expect(forces.length).toBe(on(SCENE_TOPICS.tf).length);
    // The mock's plant is not the nominal arm, so the observer sees unexplained torque: arrows are drawn.
    const arrows = forces.filter((f) => f.entities[0].arrows.length === 1);
    expect(arrows.length).toBeGreaterThan(forces.length / 2);
    expect(arrows[0].entities[0].frame_id).toBe('plane');
  });
});
