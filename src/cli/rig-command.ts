/**
 * `twolink rig`: the mock rig in a process of its own, in real time, on a pseudo-terminal (created
 * with socat; its path is the first stdout line) or on a given serial device. The host then opens that
 * path as it would a board: `twolink run --rig F --port /dev/pts/N`.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { SerialPort } from 'serialport';
import { loadRig, type Rig } from '../config/load.js';
import {
  firmataMockSite,
  formatInjection,
  injectFromHandshake,
  MOCK_PARTS,
  applyInjection,
  refusalIn,
  type Injection,
  type ScheduledInjections,
} from '../mock/injections.js';
import type { ScheduleListener } from '../mock/mock-remote.js';
import { createPtyPair, type PtyPair } from '../mock/pty.js';
import { mockReportLine, type MockReport } from '../mock/mock-report.js';
import { starvedLine, watchStarvation } from '../mock/starvation.js';
import { RealClock } from '../time/clock.js';
import type { MockWiring } from '../mock/wiring.js';
import { formatHelp, noPositionals, parse, stringArg, UsageError, type OptionSpecs } from './args.js';
import { FAULT_ALIAS_OPTION, INJECT_OPTION, injectArgs, injectionNames } from './inject-arg.js';
import { WIRING_OPTION, wiringArg, wiringHelp } from './wiring-arg.js';

const OPTIONS = {
  rig: { type: 'string', arg: 'FILE', help: 'rig file with a plant section (rigs/mock-arm.json, rigs/mock-arm-firmata.json)' },
  pty: { type: 'boolean', help: 'create a pty pair with socat; print the host end as the first stdout line' },
  report: {
    type: 'boolean',
    help: 'for a program that drives the rig: stdout carries JSON lines ({"kind":"pty","host"}, {"kind":"refused","injection","why"}, {"kind":"serving","board"}, {"kind":"handshake","monoMs"} at the first handshake of a host, {"kind":"injected","injection","at","plantS","wallS"} (times from the handshake), and on the Firmata mock {"kind":"motors","zero","monoMs"} when its motors stop or start: monoMs on the machine\'s monotonic clock) instead of the path alone; with --firmware, {"kind":"pty","host"} {"kind":"serving","board"} {"kind":"handshake","monoMs"} {"kind":"injected",...} (plantS: board time) and at the end {"kind":"firmware-end"} with the board time, the lag and the encoder pins vs the plant; the line mock ends with {"kind":"mock-end"}, its timers\' lateness (src/mock/mock-report.ts)',
  },
  port: { type: 'string', arg: 'PATH', help: 'serve on this existing serial device instead' },
  rt: {
    type: 'boolean',
    help: 'real-time scheduling (SCHED_FIFO) for the simulated board, its plant and socat, as for the host: the default (a board never starves; a simulated one on a busy machine does); needs an rtprio limit or CAP_SYS_NICE, else the rig says so and serves anyway',
  },
  'no-rt': { type: 'boolean', help: 'do not ask for real-time scheduling' },
  inject: {
    ...INJECT_OPTION,
    help: "inject a test knob into the rig when its simulated arm's time (with --firmware, the board's) reaches T seconds from the host's handshake: the first request for the board's identity it answers (the line protocol's H, Firmata's REPORT_VERSION or REPORT_FIRMWARE query), not its start, so a host that connects late meets it T into its session; none before a host (see twolink run --help)",
  },
  fault: FAULT_ALIAS_OPTION,
  firmware: {
    type: 'boolean',
    help: 'with --pty: our firmware (firmware-protocol/firmware) in simavr instead of the mock board, closing the loop with the same plant',
  },
  board: {
    type: 'string',
    arg: 'uno|mega|uno-firmata',
    help: 'with --firmware: the board to simulate (default uno); uno-firmata: an Uno wired as docs/firmata.md suggests, for a stock Firmata image given with --elf',
  },
  elf: {
    type: 'string',
    arg: 'FILE',
    help: 'with --firmware: run this firmware image instead of ours (e.g. the stock ConfigurableFirmata image that firmware-protocol/firmata-watchdog/build-stock.sh builds, with --board uno-firmata)',
  },
  wiring: WIRING_OPTION,
  help: { type: 'boolean', short: 'h', help: 'this help' },
} as const satisfies OptionSpecs;

/** `--firmware`: our firmware in simavr on a pty, closing the loop with the rig's plant. */
async function serveFirmware(
  rig: Rig,
  v: { firmware?: boolean; pty?: boolean; board?: string; elf?: string; 'no-rt'?: boolean; report?: boolean },
  injections: Injection[],
  signals: EarlySignals,
): Promise<number> {
  if (!v.firmware) throw new UsageError(`${v.elf !== undefined ? '--elf' : '--board'} goes with --firmware`);
  if (!v.pty) throw new UsageError('--firmware needs --pty: the simulated board makes its own pseudo-terminal');
  const board = v.board ?? 'uno';
  if (board !== 'uno' && board !== 'mega' && board !== 'uno-firmata')
    throw new UsageError(`--board: "${board}" is not a board: uno, mega or uno-firmata`);
  if (board === 'uno-firmata' && v.elf === undefined)
    throw new UsageError(
      '--board uno-firmata is for a stock Firmata image: give it with --elf FILE (firmware-protocol/firmata-watchdog/build-stock.sh builds one)',
    );
  // The image speaks one protocol; the rig file says which the host will speak to it.
  const speaks = board === 'uno-firmata' ? 'firmata' : 'line';
  if (rig.link.transport !== speaks) {
    throw new UsageError(
      speaks === 'line'
        ? `--firmware --board ${board}: ${rig.file} is a Firmata rig file ("link.transport": "firmata"), and our firmware speaks twolink's line protocol: give a line-protocol rig file (rigs/mock-arm.json), or --board uno-firmata --elf FILE for a stock Firmata image`
        : `--board uno-firmata: ${rig.file} is a line-protocol rig file, and a stock Firmata image speaks Firmata: give a Firmata rig file (rigs/mock-arm-firmata.json with an Uno's pins)`,
    );
  }
  if (v.elf !== undefined && !existsSync(v.elf)) throw new UsageError(`--elf: no firmware image at ${v.elf}`);
  const { serveFirmwareMock } = await import('../mock/firmware-mock.js');
  const { FirmwareSimError } = await import('../mock/firmware-sim.js');
  if (signals.came) return 0; // nothing started yet
  // From here the firmware rig's own handlers pass the signals on to its process (serveFirmwareMock).
  signals.release();
  try {
    return endProcess(
      await serveFirmwareMock(rig, {
        board,
        ...(v.elf !== undefined ? { elf: resolve(v.elf) } : {}),
        injections,
        rt: v['no-rt'] !== true,
        log: (l) => process.stderr.write(`${l}\n`),
        out: (l) => process.stdout.write(`${l}\n`),
        ...(v.report ? { report: (r: MockReport) => process.stdout.write(mockReportLine(r)) } : {}),
      }),
    );
  } catch (e) {
    if (e instanceof FirmwareSimError) throw new UsageError(e.message);
    throw e;
  }
}

