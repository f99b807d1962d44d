// docs/foxglove-layout.json fits what twolink sends: one URDF layer per arm of the scene, with its frame
// prefix and colour, reading the description topic; the 3D panel's topics are the scene's; every plot
// path names a field of the tick (its JSON schema) and a joint the arm has.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { tickJsonSchema } from '../src/record/export.js';
import { SCENE_ARMS, SCENE_TOPICS, sceneChannels } from '../src/viz/scene.js';
import { LIVE_TICK_TOPIC } from '../src/viz/live.js';

const layout = JSON.parse(readFileSync('docs/foxglove-layout.json', 'utf8'));
const panels = layout.configById as Record<string, any>;

describe('docs/foxglove-layout.json', () => {
  it('the 3D panel draws the three arms of the scene in their colours, and its path and force', () => {
    const three = Object.entries(panels).find(([k]) => k.startsWith('3D!'))![1];
    const urdf = Object.values(three.layers as Record<string, any>).filter((l) => l.layerId === 'foxglove.Urdf');
    expect(urdf.map((l) => [l.framePrefix, l.fallbackColor, l.sourceType, l.topic])).toEqual(
      SCENE_ARMS.map((a) => [`${a.name}/`, a.color, 'topic', SCENE_TOPICS.description]),
    );
    expect(new Set(urdf.map((l) => l.fallbackColor)).size).toBe(3);
    const topics = sceneChannels().map((c) => c.topic);
    for (const t of Object.keys(three.topics)) expect(topics).toContain(t);
    expect(Object.keys(three.topics).sort()).toEqual([SCENE_TOPICS.force, SCENE_TOPICS.path].sort());
    expect(three.followTf).toBe('world');
  });

  it('every plot path is a field of the tick, on a joint of a two-link arm', () => {
    const schema = tickJsonSchema(2) as { properties: Record<string, any> };
    const plots = Object.entries(panels).filter(([k]) => k.startsWith('Plot!'));
    expect(plots.length).toBeGreaterThanOrEqual(3);
    for (const [, p] of plots) {
      for (const { value } of p.paths as { value: string }[]) {
        const m = /^(\/[\w/]+)\.([\w.]+)\[(\d)\]$/.exec(value);
        expect(m, value).not.toBeNull();
        expect(m![1]).toBe(LIVE_TICK_TOPIC);
        let node: any = schema;
        for (const key of m![2]!.split('.')) node = node.properties[key];
        expect(node?.type, value).toBe('array');
        expect(Number(m![3])).toBeLessThan(node.maxItems);
      }
    }
  });

  it('the layout names its panels in its tree', () => {
    const names = JSON.stringify(layout.layout)
      .match(/"[\w]+![\w]+"/g)!
      .map((s) => JSON.parse(s));
    expect(names.sort()).toEqual(Object.keys(panels).sort());
  });
});
