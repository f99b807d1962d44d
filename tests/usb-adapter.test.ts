// The USB-serial adapter model between the host and the mock board's UART (virtual time).
import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../src/time/clock.js';
import { UsbSerialAdapter } from '../src/rig/usb-adapter.js';

function arrivals(kind: 'none' | '16u2' | 'ch340' | 'ftdi', sendAt: number[], bytes: number, latencyMs?: number): number[] {
  const clock = new VirtualClock();
  const a = new UsbSerialAdapter(clock, { kind, ...(latencyMs ? { latencyMs } : {}) });
  const got: number[] = [];
  a.onUp = (b) => {
    for (let i = 0; i < b.length; i += bytes) got.push(clock.now());
  };
  for (const t of sendAt) clock.setTimer(t, () => a.up(Buffer.alloc(bytes, 0x41)));
  clock.advanceTo(1);
  return got;
}

describe('USB-serial adapters', () => {
  it('none: bytes pass at once', () => {
    expect(arrivals('none', [0.0101, 0.0203], 44)).toEqual([0.0101, 0.0203]);
  });

  it("the Uno's 16U2: a frame waits for the 1.024 ms flush timer and goes out at the next 1 ms USB frame", () => {
    const got = arrivals('16u2', [0.0101], 44);
    expect(got).toHaveLength(1);
    const wait = got[0]! - 0.0101;
    expect(wait).toBeGreaterThanOrEqual(0.001024);
    expect(wait).toBeLessThanOrEqual(0.001024 + 0.001 + 1e-12);
  });

  it('the 16U2 sends a full 64-byte packet at the next USB frame without waiting for its timer', () => {
    const got = arrivals('16u2', [0.0101], 70);
    expect(got[0]! - 0.0101).toBeLessThanOrEqual(0.001 + 1e-12);
  });

  it('an FTDI holds a short frame until its latency timer: 16 ms by default, 1 ms when tuned', () => {
    const slow = arrivals('ftdi', [0.0101], 44)[0]! - 0.0101;
    const tuned = arrivals('ftdi', [0.0101], 44, 1)[0]! - 0.0101;
    expect(slow).toBeGreaterThanOrEqual(0.016);
    expect(slow).toBeLessThanOrEqual(0.017 + 1e-12);
    expect(tuned).toBeGreaterThanOrEqual(0.001);
    expect(tuned).toBeLessThanOrEqual(0.002 + 1e-12);
  });

  it('host -> board: bytes go out at the next USB frame, in order', () => {
    const clock = new VirtualClock();
    const a = new UsbSerialAdapter(clock, { kind: '16u2' });
    const got: [number, string][] = [];
    a.onDown = (b) => got.push([clock.now(), Buffer.from(b).toString()]);
    clock.setTimer(0.0102, () => a.down(Buffer.from('M 1')));
    clock.setTimer(0.0104, () => a.down(Buffer.from('M 2')));
    clock.advanceTo(0.02);
    expect(got.map((g) => g[1])).toEqual(['M 1', 'M 2']);
    const sent = [0.0102, 0.0104];
    got.forEach(([t], i) => {
      expect(t).toBeGreaterThanOrEqual(sent[i]!);
      expect(t).toBeLessThanOrEqual(sent[i]! + 0.001 + 1e-12);
      // on a frame boundary: 1 ms frames, all at the same phase
      expect(((t - got[0]![0] + 1e-9) % 0.001) - 1e-9).toBeCloseTo(0, 9);
    });
  });
});
