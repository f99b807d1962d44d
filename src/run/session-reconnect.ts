/**
 * `twolink run --reconnect` on the main thread (docs/cable.md): when a segment of the run ends with a
 * pulled cable (`fault:cable`), wait for the same board (reconnect.ts), then start the loop's worker
 * again with the rest of the plan (resume-plan.ts); its handshake tells a board that kept running from
 * one that reset, and a reset board is re-zeroed before it moves (resume-gate.ts). The recording stays
 * open across the segments: its time goes on (the gap in it), and the reconnect's steps are events in
 * it; the summary counts them (`reconnect`).
 */
import type { Worker } from 'node:worker_threads';
import type { PlannedPhase } from '../control/events.js';
import type { LoopCommand, LoopEvent } from '../control/loop.js';
import type { StopReason } from '../control/stop.js';
import { F, LOOP_STATES, PHASES } from '../telemetry/tick.js';
import type { WorkerCommand, WorkerInput, WorkerMessage } from './messages.js';
import { describeKey, waitForPort, type BootMark, type ListedPort, type PortKey } from './reconnect.js';
import { resumePaths, type Interruption } from './resume-plan.js';
import type { RunStats } from './stats.js';
import type { RunEnd } from './session.js';

/** What `--reconnect` needs from the command that starts the run. */
export interface ReconnectOptions {
  /** How long to wait for the board each time it is lost [s]. */
  timeoutS: number;
  /** How the board is found again (reconnect.ts's portKey, taken before the run). */
  key: PortKey;
  /** The OS's list of ports (serialport's `list()`). */
  list: () => Promise<ListedPort[]>;
  /** Asked before a board that reset is re-zeroed and moved (as setup asks; --yes answers yes). Resolves true to go on. */
  rezero: (why: string) => Promise<boolean>;
  /** The dashboard's "waiting for the board" line: the seconds left, or undefined once the wait is over. */
  onWaiting?: (leftS: number | undefined, what: string) => void;
  /** One line for people at each step (stderr). */
  log?: (line: string) => void;
}

/** The summary's account of the reconnects. */
export interface ReconnectSummary {
  /** Boards found again and resumed. */
  count: number;
  /** Of them, boards that had reset (or could not say) and were re-zeroed. */
  resets: number;
  /** How long each wait lasted [s] (the gaps in the recording). */
  gapsS: number[];
  /** Why the last wait ended without a board (timeout, stopped), if one did. */
  gaveUp?: string;
}

/** The parts of the session this uses. */
export interface SegmentHost {
  readonly stats: RunStats;
  event(e: Record<string, unknown>): void;
  segment(input: WorkerInput): Promise<RunEnd>;
  drain(): void;
}

const TRACK_STATE = LOOP_STATES.indexOf('track');
const round3 = (x: number): number => Math.round(x * 1000) / 1000;

/** What the main thread follows of the segments: where the plan was, the recording's time, the board's boot mark. */
export class Segments {
  /** Added to the loop's time in the recording [s] (0 in the first segment). */
  tOffset = 0;
  /** The recording's time at the last row [s]. */
  lastT = 0;
  /** The last handshake's uptime mark. */
  bootMark: BootMark | undefined;
  /** The current segment handshook (a segment that did not is retried while the wait lasts). */
  connected = false;
  readonly account: ReconnectSummary = { count: 0, resets: 0, gapsS: [] };
  private rowCopy: Float64Array | undefined;
  private pathStarts = 0;
  private trackFromS = 0;
  private phase: PlannedPhase | 'none' = 'none';
  private trajT = 0;
  private readonly haltCtl = new AbortController();
  /** The stop asked for between segments (Ctrl-C, the e-stop). */
  haltedBy: LoopCommand | undefined;

  constructor(
    readonly host: SegmentHost,
    private readonly o: ReconnectOptions,
  ) {}

  get haltSignal(): AbortSignal {
    return this.haltCtl.signal;
  }

  /** A stop asked for while no segment runs: the wait ends. */
  halt(c: LoopCommand): void {
    this.haltedBy ??= c;
    this.haltCtl.abort();
  }

