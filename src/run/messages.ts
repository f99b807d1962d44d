/**
 * The messages between the main thread (session.ts) and the loop's worker (worker.ts), typed end to
 * end. Rows do not travel here: they go through the shared ring.
 */
import type { Rig } from '../config/load.js';
import type { FeedforwardMode } from '../control/controller.js';
import type { ImpedanceSettings } from '../control/impedance.js';
import type { FloatSettings } from '../control/float.js';
import type { Injection } from '../mock/injections.js';
import type { LoopCommand, LoopEvent } from '../control/loop.js';
import type { RingBuffers } from '../control/ring.js';
import type { LoopTiming } from '../control/runner.js';
import type { MockThreadStats } from '../mock/mock-thread.js';
import type { RtResult } from '../time/threads.js';
import type { StallReport } from '../time/stalls.js';
import type { BoardIdentity, LinkCounters, StopOutcome } from '../transport/link.js';
import type { PathSpec } from '../model/builtins.js';
import type { Target } from './target.js';
import type { StopReason } from '../control/stop.js';
import type { BootMark, BootVerdict } from './reconnect.js';

/** What a run does: the rig, where the arm is, the trajectories and how to drive them. */
export interface RunPlan {
  rig: Rig;
  target: Target;
  paths: PathSpec[];
  /** Start again with the first trajectory when the last is done. */
  cycle: boolean;
  /** Go back to where the arm started after each trajectory. */
  park: boolean;
  feedforward: FeedforwardMode;
  /** The board's sampling rate [Hz]. */
  rateHz: number;
  /** Test knobs injected into the mock rig (or the loop's thread) at loop times. */
  injections: Injection[];
  /** Hard cap on the run [s]. */
  maxSeconds: number;
  /** A user's controller module (ESM). */
  controller?: string;
  /** Compensate the sample-to-command delay with the model. @default true */
  predict?: boolean;
  /** Impedance mode (--mode impedance): the spring in place of feedforward + PID. */
  impedance?: ImpedanceSettings;
  /** Float mode (twolink run --mode float, twolink teach): the law of src/control/float.ts with these settings. */
  float?: FloatSettings;
}

/** What the main thread gives the worker: the plan, the shared ring, and whether to ask for SCHED_FIFO. */
export interface WorkerInput extends RunPlan {
  ring: RingBuffers;
  /** Ask Linux for SCHED_FIFO for the loop's thread (and the mock's). */
  rt: boolean;
  /** Threads left at normal priority under `rt` (the live view's). */
  normalTids?: number[];
  /** Int32 [0]: the loop thread's heartbeat, counted up while its event loop runs (stop-watch.ts). */
  beat: SharedArrayBuffer;
  /**
   * `--reconnect` (resume-gate.ts): the handshake is done before the loop, its uptime compared with
   * `before` (the last segment's; absent in the first), and a board that reset is re-zeroed first.
   */
  resume?: { before?: BootMark };
}

/** The timing of a run as the summary reports it (the `timing` object of `twolink run --json`). */
export interface RunTiming {
  /** The board's sampling rate [Hz]. */
  sampleRateHz: number;
  /** 99th percentile of the board's sample period [us] (board time). */
  samplePeriodP99Us: number;
  /**
   * Samples whose answer missed the host's deadline: written more than one sample period after the
   * sample arrived, or never written because the host read the sample late (beyond the link's usual
   * burst). Not the burst samples.
   */
  lateSamples: number;
  /**
   * Samples the link delivered in one burst with a newer one (a USB adapter holds the board's bytes:
   * a 16U2 flushes every 4.096 ms), recorded but not answered (only the newest of a burst is): not a
   * late host. Absent in summaries from before issue 35 (their lateSamples counted these too).
   */
  burstSamples?: number;
  /** Samples lost on the way (gaps in the board's sample index). */
  lostSamples: number;
  /** Sample instant -> answer written [us], median and 99th percentile (host clock), from the rows (TimingFigures, stats.ts). */
  latencyP50Us: number;
  latencyP99Us: number;
  /** Samples from a sample to the one that applies its answer (the link's delay). */
  answerDelaySamples: number | null;
  /** CPU of the host process, all threads but the mock rig's, over the run [% of one core]. */
  hostCpuPct: number;
  /** CPU of the mock rig's thread [% of one core] (null when there is none). */
  mockCpuPct: number | null;
  /** Of the host's CPU: the loop's thread and the main thread (dashboard, recording) [% of one core]. */
  loopThreadCpuPct: number;
  mainThreadCpuPct: number;
  /** Largest gap between answered samples [ms] (board time), from the rows (TimingFigures, stats.ts). */
  maxStallMs: number;
  /** True when Linux granted SCHED_FIFO to the loop's thread. */
  rt: boolean;
  /** Why real-time scheduling was not granted, when asked for. */
  rtRefused?: string;
  /** How the mock rig's own thread fared (late timers: the mock was starved, not the host). */
  mock?: MockThreadStats;
  /** Garbage collection and event-loop delay of the loop's thread (what a stall may be put down to). */
  loopThread?: StallReport;
}

/** Messages from the worker. */
export type WorkerMessage =
  /** The loop thread's Linux task id (-1 off Linux), first thing. */
  | { type: 'thread'; tid: number }
  | { type: 'ready'; identity: BoardIdentity; describe: string }
  /** `--reconnect`: the handshake's identity and uptime, and against the last segment's, whether the board reset (resume-gate.ts). */
  | { type: 'boot'; identity: BoardIdentity; mark: BootMark; verdict?: BootVerdict }
  /** `--reconnect`: the zero of a board that reset was re-taken, the arm at rest hanging after `restS` [s]. */
  | { type: 'rezeroed'; restS: number }
  | { type: 'rt'; result: RtResult }
  | { type: 'event'; event: LoopEvent }
  | {
      type: 'result';
      stop: StopReason;
      stopOutcome: StopOutcome | 'watchdog';
      timing: LoopTiming;
      /** Garbage collection and event-loop delay of the loop's thread during the run. */
      stalls: StallReport;
      cpu: { hostPct: number; mockPct: number | null; loopPct: number; mainPct: number };
      mock?: MockThreadStats;
      counters: LinkCounters;
      /** Injections whose time the run never reached. */
      unapplied: Injection[];
    }
  /** The run ended by an exception: its name and message, and the stop it makes (a controller's fault, else a host fault). */
  | { type: 'error'; name: string; message: string; stop: StopReason };

/** Messages to the worker: a loop command; impedance mode's live stiffness change (a factor) or force zero; float mode's action. */
export type WorkerCommand =
  | { type: 'command'; command: LoopCommand }
  | { type: 'stiffness'; factor: number }
  | { type: 'tare' }
  /** Float mode's law (--mode float, teach): float, hold where the arm is, or go back to where the run began. */
  | { type: 'float'; action: 'float' | 'hold' | 'home' }
  /** `--reconnect`: re-take the zero of a board that reset (true), or do not move it (false). */
  | { type: 'rezero'; go: boolean };
