/**
 * What the dashboard's panels show, from a snapshot of the run (`PanelState`): the text panels as
 * blessed-tagged lines, the charts and the drawing as dot canvases. Pure functions of their arguments:
 * the dashboard calls them every frame.
 */
import type { LoopState, TickObject, TrajPhase } from '../telemetry/tick.js';
import { forwardKinematics } from '../model/kinematics.js';
import type { ArmParams, Vec2 } from '../model/types.js';
import { DotCanvas, type CanvasMode } from './canvas.js';
import type { Channel, History } from './history.js';

const DEG = 180 / Math.PI;

/** Colours of the canvases, by index (0 is the terminal's default). */
export const C = { measured: 1, twin: 2, desired: 3, j1: 4, j2: 5, dim: 6, red: 7 } as const;
/** The same colours as terminal colour numbers (-1: the default). */
export const PALETTE_FG = [-1, 7, 6, 3, 2, 5, 8, 1] as const;

/** The glyphs that differ between UTF-8 and plain terminals. */
export interface Glyphs {
  sep: string;
  dot: string;
  full: string;
  empty: string;
  deg: string;
  /** Where text was cut out. */
  ellipsis: string;
}
export const UNICODE_GLYPHS: Glyphs = { sep: '│', dot: '●', full: '█', empty: '░', deg: '°', ellipsis: '…' };
export const ASCII_GLYPHS: Glyphs = { sep: '|', dot: '*', full: '#', empty: '-', deg: ' deg', ellipsis: '...' };

/** The trajectory in progress. */
export interface Progress {
  name: string;
  /** 1-based position in the run's list, 0 if unknown. */
  index: number;
  count: number;
  phase: TrajPhase;
  /** Time in the phase [s]. */
  t: number;
  /** Duration of the trajectory proper (the track phase) [s]. */
  duration?: number;
  /** What the trajectory does, in words. */
  description?: string;
}

/** Everything the text panels show. */
export interface PanelState {
  /** e.g. "twolink demo" */
  title: string;
  rigName: string;
  /** Board and transport (empty until connected). */
  describe: string;
  joints: 1 | 2;
  /** The newest tick, undefined before the first. */
  tick?: TickObject;
  /** A float-mode run: the header and the joints panel show float's state. */
  floatMode?: boolean;
  /** The twin's alarm threshold [deg]. */
  alarmDeg: number;
  /** The loop's set rate [Hz]. */
  rateHz: number;
  /** Ticks per second measured over the last second [Hz]. */
  measuredHz?: number;
  /** Period error over the run [us]. */
  period: { p50Us: number; p99Us: number; maxUs: number };
  progress?: Progress;
  recording?: { file: string; ticks: number; failure?: string };
  /** Recent events, newest first. */
  events: string[];
  /** A passing message (key feedback). */
  message?: { text: string; level: 'info' | 'warn' | 'error' };
  /** Times the user asked to quit. */
  quitPresses: number;
  /** Set once the run is over: why it ended. */
  over?: string;
  /** The dashboard waits for q before it exits. */
  waitingForQuit: boolean;
  glyphs: Glyphs;
}

/** Numbers in fixed width: right-aligned, '-' for what is not a finite number. */
export function num(v: number | undefined, decimals: number, width: number): string {
  const s = v === undefined || !Number.isFinite(v) ? '-' : v.toFixed(decimals);
  return s.length >= width ? s : ' '.repeat(width - s.length) + s;
}

/** Text for a tagged line: blessed reads braces as tags. */
export function esc(s: string): string {
  return s.replace(/[{}]/g, (c) => (c === '{' ? '{open}' : '{close}'));
}

const STATE_STYLE: Record<LoopState, string> = {
  idle: 'black-fg}{white-bg',
  hold: 'black-fg}{cyan-bg',
  track: 'black-fg}{green-bg',
  paused: 'black-fg}{yellow-bg',
  release: 'black-fg}{yellow-bg',
  stopped: 'white-fg}{blue-bg',
  estop: 'white-fg}{red-bg}{bold',
  fault: 'white-fg}{red-bg}{bold',
  disabled: 'white-fg}{magenta-bg',
};

