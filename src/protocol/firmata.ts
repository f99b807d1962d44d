/**
 * The parts of Firmata (firmata/protocol protocol.md, encoder.md) that twolink needs, as pure data and
 * functions shared by the host (FirmataLink, which otherwise leaves the protocol to firmata.js) and the
 * mock rig's board: message and mode numbers, the one framer both sides split bytes with, the boards'
 * pin sets as ConfigurableFirmata 2.10 reports them, the FirmataEncoder reply, twolink's watchdog
 * feature (firmware-protocol/firmata-watchdog/), capability parsing, the AVR's millis() and the UART
 * budget of a control cycle. The wiring (motor pins, checkWiring) is in firmata-wiring.ts.
 *
 * No I/O and no clock here.
 */
import type { MotorPins } from './firmata-wiring.js';

/** Message and sysex command bytes. */
export const FIRMATA = {
  ANALOG_MESSAGE: 0xe0,
  DIGITAL_MESSAGE: 0x90,
  REPORT_ANALOG: 0xc0,
  REPORT_DIGITAL: 0xd0,
  START_SYSEX: 0xf0,
  SET_PIN_MODE: 0xf4,
  SET_DIGITAL_PIN_VALUE: 0xf5,
  END_SYSEX: 0xf7,
  REPORT_VERSION: 0xf9,
  SYSTEM_RESET: 0xff,
  // sysex commands
  ENCODER_DATA: 0x61,
  ANALOG_MAPPING_QUERY: 0x69,
  ANALOG_MAPPING_RESPONSE: 0x6a,
  CAPABILITY_QUERY: 0x6b,
  CAPABILITY_RESPONSE: 0x6c,
  PIN_STATE_QUERY: 0x6d,
  PIN_STATE_RESPONSE: 0x6e,
  EXTENDED_ANALOG: 0x6f,
  STRING_DATA: 0x71,
  REPORT_FIRMWARE: 0x79,
  SAMPLING_INTERVAL: 0x7a,
  /** twolink's FirmataWatchdog feature (a user-defined sysex id, 0x01-0x0F in protocol.md). */
  WATCHDOG_DATA: 0x0e,
} as const;

/** Pin modes (PIN_MODE_*). */
export const MODE = {
  INPUT: 0x00,
  OUTPUT: 0x01,
  ANALOG: 0x02,
  PWM: 0x03,
  SERVO: 0x04,
  I2C: 0x06,
  ENCODER: 0x09,
  PULLUP: 0x0b,
  IGNORE: 0x7f,
} as const;

const MODE_NAMES: Record<number, string> = {
  0x00: 'INPUT',
  0x01: 'OUTPUT',
  0x02: 'ANALOG',
  0x03: 'PWM',
  0x04: 'SERVO',
  0x05: 'SHIFT',
  0x06: 'I2C',
  0x07: 'ONEWIRE',
  0x08: 'STEPPER',
  0x09: 'ENCODER',
  0x0a: 'SERIAL',
  0x0b: 'PULLUP',
  0x7f: 'IGNORE',
};

/** A mode's name for messages: `PWM`, `ENCODER`, or `0x1c`. */
export function modeName(mode: number): string {
  return MODE_NAMES[mode] ?? `0x${mode.toString(16)}`;
}

/** FirmataEncoder subcommands (the byte after ENCODER_DATA). */
export const ENCODER = {
  ATTACH: 0x00,
  REPORT_POSITION: 0x01,
  REPORT_POSITIONS: 0x02,
  RESET_POSITION: 0x03,
  REPORT_AUTO: 0x04,
  DETACH: 0x05,
} as const;

/** Encoders FirmataEncoder can attach (MAX_ENCODERS). */
export const MAX_ENCODERS = 5;

/** Bytes of one encoder in an ENCODER_DATA reply: number and sign, then 4 x 7 bits of magnitude. */
export const ENCODER_BYTES = 5;

/** The smallest sampling interval ConfigurableFirmata accepts [ms] (firmata.js sends no less than 10). */
export const MIN_SAMPLING_INTERVAL_MS = 1;

/** Sampling interval after a reset [ms]. */
export const DEFAULT_SAMPLING_INTERVAL_MS = 19;

// ------------------------------------------------------------------ boards

/** Which pin set a board has. */
export type BoardName = 'uno' | 'mega';

