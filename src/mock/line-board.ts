/**
 * The mock rig's board: it speaks the line protocol exactly as the firmware does (PROTOCOL.md:
 * banner, handshake, sequence checks, watchdog, flags, errors) and drives a Plant. It models the UART
 * too: bytes take 10 bit times each at the configured baud rate in both directions, the transmit
 * buffer holds 320 bytes as the firmware's (a frame that does not fit is dropped and flagged TXDROP), and
 * commands apply after the configured latency.
 *
 * It is transport-agnostic: `receive(bytes)` is what the host sent, `onTransmit(bytes)` is called when
 * bytes have left the board's UART. Time comes from a Clock, so the same board runs in real time (the
 * pty rig, the demo) and in virtual time (tests).
 */
import {
  decodeHostFrame,
  encodeBoardFrame,
  FLAG,
  LineAssembler,
  MAX_LINE,
  PROTOCOL,
  SequenceTracker,
  type BoardFrame,
  type BoardInfo,
  type HostFrame,
} from '../protocol/codec.js';
import type { Clock, TimerHandle } from '../time/clock.js';
import type { Plant } from './plant.js';

/** Injections into the link and the board, switchable while it runs (src/mock/injections.ts). */
export interface LineBoardInjections {
  /** Probability that a byte (either direction) is lost. */
  dropProbability: number;
  /** Probability that a byte (either direction) has one bit flipped. */
  corruptProbability: number;
  /** Extra delay before commands apply [s]. */
  extraLatency: number;
  /** The board stops answering: nothing leaves its UART (it still receives and obeys commands). */
  silent: boolean;
}

export interface LineBoardOptions {
  clock: Clock;
  plant: Plant;
  /** Serial baud rate (for the UART timing). */
  baudRate: number;
  /** Board latency between a command's arrival and its effect [s]. */
  latency: number;
  /** Board name in the banner. @default 'mock' */
  board?: string;
  /** PWM steps at duty 1000. @default 1000 */
  pwmSteps?: number;
  /** Transmit buffer size [bytes]. @default 320 (the firmware's 256-byte queue + HardwareSerial's 64) */
  txBuffer?: number;
  /** Noise source for the injected byte losses and bit flips (uniform 0..1). */
  random: () => number;
}

const FIRMWARE = 'twolink-mock/1.0.0';

export class LineBoard {
  readonly injected: LineBoardInjections = { dropProbability: 0, corruptProbability: 0, extraLatency: 0, silent: false };
  /** Counters, for tests. */
  readonly stats = { rxLines: 0, rxRejected: 0, overlong: 0, stale: 0, txFrames: 0, txDropped: 0, watchdogTrips: 0, resets: 0 };
  /** Called with bytes as they finish leaving the UART. */
  onTransmit: (bytes: Buffer) => void = () => {};
  /** The baud rate the host's port is at (set by the binding); a different one garbles every byte. */
  hostBaudRate: number | undefined;
  /** Called when the board answers a host's handshake (H) with its identity: the pty rig's injections count from the first. */
  onHandshake: (() => void) | undefined;

  private readonly clock: Clock;
  private readonly plant: Plant;
  private readonly byteTime: number;
  private readonly lines = new LineAssembler();
  private readonly hostSeq = new SequenceTracker();
  private boardSeq = 0;
  private bootTime = 0;
  private handshaken = false;
  private enabled = false;
  private wdtTripped = false;
  private stopped = false;
  private sticky = 0; // RXERR | GAP | ENC | TXDROP since the last T
  private rateHz = 0;
  private wdtMs = 100;
  private lastAck: number | null = null;
  private rxFreeAt = 0;
  private txFreeAt = 0;
  private txQueued: { at: number; n: number }[] = [];
  /** Frames on the UART not yet out, in the order they were queued (sequence order). */
  private readonly txFifo: Buffer[] = [];
  private bannerTimer: TimerHandle | undefined;
  private wdtTimer: TimerHandle | undefined;
  private rateTimer: TimerHandle | undefined;
  /** Streaming mode: the sample grid (board time of sample 0 [s], period [s], next index). */
  private gridT0 = 0;
  private periodS = 0;
  private nextK = 0;
  /** Streaming mode: the newest accepted M, applied at the next sample (PROTOCOL.md section 8). */
  private pending: Extract<HostFrame, { type: 'M' }> | undefined;
  private readonly pwm: number;
  private readonly info: BoardInfo;
  private evt: number | undefined;

