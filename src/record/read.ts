/**
 * Reading a recording back: the NDJSON that recorder.ts writes (a header line, tick lines, event
 * lines, and a summary line when the run ended cleanly), or the MCAP of `run --record F.mcap` and
 * `compare --export mcap` (record/mcap.ts: the header and summary as metadata, the ticks and events as
 * JSON messages), told apart by the MCAP magic at the file's start. Both go through the same
 * validation, so an MCAP reads back as the NDJSON of the same run does.
 *
 * The file is streamed line by line and every line is validated with zod, so a ten-minute run at
 * 1 kHz is never held as text or as objects: each tick is turned into the loop's flat row
 * (tick.ts) and handed to the caller, who keeps what it needs (see `Columns`).
 *
 * A crash can leave the last line cut short: that line is ignored and reported in
 * `RecordingInfo.truncated`. A bad line anywhere else is a `RecordingError` naming the file and the
 * line number. An MCAP is read with @mcap/core's streaming reader, which takes a file cut short (a
 * crash, a full disk: no footer) up to its last whole record (chunk CRCs checked); what follows it is
 * reported in `RecordingInfo.truncated`.
 */
import { closeSync, createReadStream, openSync, readSync } from 'node:fs';
import { MCAP_MAGIC, McapStreamReader } from '@mcap/core';
import { z } from 'zod';
import { checkReadableFile, errnoText, FileError, formatBytes } from '../config/files.js';
import { resolveRig, type Rig } from '../config/load.js';
import { describeIssues, parseRigFile } from '../config/rig.js';
import { stopSchema } from '../run/stop-schema.js';
import { recordingHeaderSchema, type RecordingHeaderLine } from '../telemetry/header.js';
import { F, TICK_TABLE, TICK_WIDTH, tickRow, type TickField, type TickFieldSpec, type TickObject } from '../telemetry/tick.js';

/** A recording that cannot be read: the message starts with `file:line:` when a line is at fault. */
export class RecordingError extends Error {
  override readonly name = 'RecordingError';
  constructor(
    readonly file: string,
    detail: string,
    /** 1-based line number of the line at fault, when one is. */
    readonly line?: number,
  ) {
    super(`${file}${line !== undefined ? `:${line}` : ''}: ${detail}`);
  }
}

/**
 * JSON has no NaN: JSON.stringify writes a non-finite number as null. A null where a number belongs
 * is refused, naming the line and the field: the run computed a NaN or an Infinity there, and every
 * statistic over it would be wrong (a NaN is a fault wherever it appears).
 */
const num = z.number({
  error: (iss) =>
    iss.input === null
      ? 'a non-finite number: the run wrote a NaN or an Infinity here (JSON null), so no statistic over it can be trusted'
      : undefined,
});

/** Longest line read [bytes]: a header carries the rig file and the trajectories; a tick is ~1 kB. */
export const MAX_LINE_BYTES = 8 << 20;

/**
 * The lines of a file, streamed, without their LF (and CR); a line longer than `maxBytes` is a
 * RecordingError naming it, so a file with a 600 MB line is never held as one string. The last line
 * comes out even without its LF.
 */
async function* boundedLines(file: string, maxBytes: number): AsyncGenerator<string> {
  const stream = createReadStream(file, { encoding: 'utf8', highWaterMark: 256 * 1024 });
  let pending = '';
  let n = 0;
  const tooLong = (): RecordingError =>
    new RecordingError(file, `the line is longer than ${formatBytes(maxBytes)}: not a twolink recording line`, n + 1);
  try {
    for await (const chunk of stream as AsyncIterable<string>) {
      let start = 0;
      for (;;) {
        const nl = chunk.indexOf('\n', start);
        if (nl < 0) {
          if (pending.length + chunk.length - start > maxBytes) throw tooLong();
          pending += chunk.slice(start);
          break;
        }
        if (pending.length + nl - start > maxBytes) throw tooLong();
        let line = pending + chunk.slice(start, nl);
        pending = '';
        if (line.endsWith('\r')) line = line.slice(0, -1);
        n++;
        yield line;
        start = nl + 1;
      }
    }
    if (pending !== '') yield pending;
  } finally {
    stream.destroy();
  }
}

/** The header line's schema is written once, beside the writer (telemetry/header.ts). */
const headerSchema = recordingHeaderSchema;
export type { RecordingHeaderLine };

