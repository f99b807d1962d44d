/**
 * What Foxglove needs to draw the arm, from tick rows: the channels (topics, schemas, encodings) and
 * their messages. The MCAP export (record/export.ts) writes these; the live view writes the same
 * JSON as bytes from templates (viz/live-frame.ts, compared in tests/viz-live-frame.test.ts), so the
 * two show the same thing.
 *
 * Facts this follows, checked in Foxglove's public sources and docs:
 * - The 3D panel poses a URDF from transforms (`foxglove.FrameTransforms` on /tf), each link drawn in
 *   the frame of its name with the layer's frame prefix; its URDF layer reads the description from a
 *   URL, a file, a parameter or a topic, and a topic source must carry a `std_msgs/String` (ROS 2
 *   message schema `string data`; layouts in public repositories set `"layerId": "foxglove.Urdf"`,
 *   `"sourceType": "topic"`, `"framePrefix"`, `"fallbackColor"`). The description is sent as CDR:
 *   4 bytes of encapsulation (0x00 0x01 = CDR little-endian, then 2 option bytes), the string's
 *   length as uint32 counting its NUL, the bytes, the NUL (OMG CDR; the ROS 2 `cdr` encoding).
 * - `@foxglove/schemas` (npm, from foxglove/foxglove-sdk's schemas/jsonschema) carries the JSON
 *   schemas of FrameTransforms, JointStates (present in 2.1.0), SceneUpdate (arrows, lines).
 *   Timestamps there are {sec, nsec}; an arrow points along +x of its pose; lifetime 0 = forever.
 *
 * Frames: `world` is the viewer's (z up); `plane` is the seeds' frame of the arm (x along alpha1 =
 * 0, y up, gravity -y), turned +90 degrees about x from `world` so that the arm stands upright;
 * each arm's URDF frames hang under `plane` with its prefix: `measured/base`, `measured/link1`, ...
 */
import { FrameTransforms, JointStates, SceneUpdate } from '@foxglove/schemas/jsonschema.js';
import { jacobian } from '../model/kinematics.js';
import { asPair, isTwoLink, type ArmParams, type Mat2 } from '../model/types.js';
import { F } from '../telemetry/tick.js';

/** One channel as both MCAP and the WebSocket protocol describe it. */
export interface SceneChannel {
  topic: string;
  schemaName: string;
  /** 'jsonschema' for JSON messages, 'ros2msg' for the CDR description. */
  schemaEncoding: 'jsonschema' | 'ros2msg';
  schema: string;
  encoding: 'json' | 'cdr';
}

/** One message of a JSON channel, at a time on the run's clock: its text (the writer encodes it, UTF-8). */
export interface SceneMessage {
  topic: string;
  json: string;
}

/** The three arms drawn: measured, desired (the plan), the simulated twin; row slots of their angles. */
export const SCENE_ARMS = [
  { name: 'measured', q: F.q0, qd: F.qd0, effort: F.tauCmd0 as number | undefined, color: '#1f77b4' },
  { name: 'desired', q: F.qDes0, qd: F.qdDes0, effort: undefined, color: '#2ca02c' },
  { name: 'twin', q: F.twinQ0, qd: F.twinQd0, effort: undefined, color: '#ff7f0e' },
] as const;

export const SCENE_TOPICS = {
  description: '/robot_description',
  tf: '/tf',
  path: '/endpoint/path',
  force: '/endpoint/force',
} as const;

/** The ticks' topic (twolink.Tick JSON), in the MCAP export and the live view: the layout's plots read it. */
export const TICK_TOPIC = '/twolink/tick';

/** Topic of an arm's joint states. */
export const jointStatesTopic = (arm: string): string => `/${arm}/joint_states`;
const JOINT_STATES_TOPICS = Object.fromEntries(SCENE_ARMS.map((a) => [a.name, jointStatesTopic(a.name)])) as Record<
  (typeof SCENE_ARMS)[number]['name'],
  string
>;

/** Rate of the scene's messages by the run's (board) clock [Hz]: Foxglove draws at most ~60 fps. */
export const SCENE_RATE_HZ = 100;
/** Length of the endpoint path drawn as one line strip [s of board time]. */
export const PATH_SEGMENT_S = 0.1;
/** Length of the force arrow per newton [m/N]. */
export const ARROW_M_PER_N = 0.05;
/** Below this |det J| [m^2] the endpoint force is not drawn (a stretched or folded arm: it is not determined). */
const MIN_DET_M2 = 1e-4;

