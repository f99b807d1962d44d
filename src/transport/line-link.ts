/**
 * The Link over the twolink line protocol (firmware-protocol/PROTOCOL.md), on any serialport stream:
 * a real port, a pty, or the in-process mock rig's binding. Lines are split by
 * @serialport/parser-readline, with a bound on the line length that the parser lacks (bounded-readline.ts).
 */
import { closeStream } from './stream.js';
import { cableLoss, type CableLoss } from './cable.js';
import { BoundedReadlineParser } from './bounded-readline.js';
import type { LineLinkOptions } from './line-link-options.js';
import { BurstSizes } from './bursts.js';
import { JointSpace, type DutyChange } from './joints.js';
import {
  decodeBoardFrame,
  FLAG,
  frameLine,
  hostBody,
  PROTOCOL,
  SequenceTracker,
  type BoardFrame,
  type BoardInfo,
  type HostFrame,
} from '../protocol/codec.js';
import { checkBoardInfo, noHandshake } from './line-handshake.js';
import { bootloaderWaitText } from './dtr.js';
import { answerDelayOf } from './answer-delay.js';
import {
  LinkError,
  MAX_DELAY_SAMPLES,
  zeroCounters,
  type BoardIdentity,
  type Link,
  type LinkCounters,
  type LinkEvent,
  type Reading,
  type StopOutcome,
} from './link.js';

/** Hellos sent before the handshake is given up, whatever the clock says (each waits 250 ms for an answer). */
export const HELLO_TRIES = 4;
/** The longest answer delay the link learns (link.ts). Answers in flight are kept per sample index modulo ANSWER_SLOTS (a power of two above it). */
export { MAX_DELAY_SAMPLES };
const ANSWER_SLOTS = 32;

export { BoundedReadlineParser } from './bounded-readline.js';
export type { LineLinkOptions } from './line-link-options.js';

interface Waiter {
  seq: number;
  resolve: (f: BoardFrame) => void;
  reject: (e: Error) => void;
}

/** The clock offset's window: OFFSET_BLOCKS blocks of OFFSET_BLOCK samples (the minimum of each). */
const OFFSET_BLOCK = 32;
const OFFSET_BLOCKS = 16;
/** A rise of the board-to-host clock offset this large, held for two blocks, is a step of the board's clock [s]. */
const OFFSET_STEP_S = 0.001;

export class LineLink implements Link {
  readonly name: string;
  readonly counters: LinkCounters = zeroCounters();
  private readonly o: LineLinkOptions;
  private readonly parser = new BoundedReadlineParser(() => this.counters.overlong++);
  private readonly rx = new SequenceTracker();
  private seq = 0;
  private latest: Reading | undefined;
  private fresh = false;
  private sampleListener: (r: Reading) => void = () => {};
  /** Samples parsed from the current chunk of bytes, handed out together once the chunk is parsed. */
  private batch: Reading[] = [];
  private flushQueued = false;
  private readonly flushBatch = (): void => this.flush();
  /** Board sampling period [us] once streaming started, and the board time of sample 0 [s]. */
  private periodUs = 0;
  private gridT0 = -1;
  /**
   * Answers in flight: the M's sequence number per answered sample index (mod 32), and the newest
   * answered index; delays (in samples) from a sample to the sample that applied its answer.
   */
  private readonly answerSeq = new Int32Array(ANSWER_SLOTS).fill(-1);
  private readonly answerIdx = new Int32Array(ANSWER_SLOTS).fill(-1);
  private readonly delayHist = new Int32Array(MAX_DELAY_SAMPLES + 1);
  private readonly delayRing = new Int8Array(256);
  private delayN = 0;
  /** Samples from a sample to the one that applies its answer: 1 on a fast link, more behind USB. */
  private delaySamples = 1;
  private lastIndex = -2;
  /** The sample the loop is answering now, and where its answer applies [s, board time] (set while the listener runs). */
  private answering = -1;
  private answeringAt = NaN;
  /**
   * Host clock minus board clock [s]: the minimum of (arrival - wire time - board time) over a sliding
   * window of 512 samples (16 blocks of 32), so it follows a crystal's drift and a board whose
   * clock jumps forward (a reset) at once, and one whose clock stepped back (a simulated board that
   * was starved) within two blocks, 64 samples (followStep).
   */
  private offset = Infinity;
  /** The raw offset (arrival - wire - board time) of each sample of the chunk in hand [s]. */
  private batchRaw: number[] = [];
  /** Chunk sizes, to tell a chunk the host read on time (flush) from one it read late. */
  private readonly bursts = new BurstSizes();
  private readonly blockMin = new Float64Array(OFFSET_BLOCKS).fill(Infinity);
  private blockN = 0;
  private waiters: Waiter[] = [];
  private listener: (e: LinkEvent) => void = () => {};
  private joints: number;
  /** Counts <-> angles and the board's wiring (joints.ts). */
  private readonly space: JointSpace;
  private handshaken = false;
  private closed = false;
  private lastBoardUs = -1;
  /** No answer to our hello yet: what arrives is what the port held, or a stream left running, from an earlier session. */
  private fromEarlier = true;
  /** What arrived before the board's first answer and was discarded: frames and cut or garbled lines. */
  readonly stale = { frames: 0, lines: 0 };
  /** Bytes of valid frames received (against bytesIn: how much of what came back was garbage). */
  private validBytes = 0;
  private boardWraps = 0;
  private info: BoardInfo | undefined;

