/**
 * Near or over 650 lines because it is one class, the Link over Firmata, whose receiving, opening and
 * sending share its state; what needs none of it is in firmata-setup, -watch, -motors, -samples, -io.
 *
 * The Link over stock Firmata firmware (ConfigurableFirmata with FirmataEncoder), driven by real,
 * unmodified johnny-five: a `Board` on a serialport stream that we opened (johnny-five never scans for
 * ports), a `Motor` per joint (threshold 0), the encoders through FirmataEncoder's sysex 0x61, or a johnny-five `Sensor` per potentiometer joint (it turns analog reporting on).
 *
 * The board's bytes pass through one Firmata framer (protocol/firmata.ts) before firmata.js sees them:
 * the link reads the reports, the raw capability response (firmata.js drops the ENCODER mode), strings
 * and the watchdog's replies itself. Set-up steps: firmata-setup.ts; the motors: firmata-motors.ts; samples and their board time: firmata-samples.ts and firmata-clock.ts.
 *
 * What Firmata lacks, and what this link does about it:
 * - no board clock: the board's sampling interval is the clock. Each report is one sample; its board
 *   time is its index times the period, locked to arrival times by a clock-recovery filter
 *   (firmata-clock.ts); no time is ever taken from arrival jitter;
 * - no acknowledgements and no sequence numbers: a command's effect is confirmed by a pin state query
 *   (stop, enable, zero); `Reading.ack` is inferred from the wire timing; lost reports are inferred
 *   from gaps in arrival (`counters.lost`);
 * - no watchdog: twolink's FirmataWatchdog feature (firmware-protocol/firmata-watchdog/) is detected at
 *   open and armed with the rig's watchdogMs; without it the link warns loudly (BoardIdentity.warnings),
 *   zeroes running motors itself when it sees that no command came for watchdogMs (`hostStops`; the loop
 *   reports the stall), and a stop it cannot confirm is 'unconfirmed-no-watchdog';
 * - FirmataEncoder ignores an attach of a number already attached (a board not reset since the last
 *   session): the link detaches before it attaches;
 * - firmata.js clamps the sampling interval to >= 10 ms: the interval is set with a raw sysex, as short
 *   as the baud rate allows for the report (protocol/firmata.ts `cycleBudget`).
 */
import type { Duplex } from 'node:stream';
import type { FirmataLinkPart } from '../config/parts.js';
import {
  chooseInterval,
  cycleBudget,
  decodeString7,
  decodeWatchdog,
  ENCODER,
  FIRMATA,
  FirmataFramer,
  MODE,
  modeName,
  wireTime,
  type CycleBudget,
  type FirmataMessage,
  type WatchdogStatus,
} from '../protocol/firmata.js';
import { isWiringIssue, type Wiring } from '../protocol/firmata-wiring.js';
import { resolveFirmataWiring } from '../protocol/firmata-shields.js';
import type { Clock } from '../time/clock.js';
import {
  clearFirmataSysexHandlers,
  describe,
  handshakeError,
  queryPinState,
  race,
  readPinsBack,
  startBoard,
  Transport,
  Waiters,
} from './firmata-io.js';
import type { FirmataConfig, FirmataLinkOptions } from './firmata-io.js';
import {
  attachEncoders,
  checkBoard,
  resetEncoders,
  firmataIdentity,
  quietBoard,
  setUpWatchdog,
  type SetupContext,
} from './firmata-setup.js';
import { fiveMotors, FirmataMotors } from './firmata-motors.js';
import { FirmataWatch } from './firmata-watch.js';
import { analogChannels, jointUnits, SampleAssembler } from './firmata-samples.js';
import { JointSpace, type DutyChange } from './joints.js';
import { closeStream } from './stream.js';
import { johnnyFive, type FiveBoard, type FiveMotor, type FiveSensor, type FirmataIO } from './johnny-five.js';
import {
  cableLoss,
  LinkError,
  zeroCounters,
  type CableLoss,
  type BoardIdentity,
  type Link,
  type LinkCounters,
  type LinkEvent,
  type Reading,
  type StopOutcome,
} from './link.js';

export { clearFirmataSysexHandlers, type FirmataConfig, type FirmataLinkOptions };

/** The link's lifecycle. */
type Lifecycle =
  | { kind: 'new' }
  | { kind: 'handshake'; fail: (e: LinkError) => void }
  | { kind: 'configuring' }
  | { kind: 'open'; outputs: 'enabled' | 'disabled' }
  | { kind: 'closing' }
  | { kind: 'closed'; reason: string };

