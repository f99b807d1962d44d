/**
 * The mock board as another computer: the line-protocol mock rig in a worker thread of its own, on
 * its own clock, at the far end of a shared-memory cable (wire.ts). It sleeps in Atomics.wait until
 * its next timer (a sample, a byte leaving its UART, a USB frame) or until the host writes, so it
 * neither spins nor shares an event loop with the host's loop. If its thread is starved (a busy
 * machine), its timers run late: it measures by how much and reports it, so that a late mock is not
 * taken for a late host.
 */
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import type { MockPart } from '../config/parts.js';
import { DrivenClock } from '../time/clock.js';
import { taskCpuSeconds, threadId } from '../time/threads.js';
import { StallMonitor, type StallReport } from '../time/stalls.js';
import {
  applyInjection,
  firmataMockSite,
  injectFromHandshake,
  injectionSchema,
  lineMockSite,
  type HandshakeHook,
  type Injection,
  type InjectionSite,
  type ScheduledInjections,
} from './injections.js';
import type { Plant } from './plant.js';
import { AdaptedEnd, buildLineMock } from './line-mock.js';
import type { MockEnd } from './binding.js';
import { UsbSerialAdapter } from './usb-adapter.js';
import { RIG_STARVED_MS } from './starvation.js';
import { BoardWireEnd, type WireBuffers } from './wire.js';
import type { MockWiring } from './wiring.js';

/** What the host gives the mock's thread. */
export interface MockThreadInput {
  rig: MockPart;
  wire: WireBuffers;
  /** The mock wired wrong on purpose (--wiring). */
  wiring?: MockWiring;
}

/**
 * Messages to the mock's thread: an injection now, or (`schedule`) injections on the simulated arm's
 * time counted from the host's handshake (injectFromHandshake).
 */
export type MockThreadCommand = { type: 'inject'; injection: Injection } | { type: 'schedule'; injections: Injection[] } | { type: 'stop' };

/** How the mock's own thread fared. */
export interface MockThreadStats {
  /** Largest lateness of a timer of the mock (a sample, a byte, a USB frame) [ms]. */
  maxLateMs: number;
  /** Timers that ran more than 0.5 ms late. */
  lateTimers: number;
  /** CPU time of the mock's thread over its wall time, 0..1. */
  cpu: number;
  /** The thread's Linux task id (to tell its CPU apart from the host's), or -1. */
  tid: number;
  /** Samples the board took. */
  samples: number;
  /** Garbage collection and event-loop delay of the mock's thread. */
  stalls: StallReport;
  /** Board time of the latest late timer [s] (when the worst lateness happened). */
  worstAt: number;
  /**
   * Time the board's thread was starved (not run for more than 2 ms past a timer) [ms], in total and at
   * most at once, that the simulated board's time stood still, as a board that is another computer would
   * not have been held up (the Firmata board catches up on the first 20 ms of each instead).
   */
  starvedMs: number;
  maxStarvedMs: number;
}

/** Messages from the mock's thread. */
export type MockThreadMessage =
  | { type: 'ready'; tid: number }
  | { type: 'stats'; stats: MockThreadStats }
  | { type: 'error'; message: string }
  /** An injection this mock cannot take (it lacks the part it acts on), and why. */
  | { type: 'refused'; why: string }
  /**
   * A scheduled injection was applied at `plantS`, the arm's time since the host's handshake [s], when the
   * wall clock said `wallS` since then (the board's time stands still while its thread is starved).
   */
  | { type: 'injected'; injection: Injection; plantS: number; wallS: number }
  /** The injections of a `schedule` are on: their time counts from the host's handshake. */
  | { type: 'scheduled' }
  /** The host's first handshake the board answered, at `monoMs` (the machine's monotonic clock [ms]): the scheduled injections' zero. */
  | { type: 'handshake'; monoMs: number }
  /** The board's time stood still for `ms` at board time `atS` (starvation.ts: RIG_STARVED_MS or more). */
  | { type: 'starved'; ms: number; atS: number };

/** The mock of either protocol, as this thread drives it. */
interface ThreadMock {
  /** What injections act on; `unplug` is the cable to the host (this thread's end of the wire). */
  site(unplug: () => void): InjectionSite;
  /** The simulated arm (on the thread's clock). */
  plant: Plant;
  /** The board's hook for its answers to a host's handshake. */
  handshake: HandshakeHook;
  end: MockEnd;
  samples(): number;
  dispose(): void;
}

