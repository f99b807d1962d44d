/**
 * Exports of a recording for the tools roboticists already use: CSV (spreadsheets, pandas,
 * PlotJuggler) and MCAP (Foxglove). Both stream: the recording is read line by line and written as
 * it goes, so a long run is never held in memory.
 */
import { McapWriter, type IWritable } from '@mcap/core';
import { checkWritablePath, closeFile, openForWrite, writeAll } from '../config/files.js';
import { F, TICK_GROUPS, TICK_TABLE, TICK_WIDTH, tickObject, type TickField, type TickFieldSpec } from '../telemetry/tick.js';
import { VERSION } from '../version.js';
import { armUrdf } from '../viz/urdf.js';
import { ArmScene, cdrString, sceneChannels, SCENE_TOPICS, TICK_TOPIC } from '../viz/scene.js';
import { readRecording, recordedRig, type RecordingHeaderLine, type RecordingInfo } from './read.js';

/** An export never writes over the recording it reads (a FileError), whatever the caller checked. */
function notOverInput(recording: string, out: string, what: string): void {
  checkWritablePath(out, what, { force: true, inputs: [recording] });
}

/** One CSV column: its header name (with its unit) and how to get it from a tick row. */
interface CsvColumn {
  name: string;
  get(row: Float64Array): number | string;
}

/**
 * The CSV columns of a recording with `joints` joints. Names are plain identifiers with the unit
 * last (`des_q1_rad`), so spreadsheets, pandas and PlotJuggler take them as they are; joints are
 * numbered from 1. `state` and `phase` come as words and as codes (PlotJuggler plots numbers).
 */
export function csvColumns(joints: number): CsvColumn[] {
  const cols: CsvColumn[] = [];
  for (const spec of TICK_TABLE as readonly TickFieldSpec[]) {
    const at = F[(spec.joints ? `${spec.row}0` : spec.row) as TickField];
    const stem = `${spec.group ? `${spec.group}_` : ''}${spec.csv ?? spec.name}`;
    const unit = spec.unit ? `_${CSV_UNIT[spec.unit]}` : '';
    const codes = spec.codes;
    if (codes) {
      cols.push({ name: stem, get: (r) => codes[r[at]!] ?? '' });
      cols.push({ name: `${stem}_code`, get: (r) => r[at]! });
    } else if (spec.joints) {
      for (let j = 0; j < joints; j++) cols.push({ name: `${stem}${j + 1}${unit}`, get: (r) => r[at + j]! });
    } else cols.push({ name: `${stem}${unit}`, get: (r) => r[at]! });
  }
  return cols;
}

/** Units as they end a CSV column name (plain identifiers). */
const CSV_UNIT: Record<Exclude<TickFieldSpec['unit'], ''>, string> = { s: 's', us: 'us', rad: 'rad', 'rad/s': 'rad_s', 'rad/s^2': 'rad_s2', 'N m': 'Nm', N: 'N' };