  constructor(o: LineLinkOptions) {
    this.o = o;
    this.name = o.name;
    this.space = new JointSpace(o.encoders, o.wiring);
    this.joints = this.space.joints;
    o.stream.on('data', (d: Buffer) => (this.counters.bytesIn += d.length));
    o.stream.pipe(this.parser);
    this.parser.on('data', (line: string) => this.onLine(line));
    // serialport's stream closes with a DisconnectedError when a read or write failed: a cable pulled
    // when its errno says the device is gone (cable.ts).
    o.stream.on('close', (err?: Error | null) => {
      const cable = cableLoss(this.name, err);
      this.onClose(cable ? `the port vanished (${cable.message})` : 'the port closed', cable);
    });
    o.stream.on('error', (e: Error) => this.listener({ kind: 'error', message: `${this.name}: ${e.message}` }));
  }

  onEvent(listener: (e: LinkEvent) => void): void {
    this.listener = listener;
  }

  private onClose(reason: string, cable?: CableLoss): void {
    if (this.closed) return;
    this.closed = true;
    for (const w of this.waiters.splice(0)) w.reject(new LinkError(`${this.name}: ${reason}`, 'closed'));
    this.listener({ kind: 'closed', reason: `${this.name}: ${reason}`, ...(cable ? { cable } : {}) });
  }

  // ------------------------------------------------------------------ receiving

  private onLine(line: string): void {
    const d = decodeBoardFrame(line, this.joints);
    if (!d.ok) {
      // Before the board's first answer, a cut line is what an earlier session left on the port.
      if (this.fromEarlier) this.stale.lines++;
      else this.counters.corrupt++;
      return;
    }
    const f = d.frame;
    this.validBytes += line.length + 1;
    if (this.fromEarlier) {
      // The first answer to our hello ends what the port held from before this session; telemetry
      // until then is a stream an earlier session left running (the H stops it: PROTOCOL.md section
      // 8), not samples of this one: dropped uncounted, or its gaps would count as lost frames.
      if (f.type === 'I' && f.ack !== null) this.fromEarlier = false;
      else if (f.type === 'T') {
        this.stale.frames++;
        return;
      }
    }
    this.counters.received++;
    if (f.type === 'I') {
      // A banner (ack '-') after the handshake means the board restarted.
      if (f.ack === null && this.handshaken) {
        this.handshaken = false;
        this.listener({ kind: 'board-reset' });
      }
      this.rx.reset(f.seq);
    } else {
      const v = this.rx.check(f.seq);
      if (v.kind === 'duplicate') {
        this.counters.duplicate++;
        return;
      }
      if (v.kind === 'reordered') {
        this.counters.reordered++;
        return;
      }
      if (v.kind === 'gap') {
        // The board says when it dropped frames itself (TXDROP): those are not lost on the wire.
        if (f.type === 'T' && f.flags & FLAG.TXDROP) this.counters.dropped += v.lost;
        else this.counters.lost += v.lost;
      }
    }
    if (f.type === 'T') this.onTelemetry(f, line.length + 1);
    else if (f.type === 'E') {
      this.counters.boardErrors++;
      if (f.code === 'WDT') this.listener({ kind: 'watchdog', text: f.text });
      else this.listener({ kind: 'board-error', code: f.code, text: f.text, ack: f.ack });
    }
    for (let i = 0; i < this.waiters.length; i++) {
      const w = this.waiters[i]!;
      if (f.ack === w.seq && (f.type === 'A' || f.type === 'E' || f.type === 'I')) {
        this.waiters.splice(i, 1);
        w.resolve(f);
        break;
      }
    }
  }

