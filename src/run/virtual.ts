/**
 * The real loop against the in-process mock rig in virtual time: deterministic and faster than real
 * time. The mock speaks the rig file's protocol (`link.transport`): the line protocol's mock board, or
 * the Firmata mock board behind johnny-five, as `twolink run --mock` does in real time. The mock
 * shares this thread and the virtual clock; this file moves the clock from one pending timer to the
 * next (a sample, a byte off the UART, a USB frame) and lets the streams and the loop react in
 * between. Tests, the bench, the HIL suites and `twolink identify --mock` use it. Figures from it are
 * virtual-time figures.
 */
import type { Rig } from '../config/load.js';
import type { FeedforwardMode } from '../control/controller.js';
import type { Injection } from '../mock/injections.js';
import type { ControlLaw, LoopCore, LoopEvent } from '../control/loop.js';
import type { RunOptions, RunResult } from '../control/runner.js';
import { F } from '../telemetry/tick.js';
import type { PathSpec } from '../model/builtins.js';
import { Recorder } from '../telemetry/recorder.js';
import { RunStats, type RunSummary } from './stats.js';
import { actsOn, MOCK_PARTS, refusalIn } from '../mock/injections.js';
import type { LineMock } from '../mock/line-mock.js';
import type { FirmataMock } from '../mock/firmata-mock.js';
import type { FirmataLink } from '../transport/firmata-link.js';
import type { MockWiring } from '../mock/wiring.js';
import type { VirtualClock } from '../time/clock.js';
import type { LineLink } from '../transport/line-link.js';
import { composeRun } from './compose.js';
import { runHeader, type HeaderParts } from './header.js';
import type { ImpedanceLaw, ImpedanceSettings } from '../control/impedance.js';
import { modeOf } from './modes.js';

export interface VirtualRun {
  result: RunResult;
  summary: RunSummary;
  rows: Float64Array[];
  events: LoopEvent[];
  /** The mock rig: the line protocol's board, or (a rig whose link.transport is "firmata") the Firmata board. */
  mock: LineMock | FirmataMock;
  link: LineLink | FirmataLink;
}

export interface VirtualRunOptions {
  feedforward?: FeedforwardMode;
  rateHz?: number;
  park?: boolean;
  onTick?: (core: LoopCore, clock: VirtualClock, mock: LineMock | FirmataMock) => void;
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
  /** Impedance mode: its settings (the law is built as `twolink run --mode impedance --mock` builds it), or a law built by the caller. */
  impedance?: ImpedanceSettings | ImpedanceLaw;
}

/** Refuses the injections virtual time cannot apply: those on the host's thread, and those the rig's mock lacks the part for. */
function checkInjections(rig: Rig, injections: readonly Injection[]): void {
  const firmata = rig.link.transport === 'firmata';
  for (const i of injections) {
    if (actsOn(i.name) === 'host')
      throw new Error(`--inject ${i.name}: it acts on the host's loop thread, which virtual time does not have`);
    const why = refusalIn(MOCK_PARTS[firmata ? 'firmata' : 'line'], firmata ? 'the Firmata mock rig' : 'the mock rig', i.name);
    if (why) throw new Error(`--inject ${i.name}: ${why}`);
  }
}

