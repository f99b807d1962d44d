/**
 * The Link over stock Firmata firmware (ConfigurableFirmata with FirmataEncoder), driven by real,
 * unmodified johnny-five: a `Board` on a serialport stream that we opened (johnny-five never scans for
 * ports), a `Motor` per joint (threshold 0), the encoders through FirmataEncoder's sysex 0x61 with a
 * registered sysex handler, or a johnny-five `Sensor` per potentiometer joint.
 *
 * What Firmata lacks, and what this link does about it:
 * - no acknowledgements and no sequence numbers: a command's effect is confirmed by a pin state query
 *   (stop, enable, zero), and lost reports cannot be detected (`counters.lost` stays 0);
 *   `Reading.ack` is inferred from the wire timing instead: the newest command whose bytes had
 *   reached the board (at the baud rate, behind what was queued before them) when the report was taken;
 * - no board clock: `Reading.boardTime` is the host's arrival time;
 * - no watchdog: if the host dies the motors keep their last PWM (the loop must stop them);
 * - firmata.js clamps the sampling interval to >= 10 ms: the interval is set with a raw sysex, as short
 *   as the baud rate allows for the report (protocol/firmata.ts `cycleBudget`);
 * - firmata.js drops the ENCODER mode from the capability response: the link reads the raw response
 *   off the stream itself to tell whether the firmware has the encoder feature.
 */
import { EventEmitter } from 'node:events';
import type { Duplex } from 'node:stream';
import type { EncoderParams, Rig } from '../config/load.js';
import {
  BOARDS,
  cycleBudget,
  decodeEncoderPositions,
  decodeString7,
  ENCODER,
  FIRMATA,
  MODE,
  modeName,
  motorPinList,
  parseCapabilities,
  resolveMotorPins,
  wireTime,
  type CycleBudget,
  type MotorPins,
} from '../protocol/firmata.js';
import type { Clock, TimerHandle } from '../time/clock.js';
import { closeStream } from './stream.js';
import { johnnyFive, type FiveBoard, type FiveMotor, type FiveSensor, type FirmataIO } from './johnny-five.js';
import { LinkError, zeroCounters, type BoardIdentity, type Link, type LinkCounters, type LinkEvent, type Reading, type StopOutcome } from './link.js';

/** A rig file's `firmata` section. */
export type FirmataConfig = NonNullable<Rig['firmata']>;

export interface FirmataLinkOptions {
  /** The open serial stream (SerialPort, SerialPortStream). */
  stream: Duplex;
  /** Port path or label, for messages. */
  name: string;
  /** Baud rate the stream is set to (for messages and the sampling interval). */
  baudRate: number;
  clock: Clock;
  /** The wiring: motors and sensors per joint, the board's pin set. */
  firmata: FirmataConfig;
  /** The rig's encoders (counts per revolution, sign, zero) for the encoder joints. */
  encoders: EncoderParams[];
  /** How long johnny-five may take to reach `ready` [ms] (its `timeout` option). */
  handshakeMs: number;
  /** Time to wait for an answer (encoder attach, pin state) [ms]. @default 500 */
  answerMs?: number;
  /** Fraction of the baud rate the reports may use when the interval is chosen automatically. @default 0.8 */
  load?: number;
}

/** Names the firmware must have for the encoder path, for messages. */
const FLASH_HINT = 'flash ConfigurableFirmata 2.x with the FirmataEncoder feature (docs/firmata.md)';

// ------------------------------------------------------------------ the encoder sysex handler

/**
 * firmata.js keeps sysex handlers in one static table shared by every Firmata instance, and
 * `sysexResponse` throws when the command already has one. One dispatcher is registered and routes
 * each reply to the link of the Firmata instance (`this`) it came from; a stale entry (from another
 * copy of this module, or a test that did not close its link) is replaced.
 */
const encoderHandlers = new Map<FirmataIO, (data: number[]) => void>();
let installed: { table: Record<number, unknown>; entry: unknown; io: FirmataIO } | undefined;

function dispatchEncoder(this: FirmataIO, data: number[]): void {
  encoderHandlers.get(this)?.(data);
}

function listenEncoders(io: FirmataIO, handler: (data: number[]) => void): void {
  const table = io.constructor.SYSEX_RESPONSE;
  if (!installed || installed.table !== table || table[FIRMATA.ENCODER_DATA] !== installed.entry) {
    if (table[FIRMATA.ENCODER_DATA] !== undefined) io.clearSysexResponse(FIRMATA.ENCODER_DATA);
    io.sysexResponse(FIRMATA.ENCODER_DATA, dispatchEncoder);
    installed = { table, entry: table[FIRMATA.ENCODER_DATA], io };
  }
  encoderHandlers.set(io, handler);
}

function unlistenEncoders(io: FirmataIO): void {
  encoderHandlers.delete(io);
  if (encoderHandlers.size === 0) clearFirmataSysexHandlers();
}

