/**
 * Two ConfigurableFirmata features of the emulated board (src/mock/firmata-board.ts), each as the
 * firmware's feature class does it:
 * - FirmataEncoder 0.1.0 (sysex 0x61): attach (which reports the position once; an encoder number that
 *   is already attached is ignored without a reply, as the library does), report one/all, reset,
 *   auto-report (0 off, 1 always, 2 on change), detach;
 * - AnalogInputFirmata: REPORT_ANALOG per channel, a potentiometer joint's angle through its mapping,
 *   with ADC noise, reported every sampling interval;
 * - twolink's FirmataWatchdog (sysex 0x0E, firmware-protocol/firmata-watchdog/): armed with a timeout
 *   and PWM pins, it writes 0 to those pins when no Firmata message arrived for the timeout, and says
 *   so once.
 */
import {
  ENCODER,
  encodeEncoderPositions,
  encodeWatchdogStatus,
  FIRMATA,
  MAX_ENCODERS,
  MODE,
  WATCHDOG,
  WATCHDOG_VERSION,
  type WatchdogStatus,
} from '../protocol/firmata.js';
import type { BoardLayout } from '../protocol/firmata.js';
import type { LinkSensorSpec, MotorPins, SensorSpec } from '../protocol/firmata-wiring.js';
import type { Noise } from './plant.js';

/** What a feature may use of the board. */
export interface FeatureBoard {
  /** millis() [ms]. */
  millis(): number;
  /** A pin's mode and output state (undefined: no such pin). */
  pin(pin: number): { mode: number; state: number } | undefined;
  /** FirmataClass::setPinMode as a feature calls it. */
  setPinMode(pin: number, mode: number): void;
  /** analogWriteCallback. */
  analogWrite(pin: number, value: number): void;
  /** Sends a report (counted with the reports). */
  report(bytes: number[]): void;
  /** Sends a message. */
  send(bytes: number[]): void;
  /** The encoder count of a joint [counts] (the plant's, now). */
  counts(joint: number): number;
  /** How each joint's sensor is wired. */
  sensors: readonly SensorSpec[];
}

interface Encoder {
  pinA: number;
  pinB: number;
  /** The joint whose encoder is wired to these pins, or null (nothing connected: reads 0). */
  joint: number | null;
  /** -1 when A and B are swapped relative to the wiring. */
  sign: 1 | -1;
  /** Raw count at the last reset. */
  offset: number;
  /** Position in the last report (for auto-report "on change"). */
  last: number | undefined;
}

/** FirmataEncoder 0.1.0. */
export class EncoderFeature {
  /** Attach requests ignored because the number was already attached (no reply, as the library). */
  ignoredAttaches = 0;
  private encoders: (Encoder | undefined)[] = [];
  private autoReport = 2;

  constructor(private readonly b: FeatureBoard) {}

  /** FirmataEncoder::reset (SYSTEM_RESET): every encoder detached. */
  reset(): void {
    this.encoders = [];
    this.autoReport = 2;
  }

  /** Auto-reporting is on and something is attached. */
  get reporting(): boolean {
    return this.autoReport > 0 && this.encoders.some((e) => e !== undefined);
  }

  /** handleSysex for ENCODER_DATA; false = not understood. */
  handleSysex(argv: readonly number[]): boolean {
    const sub = argv[0];
    const n = argv[1] ?? 0;
    switch (sub) {
      case ENCODER.ATTACH:
        return this.attach(n, argv[2], argv[3]);
      case ENCODER.REPORT_POSITION:
        if (this.encoders[n]) this.send([n]);
        return true;
      case ENCODER.REPORT_POSITIONS:
        this.send(this.attached());
        return true;
      case ENCODER.RESET_POSITION: {
        const e = this.encoders[n];
        if (e) e.offset = this.raw(e);
        return true;
      }
      case ENCODER.REPORT_AUTO:
        this.autoReport = n;
        return true;
      case ENCODER.DETACH:
        this.encoders[n] = undefined;
        return true;
    }
    return false;
  }

