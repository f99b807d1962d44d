/**
 * The main thread's side of a run: it starts the loop's worker, drains the shared ring into the
 * recording, the statistics and the dashboard, forwards commands, and turns the worker's end (or its
 * death) into a summary. Nothing here is on the loop's timing path.
 */
import { Worker } from 'node:worker_threads';
import { checkWritablePath } from '../config/files.js';
import { Recorder, type RunRecorder } from '../telemetry/recorder.js';
import { runHeader } from './header.js';
import { RunStats, type RunSummary } from './stats.js';
import type { LoopCommand, LoopEvent } from '../control/loop.js';
import { describeStop, hostFault, internalFault, type StopReason } from '../control/stop.js';
import { createRing, RingReader, type RingBuffers } from '../control/ring.js';
import type { RunPlan, RunTiming, WorkerCommand, WorkerInput, WorkerMessage } from './messages.js';
import { reconnectAfter, Segments, type ReconnectOptions } from './session-reconnect.js';
import type { Injection } from '../mock/injections.js';
import type { BoardIdentity } from '../transport/link.js';
import { StopWatch } from './stop-watch.js';
import { blameMock } from '../mock/starvation.js';
import { taskCpuSeconds } from '../time/threads.js';

export interface SessionOptions extends RunPlan {
  /** NDJSON recording path. */
  record?: string;
  /** A recorder in another format to use instead of `record`'s NDJSON (the CLI's MCAP, record/mcap.ts). */
  recorder?: RunRecorder;
  /** Ask Linux for SCHED_FIFO for the loop's thread. */
  rt?: boolean;
  /** Threads of this process (Linux task ids) that stay at normal priority under `rt`: the live view's. */
  normalTids?: readonly number[];
  /** Every drained row (a view: copy to keep). */
  onRow?: (row: Float64Array) => void;
  /** After each drain (every 20 ms): the live view on the main thread reads the ring then, without a wake-up of its own. */
  onDrained?: () => void;
  onEvent?: (e: LoopEvent) => void;
  onReady?: (describe: string, identity: BoardIdentity) => void;
  /** Whether Linux granted real-time scheduling (with `rt`), and why not; off Linux, `what` priority the process got. */
  onRealtime?: (granted: boolean, reason?: string, what?: string) => void;
  /** `--reconnect`: after a pulled cable, wait for the same board and go on (session-reconnect.ts, docs/cable.md). */
  reconnect?: ReconnectOptions;
}

/** A recording started with `Session.startRecording` (the dashboard's r key). */
export interface LiveRecording {
  file: string;
  /** Tick lines handed to the file so far. */
  ticks: number;
  /** Why writing stopped (a full disk), if it did. */
  failure?: string;
}

export interface SessionResult {
  summary: RunSummary;
  /** Set when the run ended by an error before or outside the loop (the message). */
  error?: { name: string; message: string };
  /** Injections whose time the run never reached (the run ended first). */
  unapplied?: Injection[];
}

/** What the end of a run (or of one of its segments) has gathered from the loop's thread so far. */
export interface RunEnd {
  settled: boolean;
  stop: StopReason;
  extra: Partial<RunSummary>;
  error?: SessionResult['error'];
  counters?: { dropped: number; duplicate: number; reordered: number; overlong: number };
  timing?: RunTiming;
  rt: { granted: boolean; reason?: string };
  unapplied?: Injection[];
}

/** The summary's timing object from the worker's result (the row-derived figures are filled in at the end). */
function resultTiming(m: Extract<WorkerMessage, { type: 'result' }>, rateHz: number): RunTiming {
  return {
    sampleRateHz: rateHz,
    samplePeriodP99Us: 0,
    lateSamples: m.timing.lateSamples,
    burstSamples: m.timing.burstSamples,
    lostSamples: m.timing.lostSamples,
    latencyP50Us: 0,
    latencyP99Us: 0,
    answerDelaySamples: m.timing.answerDelaySamples ?? null,
    hostCpuPct: m.cpu.hostPct,
    mockCpuPct: m.cpu.mockPct,
    loopThreadCpuPct: Math.round(m.cpu.loopPct * 10) / 10,
    mainThreadCpuPct: Math.round(m.cpu.mainPct * 10) / 10,
    maxStallMs: 0,
    rt: false,
    ...(m.mock ? { mock: m.mock } : {}),
    loopThread: m.stalls,
  };
}

