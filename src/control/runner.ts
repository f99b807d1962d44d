/**
 * Runs a session on the board's clock: connect, enable, start the board's sampling, then let the
 * samples drive the loop (read -> update -> write on each one, in loop.ts) while this file starts the
 * trajectories in turn, forwards commands, watches for a silent link, and at the end confirms that
 * the motors are at zero. Nothing here paces, spins or sleeps: between samples the thread waits in its
 * event loop. The same code runs in real time (a worker thread) and in virtual time (tests), where
 * the caller moves the clock.
 */
import type { LoopPart } from '../config/parts.js';
import type { PathSpec } from '../model/builtins.js';
import type { Clock, TimerHandle } from '../time/clock.js';
import type { BoardIdentity, Link, Reading, StopOutcome } from '../transport/link.js';
import type { FeedforwardMode } from './controller.js';
import { accepts } from './commands.js';
import { LoopCore, type ControlLaw, type LoopCommand, type LoopEvent, type LoopLaw } from './loop.js';
import { FeasibilityError } from './feasibility.js';
import { hostFault, internalFault, isStopReason, type StopReason } from './stop.js';

export interface RunOptions {
  /** What the loop reads of the rig file (a whole `Rig` is one). */
  rig: LoopPart;
  link: Link;
  clock: Clock;
  /** The board's sampling rate [Hz]. */
  rateHz: number;
  feedforward: FeedforwardMode;
  /** Trajectories to run in order (each from where the previous left the arm). */
  paths: PathSpec[];
  /** Start again with the first when the last is done (the demo). */
  cycle?: boolean;
  /** Go back to where the arm started after each trajectory. @default true */
  park?: boolean;
  /** Every sample's row (a reused buffer: copy it). */
  sink: (row: Float64Array) => void;
  onEvent?: (e: LoopEvent) => void;
  /** Called after every sample (the dashboard's snapshot, test hooks, scheduled injections). */
  onTick?: (core: LoopCore) => void;
  /** Called once the loop exists, before the first sample: commands go through `send`. */
  onReady?: (control: { send: (c: LoopCommand) => void; core: LoopCore; identity: BoardIdentity }) => void;
  /** Aborting stops the run softly, as the signal's reason says when it is a StopReason (else `interrupted`). */
  signal?: AbortSignal;
  /**
   * Time limit of the run [s]: reached before the trajectories are done, the run stops softly with
   * stop reason `timeout` (a cycling run: `done`). @default 3600
   */
  maxSeconds?: number;
  /**
   * The board cuts its motors by itself when commands stop. A function is asked after the link is
   * open (Firmata learns it in the handshake). @default true
   */
  boardWatchdog?: boolean | (() => boolean);
  /** A law in place of feedforward + PID (law.ts): a user's controller, or another built-in `LoopLaw`. */
  law?: ControlLaw | LoopLaw;
  /** Compensate the sample-to-command delay with the model. @default true */
  predict?: boolean;
  /**
   * How long the simulated board at the far end has not run [s] (a mock in its own thread, starved by
   * a busy machine): its silence is then not a lost link. Undefined for a real board.
   */
  boardSilentS?: () => number;
}

/** Timing of a run, on the board's clock and the host's. */
export interface LoopTiming {
  /** Samples handed to the loop. */
  samples: number;
  /**
   * Samples whose answer missed the host's deadline: written more than one sample period after the
   * sample arrived, or never written because the host read the sample late (beyond the link's usual
   * burst; sample-clock.ts). Not the samples of a burst.
   */
  lateSamples: number;
  /** Samples the link delivered in one burst with a newer one (a USB adapter's), not answered: not late. */
  burstSamples: number;
  /** Samples lost (gaps in the board's sample index). */
  lostSamples: number;
  /** Largest gap between answered samples [s] (board time). */
  maxGap: number;
  /** The link's delay from a sample to the sample that applies its answer [samples], where known. */
  answerDelaySamples?: number;
  /** Wall time of the run [s]. */
  seconds: number;
}