export class FirmataLink implements Link {
  readonly name: string;
  readonly counters: LinkCounters = zeroCounters();
  /** What the link noticed at open that works but is worse than it should be (also in BoardIdentity.warnings). */
  readonly warnings: string[] = [];
  /** Strings the board sent (STRING_DATA: "Unknown pin mode", "Unhandled sysex command", ...). */
  readonly boardStrings: string[] = [];
  /** The wire budget of one control cycle (after open). */
  budget: CycleBudget | undefined;
  /** The sampling interval set on the board [ms] (after open). */
  samplingIntervalMs = 0;
  /** The board runs twolink's FirmataWatchdog and it is armed (after open). */
  hasBoardWatchdog = false;
  /** What the board's watchdog said it is armed with (after open, when it has one). */
  boardWatchdog: WatchdogStatus | undefined;
  /** Without a board watchdog: each time the link zeroed running motors after no command for longer than watchdogMs, how long [ms]. */
  get hostStops(): readonly number[] {
    return this.watch.hostStops;
  }

  private readonly o: FirmataLinkOptions;
  private readonly wiring: Wiring;
  private readonly probePin: number; // motor 1's PWM pin: its state query says the board answers, its mode (still PWM) that it was not reset
  /** The joint layer (joints.ts): the inputs' raw values as angles, joint duties to the board's outputs, what the board applied. */
  private readonly space: JointSpace;
  private readonly watchdogMs: number;
  private readonly transport: Transport;
  private readonly watch: FirmataWatch;
  private readonly framer = new FirmataFramer({ from: 'board' });
  private state: Lifecycle = { kind: 'new' };
  private board: FiveBoard | undefined;
  private io: FirmataIO | undefined;
  private motors: FirmataMotors | undefined;
  private potSensors: FiveSensor[] = [];
  private capabilityBody: number[] | undefined;
  private samples: SampleAssembler | undefined;
  private sampling = false;
  private latest: Reading | undefined;
  private fresh = false;
  private sampleListener: ((r: Reading) => void) | undefined;
  /** The sample the loop answers next (the newest handed out), and whether it was answered. */
  private answering: { index: number; answered: boolean } | undefined;
  /** Where the answer to the sample being handed out applies [s, board time] (NaN outside the listener). */
  private answeringAt = NaN;
  private listener: (e: LinkEvent) => void = () => {};
  private readonly strings = new Waiters<string>();
  private readonly readings = new Waiters<Reading>();
  private readonly encoderReplies = new Waiters<number>();
  private readonly watchdogReplies = new Waiters<WatchdogStatus>();
  private watchdogCut = false; // the board's watchdog cut the motors, no command since (Reading.watchdog)
  private readonly onData = (d: Buffer): void => this.receive(d);
  private readonly onStreamClose = (err?: Error | null): void => {
    if (this.state.kind === 'closing') return;
    const cable = cableLoss(this.name, err);
    if (cable || !this.board?.isReady) this.onClosed(err ? `the port closed (${err.message})` : 'the port closed', cable); // a cable pulled (cable.ts) at once, before johnny-five's close; before `ready` it does not forward close
    if (!this.transport.detached) this.transport.emit('close', err);
  };
  private readonly onStreamError = (e: Error): void => {
    if (!this.transport.detached) this.transport.emit('error', e);
    this.listener({ kind: 'error', message: `${this.name}: ${e.message}` });
  };

  constructor(o: FirmataLinkOptions) {
    this.o = o;
    this.name = o.name;
    const w = resolveFirmataWiring(o.firmata);
    if (isWiringIssue(w)) throw new LinkError(`${o.name}: ${w.field}: ${w.message}`, 'config');
    this.wiring = w;
    const probe = w.motors[0]?.pwm;
    if (probe === undefined) throw new LinkError(`${o.name}: firmata.motors: a Firmata rig needs at least one motor`, 'config');
    this.probePin = probe;
    this.space = new JointSpace(jointUnits(o.name, w.sensors, o.encoders, o.wiring), o.wiring);
    this.watchdogMs = o.watchdogMs ?? 100;
    this.transport = new Transport(o.name, o.stream, this.counters, o.clock, o.baudRate);
    this.watch = new FirmataWatch({
      name: o.name,
      clock: o.clock,
      counters: this.counters,
      watchdogMs: this.watchdogMs,
      probePin: probe,
      answerMs: o.answerMs ?? 500,
      transport: this.transport,
      live: () => this.live,
      enabled: () => this.enabled,
      motors: () => this.motors,
      hasBoardWatchdog: () => this.hasBoardWatchdog,
      pinState: (pin, ms) => this.pinState(pin, ms),
      say: (e) => this.listener(e),
    });
    o.stream.on('data', this.onData);
    o.stream.on('close', this.onStreamClose);
    o.stream.on('error', this.onStreamError);
  }

