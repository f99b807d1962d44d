/**
 * The mock rig's board when it runs stock firmware: it speaks Firmata as ConfigurableFirmata 2.10
 * with the FirmataEncoder feature does on an Uno or a Mega (a build with digital and analog I/O,
 * servo, I2C and the encoder, as docs/firmata.md suggests), and drives a Plant. It is LineBoard's
 * sibling: transport-agnostic (`receive(bytes)` / `onTransmit`), timed by an injected Clock, so it
 * runs in virtual time (tests) and in real time (the pty rig).
 *
 * What it does as the firmware does:
 * - boot: REPORT_VERSION and the firmware name; on a port without a DTR reset (a pty) the host would
 *   miss them, so they repeat every 250 ms until the host sends its first byte;
 * - the queries johnny-five needs for `ready`: firmware, capabilities, analog mapping; pin state;
 * - SET_PIN_MODE: the mode is recorded, and a mode no feature accepts for that pin (PWM on a pin
 *   without PWM, ENCODER on a pin without an interrupt) is answered with the string "Unknown pin mode";
 * - analog writes (ANALOG_MESSAGE, EXTENDED_ANALOG) on PWM pins, digital port writes on OUTPUT pins;
 *   the rig's motor wiring turns pin states into a signed duty for the plant (after the board latency);
 *   writes to pins in another mode are ignored, as analogWriteCallback ignores them;
 * - FirmataEncoder (sysex 0x61): attach (which reports the position once; a number already attached is
 *   ignored without a reply, as FirmataEncoder 0.1.0 does), report one/all, reset, auto-report (0 off,
 *   1 always, 2 on change: the default after a reset), detach (src/mock/firmata-features.ts);
 * - optionally twolink's FirmataWatchdog (sysex 0x0E): zeroes the armed PWM pins after a silence;
 * - millis() as a 16 MHz AVR's Timer0 makes it: 1.024 ms steps with a 2 ms step every ~42 ms, so
 *   reports every "3 ms" leave 3.072 ms apart with a 2.048 ms one every ~42 ms;
 * - analog reporting of potentiometer channels; the sampling interval (sysex 0x7A, 1 ms minimum);
 * - an unknown sysex is answered with the string "Unhandled sysex command".
 *
 * And the UART as an AVR has it: bytes take 10 bit times each way; the receive buffer holds 64 bytes
 * (more arriving while the firmware is busy are lost); the transmit buffer holds 64 bytes and
 * Serial.write() blocks when it is full, so a report that does not fit the sampling interval stalls
 * the firmware's loop: reports go out at the rate the wire allows, they age in the buffer, and the
 * host's commands wait.
 */
import {
  avrMillis,
  BOARDS,
  capabilities,
  DEFAULT_SAMPLING_INTERVAL_MS,
  encodeCapabilities,
  encodeString7,
  FIRMATA,
  FirmataFramer,
  MIN_SAMPLING_INTERVAL_MS,
  MODE,
  overflowWhenMillis,
  TIMER0_OVERFLOW_S,
  type BoardLayout,
  type FirmataMessage,
  type FirmwareFeatures,
} from '../protocol/firmata.js';
import type { Clock, TimerHandle } from '../time/clock.js';
import type { MockEnd } from './binding.js';
import { AnalogInputFeature, bridgeDuty, EncoderFeature, WatchdogFeature, type FeatureBoard } from './firmata-features.js';
import { CONFIGURABLE_FIRMATA, type FirmataBoardOptions, type FirmwareId, type RefusedMode } from './firmata-board-options.js';
import { Noise, type Plant } from './plant.js';

export {
  CONFIGURABLE_FIRMATA,
  type FirmataBoardOptions,
  type FirmataSensorSpec,
  type FirmwareId,
  type RefusedMode,
} from './firmata-board-options.js';

interface PinState {
  mode: number;
  /** Output value (digital 0/1, PWM 0..255), or 1 for an input with its pull-up on. */
  state: number;
}

const EPS = 1e-12;

