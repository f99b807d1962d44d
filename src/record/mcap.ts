/**
 * The MCAP of a run, written once for both ways one is made: `twolink compare --export mcap` from an
 * NDJSON recording (record/export.ts, exportMcap) and `twolink run --record F.mcap` while the arm
 * runs (McapRecorder, given to the session). The channels: the Foxglove scene (viz/scene.ts: the URDF
 * on /robot_description first, then /tf for the measured, desired and twin arms, their joint states,
 * the endpoint paths and the estimated endpoint force, decimated to SCENE_RATE_HZ of the loop's
 * clock), one JSON message per tick on /twolink/tick, the events on /twolink/event; the header and
 * the summary as metadata. Indexed and chunked (uncompressed), so Foxglove can seek in it.
 */
import { McapRecordBuilder, McapWriter, Opcode, type IWritable } from '@mcap/core';
import type { Rig } from '../config/load.js';
import { compactSummary, eventLine, type RecordingHeader, type RunRecorder } from '../telemetry/recorder.js';
import { F, TICK_GROUPS, TICK_TABLE, tickJson, type TickFieldSpec } from '../telemetry/tick.js';
import { VERSION } from '../version.js';
import { armUrdf } from '../viz/urdf.js';
import { ArmScene, cdrString, sceneChannels, SCENE_TOPICS, TICK_TOPIC } from '../viz/scene.js';
import { FileSink, type WriteFn } from './file-sink.js';

const vec = (joints: number, what: string): object => ({
  type: 'array',
  items: { type: 'number' },
  minItems: joints,
  maxItems: joints,
  description: what,
});

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
      const g = (properties[spec.group] ??= { type: 'object', description: TICK_GROUPS[spec.group], properties: {} }) as {
        properties: Record<string, object>;
      };
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

/** MCAP topics of a run besides the scene's (viz/scene.ts SCENE_TOPICS). */
export const MCAP_TOPICS = { tick: TICK_TOPIC, event: '/twolink/event' } as const;

