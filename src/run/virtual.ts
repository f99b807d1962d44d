/**
 * The real loop against the in-process mock rig (line protocol) in virtual time: deterministic and
 * faster than real time. The mock shares this thread and the virtual clock; this file moves the clock
 * from one pending timer to the next (a sample, a byte off the UART, a USB frame) and lets the streams
 * and the loop react in between. Tests, the bench, the HIL suites and `twolink identify --mock` use it.
 * Figures from it are virtual-time figures.
 */
import type { Rig } from '../config/load.js';
import type { FeedforwardMode } from '../control/controller.js';
import type { Injection } from '../rig/injections.js';
import type { ControlLaw, LoopCore, LoopEvent } from '../control/loop.js';
import { runLoop, type RunOptions, type RunResult } from '../control/runner.js';
import { F } from '../telemetry/tick.js';
import type { PathSpec } from '../model/builtins.js';
import { Recorder } from '../telemetry/recorder.js';
import { RunStats, type RunSummary } from './stats.js';
import { actsOn, applyInjection, lineMockSite } from '../rig/injections.js';
import { createMockRig, type MockRig } from '../rig/mock-rig.js';
import type { MockWiring } from '../rig/wiring.js';
import { settle, VirtualClock } from '../time/clock.js';
import { LineLink } from '../transport/line-link.js';
import { boardEncoders, WiredLink } from '../transport/wired-link.js';
import { PROTOCOL_VERSION, VERSION } from '../version.js';
import { controllerDeadlineMs, loadControlLaw, type PluggedLaw } from './law.js';

export interface VirtualRun {
  result: RunResult;
  summary: RunSummary;
  rows: Float64Array[];
  events: LoopEvent[];
  mock: MockRig;
  link: LineLink;
}

export interface VirtualRunOptions {
  feedforward?: FeedforwardMode;
  rateHz?: number;
  park?: boolean;
  onTick?: (core: LoopCore, clock: VirtualClock, mock: MockRig) => void;
  maxSeconds?: number;
  signal?: AbortSignal;
  /** Keep every row (memory: 45 numbers a sample). @default true */
  keepRows?: boolean;
  /** Write an NDJSON recording (header, ticks, events, summary) here, as `twolink run --record` does. */
  record?: string;
  /** Injections into the mock rig at loop times (those on the host's thread, busy and throw, are refused here). */
  injections?: Injection[];
  /** The mock wired wrong on purpose. */
  wiring?: MockWiring;
  /** A user's controller module, or a ControlLaw. */
  controller?: string | ControlLaw;
  /** Compensate the sample-to-command delay with the model. @default true */
  predict?: boolean;
  /** Called once the loop exists: commands go through `send`, as the dashboard's do. */
  onReady?: RunOptions['onReady'];
}