/** The state as the dashboard names it. */
export function stateName(s: LoopState): string {
  return s === 'estop' ? 'E-STOPPED' : s === 'disabled' ? 'DISABLED' : s.toUpperCase();
}

function statePill(p: PanelState): string {
  if (!p.tick) return '{black-fg}{white-bg} CONNECTING {/}';
  return `{${STATE_STYLE[p.tick.state]}} ${stateName(p.tick.state)} {/}`;
}

/** Float mode's state in a word: FLOAT, HELD, or the blend on the way (e.g. "FLOAT 40%"). */
export function floatState(p: PanelState): string | undefined {
  if (!p.floatMode || !p.tick) return undefined;
  const w = p.tick.float ?? 0;
  return w >= 0.999 ? 'FLOAT' : w <= 0.001 ? 'HELD' : `FLOAT ${(w * 100).toFixed(0)}%`;
}

function floatPill(p: PanelState): string {
  const f = floatState(p);
  return f ? ` {black-fg}{${f === 'HELD' ? 'white' : 'magenta'}-bg} ${f} {/}` : '';
}

function bar(fraction: number, width: number, g: Glyphs): string {
  const f = Math.max(0, Math.min(1, Number.isFinite(fraction) ? fraction : 0));
  const n = Math.round(f * width);
  return g.full.repeat(n) + g.empty.repeat(width - n);
}

/** The trajectory's progress, e.g. "reach 1/3 track 0.62/1.00 s [####--]". */
export function progressText(p: Progress | undefined, g: Glyphs, barWidth = 12): string {
  if (!p) return 'no trajectory';
  const of = p.index > 0 ? ` ${p.index}/${p.count}` : '';
  if (p.phase === 'track' && p.duration !== undefined) {
    return `${esc(p.name)}${of} track ${p.t.toFixed(2)}/${p.duration.toFixed(2)} s ${bar(p.t / p.duration, barWidth, g)}`;
  }
  if (p.phase === 'none') return `${esc(p.name)}${of} done`;
  return `${esc(p.name)}${of} ${p.phase} ${p.t.toFixed(2)} s`;
}

/** Shortest tail of the link's description kept when it is cut: its end says the baud rate ("at 1000000 baud"). */
const DESCRIBE_TAIL = 18;

/** `s` cut in the middle to `n` characters, its end kept whole ("line protocol to ... at 115200 baud"). */
function elideMiddle(s: string, n: number, g: Glyphs): string {
  if (s.length <= n) return s;
  const dots = g.ellipsis;
  const tail = Math.min(s.length, Math.max(DESCRIBE_TAIL, Math.floor(n / 2)));
  const head = n - tail - dots.length;
  if (head >= 8) return `${s.slice(0, head)}${dots}${s.slice(s.length - tail)}`;
  // Too little room for a head worth reading: the end alone, from a word's start.
  const end = s.slice(s.length - (n - dots.length));
  return `${dots}${end.slice(end.indexOf(' ') + 1)}`;
}

/**
 * The first line: state, progress, what runs where, fitted to `width` cells. When it does not fit, the
 * title goes first, then the link's description is cut in its middle (its end, the baud rate, stays),
 * then the description and the rig's name go; the state and the progress stay.
 */
export function headerLine(p: PanelState, width = Infinity): string {
  const g = p.glyphs;
  const head = `${statePill(p)}${floatPill(p)} {bold}${progressText(p.progress, g)}{/bold}`;
  const rec = p.recording ? ` ${g.sep} {red-fg}${g.dot} rec{/red-fg}` : '';
  const rig = ` ${g.sep} ${esc(p.rigName)}`;
  const title = ` ${g.sep} ${esc(p.title)}`;
  const d = p.describe ? ` ${g.sep} ${esc(p.describe)}` : '';
  const variants = [head + title + rig + d + rec, head + rig + d + rec];
  if (p.describe) {
    // Room left for the description itself ([sep] and its spaces take 3 cells).
    const room = width - visibleLength(head + rig + rec) - 3;
    if (room >= DESCRIBE_TAIL && Number.isFinite(room))
      variants.push(`${head}${rig} ${g.sep} ${esc(elideMiddle(p.describe, room, g))}${rec}`);
  }
  variants.push(head + rig + rec, head + rec, head);
  return fit(width, variants);
}