/** Removes twolink's entry from firmata.js's static sysex table (tests call it between cases). */
export function clearFirmataSysexHandlers(): void {
  encoderHandlers.clear();
  if (installed && installed.table[FIRMATA.ENCODER_DATA] === installed.entry) installed.io.clearSysexResponse(FIRMATA.ENCODER_DATA);
  installed = undefined;
}

// ------------------------------------------------------------------ the stream under johnny-five

/**
 * What firmata.js needs of a transport (`write`, and `data`/`close`/`error` events), in front of our
 * stream: it counts the bytes and messages and lets the link stop forwarding when it closes.
 */
class Transport extends EventEmitter {
  detached = false;
  /** When the last byte written so far will have reached the board [s, link clock], at the baud rate. */
  arrivesAt = 0;
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
    this.counters.sent++;
    this.counters.bytesOut += data.length;
    this.arrivesAt = Math.max(this.clock.now(), this.arrivesAt) + wireTime(data.length, this.baudRate);
    return this.stream.write(data, cb);
  }
}

/**
 * Splits the board's bytes into Firmata messages, to count them and to read what firmata.js does not
 * keep (the raw capability response).
 */
class MessageTap {
  private sysex: number[] | undefined;
  private need = 0;
  onSysex: (cmd: number, body: number[]) => void = () => {};
  onMessage: () => void = () => {};
  onStray: () => void = () => {};

  push(data: Buffer): void {
    for (const b of data) {
      if (this.sysex) {
        if (b === FIRMATA.END_SYSEX) {
          const [cmd, ...body] = this.sysex;
          this.sysex = undefined;
          this.onMessage();
          if (cmd !== undefined) this.onSysex(cmd, body);
          continue;
        }
        if (b < 0x80) {
          this.sysex.push(b);
          continue;
        }
        this.sysex = undefined;
        this.onStray();
      }
      if (b === FIRMATA.START_SYSEX) {
        this.sysex = [];
        this.need = 0;
      } else if (b >= 0x80) {
        const c = b & 0xf0;
        this.need = c === FIRMATA.ANALOG_MESSAGE || c === FIRMATA.DIGITAL_MESSAGE || b === FIRMATA.REPORT_VERSION ? 2 : 0;
        if (this.need === 0) this.onStray();
      } else if (this.need > 0) {
        if (--this.need === 0) this.onMessage();
      } else {
        this.onStray();
      }
    }
  }
}

// ------------------------------------------------------------------ the link

type JointSensor =
  | { type: 'encoder'; encoder: number; pinA: number; pinB: number; params: EncoderParams }
  | { type: 'potentiometer'; channel: number; rawAtMin: number; rawAtMax: number; minDeg: number; maxDeg: number };

export class FirmataLink implements Link {
  readonly name: string;
  readonly counters: LinkCounters = zeroCounters();
  /** What the link noticed at open that works but is worse than it should be (encoder pins without interrupts). */
  readonly warnings: string[] = [];
  /** Strings the board sent (STRING_DATA: "Unknown pin mode", "Unhandled sysex command", ...). */
  readonly boardStrings: string[] = [];
  /** The wire budget of one control cycle, and the sampling interval set (after open). */
  budget: CycleBudget | undefined;
  /** The sampling interval set on the board [ms] (after open). */
  samplingIntervalMs = 0;

  private readonly o: FirmataLinkOptions;
  private readonly joints: number;
  private readonly motorPins: MotorPins[];
  private readonly sensorsOf: JointSensor[];
  private readonly transport: Transport;
  private readonly tap = new MessageTap();
  private board: FiveBoard | undefined;
  private io: FirmataIO | undefined;
  private motors: FiveMotor[] = [];
  private potSensors: FiveSensor[] = [];
  private ioListeners: [string, (...a: never[]) => void][] = [];
  private capabilityBody: number[] | undefined;
  private readonly raw: number[];
  private pendingMask = 0;
  private readingCount = 0;
  private latest: Reading | undefined;
  private fresh = false;
  private readonly lastSpeed: number[];
  private readonly lastDir: number[];
  private enabled = false;
  private opened = false;
  private closed = false;
  private closing = false;
  private probeTimer: TimerHandle | undefined;
  private seq = 0;
  /** The last commands: id and when their bytes reach the board [s], oldest first. */
  private commands: { id: number; at: number }[] = [];
  private listener: (e: LinkEvent) => void = () => {};
  private handshakeFail: ((e: LinkError) => void) | undefined;
  private stringWaiters: ((s: string) => void)[] = [];
  private dataWaiters: (() => void)[] = [];
  private resetCheck = false;
  private readonly onData = (d: Buffer): void => {
    this.counters.bytesIn += d.length;
    this.tap.push(d);
    if (this.transport.detached) return;
    try {
      this.transport.emit('data', d);
    } catch (e) {
      // firmata.js's parser throws on some malformed messages (a PIN_STATE_RESPONSE for a pin it does
      // not know: found by `npm run bench`'s fuzzing). A peer's bytes must never kill the process:
      // count the message as corrupt and let the parser start over.
      this.counters.corrupt++;
      const io = (this.board as unknown as { io?: { buffer?: unknown[] } } | undefined)?.io;
      if (io && Array.isArray(io.buffer)) io.buffer = [];
      this.listener({ kind: 'board-error', code: 'PARSE', text: `a malformed Firmata message was dropped (${e instanceof Error ? e.message : String(e)})`, ack: null });
    }
  };
  private readonly onStreamClose = (err?: Error | null): void => {
    if (this.closing) return;
    if (!this.transport.detached) this.transport.emit('close', err);
    // Before `ready` johnny-five does not forward close: report it here.
    if (!this.board?.isReady) this.onClosed(err ? `the port closed (${err.message})` : 'the port closed');
  };
  private readonly onStreamError = (e: Error): void => {
    if (!this.transport.detached) this.transport.emit('error', e);
    this.listener({ kind: 'error', message: `${this.name}: ${e.message}` });
  };