/** The parts the main thread hands drained rows to, named for a fault:internal. */
const DRAIN_PARTS = {
  recorder: 'the recorder',
  live: "the dashboard's recording",
  onRow: 'a row listener: the dashboard, the live view',
  onDrained: 'the live view',
} as const;
type DrainPart = keyof typeof DRAIN_PARTS;

export class Session {
  readonly stats: RunStats;
  readonly recorder: RunRecorder | undefined;
  private readonly ring = createRing();
  private readonly reader: RingReader;
  private worker: Worker | undefined;
  private timer: NodeJS.Timeout | undefined;
  private recordingStopSent = false;
  private readonly listeners = new Set<(e: LoopEvent) => void>();
  private readonly finishHooks: ((summary: RunSummary) => Promise<void> | void)[] = [];
  private live: { recorder: Recorder; stats: RunStats } | undefined;
  private stopWatch: NodeJS.Timeout | undefined;
  private messages = 0;
  /** The loop thread's heartbeat (worker.ts) and Linux task id. */
  private readonly beat = new Int32Array(new SharedArrayBuffer(4));
  /** Undefined until the loop thread has said it (it is still starting); -1 off Linux. */
  private loopTid: number | undefined;
  /** Commands sent before the loop's thread was started (a signal during start-up), and a stopNow's grace. */
  private readonly early: LoopCommand[] = [];
  private earlyStopGraceMs: number | undefined;
  private blockedStop: StopReason | undefined;
  /** The first bug of twolink's own on this thread during the run (crash.ts): the run's stop, over a normal end. */
  private crashStop: StopReason | undefined;
  /** Board and transport, once connected. */
  describe = '';

  constructor(private readonly o: SessionOptions) {
    this.stats = new RunStats(o.rig.joints, o.rateHz).encoders(o.rig.encoders);
    if (o.impedance) this.stats.trackImpedance(o.impedance.space, o.impedance.stiffness, o.impedance.dampingRatio);
    if (o.paths.some((x) => x.taught)) this.stats.enableReplay(o.rig.arm);
    this.reader = new RingReader(this.ring);
    this.recorder = o.recorder ?? (o.record ? new Recorder(o.record, o.rig.joints) : undefined);
    if (o.reconnect) this.segments = new Segments(this, o.reconnect);
  }

  /** The segments of a --reconnect run (undefined without it). */
  private readonly segments: Segments | undefined;

  /** The shared ring the loop writes its rows to: another reader (the live view's thread) reads it on its own. */
  get ringBuffers(): RingBuffers {
    return this.ring;
  }

  /** The newest row (for the dashboard), a view. */
  latest(): Float64Array | undefined {
    return this.reader.latest();
  }

  send(command: LoopCommand): void {
    if (this.worker) this.worker.postMessage({ type: 'command', command });
    else {
      this.early.push(command);
      // Between two segments (--reconnect waiting for the board): a stop ends the wait.
      if (command.kind === 'stop' || command.kind === 'estop') this.segments?.halt(command);
    }
  }

  /** A recording event (the reconnect's), beside the loop's: in --record's file and the dashboard's recording. */
  event(e: Record<string, unknown>): void {
    this.recorder?.event(e);
    this.live?.recorder.event({ event: 'session', ...e });
  }

  /** Post a message to the loop's worker now, if there is one. */
  postWorker(m: WorkerCommand): void {
    this.worker?.postMessage(m);
  }

  /** Impedance mode: the stiffness times `factor`, reached over the rig's stiffnessFilterS (the dashboard's keys). False in another mode. */
  scaleStiffness(factor: number): boolean {
    if (!this.o.impedance || !this.worker) return false;
    this.worker.postMessage({ type: 'stiffness', factor });
    return true;
  }

  /** Impedance mode: the force estimate's zero taken now (the dashboard's f key). False in another mode. */
  tareForce(): boolean {
    if (!this.o.impedance || !this.worker) return false;
    this.worker.postMessage({ type: 'tare' });
    return true;
  }