/** The notice line: e-stop, fault, quitting, alarm, or the last message. */
export function messageLine(p: PanelState): string {
  const t = p.tick;
  const state = t?.state;
  const reason = p.over ? ` (${esc(p.over)})` : '';
  const exit = p.waitingForQuit ? ' The run is over: q to exit.' : '';
  // After a stop the run may still be at work (--reconnect waits for the board, counts down, re-zeroes):
  // the current message follows the stop, never hidden by it (the notice wraps).
  const then = p.message && !p.over ? ` ${esc(p.message.text)}` : '';
  if (state === 'estop') return `{white-fg}{red-bg}{bold} E-STOPPED: motors off${reason}.${exit}${then} {/}`;
  if (state === 'fault') return `{white-fg}{red-bg}{bold} FAULT: motors off${reason}.${exit}${then} {/}`;
  if (p.quitPresses > 0 && !p.over) return '{black-fg}{yellow-bg} stopping softly: q again to e-stop {/}';
  if (p.over) return `{black-fg}{white-bg} the run is over${reason} {/}`;
  if (p.message) {
    const style =
      p.message.level === 'error' ? 'white-fg}{red-bg' : p.message.level === 'warn' ? 'black-fg}{yellow-bg' : 'black-fg}{cyan-bg';
    return `{${style}} ${esc(p.message.text)} {/}`;
  }
  if (t && t.alarm) {
    const j = [0, 1].filter((i) => t.alarm & (1 << i)).map((i) => i + 1);
    return `{black-fg}{yellow-bg} TWIN ALARM: joint ${j.join(', ')} diverges from the model (residual > ${p.alarmDeg} deg) {/}`;
  }
  if (state === 'disabled') return '{white-fg}{magenta-bg} motors disabled: d to enable, z to zero the encoders {/}';
  if (state === 'paused') return '{black-fg}{yellow-bg} paused: space to resume {/}';
  if (p.progress?.description && p.progress.phase !== 'none')
    return ` {gray-fg}${esc(p.progress.name)}: ${esc(p.progress.description)}{/gray-fg}`;
  return '';
}