  constructor(private readonly o: LineBoardOptions) {
    this.clock = o.clock;
    this.plant = o.plant;
    this.byteTime = 10 / o.baudRate;
    this.pwm = o.pwmSteps ?? 1000;
    this.info = {
      fw: FIRMWARE,
      proto: PROTOCOL,
      board: o.board ?? 'mock',
      joints: o.plant.joints,
      cpr: o.plant.encoders.map((e) => e.countsPerRev),
      pwm: this.pwm,
      torque: false,
      maxrate: 1000,
      wdt: 100,
    };
    this.boot();
  }

  /**
   * The board's time: inside a timer callback, the time the event was due (not when the callback ran),
   * so that an event loop that runs timers late (the rig sharing a thread with the loop) does not make
   * the UART model see frames piling up that a real board would have sent in turn.
   */
  private now(): number {
    return this.evt ?? this.clock.now();
  }

  /** A timer whose callback runs with the board's time set to its due time. */
  private after(delay: number, fn: () => void): TimerHandle {
    const due = this.now() + Math.max(0, delay);
    return this.clock.setTimer(due - this.clock.now(), () => {
      const prev = this.evt;
      this.evt = due;
      try {
        fn();
      } finally {
        this.evt = prev;
      }
    });
  }

  /** Power-on or reset: outputs off, counters restart, the banner repeats until a handshake. */
  boot(): void {
    this.plant.setDuty(new Array(this.plant.joints).fill(0));
    this.pending = undefined;
    this.boardSeq = 0;
    this.bootTime = this.now();
    this.handshaken = false;
    this.enabled = false;
    this.wdtTripped = false;
    this.stopped = false;
    this.sticky = 0;
    this.rateHz = 0;
    this.wdtMs = 100;
    this.lastAck = null;
    this.hostSeq.reset();
    this.clock.clearTimer(this.wdtTimer);
    this.clock.clearTimer(this.rateTimer);
    this.clock.clearTimer(this.bannerTimer);
    this.banner();
  }

  /** Resets the board as a brown-out or a DTR pulse would. */
  reset(): void {
    this.stats.resets++;
    this.boot();
  }

  /** Sends raw bytes as if the board's firmware had gone mad (the garbage and longline injections). */
  injectRaw(bytes: Uint8Array): void {
    const now = this.now();
    const start = Math.max(now, this.txFreeAt);
    // Deliver in chunks of 4 kB at the UART's pace, so a megabyte of noise does not arrive as one block.
    let t = start;
    for (let off = 0; off < bytes.length; off += 4096) {
      const chunk = Buffer.from(bytes.subarray(off, off + 4096));
      t += chunk.length * this.byteTime;
      this.after(t - now, () => this.onTransmit(chunk));
    }
    this.txFreeAt = t;
  }

  /** Stops everything (the rig is shutting down). */
  dispose(): void {
    this.clock.clearTimer(this.wdtTimer);
    this.clock.clearTimer(this.rateTimer);
    this.clock.clearTimer(this.bannerTimer);
  }

  private banner(): void {
    if (this.handshaken) return;
    this.send({ type: 'I', seq: 0, ack: null, info: this.identity() });
    this.bannerTimer = this.after(0.5, () => this.banner());
  }

  /** The identity frame's fields now: the watchdog as set, and `up`, milliseconds since boot (mod 2^32) as millis() would give. */
  private identity(): BoardInfo {
    return { ...this.info, wdt: this.wdtMs, up: Math.floor((this.now() - this.bootTime) * 1e3) % 4294967296 };
  }