  /** True in float mode (--mode float, teach): the dashboard's float key works. */
  get floatMode(): boolean {
    return this.o.float !== undefined;
  }

  /** Float mode: enter float (true) or leave it and hold where the arm is (false), blended over the law's rampS (the dashboard's g key). False in another mode. */
  setFloat(on: boolean): boolean {
    if (!this.o.float || !this.worker) return false;
    this.sendFloat(on ? 'float' : 'hold');
    return true;
  }

  /** Float mode's law (--mode float, teach): float, hold where the arm is, or go back to where the run began. Nothing without float. */
  sendFloat(action: 'float' | 'hold' | 'home'): void {
    this.worker?.postMessage({ type: 'float', action });
  }

  /** Calls `listener` with every loop event (after `onEvent`). Returns the function that unsubscribes. */
  subscribe(listener: (e: LoopEvent) => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  /**
   * Calls `hook` once when the loop has ended (after the recordings are closed), with the summary;
   * `run()` resolves once the promise it returns has settled. The dashboard uses it to keep its last
   * screen up until the user has read why the arm stopped.
   */
  onFinish(hook: (summary: RunSummary) => Promise<void> | void): void {
    this.finishHooks.push(hook);
  }

  /**
   * Records every tick from now on to `file` (NDJSON, the format of --record; its summary line covers
   * the recorded part), beside a --record recording. Unlike --record, a write failure here only ends
   * this recording (`recording.failure`): the user started it while the arm was moving, so the arm
   * does not depend on it. Throws if a recording is already on or the file cannot be created.
   */
  startRecording(file: string): void {
    if (this.live) throw new Error(`already recording to ${this.live.recorder.file}`);
    // Never over an existing file (nor the --record recording): the dashboard has no --force.
    checkWritablePath(file, 'recording', { inputs: this.o.record ? [this.o.record] : [] });
    const recorder = new Recorder(file, this.o.rig.joints);
    recorder.open(runHeader({ ...this.o, startedBy: 'dashboard' }));
    if (this.describe) recorder.event({ event: 'connected', describe: this.describe });
    this.live = { recorder, stats: new RunStats(this.o.rig.joints, this.o.rateHz).encoders(this.o.rig.encoders) };
  }

  /** Ends the recording of `startRecording` (summary line, close). Undefined if none was on. */
  stopRecording(stop: StopReason = { kind: 'requested', text: 'recording stopped' }): LiveRecording | undefined {
    const live = this.live;
    if (!live) return undefined;
    live.recorder.flush();
    const info = this.recording!;
    this.live = undefined;
    live.recorder.close({
      ...live.stats.summary(stop),
      ...(live.recorder.failure ? { recordingFailure: live.recorder.failure.message, recordedTicks: live.recorder.ticks } : {}),
    });
    return info;
  }

  /** The recording of `startRecording`, while it is on. */
  get recording(): LiveRecording | undefined {
    const r = this.live?.recorder;
    return r ? { file: r.file, ticks: r.ticks, ...(r.failure ? { failure: r.failure.message } : {}) } : undefined;
  }

  /** Starts the run; resolves when it is over (never rejects: failures are in the result). */
  async run(): Promise<SessionResult> {
    this.recorder?.open(runHeader(this.o));
    this.timer = setInterval(() => this.drain(), 20);
    const input = this.workerInput();
    let end = await this.segment(input);
    // --reconnect: a pulled cable is waited out, and the run goes on in new segments (session-reconnect.ts).
    if (this.o.reconnect) end = await reconnectAfter(this.segments!, this.o.reconnect, input, end);
    return new Promise((resolve) => this.finish(end, resolve));
  }

  /** One loop segment: the loop's worker from its start to its exit (a run without --reconnect has one). */
  segment(input: WorkerInput): Promise<RunEnd> {
    return new Promise((resolve) => {
      const end: RunEnd = { settled: false, stop: hostFault('the loop ended without a result'), extra: {}, rt: { granted: false } };
      const w = new Worker(new URL('./worker.js', import.meta.url), { workerData: input });
      this.worker = w;
      this.loopTid = undefined;
      for (const command of this.early.splice(0)) this.send(command);
      if (this.earlyStopGraceMs !== undefined) this.watchStop(this.earlyStopGraceMs);
      w.on('message', (m: WorkerMessage) => {
        this.messages++;
        this.onMessage(m, end, w);
      });
      w.on('error', (e) => {
        end.stop = internalFault('the loop thread (it died)', e);
        end.error = { name: 'Error', message: e.message };
      });
      w.on('exit', () => {
        if (this.stopWatch) clearInterval(this.stopWatch);
        this.stopWatch = undefined;
        this.worker = undefined;
        if (this.blockedStop) {
          end.stop = this.blockedStop;
          end.error = { name: 'Error', message: describeStop(this.blockedStop) };
        }
        resolve(end);
      });
    });
  }

  private workerInput(): WorkerInput {
    const o = this.o;
    return {
      rig: o.rig,
      target: o.target,
      paths: o.paths,
      cycle: o.cycle,
      park: o.park,
      feedforward: o.feedforward,
      rateHz: o.rateHz,
      ring: this.ring,
      injections: o.injections,
      maxSeconds: o.maxSeconds,
      rt: o.rt ?? false,
      ...(o.normalTids?.length ? { normalTids: [...o.normalTids] } : {}),
      beat: this.beat.buffer,
      ...(o.controller ? { controller: o.controller } : {}),
      ...(o.predict !== undefined ? { predict: o.predict } : {}),
      ...(o.impedance ? { impedance: o.impedance } : {}),
      ...(o.float ? { float: o.float } : {}),
      // --reconnect: the first handshake's uptime is what the next segment's is compared with.
      ...(o.reconnect ? { resume: {} } : {}),
    };
  }

  /** A message from the loop's thread: connected, an event, the real-time answer, the result or an error. */
  private onMessage(m: WorkerMessage, end: RunEnd, w: Worker): void {
    const o = this.o;
    switch (m.type) {
      case 'thread':
        this.loopTid = m.tid;
        return;
      case 'boot':
      case 'rezeroed':
        this.segments?.onWorker(m, w);
        return;
      case 'ready':
        this.describe = m.describe;
        this.recorder?.event({ event: 'connected', describe: m.describe, board: m.identity });
        this.live?.recorder.event({ event: 'connected', describe: m.describe, board: m.identity });
        o.onReady?.(m.describe, m.identity);
        return;
      case 'event':
        this.segments?.onLoopEvent(m.event);
        this.recorder?.event({ ...(m.event as object), ...(this.segments ? { t: m.event.t + this.segments.tOffset } : {}) });
        this.live?.recorder.event({ event: 'loop', ...(m.event as object) });
        o.onEvent?.(m.event);
        for (const l of this.listeners) l(m.event);
        return;
      case 'rt':
        end.rt = m.result.granted ? { granted: true } : { granted: false, reason: m.result.reason };
        o.onRealtime?.(m.result.granted, m.result.granted ? undefined : m.result.reason, m.result.granted ? m.result.what : undefined);
        return;
      case 'result':
        setTimeout(() => void w.terminate(), 2000).unref();
        end.stop = m.stop;
        end.extra = { stopOutcome: m.stopOutcome, cpu: m.cpu.hostPct / 100, missed: m.timing.lostSamples };
        end.counters = m.counters;
        end.unapplied = m.unapplied;
        end.timing = resultTiming(m, o.rateHz);
        return;
      case 'error':
        end.stop = m.stop;
        end.error = { name: m.name, message: m.message };
        return;
    }
  }

  /** The loop's thread is gone: the last rows, the summary, the recordings closed, the finish hooks, then `resolve`. */
  private finish(end: RunEnd, resolve: (r: SessionResult) => void): void {
    if (end.settled) return;
    end.settled = true;
    if (this.timer) clearInterval(this.timer);
    // A part that failed (a recorder, the live view) must not keep the summary from being written.
    try {
      this.drain();
    } catch (e) {
      this.crash('the main thread (the last drain of the ring)', e);
    }
    // The loop ended by itself (done) before the bug showed: the run still ends with it; a fault the loop saw first stays.
    if (this.crashStop && end.stop.kind !== 'fault') end.stop = this.crashStop;
    // A stop the simulated board caused by starving (a busy machine) is the test rig's: the reason says so.
    const m = end.timing?.mock;
    if (m) end.stop = blameMock(end.stop, m.maxStarvedMs, m.starvedMs);
    const extra = this.reader.lost > 0 ? { ...end.extra, droppedRows: this.reader.lost } : end.extra;
    const summary = this.stats.summary(end.stop, { ...extra, ...(end.timing ? { timing: this.finishTiming(end.timing, end.rt) } : {}) });
    if (end.counters) {
      const { dropped, duplicate, reordered, overlong } = end.counters;
      Object.assign(summary.link, { dropped, duplicate, reordered, overlong });
    }
    const error = end.error;
    if (this.recorder) {
      // After a failure the recording holds fewer ticks than the run had: the summary says how many.
      const broke = this.failedParts.get('recorder');
      const failure =
        this.recorder.failure?.message ??
        (broke !== undefined
          ? `the recorder failed (a bug in twolink: ${broke}); the recording holds the ${this.recorder.ticks} ticks before it`
          : undefined);
      try {
        this.recorder.close({
          ...summary,
          ...(failure ? { recordingFailure: failure, recordedTicks: this.recorder.ticks } : {}),
          ...(error ? { error } : {}),
        });
      } catch (e) {
        // The recorder itself is what failed: said, and the summary still goes to stdout.
        process.stderr.write(`twolink: the recording could not be closed: ${e instanceof Error ? e.message : String(e)}\n`);
      }
    }
    try {
      this.stopRecording(end.stop);
    } catch (e) {
      process.stderr.write(`twolink: the dashboard's recording could not be closed: ${e instanceof Error ? e.message : String(e)}\n`);
    }
    const result = { summary, ...(error ? { error } : {}), ...(end.unapplied?.length ? { unapplied: end.unapplied } : {}) };
    const waits = this.finishHooks.map((h) => {
      try {
        return Promise.resolve(h(summary)).catch(() => undefined);
      } catch {
        return Promise.resolve(undefined);
      }
    });
    void Promise.all(waits).then(() => resolve(result));
  }

  /** The timing object of the summary, with the figures taken from the rows. */
  private finishTiming(t: RunTiming, rt: { granted: boolean; reason?: string }): RunTiming {
    const round = (x: number): number => Math.round(x * 10) / 10;
    // Latency, sample period and stall from the rows (as a recording of the run gives them), not from the loop's own counters.
    const { samplePeriodP99Us, latencyP50Us, latencyP99Us, maxStallMs } = this.stats.timing();
    return {
      ...t,
      samplePeriodP99Us,
      latencyP50Us,
      latencyP99Us,
      hostCpuPct: round(t.hostCpuPct),
      mockCpuPct: t.mockCpuPct === null ? null : round(t.mockCpuPct),
      maxStallMs,
      rt: rt.granted,
      ...(this.o.rt && !rt.granted && rt.reason ? { rtRefused: rt.reason } : {}),
    };
  }

  /**
   * Stops the arm even if the loop's thread does not answer (blocked by a bug): sends the command, then
   * watches the thread until it ends. Its deadline is counted in its own progress and CPU time
   * (stop-watch.ts), not in wall-clock time alone: a thread starved by a busy machine is waited for, a
   * thread that runs `graceMs` of its own CPU time without a row, a message or a heartbeat is ended from
   * here. The board's watchdog then stops the motors (a board without one: see the summary).
   */
  stopNow(command: LoopCommand, graceMs = 250): void {
    this.send(command);
    this.stopCommand ??= command;
    if (this.worker) this.watchStop(graceMs);
    else this.earlyStopGraceMs = graceMs;
  }

  private stopCommand: LoopCommand | undefined;

  /**
   * A bug of twolink's own on the main thread (an exception or a rejection nobody caught: the live
   * view, the dashboard, the recorder), in `where`: the motors are zeroed at once (an e-stop through
   * the loop's thread, which owns the port: on Firmata the zero is written and read back before the
   * thread ends), and the run ends with `fault:internal`, its summary and recording completed. Only the
   * first counts; returns whether this one did.
   */
  crash(where: string, e: unknown): boolean {
    if (this.crashStop) return false;
    const stop = internalFault(where, e);
    this.crashStop = stop;
    this.stopNow({ kind: 'estop', reason: stop });
    return true;
  }

  /** Watches the loop's thread after a stop request until it ends (stopNow). */
  private watchStop(graceMs: number): void {
    const w = this.worker;
    if (!w || this.stopWatch) return;
    const watch = new StopWatch(
      {
        progress: () => this.reader.written() + this.messages + Atomics.load(this.beat, 0),
        // A thread still starting has run nothing of the loop yet: waited for as a starved one.
        cpuSeconds: () => (this.loopTid === undefined ? 0 : this.loopTid > 0 ? taskCpuSeconds(this.loopTid) : NaN),
        now: () => performance.now() / 1000,
      },
      graceMs,
    );
    this.stopWatch = setInterval(() => {
      const v = watch.check();
      if (!v.cut) return;
      clearInterval(this.stopWatch);
      const c = this.stopCommand!;
      const asked: StopReason =
        c.kind === 'stop' ? c.reason : c.kind === 'estop' ? (c.reason ?? { kind: 'estop' }) : { kind: 'requested', text: c.kind };
      this.blockedStop = { ...asked, threadCut: v.why };
      void w.terminate();
    }, 50);
    this.stopWatch.unref();
  }

  /** Moves the rows written so far into the statistics, the recordings and the listener. */
  drain(): void {
    this.reader.drain(this.drainRow);
    this.guarded('recorder', this.flushLive);
    this.guarded('onDrained', this.drained);
    if (this.recorder && !this.failedParts.has('recorder') && !this.guarded('recorder', this.flushRecorder) && !this.recordingStopSent) {
      // The disk is full (or gone): stop the arm rather than run on without a record.
      this.recordingStopSent = true;
      this.send({
        kind: 'stop',
        reason: { kind: 'fault', fault: { kind: 'recording', file: this.recorder.file, message: this.recorder.failure!.message } },
      });
    }
  }

  /** One drained row to every part; a part that throws is not called again (the first failure stopped the arm). */
  private readonly drainRow = (ringRow: Float64Array): void => {
    // After a reconnect the loop's time starts again at 0: the recording's goes on (session-reconnect.ts).
    const row = this.segments ? this.segments.row(ringRow) : ringRow;
    this.stats.add(row);
    this.row = row;
    this.guarded('recorder', this.tickRecorder);
    this.guarded('live', this.tickLive);
    this.guarded('onRow', this.rowListener);
  };

  private row: Float64Array | undefined;
  private readonly tickRecorder = (): boolean => (this.recorder?.tick(this.row!), true);
  private readonly tickLive = (): boolean => {
    const live = this.live;
    if (live) {
      live.stats.add(this.row!);
      live.recorder.tick(this.row!);
    }
    return true;
  };
  private readonly rowListener = (): boolean => (this.o.onRow?.(this.row!), true);
  private readonly flushLive = (): boolean => (this.live?.recorder.flush(), true);
  private readonly drained = (): boolean => (this.o.onDrained?.(), true);
  private readonly flushRecorder = (): boolean => this.recorder!.flush();

  /** The parts of a drain that failed (a bug of twolink's), with what they threw: skipped from then on. */
  private readonly failedParts = new Map<DrainPart, string>();

  /** Calls a part of the drain; its exception stops the arm (fault:internal naming the part) and the part is skipped from then on. Returns its result (true once failed). */
  private guarded(part: DrainPart, fn: () => boolean): boolean {
    if (this.failedParts.has(part)) return true;
    try {
      return fn();
    } catch (e) {
      const text = e instanceof Error ? e.message : String(e);
      this.failedParts.set(part, text);
      const where = `the main thread (${DRAIN_PARTS[part]})`;
      process.stderr.write(
        `twolink: an error twolink did not catch, in ${where}: ${text}: ${this.crash(where, e) ? 'stopping the arm (fault:internal)' : 'the arm is being stopped'}\n`,
      );
      return true;
    }
  }
}
