/**
 * Composing the arm a run (or setup, identify, tune, doctor, the bench) talks to, in one place: the
 * transport table (the line protocol, Firmata over johnny-five), where the board is (the rig file's
 * mock in this thread, the mock in a thread of its own, a serial port) and the time it runs in (a
 * RealClock, or a VirtualClock that `drive` moves from timer to timer). Every link a command opens is
 * built here: `new LineLink(` has this one site in src (tests/architecture.test.ts counts it).
 *
 * A whole run is composed here too (`composeRun`): the board, the law of its mode (the mode table,
 * modes.ts), the injections, the sinks and one `close()`; the loop runner has its one call in src here.
 *
 * The transports and mocks load lazily, so the line path never loads johnny-five and a port never
 * loads a mock.
 */
import type { Duplex } from 'node:stream';
import type { EncoderParams, Rig } from '../config/load.js';
import type { SerialPathChoice } from '../config/rig.js';
import {
  actsOn,
  applyInjection,
  firmataMockSite,
  injectionSchedule,
  lineMockSite,
  MOCK_PARTS,
  type Injection,
  type InjectionPart,
  type InjectionSite,
} from '../mock/injections.js';
import type { LineMock } from '../mock/line-mock.js';
import type { FirmataMock } from '../mock/firmata-mock.js';
import type { RemoteMock } from '../mock/mock-remote.js';
import type { MockWiring } from '../mock/wiring.js';
import { RealClock, VirtualClock, advanceUntil, runUntilSettled, type Clock } from '../time/clock.js';
import type { FirmataLink } from '../transport/firmata-link.js';
import type { LineLink } from '../transport/line-link.js';
import type { Link } from '../transport/link.js';
import type { FeedforwardMode } from '../control/controller.js';
import { runLoop, type RunOptions, type RunResult } from '../control/runner.js';
import type { PathSpec } from '../model/builtins.js';
import type { MockThreadStats } from '../mock/mock-thread.js';
import { F } from '../telemetry/tick.js';
import { modeLaw, type ModeChoice, type ModeLaw } from './modes.js';

/** The rig file's `link.transport`. */
export type TransportName = Rig['link']['transport'];

/**
 * Where the board is: the rig file's simulated arm in this thread (on the composition's clock, real or
 * virtual), the same in a thread of its own (real time: a board is another computer), or a serial port.
 */
export type Place = { kind: 'mock'; wiring?: MockWiring } | { kind: 'mock-thread'; wiring?: MockWiring } | PortPlace;

/** A serial port: its path, baud rate (the rig file's by default), serial path (--serial, else the rig file's `link.serial`, else auto) and whether the serialport path's relay process asks for priority. */
export interface PortPlace {
  kind: 'port';
  path: string;
  baudRate?: number;
  serial?: SerialPathChoice;
  rt?: boolean;
}

/** How the host's link is built; the rig file's values by default. */
export interface LinkOptions {
  /**
   * The board's own encoders, in board order: the link then speaks the board's terms, without the
   * rig file's wiring (setup and doctor, which check the encoders themselves). The line protocol only.
   */
  encoders?: EncoderParams[];
  watchdogMs?: number;
  handshakeMs?: number;
  /** How much longer the handshake waits for a reset board's bootloader [ms]; by default BOOTLOADER_WAIT_MS when opening the port reset the board (`BoardEnd.resetOnOpen`), else 0. */
  bootloaderMs?: number;
  answerMs?: number;
}

/** The host's side of a board. */
export interface ComposedLink {
  /** The transport's own link (its counters and extras). */
  board: LineLink | FirmataLink;
  /** What the loop drives, in joint order (through the rig file's wiring when it has one). */
  link: Link;
  /** The board cuts its motors by itself when commands stop (our firmware; Firmata only with the twolink watchdog feature); asked after the handshake. */
  boardWatchdog: () => boolean;
}

/** A mock rig in this thread. */
export interface LocalMock {
  mock: LineMock | FirmataMock;
  /** Where injections into it act. */
  site: InjectionSite;
}