  private onTelemetry(f: Extract<BoardFrame, { type: 'T' }>, bytes: number): void {
    if (this.handshaken && f.flags & FLAG.BOOT) {
      this.handshaken = false;
      this.listener({ kind: 'board-reset' });
    }
    // Unwrap the 32-bit microsecond clock.
    if (this.lastBoardUs >= 0 && f.t < this.lastBoardUs && this.lastBoardUs - f.t > 2147483648) this.boardWraps++;
    this.lastBoardUs = f.t;
    const { q, raw } = this.space.fromBoard(f.counts);
    const now = this.o.clock.now();
    const boardTime = (this.boardWraps * 4294967296 + f.t) / 1e6;
    // Board-to-host clock offset: arrival minus its wire time is the earliest the sample can have
    // been taken; the least such difference over the window is the offset.
    const wire = (bytes * 10) / this.o.baudRate;
    const rawOffset = now - wire - boardTime;
    this.trackOffset(rawOffset);
    let index = -1;
    let applyAt = boardTime;
    if (this.periodUs > 0) {
      if (this.gridT0 < 0) this.gridT0 = boardTime;
      index = Math.round(((boardTime - this.gridT0) * 1e6) / this.periodUs);
      this.checkAnswers(index, f.ack);
      applyAt = boardTime + (this.delaySamples * this.periodUs) / 1e6;
    }
    const r: Reading = {
      q,
      raw,
      boardTime,
      index,
      applyAt,
      superseded: false,
      hostTime: now,
      sampleTime: boardTime + this.offset,
      ack: f.ack,
      enabled: (f.flags & FLAG.EN) !== 0,
      watchdog: (f.flags & FLAG.WDT) !== 0,
      flags: f.flags,
    };
    this.latest = r;
    if (this.periodUs > 0) {
      this.batch.push(r);
      this.batchRaw.push(rawOffset);
      if (!this.flushQueued) {
        this.flushQueued = true;
        queueMicrotask(this.flushBatch);
      }
    }
    this.fresh = true;
  }

  private trackOffset(raw: number): void {
    const b = Math.floor(this.blockN / OFFSET_BLOCK) % OFFSET_BLOCKS;
    if (this.blockN % OFFSET_BLOCK === 0) {
      if (this.blockN >= 2 * OFFSET_BLOCK)
        this.followStep((b + OFFSET_BLOCKS - 1) % OFFSET_BLOCKS, (b + OFFSET_BLOCKS - 2) % OFFSET_BLOCKS);
      this.blockMin[b] = raw;
    } else if (raw < this.blockMin[b]!) this.blockMin[b] = raw;
    this.blockN++;
    let m = Infinity;
    for (let i = 0; i < OFFSET_BLOCKS; i++) if (this.blockMin[i]! < m) m = this.blockMin[i]!;
    this.offset = m;
  }

  /**
   * The board's clock stepped back against the host's (a simulated board whose time stood still while
   * its thread was starved; a crystal does not): the last two complete blocks `a` and `b` both sit
   * above the window's minimum by more than OFFSET_STEP_S, at one level (within half that). Samples
   * that queued behind a stalled host drain at falling levels instead, so they do not pass. The window
   * restarts from the two blocks; without this the latency of every sample read against the old
   * offset, up to a whole window (512 samples), would be too large by the step.
   */
  private followStep(a: number, b: number): void {
    const m = this.blockMin;
    let rest = Infinity;
    for (let i = 0; i < OFFSET_BLOCKS; i++) if (i !== a && i !== b && m[i]! < rest) rest = m[i]!;
    const level = Math.min(m[a]!, m[b]!);
    if (rest === Infinity || level - rest <= OFFSET_STEP_S || Math.abs(m[a]! - m[b]!) > OFFSET_STEP_S / 2) return;
    for (let i = 0; i < OFFSET_BLOCKS; i++) if (i !== a && i !== b) m[i] = Infinity;
  }