  /** Board time in microseconds, mod 2^32, as micros() would give. */
  micros(): number {
    return Math.floor((this.now() - this.bootTime) * 1e6) % 4294967296;
  }

  // ------------------------------------------------------------------ receive

  /** Bytes from the host; they arrive at the UART's pace and are processed on arrival. */
  receive(bytes: Uint8Array): void {
    const now = this.now();
    const start = Math.max(now, this.rxFreeAt);
    const arrive = start + bytes.length * this.byteTime;
    this.rxFreeAt = arrive;
    const data = Buffer.from(this.mangle(bytes));
    if (data.length === 0) return;
    this.after(arrive - now, () => this.process(data));
  }

  /** Applies the injected drops and corruptions, and a baud-rate mismatch, to bytes on the wire. */
  private mangle(bytes: Uint8Array): Uint8Array {
    if (this.hostBaudRate !== undefined && this.hostBaudRate !== this.o.baudRate) {
      // The receiver samples the bits at the wrong times: what arrives is noise (deterministic here).
      const ratio = this.hostBaudRate / this.o.baudRate;
      return Uint8Array.from(bytes, (b, i) => ((b * 167 + i * 13 + Math.round(ratio * 31)) & 0xff) | 0x80);
    }
    const f = this.injected;
    if (f.dropProbability <= 0 && f.corruptProbability <= 0) return bytes;
    const out: number[] = [];
    for (const b of bytes) {
      if (f.dropProbability > 0 && this.o.random() < f.dropProbability) continue;
      out.push(f.corruptProbability > 0 && this.o.random() < f.corruptProbability ? b ^ (1 << Math.floor(this.o.random() * 8)) : b);
    }
    return Uint8Array.from(out);
  }

  private process(data: Buffer): void {
    const before = this.lines.overlong;
    this.lines.push(data, (line) => this.line(line));
    if (this.lines.overlong > before) {
      this.stats.overlong += this.lines.overlong - before;
      this.sticky |= FLAG.RXERR;
      this.send({ type: 'E', seq: 0, ack: null, code: 'LONG', text: `line longer than ${MAX_LINE} bytes` });
    }
  }

  private line(line: string): void {
    this.stats.rxLines++;
    const d = decodeHostFrame(line, this.plant.joints);
    if (!d.ok) {
      this.stats.rxRejected++;
      this.sticky |= FLAG.RXERR;
      this.send({ type: 'E', seq: 0, ack: null, code: d.code, text: d.reason.replace(/\*/g, '') });
      return;
    }
    const f = d.frame;
    if (f.type === 'H') {
      if (f.proto !== PROTOCOL) {
        // A wrong version changes nothing: no session, no watchdog feed, the banner goes on.
        this.send({ type: 'E', seq: 0, ack: f.seq, code: 'VERSION', text: `board speaks protocol ${PROTOCOL}` });
        return;
      }
      this.hostSeq.reset(f.seq);
    } else if (!this.handshaken) {
      this.send({ type: 'E', seq: 0, ack: f.seq, code: 'DISABLED', text: 'no handshake yet (send H first)' });
      return;
    } else {
      const v = this.hostSeq.check(f.seq);
      if (v.kind === 'duplicate' || v.kind === 'reordered') {
        this.stats.stale++;
        this.sticky |= FLAG.RXERR;
        this.send({ type: 'E', seq: 0, ack: f.seq, code: 'STALE', text: `${v.kind} sequence number ${f.seq}` });
        return;
      }
      if (v.kind === 'gap') this.sticky |= FLAG.GAP;
    }
    this.feedWatchdog();
    // In sync mode a command takes effect after the board's latency; in streaming mode at the next sample.
    const delay = this.rateHz > 0 ? this.injected.extraLatency : this.o.latency + this.injected.extraLatency;
    if (delay > 0 && (f.type === 'M' || f.type === 'Q')) this.after(delay, () => this.apply(f));
    else this.apply(f);
  }

