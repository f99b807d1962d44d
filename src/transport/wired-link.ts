/**
 * @deprecated LineLink takes the rig file's `wiring` itself (transport/joints.ts, the one joint
 * layer); this wrapper is kept for code that wraps a link of its own, and maps through the same
 * JointSpace.
 *
 * A Link in joint order over a board wired otherwise (the rig file's `wiring` section, written by
 * `twolink setup`): joint j's duty goes to the board output that drives it, with its sign; joint j's
 * angle comes from the board input that reads it, converted with joint j's encoder (counts per
 * revolution, sign, zero). Everything else passes through. The loop cannot tell it from a board wired
 * as the wiring table of docs/first-arm.md says.
 *
 * The inner link must be built with `boardEncoders(...)` (the counts per revolution the board reports
 * per input, so that its handshake check passes, sign +1 and zero 0): the angles are made here.
 */
import type { EncoderParams } from '../config/load.js';
import type { HostWiring } from '../config/wiring.js';
import { JointSpace } from './joints.js';
import type { BoardIdentity, DutyChange, Link, LinkCounters, LinkEvent, Reading, StopOutcome } from './link.js';

/** The encoders to give the inner link, per board input: what the board reports there, unconverted. */
export function boardEncoders(w: HostWiring): EncoderParams[] {
  const out: EncoderParams[] = w.encoderInput.map(() => ({ countsPerRev: 1, sign: 1, zero: 0 }));
  w.encoderInput.forEach((input, j) => (out[input] = { countsPerRev: w.boardCountsPerRev[j]!, sign: 1, zero: 0 }));
  return out;
}

export class WiredLink implements Link {
  readonly name: string;
  private readonly space: JointSpace;
  /** Where the answer to the sample being handed out applies [s, board time] (NaN outside one). */
  private answeringAt = NaN;

  constructor(
    private readonly inner: Link,
    w: HostWiring,
    /** The rig file's encoders, per joint. */
    private readonly encoders: readonly EncoderParams[],
  ) {
    this.name = inner.name;
    this.space = new JointSpace(encoders, w);
  }

  get counters(): LinkCounters {
    return this.inner.counters;
  }

  get samplePeriod(): number | undefined {
    return this.inner.samplePeriod;
  }

  async open(): Promise<BoardIdentity> {
    const id = await this.inner.open();
    return id.countsPerRev ? { ...id, countsPerRev: this.space.toJoints(id.countsPerRev) } : id;
  }

  /** The reading in joint order, angles from the counts with each joint's own encoder. */
  private map(r: Reading): Reading {
    return { ...r, ...this.space.fromBoard(r.raw) };
  }

  read(): Reading | undefined {
    const r = this.inner.read();
    return r && this.map(r);
  }

  onSample(listener: (r: Reading) => void): void {
    this.inner.onSample((r) => {
      const m = this.map(r);
      this.answeringAt = m.superseded ? NaN : m.applyAt;
      try {
        listener(m);
      } finally {
        this.answeringAt = NaN;
      }
    });
  }

  writeDuty(duty: readonly number[]): number {
    const seq = this.inner.writeDuty(this.space.toBoard(duty));
    this.space.duties.sent(seq, duty, this.answeringAt);
    return seq;
  }

  appliedDuty(ack: number | null): readonly number[] {
    return this.space.duties.duty(ack);
  }

  dutyChanges(ack: number | null, t: number, horizon: number): readonly DutyChange[] {
    return this.space.duties.changesAfter(ack, t, horizon);
  }

  enable(on: boolean): Promise<void> {
    return this.inner.enable(on);
  }

  zero(mask = (1 << this.encoders.length) - 1): Promise<void> {
    return this.inner.zero(this.space.boardMask(mask));
  }

  stop(timeoutMs?: number): Promise<StopOutcome> {
    return this.inner.stop(timeoutMs);
  }

  startSampling(hz: number): Promise<void> {
    return this.inner.startSampling(hz);
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  onEvent(listener: (e: LinkEvent) => void): void {
    this.inner.onEvent(listener);
  }
}