async function buildMock(input: MockThreadInput, clock: DrivenClock): Promise<ThreadMock> {
  const opts = input.wiring ? { wiring: input.wiring } : {};
  if (input.rig.link.transport === 'firmata') {
    const { createFirmataBoard } = await import('./firmata-mock.js');
    const f = createFirmataBoard(input.rig, clock, opts);
    const adapter = new UsbSerialAdapter(clock, { kind: input.rig.plant!.adapter.kind, latencyMs: input.rig.plant!.adapter.latencyMs });
    return {
      site: (unplug) => firmataMockSite('the Firmata mock rig', f.plant, f.board, unplug),
      plant: f.plant,
      handshake: (fn) => void (f.board.onIdentify = fn),
      end: new AdaptedEnd(f.board, adapter),
      samples: () => f.board.stats.txBytes, // (bytes: Firmata has no sample frames)
      dispose: () => {
        f.board.dispose();
        adapter.dispose();
      },
    };
  }
  const l = buildLineMock(input.rig, clock, opts);
  return {
    site: (unplug) => lineMockSite('the line-protocol mock rig', l.plant, l.board, unplug),
    plant: l.plant,
    handshake: (fn) => void (l.board.onHandshake = fn),
    end: l.end,
    samples: () => l.board.stats.txFrames,
    dispose: () => l.dispose(),
  };
}

/** A timer this late [s] means the board's thread was not running: the board's time stands still. */
const STARVED_S = 0.002;
/**
 * Except on the Firmata board, up to this much of it [s]: the host takes the count of its reports for
 * its clock (Firmata has no timestamps), so a board that stood still looked to it like reports lost on
 * the wire, and it set the board's time (and its plan) ahead of the arm by what it thought lost. The
 * Firmata board catches up instead: its timers run at their due times, as a board that is another
 * computer would have run them, and the reports go out late in one burst. Longer starvation (a busy
 * machine) still stands still, so that the board's watchdog does not cut the motors over the host's
 * commands that wait in the cable meanwhile.
 */
const CATCH_UP_S = 0.02;

/**
 * The pty rig's injections on this thread's simulated arm: their time counts from the host's first
 * handshake the board answers (said to the host, as is each injection applied on the arm's time).
 */
function scheduleOnPlant(
  port: NonNullable<typeof parentPort>,
  mock: ThreadMock,
  site: InjectionSite,
  clock: DrivenClock,
  injections: Injection[],
  before: ScheduledInjections | undefined,
): ScheduledInjections {
  before?.stop();
  let wall0 = performance.now();
  const apply = (i: Injection, t: number): void => {
    const r = applyInjection(site, i);
    port.postMessage(
      (r.ok
        ? { type: 'injected', injection: i, plantS: t, wallS: (performance.now() - wall0) / 1000 }
        : { type: 'refused', why: r.why }) satisfies MockThreadMessage,
    );
  };
  return injectFromHandshake(clock, mock.plant, injections, mock.handshake, apply, () => {
    wall0 = performance.now();
    port.postMessage({ type: 'handshake', monoMs: Number(process.hrtime.bigint()) / 1e6 } satisfies MockThreadMessage);
  });
}

/**
 * The host's messages: an injection now, injections on the arm's time (`schedule`), `stop`. Returns
 * what stops the scheduled injections.
 */
function listen(
  port: NonNullable<typeof parentPort>,
  mock: ThreadMock,
  site: InjectionSite,
  clock: DrivenClock,
  stop: () => void,
): () => void {
  let scheduled: ScheduledInjections | undefined;
  port.on('message', (m: MockThreadCommand) => {
    if (m.type === 'stop') stop();
    else if (m.type === 'inject') {
      // Checked again: it crossed a thread boundary.
      const i = injectionSchema.safeParse(m.injection);
      const r = i.success ? applyInjection(site, i.data) : { ok: false as const, why: `not an injection: ${JSON.stringify(m.injection)}` };
      if (!r.ok) port.postMessage({ type: 'refused', why: r.why } satisfies MockThreadMessage);
    } else if (m.type === 'schedule') {
      const all = injectionSchema.array().safeParse(m.injections);
      if (!all.success)
        port.postMessage({
          type: 'refused',
          why: `not injections: ${JSON.stringify(m.injections).slice(0, 200)}`,
        } satisfies MockThreadMessage);
      else {
        scheduled = scheduleOnPlant(port, mock, site, clock, all.data, scheduled);
        port.postMessage({ type: 'scheduled' } satisfies MockThreadMessage);
      }
    }
  });
  return () => scheduled?.stop();
}