/** A board's pins as Boards.h describes them (pin numbers are Firmata's, A0 = first analog pin). */
export interface BoardLayout {
  name: BoardName;
  /** TOTAL_PINS. */
  totalPins: number;
  /** Pin number of each analog channel (index = channel). */
  analogPins: readonly number[];
  /** IS_PIN_DIGITAL: pins 0 and 1 are the serial port and take no mode. */
  digital: (pin: number) => boolean;
  /** Pins with hardware PWM (digitalPinHasPWM). */
  pwm: ReadonlySet<number>;
  /** Pins with an external interrupt (digitalPinToInterrupt): what FirmataEncoder offers ENCODER on. */
  interrupt: ReadonlySet<number>;
  i2c: ReadonlySet<number>;
  servo: (pin: number) => boolean;
  /** PWM resolution [bits]. */
  pwmBits: number;
  /** ADC resolution [bits]. */
  adcBits: number;
}

const range = (a: number, b: number): number[] => Array.from({ length: b - a + 1 }, (_, i) => a + i);

/** The pin sets of an Uno (ATmega328P) and a Mega 2560, as ConfigurableFirmata 2.10's Boards.h has them. */
export const BOARDS: Record<BoardName, BoardLayout> = {
  uno: {
    name: 'uno',
    totalPins: 20,
    analogPins: range(14, 19),
    digital: (p) => p >= 2 && p <= 19,
    pwm: new Set([3, 5, 6, 9, 10, 11]),
    interrupt: new Set([2, 3]),
    i2c: new Set([18, 19]),
    servo: (p) => p >= 2 && p - 2 < 12,
    pwmBits: 8,
    adcBits: 10,
  },
  mega: {
    name: 'mega',
    totalPins: 70,
    analogPins: range(54, 69),
    digital: (p) => p >= 2 && p < 70,
    pwm: new Set([...range(2, 13), 44, 45, 46]),
    interrupt: new Set([2, 3, 18, 19, 20, 21]),
    i2c: new Set([20, 21]),
    servo: (p) => p >= 2 && p - 2 < 48,
    pwmBits: 8,
    adcBits: 10,
  },
};

/** Features a firmware build has (what its capability response lists). */
export interface FirmwareFeatures {
  /** FirmataEncoder is compiled in. */
  encoder: boolean;
  /** twolink's FirmataWatchdog is compiled in (firmware-protocol/firmata-watchdog/). @default false */
  watchdog?: boolean;
}

/**
 * The capability response of a ConfigurableFirmata 2.10 build on a board: per pin, the (mode,
 * resolution) pairs in the order the features write them (digital in, digital out, analog in, PWM,
 * servo, I2C, encoder).
 */
export function capabilities(layout: BoardLayout, features: FirmwareFeatures): [number, number][][] {
  const out: [number, number][][] = [];
  const analog = new Set(layout.analogPins);
  for (let p = 0; p < layout.totalPins; p++) {
    const modes: [number, number][] = [];
    if (layout.digital(p)) modes.push([MODE.INPUT, 1], [MODE.PULLUP, 1], [MODE.OUTPUT, 1]);
    if (analog.has(p)) modes.push([MODE.ANALOG, layout.adcBits]);
    if (layout.pwm.has(p)) modes.push([MODE.PWM, layout.pwmBits]);
    if (layout.servo(p)) modes.push([MODE.SERVO, 14]);
    if (layout.i2c.has(p)) modes.push([MODE.I2C, 1]);
    if (features.encoder && layout.interrupt.has(p)) modes.push([MODE.ENCODER, 28]);
    out.push(modes);
  }
  return out;
}

/** The body of a CAPABILITY_RESPONSE (between START_SYSEX CAPABILITY_RESPONSE and END_SYSEX). */
export function encodeCapabilities(caps: readonly (readonly [number, number])[][]): number[] {
  const out: number[] = [];
  for (const pin of caps) {
    for (const [m, r] of pin) out.push(m, r);
    out.push(0x7f);
  }
  return out;
}

/**
 * Parses a CAPABILITY_RESPONSE body: the modes each pin supports. firmata.js keeps only the modes it
 * knows and drops ENCODER (0x09), so the host reads the raw response itself.
 */