  /** Carries out an accepted command (M and Q after the board's latency). */
  private apply(f: HostFrame): void {
    switch (f.type) {
      case 'H':
        this.startSession(f);
        return;
      case 'M':
        this.dutyCommand(f);
        return;
      case 'Q':
        if (!this.enabled) this.send({ type: 'E', seq: 0, ack: f.seq, code: 'DISABLED', text: 'outputs are disabled (send N 1)' });
        else this.send({ type: 'E', seq: 0, ack: f.seq, code: 'UNSUPPORTED', text: 'torque mode needs a current loop' });
        return;
      case 'R':
        this.setRate(f);
        return;
      case 'N':
        this.setEnabled(f);
        return;
      case 'Z':
        this.plant.advance(this.now());
        this.plant.zeroEncoders(f.mask);
        this.ack(f.seq);
        return;
      case 'S':
        this.outputsOff();
        this.stopped = true;
        this.ack(f.seq);
        return;
      case 'W':
        this.wdtMs = f.ms;
        this.feedWatchdog();
        this.ack(f.seq);
        return;
      case 'P':
        this.ack(f.seq);
        return;
    }
  }

  /** H: the handshake's answer, the identity, which also ends the banner. */
  private startSession(f: Extract<HostFrame, { type: 'H' }>): void {
    // A new session: outputs off, rate 0, watchdog back to its default; WDT and STOP stay.
    this.outputsOff();
    this.rateHz = 0;
    this.clock.clearTimer(this.rateTimer);
    this.wdtMs = 100;
    this.lastAck = null;
    this.handshaken = true;
    this.clock.clearTimer(this.bannerTimer);
    this.send({ type: 'I', seq: 0, ack: f.seq, info: this.identity() });
    this.onHandshake?.();
  }

  /** M: refused while disabled; in sync mode applied and answered with a T at once, while streaming kept for the next sample. */
  private dutyCommand(f: Extract<HostFrame, { type: 'M' }>): void {
    if (!this.enabled) {
      this.send({ type: 'E', seq: 0, ack: f.seq, code: 'DISABLED', text: 'outputs are disabled (send N 1)' });
      return;
    }
    if (this.rateHz > 0) {
      this.pending = f; // applied at the next sample
      return;
    }
    this.applyDuty(f);
    this.telemetry();
  }

  /** R: sync mode at 0 Hz, else streaming on a new sample grid that starts one period from now. */
  private setRate(f: Extract<HostFrame, { type: 'R' }>): void {
    this.rateHz = f.hz;
    this.pending = undefined;
    this.clock.clearTimer(this.rateTimer);
    this.ack(f.seq);
    if (f.hz > 0) {
      // The firmware's timer period is whole microseconds.
      this.periodS = Math.floor(1e6 / f.hz) / 1e6;
      this.gridT0 = this.now() + this.periodS;
      this.nextK = 0;
      this.scheduleSample();
    }
  }

  /** N: enabling starts from zero duty and clears the WDT and STOP flags; disabling turns the outputs off. */
  private setEnabled(f: Extract<HostFrame, { type: 'N' }>): void {
    if (f.enable) {
      this.pending = undefined;
      this.plant.advance(this.now());
      this.plant.setDuty(new Array(this.plant.joints).fill(0));
      this.enabled = true;
      this.wdtTripped = false;
      this.stopped = false;
    } else {
      this.outputsOff();
    }
    this.ack(f.seq);
  }

  private applyDuty(f: Extract<HostFrame, { type: 'M' }>): void {
    this.plant.advance(this.now());
    // The PWM resolution quantizes the duty, as the timer's compare register does.
    this.plant.setDuty(f.duty.map((d) => Math.round((d * this.pwm) / 1000) / this.pwm));
    this.lastAck = f.seq;
  }

  private outputsOff(): void {
    this.pending = undefined;
    this.plant.advance(this.now());
    this.plant.setDuty(new Array(this.plant.joints).fill(0));
    this.enabled = false;
  }

  private ack(seq: number): void {
    this.send({ type: 'A', seq: 0, ack: seq });
  }