const json = (o: object): string => JSON.stringify(o);

/** The channels of the scene, the description first. */
export function sceneChannels(): SceneChannel[] {
  const js = (topic: string, schema: { title: string }): SceneChannel => ({
    topic,
    schemaName: schema.title,
    schemaEncoding: 'jsonschema',
    schema: json(schema),
    encoding: 'json',
  });
  return [
    {
      topic: SCENE_TOPICS.description,
      schemaName: 'std_msgs/msg/String',
      schemaEncoding: 'ros2msg',
      schema: 'string data',
      encoding: 'cdr',
    },
    js(SCENE_TOPICS.tf, FrameTransforms),
    ...SCENE_ARMS.map((a) => js(jointStatesTopic(a.name), JointStates)),
    js(SCENE_TOPICS.path, SceneUpdate),
    js(SCENE_TOPICS.force, SceneUpdate),
  ];
}

/** A std_msgs/String as CDR (little-endian): the ROS 2 encoding of the description. */
export function cdrString(s: string): Uint8Array {
  const text = new TextEncoder().encode(s);
  const out = new Uint8Array(4 + 4 + text.length + 1);
  out.set([0x00, 0x01, 0x00, 0x00], 0);
  new DataView(out.buffer).setUint32(4, text.length + 1, true);
  out.set(text, 8);
  return out;
}

/** Reads back `cdrString` (for tests and tools). */
export function readCdrString(b: Uint8Array): string {
  if (b[0] !== 0x00 || b[1] !== 0x01) throw new Error(`not little-endian CDR (encapsulation ${b[0]} ${b[1]})`);
  const len = new DataView(b.buffer, b.byteOffset, b.byteLength).getUint32(4, true);
  return new TextDecoder().decode(b.subarray(8, 8 + len - 1));
}

/** A Foxglove Time from nanoseconds. */
export function fgTime(ns: bigint): { sec: number; nsec: number } {
  return { sec: Number(ns / 1_000_000_000n), nsec: Number(ns % 1_000_000_000n) };
}

const rotZ = (a: number): { x: number; y: number; z: number; w: number } => ({ x: 0, y: 0, z: Math.sin(a / 2), w: Math.cos(a / 2) });
const IDENTITY = { x: 0, y: 0, z: 0, w: 1 };
const ORIGIN = { x: 0, y: 0, z: 0 };
/** `world` -> `plane`: +90 degrees about x (the seeds' y is the viewer's z). */
const UPRIGHT = { x: Math.SQRT1_2, y: 0, z: 0, w: Math.SQRT1_2 };

function rgba(hex: string, a = 1): { r: number; g: number; b: number; a: number } {
  const v = Number.parseInt(hex.slice(1), 16);
  return { r: ((v >> 16) & 255) / 255, g: ((v >> 8) & 255) / 255, b: (v & 255) / 255, a };
}

/** An empty SceneEntity in `plane` that lives until replaced. */
function entity(id: string, timestamp: object): Record<string, unknown> {
  return {
    timestamp,
    frame_id: 'plane',
    id,
    lifetime: { sec: 0, nsec: 0 },
    frame_locked: true,
    metadata: [],
    arrows: [],
    cubes: [],
    spheres: [],
    cylinders: [],
    lines: [],
    triangles: [],
    texts: [],
    models: [],
  };
}

/** Endpoint [m] in `plane` of joint angles at `row[at]`. */
function endpointOf(arm: ArmParams, row: ArrayLike<number>, at: number): [number, number] {
  const a1 = row[at]!;
  if (!isTwoLink(arm)) return [arm.L1 * Math.cos(a1), arm.L1 * Math.sin(a1)];
  const a12 = a1 + row[at + 1]!;
  return [arm.L1 * Math.cos(a1) + arm.L2 * Math.cos(a12), arm.L1 * Math.sin(a1) + arm.L2 * Math.sin(a12)];
}