export async function virtualRun(rig: Rig, paths: PathSpec[], opts: VirtualRunOptions = {}): Promise<VirtualRun> {
  const clock = new VirtualClock();
  const mock = createMockRig(rig, clock, opts.wiring ? { wiring: opts.wiring } : {});
  const { link, loopLink } = await openLinks(rig, mock, clock);
  const rateHz = opts.rateHz ?? rig.control.rateHz;
  const stats = new RunStats(rig.joints, rateHz);
  const feedforward = opts.feedforward ?? rig.control.feedforward;
  const injections = (opts.injections ?? []).slice().sort((a, b) => a.at - b.at);
  for (const i of injections) if (actsOn(i.name) === 'host') throw new Error(`--inject ${i.name}: it acts on the host's loop thread, which virtual time does not have`);
  let plugged: PluggedLaw | undefined;
  try {
    plugged = typeof opts.controller === 'string' ? await loadControlLaw(opts.controller, rig, rateHz, { deadlineMs: controllerDeadlineMs(rig, 'virtual') }) : undefined;
  } catch (e) {
    mock.dispose();
    throw e;
  }
  const law = plugged ?? (typeof opts.controller === 'string' ? undefined : opts.controller);
  const site = lineMockSite('the mock rig', mock.plant, mock.board, () => mock.unplug());
  let recorder: Recorder | undefined;
  try {
    recorder = opts.record ? openRecorder(opts.record, rig, rateHz, feedforward, paths, injections) : undefined;
  } catch (e) {
    void plugged?.close();
    mock.dispose();
    throw e;
  }
  const rows: Float64Array[] = [];
  const events: LoopEvent[] = [];
  let done = false;
  const run = runLoop({
    rig,
    link: loopLink,
    clock,
    rateHz,
    feedforward,
    paths,
    park: opts.park ?? true,
    ...(law ? { law } : {}),
    ...(opts.predict !== undefined ? { predict: opts.predict } : {}),
    sink: (row) => {
      if (opts.keepRows ?? true) rows.push(Float64Array.from(row));
      stats.add(row);
      recorder?.tick(row);
    },
    onEvent: (e) => {
      events.push(e);
      recorder?.event({ ...e });
    },
    onTick: (c) => {
      const t = c.row[F.t]!;
      while (injections.length && injections[0]!.at <= t) applyInjection(site, injections.shift()!);
      opts.onTick?.(c, clock, mock);
    },
    ...(opts.signal ? { signal: opts.signal } : {}),
    ...(opts.onReady ? { onReady: opts.onReady } : {}),
    maxSeconds: opts.maxSeconds ?? 600,
  });
  run.then(
    () => (done = true),
    () => (done = true),
  );
  let result: RunResult;
  try {
    await advanceUntil(clock, () => done);
    result = await run;
  } finally {
    void plugged?.close();
    mock.dispose();
  }
  const summary = stats.summary(result.stopReason, { stopOutcome: result.stopOutcome, missed: result.timing.lostSamples });
  recorder?.close({ ...summary });
  if (recorder?.failure) throw recorder.failure;
  return { result, summary, rows, events, mock, link };
}

/** The line link to the mock; with the rig file's wiring section (twolink setup's) the loop sees the joints, the board its channels. */
async function openLinks(rig: Rig, mock: MockRig, clock: VirtualClock): Promise<{ link: LineLink; loopLink: LineLink | WiredLink }> {
  const stream = await mock.openStream();
  const link = new LineLink({ stream, name: mock.path, baudRate: rig.link.baudRate, clock, encoders: rig.wiring ? boardEncoders(rig.wiring) : rig.encoders, watchdogMs: rig.link.watchdogMs, handshakeMs: rig.link.handshakeMs });
  return { link, loopLink: rig.wiring ? new WiredLink(link, rig.wiring, rig.encoders) : link };
}

/** An NDJSON recording with the header `twolink run --record` writes, marked as virtual time. */
function openRecorder(file: string, rig: Rig, rateHz: number, feedforward: FeedforwardMode, paths: PathSpec[], injections: Injection[]): Recorder {
  const recorder = new Recorder(file, rig.joints);
  recorder.open({
    kind: 'header',
    twolink: VERSION,
    protocol: PROTOCOL_VERSION,
    startedAt: new Date().toISOString(),
    joints: rig.joints,
    rateHz,
    feedforward,
    target: { kind: 'mock' },
    clock: 'virtual',
    rig: { file: rig.file, name: rig.name, content: rig.source },
    trajectories: paths,
    injections,
  });
  return recorder;
}

/** Moves virtual time from one pending timer to the next until `done`; streams and the loop react in between. */
async function advanceUntil(clock: VirtualClock, done: () => boolean): Promise<void> {
  let idle = 0;
  while (!done()) {
    const next = clock.nextTimerAt();
    if (next === Infinity) {
      if (++idle > 1000) throw new Error('virtual run: nothing pending and the run has not ended');
    } else {
      idle = 0;
      clock.advanceTo(next);
    }
    await settle();
  }
}
