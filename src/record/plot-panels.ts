/**
 * The building blocks of twolink's figures (figures.ts): one colour per meaning for every figure,
 * vega-lite panels, the grid that holds them, and headless rendering to SVG and HTML.
 *
 * vega-lite's own types are exported only as TopLevelSpec, so panels are built as plain JSON and the
 * whole figure is checked by vega-lite's compiler.
 *
 * Layout rules, so that the titles of a row stand at one height: every panel has a one-line
 * subtitle (a blank one if it has nothing to say), legends sit below their panel, axis labels are
 * flush with the plot's edges, and nothing is drawn outside the plot: a value beyond a panel's y
 * range is drawn on the edge, marked with a triangle, and counted in the panel's subtitle (a spike
 * is never cut off silently).
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import * as vega from 'vega';
import { compile, type TopLevelSpec } from 'vega-lite';

/** A line's look. */
export interface SeriesStyle {
  name: string;
  color: string;
  dash: number[];
  /** Line width [px]. @default 1.6 */
  width?: number;
}

/**
 * Every series of every figure, by meaning: one colour means one thing (a joint has the same colour
 * in the residual panel and in the trajectory figure). Checked by tests/compare-plot.test.ts.
 */
export const STYLES = {
  desired: { name: 'desired', color: '#222222', dash: [6, 3] },
  measured: { name: 'measured', color: '#d62728', dash: [1, 0] },
  twin: { name: 'twin', color: '#1f77b4', dash: [2, 2] },
  measuredB: { name: 'measured B', color: '#2ca02c', dash: [1, 0] },
  joint1: { name: 'joint 1', color: '#17becf', dash: [1, 0] },
  joint2: { name: 'joint 2', color: '#e377c2', dash: [1, 0] },
  // The command is the sum: a wide pale band under its parts, so that the feedforward stays visible.
  command: { name: 'command', color: '#c7c7c7', dash: [1, 0], width: 4 },
  feedforward: { name: 'feedforward', color: '#9467bd', dash: [1, 0], width: 1.4 },
  pid: { name: 'PID', color: '#ff7f0e', dash: [3, 2], width: 1.4 },
  x: { name: 'x', color: '#bcbd22', dash: [1, 0] },
  y: { name: 'y', color: '#393b79', dash: [1, 0] },
  endpointPath: { name: 'endpoint', color: '#637939', dash: [1, 0] },
  jointPath: { name: 'joints', color: '#843c39', dash: [1, 0] },
} as const satisfies Record<string, SeriesStyle>;

/** Colour of a threshold rule (the twin's alarm). */
export const ALARM_COLOR = '#8c564b';
/** Fill of the shaded track phase. */
export const BAND_COLOR = '#f3efd9';

export type Json = Record<string, unknown>;

export interface Point {
  x: number | null;
  y: number | null;
  s: string;
  k?: number;
}

export interface PanelOptions {
  title: string;
  /** One line under the title (what the curves are); the panel adds its clipping note. */
  subtitle?: string;
  xTitle: string;
  yTitle: string;
  points: Point[];
  series: SeriesStyle[];
  legend?: boolean;
  width?: number;
  height?: number;
  /** Horizontal rules (a threshold), drawn dashed, all in the first one's colour. @default ALARM_COLOR */
  rules?: { y: number; color?: string }[];
  /** Shaded time intervals (the trajectory proper). */
  bands?: { x0: number; x1: number }[];
  /** An x-y path: draw in the order of `k`, with equal scales on both axes. */
  path?: boolean;
  xDomain?: [number, number];
  /** The y range; values beyond it are drawn on its edge, marked and counted. */
  yDomain?: [number, number];
}

export function round(v: number): number | null {
  return Number.isFinite(v) ? Number(v.toPrecision(6)) : null;
}

/**
 * A y range for the finite values that a few spikes do not squash: the 1st to 99th percentile,
 * widened to the extremes when they are near (within half that span: a smooth curve is shown whole),
 * then padded by 8%. What stays outside is drawn on the edge and counted (see panel).
 */