export class FirmataBoard implements MockEnd {
  /** Called with bytes as they finish leaving the UART. */
  onTransmit: (bytes: Buffer) => void = () => {};
  /** Switchable injections: `silent` = the board sends and applies nothing (a hung board, or not Firmata at all). */
  readonly injected = { silent: false };
  /** Counters, for tests and the bench. */
  readonly stats = {
    rxBytes: 0,
    txBytes: 0,
    /** Host messages parsed. */
    messages: 0,
    /** SET_PIN_MODE requests no feature accepted. */
    refused: [] as RefusedMode[],
    /** Analog/digital writes to pins whose mode does not drive them. */
    ignoredWrites: 0,
    unknownSysex: 0,
    /** Strings the board sent (STRING_DATA). */
    strings: [] as string[],
    /** Encoder/analog reports sent, and their bytes. */
    reports: 0,
    reportBytes: 0,
    /** Report age at its last byte on the wire [s]: sum and max (time spent in the transmit buffer). */
    reportAgeSumS: 0,
    reportAgeMaxS: 0,
    /** Bytes lost because the receive buffer was full. */
    rxOverflow: 0,
    /** Time the firmware's loop spent blocked in Serial.write() [s]. */
    blockedS: 0,
    /** Bytes garbled by a baud rate mismatch. */
    garbled: 0,
    /** Changes of the motor duty. */
    dutyChanges: 0,
    resets: 0,
  };
  /** Duty the plant is getting per joint (-1..1), after the board latency. */
  readonly appliedDuty: number[];
  /**
   * The baud rate the host's port is set to, when the binding knows it: when it differs from the
   * board's, bytes arrive as garbage both ways, as on a real line.
   */
  hostBaudRate: number | undefined;

  private readonly clock: Clock;
  private readonly plant: Plant;
  private readonly layout: BoardLayout;
  private readonly features: FirmwareFeatures;
  private readonly firmware: FirmwareId;
  private readonly byteTime: number;
  private readonly txBuffer: number;
  private readonly rxBuffer: number;
  private readonly analogOfPin = new Map<number, number>();
  private pins: PinState[] = [];
  /** FirmataEncoder. */
  readonly encoder: EncoderFeature;
  /** FirmataWatchdog, when the firmware has it. */
  readonly watchdog: WatchdogFeature | undefined;
  /** AnalogInputFirmata. */
  private readonly analog: AnalogInputFeature;
  private intervalMs = DEFAULT_SAMPLING_INTERVAL_MS;
  private prevMs = 0;
  private bootTime = 0;
  private bootDoneAt = 0;
  private hostTalked = false;
  private resetting = false;
  // FirmataClass::processInput: MAX_DATA_BYTES 64 including the command byte; bytes >= 0x80 inside a sysex are stored
  private readonly framer = new FirmataFramer({ from: 'host', maxSysex: 63, abortSysexOnCommand: false });
  // UART and loop
  private rxFreeAt = 0;
  private inflight: { at: number; b: number }[] = [];
  private ring: number[] = [];
  private txFreeAt = 0;
  private loopFreeAt = 0;
  private wakeAt = Infinity;
  private wakeTimer: TimerHandle | undefined;
  private versionTimer: TimerHandle | undefined;
  private lastDuty: number[];
  /** Hears every change of the motors' duty as the pins take it (before the board latency): `twolink rig --report`'s motor reports. */
  onDuty: ((duty: readonly number[]) => void) | undefined;
  /** Hears each answer to a host's REPORT_VERSION or REPORT_FIRMWARE query (its handshake): the pty rig's injections count from the first. */
  onIdentify: (() => void) | undefined;
  private disposed = false;

  constructor(private readonly o: FirmataBoardOptions) {
    this.clock = o.clock;
    this.plant = o.plant;
    this.layout = o.layout ?? BOARDS.uno;
    this.features = o.features ?? { encoder: true };
    this.firmware = o.firmware ?? CONFIGURABLE_FIRMATA;
    this.byteTime = 10 / o.baudRate;
    this.txBuffer = o.txBuffer ?? 64;
    this.rxBuffer = o.rxBuffer ?? 64;
    this.layout.analogPins.forEach((p, ch) => this.analogOfPin.set(p, ch));
    this.appliedDuty = new Array<number>(o.plant.joints).fill(0);
    this.lastDuty = this.appliedDuty.slice();
    const services: FeatureBoard = {
      millis: () => this.millis(),
      pin: (pin) => this.pins[pin],
      setPinMode: (pin, mode) => this.setPinMode(pin, mode),
      analogWrite: (pin, value) => this.analogWrite(pin, value),
      report: (bytes) => this.writeReport(bytes),
      send: (bytes) => this.write(bytes),
      counts: (joint) => {
        this.plant.advance(this.clock.now());
        return this.plant.counts()[joint] ?? 0;
      },
      sensors: o.sensors,
    };
    this.encoder = new EncoderFeature(services);
    this.analog = new AnalogInputFeature(services, this.layout, {
      noise: new Noise(Math.floor(o.random() * 2 ** 31)),
      noiseLsb: o.adcNoiseLsb ?? 0.5,
      angle: (j) => {
        this.plant.advance(this.clock.now());
        return j < this.plant.joints ? this.plant.q[j] : undefined;
      },
      linkSensors: o.linkSensors,
    });
    this.watchdog = this.features.watchdog ? new WatchdogFeature(services) : undefined;
    this.boot();
  }

