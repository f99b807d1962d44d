// The USB-serial adapter models between the host and the mock board's UART (virtual time), and the
// constants they are built on, pinned to the values read in the chips' public sources (see
// src/config/cable.ts for each source).
import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../src/time/clock.js';
import { UsbSerialAdapter, type AdapterKind } from '../src/mock/usb-adapter.js';
import {
  adapterOfUsbId,
  BOARD_ADAPTER,
  cableAdvice,
  cableWarning,
  CH340,
  defaultRateHz,
  FTDI,
  NATIVE,
  U2,
  USB_FRAME_S,
} from '../src/config/cable.js';
import { parseRigFile } from '../src/config/rig.js';
import { resolveRig } from '../src/config/load.js';

/** Arrival times [s] of `bytes`-long frames the board sent at `sendAt`, through an adapter of `kind`. */
function arrivals(kind: AdapterKind, sendAt: number[], bytes: number, latencyMs?: number): number[] {
  const clock = new VirtualClock();
  const a = new UsbSerialAdapter(clock, { kind, ...(latencyMs ? { latencyMs } : {}) });
  const got: number[] = [];
  a.onUp = (b) => {
    for (let i = 0; i < b.length; i += bytes) got.push(clock.now());
  };
  for (const t of sendAt) clock.setTimer(t, () => a.up(Buffer.alloc(bytes, 0x41)));
  clock.advanceTo(Math.max(...sendAt) + 0.5);
  return got;
}

const EPS = 1e-9;

describe('adapter constants, as read in the public sources', () => {
  it('16U2 (arduino-usbserial): Timer0 at clk/256 on 16 MHz overflows every 4.096 ms; 128-byte ring, flushed past 96; 64-byte endpoint', () => {
    expect(U2.flushS).toBeCloseTo(0.004096, 12);
    expect(U2.clockHz).toBe(16e6);
    expect(U2.timer0Prescale).toBe(256);
    expect(U2.ringBytes).toBe(128);
    expect(U2.nearlyFullBytes).toBe(96);
    expect(U2.endpointBytes).toBe(64);
  });

  it('FTDI (ftdi_sio.c, DS_FT232R): latency timer 16 ms by default (1-255), 64-byte packets with 2 status bytes, 256/128-byte buffers', () => {
    expect(FTDI.defaultLatencyMs).toBe(16);
    expect([FTDI.minLatencyMs, FTDI.maxLatencyMs]).toEqual([1, 255]);
    expect(FTDI.packetBytes).toBe(64);
    expect(FTDI.statusBytes).toBe(2);
    expect(FTDI.fullBytes).toBe(62);
    expect([FTDI.rxBufferBytes, FTDI.txBufferBytes]).toEqual([256, 128]);
  });

  it('CH340: 32-byte packets; its 1 ms hold is an estimate; native CDC: 64-byte endpoint; USB full-speed frame 1 ms', () => {
    expect(CH340.packetBytes).toBe(32);
    expect(CH340.holdS).toBe(0.001);
    expect(NATIVE.endpointBytes).toBe(64);
    expect(USB_FRAME_S).toBe(0.001);
  });

  it('boards default to their adapter, and USB IDs name the adapter', () => {
    expect(BOARD_ADAPTER.uno).toBe('16u2');
    expect(BOARD_ADAPTER.mega).toBe('16u2');
    expect(BOARD_ADAPTER.leonardo).toBe('native');
    expect(BOARD_ADAPTER.nano).toBe('ftdi');
    expect(adapterOfUsbId(0x2341, 0x0043)?.kind).toBe('16u2');
    expect(adapterOfUsbId(0x2341, 0x0042)?.kind).toBe('16u2');
    expect(adapterOfUsbId(0x2341, 0x8036)?.kind).toBe('native');
    expect(adapterOfUsbId(0x1a86, 0x7523)?.kind).toBe('ch340');
    expect(adapterOfUsbId(0x0403, 0x6001)?.kind).toBe('ftdi');
    expect(adapterOfUsbId(0x0403, 0x6015)?.kind).toBe('ftdi');
    expect(adapterOfUsbId(0x1234, 0x5678, 'cdc_acm')?.kind).toBe('native');
    expect(adapterOfUsbId(0x1234, 0x5678)).toBeUndefined();
  });
});

