// Runs the real loop against the in-process mock rig in virtual time (deterministic, faster than real time).
import type { Rig } from '../../src/config/load.js';
import type { FeedforwardMode } from '../../src/control/controller.js';
import type { LoopCore, LoopEvent } from '../../src/control/loop.js';
import { runLoop, VirtualPacer, type RunResult } from '../../src/control/runner.js';
import { TICK_WIDTH } from '../../src/control/tick.js';
import type { PathSpec } from '../../src/model/builtins.js';
import { RunStats, type RunSummary } from '../../src/record/stats.js';
import { createMockRig, type MockRig } from '../../src/rig/mock-rig.js';
import { VirtualClock } from '../../src/time/clock.js';
import { LineLink } from '../../src/transport/line-link.js';

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
      const copy = new Float64Array(TICK_WIDTH);
      copy.set(row);
      rows.push(copy);
      stats.add(row);
    },
    onEvent: (e) => events.push(e),
    ...(opts.onTick ? { onTick: (c: LoopCore) => opts.onTick!(c, clock, mock) } : {}),
    ...(opts.signal ? { signal: opts.signal } : {}),
    maxSeconds: opts.maxSeconds ?? 60,
  });
  clearInterval(pump);
  const summary = stats.summary(result.stopReason, { stopOutcome: result.stopOutcome });
  mock.dispose();
  return { result, summary, rows, events, mock, link };
}