function cell(v: number | string): string {
  if (typeof v === 'string') return /[",\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v;
  // The shortest text that reads back as the same double; an empty cell for NaN.
  return Number.isFinite(v) ? String(v) : '';
}

/**
 * Buffered synchronous writes to a file, in blocks of ~1 MB. Failures (a missing folder, a full disk)
 * are FileErrors naming the file (config/files.ts).
 */
class FileSink {
  private fd: number | undefined;
  private parts: (string | Uint8Array)[] = [];
  private size = 0;
  bytes = 0;
  constructor(readonly file: string) {
    this.fd = openForWrite(file);
  }
  write(data: string | Uint8Array): void {
    this.parts.push(data);
    this.size += data.length;
    if (this.size > 1 << 20) this.flush();
  }
  flush(): void {
    if (this.fd === undefined) return;
    const parts = this.parts;
    this.parts = [];
    this.size = 0;
    for (const p of parts) {
      const buf = typeof p === 'string' ? Buffer.from(p) : p;
      writeAll(this.fd, buf, this.file);
      this.bytes += buf.length;
    }
  }
  close(): void {
    if (this.fd === undefined) return;
    try {
      this.flush();
    } finally {
      const fd = this.fd;
      this.fd = undefined;
      closeFile(fd, this.file);
    }
  }
  /** Closes after a failure, without writing what is pending (the failure is the error to report). */
  abandon(): void {
    if (this.fd === undefined) return;
    const fd = this.fd;
    this.fd = undefined;
    this.parts = [];
    try {
      closeFile(fd, this.file);
    } catch {
      // the first error is the one to report
    }
  }
}

/** What an export wrote. */
export interface ExportResult {
  file: string;
  ticks: number;
  bytes: number;
  info: RecordingInfo;
}

/** Writes the ticks of a recording as CSV: a header row, then one row per tick. */
export async function exportCsv(recording: string, out: string): Promise<ExportResult> {
  notOverInput(recording, out, 'CSV export');
  let sink: FileSink | undefined;
  let cols: CsvColumn[] = [];
  let ticks = 0;
  try {
    const info = await readRecording(recording, {
      header: (h) => {
        cols = csvColumns(h.joints);
        sink = new FileSink(out);
        sink.write(`${cols.map((c) => c.name).join(',')}\n`);
      },
      tick: (row) => {
        sink!.write(`${cols.map((c) => cell(c.get(row))).join(',')}\n`);
        ticks++;
      },
    });
    sink!.close();
    return { file: out, ticks, bytes: sink!.bytes, info };
  } catch (e) {
    sink?.abandon();
    throw e;
  }
}

// ---------------------------------------------------------------------------------------------
// MCAP

const vec = (joints: number, what: string): object => ({ type: 'array', items: { type: 'number' }, minItems: joints, maxItems: joints, description: what });

/** The JSON schema of a tick message (the recording's tick line without "kind"), from the tick table. */
export function tickJsonSchema(joints: number): object {
  const properties: Record<string, object> = {};
  for (const spec of TICK_TABLE as readonly TickFieldSpec[]) {
    const description = `${spec.description}${spec.unit ? ` [${spec.unit}]` : ''}`;
    const leaf = spec.codes
      ? { type: 'string', enum: [...spec.codes], description }
      : spec.joints
        ? vec(joints, description)
        : { type: 'number', description };
    if (!spec.group) properties[spec.name] = leaf;
    else {
      const g = (properties[spec.group] ??= { type: 'object', description: TICK_GROUPS[spec.group], properties: {} }) as { properties: Record<string, object> };
      g.properties[spec.name] = leaf;
    }
  }
  return {
    title: 'twolink.Tick',
    description: 'One control tick of twolink (src/telemetry/tick.ts). Arrays have one entry per joint.',
    type: 'object',
    properties,
  };
}

const EVENT_SCHEMA = {
  title: 'twolink.Event',
  description: 'An event of the run: connected, state, trajectory, alarm, link (as the recording has it).',
  type: 'object',
  additionalProperties: true,
};

/** An MCAP sink writing straight to a file descriptor. */
class FileWritable implements IWritable {
  private pos = 0n;
  constructor(private readonly sink: FileSink) {}
  write(buffer: Uint8Array): Promise<void> {
    this.sink.write(buffer);
    this.pos += BigInt(buffer.length);
    return Promise.resolve();
  }
  position(): bigint {
    return this.pos;
  }
}

/** Nanoseconds since the Unix epoch of `startedAt` plus `t` seconds. */
function logTime(startNs: bigint, t: number): bigint {
  return startNs + BigInt(Math.round(Math.max(0, Number.isFinite(t) ? t : 0) * 1e9));
}

function stringMap(o: Record<string, unknown>): Map<string, string> {
  return new Map(Object.entries(o).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]));
}

/**
 * The Foxglove scene of a recording in an MCAP (viz/scene.ts): the URDF of the recorded rig on
 * /robot_description at the run's start (the first message of the file), then, decimated to
 * viz's SCENE_RATE_HZ by the loop's clock, /tf for the measured, desired and twin arms, their joint
 * states, the endpoint paths and the estimated endpoint force.
 */
class McapScene {
  private readonly ids = new Map<string, number>();
  private readonly seq = new Map<string, number>();
  private constructor(
    private readonly writer: McapWriter,
    private readonly scene: ArmScene,
  ) {}

  static async open(writer: McapWriter, h: RecordingHeaderLine, file: string, startNs: bigint): Promise<McapScene> {
    const rig = recordedRig({ file, header: h });
    const s = new McapScene(writer, new ArmScene(rig));
    const enc = new TextEncoder();
    for (const c of sceneChannels()) {
      const schemaId = await writer.registerSchema({ name: c.schemaName, encoding: c.schemaEncoding, data: enc.encode(c.schema) });
      s.ids.set(c.topic, await writer.registerChannel({ topic: c.topic, schemaId, messageEncoding: c.encoding, metadata: new Map() }));
    }
    await s.write(SCENE_TOPICS.description, cdrString(armUrdf(rig)), startNs);
    return s;
  }

