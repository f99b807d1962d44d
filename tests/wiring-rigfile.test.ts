// The rig file's wiring section: validated with one line naming the field, and WiredLink's mapping.
import { describe, expect, it } from 'vitest';
import { loadRig, resolveRig } from '../src/config/load.js';
import { parseRigFile, RigFileError } from '../src/config/rig.js';
import { boardEncoders, WiredLink } from '../src/transport/wired-link.js';
import type { BoardIdentity, DutyChange, Link, LinkEvent, Reading, StopOutcome } from '../src/transport/link.js';
import { zeroCounters } from '../src/transport/link.js';

const base = loadRig('rigs/mock-arm.json').source as unknown as Record<string, unknown>;
const withWiring = (wiring: unknown) => ({ ...JSON.parse(JSON.stringify(base)), wiring });
const resolve = (raw: unknown) => resolveRig(parseRigFile(raw, 'x.json'), 'x.json');

describe('the wiring section of a rig file', () => {
  it.each([
    [{ motorOutput: [1, 1] }, /^x\.json: wiring\.motorOutput: two joints on one channel/],
    [{ encoderInput: [0, 1] }, /^x\.json: wiring\.encoderInput\[0\]: must be 1 or 2 \(outputs and inputs are numbered from 1\)/],
    [{ motorSign: [1, 0] }, /^x\.json: wiring\.motorSign\[1\]/],
    [{ boardCountsPerRev: [2048, -1] }, /^x\.json: wiring\.boardCountsPerRev\[1\]/],
    [{ motorOutput: [2, 1], typo: 1 }, /^x\.json: wiring\.typo: unknown key/],
    [{ motorOutput: [2] }, /^x\.json: wiring\.motorOutput: needs 2 entries, one per joint \(got 1\)/],
  ])('%j is refused, naming the field', (wiring, msg) => {
    let err: unknown;
    try {
      resolve(withWiring(wiring));
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(RigFileError);
    expect((err as Error).message).toMatch(msg);
  });

  it('resolves to 0-based channels with defaults', () => {
    expect(resolve(withWiring({ motorOutput: [2, 1] })).wiring).toEqual({
      motorOutput: [1, 0],
      motorSign: [1, 1],
      encoderInput: [0, 1],
      boardCountsPerRev: [4800, 2400],
    });
    expect(resolve(base).wiring).toBeUndefined();
  });
});

/** A link that records what crosses it and hands out one reading. */
class FakeLink implements Link {
  readonly name = 'fake';
  readonly counters = zeroCounters();
  readonly samplePeriod = 0.002;
  duties: number[][] = [];
  zeroed: number[] = [];
  private listener: (r: Reading) => void = () => {};
  constructor(private readonly raw: number[]) {}
  open(): Promise<BoardIdentity> {
    return Promise.resolve({
      transport: 'line',
      port: 'fake',
      firmware: 'f',
      board: 'mock',
      protocol: '1',
      joints: 2,
      countsPerRev: [2048, 2400],
    });
  }
  reading(): Reading {
    return {
      q: [0, 0],
      raw: this.raw,
      boardTime: 1,
      index: 0,
      applyAt: 1.002,
      superseded: false,
      hostTime: 1,
      sampleTime: 1,
      ack: null,
      enabled: true,
      watchdog: false,
      flags: 0,
    };
  }
  read(): Reading | undefined {
    return this.reading();
  }
  emit(): void {
    this.listener(this.reading());
  }
  writeDuty(duty: readonly number[]): number {
    this.duties.push(duty.slice());
    return 0;
  }
  appliedDuty(): readonly number[] {
    return [0, 0];
  }
  dutyChanges(): readonly DutyChange[] {
    return [];
  }
  enable(): Promise<void> {
    return Promise.resolve();
  }
  zero(mask = 3): Promise<void> {
    this.zeroed.push(mask);
    return Promise.resolve();
  }
  stop(): Promise<StopOutcome> {
    return Promise.resolve('acknowledged');
  }
  startSampling(): Promise<void> {
    return Promise.resolve();
  }
  onSample(l: (r: Reading) => void): void {
    this.listener = l;
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
  onEvent(_l: (e: LinkEvent) => void): void {}
}

describe('WiredLink: the loop in joint order, the board in its own', () => {
  const rig = resolve(withWiring({ motorOutput: [2, 1], motorSign: [1, -1], encoderInput: [2, 1], boardCountsPerRev: [2048, 2400] }));
  const w = rig.wiring!;

  it('the inner link checks each input against what the board reports there', () => {
    // Joint 1 is read on input 2 (the board reports 2048 there), joint 2 on input 1.
    expect(boardEncoders(w).map((e) => e.countsPerRev)).toEqual([2400, 2048]);
  });

  it('duties go to the output that drives each joint, with its sign; zeroing goes to its input', async () => {
    const inner = new FakeLink([600, 1200]);
    const link = new WiredLink(inner, w, rig.encoders);
    link.writeDuty([0.25, 0.5]);
    expect(inner.duties).toEqual([[-0.5, 0.25]]);
    await link.zero(0b01);
    expect(inner.zeroed).toEqual([0b10]);
    expect((await link.open()).countsPerRev).toEqual([2400, 2048]);
  });

  it('angles come from each joint own input and encoder (counts per revolution, sign, zero)', () => {
    const inner = new FakeLink([600, 1200]);
    const link = new WiredLink(inner, w, rig.encoders);
    const got: Reading[] = [];
    link.onSample((r) => got.push(r));
    inner.emit();
    // Joint 1: 1200 counts of 4800 from zeroDeg -90 = 0 deg; joint 2: 600 of 2400 from 0 = 90 deg.
    expect(got[0]!.raw).toEqual([1200, 600]);
    expect(got[0]!.q[0]).toBeCloseTo(0, 12);
    expect(got[0]!.q[1]).toBeCloseTo(Math.PI / 2, 12);
    expect(link.read()!.q[1]).toBeCloseTo(Math.PI / 2, 12);
  });
});
