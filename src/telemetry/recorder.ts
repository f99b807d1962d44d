/**
 * The run recording: NDJSON, one line per tick between a header line (rig file, versions, the
 * trajectories) and a summary line (how the run ended). Lines are written with synchronous writes to
 * the file descriptor in small batches from the main thread (never from the loop), so a crash or a
 * Ctrl-C loses nothing that was handed to the recorder before it, and the file is valid NDJSON up to
 * its last line at any moment.
 *
 * If the disk fills up, the recorder stops writing, keeps the file valid up to the last complete line,
 * and reports the failure; the run decides what to do (twolink stops the arm). At `close` it still
 * tries to add the summary line (the space the cut line took may hold it); if that fails too, the
 * file ends at its last complete tick line. `ticks` counts the tick lines the file holds, never the
 * ones handed over but lost.
 */
import { closeSync, fsyncSync, ftruncateSync, statfsSync, writeSync } from 'node:fs';
import { errnoText, openForWrite } from '../config/files.js';
import { tickObject } from '../telemetry/tick.js';
import { recordingHeaderSchema, type RecordingHeader } from './header.js';

export type { RecordingHeader } from './header.js';

/**
 * What a run records into: the NDJSON `Recorder`, or another format given to the session (the CLI's
 * MCAP recorder, record/mcap.ts). Called from the main thread only; never throws from `tick`/`event`:
 * a write failure is kept in `failure` and `flush` returns false (the run then stops the arm).
 */
export interface RunRecorder {
  readonly file: string;
  /** Tick rows the file holds so far (written and complete: a reader gets every one of them). */
  readonly ticks: number;
  readonly failure: Error | undefined;
  open(header: RecordingHeader): void;
  /** A row (a view: copied if kept). */
  tick(row: ArrayLike<number>): void;
  event(e: Record<string, unknown>): void;
  /** Writes what is pending; false once the recording has failed. */
  flush(): boolean;
  /** Adds the summary (after a failure too, if the file can still take it) and closes the file. */
  close(summary: Record<string, unknown>): void;
}

/**
 * An event line (without `kind`) as recordings hold it: `{"event":"state"|"alarm"|...}`. Loop events
 * carry a `kind` of their own (state, alarm, trajectory, link): it becomes `event`, and a link
 * event's own object moves to `link`.
 */
export function eventLine(e: Record<string, unknown>): Record<string, unknown> {
  const { kind, event, ...rest } = e as { kind?: unknown; event?: unknown };
  const what = typeof event === 'string' ? event : kind;
  return { event: what, ...(event !== undefined && typeof event !== 'string' ? { link: event } : {}), ...rest };
}

/**
 * Free space a recording leaves on its disk to close itself [bytes]: its summary (a few kB) and an
 * MCAP's end. A write that would leave less stops the recording as a full disk does, so that the
 * summary always fits; another program filling the disk first still gives ENOSPC, handled as before.
 */
export const RESERVE_BYTES = 16 * 1024;

/** Free bytes for this user on the disk that holds `file` (statfs), or undefined when it cannot be told. */
export function freeBytes(file: string): number | undefined {
  try {
    const s = statfsSync(file);
    return s.bavail * s.bsize;
  } catch {
    return undefined;
  }
}

/** Why a write of `bytes` is refused by the reserve, or undefined if it may go (`free`: freeBytes). */
export function reserveRefusal(bytes: number, free: number | undefined): Error | undefined {
  if (free === undefined || free - bytes >= RESERVE_BYTES) return undefined;
  return Object.assign(
    new Error(
      `the disk is nearly full (${Math.floor(free / 1024)} kB free; twolink keeps ${RESERVE_BYTES / 1024} kB to close the recording)`,
    ),
    { code: 'ENOSPC' },
  );
}

/**
 * The few fields of a summary a recording keeps when the disk is too full for all of it: how many
 * ticks and how the run stopped (in words and as a value), and why the recording stopped.
 */
export function compactSummary(summary: Record<string, unknown>): Record<string, unknown> {
  const keep = ['kind', 'ticks', 'stopReason', 'stop', 'recordingFailure', 'recordedTicks'];
  return Object.fromEntries(Object.entries(summary).filter(([k]) => keep.includes(k)));
}