export function robustRange(points: readonly Point[], extra: readonly number[] = []): [number, number] | undefined {
  const ys = points.map((p) => p.y).filter((v): v is number => v !== null && Number.isFinite(v));
  ys.push(...extra);
  if (!ys.length) return undefined;
  ys.sort((a, b) => a - b);
  let lo = ys[Math.floor(0.01 * (ys.length - 1))]!;
  let hi = ys[Math.ceil(0.99 * (ys.length - 1))]!;
  const core = hi - lo;
  if (ys[0]! >= lo - 0.5 * core) lo = ys[0]!;
  if (ys[ys.length - 1]! <= hi + 0.5 * core) hi = ys[ys.length - 1]!;
  const pad = (hi - lo) * 0.08 || Math.max(Math.abs(hi), 1e-3) * 0.1;
  return [Number((lo - pad).toPrecision(6)), Number((hi + pad).toPrecision(6))];
}

/** A number in few characters: 1234 -> "1,234", 123456 -> "1.2e5". */
function short(v: number): string {
  const a = Math.abs(v);
  if (a >= 1e5 || (a > 0 && a < 1e-3)) return v.toExponential(1).replace('e+', 'e');
  return Number(v.toPrecision(3)).toLocaleString('en-US');
}

/**
 * The points with the values beyond `domain` moved onto its edge; the moved ones, with the side
 * they left by, and the value furthest out.
 */
export function clampToDomain(
  points: readonly Point[],
  domain: [number, number],
): { points: Point[]; beyond: (Point & { side: 'above' | 'below' })[]; peak: number } {
  // Just inside the edge, so that a wide line along it stays inside the plot (whatever sticks out
  // above a plot lifts its title).
  const inset = 0.025 * (domain[1] - domain[0]);
  const lo = domain[0] + inset;
  const hi = domain[1] - inset;
  const beyond: (Point & { side: 'above' | 'below' })[] = [];
  let peak = 0;
  const out = points.map((p) => {
    if (p.y === null || (p.y >= lo && p.y <= hi)) return p;
    const side = p.y > hi ? 'above' : 'below';
    if (Math.abs(p.y) > Math.abs(peak)) peak = p.y;
    const q = { ...p, y: side === 'above' ? hi : lo };
    beyond.push({ ...q, side });
    return q;
  });
  return { points: out, beyond, peak };
}

/**
 * Round tick values (steps of 1, 2 or 5 times a power of ten, about `count` of them) inside a range,
 * keeping clear of its ends by `margin` of the span: a label centred on a tick at the very top would
 * stick out above the plot.
 */
export function innerTicks(domain: readonly [number, number], count = 6, margin = 0.06): number[] {
  const [lo, hi] = domain;
  const span = hi - lo;
  if (!(span > 0) || !Number.isFinite(span)) return [];
  const raw = span / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = ([1, 2, 5, 10].find((m) => m * mag >= raw) ?? 10) * mag;
  const out: number[] = [];
  for (let v = Math.ceil((lo + margin * span) / step) * step; v <= hi - margin * span; v += step) out.push(Number(v.toPrecision(12)));
  return out;
}

/** The range of the finite values, padded by 6%. */
function fullRange(points: readonly Point[]): [number, number] | undefined {
  let lo = Infinity;
  let hi = -Infinity;
  for (const p of points) {
    if (p.y === null || !Number.isFinite(p.y)) continue;
    if (p.y < lo) lo = p.y;
    if (p.y > hi) hi = p.y;
  }
  if (!(lo <= hi)) return undefined;
  const pad = (hi - lo) * 0.06 || Math.max(Math.abs(hi), 1e-3) * 0.1;
  return [Number((lo - pad).toPrecision(6)), Number((hi + pad).toPrecision(6))];
}

/** Names the panels' zoom selections apart (vega-lite wants them unique in a figure). */
let panelCount = 0;