/**
 * Starved (the machine is busy): the simulated board's time stands still for what it missed, so
 * that its samples and its watchdog do not pile up as a real board's would not. A board that catches
 * up (Firmata's: `catchUp`, which runs the timers due with their bytes in one write) keeps CATCH_UP_S
 * of it, run before the host's bytes are taken (they are stamped with the time now). Returns how late
 * the timers it ran were [s].
 */
function holdWhileStarved(clock: DrivenClock, stats: MockThreadStats, port: MessagePort, catchUp: (() => number) | undefined): number {
  const missed = clock.now() - clock.nextTimerAt();
  if (missed <= STARVED_S) return 0;
  const held = catchUp ? Math.max(0, missed - CATCH_UP_S) : missed;
  clock.pause(held);
  stats.starvedMs += held * 1000;
  stats.maxStarvedMs = Math.max(stats.maxStarvedMs, held * 1000);
  if (held * 1000 >= RIG_STARVED_MS) port.postMessage({ type: 'starved', ms: held * 1000, atS: clock.now() } satisfies MockThreadMessage);
  return catchUp ? catchUp() : 0;
}

/** Counts a pass whose timers ran late by `late` [s], and keeps the worst and when it was. */
function noteLate(stats: MockThreadStats, late: number, now: number): void {
  if (late > 0.0005) stats.lateTimers++;
  if (late * 1000 > stats.maxLateMs) {
    stats.maxLateMs = late * 1000;
    stats.worstAt = now;
  }
}

async function main(): Promise<void> {
  const port = parentPort!;
  const input = workerData as MockThreadInput;
  const clock = new DrivenClock();
  const catchUp = input.rig.link.transport === 'firmata';
  const wire = new BoardWireEnd(input.wire);
  const mock = await buildMock(input, clock);
  // While the board catches up, what it sends leaves in one write, as the host would find it: the bytes of
  // those few ms were all on their way already (sent one by one, the host took the first, late, for a loss).
  let outbox: Uint8Array[] | undefined;
  mock.end.onTransmit = (b) => (outbox ? outbox.push(b) : wire.send(b));
  const runDueInOneWrite = (): number => {
    outbox = [];
    const late = clock.runDue(true);
    const burst = outbox;
    outbox = undefined;
    if (burst.length > 0) wire.send(Buffer.concat(burst));
    return late;
  };
  const tid = threadId();
  const cpu0 = taskCpuSeconds(tid);
  const wall0 = clock.now();
  let running = true;
  const monitor = new StallMonitor();
  const stats: MockThreadStats = {
    maxLateMs: 0,
    lateTimers: 0,
    cpu: 0,
    tid,
    samples: 0,
    stalls: monitor.report(),
    worstAt: 0,
    starvedMs: 0,
    maxStarvedMs: 0,
  };
  const site = mock.site(() => wire.unplug());
  const unschedule = listen(port, mock, site, clock, () => (running = false));
  port.postMessage({ type: 'ready', tid } satisfies MockThreadMessage);
  const yieldToMessages = (): Promise<void> => new Promise((r) => setImmediate(r));
  let lastYield = clock.now();
  while (running && !wire.closed()) {
    const seen = wire.downSignal();
    const baud = wire.hostBaudRate();
    if (baud > 0) mock.end.hostBaudRate = baud;
    wire.heartbeat();
    let late = holdWhileStarved(clock, stats, port, catchUp ? runDueInOneWrite : undefined);
    for (let b = wire.take(); b; b = wire.take()) mock.end.receive(b);
    // Not past a starvation: a thread held up while it ran the timers due (a busy machine, a SIGSTOP) goes
    // back to the check above, which holds the board's time still, rather than run every timer it missed.
    late = Math.max(late, clock.runDue(false, STARVED_S));
    noteLate(stats, late, clock.now());
    const now = clock.now();
    if (now - lastYield > 0.005) {
      lastYield = now;
      await yieldToMessages();
      continue;
    }
    const waitMs = Math.min(5, (clock.nextTimerAt() - clock.now()) * 1000);
    wire.sleep(seen, waitMs);
  }
  unschedule();
  mock.dispose();
  const wall = clock.now() - wall0;
  stats.cpu = wall > 0 ? (taskCpuSeconds(tid) - cpu0) / wall : 0;
  stats.samples = mock.samples();
  stats.stalls = monitor.stop();
  port.postMessage({ type: 'stats', stats } satisfies MockThreadMessage);
  port.close();
}

if (parentPort && (workerData as MockThreadInput | undefined)?.wire) {
  main().catch((e: unknown) => {
    parentPort!.postMessage({ type: 'error', message: e instanceof Error ? e.message : String(e) } satisfies MockThreadMessage);
  });
}