  /**
   * The board's clock stepped back against the host's, seen in the chunks the host read on time (issue
   * 35, item 5). A chunk no larger than the link's usual burst was read as it came, so its newest
   * sample arrived as early as the link allows: if that sample reads more than the usual burst plus a
   * period plus 1 ms above the offset, the board's time stood still that much (a simulated board
   * starved: its time stands still, mock-thread.ts; a host that read late would have found more
   * samples waiting), and the offset is taken up to it at once, for this chunk's samples too. Before, only followStep (two whole blocks of 32 samples at one level within
   * 0.5 ms, which a 16U2's bursts often are not) caught it; otherwise the window held the old offset
   * for up to 512 samples, every latency read that much too large: a quiet 15 s run at 1 kHz reported
   * a latency p99 of 21 ms beside a longest stall of 12 ms. A chunk larger than the usual burst is the
   * host reading late (its samples drain at falling levels) and moves nothing. Returns true if the
   * offset was taken up.
   */
  private followClockStep(raws: readonly number[]): boolean {
    const usual = this.bursts.add(raws.length);
    if (raws.length > usual || this.periodUs <= 0) return false;
    const newest = raws[raws.length - 1]!;
    const bound = ((usual + 1) * this.periodUs) / 1e6 + 0.001;
    if (!(newest - this.offset > bound)) return false;
    this.blockMin.fill(Infinity);
    this.blockN = 0;
    this.trackOffset(newest);
    return true;
  }

  /**
   * Which answer did sample `index` apply (its ack)? Learns the link's delay in samples (the smallest
   * that covers 95 % of the last 256 answers, at most one past their median: answer-delay.ts; a native
   * USB board's frames add one or two periods at 1 kHz, a 16U2's Timer0 flush four or five, an FTDI at
   * 16 ms more) and counts the answers applied later than that as late.
   */
  private checkAnswers(index: number, ack: number | null): void {
    // A delay is evidence only when the sample before this one arrived too (a lost T would hide when
    // the answer really applied).
    const contiguous = index === this.lastIndex + 1;
    this.lastIndex = index;
    for (let d = 1; d <= MAX_DELAY_SAMPLES; d++) {
      const k = index - d;
      if (k < 0) break;
      const slot = k & (ANSWER_SLOTS - 1);
      if (this.answerIdx[slot] !== k) continue;
      const seq = this.answerSeq[slot]!;
      const applied = ack !== null && (ack - seq + 65536) % 65536 < 32768; // this answer or a newer one
      if (ack === seq || applied) {
        this.answerIdx[slot] = -1;
        if (ack === seq && contiguous) this.recordDelay(d);
      } else if (d === this.delaySamples) {
        // Not applied by the sample it was due at.
        this.counters.late++;
      } else if (d === MAX_DELAY_SAMPLES) {
        this.answerIdx[slot] = -1;
      }
    }
  }

  private recordDelay(d: number): void {
    const i = this.delayN++ & 255;
    if (this.delayN > 256) this.delayHist[this.delayRing[i]!]!--;
    this.delayRing[i] = d;
    this.delayHist[d]!++;
    const n = Math.min(this.delayN, 256);
    if (n < 16) return;
    this.delaySamples = answerDelayOf(this.delayHist, n);
  }

  /** The link's delay from a sample to the sample that applies its answer [samples]. */
  get answerDelaySamples(): number {
    return this.delaySamples;
  }

  /**
   * Hands the samples of one chunk of bytes to the listener, in order; all but the newest are marked
   * superseded (the host fell behind: they are recorded, only the newest is answered).
   */
  private flush(): void {
    this.flushQueued = false;
    const b = this.batch;
    if (b.length === 0) return;
    this.batch = [];
    const raws = this.batchRaw;
    this.batchRaw = [];
    if (this.followClockStep(raws)) for (const r of b) r.sampleTime = r.boardTime + this.offset;
    for (let i = 0; i < b.length; i++) {
      const r = b[i]!;
      r.superseded = i < b.length - 1;
      this.answering = r.superseded ? -1 : r.index;
      this.answeringAt = r.superseded ? NaN : r.applyAt;
      try {
        this.sampleListener(r);
      } finally {
        this.answering = -1;
        this.answeringAt = NaN;
      }
    }
  }