/**
 * The zod schema of a tick line, generated from the tick table: numbers, per-joint arrays of
 * `joints` numbers, words for coded fields; fields added after recordings existed are optional.
 * Keys are in the table's order, so the first problem named is the first in the line.
 */
function tickSchema(joints: 1 | 2): z.ZodType<TickObject> {
  const vec = z.array(num).length(joints);
  const leaf = (s: TickFieldSpec): z.ZodType => {
    const t = s.codes ? z.enum(s.codes as readonly [string, ...string[]]) : s.joints ? vec : num;
    return s.absent !== undefined ? t.optional() : t;
  };
  const top: Record<string, z.ZodType | Record<string, z.ZodType>> = { kind: z.literal('tick') };
  for (const s of TICK_TABLE as readonly TickFieldSpec[]) {
    if (s.group) ((top[s.group] ??= {}) as Record<string, z.ZodType>)[s.name] = leaf(s);
    else top[s.name] = leaf(s);
  }
  // A group whose fields all came after recordings existed (`plant`) may be absent as a whole.
  const lateGroup = (g: string): boolean => (TICK_TABLE as readonly TickFieldSpec[]).every((s) => s.group !== g || s.absent !== undefined);
  const shape = Object.fromEntries(
    Object.entries(top).map(([k, v]) => [k, v instanceof z.ZodType ? v : lateGroup(k) ? z.object(v).optional() : z.object(v)]),
  );
  return z.object(shape) as unknown as z.ZodType<TickObject>;
}

const summarySchema = z.looseObject({
  kind: z.literal('summary'),
  ticks: z.number(),
  /** The stop in words (every recording has it). */
  stopReason: z.string(),
  /** The stop as a value; absent in recordings made before it was written. */
  stop: stopSchema.optional(),
});

/** The summary line (RunSummary of stats.ts, plus what the session adds). */
export type RecordingSummaryLine = z.infer<typeof summarySchema>;

const otherSchema = z.looseObject({ kind: z.string(), t: z.number().optional() });

/** An event line: a connection, a state change, an alarm, a trajectory phase, a link event. */
export interface RecordingEvent {
  /** 1-based line number (in an MCAP: the message's number among twolink's ticks and events). */
  line: number;
  /** What happened: 'connected', 'state', 'trajectory', 'alarm', 'link', ... */
  what: string;
  /** Loop time [s], when the event has one. */
  t?: number;
  /** The line as written. */
  data: Record<string, unknown>;
}

/** What a read found besides the ticks. */
export interface RecordingInfo {
  file: string;
  /** The file's format (told by its first bytes). */
  format: 'ndjson' | 'mcap';
  header: RecordingHeaderLine;
  /** Tick lines read. */
  ticks: number;
  /** Events, in order (the first `MAX_EVENTS`; `eventCount` counts them all). */
  events: RecordingEvent[];
  eventCount: number;
  /** Absent when the run did not end cleanly (a crash, a kill, a full disk). */
  summary?: RecordingSummaryLine;
  /**
   * Set when the file was cut short (a crash while writing, a full disk). NDJSON: the last line, cut,
   * was ignored (`line`: its number, `bytes`: its length). MCAP: the file has no footer; `line` is the
   * number of messages read, `bytes` what follows the last whole record (0 when the file ends at one).
   */
  truncated?: { line: number; bytes: number };
}

/** Events kept in `RecordingInfo.events`. */
export const MAX_EVENTS = 10_000;

/** What a reader wants to hear about, in file order. */
export interface RecordingVisitor {
  /** The header (always first). */
  header?(h: RecordingHeaderLine): void | Promise<void>;
  /**
   * A tick as the loop's flat row (tick.ts layout). The row is reused for the next tick: copy what
   * you keep. Returning a promise pauses reading until it settles.
   */
  tick?(row: Float64Array, line: number): void | Promise<void>;
  event?(e: RecordingEvent): void | Promise<void>;
}

function message(issues: readonly z.core.$ZodIssue[], raw: unknown, what: string): string {
  const { lines } = describeIssues(issues, raw);
  return `bad ${what} line: ${lines.slice(0, 3).join('; ')}`;
}

/**
 * Streams a recording through `visitor`. Throws a RecordingError naming the line for a bad line
 * (except a cut-short last line, which is reported in the result), a missing header, a file with no
 * tick lines, or a file that cannot be read.
 */