export interface RunResult {
  identity: BoardIdentity;
  /** Why the run stopped. */
  stop: StopReason;
  /** Whether the board confirmed the final zero command, or its watchdog had to. */
  stopOutcome: StopOutcome | 'watchdog' | 'unconfirmed-no-watchdog';
  timing: LoopTiming;
  core: LoopCore;
}

/** Runs a session: connect, enable, sample, trajectories, stop, confirm, close. */
export async function runLoop(o: RunOptions): Promise<RunResult> {
  const { link, clock } = o;
  // What the handshake waits for (a reset board's bootloader) is said while it waits; the loop's own listener comes after.
  link.onEvent((e) => e.kind === 'waiting' && o.onEvent?.({ kind: 'link', event: e, t: 0 }));
  const identity = await link.open();
  const boardWatchdog = typeof o.boardWatchdog === 'function' ? o.boardWatchdog() : (o.boardWatchdog ?? true);
  const timers: (TimerHandle | undefined)[] = [];
  try {
    await link.enable(true);
    const c = createCore(o, boardWatchdog);
    const finished = new Promise<void>((r) => c.onFinished(r));
    const { send, fault } = commandChannel(c, link);
    o.onReady?.({ send, core: c, identity });
    const onAbort = (): void => {
      const r: unknown = o.signal?.reason;
      send({ kind: 'stop', reason: isStopReason(r) ? r : { kind: 'interrupted' } });
    };
    if (o.signal?.aborted) onAbort();
    o.signal?.addEventListener('abort', onAbort, { once: true });
    const lost = new LostLinkWatch(o, c);
    const sampler = new SampleHandler(o, c, lost, fault);
    link.onSample((r) => sampler.onSample(r));
    const t0 = clock.now();
    await link.startSampling(o.rateHz);
    lost.arm();
    const limitS = o.maxSeconds ?? 3600;
    // The time limit: `done` only if the run did what was asked (every trajectory run, or a cycling
    // run, whose length the limit is); otherwise `timeout`, which is not a success.
    timers.push(
      clock.setTimer(limitS, () =>
        c.command({ kind: 'stop', reason: o.cycle || sampler.allDone() ? { kind: 'done' } : { kind: 'timeout', seconds: limitS } }),
      ),
    );
    await finished;
    lost.clear();
    // Wait for the sample that records the stopped state, unless the link is gone.
    const grace = clock.setTimer(3 / o.rateHz + 0.05, () => sampler.endSeen());
    await sampler.ended;
    clock.clearTimer(grace);
    link.onSample(() => undefined);
    o.signal?.removeEventListener('abort', onAbort);
    const seconds = clock.now() - t0;
    const stopOutcome = await confirmStop(link, o.rig, clock, boardWatchdog);
    return { identity, stop: c.stop ?? { kind: 'done' }, stopOutcome, timing: timingOf(link, c, sampler.samples, seconds), core: c };
  } catch (e) {
    // An exception anywhere: the motors go to zero before anything else happens.
    link.writeDuty(new Array(o.rig.joints).fill(0));
    await confirmStop(link, o.rig, clock, boardWatchdog).catch(() => undefined);
    throw e;
  } finally {
    for (const t of timers) clock.clearTimer(t);
    await link.close().catch(() => undefined);
  }
}

function createCore(o: RunOptions, boardWatchdog: boolean): LoopCore {
  return new LoopCore({
    rig: o.rig,
    link: o.link,
    clock: o.clock,
    rateHz: o.rateHz,
    feedforward: o.feedforward,
    sink: o.sink,
    ...(o.onEvent ? { onEvent: o.onEvent } : {}),
    boardWatchdog,
    ...(o.law ? { law: o.law } : {}),
    ...(o.predict !== undefined ? { predict: o.predict } : {}),
  });
}