describe('USB-serial adapter models (virtual time)', () => {
  it('none: bytes pass at once', () => {
    expect(arrivals('none', [0.0101, 0.0203], 44)).toEqual([0.0101, 0.0203]);
  });

  it('16U2: a short frame waits for the next Timer0 overflow (a fixed 4.096 ms grid), then the next USB frame', () => {
    // Frames sent at many phases against the grid: the wait spans most of 0..4.096 ms (+ a frame), never more.
    const sends = Array.from({ length: 40 }, (_, i) => 0.01 + i * 0.0131);
    const got = arrivals('16u2', sends, 20);
    expect(got).toHaveLength(sends.length);
    const waits = got.map((t, i) => t - sends[i]!);
    expect(Math.max(...waits)).toBeLessThanOrEqual(U2.flushS + USB_FRAME_S + EPS);
    expect(Math.max(...waits)).toBeGreaterThan(0.0035);
    expect(Math.min(...waits)).toBeLessThan(0.0015);
  });

  it('16U2 at 1 kHz, 37-byte telemetry lines: the ring passes 96 bytes at the third line, so bursts of about two every ~2 ms', () => {
    const sends = Array.from({ length: 400 }, (_, i) => 0.01 + i * 0.001);
    const got = arrivals('16u2', sends, 37);
    const bursts: number[] = [];
    for (const t of got) if (!bursts.length || t - bursts[bursts.length - 1]! > 1e-6) bursts.push(t);
    const perBurst = got.length / bursts.length;
    expect(perBurst).toBeGreaterThan(1.8);
    expect(perBurst).toBeLessThan(2.6);
    const waits = got.map((t, i) => t - sends[i]!);
    expect(Math.max(...waits)).toBeLessThanOrEqual(U2.flushS + USB_FRAME_S + 1e-9);
  });

  it('16U2 at 1 kHz, short frames (20 bytes): bursts of about four, about 4 ms apart', () => {
    const sends = Array.from({ length: 200 }, (_, i) => 0.01 + i * 0.001);
    const got = arrivals('16u2', sends, 20);
    const bursts: number[] = [];
    for (const t of got) if (!bursts.length || t - bursts[bursts.length - 1]! > 1e-6) bursts.push(t);
    const gaps = bursts.slice(1).map((t, i) => t - bursts[i]!);
    const mean = gaps.reduce((a, b) => a + b, 0) / gaps.length;
    expect(mean).toBeCloseTo(U2.flushS, 3);
    expect(got.length / bursts.length).toBeGreaterThan(3.5);
  });

  it('16U2: more than 96 bytes waiting go at the next USB frame, without the timer', () => {
    // Right after an overflow (the grid starts at 1.13 ms): 97 bytes in two writes.
    const clock = new VirtualClock();
    const a = new UsbSerialAdapter(clock, { kind: '16u2' });
    const got: [number, number][] = [];
    a.onUp = (b) => got.push([clock.now(), b.length]);
    clock.setTimer(0.00114, () => a.up(Buffer.alloc(90)));
    clock.setTimer(0.00116, () => a.up(Buffer.alloc(6)));
    clock.setTimer(0.00118, () => a.up(Buffer.alloc(1)));
    clock.advanceTo(0.02);
    expect(got[0]![1]).toBe(97);
    expect(got[0]![0] - 0.00118).toBeLessThanOrEqual(USB_FRAME_S + EPS);
  });

  it('FTDI: a short frame waits for the latency timer (16 ms by default, 1 ms when tuned); 62 bytes go at once', () => {
    const sends = Array.from({ length: 20 }, (_, i) => 0.05 + i * 0.0371);
    const slow = arrivals('ftdi', sends, 20).map((t, i) => t - sends[i]!);
    expect(Math.max(...slow)).toBeLessThanOrEqual(0.016 + USB_FRAME_S + EPS);
    expect(Math.max(...slow)).toBeGreaterThan(0.012);
    const tuned = arrivals('ftdi', sends, 20, 1).map((t, i) => t - sends[i]!);
    expect(Math.max(...tuned)).toBeLessThanOrEqual(0.001 + USB_FRAME_S + EPS);
    const full = arrivals('ftdi', [0.0503], 62)[0]! - 0.0503;
    expect(full).toBeLessThanOrEqual(USB_FRAME_S + EPS);
  });

  it('CH340 (estimate): a short frame waits its 1 ms hold and the next frame; a 32-byte packet goes at the next frame', () => {
    const w = arrivals('ch340', [0.0101], 20)[0]! - 0.0101;
    expect(w).toBeGreaterThanOrEqual(CH340.holdS - EPS);
    expect(w).toBeLessThanOrEqual(CH340.holdS + USB_FRAME_S + EPS);
    expect(arrivals('ch340', [0.0101], 32)[0]! - 0.0101).toBeLessThanOrEqual(USB_FRAME_S + EPS);
  });

  it("native CDC: every frame goes at the host's next poll, within the 1 ms frame", () => {
    const sends = Array.from({ length: 30 }, (_, i) => 0.01 + i * 0.00077);
    const waits = arrivals('native', sends, 20).map((t, i) => t - sends[i]!);
    expect(Math.max(...waits)).toBeLessThanOrEqual(USB_FRAME_S + EPS);
    expect(Math.min(...waits)).toBeGreaterThanOrEqual(0);
  });

  for (const kind of ['16u2', 'ftdi', 'ch340', 'native'] as const) {
    it(`${kind}: host -> board bytes go out at the next USB frame, in order, none held longer`, () => {
      const clock = new VirtualClock();
      const a = new UsbSerialAdapter(clock, { kind });
      const got: [number, string][] = [];
      a.onDown = (b) => got.push([clock.now(), Buffer.from(b).toString()]);
      clock.setTimer(0.0102, () => a.down(Buffer.from('M 1')));
      clock.setTimer(0.0104, () => a.down(Buffer.from('M 2')));
      clock.advanceTo(0.02);
      expect(got.map((g) => g[1])).toEqual(['M 1', 'M 2']);
      const sent = [0.0102, 0.0104];
      got.forEach(([t], i) => {
        expect(t).toBeGreaterThanOrEqual(sent[i]!);
        expect(t).toBeLessThanOrEqual(sent[i]! + USB_FRAME_S + EPS);
      });
    });
  }
});

