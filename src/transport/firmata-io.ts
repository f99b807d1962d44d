/**
 * What FirmataLink puts between johnny-five and the serial stream, and its messages: the transport
 * firmata.js writes to (it counts bytes and knows when they reach the board), the handshake error that
 * says what came back, and small waiting helpers on the link's clock.
 */
import { bootloaderWaitText } from './dtr.js';
import { EventEmitter } from 'node:events';
import { createRequire } from 'node:module';
import type { Duplex } from 'node:stream';
import type { HostWiring } from '../config/wiring.js';
import type { EncoderParams, Rig } from '../config/load.js';
import { FIRMATA, MODE, wireTime } from '../protocol/firmata.js';
import type { Clock, TimerHandle } from '../time/clock.js';
import { johnnyFive, type FiveBoard, type FirmataIO } from './johnny-five.js';
import { LinkError, type LinkCounters } from './link.js';

/** A rig file's `firmata` section. */
export type FirmataConfig = NonNullable<Rig['firmata']>;

export interface FirmataLinkOptions {
  /** The open serial stream (SerialPort, SerialPortStream). */
  stream: Duplex;
  /** Port path or label, for messages. */
  name: string;
  /** Baud rate the stream is set to (for messages, wire timing and the sampling interval). */
  baudRate: number;
  clock: Clock;
  /** The pins: motors and sensors per board output and input (per joint without a `wiring`), the board's pin set. */
  firmata: FirmataConfig;
  /** The rig's encoders (counts per revolution, sign, zero) for the encoder joints. */
  encoders: EncoderParams[];
  /** The rig file's wiring section, when joint j is not driven and read on firmata.motors[j] and sensors[j] (transport/joints.ts). */
  wiring?: HostWiring;
  /** How long johnny-five may take to reach `ready` [ms] (its `timeout` option). */
  handshakeMs: number;
  /** Opening the port reset the board (transport/dtr.ts): the handshake says it waits for the bootloader, and waits this much longer [ms]. @default 0 */
  bootloaderMs?: number;
  /**
   * The longest the motors may run without a new command [ms] (the rig's link.watchdogMs): armed on the
   * board's FirmataWatchdog when it has one, enforced by the link otherwise. @default 100
   */
  watchdogMs?: number;
  /** Time to wait for an answer (encoder attach, pin state) [ms]. @default 500 */
  answerMs?: number;
  /** Fraction of the baud rate the reports may use when the interval is chosen automatically. @default 0.8 */
  load?: number;
}

/**
 * What firmata.js needs of a transport (`write`, and `data`/`close`/`error` events), in front of our
 * stream: it counts the bytes and messages and lets the link stop forwarding when it closes.
 */
export class Transport extends EventEmitter {
  detached = false;
  /** When the last byte written so far will have reached the board [s, link clock], at the baud rate. */
  arrivesAt = 0;
  /** Host time of the last write [s, link clock], or -Infinity. */
  lastWriteAt = -Infinity;
  constructor(
    readonly path: string,
    private readonly stream: Duplex,
    private readonly counters: LinkCounters,
    private readonly clock: Clock,
    private readonly baudRate: number,
  ) {
    super();
  }
  write(data: Buffer, cb?: (err?: Error | null) => void): boolean {
    if (this.detached || this.stream.destroyed) {
      cb?.(null);
      return false;
    }
    const now = this.clock.now();
    this.counters.sent++;
    this.counters.bytesOut += data.length;
    this.lastWriteAt = now;
    this.arrivesAt = Math.max(now, this.arrivesAt) + wireTime(data.length, this.baudRate);
    return this.stream.write(data, cb);
  }
}

export function describe(e: unknown): string {
  if (e instanceof Error) return e.message;
  if (e && typeof e === 'object' && 'message' in e) return String(e.message);
  return String(e);
}

/** Why johnny-five did not reach `ready`, from what came back. */
export function handshakeError(
  name: string,
  e: unknown,
  io: FirmataIO | undefined,
  bytesIn: number,
  o: { handshakeMs: number; bootloaderMs?: number; baudRate: number },
): LinkError {
  let hint: string;
  if (bytesIn === 0) hint = 'nothing at all came back: is the board connected and powered, and is this its port?';
  // ConfigurableFirmata reports protocol 2.x (ConfigurableFirmata.h: FIRMATA_PROTOCOL_MAJOR_VERSION 2):
  // another major is a REPORT_VERSION byte made up by a wrong baud rate, not a version.
  else if (!io?.versionReceived || io.version?.major !== 2) {
    hint =
      `${bytesIn} bytes came back but no Firmata version: wrong baud rate (ConfigurableFirmata runs at 57600 unless rebuilt: set link.baudRate), ` +
      'or the board runs other firmware (twolink\'s own? set "link": {"transport": "line"})';
  } else if (!io.firmware?.name)
    // A wrong baud rate turns the board's stream into random bytes, and among enough of them a
    // REPORT_VERSION 2.x turns up by chance (the unit test met one on Node 22 in a loaded CI trial of
    // 2026-12-07; 0 in 80 runs quiet): a version alone does not clear the baud rate.
    hint =
      `the board sent a Firmata version but never its firmware name (${bytesIn} bytes came back): a wrong baud rate can make a version up ` +
      'from noise (ConfigurableFirmata runs at 57600 unless rebuilt: set link.baudRate), or the firmware does not answer the name query';
  else hint = `${io.firmware.name} answered but did not finish the capability and analog mapping queries`;
  const why = describe(e).split('\n')[0]!.trim();
  const within = o.bootloaderMs
    ? `${o.handshakeMs} ms + ${o.bootloaderMs} ms for the bootloader (opening the port reset the board)`
    : `${o.handshakeMs} ms`;
  return new LinkError(`${name}: no Firmata handshake within ${within} at ${o.baudRate} baud (johnny-five: ${why}): ${hint}`, 'no-answer');
}