  private async write(topic: string, data: Uint8Array, time: bigint): Promise<void> {
    const sequence = this.seq.get(topic) ?? 0;
    this.seq.set(topic, sequence + 1);
    await this.writer.addMessage({ channelId: this.ids.get(topic)!, sequence, logTime: time, publishTime: time, data });
  }

  async tick(row: Float64Array, time: bigint): Promise<void> {
    if (!this.scene.accept(row[F.t]!)) return;
    for (const m of this.scene.messages(row, time)) await this.write(m.topic, m.data, time);
  }
}

/** MCAP topics written by `exportMcap` (besides the scene's, viz/scene.ts SCENE_TOPICS). */
export const MCAP_TOPICS = { tick: TICK_TOPIC, event: '/twolink/event' } as const;

/**
 * Writes a recording as MCAP: the Foxglove scene (McapScene: the URDF first, the three arms), one
 * JSON message per tick on /twolink/tick at its log time (the run's
 * start plus the tick's loop time), events on /twolink/event, each channel with a JSON schema; the
 * header as metadata "twolink.header" and the summary as "twolink.summary". Indexed and chunked
 * (uncompressed), so Foxglove can seek in it.
 */
export async function exportMcap(recording: string, out: string): Promise<ExportResult> {
  notOverInput(recording, out, 'MCAP export');
  const sink = new FileSink(out);
  const writer = new McapWriter({ writable: new FileWritable(sink), useStatistics: true, useChunks: true, useChunkIndex: true, useMessageIndex: true, useMetadataIndex: true, useSummaryOffsets: true });
  const enc = new TextEncoder();
  let tickChannel = 0;
  let eventChannel = 0;
  let startNs = 0n;
  let joints = 2;
  let ticks = 0;
  let lastT = 0;
  let eventSeq = 0;
  let scene: McapScene | undefined;
  const row = new Float64Array(TICK_WIDTH);
  try {
    await writer.start({ profile: '', library: `twolink ${VERSION}` });
    const info = await readRecording(recording, {
      header: async (h) => {
        joints = h.joints;
        const ms = Date.parse(h.startedAt);
        startNs = Number.isFinite(ms) ? BigInt(ms) * 1_000_000n : 0n;
        scene = await McapScene.open(writer, h, recording, startNs);
        const tickSchema = await writer.registerSchema({ name: 'twolink.Tick', encoding: 'jsonschema', data: enc.encode(JSON.stringify(tickJsonSchema(joints))) });
        const eventSchema = await writer.registerSchema({ name: 'twolink.Event', encoding: 'jsonschema', data: enc.encode(JSON.stringify(EVENT_SCHEMA)) });
        tickChannel = await writer.registerChannel({ topic: MCAP_TOPICS.tick, schemaId: tickSchema, messageEncoding: 'json', metadata: new Map() });
        eventChannel = await writer.registerChannel({ topic: MCAP_TOPICS.event, schemaId: eventSchema, messageEncoding: 'json', metadata: new Map() });
        const { kind: _kind, ...rest } = h;
        await writer.addMetadata({ name: 'twolink.header', metadata: stringMap(rest) });
      },
      tick: async (r) => {
        row.set(r);
        const time = logTime(startNs, row[F.t]!);
        lastT = row[F.t]!;
        await writer.addMessage({ channelId: tickChannel, sequence: ticks, logTime: time, publishTime: time, data: enc.encode(JSON.stringify(tickObject(row, joints))) });
        await scene!.tick(row, time);
        ticks++;
      },
      event: async (e) => {
        const time = logTime(startNs, e.t ?? lastT);
        await writer.addMessage({ channelId: eventChannel, sequence: eventSeq++, logTime: time, publishTime: time, data: enc.encode(JSON.stringify(e.data)) });
      },
    });
    if (info.summary) {
      const { kind: _kind, ...rest } = info.summary;
      await writer.addMetadata({ name: 'twolink.summary', metadata: stringMap(rest) });
    }
    if (info.truncated) {
      await writer.addMetadata({ name: 'twolink.recording', metadata: stringMap({ truncated: `line ${info.truncated.line} was cut short and left out` }) });
    }
    await writer.end();
    sink.close();
    return { file: out, ticks, bytes: sink.bytes, info };
  } catch (e) {
    sink.abandon();
    throw e;
  }
}