/** A mock board serving: how to stop it, how to start its injections, the Linux task id of its thread. */
interface Serving {
  stop: () => Promise<void>;
  /**
   * Starts `injections` on the simulated arm's time (injectFromHandshake), counted from the host's first
   * handshake the board answers (not from serving: a busy machine may hold the host past an injection's
   * time); resolves once they wait for it (on the board's thread), and the rig then says it serves.
   * `on.handshake` hears the handshake, `on.applied` each injection, with the arm's time and the wall's since it [s].
   */
  schedule: (injections: readonly Injection[], on: ScheduleListener) => Promise<void>;
  boardTid: number;
}

/**
 * The line-protocol mock rig behind `port`. The board is another computer: the mock rig runs in a
 * thread of its own, on its own clock, and this thread only carries bytes between the port and it.
 * Its injections are applied there, on its arm's time (mock-thread.ts).
 */
async function serveLineRemote(
  rig: Rig,
  wiring: MockWiring | undefined,
  port: SerialPort,
  report: (r: MockReport) => void,
): Promise<Serving> {
  const { startRemoteMock } = await import('../mock/mock-remote.js');
  const mock = await startRemoteMock(rig, wiring, (ms, atS) => process.stderr.write(`${starvedLine(ms, atS)}\n`));
  const wire = await mock.openStream(rig.link.baudRate);
  port.on('data', (d: Buffer) => wire.write(d));
  // A host that does not read (none has the port open, or it was killed): what the board sends is
  // dropped once 4 kB wait here, as a USB-serial adapter drops what the host does not fetch; without
  // the bound the board's stream piled up in this process for the next session to wade through.
  let dropped = 0;
  wire.on('data', (d: Buffer) => {
    if (port.writableLength < 4096) {
      if (dropped > 0) process.stderr.write(`twolink rig: the host reads again; ${dropped} bytes the board sent meanwhile were dropped\n`);
      dropped = 0;
      port.write(d);
    } else dropped += d.length;
  });
  const stop = async (): Promise<void> => {
    const st = await mock.stop();
    if (st) {
      report({ kind: 'mock-end', samples: st.samples, maxLateMs: st.maxLateMs, lateTimers: st.lateTimers });
      process.stderr.write(
        `twolink rig: the board's thread took ${st.samples} samples; its timers ran up to ${st.maxLateMs.toFixed(2)} ms late (${st.lateTimers} more than 0.5 ms late${st.lateTimers > 0 ? ': the rig was starved by a busy machine, not the host' : ''}); CPU ${(100 * st.cpu).toFixed(1)} % of a core; worst at ${st.worstAt.toFixed(2)} s; GC ${st.stalls.gcCount} pauses, max ${st.stalls.gcMaxMs} ms; event-loop delay max ${st.stalls.loopDelayMaxMs} ms\n`,
      );
    }
  };
  return { stop, schedule: (list, on) => mock.schedule(list, on), boardTid: mock.tid };
}