  /** A drained row, its time moved onto the recording's; notes where the plan is. */
  row(r: Float64Array): Float64Array {
    let out = r;
    if (this.tOffset !== 0) {
      if (this.rowCopy?.length !== r.length) this.rowCopy = new Float64Array(r.length);
      this.rowCopy.set(r);
      this.rowCopy[F.t] = r[F.t]! + this.tOffset;
      out = this.rowCopy;
    }
    this.lastT = out[F.t]!;
    if (out[F.state] === TRACK_STATE) {
      this.phase = PHASES[out[F.phase]!] ?? 'none';
      this.trajT = out[F.trajT]!;
    }
    return out;
  }

  onLoopEvent(e: LoopEvent): void {
    if (e.kind !== 'trajectory') return;
    if (e.phase === 'approach') this.pathStarts++;
    if (e.phase === 'track') this.trackFromS = e.plan.fromS;
    if (e.phase === 'none') this.phase = 'none';
  }

  /** Where the plan was when the segment ended. */
  interruption(): Interruption {
    return {
      pathIndex: this.pathStarts - 1,
      phase: this.phase,
      ...(this.phase === 'track' ? { trackS: Math.max(0, this.trajT - this.trackFromS) } : {}),
    };
  }

  /** A new segment starts: the loop's time begins again at 0, the recording's at `atT` [s]. */
  begin(atT: number): void {
    this.tOffset = atT;
    this.pathStarts = 0;
    this.phase = 'none';
    this.connected = false;
    this.host.stats.gap();
  }

  /** The loop thread's reconnect messages: the handshake's verdict (asking before a reset board is re-zeroed), the zero re-taken. */
  onWorker(m: Extract<WorkerMessage, { type: 'boot' | 'rezeroed' }>, w: Worker): void {
    const t = round3(this.lastT);
    if (m.type === 'rezeroed') {
      this.host.event({ event: 'rezero', t, done: true, restS: round3(m.restS) });
      this.o.log?.(`the zero was re-taken (the arm at rest, hanging, after ${m.restS.toFixed(1)} s)`);
      return;
    }
    this.connected = true;
    this.bootMark = m.mark;
    const v = m.verdict;
    this.host.event({
      event: 'board',
      t,
      firmware: m.identity.firmware,
      uptimeMs: m.identity.uptimeMs ?? null,
      ...(v ? { verdict: v } : {}),
    });
    if (!v || v.kind === 'kept-running') {
      if (v) this.o.log?.(`the board kept running (its uptime grew by ${v.grewMs} ms in ${v.awayMs} ms): its zero holds`);
      return;
    }
    this.account.resets++;
    const why = v.kind === 'reset' ? `the board reset (${v.why})` : `the board may have reset (${v.why})`;
    this.o.log?.(`${why}: its encoders restarted, it does not move until its zero is re-taken`);
    void this.o.rezero(why).then(
      (go) => {
        this.host.event({ event: 'rezero', t: round3(this.lastT), asked: why, go });
        w.postMessage({ type: 'rezero', go } satisfies WorkerCommand);
      },
      () => w.postMessage({ type: 'rezero', go: false } satisfies WorkerCommand),
    );
  }
}

/** Two segments' ends as one: the counters summed, the last segment's stop and figures. */
function merge(a: RunEnd, b: RunEnd): RunEnd {
  const timing =
    a.timing && b.timing
      ? {
          ...b.timing,
          lateSamples: a.timing.lateSamples + b.timing.lateSamples,
          burstSamples: (a.timing.burstSamples ?? 0) + (b.timing.burstSamples ?? 0),
          lostSamples: a.timing.lostSamples + b.timing.lostSamples,
        }
      : (b.timing ?? a.timing);
  const counters =
    a.counters && b.counters
      ? {
          dropped: a.counters.dropped + b.counters.dropped,
          duplicate: a.counters.duplicate + b.counters.duplicate,
          reordered: a.counters.reordered + b.counters.reordered,
          overlong: a.counters.overlong + b.counters.overlong,
        }
      : (b.counters ?? a.counters);
  const missed = (typeof a.extra.missed === 'number' ? a.extra.missed : 0) + (typeof b.extra.missed === 'number' ? b.extra.missed : 0);
  return {
    ...b,
    extra: { ...b.extra, missed },
    rt: a.rt.granted ? a.rt : b.rt,
    ...(timing ? { timing } : {}),
    ...(counters ? { counters } : {}),
  };
}

const isCable = (s: StopReason): boolean => s.kind === 'fault' && s.fault.kind === 'cable';

