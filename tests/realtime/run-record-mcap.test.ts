// `twolink run --record F.mcap` (real time, the mock rig): the file reads back with @mcap/core and has
// the channels of `compare --export mcap` of an NDJSON recording (same topics, schemas, encodings),
// the URDF first, every tick of the run's summary on /twolink/tick, /tf posing the three arms with
// the recorded angles, the events, and the header and summary as metadata.
import { readFileSync } from 'node:fs';
import { McapIndexedReader } from '@mcap/core';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadRig } from '../../src/config/load.js';
import { MCAP_TOPICS } from '../../src/record/export.js';
import { readCdrString, SCENE_ARMS, SCENE_TOPICS } from '../../src/viz/scene.js';
import { armUrdf } from '../../src/viz/urdf.js';
import { lastJson, twolink, type CliResult } from '../helpers/cli.js';
import { hangGuardMs } from '../helpers/hang-guard.js';
import { tmp } from '../compare-synthetic.js';

const rig = loadRig('rigs/mock-arm.json');
const dec = new TextDecoder();

interface Mcap {
  channels: string[];
  messages: { topic: string; logTime: bigint; data: Uint8Array }[];
  metadata: Map<string, Map<string, string>>;
}

async function readMcap(file: string): Promise<Mcap> {
  const bytes = readFileSync(file);
  const reader = await McapIndexedReader.Initialize({
    readable: { size: async () => BigInt(bytes.length), read: async (o, s) => bytes.subarray(Number(o), Number(o + s)) },
  });
  const channels = [...reader.channelsById.values()].map((c) => {
    const s = reader.schemasById.get(c.schemaId)!;
    return `${c.topic} ${c.messageEncoding} ${s.name} ${s.encoding} ${dec.decode(s.data)}`;
  });
  const messages: Mcap['messages'] = [];
  for await (const m of reader.readMessages())
    messages.push({ topic: reader.channelsById.get(m.channelId)!.topic, logTime: m.logTime, data: m.data });
  const metadata = new Map<string, Map<string, string>>();
  for await (const m of reader.readMetadata()) metadata.set(m.name, m.metadata);
  return { channels, messages, metadata };
}

async function run(args: string[]): Promise<CliResult> {
  const r = await twolink(args, { timeoutMs: 60_000 });
  if (r.code !== 0) throw new Error(`twolink ${args.join(' ')} exited ${r.code}\n${r.stderr}`);
  return r;
}

let direct: Mcap;
let exported: Mcap;
let summary: { ticks: number };

beforeAll(async () => {
  const mcap = tmp('run-direct.mcap');
  const ndjson = tmp('run.ndjson');
  const r = await run(['run', '--rig', 'rigs/mock-arm.json', '--mock', '--traj', 'point', '--record', mcap, '--json']);
  summary = lastJson(r);
  expect(r.stderr).toMatch(new RegExp(`recorded ${summary.ticks} ticks to .*run-direct\\.mcap`));
  await run(['run', '--rig', 'rigs/mock-arm.json', '--mock', '--traj', 'point', '--record', ndjson, '--json']);
  const out = tmp('run-exported.mcap');
  await run(['compare', ndjson, '--export', 'mcap', '--out', out]);
  [direct, exported] = [await readMcap(mcap), await readMcap(out)];
}, hangGuardMs(120_000));

const on = (m: Mcap, topic: string): Mcap['messages'] => m.messages.filter((x) => x.topic === topic);
const parse = (x: { data: Uint8Array }): any => JSON.parse(dec.decode(x.data));

describe('run --record F.mcap', () => {
  it('has the channels of compare --export mcap, the URDF first, and the header and summary as metadata', () => {
    expect(direct.channels.length).toBeGreaterThanOrEqual(9);
    expect(direct.channels.sort()).toEqual(exported.channels.sort());
    const first = direct.messages[0]!;
    expect(first.topic).toBe(SCENE_TOPICS.description);
    expect(readCdrString(first.data)).toBe(armUrdf(rig));
    expect([...direct.metadata.keys()].sort()).toEqual(['twolink.header', 'twolink.summary']);
    expect(Number(direct.metadata.get('twolink.summary')!.get('ticks'))).toBe(summary.ticks);
    expect(JSON.parse(direct.metadata.get('twolink.header')!.get('rig')!).file).toBe('rigs/mock-arm.json');
  });

  it('every tick of the run, events, and /tf posing the three arms with the recorded angles', () => {
    const ticks = on(direct, MCAP_TOPICS.tick);
    expect(ticks).toHaveLength(summary.ticks);
    expect(on(direct, MCAP_TOPICS.event).map((e) => parse(e).event)).toContain('connected');
    const byTime = new Map(ticks.map((m) => [m.logTime, parse(m)]));
    const tfs = on(direct, SCENE_TOPICS.tf);
    expect(tfs.length).toBeGreaterThan(50);
    let worst = 0;
    for (const m of tfs) {
      const tick = byTime.get(m.logTime);
      expect(tick, 'a /tf at the time of a tick').toBeDefined();
      const byChild = new Map((parse(m).transforms as any[]).map((t) => [t.child_frame_id, t]));
      const recorded: Record<string, number[]> = { measured: tick.meas.q, desired: tick.des.q, twin: tick.twin.q };
      for (const a of SCENE_ARMS) {
        for (const [j, link] of ['link1', 'link2'].entries()) {
          const r = byChild.get(`${a.name}/${link}`).rotation;
          worst = Math.max(
            worst,
            Math.abs(
              Math.atan2(
                Math.sin(2 * Math.atan2(r.z, r.w) - recorded[a.name]![j]!),
                Math.cos(2 * Math.atan2(r.z, r.w) - recorded[a.name]![j]!),
              ),
            ),
          );
        }
      }
    }
    expect(worst).toBeLessThan(1e-12);
    for (const a of SCENE_ARMS) expect(on(direct, `/${a.name}/joint_states`)).toHaveLength(tfs.length);
  });
});