/**
 * The endpoint force [N] that explains the observer's joint torques: J^T F = tauExt, so F = J^-T
 * tauExt (a one-link arm: the force across the link's end). Undefined where J is (nearly) singular.
 */
export function endpointForce(arm: ArmParams, q: readonly number[], tauExt: readonly number[]): [number, number] | undefined {
  if (!isTwoLink(arm)) {
    const s = tauExt[0]! / arm.L1;
    return [-s * Math.sin(q[0]!), s * Math.cos(q[0]!)];
  }
  const J: Mat2 = jacobian(arm, q);
  const det = J[0][0] * J[1][1] - J[0][1] * J[1][0];
  if (!(Math.abs(det) >= MIN_DET_M2)) return undefined;
  // Solve J^T F = tau: J^T = [[J00, J10], [J01, J11]].
  const [t1, t2] = asPair(tauExt, 'the external joint torques');
  return [(J[1][1] * t1 - J[1][0] * t2) / det, (-J[0][1] * t1 + J[0][0] * t2) / det];
}

/** A number as JSON writes it (a non-finite one is null). */
const num = (x: number | undefined): string => (x !== undefined && Number.isFinite(x) ? String(x) : 'null');
const FORCE_COLOR = rgba('#d62728');
export const FORCE_COLOR_JSON = json(FORCE_COLOR);
/** `rotZ(a)` as JSON text. */
const rotZJson = (a: number): string => `{"x":0,"y":0,"z":${num(Math.sin(a / 2))},"w":${num(Math.cos(a / 2))}}`;

export interface TfTemplate {
  parent: string;
  child: string;
  translation: { x: number; y: number; z: number };
  /** The row slot of the angle about z, or none: the fixed rotation. */
  angleAt: number | undefined;
  fixed: { x: number; y: number; z: number; w: number };
  /** `"parent_frame_id":...,"child_frame_id":...,"translation":...,` */
  head: string;
  fixedJson: string;
}

/** The transforms of the scene: `world` -> `plane`, then each arm's chain under its prefix. */
export function tfTemplates(arm: ArmParams): TfTemplate[] {
  const tf = (
    parent: string,
    child: string,
    translation: { x: number; y: number; z: number },
    angleAt?: number,
    fixed = IDENTITY,
  ): TfTemplate => ({
    parent,
    child,
    translation,
    angleAt,
    fixed,
    fixedJson: json(fixed),
    head: `"parent_frame_id":${JSON.stringify(parent)},"child_frame_id":${JSON.stringify(child)},"translation":${json(translation)},`,
  });
  const out = [tf('world', 'plane', ORIGIN, undefined, UPRIGHT)];
  for (const a of SCENE_ARMS) {
    const p = `${a.name}/`;
    out.push(tf('plane', `${p}base`, ORIGIN), tf(`${p}base`, `${p}link1`, ORIGIN, a.q));
    if (isTwoLink(arm))
      out.push(tf(`${p}link1`, `${p}link2`, { x: arm.L1, y: 0, z: 0 }, a.q + 1), tf(`${p}link2`, `${p}tip`, { x: arm.L2, y: 0, z: 0 }));
    else out.push(tf(`${p}link1`, `${p}tip`, { x: arm.L1, y: 0, z: 0 }));
  }
  return out;
}

/** What the scene is made from: the arm and how many joints the rows carry. */
export interface SceneSource {
  arm: ArmParams;
  joints: number;
}

/**
 * Messages of the scene from tick rows, decimated to `rateHz` by the rows' own clock (t, the board's):
 * the first row of each 1/rateHz slot is drawn. The endpoint paths go out every PATH_SEGMENT_S as
 * line strips that stay (one entity per segment), so a recording or a viewer keeps the whole path.
 */
export class ArmScene {
  private lastSlot = Number.NEGATIVE_INFINITY;
  private readonly path: { measured: number[][]; desired: number[][] } = { measured: [], desired: [] };
  private pathStart = Number.NaN;
  private segment = 0;

  /** The transforms drawn, in order: parent, child, translation, and the row slot of the angle about z (none: identity). */
  private readonly tfTemplates: readonly TfTemplate[];

  constructor(
    private readonly src: SceneSource,
    private readonly rateHz = SCENE_RATE_HZ,
  ) {
    this.tfTemplates = tfTemplates(src.arm);
  }

