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
import { RunStats, type RunSummary } from '../record/stats.js';
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
  } = {},
): Promise<VirtualRun> {
  const clock = new VirtualClock();
  const mock = createMockRig(rig, clock);
  const stream = await mock.openStream();
  const link = new LineLink({ stream, name: mock.path, baudRate: rig.link.baudRate, clock, encoders: rig.encoders, watchdogMs: rig.link.watchdogMs, handshakeMs: rig.link.handshakeMs });
  const rateHz = opts.rateHz ?? rig.control.rateHz;
  const stats = new RunStats(rig.joints, rateHz);
  const rows: Float64Array[] = [];
  const events: LoopEvent[] = [];
  const pacer = new VirtualPacer(clock);
  // The handshake and the enable wait on the clock: keep virtual time moving until the loop takes over.
  const pump = setInterval(() => clock.advanceBy(0.001), 0);
  const result = await runLoop({
    rig,
    link,
    onReady: () => clearInterval(pump),
    clock,
    pacer,
    rateHz,
    feedforward: opts.feedforward ?? rig.control.feedforward,
    paths,
    park: opts.park ?? true,
    sink: (row) => {
      if (opts.keepRows ?? true) {
        const copy = new Float64Array(TICK_WIDTH);
        copy.set(row);
        rows.push(copy);
      }
      stats.add(row);
    },
    onEvent: (e) => events.push(e),
    ...(opts.onTick ? { onTick: (c: LoopCore) => opts.onTick!(c, clock, mock) } : {}),
    ...(opts.signal ? { signal: opts.signal } : {}),
    maxSeconds: opts.maxSeconds ?? 60,
  });
  clearInterval(pump);
  const summary = stats.summary(result.stopReason, { stopOutcome: result.stopOutcome, missed: result.timing.missed });
  mock.dispose();
  return { result, summary, rows, events, mock, link };
}