export class Recorder implements RunRecorder {
  private fd: number | undefined;
  private pending: string[] = [];
  private pendingBytes = 0;
  /** Tick lines among `pending`. */
  private pendingTicks = 0;
  /** Bytes in the file that end with a complete line. */
  private offset = 0;
  /** Set once the file was cut back to `offset`: writes then say where they go. */
  private wasCut = false;
  /** Tick lines the file holds. */
  ticks = 0;
  /** The write error that stopped the recording, if any. */
  failure: Error | undefined;

  constructor(
    readonly file: string,
    readonly joints: number,
    /**
     * The write call (fs.writeSync at the file's byte `position`, or where the last write ended when
     * null; after a cut the position is given, so that the summary line lands at the cut); tests put
     * a failing one here to play a full disk.
     */
    private readonly writeFn: (fd: number, buf: Buffer, off: number, position: number | null) => number = (fd, buf, off, position) =>
      writeSync(fd, buf, off, buf.length - off, position),
    /** The disk's free space [bytes] (statfs; tests play a nearly full disk with it). */
    private readonly free: () => number | undefined = () => freeBytes(file),
  ) {}

  /**
   * Creates the file and writes the header. Throws a FileError naming the path (a missing folder, a
   * directory, no permission) if it cannot be created; a header the reader would refuse (header.ts)
   * throws before the file is made.
   */
  open(header: RecordingHeader): void {
    const checked = recordingHeaderSchema.safeParse(header);
    if (!checked.success)
      throw new Error(
        `recording ${this.file}: its header would not read back: ${checked.error.issues.map((i) => `${i.path.join('.') || '(header)'}: ${i.message}`).join('; ')}`,
      );
    this.fd = openForWrite(this.file);
    this.line(JSON.stringify(header));
    this.flush();
  }

  private line(s: string): void {
    this.pending.push(s);
    this.pendingBytes += s.length + 1;
  }

  /** Adds a tick row; written at the next flush (or now when the batch is large). */
  tick(row: ArrayLike<number>): void {
    if (this.failure || this.fd === undefined) return;
    this.line(JSON.stringify({ kind: 'tick', ...tickObject(row, this.joints) }));
    this.pendingTicks++;
    if (this.pendingBytes > 64 * 1024) this.flush();
  }

  /** Adds an event line: `{"kind":"event","event":"state"|"alarm"|"trajectory"|"link"|"connected",...}`. */
  event(e: Record<string, unknown>): void {
    if (this.failure || this.fd === undefined) return;
    this.line(JSON.stringify({ kind: 'event', ...eventLine(e) }));
  }

  /** Writes what is pending. Returns false once the recording has failed. */
  flush(): boolean {
    if (this.fd === undefined || this.failure) return !this.failure;
    if (this.pending.length === 0) return true;
    const text = `${this.pending.join('\n')}\n`;
    const ticks = this.pendingTicks;
    this.pending = [];
    this.pendingBytes = 0;
    this.pendingTicks = 0;
    const refused = reserveRefusal(text.length, this.free());
    const e = refused ?? this.append(text);
    if (e !== undefined) {
      this.failure = new Error(`${this.file}: ${refused ? refused.message : errnoText(e, true)}`);
      return false;
    }
    this.ticks += ticks;
    return true;
  }

  /** Writes `text` whole, or cuts what it wrote of it (the file stays valid NDJSON up to its last line) and returns the error. */
  private append(text: string): unknown {
    const buf = Buffer.from(text);
    try {
      let off = 0;
      while (off < buf.length) off += this.writeFn(this.fd!, buf, off, this.wasCut ? this.offset + off : null);
      this.offset += buf.length;
      return undefined;
    } catch (e) {
      this.wasCut = true;
      try {
        ftruncateSync(this.fd!, this.offset);
      } catch {
        // nothing more can be done on this descriptor
      }
      return e;
    }
  }

  /**
   * Writes the summary line and closes the file (fsync first). After a failure the summary line is
   * still tried (the space of the cut batch may hold it): the file then ends with it (or with its
   * short form, compactSummary), else at its last complete line.
   */
  close(summary: Record<string, unknown>): void {
    if (this.fd === undefined) return;
    this.flush();
    const line = { kind: 'summary', ...summary };
    const e = this.append(`${JSON.stringify(line)}\n`);
    if (e !== undefined) {
      this.failure ??= new Error(`${this.file}: ${errnoText(e, true)}`);
      // A full disk: the short form may still fit.
      this.append(`${JSON.stringify(compactSummary(line))}\n`);
    }
    try {
      fsyncSync(this.fd);
    } catch {
      // a full disk or a pipe: nothing more to save
    }
    closeSync(this.fd);
    this.fd = undefined;
  }
}