  /** The pin set. */
  get board(): BoardLayout {
    return this.layout;
  }

  /** The sampling interval in force [ms]. */
  get samplingIntervalMs(): number {
    return this.intervalMs;
  }

  /** Mode and state of a pin, as a PIN_STATE_QUERY would report them. */
  pin(pin: number): { mode: number; state: number } {
    const p = this.pins[pin];
    return p ? { ...p } : { mode: MODE.IGNORE, state: 0 };
  }

  /** Power-on: pins to their defaults, features reset, the boot messages after the boot delay. */
  private boot(): void {
    const now = this.clock.now();
    this.clock.clearTimer(this.versionTimer);
    this.bootTime = now;
    this.bootDoneAt = now + (this.o.bootDelayS ?? 0);
    this.hostTalked = false;
    this.framer.clear();
    this.ring = [];
    this.pins = Array.from({ length: this.layout.totalPins }, () => ({ mode: MODE.INPUT, state: 0 }));
    this.systemReset();
    this.versionTimer = this.clock.setTimer(this.bootDoneAt - now, () => this.announce());
  }

  /** Resets the board as a DTR pulse or a brown-out would (the host sees the boot messages again). */
  reset(): void {
    this.stats.resets++;
    this.boot();
  }

  /** Stops every timer (the rig is shutting down). */
  dispose(): void {
    this.disposed = true;
    this.clock.clearTimer(this.versionTimer);
    this.clock.clearTimer(this.wakeTimer);
  }

  private announce(): void {
    if (this.disposed) return;
    this.printVersion();
    this.printFirmware();
    const every = this.o.versionRepeatS ?? 0.25;
    if (every > 0 && !this.hostTalked) this.versionTimer = this.clock.setTimer(every, () => this.announce());
  }

  /** SYSTEM_RESET: what ConfigurableFirmata.ino's systemResetCallback and the features' reset() do. */
  private systemReset(): void {
    this.resetting = true;
    const analog = new Set(this.layout.analogPins);
    for (let p = 0; p < this.layout.totalPins; p++) {
      if (analog.has(p)) this.setPinMode(p, MODE.ANALOG);
      else if (this.layout.digital(p)) this.setPinMode(p, MODE.OUTPUT);
    }
    this.encoder?.reset();
    this.watchdog?.reset();
    this.analog?.reset();
    this.intervalMs = DEFAULT_SAMPLING_INTERVAL_MS;
    this.prevMs = this.millis();
    this.resetting = false;
    this.updateMotors();
  }

  /** millis(): Timer0 overflows since power-on, through the Arduino core's arithmetic. */
  millis(): number {
    return avrMillis(this.overflows(this.clock.now()), this.o.millisFract0 ?? 0);
  }

  private overflows(t: number): number {
    return Math.floor((t - this.bootTime) / TIMER0_OVERFLOW_S + 1e-9);
  }

  /** Board time when millis() first reads `ms` [s, clock time]. */
  private whenMillis(ms: number): number {
    return this.bootTime + overflowWhenMillis(ms, this.o.millisFract0 ?? 0) * TIMER0_OVERFLOW_S;
  }

  // ------------------------------------------------------------------ the UART

  /** Applies a baud rate mismatch: most bytes become other bytes, some are lost (framing errors). */
  private garble(bytes: Iterable<number>): number[] {
    const out: number[] = [];
    const wrong = this.hostBaudRate !== undefined && this.hostBaudRate !== this.o.baudRate;
    for (const b of bytes) {
      if (!wrong) {
        out.push(b);
        continue;
      }
      this.stats.garbled++;
      if (this.o.random() < 0.3) continue;
      out.push(Math.floor(this.o.random() * 256));
    }
    return out;
  }