export async function readRecording(file: string, visitor: RecordingVisitor = {}): Promise<RecordingInfo> {
  try {
    checkReadableFile(file, 'recording');
  } catch (e) {
    if (e instanceof FileError) throw new RecordingError(file, e.message.slice(file.length + 2));
    throw e;
  }
  if (startsWithMcapMagic(file)) return readMcapRecording(file, visitor);
  const lines = new LineVisitor(file, visitor, 'line');
  // A line that is not JSON is an error only once another line follows it.
  let broken: { line: number; bytes: number; why: string } | undefined;
  let n = 0;
  try {
    for await (const text of boundedLines(file, MAX_LINE_BYTES)) {
      n++;
      if (text.trim() === '') continue;
      if (broken) throw new RecordingError(file, broken.why, broken.line);
      let raw: unknown;
      try {
        raw = JSON.parse(text);
      } catch (e) {
        broken = { line: n, bytes: Buffer.byteLength(text), why: `not JSON (${(e as Error).message})` };
        continue;
      }
      if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new RecordingError(file, 'not a JSON object', n);
      await lines.line(raw as Record<string, unknown>, n);
    }
  } catch (e) {
    // A visitor's output file (an export to a full disk) is named by its own FileError.
    if (e instanceof RecordingError || e instanceof FileError) throw e;
    const code = (e as NodeJS.ErrnoException).code;
    throw new RecordingError(file, code ? errnoText(e, false) : (e as Error).message);
  }
  const { header, summary, ticks, events, eventCount } = lines;
  if (!header) {
    if (broken) throw new RecordingError(file, broken.why, broken.line);
    throw new RecordingError(file, 'empty: no header line');
  }
  if (ticks === 0) throw new RecordingError(file, 'no tick lines: the run recorded nothing');
  return {
    file,
    format: 'ndjson',
    header,
    ticks,
    events,
    eventCount,
    ...(summary ? { summary } : {}),
    ...(broken ? { truncated: { line: broken.line, bytes: broken.bytes } } : {}),
  };
}

/** Whether `file` starts with the MCAP magic (record/mcap.ts writes it; NDJSON starts with `{`). */
function startsWithMcapMagic(file: string): boolean {
  const head = Buffer.alloc(MCAP_MAGIC.length);
  let fd: number | undefined;
  try {
    fd = openSync(file, 'r');
    const n = readSync(fd, head, 0, head.length, 0);
    return n === head.length && MCAP_MAGIC.every((b, k) => head[k] === b);
  } catch {
    return false; // the NDJSON reader names the problem
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** The MCAP topics that hold a recording's lines (record/mcap.ts MCAP_TOPICS; kept apart to spare the reader the scene). */
const MCAP_TICK_TOPIC = '/twolink/tick';
const MCAP_EVENT_TOPIC = '/twolink/event';

/** Header and summary fields that are words: kept as written, never JSON-parsed (a version "1" stays a string). */
const WORD_FIELDS = new Set(['twolink', 'startedAt', 'feedforward', 'clock', 'startedBy', 'stopReason', 'recordingFailure']);

/** An MCAP metadata record as the line it stands for: its values are JSON text or words (record/mcap.ts stringMap). */
function metadataLine(kind: string, m: ReadonlyMap<string, string>): Record<string, unknown> {
  const o: Record<string, unknown> = { kind };
  for (const [k, v] of m) {
    if (WORD_FIELDS.has(k)) o[k] = v;
    else {
      try {
        o[k] = JSON.parse(v);
      } catch {
        o[k] = v;
      }
    }
  }
  return o;
}

/**
 * Streams an MCAP recording (record/mcap.ts) through `visitor`: the "twolink.header" metadata as the
 * header, the /twolink/tick and /twolink/event messages as tick and event lines, "twolink.summary" as
 * the summary (handed over last: the writer puts it before its last chunk). A file cut short is read
 * to its last whole record and reported in `truncated`.
 */
async function readMcapRecording(file: string, visitor: RecordingVisitor): Promise<RecordingInfo> {
  const lines = new LineVisitor(file, visitor, 'message');
  const reader = new McapStreamReader({ validateCrcs: true });
  const topics = new Map<number, string>();
  const dec = new TextDecoder();
  let summary: Record<string, unknown> | undefined;
  let n = 0;
  const json = (data: Uint8Array, what: string): Record<string, unknown> => {
    let raw: unknown;
    try {
      raw = JSON.parse(dec.decode(data));
    } catch (e) {
      throw new RecordingError(file, `MCAP message ${n} (${what}): not JSON (${(e as Error).message})`);
    }
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
      throw new RecordingError(file, `MCAP message ${n} (${what}): not a JSON object`);
    return raw as Record<string, unknown>;
  };
  const stream = createReadStream(file, { highWaterMark: 1 << 20 });
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      reader.append(chunk);
      for (let r = next(reader, file); r; r = next(reader, file)) {
        if (r.type === 'Channel') topics.set(r.id, r.topic);
        else if (r.type === 'Metadata') {
          if (r.name === 'twolink.header') await lines.line(metadataLine('header', r.metadata), 0);
          else if (r.name === 'twolink.summary') summary = metadataLine('summary', r.metadata);
        } else if (r.type === 'Message') {
          const topic = topics.get(r.channelId);
          if (topic !== MCAP_TICK_TOPIC && topic !== MCAP_EVENT_TOPIC) continue;
          n++;
          if (!lines.header)
            throw new RecordingError(
              file,
              `MCAP message ${n} on ${topic} comes before twolink's header (the metadata "twolink.header"): not a twolink recording`,
            );
          await lines.line(topic === MCAP_TICK_TOPIC ? { kind: 'tick', ...json(r.data, topic) } : json(r.data, topic), n);
        }
      }
    }
  } catch (e) {
    if (e instanceof RecordingError || e instanceof FileError) throw e;
    const code = (e as NodeJS.ErrnoException).code;
    throw new RecordingError(file, code ? errnoText(e, false) : (e as Error).message);
  } finally {
    stream.destroy();
  }
  if (summary) await lines.line(summary, n + 1);
  const { header, ticks, events, eventCount } = lines;
  if (!header)
    throw new RecordingError(file, 'an MCAP without the metadata "twolink.header" (or cut short before it): not a twolink recording');
  if (ticks === 0)
    throw new RecordingError(
      file,
      `no messages on ${MCAP_TICK_TOPIC}: the run recorded nothing${reader.done() ? '' : ' (the file is cut short before its first whole chunk)'}`,
    );
  return {
    file,
    format: 'mcap',
    header,
    ticks,
    events,
    eventCount,
    ...(lines.summary ? { summary: lines.summary } : {}),
    ...(reader.done() ? {} : { truncated: { line: n, bytes: reader.bytesRemaining() } }),
  };
}

