/**
 * JSON text written as bytes into one reused buffer from templates made once: the constant text
 * between the numbers is encoded when the template is made, only the numbers are written per
 * message. The live view writes its frequent messages this way at 60 Hz (viz/live-frame.ts): no
 * string, object or buffer is made per frame. Built from strings, a frame was ~10 kB of fresh
 * strings (cons-strings, flattened, then copied again as UTF-8), and profiled paced (node
 * --cpu-prof, 2026-11-27) building it was about half of the view's CPU, the socket write the other.
 *
 * Numbers: an integer of 32 bits exactly; another finite number below 1e6 in magnitude in fixed
 * point with 9 decimals, rounded to nearest, trailing zeros dropped (1 nrad, 1 ns, 1 nN m: far
 * below what a viewer draws; recordings keep every digit, they do not use this); a larger one as
 * JavaScript prints it; a non-finite one as null (as JSON.stringify).
 */

/** How a hole is written: a JSON number, `toFixed(3)` (inside a JSON string), or one of a table's quoted words. */
export type Hole = { from: number; as: 'num' | 'fixed3' } | { from: number; as: 'code'; words: readonly string[] };

/** The most bytes `num` writes: a sign, 6 + 1 + 9 digits, or what String prints (at most 25 bytes, as -1.2345678901234567e+300). */
const NUM_BYTES = 32;

/** A growing byte buffer, reused from message to message. */
export class JsonBytes {
  buf: Buffer;
  at = 0;

  constructor(bytes = 32 * 1024) {
    this.buf = Buffer.allocUnsafe(bytes);
  }

  /** Room for `n` more bytes (the buffer doubles when it must: a few times at most, never per frame once warm). */
  room(n: number): void {
    if (this.at + n <= this.buf.length) return;
    const b = Buffer.allocUnsafe(Math.max(2 * this.buf.length, this.at + n));
    this.buf.copy(b, 0, 0, this.at);
    this.buf = b;
  }

  raw(bytes: Uint8Array): void {
    this.room(bytes.length);
    this.buf.set(bytes, this.at);
    this.at += bytes.length;
  }

  /** A string's UTF-8 bytes (the messages not templated: the path every 0.1 s). */
  text(s: string): void {
    this.room(3 * s.length);
    this.at += this.buf.write(s, this.at, 'utf8');
  }

  /** `x` as a JSON number (see the file's comment). */
  num(x: number): void {
    this.room(NUM_BYTES);
    this.putNum(x);
  }

  /** `num` where room for it was made (NUM_BYTES). */
  putNum(x: number): void {
    const b = this.buf;
    if ((x | 0) === x) {
      let at = this.at;
      if (x < 0) b[at++] = 45;
      this.at = writeUint(b, at, x < 0 ? -x : x);
    } else if (x > -1e6 && x < 1e6) {
      const v = x < 0 ? -x : x;
      let ip = Math.floor(v);
      let fp = Math.round((v - ip) * 1e9);
      if (fp === 1e9) {
        ip++;
        fp = 0;
      }
      let at = this.at;
      if (x < 0 && (ip !== 0 || fp !== 0)) b[at++] = 45;
      at = writeUint(b, at, ip);
      if (fp !== 0) {
        b[at++] = 46;
        let len = 9;
        while (fp % 10 === 0) {
          fp /= 10;
          len--;
        }
        at = writeDigits(b, at, fp, len);
      }
      this.at = at;
    } else if (Number.isFinite(x)) {
      this.at += b.write(String(x), this.at, 'latin1');
    } else {
      this.at += b.write('null', this.at, 'latin1');
    }
  }
}

/** Digits of an integer 0 <= u < 2^31 at `at`; returns the offset after them. */
function writeUint(b: Buffer, at: number, u: number): number {
  let len = 1;
  for (let n = u; n >= 10; n = (n / 10) | 0) len++;
  return writeDigits(b, at, u, len);
}

/** The last `len` digits of an integer 0 <= u < 2^31, leading zeros included. */
function writeDigits(b: Buffer, at: number, u: number, len: number): number {
  for (let k = at + len - 1; k >= at; k--) {
    const q = (u / 10) | 0;
    b[k] = 48 + u - q * 10;
    u = q;
  }
  return at + len;
}

/** A JSON text with holes, made once; `write` fills the holes from an array of numbers. */
export class JsonTemplate {
  /** The constant text, all parts one after the other (one array: copied by a loop, no call per part). */
  private readonly text: Uint8Array;
  /** Where part k ends in `text`. */
  private readonly cuts: Int32Array;
  private readonly from: Int32Array;
  private readonly as: Uint8Array;
  private readonly words: (Uint8Array[] | undefined)[];
  /** Bytes to make room for before writing: the text, and the most each hole writes. */
  private readonly most: number;

  /** `parts` around the holes: one more part than holes. */
  constructor(parts: readonly string[], holes: readonly Hole[]) {
    if (parts.length !== holes.length + 1)
      throw new Error(`a template of ${holes.length} holes needs ${holes.length + 1} parts, not ${parts.length}`);
    const bytes = parts.map((p) => Buffer.from(p, 'utf8'));
    this.text = Buffer.concat(bytes);
    let end = 0;
    this.cuts = Int32Array.from(bytes, (b) => (end += b.length));
    this.from = Int32Array.from(holes, (h) => h.from);
    this.as = Uint8Array.from(holes, (h) => (h.as === 'num' ? 0 : h.as === 'fixed3' ? 1 : 2));
    this.words = holes.map((h) => (h.as === 'code' ? h.words.map((w) => Buffer.from(JSON.stringify(w), 'utf8')) : undefined));
    const longest = Math.max(NUM_BYTES, ...this.words.flatMap((w) => (w ? w.map((x) => x.length) : [])));
    this.most = this.text.length + holes.length * longest;
  }

  /** Writes the text with hole k filled from `v[from_k]`. */
  write(w: JsonBytes, v: ArrayLike<number>): void {
    w.room(this.most);
    const text = this.text;
    const n = this.from.length;
    let start = 0;
    for (let k = 0; k <= n; k++) {
      const end = this.cuts[k]!;
      const b = w.buf;
      let at = w.at;
      for (let i = start; i < end; i++) b[at++] = text[i]!;
      w.at = at;
      start = end;
      if (k === n) break;
      const x = v[this.from[k]!]!;
      const as = this.as[k]!;
      if (as === 0) w.putNum(x);
      else if (as === 1) w.text(x.toFixed(3));
      else {
        const words = this.words[k]!;
        w.raw(words[x] ?? words[0]!);
      }
    }
  }
}

/** Makes a template piece by piece: text, holes, text, ... */
export class TemplateBuilder {
  private readonly parts: string[] = [''];
  private readonly holes: Hole[] = [];

  text(s: string): this {
    this.parts[this.parts.length - 1] += s;
    return this;
  }

  hole(h: Hole): this {
    this.holes.push(h);
    this.parts.push('');
    return this;
  }

  /** A JSON number from `v[from]`. */
  num(from: number): this {
    return this.hole({ from, as: 'num' });
  }

  build(): JsonTemplate {
    return new JsonTemplate(this.parts, this.holes);
  }
}