  /** Whether a row at loop time `t` [s] is drawn (call once per row, in order). */
  accept(t: number): boolean {
    if (!Number.isFinite(t)) return false;
    const slot = Math.floor(t * this.rateHz + 1e-6);
    if (slot <= this.lastSlot) return false;
    this.lastSlot = slot;
    return true;
  }

  /**
   * The messages of one drawn row, stamped `stampNs` (the recording's time of the row), on the
   * topics `wanted`.
   * The frequent ones (/tf, joint states, the force) are written from templates made once per scene,
   * only the numbers filled in: a recording has one per 10 ms of the run, and building objects for
   * JSON.stringify was most of a message's CPU. The text is what JSON.stringify makes of
   * `transforms()`, `jointStates()` and `force()` (tests/viz-scene.test.ts compares them).
   */
  messages(row: ArrayLike<number>, stampNs: bigint, wanted: (topic: string) => boolean = () => true): SceneMessage[] {
    const ts = fgTime(stampNs);
    const tsJson = `{"sec":${ts.sec},"nsec":${ts.nsec}}`;
    const out: SceneMessage[] = [];
    if (wanted(SCENE_TOPICS.tf)) out.push({ topic: SCENE_TOPICS.tf, json: this.transformsJson(row, tsJson) });
    for (const a of SCENE_ARMS) {
      const topic = JOINT_STATES_TOPICS[a.name];
      if (wanted(topic)) out.push({ topic, json: this.jointStatesJson(a, row, tsJson) });
    }
    // The path advances whether or not anyone reads it (a later subscriber gets its next segment).
    const path = this.pathJson(row, ts);
    if (path && wanted(SCENE_TOPICS.path)) out.push({ topic: SCENE_TOPICS.path, json: path });
    if (wanted(SCENE_TOPICS.force)) out.push({ topic: SCENE_TOPICS.force, json: this.forceJson(row, tsJson) });
    return out;
  }

  /** `transforms()` as JSON text, from the templates. */
  transformsJson(row: ArrayLike<number>, tsJson: string): string {
    let out = '{"transforms":[';
    let sep = '';
    for (const t of this.tfTemplates) {
      out += `${sep}{"timestamp":${tsJson},${t.head}"rotation":${t.angleAt === undefined ? t.fixedJson : rotZJson(row[t.angleAt]!)}}`;
      sep = ',';
    }
    return `${out}]}`;
  }

  /** `jointStates()` as JSON text. */
  jointStatesJson(a: (typeof SCENE_ARMS)[number], row: ArrayLike<number>, tsJson: string): string {
    let out = `{"timestamp":${tsJson},"joints":[`;
    for (let j = 0; j < this.src.joints; j++) {
      out += `${j ? ',' : ''}{"name":"joint${j + 1}","position":${num(row[a.q + j])},"velocity":${num(row[a.qd + j])}${a.effort !== undefined ? `,"effort":${num(row[a.effort + j])}` : ''}}`;
    }
    return `${out}]}`;
  }

  /** `force()` as JSON text. */
  forceJson(row: ArrayLike<number>, tsJson: string): string {
    const a = this.forceArrow(row);
    const metadata = a ? `[{"key":"force_N","value":"${a.f[0].toFixed(3)}, ${a.f[1].toFixed(3)}"}]` : '[]';
    const arrows = a?.len
      ? `[{"pose":{"position":{"x":${num(a.x)},"y":${num(a.y)},"z":0},"orientation":${rotZJson(a.angle)}},"shaft_length":${num(a.len * 0.8)},"shaft_diameter":0.006,"head_length":${num(a.len * 0.2)},"head_diameter":0.015,"color":${FORCE_COLOR_JSON}}]`
      : '[]';
    return `{"deletions":[],"entities":[{"timestamp":${tsJson},"frame_id":"plane","id":"endpoint-force","lifetime":{"sec":0,"nsec":0},"frame_locked":true,"metadata":${metadata},"arrows":${arrows},"cubes":[],"spheres":[],"cylinders":[],"lines":[],"triangles":[],"texts":[],"models":[]}]}`;
  }