/**
 * The Firmata mock rig behind `port`, on this thread's timers (this thread starving is the board
 * starving); its injections on its arm's time, that of the board's clock.
 */
async function serveFirmataHere(
  rig: Rig,
  wiring: MockWiring | undefined,
  port: SerialPort,
  onMotors?: (zero: boolean) => void,
): Promise<Serving> {
  const { serveFirmataMock } = await import('../mock/firmata-mock.js');
  const clock = new RealClock();
  const s = serveFirmataMock(rig, port, clock, wiring ? { wiring } : {});
  if (onMotors) {
    // Edges only: all motors stopped, or not (a run's every write would be thousands of lines).
    let zero = true;
    s.board.onDuty = (duty) => {
      const z = duty.every((d) => d === 0);
      if (z !== zero) onMotors((zero = z));
    };
  }
  const unwatch = watchStarvation((ms, atS) => process.stderr.write(`${starvedLine(ms, atS)}\n`));
  const site = firmataMockSite('the pty rig', s.plant, s.board, () => port.close());
  let injecting: ScheduledInjections | undefined;
  return {
    stop: async () => {
      injecting?.stop();
      unwatch();
      s.stop();
    },
    schedule: async (list, on) => {
      injecting?.stop();
      let zero = clock.now();
      const apply = (i: Injection, t: number): void => {
        const r = applyInjection(site, i);
        if (r.ok)
          on.applied(i, t, clock.now() - zero); // (a RealClock: the wall's time)
        else process.stderr.write(`twolink rig: ${r.why}\n`);
      };
      const hook = (fn: (() => void) | undefined): void => void (s.board.onIdentify = fn);
      injecting = injectFromHandshake(clock, s.plant, list, hook, apply, () => {
        zero = clock.now();
        on.handshake(Number(process.hrtime.bigint()) / 1e6);
      });
    },
    boardTid: (await import('../time/threads.js')).threadId(), // the Firmata board runs on this thread
  };
}

/**
 * --rt (the default): the rig's whole path at real-time priority, as the host's loop is: the board's
 * thread (`boardTid`, 45: the board is another computer and never waits for the host), this process's
 * other threads (the bridge, its I/O and GC helpers) and socat (the pty pair's relay), 44.
 */
async function rigRealtime(boardTid: number, pty: PtyPair | undefined): Promise<void> {
  const { noRealtimeLine, requestRealtime, requestRealtimeProcess, threadId } = await import('../time/threads.js');
  const main = threadId();
  const a = await requestRealtimeProcess(44, new Map([[boardTid, 45]]));
  const b = a.granted ? await requestRealtime(main, main === boardTid ? 45 : 44) : a;
  const c = b.granted && pty?.process.pid ? await requestRealtime(pty.process.pid, 44) : b;
  process.stderr.write(
    c.granted
      ? 'twolink rig: real-time scheduling (SCHED_FIFO) for the board, the bridge and the pty relay\n'
      : `${noRealtimeLine('twolink rig', `refused: ${c.reason}`)}\n`,
  );
}