  constructor(o: FirmataLinkOptions) {
    this.o = o;
    this.name = o.name;
    const f = o.firmata;
    this.joints = f.motors.length;
    const shields = f.motors.some((m) => 'shield' in m) ? johnnyFive().Motor.SHIELD_CONFIGS : {};
    this.motorPins = f.motors.map((m, i) => {
      const r = resolveMotorPins(m, shields);
      if (typeof r === 'string') throw new LinkError(`${o.name}: firmata.motors[${i}]: ${r}`, 'config');
      return r;
    });
    let nEnc = 0;
    this.sensorsOf = f.sensors.map((s, j) => {
      if (s.type === 'potentiometer') return { ...s };
      const params = o.encoders[j];
      if (!params) throw new LinkError(`${o.name}: joint ${j + 1} has an encoder but the rig file has no encoders[${j}] (counts per revolution)`, 'config');
      return { type: 'encoder', encoder: nEnc++, pinA: s.pinA, pinB: s.pinB, params };
    });
    this.raw = new Array<number>(this.joints).fill(0);
    this.lastSpeed = new Array<number>(this.joints).fill(0);
    this.lastDir = new Array<number>(this.joints).fill(1);
    this.transport = new Transport(o.name, o.stream, this.counters, o.clock, o.baudRate);
    this.tap.onMessage = () => this.counters.received++;
    this.tap.onStray = () => this.counters.corrupt++;
    this.tap.onSysex = (cmd, body) => {
      if (cmd === FIRMATA.CAPABILITY_RESPONSE) this.capabilityBody = body;
      else if (cmd === FIRMATA.STRING_DATA) this.onString(decodeString7(body));
    };
    o.stream.on('data', this.onData);
    o.stream.on('close', this.onStreamClose);
    o.stream.on('error', this.onStreamError);
  }

  onEvent(listener: (e: LinkEvent) => void): void {
    this.listener = listener;
  }

  /** johnny-five's Board and Firmata IO under this link (after open), for diagnostics and tests. */
  get five(): { board: FiveBoard; io: FirmataIO; motors: readonly FiveMotor[] } | undefined {
    return this.board && this.io ? { board: this.board, io: this.io, motors: this.motors } : undefined;
  }

  private onClosed(reason: string): void {
    if (this.closed) return;
    this.closed = true;
    this.o.clock.clearTimer(this.probeTimer);
    // johnny-five's handshake timer would keep the process alive and fire into a dead board.
    if (this.board?.timer) clearTimeout(this.board.timer);
    this.handshakeFail?.(new LinkError(`${this.name}: ${reason} during the Firmata handshake`, 'closed'));
    this.listener({ kind: 'closed', reason: `${this.name}: ${reason}` });
  }

  private onString(s: string): void {
    this.counters.boardErrors++;
    this.boardStrings.push(s);
    for (const w of this.stringWaiters.splice(0)) w(s);
    if (this.opened) this.listener({ kind: 'board-error', code: 'FIRMATA', text: s, ack: null });
  }

  // ------------------------------------------------------------------ open