  /** Bytes from the host: they arrive at the UART's pace and wait in the receive buffer for the loop. */
  receive(bytes: Uint8Array): void {
    if (this.disposed) return;
    const now = this.clock.now();
    const data = this.garble(bytes);
    let at = Math.max(now, this.rxFreeAt);
    for (const b of data) {
      at += this.byteTime;
      this.inflight.push({ at, b });
    }
    this.rxFreeAt = Math.max(this.rxFreeAt, now + bytes.length * this.byteTime);
    if (this.inflight.length > 0) this.wake(this.inflight[0]!.at);
  }

  /** Firmata.write(): queues bytes on the UART; blocks the loop while the transmit buffer is full. */
  private write(bytes: readonly number[]): void {
    if (this.injected.silent || this.disposed || bytes.length === 0) return;
    const now = this.clock.now();
    const start = Math.max(now, this.txFreeAt);
    const done = start + bytes.length * this.byteTime;
    this.txFreeAt = done;
    // Serial.write() returns when the last byte is in the buffer: when at most txBuffer bytes are left to send.
    const returns = done - this.txBuffer * this.byteTime;
    const busyFrom = Math.max(now, this.loopFreeAt);
    if (returns > busyFrom) {
      this.stats.blockedS += returns - busyFrom;
      this.loopFreeAt = returns;
    }
    this.stats.txBytes += bytes.length;
    const out = Buffer.from(this.garble(bytes));
    this.clock.setTimer(done - now, () => {
      if (!this.disposed && out.length > 0) this.onTransmit(out);
    });
  }

  private wake(t: number): void {
    if (this.disposed) return;
    if (t >= this.wakeAt - EPS) return;
    this.clock.clearTimer(this.wakeTimer);
    this.wakeAt = t;
    this.wakeTimer = this.clock.setTimer(Math.max(0, t - this.clock.now()), () => {
      this.wakeAt = Infinity;
      this.wakeTimer = undefined;
      this.loop();
    });
  }

  /** One pass of the firmware's loop(): read what has arrived, then report if the interval elapsed. */
  private loop(): void {
    if (this.disposed) return;
    const now = this.clock.now();
    const notBefore = Math.max(this.loopFreeAt, this.bootDoneAt);
    if (now < notBefore - EPS) {
      this.wake(notBefore);
      return;
    }
    // Bytes that have arrived enter the receive buffer; while the firmware's loop was blocked (in
    // Serial.write) it may have filled. A byte that arrived while the loop ran was read at once: when
    // this timer fires late (the rig's own process was starved: not something a board does) it is not lost.
    while (this.inflight.length > 0 && this.inflight[0]!.at <= now + EPS) {
      const { at, b } = this.inflight.shift()!;
      if (this.ring.length < this.rxBuffer || at >= this.loopFreeAt) this.ring.push(b);
      else this.stats.rxOverflow++;
    }
    if (this.ring.length > 0 && !this.injected.silent && !this.hostTalked) {
      this.hostTalked = true;
      this.clock.clearTimer(this.versionTimer);
    }
    while (this.ring.length > 0) {
      const b = this.ring.shift()!;
      this.stats.rxBytes++;
      if (!this.injected.silent) for (const m of this.framer.push([b])) this.onMessage(m);
      if (this.loopFreeAt > now + EPS) {
        this.wake(this.loopFreeAt);
        return;
      }
    }
    if (this.reportingActive()) {
      // FirmataReporting::elapsed()
      const ms = this.millis();
      if (ms - this.prevMs > this.intervalMs) {
        this.prevMs += this.intervalMs;
        if (ms - this.prevMs > this.intervalMs) this.prevMs = ms - this.intervalMs;
        this.report();
      }
      this.wake(Math.max(this.loopFreeAt, this.whenMillis(this.prevMs + this.intervalMs + 1)));
    }
    if (this.watchdog && !this.injected.silent) {
      this.watchdog.check();
      const due = this.watchdog.dueMillis;
      if (due !== undefined) this.wake(Math.max(this.loopFreeAt, this.whenMillis(due)));
    }
    if (this.inflight.length > 0) this.wake(Math.max(this.loopFreeAt, this.inflight[0]!.at));
  }

  // ------------------------------------------------------------------ messages (FirmataClass::processInput)