  private attach(n: number, pinA: number | undefined, pinB: number | undefined): boolean {
    if (pinA === undefined || pinB === undefined) return false;
    if (this.b.pin(pinA)?.mode === MODE.IGNORE || this.b.pin(pinB)?.mode === MODE.IGNORE) return false;
    if (n >= MAX_ENCODERS) return true;
    if (this.encoders[n]) {
      // FirmataEncoder::attachEncoder: "if (isEncoderAttached(encoderNum)) return;" (its warning string is commented out)
      this.ignoredAttaches++;
      return true;
    }
    // The firmware sets both pins to ENCODER through setPinMode: a pin without an interrupt gets
    // "Unknown pin mode", and the encoder still attaches (the Encoder library then polls it).
    this.b.setPinMode(pinA, MODE.ENCODER);
    this.b.setPinMode(pinB, MODE.ENCODER);
    let joint: number | null = null;
    let sign: 1 | -1 = 1;
    this.b.sensors.forEach((s, j) => {
      if (s.type !== 'encoder') return;
      if (s.pinA === pinA && s.pinB === pinB) joint = j;
      else if (s.pinA === pinB && s.pinB === pinA) {
        joint = j;
        sign = -1;
      }
    });
    // FirmataEncoder makes a new Encoder, which counts from 0: from the arm's pose now.
    const e: Encoder = { pinA, pinB, joint, sign, offset: 0, last: undefined };
    e.offset = this.raw(e);
    this.encoders[n] = e;
    this.send([n]);
    return true;
  }

  private attached(): number[] {
    const out: number[] = [];
    for (let i = 0; i < this.encoders.length; i++) if (this.encoders[i]) out.push(i);
    return out;
  }

  private raw(e: Encoder): number {
    return e.joint === null ? 0 : e.sign * this.b.counts(e.joint);
  }

  private position(e: Encoder): number {
    return Math.max(-2147483648, Math.min(2147483647, this.raw(e) - e.offset));
  }

  private send(list: readonly number[]): void {
    if (list.length === 0) return;
    const positions = list.map((n) => {
      const e = this.encoders[n]!;
      const count = this.position(e);
      e.last = count;
      return { encoder: n, count };
    });
    this.b.report([FIRMATA.START_SYSEX, FIRMATA.ENCODER_DATA, ...encodeEncoderPositions(positions), FIRMATA.END_SYSEX]);
  }

  /** The sampling-interval report (auto-report 1: always; 2: the encoders that moved). */
  report(): void {
    if (this.autoReport === 0) return;
    this.send(this.attached().filter((n) => this.autoReport === 1 || this.encoders[n]!.last !== this.position(this.encoders[n]!)));
  }
}

/** twolink's FirmataWatchdog (firmware-protocol/firmata-watchdog/FirmataWatchdog.cpp). */
export class WatchdogFeature {
  /** Times it zeroed the pins. */
  fired = 0;
  private timeoutMs = 0;
  private pins: number[] = [];
  private lastMessageMs = 0;
  private tripped = false;

  constructor(private readonly b: FeatureBoard) {}

  /** reset(): disarmed. */
  reset(): void {
    this.timeoutMs = 0;
    this.pins = [];
    this.tripped = false;
  }

  /** Armed: when the next check is due [millis], else undefined. */
  get dueMillis(): number | undefined {
    return this.timeoutMs > 0 && !this.tripped ? this.lastMessageMs + this.timeoutMs + 1 : undefined;
  }

  get status(): WatchdogStatus {
    return { version: WATCHDOG_VERSION, timeoutMs: this.timeoutMs, pins: this.pins.slice() };
  }

  /** Every complete Firmata message from the host feeds it. */
  feed(): void {
    this.lastMessageMs = this.b.millis();
    this.tripped = false;
  }

  handleSysex(argv: readonly number[]): boolean {
    const sub = argv[0];
    if (sub === WATCHDOG.QUERY) {
      this.b.send([FIRMATA.START_SYSEX, FIRMATA.WATCHDOG_DATA, ...encodeWatchdogStatus(WATCHDOG.QUERY, this.status), FIRMATA.END_SYSEX]);
      return true;
    }
    if (sub === WATCHDOG.ARM && argv.length >= 3) {
      this.timeoutMs = argv[1]! | (argv[2]! << 7);
      this.pins = argv.slice(3, 3 + 8).map((p) => p & 0x7f);
      this.feed();
      this.b.send([FIRMATA.START_SYSEX, FIRMATA.WATCHDOG_DATA, ...encodeWatchdogStatus(WATCHDOG.ARM, this.status), FIRMATA.END_SYSEX]);
      return true;
    }
    return false;
  }

