/**
 * The main thread's side of a run: it starts the loop's worker, drains the shared ring into the
 * recording, the statistics and the dashboard, forwards commands, and turns the worker's end (or its
 * death) into a summary. Nothing here is on the loop's timing path.
 */
import { Worker } from 'node:worker_threads';
import type { Rig } from '../config/load.js';
import type { PathSpec } from '../model/builtins.js';
import { Recorder, type RecordingHeader } from '../record/recorder.js';
import { RunStats, type RunSummary } from '../record/stats.js';
import type { Target } from '../transport/open.js';
import { PROTOCOL_VERSION, VERSION } from '../version.js';
import type { FeedforwardMode } from './controller.js';
import type { FaultSpec } from './faults.js';
import type { LoopCommand, LoopEvent } from './loop.js';
import { createRing, RingReader } from './ring.js';
import type { WorkerInput, WorkerMessage } from './worker.js';

export interface SessionOptions {
  rig: Rig;
  target: Target;
  paths: PathSpec[];
  cycle: boolean;
  park: boolean;
  feedforward: FeedforwardMode;
  rateHz: number;
  faults: FaultSpec[];
  maxSeconds: number;
  /** NDJSON recording path. */
  record?: string;
  /** Every drained row (a view: copy to keep). */
  onRow?: (row: Float64Array) => void;
  onEvent?: (e: LoopEvent) => void;
  onReady?: (describe: string, identity: unknown) => void;
}

export interface SessionResult {
  summary: RunSummary;
  /** Set when the run ended by an error before or outside the loop (the message). */
  error?: { name: string; message: string };
}

export class Session {
  readonly stats: RunStats;
  readonly recorder: Recorder | undefined;
  private readonly ring = createRing();
  private readonly reader: RingReader;
  private worker: Worker | undefined;
  private timer: NodeJS.Timeout | undefined;
  private recordingStopSent = false;
  /** Board and transport, once connected. */
  describe = '';

  constructor(private readonly o: SessionOptions) {
    this.stats = new RunStats(o.rig.joints, o.rateHz);
    this.reader = new RingReader(this.ring);
    if (o.record) this.recorder = new Recorder(o.record, o.rig.joints);
  }

  /** The newest row (for the dashboard), a view. */
  latest(): Float64Array | undefined {
    return this.reader.latest();
  }

  send(command: LoopCommand): void {
    this.worker?.postMessage({ type: 'command', command });
  }

  /** Starts the run; resolves when it is over (never rejects: failures are in the result). */
  run(): Promise<SessionResult> {
    const o = this.o;
    const header: RecordingHeader = {
      kind: 'header',
      twolink: VERSION,
      protocol: PROTOCOL_VERSION,
      startedAt: new Date().toISOString(),
      joints: o.rig.joints,
      rateHz: o.rateHz,
      feedforward: o.feedforward,
      target: o.target,
      rig: { file: o.rig.file, name: o.rig.name, content: o.rig.source },
      trajectories: o.paths,
      faults: o.faults,
    };
    this.recorder?.open(header);
    const input: WorkerInput = {
      rig: o.rig,
      target: o.target,
      paths: o.paths,
      cycle: o.cycle,
      park: o.park,
      feedforward: o.feedforward,
      rateHz: o.rateHz,
      ring: this.ring,
      faults: o.faults,
      maxSeconds: o.maxSeconds,
    };
    return new Promise((resolve) => {
      let settled = false;
      let stopReason = 'fault:the loop ended without a result';
      let extra: Partial<RunSummary> = {};
      let error: SessionResult['error'];
      const finish = (): void => {
        if (settled) return;
        settled = true;
        if (this.timer) clearInterval(this.timer);
        this.drain();
        if (this.reader.lost > 0) extra = { ...extra, ...{ droppedRows: this.reader.lost } };
        const summary = this.stats.summary(stopReason, extra);
        if (this.recorder) {
          const failure = this.recorder.failure?.message;
          this.recorder.close({ ...summary, ...(failure ? { recordingFailure: failure } : {}), ...(error ? { error } : {}) });
        }
        resolve({ summary, ...(error ? { error } : {}) });
      };
      const w = new Worker(new URL('./worker.js', import.meta.url), { workerData: input });
      this.worker = w;
      w.on('message', (m: WorkerMessage) => {
        switch (m.type) {
          case 'ready':
            this.describe = m.describe;
            this.recorder?.event({ event: 'connected', describe: m.describe, board: m.identity });
            o.onReady?.(m.describe, m.identity);
            return;
          case 'event':
            this.recorder?.event({ event: 'loop', ...(m.event as object) });
            o.onEvent?.(m.event as LoopEvent);
            return;
          case 'result':
            setTimeout(() => void w.terminate(), 2000).unref();
            stopReason = m.stopReason;
            extra = { stopOutcome: m.stopOutcome, cpu: m.timing.cpu, missed: m.timing.missed };
            return;
          case 'error':
            stopReason = `fault:${m.message}`;
            error = { name: m.name, message: m.message };
            return;
        }
      });
      w.on('error', (e) => {
        stopReason = `fault:the loop thread died: ${e.message}`;
        error = { name: 'Error', message: e.message };
      });
      w.on('exit', () => finish());
      this.timer = setInterval(() => this.drain(), 20);
    });
  }

  /** Moves the rows written so far into the statistics, the recording and the listener. */
  drain(): void {
    this.reader.drain((row) => {
      this.stats.add(row);
      this.recorder?.tick(row);
      this.o.onRow?.(row);
    });
    if (this.recorder && !this.recorder.flush() && !this.recordingStopSent) {
      // The disk is full (or gone): stop the arm rather than run on without a record.
      this.recordingStopSent = true;
      this.send({ kind: 'stop', reason: `fault:${this.recorder.failure!.message}` });
    }
  }
}
