/**
 * Where the dashboard's panels go on a terminal of a given size. Pure: the dashboard calls it on
 * every resize. Small terminals lose panels in a fixed order (charts, then the drawing, then the loop
 * panel, then the joints); the state line and the help line (with the e-stop key) go last.
 */

/** A rectangle of cells. */
export interface Rect {
  left: number;
  top: number;
  width: number;
  height: number;
}

export interface Layout {
  cols: number;
  rows: number;
  /** The state line (always there when the terminal has a row). */
  header?: Rect;
  /** Messages and notices (e-stop, recording). */
  message?: Rect;
  help?: Rect;
  joints?: Rect;
  loop?: Rect;
  arm?: Rect;
  /** Angle, error and torque charts, as many as fit (0..3), in that order. */
  charts: Rect[];
}

/** Height of the joints panel with its border: a header and 12 rows. */
export const JOINTS_HEIGHT = 15;
/** Height of the loop panel with its border. */
export const LOOP_HEIGHT = 7;
/** Width of the joints and loop panels beside the drawing. */
export const LEFT_WIDTH = 64;
/** The drawing goes beside the tables from this width on. */
const TWO_COLUMNS_FROM = LEFT_WIDTH + 28;
const MIN_CHART_HEIGHT = 7;
/** The most rows the notice takes (a long fault wraps rather than being cut at the screen's edge), and it leaves the body this many. */
export const MAX_MESSAGE_ROWS = 8;
const MIN_BODY_ROWS = 5;
const MIN_CHART_WIDTH = 24;

/** `messageRows`: the rows the notice needs at this width (wrapped), 1 by default; it gets up to MAX_MESSAGE_ROWS of them. */
export function layout(cols: number, rows: number, messageRows = 1): Layout {
  const W = Math.max(0, Math.floor(Number.isFinite(cols) ? cols : 0));
  const H = Math.max(0, Math.floor(Number.isFinite(rows) ? rows : 0));
  const out: Layout = { cols: W, rows: H, charts: [] };
  if (W < 1 || H < 1) return out;
  out.header = { left: 0, top: 0, width: W, height: 1 };
  if (H === 1) return out;
  out.help = { left: 0, top: H - 1, width: W, height: 1 };
  let top = 1;
  if (H >= 8) {
    const want = Math.floor(Number.isFinite(messageRows) ? messageRows : 1);
    const h = Math.max(1, Math.min(want, MAX_MESSAGE_ROWS, H - 2 - MIN_BODY_ROWS));
    out.message = { left: 0, top: 1, width: W, height: h };
    top = 1 + h;
  }
  const bodyH = H - 1 - top;
  if (bodyH < 4 || W < 24) return out;
  const twoCol = W >= TWO_COLUMNS_FROM;
  const leftW = twoCol ? LEFT_WIDTH : W;
  const jointsH = Math.min(JOINTS_HEIGHT, bodyH);
  out.joints = { left: 0, top, width: leftW, height: jointsH };
  const rest = bodyH - jointsH;
  // The loop panel takes what the charts cannot use (it lists more events).
  const loopH = rest < 4 ? 0 : rest - LOOP_HEIGHT >= MIN_CHART_HEIGHT ? LOOP_HEIGHT : rest;
  if (loopH > 0) out.loop = { left: 0, top: top + jointsH, width: leftW, height: loopH };
  const topH = jointsH + loopH;
  if (twoCol) out.arm = { left: leftW, top, width: W - leftW, height: topH };
  const chartsH = bodyH - topH;
  if (chartsH >= MIN_CHART_HEIGHT) {
    const chartTop = top + topH;
    let left = 0;
    if (!twoCol && W >= 60) {
      // No room beside the tables: the drawing takes the first third of the chart row.
      const armW = Math.floor(W / 3);
      out.arm = { left: 0, top: chartTop, width: armW, height: chartsH };
      left = armW;
    }
    const w = W - left;
    const side = Math.min(3, Math.floor(w / MIN_CHART_WIDTH));
    if (side >= 3 || chartsH < 2 * MIN_CHART_HEIGHT || left > 0) {
      const n = Math.max(1, side);
      for (let i = 0; i < n; i++) {
        const l = Math.floor((w * i) / n);
        out.charts.push({ left: left + l, top: chartTop, width: Math.floor((w * (i + 1)) / n) - l, height: chartsH });
      }
    } else {
      // Narrow and tall: stack them.
      const n = Math.min(3, Math.floor(chartsH / MIN_CHART_HEIGHT));
      for (let i = 0; i < n; i++) {
        const t = Math.floor((chartsH * i) / n);
        out.charts.push({ left: 0, top: chartTop + t, width: W, height: Math.floor((chartsH * (i + 1)) / n) - t });
      }
    }
  }
  return out;
}