/** The joints table: desired / measured / twin, torques, duty, error, residual and alarm. */
export function jointLines(p: PanelState): string[] {
  const t = p.tick;
  const n = p.joints;
  const W = 10;
  const cols = (vals: (number | undefined)[], d: number, deg = true): string =>
    Array.from({ length: n }, (_, i) => {
      const v = vals[i];
      return num(v === undefined ? undefined : deg ? v * DEG : v, d, W);
    }).join('');
  const row = (label: string, sub: string, values: string, extra = ''): string =>
    `${label.padEnd(15)}${sub.padEnd(6)}${values}${extra ? `  ${extra}` : ''}`;
  const head = `${''.padEnd(21)}${Array.from({ length: n }, (_, i) => `joint ${i + 1}`.padStart(W)).join('')}`;
  const u = (a: number[] | undefined): (number | undefined)[] => a ?? [];
  const sat = t ? [0, 1].filter((i) => i < n && t.sat & (1 << i)).map((i) => `j${i + 1}`) : [];
  const alarmed = t ? [0, 1].filter((i) => i < n && t.alarm & (1 << i)) : [];
  const residual = t
    ? Array.from({ length: n }, (_, i) => {
        const s = num(t.twin.res[i]! * DEG, 2, W);
        return alarmed.includes(i) ? `{red-fg}{bold}${s}{/bold}{/red-fg}` : s;
      }).join('')
    : cols([], 2);
  const alarm = !t
    ? ''
    : alarmed.length
      ? `{white-fg}{red-bg} ALARM ${alarmed.map((i) => `j${i + 1}`).join(' ')} {/}`
      : `{green-fg}ok{/green-fg} (< ${p.alarmDeg} deg)`;
  const err = t ? t.des.q.map((v, i) => v - t.meas.q[i]!) : undefined;
  return [
    `{bold}${head}{/bold}`,
    row('angle [deg]', 'des', `{yellow-fg}${cols(u(t?.des.q), 2)}{/yellow-fg}`),
    row('', 'meas', `{bold}${cols(u(t?.meas.q), 2)}{/bold}`),
    row('', 'twin', `{cyan-fg}${cols(u(t?.twin.q), 2)}{/cyan-fg}`),
    row('speed [deg/s]', 'des', `{yellow-fg}${cols(u(t?.des.qd), 1)}{/yellow-fg}`),
    row('', 'meas', `{bold}${cols(u(t?.meas.qd), 1)}{/bold}`),
    row('', 'twin', `{cyan-fg}${cols(u(t?.twin.qd), 1)}{/cyan-fg}`),
    row('torque [N m]', 'ff', cols(u(t?.tau.ff), 3, false)),
    row('', 'pid', cols(u(t?.tau.pid), 3, false)),
    row(
      '',
      'total',
      `{bold}${cols(u(t?.tau.cmd), 3, false)}{/bold}`,
      sat.length ? `{yellow-fg}saturated ${sat.join(' ')}{/yellow-fg}` : '',
    ),
    row('motor duty [%]', '', cols(u(t?.duty.map((d) => d * 100)), 1, false)),
    // Float mode: what the law is doing (g enters and leaves float), beside the error it makes moot (the panel has no row to spare).
    row('error [deg]', 'track', cols(u(err), 3), p.floatMode && t ? `float {bold}${floatState(p)}{/bold} (g)` : ''),
    row('residual [deg]', 'twin', residual, alarm),
    // Impedance mode: the contact force the observer explains, and the spring in force (+/- change it).
    ...(t?.stiffness ? [row('contact [N]', 'x, y', cols(u(t.fEst), 2, false), `stiffness ${t.stiffness.toFixed(0)} (+/-, f zeroes)`)] : []),
  ];
}

/** The visible length of a tagged line (blessed's tags take no cells). */
export function visibleLength(tagged: string): number {
  return tagged.replace(/\{[^{}]*\}/g, (tag) => (tag === '{open}' || tag === '{close}' ? ' ' : '')).length;
}

/** The first of `variants` (longest first) that fits `width` cells; the last one if none does. */
function fit(width: number, variants: string[]): string {
  return variants.find((v) => visibleLength(v) <= width) ?? variants[variants.length - 1]!;
}

/**
 * The loop panel, `width` x `height` cells: state, rate, latency (the board's sample to the answer
 * written), late samples, link, recording,
 * events. A line too long for the width loses its least useful words first, never a count's digits
 * (a count cut at the border reads as a smaller number).
 */