  // ------------------------------------------------------------------ watchdog and telemetry

  private feedWatchdog(): void {
    this.clock.clearTimer(this.wdtTimer);
    this.wdtTimer = this.after(this.wdtMs / 1000, () => this.watchdog());
  }

  private watchdog(): void {
    if (!this.enabled) return;
    this.outputsOff();
    this.wdtTripped = true;
    this.stats.watchdogTrips++;
    this.send({ type: 'E', seq: 0, ack: null, code: 'WDT', text: `no command for ${this.wdtMs} ms` });
    if (this.rateHz === 0) this.telemetry();
  }

  /** The next sample instant on the grid t0 + k P (never accumulated: no drift). */
  private scheduleSample(): void {
    const at = this.gridT0 + this.nextK * this.periodS;
    this.rateTimer = this.after(at - this.now(), () => this.sample());
  }

  /** A sample instant: apply the pending command, latch the encoders, send the T (PROTOCOL.md section 8). */
  private sample(): void {
    this.nextK++;
    if (this.pending && this.enabled) this.applyDuty(this.pending);
    this.pending = undefined;
    this.telemetry();
    if (this.rateHz > 0) this.scheduleSample();
  }

  /** The flags byte now. */
  flags(): number {
    let f = this.sticky;
    if (this.enabled) f |= FLAG.EN;
    if (this.wdtTripped) f |= FLAG.WDT;
    if (this.stopped) f |= FLAG.STOP;
    if (!this.handshaken) f |= FLAG.BOOT;
    return f;
  }

  private telemetry(): void {
    this.plant.advance(this.now());
    const ok = this.send({ type: 'T', seq: 0, ack: this.lastAck, t: this.micros(), counts: this.plant.counts(), flags: this.flags() });
    if (ok) this.sticky = 0;
  }

  // ------------------------------------------------------------------ transmit

  /** Queues a frame on the UART; false (and TXDROP) when the transmit buffer cannot take it. */
  private send(frame: BoardFrame): boolean {
    if (this.injected.silent) return false;
    const now = this.now();
    // Bytes still in the transmit buffer at `now`.
    this.txQueued = this.txQueued.filter((q) => q.at > now);
    const pending = this.txQueued.reduce((s, q) => s + q.n, 0);
    frame.seq = this.boardSeq;
    // Every frame uses up its sequence number, sent or dropped: the host sees a drop as a loss.
    this.boardSeq = (this.boardSeq + 1) % 65536;
    const text = encodeBoardFrame(frame);
    if (pending + text.length > (this.o.txBuffer ?? 320) && pending > 0) {
      // Not enough room: a firmware that never blocks drops the frame and says so in the flags.
      this.stats.txDropped++;
      this.sticky |= FLAG.TXDROP;
      return false;
    }
    this.stats.txFrames++;
    const start = Math.max(now, this.txFreeAt);
    const done = start + text.length * this.byteTime;
    this.txFreeAt = done;
    this.txQueued.push({ at: done, n: text.length });
    const bytes = Buffer.from(this.mangle(Buffer.from(text, 'latin1')));
    this.txFifo.push(bytes);
    this.after(done - now, () => this.transmitThrough(bytes));
    return true;
  }

  /**
   * A frame's last byte is out: it leaves with every frame queued before it, in order, as a UART sends.
   * The timers alone did not keep that order: a frame queued while the board's thread ran late (its
   * time behind the clock's) had its timer put at the clock's now, and the starvation pause that
   * followed (mock-thread.ts) put the next frames' timers before it. An acknowledgment then reached the
   * host after the telemetry numbered after it, which the host drops as reordered: the zero command of
   * a run's end went unconfirmed and the run ended on the board's watchdog (issue 35, item 2).
   */
  private transmitThrough(bytes: Buffer): void {
    const k = this.txFifo.indexOf(bytes);
    if (k < 0) return; // already out with a frame queued after it
    for (const b of this.txFifo.splice(0, k + 1)) this.onTransmit(b);
  }
}
