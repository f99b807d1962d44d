/**
 * The live dashboard of `twolink run` and `twolink demo` (blessed): per-joint numbers, strip charts,
 * a drawing of the arm, the loop's timing and link, the trajectory's progress, and the keys that
 * command the loop. It samples the newest row the loop published in shared memory at 20 Hz and never
 * waits on the loop (which runs in its own thread); what it costs the loop on a busy machine is
 * measured by src/bench/tui.ts.
 *
 * Keys act before anything is drawn; the e-stop key is taken from the raw input bytes ahead of
 * blessed's own parsing. Every way out (the end of the run, q, an exception, a signal, process exit)
 * goes through one idempotent `stop()` that gives the terminal back as it was.
 */
import { existsSync, statSync } from 'node:fs';
import blessed from 'blessed';
import { accepts, isFinished, refusal, type LoopCommand, type LoopCommandKind, type Refusal } from '../control/commands.js';
import { describeEvent, type LoopEvent, type PhasePlan } from '../control/events.js';
import { describeStop, internalFault, type StopReason } from '../control/stop.js';
import { tickObject, type TickObject, type TrajPhase } from '../telemetry/tick.js';
import { forwardKinematics } from '../model/kinematics.js';
import type { CanvasMode } from './canvas.js';
import type { DashboardOptions, DashboardViewOptions } from './dashboard-options.js';
import { canvasBox } from './canvas-box.js';
import { History } from './history.js';
import { estopInInput, helpText, HIDDEN_KEYS, KEYS, STIFFNESS_STEP, type KeyAction } from './keys.js';
import { layout, type Layout, type Rect } from './layout.js';
import {
  armCanvas,
  armLabel,
  ASCII_GLYPHS,
  chartCanvas,
  chartLabel,
  chartSpecs,
  headerLine,
  jointLines,
  loopLines,
  messageLine,
  UNICODE_GLYPHS,
  type ChartSpec,
  type PanelState,
  type Progress,
} from './panels.js';

const DEG = 180 / Math.PI;

export type { DashboardOptions, DashboardSession, DashboardViewOptions } from './dashboard-options.js';

/** Seconds of history in the strip charts. */
export const CHART_WINDOW_S = 6;

/** `run-YYYYMMDD-HHMMSS.ndjson` for a local time. */
export function recordingName(d: Date): string {
  const p = (n: number, w = 2): string => String(n).padStart(w, '0');
  return `run-${p(d.getFullYear(), 4)}${p(d.getMonth() + 1)}${p(d.getDate())}-${p(d.getHours())}${p(d.getMinutes())}${p(d.getSeconds())}.ndjson`;
}

/** What the status line says when a key's command is sent. */
const SENT: Partial<Record<LoopCommandKind, string>> = {
  pause: 'pause',
  resume: 'resume',
  enable: 'enable: holding where the arm is',
  disable: 'disable: motors off',
  next: 'next trajectory',
  zero: 'zeroing the encoders here',
};

/** The status line for a key the loop would refuse: the table's reason, with the key to press first. */
export function refusalText(r: Refusal): string {
  if (r.over) return `${r.why}: q to exit`;
  const first = r.first && KEYS.find((k) => k.commands?.includes(r.first!));
  return first ? `${r.why} (${first.shown} to ${r.first})` : r.why;
}

/** Whether the run ended in a way the user must see before the screen goes: an e-stop or a fault. */
function worthWaiting(stop: StopReason): boolean {
  switch (stop.kind) {
    case 'fault':
      return true;
    case 'estop':
      return stop.by === undefined || stop.by === 'key'; // not one a second Ctrl-C or q asked for
    default:
      return false;
  }
}

interface CurrentTrajectory {
  name: string;
  index: number;
  phase: TrajPhase;
  /** The current (or, once done, the last) phase's plan, from the loop's event. */
  plan?: PhasePlan;
  /** Duration of the trajectory proper [s], once its phase has begun. */
  duration?: number;
  /** Time in the phase at the last frame [s]. */
  t: number;
}

type Box = blessed.Widgets.BoxElement;