/** Serves until SIGINT/SIGTERM, the port's end or socat's; then the board, the port and socat are ended in that order. */
function serveUntilEnd(
  port: SerialPort,
  pty: PtyPair | undefined,
  stop: () => Promise<void>,
  boardPath: string,
  signals: EarlySignals,
): Promise<number> {
  return new Promise((resolve) => {
    let quitting = false;
    const quit = (code: number): void => {
      if (quitting) return;
      quitting = true;
      void stop()
        .catch(
          (e: unknown) =>
            void process.stderr.write(
              `twolink rig: stopping the simulated board failed (${e instanceof Error ? e.message : String(e)}); ending\n`,
            ),
        )
        .then(() => new Promise<void>((r) => (port.isOpen ? port.close(() => r()) : r())))
        .then(() => pty?.close())
        .then(() => resolve(code));
    };
    // A read cancelled or a descriptor gone when the pty's other end goes (socat ended by the same
    // Ctrl-C, or by the close above): the end of serving, not a crash.
    // On a pty, only the relay's end fails our end (whether its exit or this error is seen first): exit 0.
    port.on('error', (e: Error) => {
      if (!quitting)
        process.stderr.write(
          `twolink rig: ${boardPath}: ${e.message}: ${pty ? "the pty's relay (socat) ended" : 'the device failed'}; ending\n`,
        );
      quit(quitting || pty ? 0 : 1);
    });
    signals.then(() => quit(0));
    port.on('close', () => quit(0));
    pty?.process.on('exit', () => quit(0));
  });
}

/** The signals that end the rig (a terminal's Ctrl-C, a kill, the terminal closed). */
const END_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/**
 * SIGINT, SIGTERM and SIGHUP from the moment the command starts, before anything is spawned: whenever
 * one comes, the rig ends what it started (socat, the simulator) and exits 0, rather than dying of the
 * signal with them left to the kernel's parent-death signal (tied.ts: Linux only, and only where
 * setpriv is). `on`, not `once`: a second signal (Ctrl-C twice) does not kill it half-way either.
 */
interface EarlySignals {
  /** Whether a signal has come. */
  readonly came: boolean;
  /** Calls `fn` at the first signal (at once if one came already). */
  then(fn: () => void): void;
  /** Takes the handlers off (another part handles the signals from here: --firmware's process). */
  release(): void;
}

function catchSignals(): EarlySignals {
  let came = false;
  const waiting: (() => void)[] = [];
  const hit = (): void => {
    if (came) return;
    came = true;
    for (const fn of waiting.splice(0)) fn();
  };
  for (const sig of END_SIGNALS) process.on(sig, hit);
  return {
    get came() {
      return came;
    },
    then: (fn) => {
      if (came) fn();
      else waiting.push(fn);
    },
    release: () => {
      for (const sig of END_SIGNALS) process.off(sig, hit);
    },
  };
}

export async function rigCommand(argv: readonly string[]): Promise<number> {
  const signals = catchSignals();
  const { values: v, positionals } = parse(argv, OPTIONS, 'rig');
  if (v.help) {
    process.stdout.write(
      formatHelp(
        'rig',
        'the mock rig (a simulated arm that speaks the board protocol) on a serial device, in real time',
        'rig --rig F (--pty | --port PATH) [--inject NAME[=V][@T]]...   |   rig --rig F --firmware [--board uno|mega] --pty   |   rig --rig F --firmware --board uno-firmata --elf FILE --pty',
        OPTIONS,
        `Example:\n  twolink rig --rig rigs/mock-arm.json --pty        # prints e.g. /dev/pts/5\n  twolink run --rig rigs/mock-arm.json --port /dev/pts/5 --traj reach --json\n\nInjections: ${injectionNames()} (twolink run --help says what each does)\n\n${wiringHelp()}`,
      ),
    );
    return 0;
  }
  noPositionals(positionals, 'rig', 'give the rig file with --rig');
  const rig = loadRig(stringArg(v.rig, 'rig', 'a rig file with a plant section, e.g. --rig rigs/mock-arm.json'));
  if (!rig.plant) throw new UsageError(`${rig.file} has no "plant" section: the mock rig needs the true arm to simulate`);
  if (!!v.pty === (typeof v.port === 'string')) throw new UsageError('give exactly one of --pty and --port PATH');
  const wiring = wiringArg(v.wiring, rig.joints, true);
  const injections = injectArgs(v, rig.joints);
  if (v.firmware || v.board !== undefined || v.elf !== undefined) {
    if (wiring)
      throw new UsageError('--wiring miswires the mock board: with --firmware the board is the firmware, wired as its image says');
    return endProcess(await serveFirmware(rig, v, injections, signals));
  }
  const report = (r: MockReport): void => {
    if (v.report) process.stdout.write(mockReportLine(r));
  };
  const usable = injections.filter((i) => {
    // Said on stderr for people, and (--report) on stdout for a program; the rig serves on.
    const why = refusalIn(MOCK_PARTS[rig.link.transport], 'the pty rig', i.name);
    if (why) {
      process.stderr.write(`twolink rig: injection ${i.name} is not available on the pty rig: ${why}\n`);
      report({ kind: 'refused', injection: i.name, why });
    }
    return !why;
  });
  let pty: PtyPair | undefined;
  let boardPath: string;
  if (v.pty) {
    // A signal while socat starts ends it (createPtyPair), then this process.
    const abort = new AbortController();
    signals.then(() => abort.abort());
    try {
      pty = await createPtyPair(5000, abort.signal);
    } catch (e) {
      if (signals.came) return endProcess(0);
      throw e;
    }
    boardPath = pty.paths[0];
    if (v.report) report({ kind: 'pty', host: pty.paths[1] });
    else process.stdout.write(`${pty.paths[1]}\n`);
  } else {
    boardPath = stringArg(v.port, 'port', 'a serial port path');
  }
  let served: { port: SerialPort; stop: () => Promise<void> };
  try {
    served = await setUp(rig, v, { boardPath, pty, wiring, usable, report });
  } catch (e) {
    // Nothing it started outlives it: socat ended before the error is said.
    await pty?.close();
    throw e;
  }
  return endProcess(await serveUntilEnd(served.port, pty, served.stop, boardPath, signals));
}