/** Commands into the loop, with the board-side halves of disable / enable / zero; an exception is a fault. */
function commandChannel(c: LoopCore, link: Link): { send: (cmd: LoopCommand) => void; fault: (e: unknown) => void } {
  const fault = (e: unknown): void =>
    void c.command({
      kind: 'estop',
      reason:
        e instanceof FeasibilityError
          ? { kind: 'fault', fault: { kind: 'infeasible', message: e.message } }
          : hostFault(e instanceof Error ? e.message : String(e)),
    });
  // Asynchronous: samples keep coming meanwhile.
  const lifecycle = async (kind: 'disable' | 'enable' | 'zero'): Promise<void> => {
    try {
      if (kind === 'disable') await link.enable(false);
      else if (kind === 'enable') await link.enable(true);
      else if (accepts(c.state, 'zero')) {
        await link.zero();
        c.command({ kind: 'rezero' });
      }
    } catch (e) {
      fault(e);
    }
  };
  const send = (cmd: LoopCommand): void => {
    let accepted = false;
    try {
      accepted = c.command(cmd).ok;
    } catch (e) {
      fault(e);
    }
    // The board's half only when the loop took the command (an enable while not disabled does nothing).
    if (accepted && (cmd.kind === 'disable' || cmd.kind === 'enable' || cmd.kind === 'zero')) void lifecycle(cmd.kind);
  };
  return { send, fault };
}

/**
 * A silent link: no sample for lostAfterTicks periods, and never less than the board's watchdog
 * time, is a fault (re-armed by every sample). The board's watchdog is what stops the motors when
 * the host goes quiet; calling the link lost sooner only stops runs that a busy machine or a pty's
 * kernel buffers delay for a few periods (at 1 kHz, 25 periods are 25 ms).
 */
class LostLinkWatch {
  private timer: TimerHandle | undefined;
  private readonly afterS: number;
  private lastSampleAt: number;
  private samples = 0;

  constructor(
    private readonly o: RunOptions,
    private readonly c: LoopCore,
  ) {
    this.afterS = Math.max(o.rig.link.lostAfterTicks / o.rateHz, o.rig.link.watchdogMs / 1000);
    this.lastSampleAt = o.clock.now();
  }

  /** A sample came: note it and re-arm. */
  sample(): void {
    this.lastSampleAt = this.o.clock.now();
    this.samples++;
    if (!this.c.finished) this.arm();
  }

  arm(): void {
    const { clock } = this.o;
    clock.clearTimer(this.timer);
    const seen = this.samples;
    const dueAt = clock.now() + this.afterS;
    this.timer = clock.setTimer(this.afterS, () => {
      // The timer itself fired late by more than half its time: this host was frozen (stopped, swapped
      // out, a blocked thread), not the link silent. Watch again from now: the samples that waited meanwhile
      // come in and the loop calls the gap a stall of the host; if none comes, the link is lost then.
      if (clock.now() - dueAt > 0.5 * this.afterS) return this.arm();
      // A host that was stalled runs its timers before its I/O: give the samples waiting in the
      // port one turn of the event loop before calling the link lost (they are not lost, only late).
      setImmediate(() => {
        if (this.c.finished || this.samples !== seen) return; // a sample came meanwhile (and re-armed the timer)
        // A simulated board whose thread did not run: it is late, not gone (and says so in its stats).
        if (this.o.boardSilentS && this.o.boardSilentS() > 0.5 * this.afterS) return this.arm();
        this.c.linkLost((clock.now() - this.lastSampleAt) * 1000);
      });
    });
  }

  clear(): void {
    this.o.clock.clearTimer(this.timer);
  }
}

/** Each sample: the loop's three steps, then the next trajectory when the arm is free, then the hooks. */
class SampleHandler {
  samples = 0;
  /** Resolves one sample after the end, so that the recording shows the stopped state and its zero. */
  readonly ended: Promise<void>;
  endSeen: () => void = () => {};
  /** Index of the next path. */
  private next = 0;
  private afterEnd = 0;