/** The dashboard on a blessed screen. `startDashboard` puts it on the terminal. */
export class Dashboard {
  private readonly o: DashboardViewOptions;
  private readonly screen: blessed.Widgets.Screen;
  private readonly history = new History(1024);
  private readonly mode: CanvasMode;
  private readonly boxes: {
    header: Box;
    message: Box;
    help: Box;
    joints: Box;
    loop: Box;
    arm: ReturnType<typeof canvasBox>;
    charts: ReturnType<typeof canvasBox>[];
  };
  private readonly charts: ChartSpec[];
  private lay: Layout;
  private timer: NodeJS.Timeout | undefined;
  private unsubscribe: (() => void) | undefined;
  private readonly onData: (d: Buffer | string) => void;
  private stopped = false;
  private frames = 0;
  private tick: TickObject | undefined;
  private lastIndex = -1;
  private rateRef: { i: number; t: number } | undefined;
  private measuredHz: number | undefined;
  private period = { p50Us: 0, p99Us: 0, maxUs: 0 };
  private events: string[] = [];
  private message: { text: string; level: 'info' | 'warn' | 'error'; untilFrame: number } | undefined;
  private quitPresses = 0;
  private over: string | undefined;
  private release: (() => void) | undefined;
  private traj: CurrentTrajectory | undefined;
  private renderQueued = false;
  /** Rows the notice needs at the screen's width (fitMessage). */
  private messageRows = 1;

  constructor(o: DashboardViewOptions) {
    this.o = o;
    this.screen = o.screen;
    const tput = (this.screen.program as unknown as { tput: unknown }).tput as { unicode?: boolean; numbers?: { U8?: number } };
    this.mode = o.canvas ?? (tput.unicode || tput.numbers?.U8 === 1 ? 'braille' : 'ascii');
    this.charts = chartSpecs(o.rig.joints);
    const box = (extra: blessed.Widgets.BoxOptions): Box => blessed.box({ parent: this.screen, tags: true, wrap: false, ...extra });
    const framed = (label: string): Box => box({ border: { type: 'line' }, label, style: { border: { fg: 'gray' } } });
    this.boxes = {
      header: box({ height: 1 }),
      // A long notice (a fault's whole reason) wraps onto as many rows as it needs (layout.ts MAX_MESSAGE_ROWS).
      message: box({ height: 1, wrap: true }),
      help: box({ height: 1, style: { fg: 'black', bg: 'white' } }),
      joints: framed(' joints '),
      loop: framed(' loop '),
      arm: canvasBox(this.screen, armLabel()),
      charts: this.charts.map((c) => canvasBox(this.screen, chartLabel(c, CHART_WINDOW_S))),
    };
    this.lay = layout(0, 0);
    this.applyLayout();
    // The e-stop: on the raw bytes, ahead of blessed's listeners and of any drawing.
    this.onData = (d) => {
      if (this.stopped) return;
      if (estopInInput(typeof d === 'string' ? d : d.toString('latin1'))) this.act('estop');
    };
    this.screen.program.input.prependListener('data', this.onData);
    for (const k of [...KEYS, ...HIDDEN_KEYS]) {
      if (k.action === 'estop') continue;
      this.screen.key(k.keys, () => this.act(k.action));
    }
    this.screen.on('resize', () => {
      try {
        this.applyLayout();
      } catch (e) {
        if (this.o.onFailure) this.o.onFailure(e);
        else throw e;
      }
      this.frame();
    });
    this.unsubscribe = o.session.subscribe((e) => this.onEvent(e));
    // The end line names the answer delay the loop learned (the cable is in the connected line).
    o.session.onFinish((s) =>
      this.finished(s.stop, s.timing?.answerDelaySamples ? `; answers applied ${s.timing.answerDelaySamples} sample(s) late, learned` : ''),
    );
  }

  /** Starts drawing at the frame rate. */
  start(): void {
    if (this.stopped || this.timer) return;
    this.frame();
    this.timer = setInterval(() => this.frame(), 1000 / (this.o.fps ?? 20));
  }