export function parseCapabilities(body: readonly number[]): Map<number, number>[] {
  const pins: Map<number, number>[] = [];
  let cur = new Map<number, number>();
  for (let i = 0; i < body.length;) {
    if (body[i] === 0x7f) {
      pins.push(cur);
      cur = new Map();
      i++;
    } else {
      cur.set(body[i]!, body[i + 1] ?? 0);
      i += 2;
    }
  }
  return pins;
}

// ------------------------------------------------------------------ 7-bit data

/** Splits a value into 7-bit bytes, LSB first (`n` bytes). */
export function to7bit(value: number, n: number): number[] {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push(Math.floor(value / 2 ** (7 * i)) & 0x7f);
  return out;
}

/** A string as Firmata sends it: each byte as two 7-bit bytes, LSB first. */
export function encodeString7(s: string): number[] {
  const out: number[] = [];
  for (const b of Buffer.from(s, 'latin1')) out.push(b & 0x7f, (b >> 7) & 0x7f);
  return out;
}

/** Decodes Firmata's two-7-bit-bytes-per-char strings (a trailing NUL is dropped). */
export function decodeString7(data: readonly number[]): string {
  let s = '';
  for (let i = 0; i + 1 < data.length; i += 2) {
    const c = (data[i]! & 0x7f) | ((data[i + 1]! & 0x7f) << 7);
    if (c !== 0) s += String.fromCharCode(c & 0xff);
  }
  return s;
}

// ------------------------------------------------------------------ encoders

/** One encoder's position in an ENCODER_DATA reply. */
export interface EncoderPosition {
  /** Encoder number (0..MAX_ENCODERS-1). */
  encoder: number;
  /** Position [counts]. */
  count: number;
}

/**
 * The body of an ENCODER_DATA reply (after START_SYSEX ENCODER_DATA, before END_SYSEX): per encoder
 * `(sign << 6) | number`, then the magnitude's bits 0-6, 7-13, 14-20, 21-27 (FirmataEncoder's
 * `_reportEncoderPosition`; magnitudes beyond 28 bits wrap, as on the board).
 */
export function encodeEncoderPositions(list: readonly EncoderPosition[]): number[] {
  const out: number[] = [];
  for (const { encoder, count } of list) {
    const mag = Math.abs(count);
    out.push(((count < 0 ? 1 : 0) << 6) | (encoder & 0x3f), ...to7bit(mag, 4));
  }
  return out;
}

/** Decodes an ENCODER_DATA body; `undefined` when its length is not a multiple of 5 or a byte has bit 7 set. */
export function decodeEncoderPositions(body: readonly number[]): EncoderPosition[] | undefined {
  if (body.length === 0 || body.length % ENCODER_BYTES !== 0) return undefined;
  const out: EncoderPosition[] = [];
  for (let i = 0; i < body.length; i += ENCODER_BYTES) {
    for (let k = 0; k < ENCODER_BYTES; k++) if (body[i + k]! > 0x7f) return undefined;
    const head = body[i]!;
    const mag = body[i + 1]! + body[i + 2]! * 128 + body[i + 3]! * 16384 + body[i + 4]! * 2097152;
    out.push({ encoder: head & 0x3f, count: head & 0x40 ? -mag : mag });
  }
  return out;
}

// ------------------------------------------------------------------ the UART budget

/** Bits on the wire per byte (8N1). */
export const BITS_PER_BYTE = 10;

/** Bytes the board sends per sampling interval: one ENCODER_DATA reply, and one ANALOG_MESSAGE per potentiometer. */
export function reportBytes(encoders: number, potentiometers: number): number {
  return (encoders > 0 ? 3 + ENCODER_BYTES * encoders : 0) + 3 * potentiometers;
}

/**
 * Bytes the host sends per control cycle: one ANALOG_MESSAGE per motor (3 bytes; the EXTENDED_ANALOG
 * sysex for a PWM pin above 15, 6 bytes), and on a reversal johnny-five's `dir()` adds a PWM 0 and a
 * DIGITAL_MESSAGE per direction pin.
 */
export function motorBytes(motors: readonly MotorPins[], reversals = 0): number {
  let n = 0;
  for (const m of motors) n += m.pwm > 15 ? 6 : 3;
  for (let i = 0; i < Math.min(reversals, motors.length); i++) {
    const m = motors[i]!;
    n += (m.pwm > 15 ? 6 : 3) + 3 * ((m.dir !== undefined ? 1 : 0) + (m.cdir !== undefined ? 1 : 0));
  }
  return n;
}