/** The far end of the cable, opened: its stream, and the mock behind it when there is one. */
export interface BoardEnd {
  stream: Duplex;
  name: string;
  baudRate: number;
  /** One line for people: what this is (the transport and the place). */
  describe: string;
  /** Opening the port reset the board (an Uno-class board whose DTR went up: transport/dtr.ts): the handshake waits for its bootloader. */
  resetOnOpen?: boolean;
  local?: LocalMock;
  remote?: RemoteMock;
  /** Ends the mock (a remote one's thread too). */
  dispose(): Promise<void>;
}

/** What a link needs of an end. */
type LinkEnd = Pick<BoardEnd, 'stream' | 'name' | 'baudRate' | 'resetOnOpen'>;

/** How much longer the handshake waits for a bootloader [ms] (LinkOptions.bootloaderMs). */
async function bootloaderMs(end: LinkEnd, o: LinkOptions): Promise<number> {
  if (o.bootloaderMs !== undefined) return o.bootloaderMs;
  return end.resetOnOpen ? (await import('../transport/dtr.js')).BOOTLOADER_WAIT_MS : 0;
}

/** One protocol: its names, the parts its mock has for injections, its mock in this thread and its link. */
interface Transport {
  label: string;
  mockName: string;
  parts: readonly InjectionPart[];
  mock(rig: Rig, clock: Clock, wiring: MockWiring | undefined): Promise<LocalMock & { dispose: () => void }>;
  link(rig: Rig, end: LinkEnd, clock: Clock, o: LinkOptions): Promise<ComposedLink>;
}

/** The transport table. */
export const TRANSPORTS: Readonly<Record<TransportName, Transport>> = {
  line: {
    label: 'line protocol',
    mockName: 'the mock rig',
    parts: MOCK_PARTS.line,
    async mock(rig, clock, wiring) {
      const { createLineMock } = await import('../mock/line-mock.js');
      const mock = createLineMock(rig, clock, wiring ? { wiring } : {});
      return { mock, site: lineMockSite('the mock rig', mock.plant, mock.board, () => mock.unplug()), dispose: () => mock.dispose() };
    },
    async link(rig, end, clock, o) {
      const { LineLink } = await import('../transport/line-link.js');
      // A board wired otherwise than the README's table (the rig file's `wiring`, from twolink setup):
      // the link maps the joints to the board's inputs and outputs (transport/joints.ts). With the
      // board's own encoders (setup, doctor) it speaks the board's terms, without the wiring.
      const wiring = o.encoders ? undefined : rig.wiring;
      const board = new LineLink({
        stream: end.stream,
        name: end.name,
        baudRate: end.baudRate,
        clock,
        encoders: o.encoders ?? rig.encoders,
        ...(wiring ? { wiring } : {}),
        watchdogMs: o.watchdogMs ?? rig.link.watchdogMs,
        handshakeMs: o.handshakeMs ?? rig.link.handshakeMs,
        bootloaderMs: await bootloaderMs(end, o),
        ...(o.answerMs !== undefined ? { answerMs: o.answerMs } : {}),
      });
      const link = board;
      return { board, link, boardWatchdog: () => true };
    },
  },
  firmata: {
    label: 'Firmata (johnny-five)',
    mockName: 'the Firmata mock rig',
    parts: MOCK_PARTS.firmata,
    async mock(rig, clock, wiring) {
      const [{ createFirmataMock }, { clearFirmataSysexHandlers }] = await Promise.all([
        import('../mock/firmata-mock.js'),
        import('../transport/firmata-link.js'),
      ]);
      const mock = createFirmataMock(rig, clock, wiring ? { wiring } : {});
      const dispose = (): void => {
        mock.dispose();
        clearFirmataSysexHandlers();
      };
      return { mock, site: firmataMockSite('the Firmata mock rig', mock.plant, mock.board, () => mock.unplug()), dispose };
    },
    async link(rig, end, clock, o) {
      if (o.encoders)
        throw new Error(`${rig.file}: a Firmata link takes the rig file's encoders (the board's own are a line-protocol handshake)`);
      const { createFirmataLink } = await import('../transport/firmata-link.js');
      const board = createFirmataLink(rig, end.stream, end.name, clock, {
        baudRate: end.baudRate,
        ...(o.handshakeMs !== undefined ? { handshakeMs: o.handshakeMs } : {}),
        bootloaderMs: await bootloaderMs(end, o),
        ...(o.answerMs !== undefined ? { answerMs: o.answerMs } : {}),
      });
      return { board, link: board, boardWatchdog: () => board.hasBoardWatchdog };
    },
  },
};