/** The next record of an MCAP stream; a record the reader refuses (a bad CRC, a bad length) is a RecordingError. */
function next(reader: McapStreamReader, file: string): ReturnType<McapStreamReader['nextRecord']> {
  try {
    return reader.nextRecord();
  } catch (e) {
    throw new RecordingError(file, `not a valid MCAP: ${(e as Error).message}`);
  }
}

/** The lines of a recording after the JSON parse: validated in order and handed to the visitor. */
class LineVisitor {
  header: RecordingHeaderLine | undefined;
  summary: RecordingSummaryLine | undefined;
  ticks = 0;
  eventCount = 0;
  readonly events: RecordingEvent[] = [];
  private schema: ReturnType<typeof tickSchema> | undefined;
  private summaryLine = 0;
  private readonly row = new Float64Array(TICK_WIDTH);
  /** The last tick: ticks come in the loop's order (i increases, t does not go back). */
  private last: { i: number; t: number; line: number } | undefined;

  constructor(
    private readonly file: string,
    private readonly visitor: RecordingVisitor,
    /** What `n` counts: NDJSON lines, or an MCAP's messages (ticks and events). */
    private readonly unit: 'line' | 'message',
  ) {}

  /** A RecordingError at line (or MCAP message) `n`. */
  private err(detail: string, n: number): RecordingError {
    return this.unit === 'line' ? new RecordingError(this.file, detail, n) : new RecordingError(this.file, `MCAP message ${n}: ${detail}`);
  }

