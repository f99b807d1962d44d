// A blessed screen on stand-in streams (a fake terminal of a given size) and a stand-in for the
// session, for the dashboard tests: what the dashboard sends, and what is on the screen.
import type { StopReason } from '../src/control/stop.js';
import { PassThrough, Writable } from 'node:stream';
import blessed from 'blessed';
import type { LoopCommand, LoopEvent } from '../src/control/loop.js';
import { F, LOOP_STATES, PHASES, TICK_WIDTH, type LoopState, type TrajPhase } from '../src/telemetry/tick.js';
import type { DashboardSession } from '../src/tui/dashboard.js';

const RAD = Math.PI / 180;

export interface FakeTerminal {
  input: PassThrough;
  output: Writable & { columns: number; rows: number; isTTY: boolean };
  screen: blessed.Widgets.Screen;
  /** Everything written to the terminal so far. */
  written(): string;
  /** Types keys (raw bytes, as a terminal sends them). */
  type(s: string): void;
  resize(cols: number, rows: number): void;
  /** The screen's cells as text, one string a row. */
  text(): string[];
  /** Foreground colour numbers (0-255; 511 = default) used in a block of cells. */
  colours(rows: [number, number], cols: [number, number]): Set<number>;
}

export function fakeTerminal(cols = 120, rows = 40, opts: { unicode?: boolean } = {}): FakeTerminal {
  const input = new PassThrough();
  let out = '';
  const output = new Writable({
    write(chunk: Buffer, _enc, cb) {
      out += chunk.toString('utf8');
      cb();
    },
  }) as FakeTerminal['output'];
  output.columns = cols;
  output.rows = rows;
  output.isTTY = true;
  const screen = blessed.screen({
    input: input,
    output: output as never,
    terminal: 'xterm-256color',
    forceUnicode: opts.unicode ?? true,
    warnings: false,
    smartCSR: true,
  });
  return {
    input,
    output,
    screen,
    written: () => out,
    type: (s) => {
      input.emit('data', Buffer.from(s, 'utf8'));
    },
    resize: (c, r) => {
      output.columns = c;
      output.rows = r;
      output.emit('resize');
    },
    text: () => {
      const lines = (screen as unknown as { lines: [number, string][][] }).lines;
      return lines.map((row) => row.map((cell) => cell[1]).join(''));
    },
    colours: (rs, cs) => {
      const lines = (screen as unknown as { lines: [number, string][][] }).lines;
      const out = new Set<number>();
      for (let r = rs[0]; r < rs[1]; r++)
        for (let c = cs[0]; c < cs[1]; c++) if (lines[r]?.[c] && lines[r]![c]![1] !== ' ') out.add((lines[r]![c]![0] >> 9) & 0x1ff);
      return out;
    },
  };
}

/** What a test puts in a row: angles in degrees, the rest in SI units. */
export interface RowSpec {
  t?: number;
  i?: number;
  state?: LoopState;
  phase?: TrajPhase;
  trajT?: number;
  qDesDeg?: number[];
  qDeg?: number[];
  twinDeg?: number[];
  qdDesDeg?: number[];
  qdDeg?: number[];
  resDeg?: number[];
  tauFf?: number[];
  tauPid?: number[];
  tauCmd?: number[];
  duty?: number[];
  alarm?: number;
  sat?: number;
  overruns?: number;
  /** Tick start minus its grid time [us]. */
  errUs?: number;
  link?: [number, number, number, number];
}

export function makeRow(s: RowSpec): Float64Array {
  const r = new Float64Array(TICK_WIDTH);
  const put = (f: number, v: number[] | undefined, k = 1): void => {
    if (v) v.forEach((x, i) => (r[f + i] = x * k));
  };
  r[F.t] = s.t ?? 1;
  r[F.i] = s.i ?? 500;
  r[F.state] = LOOP_STATES.indexOf(s.state ?? 'track');
  r[F.phase] = PHASES.indexOf(s.phase ?? 'track');
  r[F.trajT] = s.trajT ?? 0.5;
  put(F.qDes0, s.qDesDeg, RAD);
  put(F.q0, s.qDeg, RAD);
  put(F.twinQ0, s.twinDeg, RAD);
  put(F.qdDes0, s.qdDesDeg, RAD);
  put(F.qd0, s.qdDeg, RAD);
  put(F.res0, s.resDeg, RAD);
  put(F.tauFf0, s.tauFf);
  put(F.tauPid0, s.tauPid);
  put(F.tauCmd0, s.tauCmd);
  put(F.duty0, s.duty);
  r[F.alarm] = s.alarm ?? 0;
  r[F.sat] = s.sat ?? 0;
  r[F.overruns] = s.overruns ?? 0;
  r[F.errUs] = s.errUs ?? 0;
  const l = s.link ?? [500, 499, 0, 0];
  r[F.sent] = l[0];
  r[F.received] = l[1];
  r[F.lost] = l[2];
  r[F.corrupt] = l[3];
  return r;
}

/** A stand-in for the Session: rows are set by the test, commands and recordings are collected. */
export class FakeSession implements DashboardSession {
  row: Float64Array | undefined;
  readonly sent: LoopCommand[] = [];
  readonly recordings: string[] = [];
  listeners: ((e: LoopEvent) => void)[] = [];
  finishHooks: ((s: { stop: StopReason; timing?: { answerDelaySamples: number | null } }) => Promise<void> | void)[] = [];
  recording: { file: string; ticks: number } | undefined;
  describe = 'line protocol to the mock rig';
  stats = { rateHz: 500, period: { quantile: (q: number) => (q < 0.9 ? 7 : 950), max: 1800 } };
  latest(): Float64Array | undefined {
    return this.row;
  }
  send(c: LoopCommand): void {
    this.sent.push(c);
  }
  subscribe(l: (e: LoopEvent) => void): () => void {
    this.listeners.push(l);
    return () => {
      this.listeners = this.listeners.filter((x) => x !== l);
    };
  }
  onFinish(hook: (s: { stop: StopReason; timing?: { answerDelaySamples: number | null } }) => Promise<void> | void): void {
    this.finishHooks.push(hook);
  }
  startRecording(file: string): void {
    this.recordings.push(file);
    this.recording = { file, ticks: 0 };
  }
  stopRecording(): { file: string; ticks: number } | undefined {
    const r = this.recording;
    this.recording = undefined;
    return r;
  }
  emit(e: LoopEvent): void {
    for (const l of this.listeners) l(e);
  }
  /** Ends the run: what Session does when the worker exits. */
  finish(stop: StopReason, answerDelaySamples?: number): Promise<unknown> {
    return Promise.all(
      this.finishHooks.map((h) =>
        Promise.resolve(h({ stop, ...(answerDelaySamples !== undefined ? { timing: { answerDelaySamples } } : {}) })),
      ),
    );
  }
}