/** The transport of a rig file. */
export function transportOf(rig: Pick<Rig, 'link'>): Transport {
  return TRANSPORTS[rig.link.transport];
}

/** Opens the far end of the cable: the mock of the rig file's protocol (here or in its own thread), or a serial port. */
export async function openEnd(rig: Rig, place: Place, clock: Clock): Promise<BoardEnd> {
  const tr = transportOf(rig);
  const adapter = rig.plant?.adapter.kind ?? '16u2';
  if (place.kind === 'port') {
    const baudRate = place.baudRate ?? rig.link.baudRate;
    const [{ openSerial }, { adapterName, bootloaderBaudRefusal }] = await Promise.all([
      import('../transport/open.js'),
      import('../config/cable.js'),
    ]);
    // Every command refuses this first (exit 2); here for any other caller: the board would leave its sketch.
    const bootloader = bootloaderBaudRefusal(rig.cable, baudRate);
    if (bootloader) throw new (await import('../transport/link.js')).LinkError(`${place.path}: ${bootloader}`, 'config');
    const opened = await openSerial(place.path, baudRate, {
      serial: place.serial ?? rig.link.serial ?? 'auto',
      rt: place.rt ?? false,
      adapter: rig.cable.adapter,
    });
    const cable = adapterName(rig.cable.adapter, rig.cable.latencyMs);
    const resetOnOpen = (await import('../transport/dtr.js')).openResetBoard(opened.dtr, rig.cable.adapter);
    return {
      stream: opened.stream,
      name: place.path,
      baudRate,
      describe: `${tr.label} on ${place.path} at ${baudRate} baud, serial: ${opened.describe}, cable: ${cable} (rig file)`,
      resetOnOpen,
      dispose: async () => undefined,
    };
  }
  const baudRate = rig.link.baudRate;
  if (place.kind === 'mock-thread') {
    const { startRemoteMock } = await import('../mock/mock-remote.js');
    const remote = await startRemoteMock(rig, place.wiring);
    const stream = await remote.openStream(baudRate);
    const describe = `${tr.label} to the mock rig ${remote.path} (its own thread, ${adapter} adapter) at ${baudRate} baud`;
    return { stream, name: remote.path, baudRate, describe, remote, dispose: async () => void (await remote.stop()) };
  }
  const { dispose, ...local } = await tr.mock(rig, clock, place.wiring);
  try {
    const stream = await local.mock.openStream();
    const time = clock instanceof VirtualClock ? 'virtual' : 'real';
    const describe = `${tr.label} to the mock rig ${local.mock.path} (this thread, ${time} time, ${adapter} adapter) at ${baudRate} baud`;
    return { stream, name: local.mock.path, baudRate, describe, local, dispose: async () => dispose() };
  } catch (e) {
    dispose();
    throw e;
  }
}

/** The line protocol's mock rig of an end opened on the mock in this thread; throws for a port, the mock's own thread or the Firmata mock. */
export function lineMockOf(end: Pick<BoardEnd, 'local' | 'describe'>): LineMock {
  const mock = end.local?.mock;
  if (!mock || 'motors' in mock) throw new Error(`not the line protocol's mock rig in this thread: ${end.describe}`);
  return mock;
}

/** The host's link of the rig file's protocol over an open end. */
export function linkOver(rig: Rig, end: LinkEnd, clock: Clock, o: LinkOptions = {}): Promise<ComposedLink> {
  return transportOf(rig).link(rig, end, clock, o);
}

/**
 * Opens the end at `place` and the host's link over it; the end is disposed of when the link cannot be
 * built. The link's options may be learnt from the end first (setup and doctor probe the board's own
 * encoders before the handshake).
 */