describe('what a cable allows', () => {
  it('recommends 500 Hz behind a 16U2, 100 Hz (the lowest a rig allows) behind an FTDI at 16 ms, 1 kHz native or FTDI at 1 ms', () => {
    expect(cableAdvice('16u2').rateHz).toBe(500);
    expect(cableAdvice('ftdi', 16).rateHz).toBe(100);
    expect(cableAdvice('ftdi', 1).rateHz).toBe(1000);
    expect(cableAdvice('native').rateHz).toBe(1000);
    expect(cableAdvice('16u2', 16, 1000).answerDelaySamples).toBeGreaterThanOrEqual(4);
  });

  it('warns about 1 kHz through a 16U2 and 250 Hz through an FTDI at 16 ms, not about 1 kHz native', () => {
    expect(cableWarning('16u2', 16, 1000)).toMatch(/16U2.*1000 Hz.*leonardo/);
    expect(cableWarning('ftdi', 16, 250)).toMatch(/latency_timer/);
    expect(cableWarning('native', 16, 1000)).toBeUndefined();
    expect(cableWarning('16u2', 16, 250)).toBeUndefined();
    // 500 Hz behind a 16U2 (the Uno's default rate) is two samples per 4.096 ms flush: no warning.
    expect(cableWarning('16u2', 16, 500)).toBeUndefined();
    expect(cableWarning('ftdi', 1, 1000)).toBeUndefined();
  });
});

describe('a rig file names its board; the adapter and the default rate follow', () => {
  const arm = { L1: 0.3, L2: 0.25, d1: 0.17, d2: 0.1, m1: 0.6, m2: 0.35, I1: 0.006, I2: 0.0025, g: 9.81 };
  const plant = { arm: {} };
  const load = (extra: Record<string, unknown>) => resolveRig(parseRigFile({ arm, ...extra }, 'x.json'), 'x.json');

  it('an Uno by default: 16U2, 500 Hz; a Leonardo: native, 1 kHz; a Nano at 16 ms: FTDI, 100 Hz, at 1 ms: 1 kHz', () => {
    expect(defaultRateHz('16u2')).toBe(500);
    expect(defaultRateHz('native')).toBe(1000);
    const uno = load({ plant });
    expect(uno.cable).toEqual({ board: 'uno', adapter: '16u2', latencyMs: 16 });
    expect(uno.control.rateHz).toBe(500);
    expect(uno.plant!.adapter).toEqual({ kind: '16u2', latencyMs: 16 });
    const leo = load({ board: { name: 'leonardo' }, plant });
    expect(leo.cable.adapter).toBe('native');
    expect(leo.control.rateHz).toBe(1000);
    expect(leo.plant!.adapter.kind).toBe('native');
    expect(load({ board: { name: 'nano' } }).control.rateHz).toBe(100);
    const tuned = load({ board: { name: 'nano', ftdiLatencyMs: 1 }, plant });
    expect(tuned.control.rateHz).toBe(1000);
    expect(tuned.plant!.adapter).toEqual({ kind: 'ftdi', latencyMs: 1 });
  });

  it("the file's own rate, adapter and mock adapter win; a bad board name is an error naming the field", () => {
    const r = load({ board: { name: 'uno', adapter: 'ch340' }, control: { rateHz: 250 }, plant: { arm: {}, adapter: { kind: 'native' } } });
    expect(r.cable.adapter).toBe('ch340');
    expect(r.control.rateHz).toBe(250);
    expect(r.plant!.adapter.kind).toBe('native');
    expect(() => load({ board: { name: 'due' } })).toThrow(/board\.name/);
  });
});
