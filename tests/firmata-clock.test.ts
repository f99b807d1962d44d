// The Firmata path's clocks as pure functions: the AVR's millis() (Timer0 overflows of 1.024 ms and the
// 2 ms step every ~42 ms), ConfigurableFirmata's sampling on it, and the host's clock recovery that
// turns report counts and arrival times into board time. Arrivals are simulated with a seeded PRNG.
import { describe, expect, it } from 'vitest';
import { mulberry32 } from '../src/model/random.js';
import { avrMillis, overflowWhenMillis, TIMER0_OVERFLOW_S } from '../src/protocol/firmata.js';
import { ReportClock } from '../src/transport/firmata-clock.js';

/** Board times [s] of the reports FirmataReporting::elapsed() makes at `intervalMs` on millis(). */
function reportTimes(intervalMs: number, count: number, fract0 = 0, clockScale = 1): number[] {
  const out: number[] = [];
  let prev = 0;
  for (let n = 0; out.length < count; n++) {
    const ms = avrMillis(n, fract0);
    if (ms - prev > intervalMs) {
      prev += intervalMs;
      if (ms - prev > intervalMs) prev = ms - intervalMs;
      out.push(n * TIMER0_OVERFLOW_S * clockScale);
    }
  }
  return out;
}

/**
 * Host arrival times of reports taken at `taken`: a fixed latency, the USB full-speed 1 ms frames, and
 * a random extra delay up to `jitterS`; with `stalls`, every 200th report the host stalls `stallS` and
 * everything that arrived meanwhile comes in one chunk. Returns chunks: [arrival, count].
 */
function arrivals(taken: number[], seed: number, jitterS: number, stall?: { every: number; stallS: number }): [number, number][] {
  const rnd = mulberry32(seed);
  const at = taken.map((t) => {
    const onWire = t + 0.0023; // a 13-byte report at 57600 baud
    return Math.ceil(onWire / 0.001) * 0.001 + 0.0002 + rnd() * jitterS;
  });
  for (let i = 1; i < at.length; i++) at[i] = Math.max(at[i]!, at[i - 1]!); // a byte stream stays in order
  const chunks: [number, number][] = [];
  let i = 0;
  while (i < at.length) {
    if (stall && i > 0 && i % stall.every === 0) {
      const wake = at[i]! + stall.stallS;
      let k = 0;
      while (i + k < at.length && at[i + k]! <= wake) k++;
      chunks.push([wake, k]);
      i += k;
    } else {
      chunks.push([at[i]!, 1]);
      i++;
    }
  }
  return chunks;
}

function recover(chunks: [number, number][], periodS: number): { clock: ReportClock; index: number[]; lost: number } {
  const clock = new ReportClock(periodS);
  const index: number[] = [];
  let lost = 0;
  for (const [t, k] of chunks) {
    const a = clock.arrive(t, k);
    lost += a.lost;
    for (let j = 0; j < k; j++) index.push(a.first + j);
  }
  return { clock, index, lost };
}

describe("the AVR's millis()", () => {
  it('advances 1 per 1.024 ms overflow and 2 once every 41 or 42 overflows, so it is right on average', () => {
    const steps: number[] = [];
    for (let n = 1; n <= 5000; n++) steps.push(avrMillis(n) - avrMillis(n - 1));
    expect(new Set(steps)).toEqual(new Set([1, 2]));
    const twos = steps.flatMap((s, i) => (s === 2 ? [i] : []));
    const gaps = twos.slice(1).map((x, i) => x - twos[i]!);
    expect(new Set(gaps)).toEqual(new Set([41, 42]));
    // 5000 overflows = 5.12 s of Timer0: millis() says 5120 (within one step)
    expect(Math.abs(avrMillis(5000) - 5000 * 1.024)).toBeLessThanOrEqual(1);
    for (const ms of [1, 2, 42, 43, 1000, 12345]) {
      const n = overflowWhenMillis(ms);
      expect(avrMillis(n)).toBeGreaterThanOrEqual(ms);
      expect(avrMillis(n - 1)).toBeLessThan(ms);
    }
  });

  it('reports every "3 ms" are taken 3.072 ms apart, with one 2.048 ms interval about every 42 ms; 3.000 ms on average', () => {
    const t = reportTimes(3, 2001);
    const d = t.slice(1).map((x, i) => (x - t[i]!) * 1000);
    const long = d.filter((x) => Math.abs(x - 3.072) < 1e-9).length;
    const short = d.filter((x) => Math.abs(x - 2.048) < 1e-9).length;
    expect(long + short).toBe(d.length);
    expect(short / d.length).toBeCloseTo(1 / 14, 2);
    expect(((t.at(-1)! - t[0]!) / (t.length - 1)) * 1000).toBeCloseTo(3.0, 2);
  });
});

