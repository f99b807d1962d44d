/**
 * The real loop against the in-process mock rig (line protocol) in virtual time: deterministic and
 * faster than real time. Tests, the bench and `twolink identify --mock` use it.
 */
import type { Rig } from '../config/load.js';
import type { FeedforwardMode } from './controller.js';
import type { LoopCore, LoopEvent } from './loop.js';
import { runLoop, VirtualPacer, type RunResult } from './runner.js';
import { TICK_WIDTH } from './tick.js';
import type { PathSpec } from '../model/builtins.js';
import { Recorder } from '../record/recorder.js';
import { RunStats, type RunSummary } from '../record/stats.js';
import { PROTOCOL_VERSION, VERSION } from '../version.js';
import { createMockRig, type MockRig } from '../rig/mock-rig.js';
import { VirtualClock } from '../time/clock.js';
import { LineLink } from '../transport/line-link.js';

export interface VirtualRun {
  result: RunResult;
  summary: RunSummary;
  rows: Float64Array[];
  events: LoopEvent[];
  mock: MockRig;
  link: LineLink;
}

export async function virtualRun(
  rig: Rig,
  paths: PathSpec[],
  opts: {
    feedforward?: FeedforwardMode;
    rateHz?: number;
    park?: boolean;
    onTick?: (core: LoopCore, clock: VirtualClock, mock: MockRig) => void;
    maxSeconds?: number;
    signal?: AbortSignal;
    /** Keep every row (memory: 45 numbers a tick). @default true */
    keepRows?: boolean;
    /** Write an NDJSON recording (header, ticks, events, summary) here, as `twolink run --record` does. */
    record?: string;
  } = {},
): Promise<VirtualRun> {
  const clock = new VirtualClock();
  const mock = createMockRig(rig, clock);
  const stream = await mock.openStream();
  const link = new LineLink({ stream, name: mock.path, baudRate: rig.link.baudRate, clock, encoders: rig.encoders, watchdogMs: rig.link.watchdogMs, handshakeMs: rig.link.handshakeMs });
  const rateHz = opts.rateHz ?? rig.control.rateHz;
  const stats = new RunStats(rig.joints, rateHz);
  const feedforward = opts.feedforward ?? rig.control.feedforward;
  const recorder = opts.record ? new Recorder(opts.record, rig.joints) : undefined;
  recorder?.open({
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
    faults: [],
  });
  const rows: Float64Array[] = [];
  const events: LoopEvent[] = [];
  const pacer = new VirtualPacer(clock);
  // The handshake and the enable wait on the clock: keep virtual time moving until the loop takes over.
  const pump = setInterval(() => clock.advanceBy(0.001), 0);
  let result: RunResult;
  try {
    result = await runLoop({
      rig,
      link,
      onReady: () => clearInterval(pump),
      clock,
      pacer,
      rateHz,
      feedforward,
      paths,
      park: opts.park ?? true,
      sink: (row) => {
        if (opts.keepRows ?? true) {
          const copy = new Float64Array(TICK_WIDTH);
          copy.set(row);
          rows.push(copy);
        }
        stats.add(row);
        recorder?.tick(row);
      },
      onEvent: (e) => {
        events.push(e);
        recorder?.event({ ...e });
      },
      ...(opts.onTick ? { onTick: (c: LoopCore) => opts.onTick!(c, clock, mock) } : {}),
      ...(opts.signal ? { signal: opts.signal } : {}),
      maxSeconds: opts.maxSeconds ?? 600,
    });
  } finally {
    clearInterval(pump);
    mock.dispose();
  }
  const summary = stats.summary(result.stopReason, { stopOutcome: result.stopOutcome, missed: result.timing.missed });
  recorder?.close({ ...summary });
  if (recorder?.failure) throw recorder.failure;
  return { result, summary, rows, events, mock, link };
}