/** The board behind the open device, real-time priority, the injections; then the rig says it serves. */
async function setUp(
  rig: Rig,
  v: { report?: boolean; 'no-rt'?: boolean },
  o: { boardPath: string; pty: PtyPair | undefined; wiring: MockWiring | undefined; usable: Injection[]; report: (r: MockReport) => void },
): Promise<{ port: SerialPort; stop: () => Promise<void> }> {
  const { boardPath, pty, report } = o;
  const port = new SerialPort({ path: boardPath, baudRate: rig.link.baudRate, autoOpen: false });
  await new Promise<void>((resolve, reject) => port.open((e) => (e ? reject(new UsageError(`${boardPath}: ${e.message}`)) : resolve())));
  const motors = (zero: boolean): void => report({ kind: 'motors', zero, monoMs: Number(process.hrtime.bigint()) / 1e6 });
  const { stop, schedule, boardTid } = await (rig.link.transport === 'firmata'
    ? serveFirmataHere(rig, o.wiring, port, v.report ? motors : undefined)
    : serveLineRemote(rig, o.wiring, port, report));
  if (v['no-rt'] !== true) await rigRealtime(boardTid, pty);
  else process.stderr.write(`${(await import('../time/threads.js')).noRealtimeLine('twolink rig', 'not asked for: --no-rt')}\n`);
  // The injections (those it cannot take were named above), on the simulated arm's time from the host's handshake.
  await schedule(o.usable, {
    handshake: (monoMs) => {
      if (o.usable.length > 0) process.stderr.write(`twolink rig: the host's handshake came; the injections' times count from here\n`);
      report({ kind: 'handshake', monoMs });
    },
    applied: (i, plantS, wallS) => {
      process.stderr.write(
        `twolink rig: injected ${formatInjection(i)} at the arm's time ${plantS.toFixed(4)} s from the host's handshake (the wall's ${wallS.toFixed(4)} s)\n`,
      );
      report({ kind: 'injected', injection: formatInjection(i), at: i.at, plantS, wallS });
    },
  });
  process.stderr.write(
    `twolink rig: ${rig.name} (${rig.link.transport} protocol, ${rig.link.baudRate} baud, ${rig.plant!.adapter.kind} adapter) serving on ${boardPath}${pty ? `; the host opens ${pty.paths[1]}` : ''}\n`,
  );
  report({ kind: 'serving', board: boardPath });
  return { port, stop };
}

/**
 * Ends this process with `code` once the rig has stopped, with its signal handlers still in place. Not
 * node's natural exit: that closes the handlers before the process ends, and a signal in that window
 * (a second Ctrl-C, a SIGTERM on top of a Ctrl-C) killed a rig that had stopped cleanly (exit by
 * SIGINT; measured: 20 of 20 node processes sent SIGINT in a loop as they ended naturally died of it,
 * 0 of 20 that ended with process.exit). stdout and stderr are written synchronously here (Linux:
 * pipes, files and terminals), so nothing said is lost.
 */
function endProcess(code: number): never {
  process.exit(code);
}
