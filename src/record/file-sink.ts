/** A file written in blocks (the CSV and MCAP writers, record/export.ts and record/mcap.ts). */
import { closeFile, openForWrite, writeAll } from '../config/files.js';

/**
 * Buffered synchronous writes to a file, in blocks of ~1 MB. Failures (a missing folder, a full disk)
 * are FileErrors naming the file (config/files.ts).
 */
export class FileSink {
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