describe('clock recovery: board time from the report count', () => {
  const P = 0.003;

  it('under arrival jitter and the millis() pattern: no report counted lost, the period found, board time within one Timer0 step of the truth', () => {
    const taken = reportTimes(3, 6000, 37);
    const { clock, index, lost } = recover(arrivals(taken, 1, 0.0015), P);
    expect(lost).toBe(0);
    expect(index).toEqual(taken.map((_, i) => i));
    expect(clock.period).toBeCloseTo(P, 6);
    // the board's own samples sit on its 1.024 ms Timer0 grid: n P is within one overflow of them
    for (let i = 0; i < taken.length; i++)
      expect(Math.abs(clock.boardTime(i) - (taken[i]! - taken[0]!))).toBeLessThan(TIMER0_OVERFLOW_S + 1e-4);
  });

  it('board time does not depend on when the reports arrived: the same reports with other jitter get the same board times', () => {
    const taken = reportTimes(3, 3000, 5);
    const a = recover(arrivals(taken, 2, 0.0005), P);
    const b = recover(arrivals(taken, 3, 0.004), P);
    const arrA = arrivals(taken, 2, 0.0005).map(([t]) => t);
    const arrB = arrivals(taken, 3, 0.004).map(([t]) => t);
    let arrivalSpread = 0;
    let boardSpread = 0;
    for (let i = 1; i < taken.length; i++) {
      arrivalSpread = Math.max(arrivalSpread, Math.abs(arrA[i]! - arrA[i - 1]! - (arrB[i]! - arrB[i - 1]!)));
      boardSpread = Math.max(
        boardSpread,
        Math.abs(a.clock.boardTime(i) - a.clock.boardTime(i - 1) - (b.clock.boardTime(i) - b.clock.boardTime(i - 1))),
      );
    }
    // the intervals between arrivals differ by milliseconds; the intervals in board time by nanoseconds
    expect(arrivalSpread).toBeGreaterThan(0.002);
    expect(boardSpread).toBeLessThan(1e-7);
    // so a speed from board time is the arm's, not the jitter's: a joint at 100 counts/s
    const speed = (c: ReportClock, i: number): number => (100 * (taken[i]! - taken[i - 10]!)) / (c.boardTime(i) - c.boardTime(i - 10));
    for (let i = 2000; i < 2100; i++) expect(Math.abs(speed(b.clock, i) - 100)).toBeLessThan(100 * (TIMER0_OVERFLOW_S / 0.03) + 1e-6);
  });

  it('a host stall delivers a backlog in one chunk: the reports are consecutive, none lost', () => {
    const taken = reportTimes(3, 4000, 11);
    const chunks = arrivals(taken, 4, 0.001, { every: 200, stallS: 0.08 });
    expect(chunks.some(([, k]) => k > 20)).toBe(true);
    const { index, lost } = recover(chunks, P);
    expect(lost).toBe(0);
    expect(index).toEqual(taken.map((_, i) => i));
  });

  it('reports the board skipped show as a gap that stays: once 32 reports have kept it, the index advances past them', () => {
    const taken = reportTimes(3, 1000, 0);
    const kept = taken.filter((_, i) => i < 500 || i >= 505);
    const clock = new ReportClock(P);
    const got: number[] = [];
    let lost = 0;
    let countedAt = -1;
    for (const [t, k] of arrivals(kept, 5, 0.0008)) {
      const a = clock.arrive(t, k);
      if (a.lost > 0 && countedAt < 0) countedAt = got.length;
      lost += a.lost;
      got.push(a.first);
    }
    expect(lost).toBe(5);
    // confirmed 32-34 reports after the gap; from then on every index is the board's
    expect(countedAt).toBeGreaterThanOrEqual(532);
    expect(countedAt).toBeLessThanOrEqual(534);
    for (let i = countedAt; i < got.length; i++) expect(got[i]).toBe(i + 5);
    expect(got.at(-1)).toBe(999);
    expect(clock.lateNotLost).toBe(0);
  });

  it('the stock firmware skipping as FirmataReporting::elapsed() does after a loop() held up 20 ms: the reports it never sent are counted', () => {
    // ConfigurableFirmata 2.10.1 src/FirmataReporting.cpp elapsed(): `previousMillis += samplingInterval;
    // if (currentMillis - previousMillis > samplingInterval) previousMillis = currentMillis - samplingInterval;`
    const taken: number[] = [];
    let prev = 0;
    for (let n = 0; taken.length < 1200; n++) {
      const blocked = n >= 980 && n < 1000; // loop() held up for 20 overflows (20.5 ms)
      const ms = avrMillis(n);
      if (!blocked && ms - prev > 3) {
        prev += 3;
        if (ms - prev > 3) prev = ms - 3;
        taken.push(n * TIMER0_OVERFLOW_S);
      }
    }
    const { index, lost } = recover(arrivals(taken, 8, 0.0008), P);
    // what the board skipped: how far its reports moved off the n P grid across the gap, in whole
    // periods (the clamp moves the grid by a fraction of a period too: 19.2 ms here, 6.4 periods)
    const gap = taken.findIndex((t, i) => i > 0 && t - taken[i - 1]! > 10e-3);
    const off = (i: number): number => taken[i]! - i * P;
    const skipped = Math.round((off(taken.length - 1) - off(gap - 1)) / P);
    expect(skipped).toBe(6);
    expect(lost).toBe(skipped);
    expect(index.at(-1)).toBe(taken.length - 1 + skipped);
  });

  it('reports held up on their way (a starved simulator or rig, a USB adapter) and then drained at the wire rate are late, not lost: none counted, the index stays the count', () => {
    const taken = reportTimes(3, 3000, 2);
    for (const heldMs of [6, 10, 25, 60]) {
      const at = taken.map((t) => t + 0.0035);
      // every 500th report the path stalls `heldMs`, and again 12 reports later (a hold that builds up);
      // what piled up then leaves at 57600 baud (2.26 ms a report)
      for (const s of [500, 512, 1000, 1012, 1500, 2000, 2500]) {
        let free = at[s]! + heldMs / 1000;
        for (let i = s; i < at.length && at[i]! < free; i++) {
          at[i] = free;
          free += 0.00226;
        }
      }
      const { index, lost, clock } = recover(
        at.map((t) => [t, 1]),
        P,
      );
      expect(lost, `held ${heldMs} ms`).toBe(0);
      expect(index).toEqual(taken.map((_, i) => i));
      expect(clock.lateNotLost, `held ${heldMs} ms`).toBeGreaterThanOrEqual(5);
    }
  });

  it("follows a board whose resonator runs 0.3 % slow: the period is the board's, not the nominal one", () => {
    const taken = reportTimes(3, 8000, 3, 1.003);
    const { clock, lost } = recover(arrivals(taken, 6, 0.001), P);
    expect(lost).toBe(0);
    expect(clock.period / P).toBeCloseTo(1.003, 4);
  });

  it('board time advances by one period per index across chunks, also when the period is refitted during a backlog', () => {
    // a board 1.7 % slow: the first fit moves the period by 1.7 %, while 30-report backlogs arrive
    const taken = reportTimes(3, 3000, 0, 1.017);
    const chunks = arrivals(taken, 7, 0.0005, { every: 40, stallS: 0.09 });
    const clock = new ReportClock(P);
    let prev: { i: number; t: number } | undefined;
    let worst = 0;
    for (const [t, k] of chunks) {
      const a = clock.arrive(t, k);
      for (let j = 0; j < k; j++) {
        const i = a.first + j;
        const bt = clock.boardTime(i);
        if (prev) worst = Math.max(worst, Math.abs((bt - prev.t) / (i - prev.i) / P - 1));
        prev = { i, t: bt };
      }
    }
    expect(clock.period / P).toBeCloseTo(1.017, 3);
    expect(worst).toBeLessThan(0.02);
  });
});