  /** Stops drawing, gives the terminal back and ends the wait for q. Idempotent. */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.unsubscribe?.();
    this.screen.program.input.removeListener('data', this.onData);
    try {
      this.screen.destroy();
    } catch {
      // a terminal that has gone away cannot be restored
    }
    this.release?.();
  }

  /** Ends the wait for q after an e-stop or a fault (a signal, a failure). */
  releaseWait(): void {
    this.release?.();
  }

  /** The current layout (for tests). */
  get currentLayout(): Layout {
    return this.lay;
  }

  /** Acts on a key. */
  act(action: KeyAction): void {
    if (this.stopped) return;
    const s = this.o.session;
    try {
      if (action === 'estop') {
        s.send({ kind: 'estop', reason: { kind: 'estop', by: 'key' } });
        this.say('E-STOP sent', 'error');
        this.queueRender();
        return;
      }
      if (action === 'quit' || action === 'interrupt') {
        if (this.release) {
          this.release();
          return;
        }
        if (this.over) return;
        this.quitPresses++;
        this.o.onQuit(action === 'quit' ? { kind: 'quit' } : { kind: 'interrupted', signal: 'SIGINT' });
        this.queueRender();
        return;
      }
      if (action === 'stiffer' || action === 'softer') {
        const f = action === 'stiffer' ? STIFFNESS_STEP : 1 / STIFFNESS_STEP;
        const k = this.tick?.stiffness ?? 0;
        if (s.scaleStiffness?.(f))
          this.say(
            `stiffness ${action === 'stiffer' ? 'up' : 'down'} x${f.toFixed(2)} (from ${k.toFixed(0)}; reached over ~0.2 s, capped at the passivity bound)`,
          );
        else this.say('+ and - change the stiffness in impedance mode (--mode impedance)', 'warn');
        this.queueRender();
        return;
      }
      if (action === 'float') {
        this.toggleFloat();
        this.queueRender();
        return;
      }
      if (action === 'tare') {
        if (s.tareForce?.()) this.say('force estimate zeroed here (f)');
        else this.say('f zeroes the force estimate in impedance mode (--mode impedance)', 'warn');
        this.queueRender();
        return;
      }
      const binding = KEYS.find((k) => k.action === action);
      const state = this.tick?.state;
      if (binding?.commands) this.command(binding.commands);
      else if (this.over !== undefined || (state && isFinished(state)))
        this.say(`the run is over (${this.over ?? state}): q to exit`, 'warn');
      else if (action === 'record') {
        if (s.recording) {
          const r = s.stopRecording();
          this.say(
            r ? `recorded ${r.ticks} ticks to ${r.file}${r.failure ? ` (${r.failure})` : ''}` : 'not recording',
            r?.failure ? 'error' : 'info',
          );
        } else {
          const name = recordingName((this.o.now ?? (() => new Date()))());
          const file = this.o.recordDir ? `${this.o.recordDir.replace(/\/$/, '')}/${name}` : name;
          s.startRecording(file);
          this.say(`recording to ${file} (r to stop)`);
        }
      }
    } catch (e) {
      this.say(e instanceof Error ? e.message : String(e), 'error');
    }
    this.queueRender();
  }

  /**
   * Sends the first of `kinds` the loop accepts in its state (ACCEPTED_COMMANDS, the loop's own
   * table; before the first row the loop is idle), or says why the loop would take none of them.
   */
  private command(kinds: readonly LoopCommandKind[]): void {
    if (this.over !== undefined) {
      this.say(`the run is over (${this.over}): q to exit`, 'warn');
      return;
    }
    const state = this.tick?.state ?? 'idle';
    const kind = kinds.find((k) => accepts(state, k));
    if (kind) {
      this.o.session.send({ kind } as LoopCommand);
      this.say(SENT[kind] ?? kind);
      return;
    }
    const r = refusal(state, kinds[0]!);
    if (r) this.say(refusalText(r), 'warn');
  }

  say(text: string, level: 'info' | 'warn' | 'error' = 'info'): void {
    this.message = { text, level, untilFrame: this.frames + 4 * (this.o.fps ?? 20) };
  }

  private queueRender(): void {
    if (this.renderQueued || this.stopped) return;
    this.renderQueued = true;
    setImmediate(() => {
      this.renderQueued = false;
      this.frame();
    });
  }

  private onEvent(e: LoopEvent): void {
    try {
      this.events.unshift(describeEvent(e));
      if (this.events.length > 20) this.events.length = 20;
      if (e.kind !== 'trajectory') return;
      const c = this.traj;
      if (e.phase === 'none') {
        if (c && c.name === e.name) c.phase = 'none';
        return;
      }
      // A new trajectory begins with its approach (or, if its first events were missed, any phase).
      const next =
        e.phase === 'approach' || !c || c.name !== e.name
          ? { name: e.name, index: this.o.paths.findIndex((p) => p.name === e.name) + 1, t: 0 }
          : c;
      const duration = e.phase === 'track' ? e.plan.toS - e.plan.fromS : next === c ? c.duration : undefined;
      this.traj = { ...next, phase: e.phase, plan: e.plan, t: 0, ...(duration !== undefined ? { duration } : {}) };
    } catch {
      // an event the dashboard cannot describe is not worth stopping for
    }
  }

  private finished(stop: StopReason, note = ''): Promise<void> | void {
    this.over = describeStop(stop) + note;
    if (this.stopped) return;
    this.frame();
    if (this.quitPresses > 0 || !worthWaiting(stop)) return;
    return new Promise<void>((resolve) => {
      this.release = () => {
        this.release = undefined;
        resolve();
      };
      this.frame();
    });
  }

  private applyLayout(): void {
    const L = layout(this.screen.width as number, this.screen.height as number, this.messageRows);
    this.lay = L;
    const place = (b: Box, r: Rect | undefined): void => {
      if (!r) {
        b.hide();
        return;
      }
      b.left = r.left;
      b.top = r.top;
      b.width = r.width;
      b.height = r.height;
      b.show();
    };
    place(this.boxes.header, L.header);
    place(this.boxes.message, L.message);
    place(this.boxes.help, L.help);
    place(this.boxes.joints, L.joints);
    place(this.boxes.loop, L.loop);
    place(this.boxes.arm.box, L.arm);
    this.boxes.charts.forEach((b, i) => place(b.box, L.charts[i]));
  }

  private progress(): Progress | undefined {
    const c = this.traj;
    if (!c) return undefined;
    const t = this.tick;
    // Time in the phase: the row's trajectory time from the phase's planned start, within the phase.
    if (t && t.state === 'track' && t.trajT >= 0 && c.plan && c.phase !== 'none')
      c.t = Math.max(0, Math.min(c.plan.toS - c.plan.fromS, t.trajT - c.plan.fromS));
    const description = this.o.paths[c.index - 1]?.description;
    return {
      name: c.name,
      index: c.index,
      count: this.o.paths.length,
      phase: c.phase,
      t: c.t,
      ...(c.duration !== undefined ? { duration: c.duration } : {}),
      ...(description ? { description } : {}),
    };
  }

  private sample(): void {
    const row = this.o.session.latest();
    if (!row) return;
    const t = tickObject(row, this.o.rig.joints);
    this.tick = t;
    if (t.i === this.lastIndex) return;
    this.lastIndex = t.i;
    if (!this.rateRef || t.t < this.rateRef.t) this.rateRef = { i: t.i, t: t.t };
    else if (t.t - this.rateRef.t >= 1) {
      this.measuredHz = (t.i - this.rateRef.i) / (t.t - this.rateRef.t);
      this.rateRef = { i: t.i, t: t.t };
    }
    const two = this.o.rig.joints === 2;
    const at = (a: number[], i: number): number => (i === 0 || two ? a[i]! : 0);
    const fk = forwardKinematics(this.o.rig.arm, t.meas.q).endpoint.position;
    this.history.push(t.t, {
      qDes0: at(t.des.q, 0) * DEG,
      qDes1: at(t.des.q, 1) * DEG,
      q0: at(t.meas.q, 0) * DEG,
      q1: at(t.meas.q, 1) * DEG,
      err0: (at(t.des.q, 0) - at(t.meas.q, 0)) * DEG,
      err1: (at(t.des.q, 1) - at(t.meas.q, 1)) * DEG,
      res0: at(t.twin.res, 0) * DEG,
      res1: at(t.twin.res, 1) * DEG,
      tau0: at(t.tau.cmd, 0),
      tau1: at(t.tau.cmd, 1),
      ff0: at(t.tau.ff, 0),
      ff1: at(t.tau.ff, 1),
      x: fk[0],
      y: fk[1],
    });
  }

  /** What the text panels show now. */
  /** The float key: leave float when it is (mostly) in, else enter it; the tick's blend weight says which. */
  private toggleFloat(): void {
    const s = this.o.session;
    const on = (this.tick?.float ?? 0) < 0.5;
    if (this.tick && isFinished(this.tick.state)) this.say(`the run is over (${this.over ?? this.tick.state}): q to exit`, 'warn');
    else if (s.setFloat?.(on))
      this.say(
        on
          ? 'entering float: gravity and friction cancelled, the arm goes where the hand takes it (g holds)'
          : 'leaving float: holding where the arm is (g floats again)',
      );
    else this.say('g enters and leaves float in float mode (--mode float)', 'warn');
  }

  panelState(): PanelState {
    const s = this.o.session;
    const rec = s.recording;
    const msg = this.message && this.message.untilFrame >= this.frames ? this.message : undefined;
    const progress = this.progress();
    return {
      title: `twolink ${this.o.demo ? 'demo' : 'run'}`,
      rigName: this.o.rig.name,
      describe: s.describe,
      joints: this.o.rig.joints,
      ...(this.tick ? { tick: this.tick } : {}),
      ...(s.floatMode ? { floatMode: true } : {}),
      alarmDeg: this.o.rig.twin.alarmDeg,
      rateHz: s.stats.rateHz,
      ...(this.measuredHz !== undefined ? { measuredHz: this.measuredHz } : {}),
      period: this.period,
      ...(progress ? { progress } : {}),
      ...(rec ? { recording: rec } : {}),
      events: this.events,
      ...(msg ? { message: { text: msg.text, level: msg.level } } : {}),
      quitPresses: this.quitPresses,
      ...(this.over !== undefined ? { over: this.over } : {}),
      waitingForQuit: this.release !== undefined,
      glyphs: this.mode === 'braille' ? UNICODE_GLYPHS : ASCII_GLYPHS,
    };
  }

  /** Samples the loop and draws one frame. Exceptions go to `onFailure`. */
  frame(): void {
    if (this.stopped) return;
    try {
      this.frames++;
      this.sample();
      if (this.frames % 12 === 1) {
        const p = this.o.session.stats.period;
        this.period = { p50Us: p.quantile(0.5), p99Us: p.quantile(0.99), maxUs: Math.round(p.max) };
      }
      this.draw();
      this.screen.render();
    } catch (e) {
      if (this.o.onFailure) this.o.onFailure(e);
      else throw e;
    }
  }

  /** Puts the notice in its box, and gives the box as many rows as the wrapped notice needs (laying the screen out again when that changed). */
  private fitMessage(text: string): void {
    if (!this.lay.message) return;
    this.boxes.message.setContent(text);
    const rows = Math.max(1, this.boxes.message.getScreenLines().length);
    if (rows === this.messageRows) return;
    this.messageRows = rows;
    this.applyLayout();
    this.boxes.message.setContent(text);
  }

  private draw(): void {
    const p = this.panelState();
    this.fitMessage(messageLine(p));
    const L = this.lay;
    const b = this.boxes;
    const inner = (r: Rect): { w: number; h: number } => ({ w: Math.max(0, r.width - 2), h: Math.max(0, r.height - 2) });
    if (L.header) {
      // With no message line, notices take the header.
      const notice = L.message ? '' : messageLine(p);
      b.header.setContent(notice || headerLine(p, L.header.width));
    }
    if (L.help) b.help.setContent(helpText(L.help.width, p.over !== undefined || p.waitingForQuit));
    if (L.joints) b.joints.setContent(jointLines(p).join('\n'));
    if (L.loop) b.loop.setContent(loopLines(p, inner(L.loop).w, inner(L.loop).h).join('\n'));
    const now = this.tick?.t ?? 0;
    if (L.arm) {
      const { w, h } = inner(L.arm);
      const t = this.tick;
      const poses = t
        ? { measured: t.meas.q, twin: t.twin.q, ...(t.state === 'idle' || t.state === 'disabled' ? {} : { desired: t.des.q }) }
        : {};
      const planned = this.traj?.plan?.path;
      b.arm.set(armCanvas(this.o.rig.arm, poses, this.history, planned, w, h, this.mode, now));
    }
    L.charts.forEach((r, i) => {
      const { w, h } = inner(r);
      b.charts[i]!.set(chartCanvas(this.charts[i]!, this.history, now, CHART_WINDOW_S, w, h, this.mode));
    });
  }
}