  onEvent(listener: (e: LinkEvent) => void): void {
    this.listener = listener;
  }

  onSample(listener: (r: Reading) => void): void {
    this.sampleListener = listener;
  }

  /** The board's sampling period [s] (the clock recovery's estimate) once sampling has started. */
  get samplePeriod(): number | undefined {
    return this.sampling ? this.samples?.period : undefined;
  }

  /** johnny-five's Board, Firmata IO and Motors under this link (after open), for diagnostics and tests. */
  get five(): { board: FiveBoard; io: FirmataIO; motors: readonly FiveMotor[] } | undefined {
    return this.board && this.io ? { board: this.board, io: this.io, motors: this.motors?.five ?? [] } : undefined;
  }

  private get live(): boolean {
    return this.state.kind === 'configuring' || this.state.kind === 'open';
  }

  private get enabled(): boolean {
    return this.state.kind === 'open' && this.state.outputs === 'enabled';
  }

  private onClosed(reason: string, cable?: CableLoss): void {
    if (this.state.kind === 'closed') return;
    const prev = this.state;
    this.state = { kind: 'closed', reason };
    this.watch.stop();
    // johnny-five's handshake timer would keep the process alive and fire into a dead board.
    if (this.board?.timer) clearTimeout(this.board.timer);
    if (prev.kind === 'handshake') prev.fail(new LinkError(`${this.name}: ${reason} during the Firmata handshake`, 'closed'));
    this.listener({
      kind: 'closed',
      reason: `${this.name}: ${cable ? `the port vanished (${cable.message})` : reason}`,
      ...(cable ? { cable } : {}),
    });
  }

  // ------------------------------------------------------------------ receiving

  /** A chunk of the board's bytes: our framer first (reports, strings, raw replies), then firmata.js. */
  private receive(d: Buffer): void {
    const now = this.o.clock.now();
    this.counters.bytesIn += d.length;
    const stray = this.framer.stray;
    for (const m of this.framer.push(d)) this.onMessage(m);
    // Counted once open, as LineLink's: before, a board left streaming may have sent the tail of a report.
    const counting = this.state.kind === 'open';
    if (counting) this.counters.corrupt += this.framer.stray - stray;
    if (!this.transport.detached) {
      try {
        this.transport.emit('data', d);
      } catch (e) {
        // firmata.js's parser throws on some malformed messages (a PIN_STATE_RESPONSE for a pin it does
        // not know: found by `npm run bench`'s fuzzing). A peer's bytes must never kill the process:
        // count the message as corrupt and let the parser start over.
        if (counting) this.counters.corrupt++;
        const io = this.io as unknown as { buffer?: unknown[] } | undefined;
        if (io && Array.isArray(io.buffer)) io.buffer = [];
        this.listener({ kind: 'board-error', code: 'PARSE', text: `a malformed Firmata message was dropped (${describe(e)})`, ack: null });
      }
    }
    if (this.samples && this.live) this.deliver(now);
  }

  private onMessage(m: FirmataMessage): void {
    this.counters.received++;
    if (m.kind === 'sysex') {
      if (m.cmd === FIRMATA.CAPABILITY_RESPONSE) this.capabilityBody = m.body;
      else if (m.cmd === FIRMATA.STRING_DATA) this.onString(decodeString7(m.body));
      else if (m.cmd === FIRMATA.WATCHDOG_DATA) this.onWatchdog(m.body);
      else if (m.cmd === FIRMATA.ENCODER_DATA && this.state.kind !== 'handshake') this.encoderReplies.emit(m.body.length); // before ready: stale
    } else if (m.cmd === FIRMATA.REPORT_VERSION && this.state.kind === 'open') {
      this.watch.checkReset();
    }
    if (this.samples && this.live) {
      const corrupt = this.samples.corrupt;
      this.samples.take(m);
      this.counters.corrupt += this.samples.corrupt - corrupt;
    }
  }