/** Seconds the UART needs for `bytes` at `baud`. */
export function wireTime(bytes: number, baud: number): number {
  return (bytes * BITS_PER_BYTE) / baud;
}

/**
 * The shortest sampling interval [ms, integer] whose report fits the uplink with `load` (0..1) of the
 * baud rate: beyond that, the board's 64-byte transmit buffer fills, ConfigurableFirmata's
 * Serial.write() blocks its loop, reports come out at the rate the wire allows and age in the buffer.
 */
export function samplingIntervalFor(bytesPerReport: number, baud: number, load = 0.8): number {
  const ms = (wireTime(bytesPerReport, baud) * 1000) / load;
  return Math.max(MIN_SAMPLING_INTERVAL_MS, Math.ceil(ms - 1e-9));
}

/** What one control cycle costs on the wire and the rate that follows. */
export interface CycleBudget {
  baud: number;
  /** Board -> host bytes per cycle (one report). */
  upBytes: number;
  /** Host -> board bytes per cycle without a reversal. */
  downBytes: number;
  /** Host -> board bytes per cycle when every motor reverses. */
  downBytesReversing: number;
  /** Highest cycle rate the wire allows, continuous [Hz] (the slower direction, no reversals). */
  busLimitHz: number;
  /** The sampling interval twolink sets: the shortest whole number of ms in which both directions fit with `load` [ms]. */
  samplingIntervalMs: number;
  /** The loop rate that interval gives [Hz]: a new measurement per cycle. */
  loopHz: number;
}

export function cycleBudget(motors: readonly MotorPins[], encoders: number, potentiometers: number, baud: number, load = 0.8): CycleBudget {
  const upBytes = reportBytes(encoders, potentiometers);
  const downBytes = motorBytes(motors);
  const downBytesReversing = motorBytes(motors, motors.length);
  const bytesPerS = baud / BITS_PER_BYTE;
  const busLimitHz = bytesPerS / Math.max(upBytes, downBytes);
  // Both directions must fit the interval; the uplink (the report) is the larger one in practice.
  const samplingIntervalMs = samplingIntervalFor(Math.max(upBytes, downBytes), baud, load);
  return { baud, upBytes, downBytes, downBytesReversing, busLimitHz, samplingIntervalMs, loopHz: 1000 / samplingIntervalMs };
}

// ------------------------------------------------------------------ the framer

/** One Firmata message, as the framer splits it. */
export type FirmataMessage =
  /** START_SYSEX cmd body... END_SYSEX. */
  | { kind: 'sysex'; cmd: number; body: number[] }
  /** A command byte with its data bytes: ANALOG_MESSAGE | channel, a, b (the low nibble is `channel`). */
  | { kind: 'command'; cmd: number; channel: number; data: number[] };

/** Which side's byte stream a framer splits: the lengths of some messages differ by direction. */
export type FramerSide = 'board' | 'host';

/**
 * Data bytes after a command byte. REPORT_VERSION carries two bytes from the board and none from the
 * host; SET_PIN_MODE and SET_DIGITAL_PIN_VALUE exist only host -> board; SYSTEM_RESET has none.
 * `undefined`: not a command this side sends.
 */
export function dataBytes(cmd: number, from: FramerSide): number | undefined {
  const c = cmd < 0xf0 ? cmd & 0xf0 : cmd;
  switch (c) {
    case FIRMATA.ANALOG_MESSAGE:
    case FIRMATA.DIGITAL_MESSAGE:
      return 2;
    case FIRMATA.REPORT_VERSION:
      return from === 'board' ? 2 : 0;
    case FIRMATA.SET_PIN_MODE:
    case FIRMATA.SET_DIGITAL_PIN_VALUE:
      return from === 'host' ? 2 : undefined;
    case FIRMATA.REPORT_ANALOG:
    case FIRMATA.REPORT_DIGITAL:
      return from === 'host' ? 1 : undefined;
    case FIRMATA.SYSTEM_RESET:
      return from === 'host' ? 0 : undefined;
    default:
      return undefined;
  }
}