  async open(): Promise<BoardIdentity> {
    if (this.closed || this.closing) throw new LinkError(`${this.name}: the link is closed`, 'closed');
    if (this.board) throw new LinkError(`${this.name}: open() was already called (johnny-five cannot reconnect: make a new link on a new port)`, 'busy');
    const o = this.o;
    const five = johnnyFive();
    await new Promise<void>((resolve, reject) => {
      this.handshakeFail = (e) => {
        this.handshakeFail = undefined;
        reject(e);
      };
      const board = new five.Board({ port: this.transport, repl: false, debug: false, sigint: false, timeout: o.handshakeMs });
      this.board = board;
      this.io = board.io;
      // johnny-five reports a handshake timeout (and, later, IO errors) as 'error' events; one listener
      // stays for the board's lifetime so that none of them is ever unhandled.
      board.on('error', (e: unknown) => {
        if (this.handshakeFail) this.handshakeFail(this.handshakeError(e));
        else if (!this.closed) this.listener({ kind: 'error', message: `${this.name}: ${describe(e)}` });
      });
      board.once('ready', () => {
        this.handshakeFail = undefined;
        resolve();
      });
      // A board that did not reset when the port opened (a pty, a Leonardo, a Mega with its reset cut)
      // has already said who it is: ask again, once now and once more if it stays silent.
      const ask = (): void => {
        if (this.io && !this.io.versionReceived && !this.closed) {
          this.io.reportVersion(() => {});
          this.io.queryFirmware(() => {});
        }
      };
      ask();
      const again = o.clock.setTimer(Math.min(2, o.handshakeMs / 2000), ask);
      board.once('ready', () => o.clock.clearTimer(again));
    });
    try {
      return await this.configure();
    } catch (e) {
      this.opened = false;
      throw e;
    }
  }

  private handshakeError(e: unknown): LinkError {
    const o = this.o;
    const io = this.io;
    const heard = this.counters.bytesIn;
    let hint: string;
    if (heard === 0) hint = 'nothing at all came back: is the board connected and powered, and is this its port?';
    else if (!io?.versionReceived) {
      hint =
        `${heard} bytes came back but no Firmata version: wrong baud rate (ConfigurableFirmata runs at 57600 unless rebuilt: set link.baudRate), ` +
        'or the board runs other firmware (twolink\'s own? set "link": {"transport": "line"})';
    } else if (!io.firmware?.name) hint = 'the board sent its Firmata version but never its firmware name';
    else hint = `${io.firmware.name} answered but did not finish the capability and analog mapping queries`;
    const why = describe(e).split('\n')[0]!.trim();
    return new LinkError(`${this.name}: no Firmata handshake within ${o.handshakeMs} ms at ${o.baudRate} baud (johnny-five: ${why}): ${hint}`, 'no-answer');
  }