  private onMessage(m: FirmataMessage): void {
    this.stats.messages++;
    this.watchdog?.feed();
    if (m.kind === 'sysex') {
      this.onSysex([m.cmd, ...m.body]);
      return;
    }
    const [d0 = 0, d1 = 0] = m.data;
    switch (m.cmd) {
      case FIRMATA.ANALOG_MESSAGE:
        this.analogWrite(m.channel, d0 | (d1 << 7));
        break;
      case FIRMATA.DIGITAL_MESSAGE:
        this.digitalWritePort(m.channel, d0 | (d1 << 7));
        break;
      case FIRMATA.SET_PIN_MODE:
        this.setPinMode(d0, d1, true);
        break;
      case FIRMATA.SET_DIGITAL_PIN_VALUE:
        this.setPinValue(d0, d1);
        break;
      case FIRMATA.REPORT_ANALOG:
        this.analog.reportAnalog(m.channel, d0, !this.resetting);
        if (this.reportingActive()) this.wake(this.clock.now());
        break;
      case FIRMATA.REPORT_DIGITAL:
        break; // no digital inputs are emulated
      case FIRMATA.SYSTEM_RESET:
        this.systemReset();
        break;
      case FIRMATA.REPORT_VERSION:
        this.printVersion();
        this.onIdentify?.();
        break;
    }
  }

  private onSysex(data: readonly number[]): void {
    const cmd = data[0];
    const argv = data.slice(1);
    let handled = true;
    switch (cmd) {
      case FIRMATA.REPORT_FIRMWARE:
        this.printFirmware();
        this.onIdentify?.();
        break;
      case FIRMATA.CAPABILITY_QUERY:
        this.write([
          FIRMATA.START_SYSEX,
          FIRMATA.CAPABILITY_RESPONSE,
          ...encodeCapabilities(capabilities(this.layout, this.features)),
          FIRMATA.END_SYSEX,
        ]);
        break;
      case FIRMATA.ANALOG_MAPPING_QUERY: {
        const map: number[] = [];
        for (let p = 0; p < this.layout.totalPins; p++) map.push(this.analogOfPin.get(p) ?? 0x7f);
        this.write([FIRMATA.START_SYSEX, FIRMATA.ANALOG_MAPPING_RESPONSE, ...map, FIRMATA.END_SYSEX]);
        break;
      }
      case FIRMATA.PIN_STATE_QUERY: {
        const pin = argv[0];
        if (pin === undefined || pin >= this.layout.totalPins) {
          handled = false;
          break;
        }
        const { mode, state } = this.pins[pin]!;
        const out = [FIRMATA.START_SYSEX, FIRMATA.PIN_STATE_RESPONSE, pin, mode, state & 0x7f];
        if (state & 0xff80) out.push((state >> 7) & 0x7f);
        if (state & 0xc000) out.push((state >> 14) & 0x7f);
        out.push(FIRMATA.END_SYSEX);
        this.write(out);
        break;
      }
      case FIRMATA.EXTENDED_ANALOG:
        if (argv.length > 1) {
          let val = argv[1]!;
          if (argv.length > 2) val |= argv[2]! << 7;
          if (argv.length > 3) val |= argv[3]! << 14;
          this.analogWrite(argv[0]!, val);
        } else handled = false;
        break;
      case FIRMATA.SAMPLING_INTERVAL:
        if (argv.length > 1) {
          this.intervalMs = Math.max(MIN_SAMPLING_INTERVAL_MS, argv[0]! + (argv[1]! << 7));
          if (this.reportingActive()) this.wake(this.clock.now());
        } else handled = false;
        break;
      case FIRMATA.ENCODER_DATA:
        handled = this.features.encoder && this.encoder.handleSysex(argv);
        if (handled && this.reportingActive()) this.wake(this.clock.now());
        break;
      case FIRMATA.WATCHDOG_DATA:
        handled = this.watchdog?.handleSysex(argv) ?? false;
        if (handled) this.wake(this.clock.now());
        break;
      default:
        handled = false;
    }
    if (!handled) {
      this.stats.unknownSysex++;
      this.sendString('Unhandled sysex command');
    }
  }

  // ------------------------------------------------------------------ pins

  /** FirmataClass::setPinMode then the features' handlePinMode; `fromHost` for the statistics. */
  private setPinMode(pin: number, mode: number, fromHost = false): void {
    const p = this.pins[pin];
    if (!p || p.mode === MODE.IGNORE) {
      if (fromHost) this.refuse(pin, mode);
      return;
    }
    p.state = 0;
    p.mode = mode;
    const L = this.layout;
    const digital = L.digital(pin);
    let known = false;
    switch (mode) {
      case MODE.INPUT:
      case MODE.PULLUP:
      case MODE.OUTPUT:
        known = digital;
        break;
      case MODE.ANALOG:
        known = this.analogOfPin.has(pin);
        break;
      case MODE.PWM:
        known = L.pwm.has(pin);
        break;
      case MODE.SERVO:
        known = L.servo(pin);
        break;
      case MODE.I2C:
        known = L.i2c.has(pin);
        break;
      case MODE.ENCODER:
        known = this.features.encoder && L.interrupt.has(pin);
        break;
    }
    if (!known && mode !== MODE.IGNORE) this.refuse(pin, mode);
    this.updateMotors();
  }

