// The link's sample instants (on the host's clock) when the board's clock steps back against the
// host's: a simulated board whose time stood still while its thread was starved (issue 35, item 5). The
// latency of every answered sample is measured from that instant; with the window's old offset it read
// a whole window (512 samples) too large: a quiet 15 s run at 1 kHz reported latency p99 21 ms beside a
// longest stall of 12 ms. A scripted board on a stream, in virtual time: every arrival is chosen.
import { describe, expect, it } from 'vitest';
import { FLAG, type BoardFrame } from '../src/protocol/codec.js';
import { runUntilSettled, settle } from '../src/time/clock.js';
import type { Reading } from '../src/transport/link.js';
import { hangGuardMs } from './helpers/hang-guard.js';
import { scriptedBoard } from './helpers/scripted-board.js';

const PERIOD_S = 0.001;

/** A board that answers every command and sends the T frames the test asks for, on a stream pair. */
async function scripted() {
  let lastAck: number | null = null;
  const { clock, link, send, nextSeq } = scriptedBoard('script', (h) => {
    lastAck = h.seq;
    return h.type === 'M'; // every command but M is acknowledged
  });
  const wait = <T>(p: Promise<T>): Promise<T> => runUntilSettled(clock, p, { maxRealMs: hangGuardMs(15_000) });
  await wait(link.open());
  await wait(link.startSampling(1000));
  const readings: Reading[] = [];
  link.onSample((r) => readings.push(r));
  /** Sample `k` at board time `boardS`, arriving (with the others of its chunk) at host time `atS`. */
  const chunk = async (atS: number, samples: { k: number; boardS: number }[]): Promise<void> => {
    clock.advanceTo(atS);
    send(
      ...samples.map((s): BoardFrame => ({
        type: 'T',
        seq: nextSeq(),
        ack: lastAck,
        t: Math.round(s.boardS * 1e6),
        counts: [0, 0],
        flags: FLAG.EN,
      })),
    );
    await settle();
  };
  return { clock, link, readings, chunk };
}

/**
 * Samples at 1 kHz in bursts of four, the newest of each arriving 0.3 ms after it was taken; the link's
 * error on each sample instant [s]. `step`: the board's time stands still `stepS` before sample `from`
 * (no sample is taken meanwhile: from then on each is taken that much later on the host's clock, at
 * the same board time). `hostLate`: the host reads the burst at sample `at` only when `s` more of
 * samples have queued (one chunk, its newest on time).
 */
async function run(n: number, step?: { from: number; stepS: number }, hostLate?: { at: number; s: number }) {
  const s = await scripted();
  const t0 = s.clock.now() + 0.01;
  const taken = (j: number): number => t0 + j * PERIOD_S + (step && j >= step.from ? step.stepS : 0);
  let k = 0;
  while (k < n) {
    const burst = hostLate && k === hostLate.at ? Math.round(hostLate.s / PERIOD_S) + 4 : 4;
    const ks = Array.from({ length: burst }, (_, i) => k + i);
    await s.chunk(
      taken(ks.at(-1)!) + 0.0003,
      ks.map((j) => ({ k: j, boardS: j * PERIOD_S })),
    );
    k += burst;
  }
  return s.readings.map((r) => ({ index: r.index, errS: r.sampleTime - taken(r.index), superseded: r.superseded }));
}

describe("the link's sample instants follow a board clock that stepped back", () => {
  it('a steady board: every sample instant within the burst hold (0.3 .. 3.3 ms early at most)', async () => {
    const rs = await run(400, undefined);
    const worst = Math.max(...rs.map((r) => Math.abs(r.errS)));
    expect(worst).toBeLessThan(0.0034);
  });

  it('the board clock stands still 20 ms at sample 200: the instants of the newest samples are right again at the first chunk after (before: 512 samples 20 ms off)', async () => {
    const rs = await run(800, { from: 200, stepS: 0.02 });
    // Every answered (newest of its chunk) sample after the step: within the burst hold of its true instant.
    const after = rs.filter((r) => r.index >= 200 && !r.superseded);
    const off = after.filter((r) => Math.abs(r.errS) > 0.0034);
    expect(off.map((r) => `${r.index}: ${(r.errS * 1e3).toFixed(1)} ms`)).toEqual([]);
  });

  it('a host that read late (a chunk of 24 samples 20 ms late) moves nothing: the samples after it read as before', async () => {
    const rs = await run(800, undefined, { at: 400, s: 0.02 });
    const answered = rs.filter((r) => !r.superseded && r.index > 430);
    expect(Math.max(...answered.map((r) => Math.abs(r.errS)))).toBeLessThan(0.0034);
  });
});