  private async configure(): Promise<BoardIdentity> {
    const o = this.o;
    const board = this.board!;
    const io = this.io!;
    const five = johnnyFive();
    const fw = io.firmware?.name ? `${io.firmware.name} ${io.firmware.version?.major}.${io.firmware.version?.minor}` : 'unknown firmware';
    const caps = this.capabilityBody ? parseCapabilities(this.capabilityBody) : io.pins.map((p) => new Map(p.supportedModes.map((m) => [m, 1])));
    const has = (pin: number, mode: number): boolean => caps[pin]?.has(mode) ?? false;
    const boardName = caps.length === BOARDS.uno.totalPins ? 'uno' : caps.length === BOARDS.mega.totalPins ? 'mega' : `${caps.length}-pin board`;
    const expected = BOARDS[o.firmata.board];
    if (caps.length !== expected.totalPins) {
      throw new LinkError(
        `${this.name}: the board reports ${caps.length} pins, the rig file says firmata.board "${o.firmata.board}" (${expected.totalPins} pins): fix firmata.board`,
        'mismatch',
      );
    }
    const pwmPins = caps.flatMap((c, p) => (c.has(MODE.PWM) ? [p] : []));
    this.motorPins.forEach((m, j) => {
      if (!has(m.pwm, MODE.PWM)) {
        throw new LinkError(
          `${this.name}: motor ${j + 1}'s PWM pin ${m.pwm} cannot do PWM on this ${boardName} (PWM pins: ${pwmPins.join(' ')}): fix firmata.motors[${j}]`,
          'pins',
        );
      }
      for (const { role, pin } of motorPinList(m)) {
        if (role !== 'pwm' && !has(pin, MODE.OUTPUT)) {
          throw new LinkError(`${this.name}: motor ${j + 1}'s ${role} pin ${pin} cannot be a digital output on this ${boardName}: fix firmata.motors[${j}]`, 'pins');
        }
      }
    });
    const encoderJoints = this.sensorsOf.flatMap((s, j) => (s.type === 'encoder' ? [j] : []));
    if (encoderJoints.length > 0) {
      const encPins = caps.flatMap((c, p) => (c.has(MODE.ENCODER) ? [p] : []));
      if (encPins.length === 0) {
        throw new LinkError(`${this.name}: ${fw} has no encoder support (no pin offers the ENCODER mode): ${FLASH_HINT}`, 'no-encoder');
      }
      for (const j of encoderJoints) {
        const s = this.sensorsOf[j] as Extract<JointSensor, { type: 'encoder' }>;
        for (const pin of [s.pinA, s.pinB]) {
          if (!has(pin, MODE.INPUT)) throw new LinkError(`${this.name}: joint ${j + 1}'s encoder pin ${pin} is not a digital input on this ${boardName}`, 'pins');
        }
        if (!has(s.pinA, MODE.ENCODER)) {
          this.warnings.push(
            `joint ${j + 1}'s encoder: pin A (${s.pinA}) has no interrupt on this ${boardName} (interrupt pins: ${encPins.join(' ')}): counts will be missed at speed`,
          );
        }
      }
    }
    for (const s of this.sensorsOf) {
      if (s.type === 'potentiometer' && s.channel >= io.analogPins.length) {
        throw new LinkError(`${this.name}: analog channel A${s.channel} does not exist on this ${boardName} (A0-A${io.analogPins.length - 1})`, 'pins');
      }
    }

    // Motors: johnny-five sets the pin modes, PWM 0, direction forward.
    for (const m of this.motorPins) {
      const pins: Record<string, number> = {};
      for (const { role, pin } of motorPinList(m)) pins[role] = pin;
      this.motors.push(new five.Motor({ board, pins, threshold: 0, ...(m.invertPWM ? { invertPWM: true } : {}) }));
    }

    const nPot = this.sensorsOf.filter((s) => s.type === 'potentiometer').length;
    this.budget = cycleBudget(this.motorPins, encoderJoints.length, nPot, o.baudRate, o.load ?? 0.8);
    this.samplingIntervalMs = o.firmata.samplingIntervalMs > 0 ? o.firmata.samplingIntervalMs : this.budget.samplingIntervalMs;
    const needMs = (this.budget.upBytes * 10 * 1000) / o.baudRate;
    if (this.samplingIntervalMs < needMs) {
      this.warnings.push(
        `firmata.samplingIntervalMs ${this.samplingIntervalMs} ms is shorter than the ${needMs.toFixed(2)} ms a ${this.budget.upBytes}-byte report takes at ${o.baudRate} baud: ` +
          `reports will queue in the board's transmit buffer and arrive up to ${((64 * 10 * 1000) / o.baudRate + needMs).toFixed(0)} ms old (0 = automatic: ${this.budget.samplingIntervalMs} ms)`,
      );
    }

    // Encoders: attach (the firmware answers with the position), then auto-report every interval.
    if (encoderJoints.length > 0) {
      listenEncoders(io, (data) => this.onEncoderData(data));
      // "Unknown pin mode" (an encoder pin without an interrupt) is a warning, not a refusal: the
      // firmware attaches the encoder anyway and polls that pin.
      const refusal = this.nextString((text) => text.startsWith('Unhandled sysex'));
      const replies = encoderJoints.map(() => this.nextData());
      for (const j of encoderJoints) {
        const s = this.sensorsOf[j] as Extract<JointSensor, { type: 'encoder' }>;
        io.sysexCommand([FIRMATA.ENCODER_DATA, ENCODER.ATTACH, s.encoder, s.pinA, s.pinB]);
      }
      const outcome = await this.race(Promise.all(replies).then(() => 'ok' as const), refusal.promise, this.o.answerMs ?? 500);
      refusal.cancel();
      if (outcome !== 'ok') {
        const why = outcome === 'timeout' ? 'no reply to the encoder attach' : `the board answered "${outcome}" to the encoder attach`;
        throw new LinkError(`${this.name}: ${why}: ${fw} has no FirmataEncoder: ${FLASH_HINT}`, 'no-encoder');
      }
      io.sysexCommand([FIRMATA.ENCODER_DATA, ENCODER.REPORT_AUTO, 1]);
    }
    io.sysexCommand([FIRMATA.SAMPLING_INTERVAL, this.samplingIntervalMs & 0x7f, (this.samplingIntervalMs >> 7) & 0x7f]);

    // Potentiometers: a johnny-five Sensor per joint (it turns analog reporting on); every sample is taken.
    this.sensorsOf.forEach((s, j) => {
      if (s.type !== 'potentiometer') return;
      this.potSensors.push(new five.Sensor({ board, pin: `A${s.channel}`, freq: 1000 }));
      this.onIo(`analog-read-${s.channel}`, (v: number) => this.onSample(j, v));
    });

    // The first complete reading proves the sensors answer.
    this.pendingMask = 0;
    const first = await this.race(this.nextReading(), new Promise<never>(() => {}), this.o.answerMs ?? 500);
    if (first === 'timeout') throw new LinkError(`${this.name}: the board set up the sensors but no reading arrived within ${this.o.answerMs ?? 500} ms`, 'no-data');

    this.onIo('reportversion', () => this.checkReset());
    this.startProbe();
    board.on('close', () => this.onClosed('the port closed (unplugged?)'));
    board.on('disconnect', () => this.onClosed('the board disconnected'));
    this.opened = true;
    return {
      transport: 'firmata',
      port: this.name,
      firmware: fw,
      board: boardName,
      protocol: `Firmata ${io.version.major}.${io.version.minor}`,
      joints: this.joints,
      ...(encoderJoints.length === this.joints ? { countsPerRev: this.o.encoders.slice(0, this.joints).map((e) => e.countsPerRev) } : {}),
    };
  }