  private refuse(pin: number, mode: number): void {
    this.stats.refused.push({ pin, mode, at: this.clock.now() });
    this.sendString('Unknown pin mode');
  }

  /** analogWriteCallback: only a pin in PWM (or SERVO) mode that has the hardware takes the value. */
  private analogWrite(pin: number, value: number): void {
    const p = this.pins[pin];
    if (p && ((p.mode === MODE.PWM && this.layout.pwm.has(pin)) || (p.mode === MODE.SERVO && this.layout.servo(pin)))) {
      p.state = value;
      this.updateMotors();
    } else {
      this.stats.ignoredWrites++;
    }
  }

  /** DigitalOutputFirmata::digitalWritePort: OUTPUT pins take the bit; INPUT pins get their pull-up. */
  private digitalWritePort(port: number, value: number): void {
    let touched = false;
    for (let i = 0; i < 8; i++) {
      const pin = port * 8 + i;
      const p = this.pins[pin];
      if (!p || !this.layout.digital(pin)) continue;
      if (p.mode === MODE.OUTPUT || p.mode === MODE.INPUT) {
        p.state = (value >> i) & 1;
        touched = true;
      }
    }
    if (touched) this.updateMotors();
  }

  private setPinValue(pin: number, value: number): void {
    const p = this.pins[pin];
    if (p && this.layout.digital(pin) && p.mode === MODE.OUTPUT) {
      p.state = value ? 1 : 0;
      this.updateMotors();
    } else {
      this.stats.ignoredWrites++;
    }
  }

  /** The H-bridges: pin states -> signed duty per joint, applied to the plant after the board latency. */
  private updateMotors(): void {
    const duty = this.o.motors.slice(0, this.plant.joints).map((m) => bridgeDuty(m, (p) => this.pins[p], this.layout));
    while (duty.length < this.plant.joints) duty.push(0);
    if (duty.every((d, i) => d === this.lastDuty[i])) return;
    this.lastDuty = duty;
    this.onDuty?.(duty);
    const apply = (): void => {
      this.plant.advance(this.clock.now());
      this.plant.setDuty(duty);
      for (let i = 0; i < duty.length; i++) this.appliedDuty[i] = duty[i]!;
      this.stats.dutyChanges++;
    };
    const latency = this.o.latency ?? 0;
    if (latency > 0) this.clock.setTimer(latency, apply);
    else apply();
  }

  /** analogRead() of a channel: a potentiometer joint's angle through its mapping, else 0. */
  analogValue(channel: number): number {
    return this.analog.value(channel);
  }

  // ------------------------------------------------------------------ reports

  private reportingActive(): boolean {
    return this.encoder.reporting || this.analog.reporting;
  }

  /** At each sampling interval: analog inputs, then the encoders (the order of the sketch's loop). */
  private report(): void {
    this.analog.report();
    this.encoder.report();
  }

  private writeReport(bytes: number[]): void {
    const now = this.clock.now();
    const start = Math.max(now, this.txFreeAt);
    const age = start + bytes.length * this.byteTime - now;
    this.stats.reports++;
    this.stats.reportBytes += bytes.length;
    this.stats.reportAgeSumS += age;
    this.stats.reportAgeMaxS = Math.max(this.stats.reportAgeMaxS, age);
    this.write(bytes);
  }

  // ------------------------------------------------------------------ messages

  private printVersion(): void {
    const [maj, min] = this.o.protocol ?? [2, 6];
    this.write([FIRMATA.REPORT_VERSION, maj, min]);
  }

  private printFirmware(): void {
    const f = this.firmware;
    this.write([FIRMATA.START_SYSEX, FIRMATA.REPORT_FIRMWARE, f.major, f.minor, ...encodeString7(f.name), FIRMATA.END_SYSEX]);
  }

  private sendString(s: string): void {
    this.stats.strings.push(s);
    this.write([FIRMATA.START_SYSEX, FIRMATA.STRING_DATA, ...encodeString7(s), FIRMATA.END_SYSEX]);
  }
}
