/**
 * The line splitter of the line-protocol link (line-link.ts): @serialport/parser-readline with a bound
 * on the line length that the parser lacks (protocol/codec.ts MAX_LINE).
 */
import { ReadlineParser } from '@serialport/parser-readline';
import { MAX_LINE } from '../protocol/codec.js';

/**
 * ReadlineParser with the bound it lacks: when a line's buffered part reaches MAX_LINE bytes, the part
 * is dropped and counted and the bytes up to the next LF are skipped.
 */
export class BoundedReadlineParser extends ReadlineParser {
  overlong = 0;
  private skipping = false;
  constructor(private readonly onOverlong: () => void = () => {}) {
    super({ delimiter: '\n', encoding: 'latin1' });
  }
  override _transform(chunk: Buffer, encoding: BufferEncoding, cb: (err?: Error | null) => void): void {
    let data = chunk;
    if (this.skipping) {
      const lf = data.indexOf(10);
      if (lf < 0) {
        cb();
        return;
      }
      data = data.subarray(lf + 1);
      this.skipping = false;
    }
    super._transform(data, encoding, (err?: Error | null) => {
      if (this.buffer.length >= MAX_LINE) {
        this.overlong++;
        this.onOverlong();
        this.buffer = Buffer.alloc(0);
        this.skipping = true;
      }
      cb(err);
    });
  }
}