  constructor(
    private readonly o: RunOptions,
    private readonly c: LoopCore,
    private readonly lost: LostLinkWatch,
    private readonly fault: (e: unknown) => void,
  ) {
    this.ended = new Promise<void>((r) => (this.endSeen = r));
  }

  onSample(r: Reading): void {
    const c = this.c;
    this.samples++;
    this.lost.sample();
    try {
      c.onSample(r);
    } catch (e) {
      // The loop never throws; if something under it did (a bug), the motors stop.
      this.internal(e);
    }
    // Start the next trajectory once the arm's pose is known and it is not busy.
    if (!c.finished && !r.superseded && (c.state === 'idle' || (c.state === 'hold' && c.progress === undefined))) this.startNext();
    try {
      this.o.onTick?.(c);
    } catch (e) {
      this.internal(e);
    }
    if (c.finished && ++this.afterEnd >= 2) this.endSeen();
  }

  /** An exception from under the loop's own step or its hooks: a bug of twolink's, the motors zeroed at once. */
  private internal(e: unknown): void {
    if (e instanceof FeasibilityError) return this.fault(e);
    try {
      this.c.command({ kind: 'estop', reason: internalFault('the loop thread', e) });
    } catch (again) {
      this.fault(again);
    }
  }

  /** Every trajectory has been started and the arm holds after the last (nothing more was asked). */
  allDone(): boolean {
    const c = this.c;
    if (this.next >= this.o.paths.length && (c.state === 'hold' || c.state === 'idle') && c.progress === undefined) return true;
    // The last path holds until the limit (PathSpec.untilLimit): past its approach, it did what was asked.
    const last = this.o.paths[this.o.paths.length - 1];
    const p = c.progress;
    return this.next >= this.o.paths.length && last?.untilLimit === true && p !== undefined && p.phase !== 'approach';
  }

  private startNext(): void {
    const { paths } = this.o;
    const path = paths[this.next];
    if (path) {
      try {
        this.c.command({ kind: 'start', path, park: this.o.park ?? true });
      } catch (e) {
        this.fault(e);
      }
      this.next++;
      if (this.o.cycle && this.next >= paths.length) this.next = 0;
    } else if (this.c.state === 'hold') {
      this.c.command({ kind: 'stop', reason: { kind: 'done' } });
    }
  }
}

function timingOf(link: Link, c: LoopCore, samples: number, seconds: number): LoopTiming {
  const delay = (link as { answerDelaySamples?: number }).answerDelaySamples;
  return {
    samples,
    lateSamples: c.lateAnswers + c.lateSuperseded,
    burstSamples: c.burstSamples,
    lostSamples: c.lostSamples,
    maxGap: c.maxGap,
    ...(delay !== undefined ? { answerDelaySamples: delay } : {}),
    seconds,
  };
}

/**
 * Zero command, then wait for the board to confirm it; if it cannot (a lost link), the board's
 * watchdog cuts the motors by itself after its timeout -- if the board has one; if it has none, the
 * outcome says so ("unconfirmed-no-watchdog"): the motors may still be running.
 */
async function confirmStop(
  link: Link,
  rig: LoopPart,
  clock: Clock,
  boardWatchdog: boolean,
): Promise<StopOutcome | 'watchdog' | 'unconfirmed-no-watchdog'> {
  link.writeDuty(new Array(rig.joints).fill(0));
  const r = await link.stop(Math.max(200, rig.link.watchdogMs * 2));
  if (r === 'acknowledged') return r;
  if (!boardWatchdog) return 'unconfirmed-no-watchdog';
  // No confirmation: the watchdog (rig.link.watchdogMs) stops the motors on the board by itself.
  await new Promise<void>((resolve) => clock.setTimer(rig.link.watchdogMs / 1000, resolve));
  return 'watchdog';
}