export interface FramerOptions {
  /** Whose bytes these are (the host's framer splits the board's bytes: `from: 'board'`). */
  from: FramerSide;
  /**
   * Longest sysex body kept [bytes]; the rest of a longer one is dropped, as the firmware's
   * MAX_DATA_BYTES (64) does. @default Infinity
   */
  maxSysex?: number;
  /**
   * A byte >= 0x80 inside a sysex: true = the sysex is abandoned and the byte starts a new message
   * (firmata.js); false = it is stored as data (FirmataClass::processInput). @default true
   */
  abortSysexOnCommand?: boolean;
}

/**
 * Splits a Firmata byte stream into messages: FirmataClass::processInput's state machine on the board
 * (`from: 'host'`) and the host's reading of the board's bytes (`from: 'board'`). Bytes that belong to
 * no message are counted in `stray`. Pure: `push` returns what it completed, in order.
 */
export class FirmataFramer {
  /** Bytes that belonged to no message (data without a command, unknown commands, broken sysex). */
  stray = 0;
  private readonly from: FramerSide;
  private readonly maxSysex: number;
  private readonly abortSysex: boolean;
  private sysex: number[] | undefined;
  private cmd = 0;
  private need = 0;
  private data: number[] = [];

  constructor(o: FramerOptions) {
    this.from = o.from;
    this.maxSysex = o.maxSysex ?? Infinity;
    this.abortSysex = o.abortSysexOnCommand ?? true;
  }

  /** A message is being received (part of it has arrived). */
  get busy(): boolean {
    return this.sysex !== undefined || this.need > 0;
  }

  /** Forgets a half-received message (a reset). */
  clear(): void {
    this.sysex = undefined;
    this.need = 0;
  }

  /** Feeds bytes; returns the messages they completed. */
  push(bytes: Iterable<number>): FirmataMessage[] {
    const out: FirmataMessage[] = [];
    for (const b of bytes) this.byte(b, out);
    return out;
  }

  private byte(b: number, out: FirmataMessage[]): void {
    if (this.sysex) {
      if (b === FIRMATA.END_SYSEX) {
        const [cmd, ...body] = this.sysex;
        this.sysex = undefined;
        if (cmd !== undefined) out.push({ kind: 'sysex', cmd, body });
        else this.stray += 2;
        return;
      }
      if (b < 0x80 || !this.abortSysex) {
        if (this.sysex.length < this.maxSysex + 1) this.sysex.push(b);
        return;
      }
      this.stray += this.sysex.length + 1;
      this.sysex = undefined;
    }
    if (this.need > 0 && b < 0x80) {
      this.data.push(b);
      if (--this.need === 0)
        out.push({ kind: 'command', cmd: this.cmd < 0xf0 ? this.cmd & 0xf0 : this.cmd, channel: this.cmd & 0x0f, data: this.data });
      return;
    }
    if (this.need > 0) this.stray += 1 + this.data.length;
    this.need = 0;
    if (b === FIRMATA.START_SYSEX) {
      this.sysex = [];
      return;
    }
    const n = b >= 0x80 ? dataBytes(b, this.from) : undefined;
    if (n === undefined) {
      this.stray++;
      return;
    }
    this.cmd = b;
    this.data = [];
    if (n === 0) out.push({ kind: 'command', cmd: b < 0xf0 ? b & 0xf0 : b, channel: b & 0x0f, data: [] });
    else this.need = n;
  }
}

// ------------------------------------------------------------------ the watchdog feature

/** FirmataWatchdog subcommands (the byte after WATCHDOG_DATA; firmware-protocol/firmata-watchdog/). */
export const WATCHDOG = {
  /** host: `F0 0E 00 F7`; board: `F0 0E 00 version timeoutLSB timeoutMSB F7` (timeout 0 = not armed). */
  QUERY: 0x00,
  /** host: `F0 0E 01 timeoutLSB timeoutMSB pin... F7` (timeout 0 disarms); board: the same reply as QUERY. */
  ARM: 0x01,
  /** board: `F0 0E 02 zeroed silentLSB silentMSB F7`: it zeroed `zeroed` PWM pins that were not at 0 after `silent` ms without a message. */
  FIRED: 0x02,
} as const;

/** The watchdog protocol version this host speaks. */
export const WATCHDOG_VERSION = 1;

/** The longest timeout the ARM command carries [ms] (two 7-bit bytes). */
export const WATCHDOG_MAX_MS = 16383;

/** The watchdog's answer to QUERY or ARM. */
export interface WatchdogStatus {
  version: number;
  /** Timeout armed [ms]; 0 = not armed. */
  timeoutMs: number;
  /** PWM pins it zeroes. */
  pins: number[];
}