export async function openLinked(
  rig: Rig,
  place: Place,
  clock: Clock,
  o: LinkOptions | ((end: BoardEnd) => Promise<LinkOptions>) = {},
): Promise<ComposedLink & { end: BoardEnd }> {
  const end = await openEnd(rig, place, clock);
  try {
    return { ...(await linkOver(rig, end, clock, typeof o === 'function' ? await o(end) : o)), end };
  } catch (e) {
    await end.dispose();
    throw e;
  }
}

/** The clock of each time a composition can run in. */
interface Clocks {
  real: RealClock;
  virtual: VirtualClock;
}

/** Real or virtual time. */
export type TimeName = keyof Clocks;

export interface ComposeOptions {
  /** Virtual time (a VirtualClock `drive` moves) or real time. @default virtual for a mock in this thread, real otherwise */
  time?: TimeName;
  link?: LinkOptions;
  /** `drive` moves virtual time in fixed steps of this many seconds (a wait on something other than a timer, as setup's prompts) rather than from timer to timer. */
  stepS?: number;
}

/** A board composed: its end, the link to it, the clock (a VirtualClock in virtual time), and how to wait on it. */
export interface Composed<T extends TimeName = TimeName> extends ComposedLink {
  end: BoardEnd;
  clock: Clocks[T];
  time: T;
  describe: string;
  /** Resolves as `p` does, moving virtual time meanwhile (real time: `p` itself). */
  drive: <T>(p: Promise<T>) => Promise<T>;
  /** Closes the link (driven), then ends the mock. */
  close: () => Promise<void>;
}

/** A waiter that moves virtual time until a promise settles. */
export function driver(clock: Clock, stepS?: number): <T>(p: Promise<T>) => Promise<T> {
  if (!(clock instanceof VirtualClock)) return (p) => p;
  if (stepS !== undefined) return (p) => runUntilSettled(clock, p, { stepS, maxS: 3600, maxRealMs: 3_600_000 });
  return async (p) => {
    let done = false;
    p.then(
      () => (done = true),
      () => (done = true),
    );
    await advanceUntil(clock, () => done, 'virtual time');
    return p;
  };
}

/** Composes the board of `rig` at `place`: the end, the link, the clock (typed by `o.time`: virtual time's is a VirtualClock). */
export async function compose(rig: Rig, place: Place, o: ComposeOptions & { time: 'virtual' }): Promise<Composed<'virtual'>>;
export async function compose(rig: Rig, place: Place, o: ComposeOptions & { time: 'real' }): Promise<Composed<'real'>>;
export async function compose(rig: Rig, place: Place, o?: ComposeOptions): Promise<Composed>;
export async function compose(rig: Rig, place: Place, o: ComposeOptions = {}): Promise<Composed> {
  const time = o.time ?? (place.kind === 'mock' ? 'virtual' : 'real');
  if (time === 'virtual' && place.kind !== 'mock')
    throw new Error(`virtual time needs the mock in this thread, not ${place.kind === 'port' ? 'a serial port' : "the mock's own thread"}`);
  const clock = time === 'virtual' ? new VirtualClock() : new RealClock();
  const { end, ...link } = await openLinked(rig, place, clock, o.link);
  const drive = driver(clock, o.stepS);
  const close = async (): Promise<void> => {
    try {
      await drive(link.link.close());
    } finally {
      await end.dispose();
    }
  };
  return { ...link, end, clock, time, describe: end.describe, drive, close };
}

/**
 * A run, whoever runs it (the loop's worker thread, a virtual run, the bench, setup, tune, identify):
 * where the board is and the time it runs in, the mode (the mode table, modes.ts), the trajectories,
 * the injections and where the rows and events go. The callers differ only in their thread and clock.
 */