  private onIo(event: string, fn: (...a: never[]) => void): void {
    this.io!.on(event, fn as (...a: unknown[]) => void);
    this.ioListeners.push([event, fn]);
  }

  /**
   * A port that vanishes is not noticed until a write fails (serialport reads nothing, with no error,
   * from a hung-up tty). When the board has been quiet for a while the link writes a pin state query:
   * on a dead port the write fails and the stream closes; a live board that stays quiet is reported.
   */
  private startProbe(): void {
    const everyS = Math.max(0.1, (20 * this.samplingIntervalMs) / 1000);
    let heard = this.counters.bytesIn;
    let reported = false;
    const tick = (): void => {
      if (this.closed || this.closing) return;
      if (this.counters.bytesIn === heard) {
        void this.pinState(this.motorPins[0]!.pwm, everyS * 1000).then((st) => {
          if (!st && !reported && !this.closed && !this.closing) {
            reported = true;
            this.listener({ kind: 'error', message: `${this.name}: the board has sent nothing for ${Math.round(everyS * 2000)} ms and does not answer` });
          }
        });
      } else {
        reported = false;
      }
      heard = this.counters.bytesIn;
      this.probeTimer = this.o.clock.setTimer(everyS, tick);
    };
    this.probeTimer = this.o.clock.setTimer(everyS, tick);
  }

  /** A REPORT_VERSION after open: a reset board forgets its pin modes, so ask the PWM pin's mode. */
  private checkReset(): void {
    // One question at a time: a stream of REPORT_VERSION bytes (noise, found by fuzzing) must not pile
    // up pin-state queries and their listeners.
    if (this.resetCheck) return;
    const pin = this.motorPins[0]!.pwm;
    this.resetCheck = true;
    void this.pinState(pin, this.o.answerMs ?? 500).then((st) => {
      this.resetCheck = false;
      if (st && st.mode !== MODE.PWM && !this.closed) this.listener({ kind: 'board-reset' });
    });
  }

  // ------------------------------------------------------------------ receiving

  private onEncoderData(data: number[]): void {
    const list = decodeEncoderPositions(data);
    if (!list) {
      this.counters.corrupt++;
      return;
    }
    for (const { encoder, count } of list) {
      const j = this.sensorsOf.findIndex((s) => s.type === 'encoder' && s.encoder === encoder);
      if (j >= 0) this.onSample(j, count);
    }
    for (const w of this.dataWaiters.splice(0, 1)) w();
  }

  private onSample(j: number, value: number): void {
    this.raw[j] = value;
    this.pendingMask |= 1 << j;
    if (this.pendingMask !== (1 << this.joints) - 1) return;
    this.pendingMask = 0;
    const q = this.raw.map((r, i) => this.angle(i, r));
    const now = this.o.clock.now();
    // The board took the samples of one sampling pass just before it started sending them; reports
    // that waited in a full transmit buffer are older still, which the host cannot see.
    const sampleTime = now - wireTime(this.budget?.upBytes ?? 0, this.o.baudRate);
    this.latest = { q, raw: this.raw.slice(), boardTime: now, hostTime: now, sampleTime, ack: this.ackAt(sampleTime), enabled: this.enabled, watchdog: false, flags: 0 };
    this.fresh = true;
    this.readingCount++;
    for (const w of this.readingWaiters.splice(0)) w();
  }

  private angle(j: number, raw: number): number {
    const s = this.sensorsOf[j]!;
    if (s.type === 'encoder') return s.params.zero + (s.params.sign * raw * 2 * Math.PI) / s.params.countsPerRev;
    const deg = s.minDeg + ((raw - s.rawAtMin) / (s.rawAtMax - s.rawAtMin)) * (s.maxDeg - s.minDeg);
    return (deg * Math.PI) / 180;
  }

  read(): Reading | undefined {
    if (!this.fresh) return undefined;
    this.fresh = false;
    return this.latest;
  }

  /** The newest reading even if it was returned before. */
  last(): Reading | undefined {
    return this.latest;
  }

  private readingWaiters: (() => void)[] = [];
  private nextReading(): Promise<void> {
    return new Promise((resolve) => this.readingWaiters.push(resolve));
  }
  private nextData(): Promise<void> {
    return new Promise((resolve) => this.dataWaiters.push(resolve));
  }
  /** The next string from the board that passes `accept`. */
  private nextString(accept: (s: string) => boolean): { promise: Promise<string>; cancel: () => void } {
    let fn: ((s: string) => void) | undefined;
    const promise = new Promise<string>((resolve) => {
      fn = (s) => {
        if (accept(s)) resolve(s);
        else this.stringWaiters.push(fn!);
      };
      this.stringWaiters.push(fn);
    });
    return { promise, cancel: () => (this.stringWaiters = this.stringWaiters.filter((w) => w !== fn)) };
  }