/** Triangles on the edge for the values beyond it, drawn inside the plot (see clampToDomain): a layer per side that has any. */
function beyondMarks(beyond: readonly (Point & { side: 'above' | 'below' })[], colour: Json): Json[] {
  const layers: Json[] = [];
  for (const [side, shape, yOffset] of [
    ['above', 'triangle-up', 4],
    ['below', 'triangle-down', -4],
  ] as const) {
    const marks = beyond.filter((p) => p.side === side);
    if (!marks.length) continue;
    layers.push({
      data: { values: marks },
      mark: { type: 'point', shape, filled: true, size: 24, opacity: 0.9, yOffset, clip: true },
      encoding: { x: { field: 'x', type: 'quantitative' }, y: { field: 'y', type: 'quantitative' }, color: { ...colour, legend: null } },
    });
  }
  return layers;
}

/** One panel: lines per series, optional shaded bands, threshold rules and marks for clamped values. */
export function panel(o: PanelOptions): Json {
  const names = o.series.map((s) => s.name);
  const legend = o.legend ? { title: null, orient: 'bottom', direction: 'horizontal', columns: 2, symbolStrokeWidth: 2.5 } : null;
  const yDomain = o.yDomain ?? fullRange(o.points);
  const clamped = o.yDomain && !o.path ? clampToDomain(o.points, o.yDomain) : undefined;
  const clipNote = clamped?.beyond.length ? `▲▼ ${clamped.beyond.length} beyond the axis, peak ${short(clamped.peak)}` : '';
  const colour = { field: 's', type: 'nominal', scale: { domain: names, range: o.series.map((s) => s.color) }, legend };
  const layers: Json[] = [];
  if (o.bands?.length) {
    layers.push({
      data: { values: o.bands },
      mark: { type: 'rect', color: BAND_COLOR, opacity: 0.7 },
      encoding: { x: { field: 'x0', type: 'quantitative' }, x2: { field: 'x1' } },
    });
  }
  // One line layer per line width, the widest first (underneath): a wide series is a band under the others.
  const drawn = clamped?.points ?? o.points;
  const widths = [...new Set(o.series.map((s) => s.width ?? 1.6))].sort((a, b) => b - a);
  widths.forEach((width, w) => {
    const these = new Set(o.series.filter((s) => (s.width ?? 1.6) === width).map((s) => s.name));
    layers.push({
      data: { values: widths.length > 1 ? drawn.filter((p) => these.has(p.s)) : drawn },
      // Drag to pan, wheel to zoom (in the HTML page).
      ...(w === 0
        ? { params: [{ name: `zoom${panelCount++}`, select: { type: 'interval', encodings: ['x', 'y'] }, bind: 'scales' }] }
        : {}),
      mark: { type: 'line', strokeWidth: width, clip: true, invalid: 'break-paths-filter-domains' },
      encoding: {
        x: {
          field: 'x',
          type: 'quantitative',
          title: o.xTitle,
          scale: { zero: false, nice: false, ...(o.xDomain ? { domain: o.xDomain } : {}) },
          axis: { tickCount: 5, labelFlush: true },
        },
        y: {
          field: 'y',
          type: 'quantitative',
          title: o.yTitle,
          scale: { zero: false, ...(yDomain ? { domain: yDomain, nice: false } : {}) },
          // No label and no title may stick out above the plot (that would lift the panel's title): ticks
          // keep clear of the ends, and y titles are short (vega reckons 0.8 em a character).
          axis: { ...(yDomain ? { values: innerTicks(yDomain) } : { tickCount: 5 }), labelFlush: true },
        },
        color: colour,
        strokeDash: { field: 's', type: 'nominal', scale: { domain: names, range: o.series.map((s) => s.dash) }, legend },
        ...(o.path ? { order: { field: 'k', type: 'quantitative' } } : {}),
      },
    });
  });
  layers.push(...beyondMarks(clamped?.beyond ?? [], colour));
  if (o.rules?.length) {
    layers.push({
      data: { values: o.rules },
      // A constant colour (no colour encoding, so no second legend beside the series').
      mark: { type: 'rule', strokeDash: [4, 3], strokeWidth: 1.2, color: o.rules[0]!.color ?? ALARM_COLOR },
      encoding: { y: { field: 'y', type: 'quantitative' } },
    });
  }
  return {
    // Two subtitle lines on every panel (a no-break space when there is nothing to say): equal title heights.
    title: {
      text: o.title,
      fontSize: 12,
      subtitle: [o.subtitle || '\u00a0', clipNote || '\u00a0'],
      subtitleFontSize: 9,
      subtitleColor: '#555',
    },
    width: o.width ?? 210,
    height: o.height ?? 120,
    // The layers share their scales (one legend); panels do not (see figure).
    layer: layers,
  };
}