/** Options of `startDashboard` beyond the run's: the terminal (tests pass stand-ins). */
export interface StartOptions extends DashboardOptions {
  input?: NodeJS.ReadableStream & { isTTY?: boolean; setRawMode?: (raw: boolean) => void };
  output?: NodeJS.WritableStream & { isTTY?: boolean; columns?: number; rows?: number };
  fps?: number;
}

/**
 * Shows the dashboard on the terminal until `stop()`. An exception in the dashboard (or anywhere in
 * the process while it is up) gives the terminal back, prints the error and stops the arm through
 * `onQuit` (an e-stop follows if the arm has not stopped 5 s later). After an e-stop or a fault the
 * run's result waits for q, so that the user sees why the arm stopped.
 */
export function startDashboard(o: StartOptions): { stop(): void; say(text: string, level?: 'info' | 'warn' | 'error'): void } {
  const input = o.input ?? process.stdin;
  const output = o.output ?? process.stdout;
  // A terminal that went away (SIGHUP) fails writes asynchronously: nothing is left to draw on, and
  // the run must still end cleanly. Kept after stop() because writes may still be in flight.
  output.on('error', () => undefined);
  const screen = blessed.screen({
    input: input as never,
    output: output as never,
    smartCSR: true,
    fullUnicode: false,
    warnings: false,
    title: 'twolink',
    autoPadding: true,
  });
  const tput = (screen.program as unknown as { tput: { unicode?: boolean; brokenACS?: boolean } }).tput;
  // On a UTF-8 terminal, draw borders with UTF-8 box characters rather than the alternate character
  // set (what ncurses does with NCURSES_NO_UTF8_ACS): same picture, and copies of the screen (tmux
  // capture-pane, a terminal's select and copy) keep the lines instead of the letters lqqk.
  if (tput.unicode) tput.brokenACS = true;
  let stopped = false;
  let dash: Dashboard | undefined;
  const fail = (e: unknown): void => {
    const first = !stopped;
    restore();
    if (!first) return;
    process.stderr.write(`twolink: the dashboard failed, stopping the arm: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    const reason = internalFault('the main thread (the dashboard)', e);
    o.onQuit(reason);
    setTimeout(() => o.onQuit(reason), 5000).unref();
  };
  const onSignal = (): void => dash?.releaseWait();
  const restore = (): void => {
    if (stopped) return;
    stopped = true;
    process.off('uncaughtException', fail);
    process.off('exit', restore);
    process.off('SIGTERM', onSignal);
    process.off('SIGHUP', onSignal);
    process.off('SIGINT', onSignal);
    if (dash) dash.stop();
    else {
      try {
        screen.destroy();
      } catch {
        // nothing to restore on a terminal that has gone
      }
    }
  };
  process.on('uncaughtException', fail);
  process.on('exit', restore);
  process.on('SIGTERM', onSignal);
  process.on('SIGHUP', onSignal);
  process.on('SIGINT', onSignal);
  try {
    // r records into runs/ when the working directory has one (the repo's, which git ignores).
    const runs = existsSync('runs') && statSync('runs').isDirectory();
    dash = new Dashboard({ ...o, screen, onFailure: fail, ...(o.fps ? { fps: o.fps } : {}), ...(runs ? { recordDir: 'runs' } : {}) });
    dash.start();
  } catch (e) {
    fail(e);
  }
  return { stop: restore, say: (text, level) => dash?.say(text, level) };
}