export interface RunSpec {
  rig: Rig;
  place: Place;
  time: TimeName;
  link?: LinkOptions;
  mode: ModeChoice;
  rateHz: number;
  feedforward: FeedforwardMode;
  paths: PathSpec[];
  cycle?: boolean;
  park?: boolean;
  maxSeconds?: number;
  predict?: boolean;
  /** Injections at loop times: into the mock (here or in its thread), or into `host`. */
  injections?: readonly Injection[];
  /** The host's own part for injections (the loop's thread: busy, throw), where the run has one. */
  host?: InjectionSite;
  /** Every sample's row (a reused buffer: copy it). */
  sink: (row: Float64Array) => void;
  /** Before the loop: what the loop runs on instead of the composed link (--reconnect's handshake and re-zero, run/resume-gate.ts). */
  gate?: (link: Link) => Promise<Link>;
  onEvent?: RunOptions['onEvent'];
  /** After every sample, once the injections due are applied. */
  onTick?: RunOptions['onTick'];
  onReady?: RunOptions['onReady'];
  signal?: AbortSignal;
}

/** What `run()` returns: the loop's result and the injections not applied (the run ended first). */
export type RunOutcome = RunResult & { unapplied: Injection[] };

/** A run composed: its board, its law, the loop to run (once), and one close. */
export interface Run {
  composed: Composed;
  law: ModeLaw;
  /** Runs the loop to its end; in virtual time, moving the clock meanwhile. */
  run(): Promise<RunOutcome>;
  /** Ends the law (a controller's thread) and the mock; resolves with the mock thread's account of its timing, if it had one. Once. */
  close(): Promise<MockThreadStats | undefined>;
}

/** Composes the run of `plan`: the law first (nothing to dispose of when it fails), then the board. */
export async function composeRun(plan: RunSpec): Promise<Run> {
  const { rig, place, time } = plan;
  const law = await modeLaw(plan.mode, { rig, rateHz: plan.rateHz, time, mock: place.kind !== 'port' });
  let composed: Composed;
  try {
    composed = await compose(rig, place, { time, ...(plan.link ? { link: plan.link } : {}) });
  } catch (e) {
    await law.close();
    throw e;
  }
  let closing: Promise<MockThreadStats | undefined> | undefined;
  const close = async (): Promise<MockThreadStats | undefined> => {
    await law.close().catch(() => undefined);
    const remote = composed.end.remote;
    if (remote) return remote.stop();
    await composed.end.dispose();
    return undefined;
  };
  return { composed, law, run: () => runComposed(plan, composed, law), close: () => (closing ??= close()) };
}

/** The loop over a composed board: `runLoop`'s one call in src (tests/architecture.test.ts). */
async function runComposed(plan: RunSpec, c: Composed, law: ModeLaw): Promise<RunOutcome> {
  const { end } = c;
  const inject = injectionSchedule(plan.injections ?? [], (i) => {
    if (actsOn(i.name) === 'host') {
      if (plan.host) applyInjection(plan.host, i);
    } else if (end.remote) end.remote.inject(i);
    else if (end.local) applyInjection(end.local.site, i);
  });
  const remote = end.remote;
  const link = plan.gate ? await c.drive(plan.gate(c.link)) : c.link;
  const result = await c.drive(
    runLoop({
      rig: plan.rig,
      link,
      clock: c.clock,
      rateHz: plan.rateHz,
      feedforward: plan.feedforward,
      paths: plan.paths,
      ...(plan.cycle !== undefined ? { cycle: plan.cycle } : {}),
      ...(plan.park !== undefined ? { park: plan.park } : {}),
      ...(plan.maxSeconds !== undefined ? { maxSeconds: plan.maxSeconds } : {}),
      boardWatchdog: c.boardWatchdog, // asked after the handshake
      ...(remote ? { boardSilentS: () => remote.silentS() } : {}),
      ...(law.law ? { law: law.law } : {}),
      ...(plan.predict !== undefined ? { predict: plan.predict } : {}),
      sink: plan.sink,
      ...(plan.onEvent ? { onEvent: plan.onEvent } : {}),
      onTick: (core) => {
        inject(core.row[F.t]!);
        plan.onTick?.(core);
      },
      ...(plan.onReady ? { onReady: plan.onReady } : {}),
      ...(plan.signal ? { signal: plan.signal } : {}),
    }),
  );
  return { ...result, unapplied: inject.pending };
}