/** Series `values` sampled at `x`, as points, thinned by `keep`. */
export function pointsOf(
  x: ArrayLike<number>,
  keep: readonly number[],
  series: { style: SeriesStyle; values: ArrayLike<number>; scale?: number }[],
): Point[] {
  const out: Point[] = [];
  for (const s of series) {
    const k = s.scale ?? 1;
    for (const i of keep) out.push({ x: round(x[i]!), y: round(s.values[i]! * k), s: s.style.name });
  }
  return out;
}

/** Splits text into lines of at most `width` characters at spaces. */
function wrap(text: string, width = 150): string[] {
  const out: string[] = [];
  let line = '';
  for (const w of text.split(' ')) {
    if (line && line.length + 1 + w.length > width) {
      out.push(line);
      line = w;
    } else {
      line = line ? `${line} ${w}` : w;
    }
  }
  if (line) out.push(line);
  return out;
}

/** Rows of panels as one grid, aligned by columns (a shorter row fills from the left). */
export function figure(title: string, subtitle: string[], rows: Json[][]): TopLevelSpec {
  const columns = Math.max(...rows.map((r) => r.length));
  const cells: Json[] = [];
  for (const r of rows) {
    cells.push(...r);
    // Pad short rows so that each row starts in the first column.
    for (let k = r.length; k < columns; k++)
      cells.push({ width: 1, height: 1, data: { values: [{}] }, mark: { type: 'point', opacity: 0 } });
  }
  const spec = {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: { text: title, subtitle: subtitle.flatMap((s) => wrap(s)), anchor: 'start', fontSize: 16, subtitleFontSize: 11 },
    config: { view: { stroke: '#ccc' }, axis: { labelFontSize: 10, titleFontSize: 11, grid: true, gridColor: '#eee' } },
    columns,
    spacing: { row: 22, column: 26 },
    concat: cells,
    resolve: { scale: { color: 'independent', strokeDash: 'independent' } },
  };
  return spec as unknown as TopLevelSpec;
}

/** Renders a vega-lite figure to SVG text, headless. */
export async function renderSvg(spec: TopLevelSpec): Promise<string> {
  const view = new vega.View(vega.parse(compile(spec).spec), { renderer: 'none' });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}

function escapeHtml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/**
 * A self-contained HTML page: the vega runtime inlined (no network needed to open it) and the
 * compiled figure, drawn as SVG in the page.
 */
export async function renderHtml(spec: TopLevelSpec, title: string): Promise<string> {
  const require = createRequire(import.meta.url);
  const runtime = await readFile(join(dirname(require.resolve('vega')), 'vega.min.js'), 'utf8');
  const compiled = JSON.stringify(compile(spec).spec).replace(/</g, '\\u003c');
  return [
    '<!DOCTYPE html>',
    '<html lang="en"><head><meta charset="utf-8">',
    `<title>${escapeHtml(title)}</title>`,
    '<style>body{font-family:sans-serif;margin:16px}</style>',
    `<script>${runtime.replace(/<\/script/gi, '<\\/script')}</script>`,
    '</head><body>',
    '<div id="figure"></div>',
    `<script type="application/json" id="spec">${compiled}</script>`,
    '<script>',
    'const spec = JSON.parse(document.getElementById("spec").textContent);',
    'new vega.View(vega.parse(spec), { renderer: "svg", container: "#figure", hover: true }).runAsync();',
    '</script>',
    '</body></html>',
    '',
  ].join('\n');
}