export function loopLines(p: PanelState, width: number, height = 5): string[] {
  const t = p.tick;
  const g = p.glyphs;
  const state = t ? `{bold}${stateName(t.state)}{/bold}` : 'connecting';
  const rate = p.measuredHz === undefined ? '-' : p.measuredHz.toFixed(1);
  const work = num(t?.timing.execUs, 0, 1);
  const now = num(t ? Math.abs(t.timing.errUs) : undefined, 0, 1);
  const { p50Us, p99Us, maxUs } = p.period;
  // Late (an answer past its deadline) apart from the samples a USB adapter delivers in one burst with a
  // newer one (only the newest is answered: not late).
  const late = `late ${t ? (t.timing.overruns > 0 ? `{yellow-fg}${t.timing.overruns}{/yellow-fg}` : '0') : '-'}`;
  const overruns = t && (t.timing.burst ?? 0) > 0 ? `${late} burst ${t.timing.burst}` : late;
  const warn = (n: number): string => (n > 0 ? `{yellow-fg}${n}{/yellow-fg}` : '0');
  const link = t
    ? [
        `link sent ${t.link.sent} recv ${t.link.received} lost ${warn(t.link.lost)} corrupt ${warn(t.link.corrupt)} flags 0x${t.flags.toString(16).padStart(2, '0')}`,
        `link sent ${t.link.sent} recv ${t.link.received} lost ${warn(t.link.lost)} corrupt ${warn(t.link.corrupt)}`,
        `link lost ${warn(t.link.lost)} corrupt ${warn(t.link.corrupt)} recv ${t.link.received}`,
        `lost ${warn(t.link.lost)} corrupt ${warn(t.link.corrupt)}`,
      ]
    : ['link -'];
  const lines = [
    fit(width, [
      `state ${state}   rate ${rate} Hz (set ${p.rateHz})   tick work ${work} us`,
      `state ${state}  rate ${rate} Hz (set ${p.rateHz})  work ${work} us`,
      `state ${state}  rate ${rate} Hz`,
      `${state} ${rate} Hz`,
    ]),
    fit(width, [
      `sample->answer [us] now ${now} p50 ${p50Us} p99 ${p99Us} max ${maxUs}  ${overruns}`,
      `latency [us] now ${now} p99 ${p99Us} max ${maxUs}  ${overruns}`,
      `${overruns}  latency p99 ${p99Us} max ${maxUs} us`,
      `${overruns}  p99 ${p99Us} us`,
      overruns,
      late,
    ]),
    fit(width, link),
    p.recording
      ? p.recording.failure
        ? `{red-fg}rec failed: ${esc(p.recording.failure)}{/red-fg}`
        : recordingLine(p.recording.file, p.recording.ticks, width, g)
      : 'rec off (r to record)',
  ];
  const room = Math.max(1, height - lines.length);
  if (room === 1) {
    // The newest events that fit on one line.
    let ev = '';
    for (const e of p.events) {
      const next = ev ? `${ev}  ${e}` : e;
      if (next.length > width && ev) break;
      ev = next;
    }
    lines.push(`{gray-fg}${esc(ev)}{/gray-fg}`);
  } else {
    for (const e of p.events.slice(0, room)) lines.push(`{gray-fg}${esc(e)}{/gray-fg}`);
  }
  return lines;
}

/** The loop panel's recording line in `width` cells: a long file name loses its middle, never the tick count or its end (the file's name). */
function recordingLine(file: string, ticks: number, width: number, g: Glyphs): string {
  const rec = `{red-fg}${g.dot} rec{/red-fg} `;
  const room = Math.max(12, width - visibleLength(rec) - ` ${ticks} ticks`.length);
  const cut = file.lastIndexOf('/') + 1;
  const [dir, name] = [file.slice(0, cut), file.slice(cut)];
  const dots = g.ellipsis;
  // The folder loses its end first (the file's own name says which run it is), then the name its middle.
  const short =
    file.length <= room
      ? file
      : name.length + dots.length < room
        ? `${dir.slice(0, room - name.length - dots.length)}${dots}${name}`
        : elideMiddle(name, room, g);
  return fit(width, [
    `${rec}${esc(file)}  ${ticks} ticks  (r to stop)`,
    `${rec}${esc(file)}  ${ticks} ticks`,
    `${rec}${esc(short)} ${ticks} ticks`,
  ]);
}

/** A strip chart: which channels, in which colours. */
export interface ChartSpec {
  title: string;
  series: { channel: Channel; colour: number }[];
  /** The vertical range never shrinks below this [unit]. */
  minSpan: number;
}

/** The three charts, for an arm with `joints` joints. */
export function chartSpecs(joints: 1 | 2): ChartSpec[] {
  const only = (s: { channel: Channel; colour: number }[]): { channel: Channel; colour: number }[] =>
    s.filter((x) => joints === 2 || !x.channel.endsWith('1'));
  return [
    {
      title: 'angle [deg]',
      series: only([
        { channel: 'qDes0', colour: C.desired },
        { channel: 'qDes1', colour: C.desired },
        { channel: 'q0', colour: C.j1 },
        { channel: 'q1', colour: C.j2 },
      ]),
      minSpan: 10,
    },
    {
      title: 'tracking error [deg]',
      series: only([
        { channel: 'err0', colour: C.j1 },
        { channel: 'err1', colour: C.j2 },
      ]),
      minSpan: 0.5,
    },
    {
      title: 'torque [N m]',
      series: only([
        { channel: 'ff0', colour: C.dim },
        { channel: 'ff1', colour: C.dim },
        { channel: 'tau0', colour: C.j1 },
        { channel: 'tau1', colour: C.j2 },
      ]),
      minSpan: 0.5,
    },
  ];
}

