// Fuzzing in the test suite (smaller than `npm run bench`'s million inputs per decoder): nothing a peer
// sends crashes the host, no frame with a bad checksum is accepted, memory stays bounded.
import { describe, expect, it } from 'vitest';
import { fuzzFirmata, fuzzLine } from '../src/bench/fuzz.js';

describe('fuzzing the decoders', () => {
  it('line protocol: 200k random and mutated inputs and a 1 MB line', () => {
    const f = fuzzLine(200_000, 7);
    expect(f.exceptions).toBe(0);
    expect(f.badChecksumAccepted).toBe(0);
    expect(f.accepted).toBeGreaterThan(10_000); // the valid frames among them still decode
    expect(f.maxPending).toBeLessThan(128);
    expect(f.heapGrowthMb).toBeLessThan(64);
  });

  it('Firmata: 100k random and Firmata-shaped inputs on a ready link; no exception escapes, decoding goes on', async () => {
    const f = await fuzzFirmata(100_000, 9);
    expect(f.exceptions).toBe(0);
    expect(f.readingAfter).toBe(true);
    expect(f.heapGrowthMb).toBeLessThan(64);
  });
});