  onSample(listener: (r: Reading) => void): void {
    this.sampleListener = listener;
  }

  get samplePeriod(): number | undefined {
    return this.periodUs > 0 ? this.periodUs / 1e6 : undefined;
  }

  /**
   * Streaming mode (PROTOCOL.md section 8): the board samples on its timer `hz` times a second and
   * applies each answer at its next sample.
   */
  async startSampling(hz: number): Promise<void> {
    // Sampling starts as the board's acknowledgement is READ, not when this await resumes: the board
    // may send its first T in the same chunk as the A (a lock-step board then waits for that sample's
    // answer), and a T read before the period is known would be kept as `latest` but never handed to
    // the listener, so never answered.
    await this.command(
      (seq) => ({ type: 'R', seq, hz }),
      () => {
        // The board's period is whole microseconds (1000000 / hz, truncated), as the firmware's timer.
        this.periodUs = Math.floor(1e6 / hz);
        this.gridT0 = -1;
        this.lastIndex = -2;
        this.answerIdx.fill(-1);
      },
    );
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

  // ------------------------------------------------------------------ sending

  private nextSeq(): number {
    const s = this.seq;
    this.seq = (this.seq + 1) % 65536;
    return s;
  }

  private sendBody(body: string): void {
    if (this.closed) return;
    const line = frameLine(body);
    this.counters.sent++;
    this.counters.bytesOut += line.length;
    this.o.stream.write(line, 'latin1');
  }

  /** Sends a frame and waits for the answer that acks it. */
  private request(make: (seq: number) => HostFrame, timeoutMs = this.o.answerMs ?? 500, onAck?: () => void): Promise<BoardFrame> {
    const seq = this.nextSeq();
    const frame = make(seq);
    return new Promise((resolve, reject) => {
      const timer = this.o.clock.setTimer(timeoutMs / 1000, () => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        reject(new LinkError(`${this.name}: no answer to ${frame.type} within ${timeoutMs} ms`, 'no-answer'));
      });
      const waiter: Waiter = {
        seq,
        resolve: (f) => {
          this.o.clock.clearTimer(timer);
          if (f.type === 'A') onAck?.();
          resolve(f);
        },
        reject: (e) => {
          this.o.clock.clearTimer(timer);
          reject(e);
        },
      };
      this.waiters.push(waiter);
      this.sendBody(hostBody(frame));
    });
  }

  /** Sends a command and waits for its acknowledgement; `onAck` runs as the A is read, before anything read after it. */
  private async command(make: (seq: number) => HostFrame, onAck?: () => void): Promise<void> {
    const f = await this.request(make, undefined, onAck);
    if (f.type === 'E')
      throw new LinkError(`${this.name}: the board refused the command: ${f.code} ${f.text}`, `board:${f.code.toLowerCase()}`);
  }

  writeDuty(jointDuty: readonly number[]): number {
    const duty = this.space.toBoard(jointDuty);
    const seq = this.nextSeq();
    let body = `M ${seq}`;
    for (let i = 0; i < this.joints; i++) {
      let d = duty[i]!;
      if (!Number.isFinite(d)) {
        this.counters.nonFinite++;
        d = 0;
      }
      const pm = Math.round(Math.max(-1, Math.min(1, d)) * 1000);
      body += ` ${pm === 0 ? 0 : pm}`; // never "-0"
    }
    this.sendBody(body);
    this.space.duties.sent(seq, jointDuty, this.answeringAt);
    if (this.answering >= 0) {
      const slot = this.answering & (ANSWER_SLOTS - 1);
      this.answerIdx[slot] = this.answering;
      this.answerSeq[slot] = seq;
    }
    return seq;
  }

  appliedDuty(ack: number | null): readonly number[] {
    return this.space.duties.duty(ack);
  }

  dutyChanges(ack: number | null, t: number, horizon: number): readonly DutyChange[] {
    return this.space.duties.changesAfter(ack, t, horizon);
  }

