/**
 * What the dashboard (dashboard.ts) is given: the run it shows, as far as it needs one (`Session` has
 * it; tests pass a stand-in), the rig and trajectories, and the screen and its settings.
 */
import type blessed from 'blessed';
import type { DashboardPart } from '../config/parts.js';
import type { LoopCommand } from '../control/commands.js';
import type { LoopEvent } from '../control/events.js';
import type { StopReason } from '../control/stop.js';
import type { LiveRecording } from '../run/session.js';
import type { PathSpec } from '../model/builtins.js';
import type { CanvasMode } from './canvas.js';

/** What the dashboard needs from a run: `Session` has it; tests pass a stand-in. */
export interface DashboardSession {
  /** The newest tick row (a view into shared memory), undefined before the first. */
  latest(): Float64Array | undefined;
  send(command: LoopCommand): void;
  /** Impedance mode: the stiffness times `factor` (filtered); false in another mode. Optional (fakes). */
  scaleStiffness?(factor: number): boolean;
  /** Impedance mode: zero the force estimate now; false in another mode. Optional (fakes). */
  tareForce?(): boolean;
  /** Float mode: enter float (true) or leave it and hold where the arm is (false); false in another mode. Optional (fakes). */
  setFloat?(on: boolean): boolean;
  /** True in float mode (the dashboard shows float's state). Optional (fakes). */
  readonly floatMode?: boolean;
  /** Loop events; returns the function that unsubscribes. */
  subscribe(listener: (e: LoopEvent) => void): () => void;
  /** Called when the loop has ended; the run's result waits for the promise the hook returns. */
  onFinish(hook: (summary: { stop: StopReason; timing?: { answerDelaySamples: number | null } }) => Promise<void> | void): void;
  startRecording(file: string): void;
  stopRecording(): LiveRecording | undefined;
  readonly recording: LiveRecording | undefined;
  /** Board and transport, once connected. */
  readonly describe: string;
  readonly stats: { readonly rateHz: number; readonly period: { quantile(q: number): number; readonly max: number } };
}

export interface DashboardOptions {
  session: DashboardSession;
  rig: DashboardPart;
  /** The run's trajectories, in order. */
  paths: PathSpec[];
  /** `twolink demo` (else `twolink run`). */
  demo: boolean;
  /**
   * Stop the arm softly, with the stop for the run's summary: `quit` (the q key: a normal quit),
   * `interrupted` by SIGINT (Ctrl-C), or a host fault (the dashboard failed). A second call e-stops
   * (the CLI counts the calls with its signals).
   */
  onQuit: (reason: StopReason) => void;
}

export interface DashboardViewOptions extends DashboardOptions {
  /** The screen to draw on (the dashboard destroys it in `stop()`). */
  screen: blessed.Widgets.Screen;
  /** Frames per second. @default 20 */
  fps?: number;
  /** Wall-clock time, for recording names. @default () => new Date() */
  now?: () => Date;
  /** Where `r` puts recordings. @default the working directory */
  recordDir?: string;
  /** Braille or ASCII canvases. @default from the screen's locale (braille when UTF-8) */
  canvas?: CanvasMode;
  /** An exception while drawing or handling a key. @default rethrow */
  onFailure?: (e: unknown) => void;
}
