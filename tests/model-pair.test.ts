// Per-joint pairs: asPair / asOutPair check the length (the one place a two-joint array becomes a
// [number, number] tuple), finitePair also the values, and the pair helpers build joint by joint.
import { describe, expect, it } from 'vitest';
import { asOutPair, asPair, finitePair, J, mapPair, pairOf, PairLengthError } from '../src/model/types.js';

describe('per-joint pairs', () => {
  it('asPair and asOutPair pass a two-entry array through as the same array', () => {
    const a = [0.1, -0.2];
    expect(asPair(a)).toBe(a);
    expect(asOutPair(a)).toBe(a);
    expect(asPair(a)[1]).toBe(-0.2);
  });

  it('an array of another length throws a PairLengthError naming what it was and its length', () => {
    expect(() => asPair([1], 'q')).toThrow(PairLengthError);
    expect(() => asPair([1], 'q')).toThrow('q has 1 entry; a two-link arm needs exactly 2 (joint 1, joint 2)');
    expect(() => asPair([1, 2, 3], 'qd')).toThrow('qd has 3 entries');
    expect(() => asPair([])).toThrow('a per-joint array has 0 entries');
    expect(() => asOutPair([0, 0, 0], 'tau out')).toThrow('tau out has 3 entries');
    expect(() => asOutPair([])).toThrow('a per-joint output array has 0 entries');
  });

  it('finitePair also rejects a non-finite value, naming the joint', () => {
    expect(finitePair([1, 2], 'duty')).toEqual([1, 2]);
    expect(() => finitePair([1, NaN], 'duty')).toThrow('duty: joint 2 is NaN, not a finite number');
    expect(() => finitePair([-Infinity, 0], 'q')).toThrow('q: joint 1 is -Infinity, not a finite number');
    expect(() => finitePair([1], 'q')).toThrow('q has 1 entry');
  });

  it('J, pairOf and mapPair go over joint 1 then joint 2', () => {
    expect([...J]).toEqual([0, 1]);
    const seen: number[] = [];
    expect(pairOf((j) => (seen.push(j), 10 * (j + 1)))).toEqual([10, 20]);
    expect(seen).toEqual([0, 1]);
    expect(mapPair([3, 4], (v, j) => `${j}:${v}`)).toEqual(['0:3', '1:4']);
  });
});