  async open(): Promise<BoardIdentity> {
    const o = this.o;
    let deadline = o.clock.now() + o.handshakeMs / 1000;
    let info: BoardInfo | undefined;
    let lastError: string | undefined;
    // Keep saying hello until the deadline, and at least HELLO_TRIES times (a host starved by a busy
    // machine may see its deadline pass before it has asked more than once). A board the open reset
    // is in its bootloader for 1-2 s (dtr.ts): once its first hello goes unanswered, say so and wait
    // that much longer.
    const t0 = o.clock.now();
    const bootMs = o.bootloaderMs ?? 0;
    let bootWait = false;
    let hellos = 0;
    while (!info && (o.clock.now() < deadline || hellos < HELLO_TRIES) && !this.closed) {
      if (hellos === 1 && bootMs > 0 && this.counters.received + this.stale.frames === 0) {
        bootWait = true;
        deadline += bootMs / 1000;
        this.listener({ kind: 'waiting', text: bootloaderWaitText(this.name, (deadline - o.clock.now()) * 1000) });
      }
      hellos++;
      try {
        const f = await this.request((seq) => ({ type: 'H', seq, proto: PROTOCOL }), 250);
        if (f.type === 'I') info = f.info;
        else if (f.type === 'E') {
          if (f.code === 'VERSION') {
            throw new LinkError(
              `${this.name}: the board refused protocol ${PROTOCOL} (${f.text}): flash firmware-protocol/firmware (see docs/first-arm.md) or update twolink`,
              'version',
            );
          }
          lastError = `${f.code} ${f.text}`;
        }
      } catch (e) {
        if (e instanceof LinkError && e.reason !== 'no-answer') throw e;
      }
    }
    if (!info) {
      const waitedMs = Math.round((o.clock.now() - t0) * 1000);
      const c = { heard: this.counters.bytesIn, frames: this.counters.received + this.stale.frames, validBytes: this.validBytes };
      throw noHandshake(this.name, o, bootWait ? bootMs : 0, c, lastError, { waitedMs, hellos });
    }
    checkBoardInfo(this.name, info, this.joints, this.space.boardCountsPerRev);
    this.info = info;
    this.handshaken = true;
    await this.command((seq) => ({ type: 'W', seq, ms: o.watchdogMs }));
    return {
      transport: 'line',
      port: this.name,
      firmware: info.fw,
      board: info.board,
      protocol: String(info.proto),
      joints: info.joints,
      countsPerRev: this.space.toJoints(info.cpr),
      watchdogMs: o.watchdogMs,
      ...(info.up !== undefined ? { uptimeMs: info.up } : {}),
    };
  }

  /** The identity the board gave, after open(). */
  get board(): BoardInfo | undefined {
    return this.info;
  }

  enable(on: boolean): Promise<void> {
    return this.command((seq) => ({ type: 'N', seq, enable: on }));
  }

  zero(mask = (1 << this.joints) - 1): Promise<void> {
    const board = this.space.boardMask(mask);
    return this.command((seq) => ({ type: 'Z', seq, mask: board }));
  }

  async ping(): Promise<void> {
    await this.command((seq) => ({ type: 'P', seq }));
  }

  async stop(timeoutMs = 200): Promise<StopOutcome> {
    if (this.closed) return 'unconfirmed';
    try {
      const f = await this.request((seq) => ({ type: 'S', seq }), timeoutMs);
      return f.type === 'A' ? 'acknowledged' : 'unconfirmed';
    } catch {
      return 'unconfirmed';
    }
  }

  /**
   * Stops the board's sample clock (`R 0`: back to sync mode, PROTOCOL.md section 8), then closes the
   * port: a board left streaming fills the port for the next session with samples nobody asked for.
   * Waits for the answer at most `quietMs`; a board that does not answer is closed anyway (the next
   * session's hello stops it).
   */
  async close(quietMs = 200): Promise<void> {
    if (this.closed) return;
    if (this.periodUs > 0 && this.handshaken) {
      await this.request((seq) => ({ type: 'R', seq, hz: 0 }), quietMs).catch(() => undefined);
    }
    await closeStream(this.o.stream);
    this.onClose('closed by twolink');
  }
}

export { closeStream };