  /** The transforms of the three arms (and the upright `plane`), as objects. */
  transforms(row: ArrayLike<number>, timestamp: { sec: number; nsec: number }): { transforms: object[] } {
    return {
      transforms: this.tfTemplates.map((t) => ({
        timestamp,
        parent_frame_id: t.parent,
        child_frame_id: t.child,
        translation: t.translation,
        rotation: t.angleAt === undefined ? t.fixed : rotZ(row[t.angleAt]!),
      })),
    };
  }

  /** An arm's joint states, as an object. */
  jointStates(a: (typeof SCENE_ARMS)[number], row: ArrayLike<number>, timestamp: object): object {
    const joints = [];
    for (let j = 0; j < this.src.joints; j++) {
      joints.push({
        name: `joint${j + 1}`,
        position: row[a.q + j],
        velocity: row[a.qd + j],
        ...(a.effort !== undefined ? { effort: row[a.effort + j] } : {}),
      });
    }
    return { timestamp, joints };
  }

  /** The endpoint force of a row where it is defined and finite: its arrow's start, angle and length (0: too short to draw). */
  forceArrow(row: ArrayLike<number>): { f: [number, number]; x: number; y: number; angle: number; len: number } | undefined {
    const f = endpointForce(this.src.arm, [row[F.q0]!, row[F.q1]!], [row[F.tauExt0]!, row[F.tauExt1]!]);
    if (!f || !f.every(Number.isFinite)) return undefined;
    const [x, y] = endpointOf(this.src.arm, row, F.q0);
    const len = Math.hypot(f[0], f[1]) * ARROW_M_PER_N;
    return { f, x, y, angle: Math.atan2(f[1], f[0]), len: len > 1e-4 ? len : 0 };
  }

  /** Forgets the path not yet sent (the live view, after nobody watched): the next segment starts at the next drawn row. */
  restartPath(): void {
    this.path.measured = [];
    this.path.desired = [];
    this.pathStart = Number.NaN;
  }

  /** Adds a drawn row's endpoints to the paths; every PATH_SEGMENT_S of loop time, the segment's /endpoint/path message (JSON text). */
  pathJson(row: ArrayLike<number>, timestamp: { sec: number; nsec: number }): string | undefined {
    const path = this.pathUpdate(row, timestamp);
    return path && json(path);
  }

  private pathUpdate(row: ArrayLike<number>, timestamp: object): object | undefined {
    const t = row[F.t]!;
    this.path.measured.push(endpointOf(this.src.arm, row, F.q0));
    this.path.desired.push(endpointOf(this.src.arm, row, F.qDes0));
    if (Number.isNaN(this.pathStart)) this.pathStart = t;
    if (t - this.pathStart < PATH_SEGMENT_S) return undefined;
    const entities = (['measured', 'desired'] as const).map((name) => {
      const pts = this.path[name];
      const e = entity(`${name}-path-${this.segment}`, timestamp);
      const color = SCENE_ARMS.find((a) => a.name === name)!.color;
      e.lines = [
        {
          type: 0,
          pose: { position: ORIGIN, orientation: IDENTITY },
          thickness: 0.004,
          scale_invariant: false,
          points: pts.map(([x, y]) => ({ x, y, z: 0 })),
          color: rgba(color, 0.8),
          colors: [],
          indices: [],
        },
      ];
      // The next segment starts where this one ends (no gap in the line).
      this.path[name] = [pts[pts.length - 1]!];
      return e;
    });
    this.segment++;
    this.pathStart = t;
    return { deletions: [], entities };
  }

  /** The endpoint force's arrow entity, as an object. */
  force(row: ArrayLike<number>, timestamp: object): object {
    const a = this.forceArrow(row);
    const e = entity('endpoint-force', timestamp);
    if (a) {
      e.metadata = [{ key: 'force_N', value: `${a.f[0].toFixed(3)}, ${a.f[1].toFixed(3)}` }];
      if (a.len) {
        e.arrows = [
          {
            pose: { position: { x: a.x, y: a.y, z: 0 }, orientation: rotZ(a.angle) },
            shaft_length: a.len * 0.8,
            shaft_diameter: 0.006,
            head_length: a.len * 0.2,
            head_diameter: 0.015,
            color: FORCE_COLOR,
          },
        ];
      }
    }
    return { deletions: [], entities: [e] };
  }
}