  /** Hands the chunk's complete samples out, in order: the stall guard first. */
  private deliver(now: number): void {
    const s = this.samples!;
    const lost = s.lost;
    const list = s.finish({ now, enabled: this.enabled, ack: (t) => this.motors?.ackAt(t) ?? null, watchdog: this.watchdogCut });
    if (list.length === 0) return;
    this.counters.lost += s.lost - lost;
    this.watch.guardStall(now);
    for (const r of list) {
      r.applyAt = this.applyAt(r, now);
      this.latest = r;
      this.fresh = true;
      this.readings.emit(r);
      if (this.sampling) {
        this.answering = { index: r.index, answered: false };
        this.answeringAt = r.superseded ? NaN : r.applyAt;
        try {
          this.sampleListener?.(r);
        } finally {
          this.answeringAt = NaN;
        }
      }
    }
  }

  /** When a command written now reaches the board, on the board's time [s]: the sample's age, bytes queued ahead, the command's wire time. */
  private applyAt(r: Reading, now: number): number {
    return (
      r.boardTime +
      Math.max(0, now - r.sampleTime) +
      Math.max(0, this.transport.arrivesAt - now) +
      wireTime(this.budget?.downBytes ?? 0, this.o.baudRate)
    );
  }

  private onString(s: string): void {
    this.counters.boardErrors++;
    this.boardStrings.push(s);
    this.strings.emit(s);
    if (this.state.kind === 'open') this.listener({ kind: 'board-error', code: 'FIRMATA', text: s, ack: null });
  }

  private onWatchdog(body: number[]): void {
    const w = decodeWatchdog(body);
    if (!w) {
      this.counters.corrupt++;
      return;
    }
    if (w.kind === 'status') {
      this.watchdogReplies.emit(w.status);
      return;
    }
    // The board zeroed the motors: only worth a fault when a motor was actually running.
    this.motors?.forgetSpeeds();
    this.watchdogCut = true;
    if (w.zeroed > 0 && this.state.kind === 'open') {
      this.listener({
        kind: 'watchdog',
        text: `the board's FirmataWatchdog zeroed ${w.zeroed} motor(s) after ${w.silentMs} ms without a message from the host`,
      });
    }
  }

  /** The newest reading not returned before, or undefined. */
  read(): Reading | undefined {
    const r = this.fresh ? this.latest : undefined;
    this.fresh = false;
    return r;
  }

  /** The newest reading even if it was returned before. */
  last(): Reading | undefined {
    return this.latest;
  }

  /** Complete readings produced since open (one per sampling pass when every joint reported). */
  get readingCount(): number {
    return this.samples?.count ?? 0;
  }

  /** Asks the board for a pin's mode and state; undefined when no answer came within `ms`. */
  private pinState(pin: number, ms: number): Promise<{ mode: number; state: number } | undefined> {
    return this.io && this.state.kind !== 'closed' ? queryPinState(this.io, this.o.clock, pin, ms) : Promise.resolve(undefined);
  }

  // ------------------------------------------------------------------ open

  async open(): Promise<BoardIdentity> {
    if (this.state.kind === 'closed' || this.state.kind === 'closing') throw new LinkError(`${this.name}: the link is closed`, 'closed');
    if (this.state.kind !== 'new')
      throw new LinkError(`${this.name}: open() was already called (johnny-five cannot reconnect: make a new link on a new port)`, 'busy');
    await this.handshake();
    this.state = { kind: 'configuring' };
    try {
      return await this.configure();
    } catch (e) {
      if (this.state.kind === 'configuring') this.state = { kind: 'new' };
      throw e;
    }
  }

  private handshake(): Promise<void> {
    const o = this.o;
    return new Promise<void>((resolve, reject) => {
      const fail = (e: LinkError): void => {
        if (this.state.kind === 'handshake') this.state = { kind: 'new' };
        reject(e);
      };
      this.state = { kind: 'handshake', fail };
      this.transport.write(quietBoard()); // what an earlier session left reporting has all come in by `ready`
      const start = {
        name: this.name,
        handshakeMs: o.handshakeMs,
        bootloaderMs: o.bootloaderMs ?? 0,
        silent: () => this.counters.bytesIn === 0,
        say: (text: string) => this.listener({ kind: 'waiting', text }),
      };
      this.board = startBoard(this.transport, o.clock, start, {
        handshaking: () => this.state.kind === 'handshake',
        ready: resolve,
        error: (e) => {
          if (this.state.kind === 'handshake') this.state.fail(handshakeError(this.name, e, this.io, this.counters.bytesIn, o));
          else if (this.state.kind !== 'closed') this.listener({ kind: 'error', message: `${this.name}: ${describe(e)}` });
        },
      });
      this.io = this.board.io;
    });
  }

