// A board that sends its first sample in the same write as its acknowledgement of `R` (our lock-step
// firmware, and any board whose first tick comes quickly, can): the host must hand that sample to the
// loop and answer it. Before the fix, sampling started only when startSampling's await resumed, after
// the chunk had been parsed: the T was kept as the newest reading but never handed on, so never
// answered, and a lock-step board (it samples again only after the answer) waited until the host
// declared the link lost: 5 of 27 runs of tests/realtime/firmware-loop failed so under load.
import { describe, expect, it } from 'vitest';
import { FLAG, type BoardFrame } from '../src/protocol/codec.js';
import { runUntilSettled, settle } from '../src/time/clock.js';
import type { Reading } from '../src/transport/link.js';
import { hangGuardMs } from './helpers/hang-guard.js';
import { scriptedBoard, type ScriptedBoard } from './helpers/scripted-board.js';

/**
 * A lock-step board: it writes its first T in the same chunk as the A of R, and each further T only after
 * an M that answers the previous one (its ack).
 */
function lockStepBoard() {
  let k = 0;
  const answered: number[] = [];
  const sample = (b: ScriptedBoard, ack: number): BoardFrame => ({
    type: 'T',
    seq: b.nextSeq(),
    ack,
    t: 1000 * k++,
    counts: [0, 0],
    flags: FLAG.EN,
  });
  const board = scriptedBoard('lockstep', (h, b) => {
    if (h.type === 'R') {
      // One write: the acknowledgement and the first sample.
      b.send({ type: 'A', seq: b.nextSeq(), ack: h.seq }, sample(b, h.seq));
      return true;
    }
    if (h.type === 'M') {
      answered.push(k - 1);
      if (k < 5) b.send(sample(b, h.seq));
      return true;
    }
    return false;
  });
  return { ...board, answered };
}

describe('the first sample of a stream, read with the acknowledgement of R', () => {
  it('is handed to the loop and answered, and the lock-step board goes on sampling', async () => {
    const { clock, link, answered } = lockStepBoard();
    const wait = <T>(p: Promise<T>): Promise<T> => runUntilSettled(clock, p, { maxRealMs: hangGuardMs(15_000) });
    await wait(link.open());
    const readings: Reading[] = [];
    // The loop answers every sample it is handed, as the control loop does.
    link.onSample((r) => {
      readings.push(r);
      link.writeDuty([0, 0]);
    });
    await wait(link.startSampling(1000));
    for (let i = 0; i < 10 && readings.length < 5; i++) await settle();
    expect(readings.map((r) => r.index)).toEqual([0, 1, 2, 3, 4]);
    expect(answered).toEqual([0, 1, 2, 3, 4]);
    await wait(link.close());
  });

  it('a refused R starts nothing: its error is thrown and no sample period is taken', async () => {
    const { clock, link } = scriptedBoard('refuser', (h, b) => {
      if (h.type !== 'R') return false;
      b.send({ type: 'E', seq: b.nextSeq(), ack: h.seq, code: 'RANGE', text: 'rate' });
      return true;
    });
    const wait = <T>(p: Promise<T>): Promise<T> => runUntilSettled(clock, p, { maxRealMs: hangGuardMs(15_000) });
    await wait(link.open());
    await expect(wait(link.startSampling(1000))).rejects.toThrow(/refused the command: RANGE rate/);
    expect(link.samplePeriod).toBeUndefined();
    await wait(link.close());
  });
});