  /** The sketch's loop() calls it every pass: after the timeout, the pins go to 0, once per silence. */
  check(): void {
    if (this.timeoutMs === 0 || this.tripped) return;
    const silent = this.b.millis() - this.lastMessageMs;
    if (silent <= this.timeoutMs) return;
    this.tripped = true;
    let zeroed = 0;
    for (const p of this.pins) {
      const st = this.b.pin(p);
      if (st?.mode !== MODE.PWM) continue;
      if (st.state !== 0) zeroed++;
      this.b.analogWrite(p, 0);
    }
    this.fired++;
    const s = Math.min(16383, silent);
    this.b.send([FIRMATA.START_SYSEX, FIRMATA.WATCHDOG_DATA, WATCHDOG.FIRED, zeroed & 0x7f, s & 0x7f, (s >> 7) & 0x7f, FIRMATA.END_SYSEX]);
  }
}

/** AnalogInputFirmata: potentiometers on the analog channels. */
export class AnalogInputFeature {
  private readonly channels = new Set<number>();

  constructor(
    private readonly b: FeatureBoard,
    private readonly layout: BoardLayout,
    private readonly adc: {
      noise: Noise;
      noiseLsb: number;
      angle: (joint: number) => number | undefined;
      linkSensors?: readonly (LinkSensorSpec | null | undefined)[] | undefined;
    },
  ) {}

  reset(): void {
    this.channels.clear();
  }

  get reporting(): boolean {
    return this.channels.size > 0;
  }

  /** REPORT_ANALOG: on (the value is sent at once unless the board is resetting) or off. */
  reportAnalog(channel: number, on: number, sendNow: boolean): void {
    if (channel >= this.layout.analogPins.length) return;
    if (on === 0) {
      this.channels.delete(channel);
      return;
    }
    this.channels.add(channel);
    if (sendNow) this.b.report(this.message(channel));
  }

  /**
   * analogRead() of a channel: a potentiometer joint's angle through its mapping (a joint's sensor, or
   * a link-side sensor beside its encoder: both on the joint, after the gearbox), else 0.
   */
  value(channel: number): number {
    const j = this.b.sensors.findIndex((s) => s.type === 'potentiometer' && s.channel === channel);
    const main = this.b.sensors[j];
    const linkJ = j >= 0 ? -1 : (this.adc.linkSensors?.findIndex((s) => s?.channel === channel) ?? -1);
    const s = main?.type === 'potentiometer' ? main : linkJ >= 0 ? this.adc.linkSensors![linkJ] : undefined;
    const rad = j >= 0 ? this.adc.angle(j) : linkJ >= 0 ? this.adc.angle(linkJ) : undefined;
    if (!s || rad === undefined) return 0;
    const deg = (rad * 180) / Math.PI;
    const raw = s.rawAtMin + ((deg - s.minDeg) / (s.maxDeg - s.minDeg)) * (s.rawAtMax - s.rawAtMin);
    const noisy = raw + this.adc.noiseLsb * this.adc.noise.gaussian();
    return Math.max(0, Math.min(1023, Math.round(noisy)));
  }

  private message(channel: number): number[] {
    const v = this.value(channel);
    return [FIRMATA.ANALOG_MESSAGE | channel, v & 0x7f, (v >> 7) & 0x7f];
  }

  /** The sampling-interval report: every reporting channel whose pin is in ANALOG mode, in channel order. */
  report(): void {
    for (const ch of [...this.channels].sort((a, b) => a - b)) {
      if (this.b.pin(this.layout.analogPins[ch]!)?.mode === MODE.ANALOG) this.b.report(this.message(ch));
    }
  }
}

/**
 * An H-bridge channel: its pins' states -> a signed duty (-1..1). PWM from a PWM pin (or full from an
 * output pin), the direction pin's level, inverted PWM on some shields, braked when both direction legs
 * agree, the brake pin high or the enable pin low.
 */
export function bridgeDuty(m: MotorPins, pin: (p: number) => { mode: number; state: number } | undefined, layout: BoardLayout): number {
  const level = (p: number | undefined): number => {
    const st = p === undefined ? undefined : pin(p);
    return st && st.mode === MODE.OUTPUT ? st.state : 0;
  };
  const pwmPin = pin(m.pwm);
  let pwm = 0;
  if (pwmPin?.mode === MODE.PWM && layout.pwm.has(m.pwm)) pwm = Math.min(255, pwmPin.state) / 255;
  else if (pwmPin?.mode === MODE.OUTPUT) pwm = pwmPin.state ? 1 : 0;
  const dir = m.dir === undefined ? 1 : level(m.dir);
  if (m.invertPWM && dir === 1) pwm = 1 - pwm;
  if (m.cdir !== undefined && level(m.cdir) === dir) return 0;
  if (m.brake !== undefined && level(m.brake) === 1) return 0;
  if (m.enable !== undefined && level(m.enable) === 0) return 0;
  return pwm === 0 ? 0 : dir === 1 ? pwm : -pwm;
}
