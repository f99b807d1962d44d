// The shared-memory ring of tick rows (src/control/ring.ts): order, wrap-around of the slots, a reader
// that falls a whole ring behind (it loses the oldest rows and is told how many), the newest row.
import { describe, expect, it } from 'vitest';
import { createRing, RingReader, RingWriter } from '../src/control/ring.js';
import { TICK_WIDTH } from '../src/telemetry/tick.js';

/** A row whose every field says which row it is, so that a torn or misplaced row shows. */
function row(k: number): Float64Array {
  const r = new Float64Array(TICK_WIDTH);
  for (let j = 0; j < TICK_WIDTH; j++) r[j] = k * 1000 + j;
  return r;
}

/** The row numbers a drain delivers, checking each row is whole. */
function drained(reader: RingReader): number[] {
  const got: number[] = [];
  reader.drain((r) => {
    const k = Math.floor(r[0]! / 1000);
    for (let j = 0; j < TICK_WIDTH; j++) expect(r[j]).toBe(k * 1000 + j);
    got.push(k);
  });
  return got;
}

const range = (a: number, b: number): number[] => Array.from({ length: b - a }, (_, i) => a + i);

describe('the tick ring', () => {
  it('refuses a size that is not a power of two', () => {
    expect(() => createRing(12)).toThrow(/power of two, got 12/);
    expect(() => createRing(16)).not.toThrow();
  });

  it('delivers every row once, in order, across the wrap-around of its slots', () => {
    const b = createRing(8);
    const w = new RingWriter(b);
    const r = new RingReader(b);
    let next = 0;
    for (const burst of [5, 6, 8, 1, 7, 3]) {
      for (let k = 0; k < burst; k++) w.write(row(next + k));
      expect(drained(r)).toEqual(range(next, next + burst));
      next += burst;
    }
    expect(r.lost).toBe(0);
    expect(drained(r)).toEqual([]); // nothing new
  });

  it('a reader that falls a whole ring behind gets the newest rows and counts the ones it lost', () => {
    const b = createRing(8);
    const w = new RingWriter(b);
    const r = new RingReader(b);
    for (let k = 0; k < 3; k++) w.write(row(k));
    expect(drained(r)).toEqual([0, 1, 2]);
    for (let k = 3; k < 23; k++) w.write(row(k)); // 20 rows into 8 slots
    expect(drained(r)).toEqual(range(15, 23));
    expect(r.lost).toBe(12);
    for (let k = 23; k < 26; k++) w.write(row(k)); // and it goes on normally
    expect(drained(r)).toEqual([23, 24, 25]);
    expect(r.lost).toBe(12);
  });

  it('a reader attached late to a ring already written sees the same rows (the ring survives its writer)', () => {
    const b = createRing(4);
    const w = new RingWriter(b);
    for (let k = 0; k < 3; k++) w.write(row(k));
    const late = new RingReader(b);
    expect(drained(late)).toEqual([0, 1, 2]);
  });

  it('latest() is undefined before the first row, then the newest row, across wrap-around', () => {
    const b = createRing(4);
    const w = new RingWriter(b);
    const r = new RingReader(b);
    expect(r.latest()).toBeUndefined();
    for (let k = 0; k < 11; k++) {
      w.write(row(k));
      expect(r.latest()![0]).toBe(k * 1000);
    }
  });

  it('drainAt hands the offsets of the same rows as drain, across the wrap; two readers read on their own; skip passes over what was written', () => {
    const ring = createRing(8);
    const w = new RingWriter(ring);
    const a = new RingReader(ring);
    const b = new RingReader(ring);
    for (let k = 0; k < 6; k++) w.write(row(k));
    expect(drained(a)).toEqual([0, 1, 2, 3, 4, 5]);
    for (let k = 6; k < 11; k++) w.write(row(k));
    const got: number[] = [];
    const n = a.drainAt((data, at) => {
      const k = Math.floor(data[at]! / 1000);
      for (let j = 0; j < TICK_WIDTH; j++) expect(data[at + j]).toBe(k * 1000 + j);
      got.push(k);
    });
    expect([n, got]).toEqual([5, [6, 7, 8, 9, 10]]);
    // b has read nothing yet: skip passes over rows 0-10 (none counted lost); a is not touched.
    b.skip();
    w.write(row(11));
    expect(drained(b)).toEqual([11]);
    expect(drained(a)).toEqual([11]);
    expect(b.lost).toBe(0);
  });
});
