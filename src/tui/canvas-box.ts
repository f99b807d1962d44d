/**
 * A framed blessed box whose inside is a dot canvas (the dashboard's drawing and strip charts).
 */
import blessed from 'blessed';
import type { DotCanvas } from './canvas.js';
import { PALETTE_FG } from './panels.js';

type Box = blessed.Widgets.BoxElement;

/** A cell of blessed's screen buffer: [attribute, character]. */
type Cell = [number, string];
interface ScreenBuffer {
  lines: (Cell[] & { dirty?: boolean })[];
  dattr: number;
}

/**
 * A framed box whose inside is a dot canvas, written straight into blessed's screen buffer after the
 * box has drawn its frame: the canvases change every frame, and going through tagged content would
 * make blessed parse a few thousand tags a frame (most of a frame's time).
 */
export function canvasBox(parent: blessed.Widgets.Screen, label: string): { box: Box; set(c: DotCanvas | undefined): void } {
  const box = blessed.box({ parent, tags: true, wrap: false, border: { type: 'line' }, label, style: { border: { fg: 'gray' } } });
  let canvas: DotCanvas | undefined;
  const render = box.render.bind(box) as () => { xi: number; xl: number; yi: number; yl: number } | undefined;
  (box as unknown as { render: () => unknown }).render = () => {
    const at = render();
    if (!at || !canvas) return at;
    const screen = parent as unknown as ScreenBuffer;
    const b = box as unknown as { ileft: number; iright: number; itop: number; ibottom: number };
    const x0 = at.xi + b.ileft;
    const y0 = at.yi + b.itop;
    const w = Math.min(canvas.cols, at.xl - b.iright - x0);
    const h = Math.min(canvas.rows, at.yl - b.ibottom - y0);
    const def = screen.dattr;
    for (let r = 0; r < h; r++) {
      const line = screen.lines[y0 + r];
      if (!line) continue;
      for (let c = 0; c < w; c++) {
        const cell = line[x0 + c];
        if (!cell) continue;
        const fg = PALETTE_FG[canvas.colourAt(c, r)] ?? -1;
        cell[0] = fg < 0 ? def : (def & ~(0x1ff << 9)) | (fg << 9);
        cell[1] = canvas.char(c, r);
      }
      line.dirty = true;
    }
    return at;
  };
  return {
    box,
    set: (c) => {
      canvas = c;
    },
  };
}