/** Resolves with the first of `a` and `b`, or 'timeout' after `ms` on `clock`. */
export function race<A, B>(clock: Clock, a: Promise<A>, b: Promise<B>, ms: number): Promise<A | B | 'timeout'> {
  return new Promise((resolve) => {
    const timer: TimerHandle = clock.setTimer(ms / 1000, () => done('timeout'));
    const done = (v: A | B | 'timeout'): void => {
      clock.clearTimer(timer);
      resolve(v);
    };
    a.then(done, () => done('timeout'));
    b.then(done, () => done('timeout'));
  });
}

/** A list of one-shot waiters for values of type T. */
export class Waiters<T> {
  private list: ((v: T) => boolean)[] = [];
  /** The next value that passes `accept`; `cancel` forgets the wait. */
  next(accept: (v: T) => boolean = () => true): { promise: Promise<T>; cancel: () => void } {
    let fn: ((v: T) => boolean) | undefined;
    const promise = new Promise<T>((resolve) => {
      fn = (v) => {
        if (!accept(v)) return false;
        resolve(v);
        return true;
      };
      this.list.push(fn);
    });
    return { promise, cancel: () => (this.list = this.list.filter((w) => w !== fn)) };
  }
  /** Hands `v` to the waiters; the ones it satisfied are removed. */
  emit(v: T): void {
    this.list = this.list.filter((w) => !w(v));
  }
}

/**
 * Removes a handler for ENCODER_DATA from firmata.js's static sysex table (shared by every Firmata
 * instance in the process). twolink reads the encoder replies off the stream itself and registers none;
 * older twolink versions, or other code, may have left one.
 */
export function clearFirmataSysexHandlers(): void {
  const Firmata = createRequire(import.meta.url)('firmata') as { SYSEX_RESPONSE?: Record<number, unknown> };
  if (Firmata.SYSEX_RESPONSE) delete Firmata.SYSEX_RESPONSE[FIRMATA.ENCODER_DATA];
}

/**
 * Starts johnny-five's Board on the transport. Its 'error' events (a handshake timeout, later IO
 * errors) all go to `on.error`, for the board's lifetime, so none is ever unhandled. A board that did
 * not reset when the port opened (a pty, a Leonardo, a Mega with its reset cut) has already said who
 * it is: the version and firmware are asked for again, once now and once more if it stays silent.
 */
export function startBoard(
  transport: Transport,
  clock: Clock,
  t: BoardStart,
  on: { handshaking: () => boolean; ready: () => void; error: (e: unknown) => void },
): FiveBoard {
  const { handshakeMs, bootloaderMs = 0 } = t;
  const board = new (johnnyFive().Board)({
    port: transport,
    repl: false,
    debug: false,
    sigint: false,
    timeout: handshakeMs + bootloaderMs,
  });
  board.on('error', on.error);
  board.once('ready', () => {
    if (on.handshaking()) on.ready();
  });
  const ask = (): void => {
    if (!board.io.versionReceived && on.handshaking()) {
      board.io.reportVersion(() => {});
      board.io.queryFirmware(() => {});
    }
  };
  ask();
  const again = clock.setTimer(Math.min(2, handshakeMs / 2000), ask);
  board.once('ready', () => clock.clearTimer(again));
  // A board the open reset says nothing until its bootloader is done (dtr.ts): once half a second has passed in silence, say so.
  if (bootloaderMs > 0) {
    const wait = clock.setTimer(0.5, () => {
      if (on.handshaking() && t.silent()) t.say(bootloaderWaitText(t.name, handshakeMs + bootloaderMs - 500));
    });
    board.once('ready', () => clock.clearTimer(wait));
  }
  return board;
}

/** How a handshake starts: johnny-five's time for it, and the bootloader's (then `say` is told once if the board stays `silent`). */
export interface BoardStart {
  name: string;
  handshakeMs: number;
  bootloaderMs?: number;
  silent: () => boolean;
  say: (text: string) => void;
}

/** Asks the board for a pin's mode and state; undefined when no answer came within `ms`. */
export function queryPinState(io: FirmataIO, clock: Clock, pin: number, ms: number): Promise<{ mode: number; state: number } | undefined> {
  return new Promise((resolve) => {
    const event = `pin-state-${pin}`;
    const onState = (): void => {
      clock.clearTimer(timer);
      const p = io.pins[pin];
      resolve(p ? { mode: p.mode ?? -1, state: p.state ?? 0 } : undefined);
    };
    const timer = clock.setTimer(ms / 1000, () => {
      io.removeListener(event, onState);
      resolve(undefined);
    });
    io.queryPinState(pin, onState);
  });
}

/**
 * Reads the motors' PWM pins back: all in PWM mode at `want(j)`? firmata.js gives an answer to every
 * waiting query of a pin, maybe one sent before the command (a probe in a stall): ask again till `ms`
 * is over or the link is no longer `open`.
 */
export async function readPinsBack(
  clock: Clock,
  motors: readonly { pwm: number }[],
  pinState: (pin: number, ms: number) => Promise<{ mode: number; state: number } | undefined>,
  want: (j: number) => number,
  ms: number,
  open: () => boolean,
): Promise<boolean> {
  const end = clock.now() + ms / 1000;
  for (;;) {
    const left = (end - clock.now()) * 1000;
    const states = await Promise.all(motors.map((p) => pinState(p.pwm, left)));
    if (states.some((s) => s === undefined)) return false;
    if (states.every((s, j) => s!.mode === MODE.PWM && s!.state === want(j))) return true;
    if (clock.now() >= end || !open()) return false;
  }
}
