/**
 * One frame of the live view written as bytes (viz/json-bytes.ts): /tf, the joint states, the force
 * arrow and the tick from templates made once per view, the path (every 0.1 s) from the scene's
 * text. The same JSON as the recording's messages (viz/scene.ts, tickJson), the numbers with 9
 * decimals (tests/viz-live-frame.test.ts parses both and compares them).
 *
 * /tf carries the 6 transforms that move (base -> link1, link1 -> link2 of each arm) in each frame,
 * and all 13 (the fixed ones too: world -> plane, plane -> {arm}/base, the tips) in the first frame
 * after a change of subscriptions and then once every LIVE_RATE_HZ frames (1 s of loop time). What
 * Foxglove's 3D panel does with them (foxglove/studio, packages/studio-base/src/panels/
 * ThreeDeeRender: Renderer.ts, transforms/CoordinateFrame.ts; the same code in its fork
 * Lichtblick-Suite/lichtblick, packages/suite-base): it subscribes to every topic of the
 * FrameTransforms schema and adds each transform to its parent/child frame's history, which is
 * trimmed only when it is full; a lookup at a time after the newest transform of a frame takes that
 * newest one (no expiry by default: maxDelta is the longest duration), so a fixed transform sent once
 * poses its child for good. The history is cleared (Renderer.clear) on a seek or a new data source,
 * and a panel opened later starts empty while the connection's subscription to /tf may stay as it
 * was (no new subscribe reaches the server): hence the fixed ones again every second, not only per
 * subscription. A recording keeps all 13 in every message (a seek clears the tree there).
 */
import { F, TICK_TABLE, TICK_WIDTH } from '../telemetry/tick.js';
import { JsonBytes, JsonTemplate, TemplateBuilder } from './json-bytes.js';
import { ArmScene, FORCE_COLOR_JSON, SCENE_ARMS, tfTemplates, type SceneSource } from './scene.js';

/** Slots after the row's in the frame's values: the stamp, the moving transforms' quaternions, the force arrow. */
const SEC = TICK_WIDTH;
const NSEC = TICK_WIDTH + 1;
const FORCE = TICK_WIDTH + 2; // f0, f1, x, y, qz, qw, shaft, head
const ROT = TICK_WIDTH + 10; // z, w per moving transform

/** Messages of a frame, in the order written (an index into `LiveFrame.ends`). */
export const FRAME_MESSAGES = ['tf', 'measured', 'desired', 'twin', 'path', 'force', 'tick'] as const;
export type FrameMessage = (typeof FRAME_MESSAGES)[number];

const EMPTY = Buffer.from('[]');
const ARROWS = Buffer.from(',"arrows":');
const COMMA = Buffer.from(',');

const stamp = (b: TemplateBuilder): TemplateBuilder => b.text('{"sec":').num(SEC).text(',"nsec":').num(NSEC).text('}');

/** The tick's JSON (as tickJson writes it), for `joints` joints. */
function tickTemplate(joints: number): JsonTemplate {
  const b = new TemplateBuilder().text('{');
  const value = (s: (typeof TICK_TABLE)[number]): void => {
    const at = F[('joints' in s ? `${s.row}0` : s.row) as keyof typeof F];
    if ('joints' in s) {
      b.text('[').num(at);
      if (joints > 1) b.text(',').num(at + 1);
      b.text(']');
    } else if ('codes' in s) b.hole({ from: at, as: 'code', words: s.codes });
    else b.num(at);
  };
  let first = true;
  const groups = new Set<string>();
  for (const s of TICK_TABLE) {
    const g = 'group' in s ? s.group : undefined;
    if (g && groups.has(g)) continue;
    b.text(`${first ? '' : ','}${JSON.stringify(g ?? s.name)}:`);
    first = false;
    if (!g) value(s);
    else {
      groups.add(g);
      b.text('{');
      TICK_TABLE.filter((x) => 'group' in x && x.group === g).forEach(
        (x, i) => (b.text(`${i ? ',' : ''}${JSON.stringify(x.name)}:`), value(x)),
      );
      b.text('}');
    }
  }
  return b.text('}').build();
}

export class LiveFrame {
  /** The drawn row (copied in by the view), then the values computed from it. */
  readonly v = new Float64Array(ROT + 2 * 8);
  readonly out = new JsonBytes();
  /** End offset in `out.buf` of each message written this frame (-1: not written). */
  readonly ends = new Int32Array(FRAME_MESSAGES.length);
  private readonly tfMoving: JsonTemplate;
  private readonly tfAll: JsonTemplate;
  /** Slots of the moving transforms' angles. */
  private readonly angles: Int32Array;
  private readonly joints: JsonTemplate[];
  private readonly forceHead: JsonTemplate;
  private readonly forceMeta: JsonTemplate;
  private readonly forceArrow: JsonTemplate;
  private readonly forceTail: Uint8Array;
  private readonly tick: JsonTemplate;
  /** Frames until /tf carries the fixed transforms again (0: this frame). */
  private fixedIn = 0;

