/**
 * A canvas of dots on character cells, for the strip charts and the drawing of the arm: braille
 * (2 x 4 dots a cell, U+2800..U+28FF) on terminals that speak UTF-8, ASCII (1 x 2 dots a cell:
 * ' . : ) elsewhere. Each cell has one colour, the last one drawn into it, so the series drawn last
 * (the measured arm) stays on top where series overlap.
 */

/** How dots become characters. */
export type CanvasMode = 'braille' | 'ascii';

/** Bit of the braille dot at (x % 2, y % 4) in a cell (Unicode's dot numbering). */
const BRAILLE_BITS = [
  [0x01, 0x02, 0x04, 0x40],
  [0x08, 0x10, 0x20, 0x80],
];
const ASCII_CHARS = [' ', "'", '.', ':'];

export class DotCanvas {
  /** Width in dots. */
  readonly width: number;
  /** Height in dots. */
  readonly height: number;
  private readonly dx: number;
  private readonly dy: number;
  private readonly bits: Uint8Array;
  /** Colour index per cell, 0 = default. */
  private readonly colour: Uint8Array;
  /** Text written over the dots (labels), per cell. */
  private readonly text: (string | undefined)[];

  constructor(
    /** [cells] */
    readonly cols: number,
    /** [cells] */
    readonly rows: number,
    readonly mode: CanvasMode = 'braille',
  ) {
    this.cols = Math.max(0, Math.floor(cols));
    this.rows = Math.max(0, Math.floor(rows));
    this.dx = mode === 'braille' ? 2 : 1;
    this.dy = mode === 'braille' ? 4 : 2;
    this.width = this.cols * this.dx;
    this.height = this.rows * this.dy;
    this.bits = new Uint8Array(this.cols * this.rows);
    this.colour = new Uint8Array(this.cols * this.rows);
    this.text = new Array<string | undefined>(this.cols * this.rows).fill(undefined);
  }

  clear(): void {
    this.bits.fill(0);
    this.colour.fill(0);
    this.text.fill(undefined);
  }

  /** Sets the dot at (x, y) (dots, origin top left); dots off the canvas are ignored. */
  set(x: number, y: number, colour = 0): void {
    const xi = Math.round(x);
    const yi = Math.round(y);
    if (!(xi >= 0 && yi >= 0 && xi < this.width && yi < this.height)) return;
    const c = Math.floor(xi / this.dx);
    const r = Math.floor(yi / this.dy);
    const k = r * this.cols + c;
    const bit = this.mode === 'braille' ? BRAILLE_BITS[xi % 2]![yi % 4]! : yi % 2 === 0 ? 1 : 2;
    this.bits[k]! |= bit;
    this.colour[k] = colour;
  }

  /** A straight line of dots from (x0, y0) to (x1, y1). Non-finite ends draw nothing. */
  line(x0: number, y0: number, x1: number, y1: number, colour = 0): void {
    if (!Number.isFinite(x0) || !Number.isFinite(y0) || !Number.isFinite(x1) || !Number.isFinite(y1)) return;
    // Clip to the canvas first (Liang-Barsky): a wild value must not make a frame draw millions of dots.
    const dx = x1 - x0;
    const dy = y1 - y0;
    let u0 = 0;
    let u1 = 1;
    // edges: left, right, top, bottom as (p, q) pairs
    for (let e = 0; e < 4; e++) {
      const p = e === 0 ? -dx : e === 1 ? dx : e === 2 ? -dy : dy;
      const q = e === 0 ? x0 + 0.5 : e === 1 ? this.width - 0.5 - x0 : e === 2 ? y0 + 0.5 : this.height - 0.5 - y0;
      if (p === 0) {
        if (q < 0) return;
      } else {
        const u = q / p;
        if (p < 0) u0 = Math.max(u0, u);
        else u1 = Math.min(u1, u);
      }
    }
    if (u0 > u1) return;
    const ax = x0 + u0 * dx;
    const ay = y0 + u0 * dy;
    const bx = x0 + u1 * dx;
    const by = y0 + u1 * dy;
    const n = Math.ceil(Math.max(Math.abs(bx - ax), Math.abs(by - ay)));
    if (n <= 0) {
      this.set(ax, ay, colour);
      return;
    }
    for (let i = 0; i <= n; i++) this.set(ax + ((bx - ax) * i) / n, ay + ((by - ay) * i) / n, colour);
  }

  /** Writes text over the dots at cell (col, row); what does not fit is cut. */
  write(col: number, row: number, s: string, colour = 0): void {
    if (row < 0 || row >= this.rows) return;
    for (let i = 0; i < s.length; i++) {
      const c = col + i;
      if (c < 0 || c >= this.cols) continue;
      const k = row * this.cols + c;
      this.text[k] = s[i]!;
      this.colour[k] = colour;
    }
  }

  /** The character of a cell. */
  char(col: number, row: number): string {
    const k = row * this.cols + col;
    const t = this.text[k];
    if (t !== undefined) return t;
    const b = this.bits[k]!;
    if (this.mode === 'braille') return b === 0 ? ' ' : String.fromCharCode(0x2800 + b);
    return ASCII_CHARS[b]!;
  }

  /** The colour index of a cell (0 = default). */
  colourAt(col: number, row: number): number {
    return this.colour[row * this.cols + col]!;
  }

  /** The rows as plain text. */
  plainLines(): string[] {
    const out: string[] = [];
    for (let r = 0; r < this.rows; r++) {
      let s = '';
      for (let c = 0; c < this.cols; c++) s += this.char(c, r);
      out.push(s);
    }
    return out;
  }

  /**
   * The rows as blessed-tagged text; `palette[i]` is the tag of colour i (e.g. 'green-fg'), colour 0
   * is the default. Text written with `write` must not contain braces.
   */
  taggedLines(palette: readonly string[]): string[] {
    const out: string[] = [];
    for (let r = 0; r < this.rows; r++) {
      let s = '';
      let open = 0;
      for (let c = 0; c < this.cols; c++) {
        const ch = this.char(c, r);
        const col = ch === ' ' ? open : this.colour[r * this.cols + c]!;
        if (col !== open) {
          if (open) s += `{/${palette[open]}}`;
          if (col && palette[col]) s += `{${palette[col]}}`;
          open = col && palette[col] ? col : 0;
        }
        s += ch;
      }
      if (open) s += `{/${palette[open]}}`;
      out.push(s);
    }
    return out;
  }
}