/** An MCAP sink writing to a file through a FileSink; `onChunk` after a chunk record was handed over. */
class FileWritable implements IWritable {
  private pos = 0n;
  /** Where the DataEnd record starts, once the writer has begun its end. */
  dataEndAt: number | undefined;
  /** Called after a chunk record was handed to the sink. */
  onChunk: () => void = () => undefined;
  constructor(private readonly sink: FileSink) {}
  write(buffer: Uint8Array): Promise<void> {
    if (buffer[0] === Opcode.DATA_END) this.dataEndAt ??= this.sink.bytes;
    this.sink.write(buffer);
    this.pos += BigInt(buffer.length);
    // The writer hands over each chunk record in a write of its own (McapWriter's #finalizeChunk).
    if (buffer[0] === Opcode.CHUNK) this.onChunk();
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

/** What the writer needs of a recording's header line: its start, its joints, the rest as metadata. */
export interface McapHeader {
  startedAt: string;
  joints: number;
  [key: string]: unknown;
}

/** How a run's MCAP is written: the export's defaults, or a live recording's small chunks written at once. */
export interface McapWriteOptions {
  /** A chunk is written once its messages pass this size [bytes]. @default 1 MB (McapWriter's) */
  chunkBytes?: number;
  /** Bytes the file sink keeps before writing them [bytes]; 0 writes each chunk as it is made. @default 1 MB */
  bufferBytes?: number;
  /** The write call (fs.writeSync); tests play a full disk with it. */
  writeFn?: WriteFn;
  /** Keep RESERVE_BYTES free to end the file (file-sink.ts), with the disk's free space from `free` (statfs by default). */
  reserve?: boolean;
  free?: () => number | undefined;
}

/** The size of a live recording's chunks [bytes]: ~50 ms of a 1 kHz run, the most a full disk or a crash loses. */
export const LIVE_CHUNK_BYTES = 64 * 1024;

/** The MCAP writer of one run: open with the header, then ticks and events in order, then end. */
export class McapRunWriter {
  private readonly enc = new TextEncoder();
  private readonly ids = new Map<string, number>();
  private readonly seq = new Map<string, number>();
  private readonly scene: ArmScene;
  private readonly startNs: bigint;
  private lastT = 0;
  /** Ticks handed to the MCAP writer. */
  private added = 0;
  /** Ticks in chunks handed to the file (on disk when the sink writes at once: `bufferBytes: 0`). */
  ticks = 0;

  private constructor(
    private readonly sink: FileSink,
    private readonly writable: FileWritable,
    private readonly writer: McapWriter,
    rig: Rig,
    private readonly header: McapHeader,
  ) {
    this.scene = new ArmScene(rig);
    const ms = Date.parse(header.startedAt);
    this.startNs = Number.isFinite(ms) ? BigInt(ms) * 1_000_000n : 0n;
  }

  /** Bytes in the file so far. */
  get bytes(): number {
    return this.sink.bytes;
  }

  /**
   * Creates `out` (a FileError naming it if it cannot) and writes the channels, the description of
   * `rig` (the first message) and the header as metadata "twolink.header".
   */
  static async open(out: string, rig: Rig, header: McapHeader, o: McapWriteOptions = {}): Promise<McapRunWriter> {
    const sink = new FileSink(out, {
      ...(o.bufferBytes !== undefined ? { bufferBytes: o.bufferBytes } : {}),
      ...(o.writeFn ? { writeFn: o.writeFn } : {}),
      ...(o.reserve ? { reserve: true } : {}),
      ...(o.free ? { free: o.free } : {}),
    });
    const writable = new FileWritable(sink);
    const writer = new McapWriter({
      writable,
      useStatistics: true,
      useChunks: true,
      useChunkIndex: true,
      useMessageIndex: true,
      useMetadataIndex: true,
      useSummaryOffsets: true,
      ...(o.chunkBytes !== undefined ? { chunkSize: o.chunkBytes } : {}),
    });
    const w = new McapRunWriter(sink, writable, writer, rig, header);
    writable.onChunk = () => {
      w.ticks = w.added;
    };
    try {
      await writer.start({ profile: '', library: `twolink ${VERSION}` });
      const channels = [
        ...sceneChannels(),
        {
          topic: MCAP_TOPICS.tick,
          schemaName: 'twolink.Tick',
          schemaEncoding: 'jsonschema',
          schema: JSON.stringify(tickJsonSchema(header.joints)),
          encoding: 'json',
        },
        {
          topic: MCAP_TOPICS.event,
          schemaName: 'twolink.Event',
          schemaEncoding: 'jsonschema',
          schema: JSON.stringify(EVENT_SCHEMA),
          encoding: 'json',
        },
      ];
      for (const c of channels) {
        const schemaId = await writer.registerSchema({ name: c.schemaName, encoding: c.schemaEncoding, data: w.enc.encode(c.schema) });
        w.ids.set(c.topic, await writer.registerChannel({ topic: c.topic, schemaId, messageEncoding: c.encoding, metadata: new Map() }));
      }
      await w.write(SCENE_TOPICS.description, cdrString(armUrdf(rig)), w.startNs);
      const { kind: _kind, ...rest } = header;
      await writer.addMetadata({ name: 'twolink.header', metadata: stringMap(rest) });
      return w;
    } catch (e) {
      w.abandon();
      throw e;
    }
  }

  private async write(topic: string, data: Uint8Array, time: bigint): Promise<void> {
    const sequence = this.seq.get(topic) ?? 0;
    this.seq.set(topic, sequence + 1);
    await this.writer.addMessage({ channelId: this.ids.get(topic)!, sequence, logTime: time, publishTime: time, data });
  }

  /** A tick row: its JSON message, and the scene's messages if the row is drawn. */
  async tick(row: ArrayLike<number>): Promise<void> {
    const t = row[F.t]!;
    const time = logTime(this.startNs, t);
    this.lastT = t;
    this.added++;
    await this.write(MCAP_TOPICS.tick, this.enc.encode(tickJson(row, this.header.joints)), time);
    if (this.scene.accept(t)) for (const m of this.scene.messages(row, time)) await this.write(m.topic, this.enc.encode(m.json), time);
  }

  /** An event line (as the recording holds it), at its loop time `t` or the last tick's. */
  async event(data: Record<string, unknown>, t: number | undefined): Promise<void> {
    await this.write(MCAP_TOPICS.event, this.enc.encode(JSON.stringify(data)), logTime(this.startNs, t ?? this.lastT));
  }

  /** The summary as metadata "twolink.summary", `extra` metadata records, the MCAP's index and footer; closes the file. */
  async end(summary: Record<string, unknown> | undefined, extra: Record<string, Record<string, unknown>> = {}): Promise<void> {
    if (summary) {
      const { kind: _kind, ...rest } = summary;
      await this.writer.addMetadata({ name: 'twolink.summary', metadata: stringMap(rest) });
    }
    for (const [name, m] of Object.entries(extra)) await this.writer.addMetadata({ name, metadata: stringMap(m) });
    await this.writer.end();
    this.sink.close();
  }

  /** Closes after a failure, without writing what is pending. */
  abandon(): void {
    this.sink.abandon();
  }

  /**
   * After a failed write (a full disk; the file cut back to its last whole record by the sink): ends
   * the file as an MCAP that a streaming reader takes to its end, if the disk still takes the few
   * bytes: the summary as metadata, then DataEnd and a Footer without a summary section (no index:
   * the writer's own index would name the chunk that failed, and the schemas it repeats take ~55 kB).
   * Failing that, the same with the summary's short form (compactSummary), then without it; failing
   * that, the file ends at its last whole chunk. Closes the file. True if a footer was written.
   */
  endAfterFailure(summary: Record<string, unknown> | undefined): boolean {
    const tail = (s: Record<string, unknown> | undefined): Uint8Array => {
      const b = new McapRecordBuilder();
      if (s) {
        const { kind: _kind, ...rest } = s;
        b.writeMetadata({ name: 'twolink.summary', metadata: stringMap(rest) });
      }
      b.writeDataEnd({ dataSectionCrc: 0 });
      b.writeFooter({ summaryStart: 0n, summaryOffsetStart: 0n, summaryCrc: 0 });
      b.writeMagic();
      return b.buffer.slice();
    };
    // A failure inside the writer's end: drop its DataEnd and the part of its summary section written.
    if (this.writable.dataEndAt !== undefined) this.sink.cut(this.writable.dataEndAt);
    const tails = summary ? [summary, compactSummary(summary), undefined] : [undefined];
    const ok = tails.some((x) => this.sink.tryWrite(tail(x)) === undefined);
    this.sink.abandon();
    return ok;
  }
}

/**
 * `twolink run --record F.mcap`: the session's recorder (telemetry/recorder.ts RunRecorder) writing
 * the MCAP of McapRunWriter as the rows are drained, on the main thread, in chunks of
 * LIVE_CHUNK_BYTES written as each fills (so a crash or a full disk loses at most the chunk being
 * filled). The writer's steps are chained in order (its writes to the file are synchronous, so the
 * chain keeps up within the drain's turn); a failure (a full disk) is kept and `flush` returns false,
 * which stops the arm as for NDJSON; the file then ends at its last whole chunk, and `close` adds the
 * summary and a footer if the disk takes them (McapRunWriter.endAfterFailure). `ticks` counts the
 * ticks in the chunks written. `done` settles once the file is complete after `close`.
 */
export class McapRecorder implements RunRecorder {
  private chain: Promise<void> = Promise.resolve();
  private writer: McapRunWriter | undefined;
  failure: Error | undefined;
  private closed = false;

  constructor(
    readonly file: string,
    private readonly rig: Rig,
    private readonly o: McapWriteOptions = {},
  ) {}

  /** Ticks the file holds (in its written chunks). */
  get ticks(): number {
    return this.writer?.ticks ?? 0;
  }

  private then(step: () => Promise<void> | void): void {
    this.chain = this.chain
      .then(() => (this.failure ? undefined : step()))
      .catch((e: unknown) => {
        this.failure ??= e instanceof Error ? e : new Error(String(e));
      });
  }

  open(header: RecordingHeader): void {
    this.then(async () => {
      this.writer = await McapRunWriter.open(this.file, this.rig, header, {
        chunkBytes: LIVE_CHUNK_BYTES,
        bufferBytes: 0,
        reserve: true,
        ...this.o,
      });
    });
  }

  tick(row: ArrayLike<number>): void {
    if (this.failure || this.closed) return;
    const copy = Float64Array.from(row);
    this.then(() => this.writer!.tick(copy));
  }

  event(e: Record<string, unknown>): void {
    if (this.failure || this.closed) return;
    const line: Record<string, unknown> = { kind: 'event', ...eventLine(e) };
    this.then(() => this.writer!.event(line, typeof line.t === 'number' ? line.t : undefined));
  }

  flush(): boolean {
    return !this.failure;
  }

  close(summary: Record<string, unknown>): void {
    if (this.closed) return;
    this.closed = true;
    const all = { kind: 'summary', ...summary };
    this.chain = this.chain
      .then(async () => {
        if (!this.failure) await this.writer?.end(all);
      })
      .catch((e: unknown) => {
        this.failure ??= e instanceof Error ? e : new Error(String(e));
      })
      .then(() => {
        if (!this.failure) return;
        // The summary as written before the failure was known says nothing of it: say it now.
        this.writer?.endAfterFailure({ ...all, recordingFailure: this.failure.message, recordedTicks: this.ticks });
      });
  }

  /** Settles when everything handed over is written (the file complete after `close`); never rejects. */
  get done(): Promise<void> {
    return this.chain;
  }
}
