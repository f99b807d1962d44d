/** A file written in blocks (the CSV and MCAP writers, record/export.ts and record/mcap.ts). */
import { closeSync, ftruncateSync, writeSync } from 'node:fs';
import { closeFile, errnoText, FileError, openForWrite } from '../config/files.js';
import { freeBytes, reserveRefusal } from '../telemetry/recorder.js';

/**
 * The write call of a sink (fs.writeSync's shape): writes `buf` from `off` at the file's byte
 * `position`, or where the last write ended when null (a pipe has no position; after a cut the
 * position is given, so that the next write lands at the cut, not at the old end). Returns the bytes
 * written.
 */
export type WriteFn = (fd: number, buf: Uint8Array, off: number, position: number | null) => number;

export interface FileSinkOptions {
  /** Bytes kept before they are written [bytes]; 0 writes each block as it comes. @default 1 MB */
  bufferBytes?: number;
  /** The write call (fs.writeSync); tests put one here that fails with ENOSPC to play a full disk. */
  writeFn?: WriteFn;
  /**
   * Keep telemetry/recorder.ts RESERVE_BYTES free on the disk: a block that would leave less fails as
   * on a full disk (a live recording, which must be able to close itself); `tryWrite` may use the
   * reserve. `free`: the disk's free space [bytes] (statfs by default; tests play a nearly full disk).
   */
  reserve?: boolean;
  free?: () => number | undefined;
}

/**
 * Buffered synchronous writes to a file. Failures (a missing folder, a full disk) are FileErrors
 * naming the file (config/files.ts). A write that fails leaves no part of its block in the file: the
 * file is cut back to the end of the last block written whole (`bytes`), so a writer whose blocks are
 * whole records (MCAP) leaves a file a reader takes up to its last record.
 */
export class FileSink {
  private fd: number | undefined;
  private parts: (string | Uint8Array)[] = [];
  private size = 0;
  private readonly bufferBytes: number;
  private readonly writeFn: WriteFn;
  private readonly free: (() => number | undefined) | undefined;
  /** Bytes in the file: blocks written whole. */
  bytes = 0;
  /** Set once the file was cut back: writes then say where they go. */
  private wasCut = false;
  constructor(
    readonly file: string,
    o: FileSinkOptions = {},
  ) {
    this.bufferBytes = o.bufferBytes ?? 1 << 20;
    this.writeFn = o.writeFn ?? ((fd, buf, off, position) => writeSync(fd, buf, off, buf.length - off, position));
    this.free = o.reserve ? (o.free ?? (() => freeBytes(file))) : undefined;
    this.fd = openForWrite(file);
  }
  write(data: string | Uint8Array): void {
    this.parts.push(data);
    this.size += data.length;
    if (this.size > this.bufferBytes) this.flush();
  }
  flush(): void {
    if (this.fd === undefined) return;
    const parts = this.parts;
    this.parts = [];
    this.size = 0;
    for (const p of parts) {
      const buf = typeof p === 'string' ? Buffer.from(p) : p;
      const refused = this.free && reserveRefusal(buf.length, this.free());
      if (refused) throw new FileError(this.file, `cannot write it: ${refused.message}`, 'ENOSPC');
      const e = this.append(buf);
      if (e !== undefined) throw new FileError(this.file, `cannot write it: ${errnoText(e, true)}`, (e as NodeJS.ErrnoException).code);
    }
  }
  /**
   * Writes `buf` whole now (what is buffered goes first), or cuts what it wrote of it and returns the
   * error; the sink stays open (a writer may try a shorter block after a full disk).
   */
  tryWrite(buf: Uint8Array): unknown {
    try {
      this.flush();
    } catch (e) {
      return e;
    }
    return this.append(buf);
  }
  /** Cuts the file back to `bytes` (dropping what is buffered): a writer taking back records it wrote. */
  cut(bytes: number): void {
    this.parts = [];
    this.size = 0;
    if (this.fd === undefined || bytes >= this.bytes) return;
    try {
      this.wasCut = true;
      ftruncateSync(this.fd, bytes);
      this.bytes = bytes;
    } catch {
      // the file keeps its end: a reader stops at the first record it cannot take
    }
  }
  private append(buf: Uint8Array): unknown {
    if (this.fd === undefined) return new Error(`${this.file} is closed`);
    let off = 0;
    try {
      while (off < buf.length) off += this.writeFn(this.fd, buf, off, this.wasCut ? this.bytes + off : null);
    } catch (e) {
      try {
        this.wasCut = true;
        ftruncateSync(this.fd, this.bytes);
      } catch {
        // nothing more can be done on this descriptor
      }
      return e;
    }
    this.bytes += buf.length;
    return undefined;
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
      closeSync(fd);
    } catch {
      // the first error is the one to report
    }
  }
}