  async line(raw: Record<string, unknown>, n: number): Promise<void> {
    const kind = raw.kind;
    if (!this.header) {
      const r = headerSchema.safeParse(raw);
      if (!r.success) {
        const why =
          kind === 'header'
            ? message(r.error.issues, raw, 'header')
            : 'the first line is not a header line ({"kind":"header",...}): is this a twolink recording?';
        throw this.err(why, n);
      }
      this.header = r.data;
      this.schema = tickSchema(r.data.joints);
      await this.visitor.header?.(r.data);
      return;
    }
    if (this.summary) throw this.err(`a line after the summary line (line ${this.summaryLine})`, n);
    if (kind === 'tick') return this.tick(raw, n);
    if (kind === 'header') throw this.err('a second header line', n);
    if (kind === 'summary') {
      const r = summarySchema.safeParse(raw);
      if (!r.success) throw this.err(message(r.error.issues, raw, 'summary'), n);
      this.summary = r.data;
      this.summaryLine = n;
      return;
    }
    const r = otherSchema.safeParse(raw);
    if (!r.success) throw this.err(message(r.error.issues, raw, 'event'), n);
    // Event lines: {"kind":"event","event":"state"|"alarm"|...}; older recordings wrote
    // {"kind": <the loop event's kind>, "event": "loop", ...}.
    const d = r.data as Record<string, unknown>;
    const what = d.event === 'loop' || typeof d.event !== 'string' ? String(d.kind) : d.event;
    const ev: RecordingEvent = { line: n, what, data: d, ...(typeof d.t === 'number' ? { t: d.t } : {}) };
    this.eventCount++;
    if (this.events.length < MAX_EVENTS) this.events.push(ev);
    await this.visitor.event?.(ev);
  }

  private async tick(raw: Record<string, unknown>, n: number): Promise<void> {
    const r = this.schema!.safeParse(raw);
    if (!r.success) throw this.err(message(r.error.issues, raw, 'tick'), n);
    const { i, t } = r.data;
    const last = this.last;
    if (last && (i <= last.i || t < last.t)) {
      throw this.err(
        `tick i = ${i} at t = ${t.toFixed(4)} s comes after tick i = ${last.i} at t = ${last.t.toFixed(4)} s (${this.unit} ${last.line}): the ${this.unit === 'line' ? 'tick lines' : 'ticks'} are out of order or repeated`,
        n,
      );
    }
    this.last = { i, t, line: n };
    tickRow(r.data, this.row);
    this.ticks++;
    const p = this.visitor.tick?.(this.row, n);
    if (p) await p;
  }
}

/**
 * A column store of selected tick fields, for recordings too long to keep as objects: one growable
 * Float64Array per field (8 bytes per field per tick).
 */
export class Columns {
  private readonly data: Float64Array[];
  private readonly at: number[];
  length = 0;

  constructor(
    readonly fields: readonly TickField[],
    capacity = 4096,
  ) {
    this.data = fields.map(() => new Float64Array(capacity));
    this.at = fields.map((f) => F[f]);
  }

  private grow(): void {
    for (let k = 0; k < this.data.length; k++) {
      const bigger = new Float64Array(this.data[k]!.length * 2);
      bigger.set(this.data[k]!);
      this.data[k] = bigger;
    }
  }

  /** Appends the selected fields of a tick row (tick.ts layout). */
  push(row: ArrayLike<number>): void {
    if (this.length === this.data[0]!.length) this.grow();
    for (let k = 0; k < this.data.length; k++) this.data[k]![this.length] = row[this.at[k]!]!;
    this.length++;
  }

  /** The values of a field (a view of `length` values). */
  get(field: TickField): Float64Array {
    const k = this.fields.indexOf(field);
    if (k < 0) throw new Error(`column ${field} was not loaded`);
    return this.data[k]!.subarray(0, this.length);
  }

  has(field: TickField): boolean {
    return this.fields.includes(field);
  }
}

/** A recording read into columns. */
export interface LoadedRecording {
  info: RecordingInfo;
  columns: Columns;
}

/**
 * Reads a recording and keeps the given fields of the ticks that `keep` accepts (all by default).
 */
export async function loadRecording(
  file: string,
  fields: readonly TickField[],
  keep?: (row: Float64Array) => boolean,
): Promise<LoadedRecording> {
  const columns = new Columns(fields);
  const info = await readRecording(file, {
    tick: (row) => {
      if (!keep || keep(row)) columns.push(row);
    },
  });
  return { info, columns };
}

/**
 * The rig a run used, from the rig file the header carries. Throws a RecordingError (line 1) when
 * that content is not a valid rig file for this version of twolink.
 */
export function recordedRig(info: Pick<RecordingInfo, 'file' | 'header'>): Rig {
  const label = `${info.file} (header rig ${info.header.rig.file})`;
  try {
    return resolveRig(parseRigFile(info.header.rig.content, label), info.header.rig.file);
  } catch (e) {
    throw new RecordingError(info.file, `the rig file in the header is not usable: ${(e as Error).message}`, 1);
  }
}