  /** Open's steps after the handshake: the wiring checked, motors, sensors and watchdog set up, the first reading in. */
  private async configure(): Promise<BoardIdentity> {
    const o = this.o;
    const w = this.wiring;
    const board = this.board!;
    const io = this.io!;
    const ms = o.answerMs ?? 500;
    const { fw, check } = checkBoard(this.name, io, this.capabilityBody, w);
    this.warnings.push(...check.warnings);
    // Motors: johnny-five sets the pin modes, PWM 0, direction forward.
    this.motors = new FirmataMotors(fiveMotors(board, w), o.clock, this.transport);
    this.planSampling();
    await this.setUpInputs(fw, ms);
    await this.firstReading(ms);
    this.watch.startProbe(this.samplingIntervalMs);
    board.on('close', () => this.onClosed('the port closed (unplugged?)'));
    board.on('disconnect', () => this.onClosed('the board disconnected'));
    this.state = { kind: 'open', outputs: 'disabled' };
    return firmataIdentity({
      port: this.name,
      firmware: fw,
      board: check.boardName,
      io,
      wiring: w,
      encoders: o.encoders,
      watchdog: this.hasBoardWatchdog ? this.boardWatchdog : undefined,
      warnings: this.warnings,
    });
  }

  /** The wire budget of a control cycle, the sampling interval it allows, and the samples' assembler on it. */
  private planSampling(): void {
    const o = this.o;
    const w = this.wiring;
    this.budget = cycleBudget(
      w.motors,
      w.encoderJoints.length,
      w.potentiometers + (o.firmata.linkSensors?.filter((s) => s).length ?? 0),
      o.baudRate,
      o.load ?? 0.8,
    );
    this.samplingIntervalMs = this.intervalFor(undefined);
    this.samples = new SampleAssembler(
      { sensors: w.sensors, linkSensors: o.firmata.linkSensors, space: this.space, baudRate: o.baudRate, upBytes: this.budget.upBytes },
      this.keptPeriod(this.samplingIntervalMs),
    );
  }

  /** The board's watchdog (found and armed, or a warning), the encoders attached, the sampling interval, the potentiometers. */
  private async setUpInputs(fw: string, ms: number): Promise<void> {
    const o = this.o;
    const w = this.wiring;
    const io = this.io!;
    const setup: SetupContext = {
      name: this.name,
      io,
      clock: o.clock,
      wiring: w,
      strings: this.strings,
      encoderReplies: this.encoderReplies,
      watchdogReplies: this.watchdogReplies,
    };
    const wd = await setUpWatchdog(setup, this.watchdogMs, ms);
    if (wd.status) {
      this.boardWatchdog = wd.status;
      this.hasBoardWatchdog = true;
    } else this.warnings.push(wd.warning);
    if (w.encoderJoints.length > 0) await attachEncoders(setup, fw, ms);
    this.sendInterval(this.samplingIntervalMs);
    // Potentiometers (the joints' and the link-side ones): a johnny-five Sensor each turns analog reporting on; the link reads the messages.
    const five = johnnyFive();
    for (const ch of analogChannels(this.name, w.sensors, o.firmata.linkSensors, io.analogPins.length))
      this.potSensors.push(new five.Sensor({ board: this.board!, pin: `A${ch}`, freq: 1000 }));
  }

  /** The first complete reading, which proves the sensors answer; a LinkError when none comes within `ms`. */
  private async firstReading(ms: number): Promise<void> {
    this.samples!.dropPartial();
    const first = this.readings.next();
    const got = await race(this.o.clock, first.promise, new Promise<never>(() => {}), ms);
    first.cancel();
    if (got === 'timeout')
      throw new LinkError(`${this.name}: the board set up the sensors but no reading arrived within ${ms} ms`, 'no-data');
  }

  /** The sampling interval [ms] for a loop rate (undefined: as fast as the wire allows), or the rig file's; warns when it does not fit. */
  private intervalFor(hz: number | undefined): number {
    const { ms, warning } = chooseInterval(this.budget!, this.o.firmata.samplingIntervalMs, hz);
    if (warning && !this.warnings.includes(warning)) this.warnings.push(warning);
    return ms;
  }