export async function virtualRun(rig: Rig, paths: PathSpec[], opts: VirtualRunOptions = {}): Promise<VirtualRun> {
  const rateHz = opts.rateHz ?? rig.control.rateHz;
  const stats = new RunStats(rig.joints, rateHz).encoders(rig.encoders);
  if (paths.some((x) => x.taught)) stats.enableReplay(rig.arm);
  const feedforward = opts.feedforward ?? rig.control.feedforward;
  const injections = (opts.injections ?? []).slice().sort((a, b) => a.at - b.at);
  checkInjections(rig, injections);
  const rows: Float64Array[] = [];
  const events: LoopEvent[] = [];
  let recorder: Recorder | undefined;
  // The mock and the clock, once composed (before the first sample).
  const at: { mock?: LineMock | FirmataMock; clock?: VirtualClock } = {};
  // The law (a controller is loaded in its thread) before the rig opens: nothing to dispose of when it fails (compose.ts).
  const run = await composeRun({
    rig,
    place: { kind: 'mock', ...(opts.wiring ? { wiring: opts.wiring } : {}) },
    time: 'virtual',
    mode: modeOf(opts),
    rateHz,
    feedforward,
    paths,
    park: opts.park ?? true,
    maxSeconds: opts.maxSeconds ?? 600,
    ...(opts.predict !== undefined ? { predict: opts.predict } : {}),
    injections,
    sink: (row) => {
      plantTruth(row, at.mock!, at.clock!.now());
      if (opts.keepRows ?? true) rows.push(Float64Array.from(row));
      stats.add(row);
      recorder?.tick(row);
    },
    onEvent: (e) => {
      events.push(e);
      recorder?.event({ ...e });
    },
    ...(opts.onTick ? { onTick: (c: LoopCore) => opts.onTick!(c, at.clock!, at.mock!) } : {}),
    ...(opts.signal ? { signal: opts.signal } : {}),
    ...(opts.onReady ? { onReady: opts.onReady } : {}),
  });
  const { composed, law } = run;
  at.clock = composed.clock as VirtualClock;
  at.mock = composed.end.local!.mock;
  if (law.impedance)
    stats.trackImpedance(law.impedance.settings.space, law.impedance.settings.stiffness, law.impedance.settings.dampingRatio);
  let result: RunResult;
  try {
    recorder = opts.record
      ? openRecorder(opts.record, rig, rateHz, feedforward, paths, injections, lawParts(opts, law.impedance))
      : undefined;
    result = await run.run();
  } finally {
    await run.close();
  }
  const summary = stats.summary(result.stop, { stopOutcome: result.stopOutcome, missed: result.timing.lostSamples });
  recorder?.close({ ...summary });
  if (recorder?.failure) throw recorder.failure;
  return { result, summary, rows, events, mock: at.mock, link: composed.board };
}

/**
 * Writes the mock's truth into a tick row (the mock-only `plant` fields): the links' true angles when
 * the board read the encoders for the row's sample (they sit on the motor side). Only a virtual run has the plant in
 * its thread; every other run leaves `plant.known` at 0.
 */
function plantTruth(row: Float64Array | number[], mock: LineMock | FirmataMock, now: number): void {
  const p = mock.plant;
  // The reading the row holds: the line board's time is the plant's (both on this clock, from its
  // boot), to the microsecond; else it was sampled errUs before now when it was answered; else
  // (a reading superseded before its answer, on Firmata) the last reading.
  const q = TRUTH;
  const boardT = row[F.boardT]!;
  const found = row[F.fresh] ? p.linkAtReading(boardT + 2e-6, q) : Number.NaN;
  if (!(Math.abs(found - boardT) <= 2e-6) && !(row[F.errUs]! > 0 && p.linkAtReading(now - row[F.errUs]! * 1e-6, q) >= 0)) {
    q[0] = p.linkAtSample[0]!;
    q[1] = p.joints > 1 ? p.linkAtSample[1]! : 0;
  }
  row[F.plantKnown] = 1;
  row[F.plantQ0] = q[0]!;
  row[F.plantQ1] = q[1]!;
}
const TRUTH = [0, 0];

/** The line protocol's mock of a run (a test of the line board's own counters); throws for a Firmata rig's run. */
export function lineMock(r: Pick<VirtualRun, 'mock'>): LineMock {
  const mock = r.mock;
  if ('motors' in mock) throw new Error("this run was on the Firmata mock rig, not the line protocol's");
  return mock;
}

/** An NDJSON recording with the header `twolink run --record` writes, marked as virtual time. */
type LawParts = Pick<HeaderParts, 'controller' | 'impedance' | 'predict'>;

/** The law as the header records it: the controller's file, a ControlLaw's class, impedance's spring, or feedforward + PID. */
function lawParts(opts: VirtualRunOptions, imp: ImpedanceLaw | undefined): LawParts {
  return {
    ...(typeof opts.controller === 'string'
      ? { controller: opts.controller }
      : opts.controller
        ? { controller: { code: opts.controller.constructor.name } }
        : {}),
    ...(imp && !opts.controller ? { impedance: imp.settings } : {}),
    ...(opts.predict !== undefined ? { predict: opts.predict } : {}),
  };
}

function openRecorder(
  file: string,
  rig: Rig,
  rateHz: number,
  feedforward: FeedforwardMode,
  paths: PathSpec[],
  injections: Injection[],
  law: LawParts,
): Recorder {
  const recorder = new Recorder(file, rig.joints);
  recorder.open(runHeader({ rig, rateHz, feedforward, target: { kind: 'mock' }, clock: 'virtual', paths, injections, ...law }));
  return recorder;
}