/** The stop a halt between segments asked for. */
function haltStop(c: LoopCommand | undefined, fallback: StopReason): StopReason {
  if (c?.kind === 'stop') return c.reason;
  if (c?.kind === 'estop') return c.reason ?? { kind: 'estop' };
  return fallback;
}

/** One wait for the board and the segment that follows (retried while the wait lasts if it never handshook). */
async function nextSegment(
  s: Segments,
  o: ReconnectOptions,
  input: WorkerInput,
  paths: WorkerInput['paths'],
  lostAt: number,
): Promise<{ end: RunEnd; paths: WorkerInput['paths']; gapS: number } | { gaveUp: string; waitedS: number }> {
  const deadline = lostAt + o.timeoutS * 1000;
  const what = describeKey(o.key);
  const resumed = resumePaths(input.rig.arm, paths, input.cycle, s.interruption());
  for (;;) {
    const w = await waitForPort({
      key: o.key,
      timeoutS: Math.max(0, (deadline - performance.now()) / 1000),
      signal: s.haltSignal,
      list: o.list,
      onTick: (left) => o.onWaiting?.(left, what),
    });
    o.onWaiting?.(undefined, what);
    const waitedS = (performance.now() - lostAt) / 1000;
    if (w.kind !== 'found') return { gaveUp: w.kind === 'timeout' ? `no board within ${o.timeoutS} s` : 'stopped while waiting', waitedS };
    s.host.event({ event: 'reconnect', phase: 'found', t: round3(s.lastT), port: w.path, waitedS: round3(waitedS) });
    o.log?.(`${what} is back after ${waitedS.toFixed(1)} s: resuming (${resumed.map((p) => p.name).join(', ')})`);
    const gapS = (performance.now() - lostAt) / 1000;
    s.begin(s.lastT + gapS);
    const target = input.target.kind === 'port' ? { ...input.target, path: w.path } : input.target;
    const maxSeconds = Math.max(1, input.maxSeconds - s.lastT);
    const end = await s.host.segment({
      ...input,
      target,
      paths: resumed,
      maxSeconds,
      injections: [],
      resume: s.bootMark ? { before: s.bootMark } : {},
    });
    if (s.connected || s.haltSignal.aborted || performance.now() >= deadline) return { end, paths: resumed, gapS };
    s.host.event({ event: 'reconnect', phase: 'retry', t: round3(s.lastT), why: end.error?.message ?? 'no handshake' });
    o.log?.(`no handshake yet (${end.error?.message ?? 'no answer'}): waiting on`);
  }
}

/**
 * After the first segment: while a segment ends with a pulled cable, wait for the board and run the
 * next. Returns the run's end (the counters of every segment, the last one's stop); a wait that
 * timed out keeps `fault:cable` as the stop, one ended by Ctrl-C or the e-stop takes theirs.
 */
export async function reconnectAfter(s: Segments, o: ReconnectOptions, input: WorkerInput, first: RunEnd): Promise<RunEnd> {
  let end = first;
  let paths = input.paths;
  while (isCable(end.stop) && !s.haltSignal.aborted) {
    s.host.drain();
    const lostAt = performance.now();
    const lost = end.stop;
    s.host.event({ event: 'reconnect', phase: 'waiting', t: round3(s.lastT), stop: lost, board: describeKey(o.key), timeoutS: o.timeoutS });
    o.log?.(`the cable is gone: waiting up to ${o.timeoutS} s for ${describeKey(o.key)} (Ctrl-C to stop)`);
    const next = await nextSegment(s, o, input, paths, lostAt);
    if ('gaveUp' in next) {
      s.account.gaveUp = next.gaveUp;
      s.account.gapsS.push(round3(next.waitedS));
      s.host.event({ event: 'reconnect', phase: 'gave-up', t: round3(s.lastT), why: next.gaveUp, waitedS: round3(next.waitedS) });
      end = { ...end, stop: haltStop(s.haltedBy, lost) };
      break;
    }
    s.account.count++;
    s.account.gapsS.push(round3(next.gapS));
    paths = next.paths;
    end = merge(end, next.end);
  }
  if (s.haltSignal.aborted && isCable(end.stop)) end = { ...end, stop: haltStop(s.haltedBy, end.stop) };
  return { ...end, extra: { ...end.extra, reconnect: { ...s.account } } };
}