/** The body of an ARM command (after WATCHDOG_DATA). */
export function encodeWatchdogArm(timeoutMs: number, pins: readonly number[]): number[] {
  const ms = Math.max(0, Math.min(WATCHDOG_MAX_MS, Math.round(timeoutMs)));
  return [WATCHDOG.ARM, ms & 0x7f, (ms >> 7) & 0x7f, ...pins.map((p) => p & 0x7f)];
}

/** The body of a status reply (after WATCHDOG_DATA): `sub version timeoutLSB timeoutMSB pin...`. */
export function encodeWatchdogStatus(sub: number, s: WatchdogStatus): number[] {
  return [sub, s.version & 0x7f, s.timeoutMs & 0x7f, (s.timeoutMs >> 7) & 0x7f, ...s.pins.map((p) => p & 0x7f)];
}

/** Decodes a WATCHDOG_DATA body from the board; undefined when malformed. */
export function decodeWatchdog(
  body: readonly number[],
): { kind: 'status'; status: WatchdogStatus } | { kind: 'fired'; zeroed: number; silentMs: number } | undefined {
  if (body.some((b) => b > 0x7f)) return undefined;
  const [sub, a, b, c] = body;
  if ((sub === WATCHDOG.QUERY || sub === WATCHDOG.ARM) && a !== undefined && b !== undefined && c !== undefined) {
    return { kind: 'status', status: { version: a, timeoutMs: b | (c << 7), pins: body.slice(4) } };
  }
  if (sub === WATCHDOG.FIRED && a !== undefined && b !== undefined && c !== undefined)
    return { kind: 'fired', zeroed: a, silentMs: b | (c << 7) };
  return undefined;
}

// ------------------------------------------------------------------ the AVR's clock

/** Timer0 overflow period of a 16 MHz AVR with the Arduino core's prescaler of 64 [s]: 64 * 256 / 16 MHz. */
export const TIMER0_OVERFLOW_S = 0.001024;

/**
 * What `millis()` returns on a 16 MHz AVR (Arduino core wiring.c) after `overflows` Timer0 overflows:
 * each overflow adds 1 ms and 3/125 of a ms to a fraction; when the fraction reaches a whole ms, millis()
 * jumps by 2. It is right on average and advances in steps of 1.024 ms, with a 2 ms step every 41-42
 * overflows (~42.7 ms). `fract0` (0..124) is the fraction at overflow 0.
 */
export function avrMillis(overflows: number, fract0 = 0): number {
  const n = Math.max(0, Math.floor(overflows));
  return n + Math.floor((3 * n + fract0) / 125);
}

/** The first Timer0 overflow at which millis() (avrMillis) reaches `ms`. */
export function overflowWhenMillis(ms: number, fract0 = 0): number {
  let n = Math.max(0, Math.floor(((ms - 1) * 125 - fract0) / 128) - 1);
  while (avrMillis(n, fract0) < ms) n++;
  return n;
}

/**
 * The sampling interval for a loop rate [ms, whole]: the rig file's when it sets one (> 0), else the
 * nearest whole ms to 1 / hz but never shorter than the budget's (what the wire carries); undefined
 * `hz`: the budget's. A warning when the report does not fit the interval on the wire.
 */
export function chooseInterval(b: CycleBudget, configuredMs: number, hz: number | undefined): { ms: number; warning?: string } {
  let ms = b.samplingIntervalMs;
  if (configuredMs > 0) ms = configuredMs;
  else if (hz !== undefined && hz > 0) ms = Math.max(b.samplingIntervalMs, Math.round(1000 / hz));
  const needMs = wireTime(b.upBytes, b.baud) * 1000;
  if (ms >= needMs) return { ms };
  const oldestMs = wireTime(64, b.baud) * 1000 + needMs; // a full 64-byte transmit buffer ahead of it
  return {
    ms,
    warning:
      `firmata.samplingIntervalMs ${ms} ms is shorter than the ${needMs.toFixed(2)} ms a ${b.upBytes}-byte report takes at ${b.baud} baud: ` +
      `reports will queue in the board's transmit buffer and arrive up to ${oldestMs.toFixed(0)} ms old (0 = automatic: ${b.samplingIntervalMs} ms)`,
  };
}