  constructor(
    src: SceneSource,
    private readonly scene: ArmScene,
    /** Frames between two /tf messages with the fixed transforms. */
    private readonly fixedEvery: number,
  ) {
    const tfs = tfTemplates(src.arm);
    const moving = tfs.filter((t) => t.angleAt !== undefined);
    this.angles = Int32Array.from(moving, (t) => t.angleAt!);
    const tf = (all: boolean): JsonTemplate => {
      const b = new TemplateBuilder().text('{"transforms":[');
      let k = 0;
      let first = true;
      for (const t of tfs) {
        if (t.angleAt === undefined && !all) continue;
        stamp(b.text(`${first ? '' : ','}{"timestamp":`)).text(`,${t.head}"rotation":`);
        first = false;
        if (t.angleAt === undefined) b.text(`${t.fixedJson}}`);
        else {
          b.text('{"x":0,"y":0,"z":')
            .num(ROT + 2 * k)
            .text(',"w":')
            .num(ROT + 2 * k + 1)
            .text('}}');
          k++;
        }
      }
      return b.text(']}').build();
    };
    this.tfMoving = tf(false);
    this.tfAll = tf(true);
    this.joints = SCENE_ARMS.map((a) => {
      const b = stamp(new TemplateBuilder().text('{"timestamp":')).text(',"joints":[');
      for (let j = 0; j < src.joints; j++) {
        b.text(`${j ? ',' : ''}{"name":"joint${j + 1}","position":`)
          .num(a.q + j)
          .text(',"velocity":')
          .num(a.qd + j);
        if (a.effort !== undefined) b.text(',"effort":').num(a.effort + j);
        b.text('}');
      }
      return b.text(']}').build();
    });
    this.forceHead = stamp(new TemplateBuilder().text('{"deletions":[],"entities":[{"timestamp":'))
      .text(',"frame_id":"plane","id":"endpoint-force","lifetime":{"sec":0,"nsec":0},"frame_locked":true,"metadata":')
      .build();
    this.forceMeta = new TemplateBuilder()
      .text('[{"key":"force_N","value":"')
      .hole({ from: FORCE, as: 'fixed3' })
      .text(', ')
      .hole({ from: FORCE + 1, as: 'fixed3' })
      .text('"}]')
      .build();
    this.forceArrow = new TemplateBuilder()
      .text('[{"pose":{"position":{"x":')
      .num(FORCE + 2)
      .text(',"y":')
      .num(FORCE + 3)
      .text(',"z":0},"orientation":{"x":0,"y":0,"z":')
      .num(FORCE + 4)
      .text(',"w":')
      .num(FORCE + 5)
      .text('}},"shaft_length":')
      .num(FORCE + 6)
      .text(',"shaft_diameter":0.006,"head_length":')
      .num(FORCE + 7)
      .text(`,"head_diameter":0.015,"color":${FORCE_COLOR_JSON}}]`)
      .build();
    this.forceTail = Buffer.from('"cubes":[],"spheres":[],"cylinders":[],"lines":[],"triangles":[],"texts":[],"models":[]}]}');
    this.tick = tickTemplate(src.joints);
  }

  /** The next /tf carries the fixed transforms (a client subscribed). */
  resendFixed(): void {
    this.fixedIn = 0;
  }

  /**
   * Writes the messages of the row in `v` (its first TICK_WIDTH slots) that are `wanted` (by their
   * index in FRAME_MESSAGES), stamped sec/nsec; `ends[k]` is where message k ends (-1: not
   * written). The path advances whether or not it is wanted.
   */
  write(sec: number, nsec: number, wanted: Uint8Array): void {
    const v = this.v;
    const out = this.out;
    out.at = 0;
    this.ends.fill(-1);
    v[SEC] = sec;
    v[NSEC] = nsec;
    if (wanted[0]) {
      for (let k = 0; k < this.angles.length; k++) {
        const a = v[this.angles[k]!]!;
        v[ROT + 2 * k] = Math.sin(a / 2);
        v[ROT + 2 * k + 1] = Math.cos(a / 2);
      }
      if (this.fixedIn-- <= 0) {
        this.fixedIn = this.fixedEvery - 1;
        this.tfAll.write(out, v);
      } else this.tfMoving.write(out, v);
      this.ends[0] = out.at;
    }
    for (let i = 0; i < SCENE_ARMS.length; i++) {
      if (!wanted[1 + i]) continue;
      this.joints[i]!.write(out, v);
      this.ends[1 + i] = out.at;
    }
    const path = this.scene.pathJson(v, { sec, nsec });
    if (path !== undefined && wanted[4]) {
      out.text(path);
      this.ends[4] = out.at;
    }
    if (wanted[5]) {
      this.writeForce();
      this.ends[5] = out.at;
    }
    if (wanted[6]) {
      this.tick.write(out, v);
      this.ends[6] = out.at;
    }
  }

  /** The force arrow's SceneUpdate (as ArmScene.forceJson writes it). */
  private writeForce(): void {
    const v = this.v;
    const out = this.out;
    this.forceHead.write(out, v);
    const a = this.scene.forceArrow(v);
    if (!a) out.raw(EMPTY);
    else {
      v[FORCE] = a.f[0];
      v[FORCE + 1] = a.f[1];
      this.forceMeta.write(out, v);
    }
    out.raw(ARROWS);
    if (a?.len) {
      v[FORCE + 2] = a.x;
      v[FORCE + 3] = a.y;
      v[FORCE + 4] = Math.sin(a.angle / 2);
      v[FORCE + 5] = Math.cos(a.angle / 2);
      v[FORCE + 6] = a.len * 0.8;
      v[FORCE + 7] = a.len * 0.2;
      this.forceArrow.write(out, v);
    } else out.raw(EMPTY);
    out.raw(COMMA);
    out.raw(this.forceTail);
  }
}