/** The label of a chart's box, with its legend. */
export function chartLabel(spec: ChartSpec, windowS: number): string {
  const has = (c: Channel): boolean => spec.series.some((s) => s.channel === c);
  const legend: string[] = [];
  if (has('q0') || has('err0') || has('tau0')) legend.push('{green-fg}j1{/green-fg}');
  if (has('q1') || has('err1') || has('tau1')) legend.push('{magenta-fg}j2{/magenta-fg}');
  if (has('qDes0')) legend.push('{yellow-fg}des{/yellow-fg}');
  if (has('ff0')) legend.push('{gray-fg}ff{/gray-fg}');
  return ` ${spec.title} ${legend.join(' ')} {gray-fg}last ${windowS} s{/gray-fg} `;
}

function axis(v: number): string {
  const a = Math.abs(v);
  const s = a >= 100 ? v.toFixed(0) : a >= 10 ? v.toFixed(1) : v.toFixed(2);
  return s.padStart(6).slice(-6);
}

/** Width of a chart's axis labels [cells]. */
const LABEL_W = 7;

/**
 * A strip chart of the last `windowS` seconds before `now` (loop time [s]), `cols` x `rows` cells:
 * axis labels on the left, the series on the right, the range fitted to what is in the window.
 */
export function chartCanvas(
  spec: ChartSpec,
  h: History,
  now: number,
  windowS: number,
  cols: number,
  rows: number,
  mode: CanvasMode,
): DotCanvas {
  const canvas = new DotCanvas(Math.max(0, cols), Math.max(0, rows), mode);
  if (rows < 1 || cols < LABEL_W + 4) return canvas;
  const dotsPerCell = canvas.width / canvas.cols;
  const left = LABEL_W * dotsPerCell;
  const t0 = now - windowS;
  const first = Math.max(0, h.since(t0) - 1);
  let lo = Infinity;
  let hi = -Infinity;
  for (let i = first; i < h.length; i++) {
    for (const s of spec.series) {
      const v = h.value(i, s.channel);
      if (Number.isFinite(v)) {
        if (v < lo) lo = v;
        if (v > hi) hi = v;
      }
    }
  }
  if (!(lo <= hi)) {
    lo = -spec.minSpan / 2;
    hi = spec.minSpan / 2;
  }
  if (hi - lo < spec.minSpan) {
    const mid = (hi + lo) / 2;
    lo = mid - spec.minSpan / 2;
    hi = mid + spec.minSpan / 2;
  }
  const pad = 0.06 * (hi - lo);
  lo -= pad;
  hi += pad;
  const W = canvas.width - 1 - left;
  const H = canvas.height - 1;
  const X = (t: number): number => left + Math.max(-1, ((t - t0) / windowS) * W);
  const Y = (v: number): number => H - ((v - lo) / (hi - lo)) * H;
  if (lo < 0 && hi > 0) for (let x = left; x <= left + W; x += 3) canvas.set(x, Y(0), C.dim);
  for (const s of spec.series) {
    let px = NaN;
    let py = NaN;
    for (let i = first; i < h.length; i++) {
      const x = X(h.time(i));
      const y = Y(h.value(i, s.channel));
      if (Number.isFinite(px)) canvas.line(px, py, x, y, s.colour);
      else if (x >= left) canvas.set(x, y, s.colour);
      px = x;
      py = y;
    }
  }
  // The first sample before the window draws its line from the left edge: clear what spilled left.
  for (let r = 0; r < rows; r++) canvas.write(0, r, ' '.repeat(LABEL_W), C.dim);
  canvas.write(0, 0, `${axis(hi)} `, C.dim);
  if (rows > 1) canvas.write(0, rows - 1, `${axis(lo)} `, C.dim);
  if (rows > 4 && lo < 0 && hi > 0) {
    const zr = Math.round((Y(0) / Math.max(1, H)) * (rows - 1));
    if (zr > 0 && zr < rows - 1) canvas.write(0, zr, `${axis(0)} `, C.dim);
  }
  return canvas;
}