  /** The period the board keeps for an interval [s]: the interval, or the report's wire time when longer (it then samples at the wire's pace). */
  private keptPeriod(intervalMs: number): number {
    return Math.max(intervalMs / 1000, wireTime(this.budget!.upBytes, this.o.baudRate));
  }

  private sendInterval(ms: number): void {
    this.io!.sysexCommand([FIRMATA.SAMPLING_INTERVAL, ms & 0x7f, (ms >> 7) & 0x7f]);
  }

  /**
   * Starts the board's sample clock: the sampling interval for `hz` (whole milliseconds, never shorter
   * than the report's time on the wire unless the rig file says so) and auto-reporting; resolves when
   * the board has answered a query sent after it, so every sample from then on is on the new interval.
   * `samplePeriod` is the period the board keeps (measured).
   */
  async startSampling(hz: number): Promise<void> {
    if (this.state.kind !== 'open') throw new LinkError(`${this.name}: the link is not open`, 'closed');
    if (!(hz > 0) || !Number.isFinite(hz)) throw new LinkError(`${this.name}: startSampling: ${hz} is not a sampling rate [Hz]`, 'config');
    const ms = this.intervalFor(hz);
    this.samplingIntervalMs = ms;
    this.sendInterval(ms);
    if (this.wiring.encoderJoints.length > 0) this.io!.sysexCommand([FIRMATA.ENCODER_DATA, ENCODER.REPORT_AUTO, 1]);
    const answer = this.o.answerMs ?? 500;
    if (!(await this.pinState(this.probePin, answer))) {
      throw new LinkError(`${this.name}: the board did not answer after the sampling interval was set within ${answer} ms`, 'no-answer');
    }
    this.samples!.restart(this.keptPeriod(ms));
    this.sampling = true;
    if (this.hasBoardWatchdog) this.watch.startFeeding();
  }

  // ------------------------------------------------------------------ sending

  writeDuty(duty: readonly number[]): number {
    const seq = this.write(duty);
    this.space.duties.sent(seq, duty, this.answeringAt);
    return seq;
  }

  /** Joint duties to the board's outputs (joints.ts); returns the command id. */
  private write(duty: readonly number[]): number {
    const m = this.motors;
    if (!m || !this.live) return m?.skip() ?? 0;
    this.watchdogCut = false;
    const a = this.answering;
    if (a && !a.answered) {
      a.answered = true;
      if (this.o.clock.now() > this.samples!.nextDue(a.index)) this.counters.late++;
    }
    return m.write(this.space.toBoard(duty), this.enabled, this.counters);
  }

  appliedDuty(ack: number | null): readonly number[] {
    return this.space.duties.duty(ack);
  }

  dutyChanges(ack: number | null, t: number, horizon: number): readonly DutyChange[] {
    return this.space.duties.changesAfter(ack, t, horizon);
  }

  async enable(on: boolean): Promise<void> {
    if (this.state.kind !== 'open') throw new LinkError(`${this.name}: the link is not open`, 'closed');
    const ms = this.o.answerMs ?? 500;
    const motors = this.motors!;
    if (on) {
      motors.enableAll(true);
      // Firmata has nothing to enable: make sure the board is there and its motor pins are still ours.
      const st = await this.pinState(this.probePin, ms);
      if (!st) throw new LinkError(`${this.name}: the board did not answer a pin state query within ${ms} ms`, 'no-answer');
      if (st.mode !== MODE.PWM)
        throw new LinkError(
          `${this.name}: motor 1's PWM pin is in ${modeName(st.mode)} mode: the board was reset; reconnect`,
          'board-reset',
        );
      if (this.state.kind === 'open') this.state = { kind: 'open', outputs: 'enabled' };
      return;
    }
    this.state = { kind: 'open', outputs: 'disabled' };
    motors.enableAll(false);
    if (!(await this.zeroAndConfirm(ms)))
      throw new LinkError(`${this.name}: the board did not confirm the motors at 0 within ${ms} ms`, 'no-answer');
  }

  /** Motors to 0 and every PWM pin asked: true when all of them read back stopped. */
  private async zeroAndConfirm(ms: number): Promise<boolean> {
    const m = this.motors!;
    m.stopAll();
    return this.pinsRead((j) => m.stoppedPwm(j), ms);
  }