  /** Resolves with the first of `a` and `b`, or 'timeout' after `ms` on the link's clock. */
  private race<A, B>(a: Promise<A>, b: Promise<B>, ms: number): Promise<A | B | 'timeout'> {
    return new Promise((resolve) => {
      let timer: TimerHandle | undefined;
      const done = (v: A | B | 'timeout'): void => {
        this.o.clock.clearTimer(timer);
        resolve(v);
      };
      timer = this.o.clock.setTimer(ms / 1000, () => done('timeout'));
      a.then(done, () => done('timeout'));
      b.then(done, () => done('timeout'));
    });
  }

  /** Asks the board for a pin's mode and state; undefined when no answer came within `ms`. */
  private pinState(pin: number, ms: number): Promise<{ mode: number; state: number } | undefined> {
    const io = this.io;
    if (!io || this.closed) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const event = `pin-state-${pin}`;
      const onState = (): void => {
        this.o.clock.clearTimer(timer);
        const p = io.pins[pin];
        resolve(p ? { mode: p.mode ?? -1, state: p.state ?? 0 } : undefined);
      };
      const timer = this.o.clock.setTimer(ms / 1000, () => {
        io.removeListener(event, onState);
        resolve(undefined);
      });
      io.queryPinState(pin, onState);
    });
  }

  // ------------------------------------------------------------------ sending

  writeDuty(duty: readonly number[]): number {
    const id = this.seq;
    this.seq = (this.seq + 1) % 65536;
    for (let j = 0; j < this.joints; j++) {
      let d = duty[j]!;
      if (!Number.isFinite(d)) {
        this.counters.nonFinite++;
        d = 0;
      }
      if (!this.enabled) d = 0;
      this.drive(j, d);
    }
    // A command that changed nothing is in force as soon as the one before it.
    this.commands.push({ id, at: Math.max(this.o.clock.now(), this.transport.arrivesAt) });
    if (this.commands.length > 64) this.commands.shift();
    return id;
  }

  /** The newest command in force on the board at `t` [s], or null. */
  private ackAt(t: number): number | null {
    for (let i = this.commands.length - 1; i >= 0; i--) if (this.commands[i]!.at <= t) return this.commands[i]!.id;
    return null;
  }

  /** One motor to a duty (-1..1): speed 0..255 and a direction; sends only what changed. */
  private drive(j: number, d: number): void {
    const motor = this.motors[j];
    if (!motor || this.closed) return;
    const speed = Math.round(Math.min(1, Math.abs(d)) * 255);
    const dir = speed === 0 ? this.lastDir[j]! : d > 0 ? 1 : 0;
    if (dir !== this.lastDir[j]) {
      // johnny-five's dir() sends PWM 0, then the direction pin(s), then the speed.
      if (dir === 1) motor.forward(speed);
      else motor.reverse(speed);
    } else if (speed !== this.lastSpeed[j]) {
      motor.speed(speed);
    }
    this.lastDir[j] = dir;
    this.lastSpeed[j] = speed;
  }

  /** The PWM value a stopped motor's pin holds (an inverted-PWM shield going forward holds 255). */
  private stoppedPwm(j: number): number {
    const m = this.motors[j]!;
    return m.invertPWM && m.direction.value === 1 ? 255 : 0;
  }

  /** Motors to 0 and every PWM pin asked: true when all of them read back stopped. */
  private async zeroAndConfirm(ms: number): Promise<boolean> {
    for (let j = 0; j < this.motors.length; j++) {
      this.motors[j]!.stop();
      this.lastSpeed[j] = 0;
    }
    const states = await Promise.all(this.motorPins.map((m) => this.pinState(m.pwm, ms)));
    return states.every((s, j) => s !== undefined && s.mode === MODE.PWM && s.state === this.stoppedPwm(j));
  }

  async enable(on: boolean): Promise<void> {
    if (!this.opened || this.closed) throw new LinkError(`${this.name}: the link is not open`, 'closed');
    const ms = this.o.answerMs ?? 500;
    if (on) {
      for (const m of this.motors) m.enable();
      // Firmata has nothing to enable: make sure the board is there and its motor pins are still ours.
      const st = await this.pinState(this.motorPins[0]!.pwm, ms);
      if (!st) throw new LinkError(`${this.name}: the board did not answer a pin state query within ${ms} ms`, 'no-answer');
      if (st.mode !== MODE.PWM) throw new LinkError(`${this.name}: motor 1's PWM pin is in ${modeName(st.mode)} mode: the board was reset; reconnect`, 'board-reset');
      this.enabled = true;
      return;
    }
    this.enabled = false;
    for (const m of this.motors) m.disable();
    if (!(await this.zeroAndConfirm(ms))) throw new LinkError(`${this.name}: the board did not confirm the motors at 0 within ${ms} ms`, 'no-answer');
  }

  async zero(mask = (1 << this.joints) - 1): Promise<void> {
    if (!this.opened || this.closed) throw new LinkError(`${this.name}: the link is not open`, 'closed');
    const io = this.io!;
    let any = false;
    this.sensorsOf.forEach((s, j) => {
      if (s.type === 'encoder' && mask & (1 << j)) {
        io.sysexCommand([FIRMATA.ENCODER_DATA, ENCODER.RESET_POSITION, s.encoder]);
        any = true;
      }
    });
    if (!any) return; // potentiometers are absolute
    // The board handles messages in order: once it answers a query sent after the resets, every
    // report that follows was taken after them.
    const ms = this.o.answerMs ?? 500;
    const st = await this.pinState(this.motorPins[0]!.pwm, ms);
    if (!st) throw new LinkError(`${this.name}: the board did not answer after the encoder reset within ${ms} ms`, 'no-answer');
    this.fresh = false;
    this.pendingMask = 0;
  }

  /** Asks the board for motor 1's PWM pin; rejects with a LinkError when no answer comes within `timeoutMs`. */
  async ping(timeoutMs = this.o.answerMs ?? 500): Promise<void> {
    if (!(await this.pinState(this.motorPins[0]!.pwm, timeoutMs))) {
      throw new LinkError(`${this.name}: the board did not answer a pin state query within ${timeoutMs} ms`, 'no-answer');
    }
  }

  /**
   * Confirms the last duty: asks the board for every motor's PWM pin and resolves true when each holds
   * the value last sent (false when it differs or no answer came within `timeoutMs`).
   */
  async confirm(timeoutMs = this.o.answerMs ?? 500): Promise<boolean> {
    if (!this.opened || this.closed) return false;
    const states = await Promise.all(this.motorPins.map((m) => this.pinState(m.pwm, timeoutMs)));
    return states.every((st, j) => {
      const m = this.motors[j]!;
      const want = m.invertPWM && m.direction.value === 1 ? this.lastSpeed[j]! ^ 0xff : this.lastSpeed[j]!;
      return st !== undefined && st.state === want;
    });
  }

  /** Complete readings produced since open (one per sampling pass when every joint reported). */
  get readings(): number {
    return this.readingCount;
  }

  async stop(timeoutMs = 200): Promise<StopOutcome> {
    this.enabled = false;
    if (!this.opened || this.closed) return 'unconfirmed';
    return (await this.zeroAndConfirm(timeoutMs)) ? 'acknowledged' : 'unconfirmed';
  }

  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    this.o.clock.clearTimer(this.probeTimer);
    const io = this.io;
    for (const s of this.potSensors) s.disable();
    const s = this.o.stream;
    let last: Promise<void> = Promise.resolve();
    if (io) {
      if (!this.closed && this.opened && this.sensorsOf.some((x) => x.type === 'encoder')) {
        // Leave the board quiet: no reports to a port nobody reads.
        last = new Promise((resolve) => {
          this.transport.write(Buffer.from([FIRMATA.START_SYSEX, FIRMATA.ENCODER_DATA, ENCODER.REPORT_AUTO, 0, FIRMATA.END_SYSEX]), () => resolve());
        });
      }
      for (const [event, fn] of this.ioListeners) io.removeListener(event, fn as (...a: unknown[]) => void);
      unlistenEncoders(io);
    }
    this.ioListeners = [];
    this.opened = false;
    if (!s.destroyed) {
      await Promise.race([last, new Promise((r) => setTimeout(r, 200).unref())]);
      this.transport.detached = true;
      // close(), not destroy(): a SerialPortStream's destroy() leaves the device open and locked.
      await closeStream(s);
    }
    this.transport.detached = true;
    s.removeListener('data', this.onData);
    this.onClosed('closed by twolink');
  }
}

function describe(e: unknown): string {
  if (e instanceof Error) return e.message;
  if (e && typeof e === 'object' && 'message' in e) return String((e as { message: unknown }).message);
  return String(e);
}

/** The Link of a rig file whose `link.transport` is `firmata`, on an open stream. */
export function createFirmataLink(rig: Rig, stream: Duplex, name: string, clock: Clock, opts: { answerMs?: number; handshakeMs?: number } = {}): FirmataLink {
  if (!rig.firmata) {
    throw new LinkError(`${rig.file}: link.transport is "firmata" but the rig file has no "firmata" section (motors and sensors per joint: see rigs/mock-arm-firmata.json)`, 'config');
  }
  return new FirmataLink({
    stream,
    name,
    baudRate: rig.link.baudRate,
    clock,
    firmata: rig.firmata,
    encoders: rig.encoders,
    handshakeMs: opts.handshakeMs ?? rig.link.handshakeMs,
    ...(opts.answerMs !== undefined ? { answerMs: opts.answerMs } : {}),
  });
}