/** Poses to draw: joint angles [rad]. */
export interface ArmPoses {
  measured?: number[];
  twin?: number[];
  desired?: number[];
}

/**
 * The arm seen from the front, `cols` x `rows` cells: the desired (yellow), twin (cyan) and measured
 * (white) poses as stick figures over the planned endpoint path (gray) and the measured endpoint's
 * trail (green). Joint 1 is at the centre; +x right, +y up.
 */
export function armCanvas(
  arm: ArmParams,
  poses: ArmPoses,
  h: History,
  planned: readonly Readonly<Vec2>[] | undefined,
  cols: number,
  rows: number,
  mode: CanvasMode,
  now: number,
  trailS = 3,
): DotCanvas {
  const canvas = new DotCanvas(Math.max(0, cols), Math.max(0, rows), mode);
  if (cols < 1 || rows < 1) return canvas;
  const two = 'L2' in arm;
  const R = arm.L1 + (two ? arm.L2 : 0);
  const s = (0.96 * Math.min(canvas.width, canvas.height)) / (2 * R);
  const cx = (canvas.width - 1) / 2;
  const cy = (canvas.height - 1) / 2;
  const X = (x: number): number => cx + x * s;
  const Y = (y: number): number => cy - y * s;
  // the mount
  canvas.line(X(-0.08 * R), Y(-0.03 * R), X(0.08 * R), Y(-0.03 * R), C.dim);
  // the plan's points (x, y [m]; a plan of one point draws nothing)
  if (planned && planned.length > 1) for (const [x, y] of planned) canvas.set(X(x), Y(y), C.dim);
  let px = NaN;
  let py = NaN;
  for (let i = h.since(now - trailS); i < h.length; i++) {
    const x = X(h.value(i, 'x'));
    const y = Y(h.value(i, 'y'));
    if (Number.isFinite(px)) canvas.line(px, py, x, y, C.j1);
    px = x;
    py = y;
  }
  const pose = (q: number[] | undefined, colour: number, marks: boolean): void => {
    if (!q || !q.every(Number.isFinite)) return;
    const fk = forwardKinematics(arm, q);
    // the base, the elbow of a two-link arm, the endpoint: one link between each two [m]
    const pts: Vec2[] = [[0, 0], ...(fk.elbow ? [fk.elbow.position] : []), fk.endpoint.position];
    for (let i = 1; i < pts.length; i++) {
      const [ax, ay] = pts[i - 1]!;
      const [bx, by] = pts[i]!;
      canvas.line(X(ax), Y(ay), X(bx), Y(by), colour);
      // the measured arm two dots thick, so that it reads as the arm over the thin plan and twin
      if (marks) canvas.line(X(ax) + 1, Y(ay), X(bx) + 1, Y(by), colour);
    }
    if (marks) {
      for (const [x0, y0] of pts) {
        const x = X(x0);
        const y = Y(y0);
        canvas.set(x + 1, y, colour);
        canvas.set(x, y + 1, colour);
        canvas.set(x - 1, y, colour);
        canvas.set(x, y - 1, colour);
      }
    }
  };
  pose(poses.desired, C.desired, false);
  pose(poses.twin, C.twin, false);
  pose(poses.measured, C.measured, true);
  if (poses.measured && poses.measured.every(Number.isFinite) && rows >= 3) {
    const e = forwardKinematics(arm, poses.measured).endpoint.position;
    canvas.write(0, rows - 1, `x ${e[0].toFixed(3)} y ${e[1].toFixed(3)} m`, C.dim);
  }
  return canvas;
}

/** The label of the drawing's box, with its legend. */
export function armLabel(): string {
  return ' arm {white-fg}measured{/white-fg} {cyan-fg}twin{/cyan-fg} {yellow-fg}desired{/yellow-fg} {green-fg}path{/green-fg} {gray-fg}plan{/gray-fg} ';
}