  /** Reads the motors' PWM pins back (firmata-io.ts readPinsBack): all in PWM mode at `want(j)` within `ms`? */
  private pinsRead(want: (j: number) => number, ms: number): Promise<boolean> {
    return readPinsBack(
      this.o.clock,
      this.wiring.motors,
      (pin, left) => this.pinState(pin, left),
      want,
      ms,
      () => this.state.kind === 'open',
    );
  }

  async zero(mask = (1 << this.wiring.motors.length) - 1): Promise<void> {
    if (this.state.kind !== 'open') throw new LinkError(`${this.name}: the link is not open`, 'closed');
    if (!resetEncoders(this.io!, this.wiring.sensors, this.space.boardMask(mask))) return; // potentiometers are absolute
    // The board handles messages in order: once it answers a query sent after the resets, every
    // report that follows was taken after them.
    const ms = this.o.answerMs ?? 500;
    const st = await this.pinState(this.probePin, ms);
    if (!st) throw new LinkError(`${this.name}: the board did not answer after the encoder reset within ${ms} ms`, 'no-answer');
    this.fresh = false;
    this.samples?.dropPartial();
  }

  /** Asks for motor 1's PWM pin; rejects with a LinkError when no answer comes within `timeoutMs`. */
  async ping(timeoutMs = this.o.answerMs ?? 500): Promise<void> {
    if (!(await this.pinState(this.probePin, timeoutMs))) {
      throw new LinkError(`${this.name}: the board did not answer a pin state query within ${timeoutMs} ms`, 'no-answer');
    }
  }

  /** Confirms the last duty: true when every motor's PWM pin holds the value last sent within `timeoutMs`. */
  async confirm(timeoutMs = this.o.answerMs ?? 500): Promise<boolean> {
    if (this.state.kind !== 'open') return false;
    const m = this.motors!;
    return this.pinsRead((j) => m.expectedPwm(j), timeoutMs);
  }

  /**
   * Motors to zero, outputs disabled. Confirmed by reading the PWM pins back; when that fails the
   * outcome says whether anything on the board will stop the motors: 'unconfirmed' (its FirmataWatchdog
   * will) or 'unconfirmed-no-watchdog' (stock Firmata: nothing will).
   */
  async stop(timeoutMs = 200): Promise<StopOutcome> {
    const unconfirmed: StopOutcome = this.hasBoardWatchdog ? 'unconfirmed' : 'unconfirmed-no-watchdog';
    if (this.state.kind === 'open') this.state = { kind: 'open', outputs: 'disabled' };
    else return unconfirmed;
    return (await this.zeroAndConfirm(timeoutMs)) ? 'acknowledged' : unconfirmed;
  }

  async close(): Promise<void> {
    if (this.state.kind === 'closing') return;
    const wasOpen = this.state.kind === 'open';
    if (this.state.kind !== 'closed') this.state = { kind: 'closing' };
    this.watch.stop();
    for (const p of this.potSensors) p.disable();
    const s = this.o.stream;
    // Leave the board quiet: no reports to a port nobody reads. The board watchdog stays armed.
    const last = new Promise<void>((resolve) => (wasOpen ? this.transport.write(quietBoard(), () => resolve()) : resolve()));
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

/** The Link of a rig file whose `link.transport` is `firmata`, on an open stream. */
export function createFirmataLink(
  rig: FirmataLinkPart,
  stream: Duplex,
  name: string,
  clock: Clock,
  opts: { answerMs?: number; handshakeMs?: number; bootloaderMs?: number; baudRate?: number } = {},
): FirmataLink {
  if (!rig.firmata) {
    throw new LinkError(
      `${rig.file}: link.transport is "firmata" but the rig file has no "firmata" section (motors and sensors per joint: see rigs/mock-arm-firmata.json)`,
      'config',
    );
  }
  return new FirmataLink({
    stream,
    name,
    baudRate: opts.baudRate ?? rig.link.baudRate,
    clock,
    firmata: rig.firmata,
    encoders: rig.encoders,
    ...(rig.wiring ? { wiring: rig.wiring } : {}),
    handshakeMs: opts.handshakeMs ?? rig.link.handshakeMs,
    bootloaderMs: opts.bootloaderMs ?? 0,
    watchdogMs: rig.link.watchdogMs,
    ...(opts.answerMs !== undefined ? { answerMs: opts.answerMs } : {}),
  });
}
