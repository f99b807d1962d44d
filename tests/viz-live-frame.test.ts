// The live view's frames written as bytes from templates (src/viz/live-frame.ts, json-bytes.ts):
// the same JSON as the recording's messages (ArmScene, tickJson) to 9 decimals, at random rows
// (NaN and infinities included), two links and one; /tf with the moving transforms only, and all
// of them once per `fixedEvery` frames and after resendFixed; the numbers' text.
import { describe, expect, it } from 'vitest';
import { F, TICK_WIDTH, tickJson } from '../src/telemetry/tick.js';
import { JsonBytes } from '../src/viz/json-bytes.js';
import { FRAME_MESSAGES, LiveFrame } from '../src/viz/live-frame.js';
import { ArmScene, fgTime, jointStatesTopic, SCENE_ARMS, SCENE_TOPICS } from '../src/viz/scene.js';
import { mulberry32 } from './helpers/random.js';
import { MOCK_ARM, randomRow, SCENE_ARM_CASES } from './helpers/scene-arms.js';

const arm = MOCK_ARM;

/** `a` and `b` equal as JSON values, numbers within `tol` (absolute). */
function near(a: unknown, b: unknown, tol: number, path = '$'): void {
  if (typeof a === 'number' && typeof b === 'number') {
    if (Math.abs(a - b) > tol) throw new Error(`${path}: ${a} vs ${b}`);
    return;
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    expect(a.length, path).toBe(b.length);
    a.forEach((x, i) => near(x, b[i], tol, `${path}[${i}]`));
    return;
  }
  if (a && b && typeof a === 'object' && typeof b === 'object') {
    expect(Object.keys(a), path).toEqual(Object.keys(b));
    for (const k of Object.keys(a)) near((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], tol, `${path}.${k}`);
    return;
  }
  expect(a, path).toEqual(b);
}

/** The frame's messages by name, parsed. */
function messages(f: LiveFrame): Map<string, unknown> {
  const out = new Map<string, unknown>();
  let start = 0;
  FRAME_MESSAGES.forEach((m, k) => {
    const end = f.ends[k]!;
    if (end < 0) return;
    out.set(m, JSON.parse(f.out.buf.toString('utf8', start, end)));
    start = end;
  });
  return out;
}

describe('live frame bytes', () => {
  it('are the recording JSON (transforms, joint states, force, path, tick) to 9 decimals at random rows, NaN included, two links and one', () => {
    const rnd = mulberry32(5);
    const all = new Uint8Array(FRAME_MESSAGES.length).fill(1);
    let arrows = 0;
    let paths = 0;
    for (const [src, joints] of SCENE_ARM_CASES) {
      // Two scenes fed the same rows: one for the recording's text, one behind the frame.
      const ref = new ArmScene({ arm: src, joints }, 60);
      const frame = new LiveFrame({ arm: src, joints }, new ArmScene({ arm: src, joints }, 60), 1);
      for (let k = 0; k < 80; k++) {
        const row = randomRow(rnd, TICK_WIDTH, true);
        row[F.t] = k / 60;
        row[F.i] = k;
        row[F.state] = k % 12;
        if (k % 2) [row[F.tauExt0], row[F.tauExt1]] = [1e-6, -1e-6];
        if (k === 3) row[F.q0] = Number.POSITIVE_INFINITY;
        const ns = 1_700_000_000_123_456_789n + BigInt(k) * 16_666_667n;
        const ts = fgTime(ns);
        const want = new Map(ref.messages(row, ns).map((m) => [m.topic, JSON.parse(m.json) as unknown]));
        frame.v.set(row);
        frame.write(ts.sec, ts.nsec, all);
        const got = messages(frame);
        near(got.get('tf'), want.get(SCENE_TOPICS.tf), 1e-9);
        for (const a of SCENE_ARMS) near(got.get(a.name), want.get(jointStatesTopic(a.name)), 1e-9);
        near(got.get('force'), want.get(SCENE_TOPICS.force), 1e-9);
        near(got.get('path'), want.get(SCENE_TOPICS.path), 0);
        near(got.get('tick'), JSON.parse(tickJson(row, joints)), 1e-9);
        arrows += (got.get('force') as { entities: { arrows: unknown[] }[] }).entities[0]!.arrows.length;
        paths += got.has('path') ? 1 : 0;
      }
    }
    expect(arrows).toBeGreaterThan(20);
    expect(paths).toBeGreaterThan(10);
  });

  it('/tf: the moving transforms in each frame, all of them every `fixedEvery` frames and after resendFixed; only the messages wanted', () => {
    const frame = new LiveFrame({ arm, joints: 2 }, new ArmScene({ arm, joints: 2 }, 60), 60);
    const want = new Uint8Array(FRAME_MESSAGES.length);
    want[FRAME_MESSAGES.indexOf('tf')] = 1;
    const counts: number[] = [];
    const row = new Float64Array(TICK_WIDTH).fill(0.25);
    for (let k = 0; k < 130; k++) {
      if (k === 100) frame.resendFixed();
      row[F.t] = k / 60;
      frame.v.set(row);
      frame.write(1, k, want);
      const got = messages(frame);
      expect([...got.keys()]).toEqual(['tf']);
      const tf = (got.get('tf') as { transforms: { child_frame_id: string }[] }).transforms;
      counts.push(tf.length);
      if (tf.length === 6)
        expect(tf.map((t) => t.child_frame_id)).toEqual([
          'measured/link1',
          'measured/link2',
          'desired/link1',
          'desired/link2',
          'twin/link1',
          'twin/link2',
        ]);
    }
    const full = counts.flatMap((n, k) => (n === 13 ? [k] : []));
    expect(full).toEqual([0, 60, 100]);
    expect(counts.every((n) => n === 6 || n === 13)).toBe(true);
  });

  it('writes numbers as JSON: 32-bit integers exactly, others to 9 decimals, large ones as JavaScript prints them, non-finite as null', () => {
    const w = new JsonBytes(8);
    const text = (x: number): string => {
      w.at = 0;
      w.num(x);
      return w.buf.toString('latin1', 0, w.at);
    };
    expect([0, -0, 7, -42, 2147483647, -2147483648].map(text)).toEqual(['0', '0', '7', '-42', '2147483647', '-2147483648']);
    expect([0.5, -0.25, 1.0000000004, 0.9999999996, -1e-12, 3.14159265358979, 123456.000000001].map(text)).toEqual([
      '0.5',
      '-0.25',
      '1',
      '1',
      '0',
      '3.141592654',
      '123456.000000001',
    ]);
    expect([1e6 + 0.5, 1e21, -3e9].map(text)).toEqual(['1000000.5', '1e+21', '-3000000000']);
    expect([Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY].map(text)).toEqual(['null', 'null', 'null']);
    const rnd = mulberry32(9);
    for (let k = 0; k < 2000; k++) {
      const x = (rnd() - 0.5) * 10 ** Math.floor(rnd() * 14 - 6);
      // Half the last decimal, and the rounding of x itself (its ulp) where x is large.
      expect(Math.abs(JSON.parse(text(x)) - x)).toBeLessThanOrEqual(Math.abs(x) < 1e6 ? 5e-10 + Math.abs(x) * 2 ** -51 : 0);
    }
    // The buffer grew from 8 bytes as it had to.
    expect(w.buf.length).toBeGreaterThan(8);
  });
});
