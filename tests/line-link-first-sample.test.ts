// A board that sends its first sample in the same write as its acknowledgement of `R` (our lock-step
// firmware, and any board whose first tick comes quickly, can): the host must hand that sample to the
// loop and answer it. Before the fix, sampling started only when startSampling's await resumed, after
// the chunk had been parsed: the T was kept as the newest reading but never handed on, so never
// answered, and a lock-step board (it samples again only after the answer) waited until the host
// declared the link lost: 5 of 27 runs of tests/realtime/firmware-loop failed so under load.
import { PassThrough, Duplex } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { decodeHostFrame, encodeBoardFrame, FLAG } from '../src/protocol/codec.js';
import { runUntilSettled, settle, VirtualClock } from '../src/time/clock.js';
import { LineLink } from '../src/transport/line-link.js';
import type { Reading } from '../src/transport/link.js';
import { hangGuardMs } from './helpers/hang-guard.js';

/**
 * A lock-step board on a stream pair: it answers H and every command, writes its first T in the same
 * chunk as the A of R, and each further T only after an M that answers the previous one (its ack).
 */
function lockStepBoard() {
  const clock = new VirtualClock();
  const toHost = new PassThrough();
  const fromHost = new PassThrough();
  const stream = Duplex.from({ readable: toHost, writable: fromHost });
  let seq = 0;
  let k = 0;
  const answered: number[] = [];
  let pending = '';
  const sample = (ack: number): string => encodeBoardFrame({ type: 'T', seq: seq++, ack, t: 1000 * k++, counts: [0, 0], flags: FLAG.EN });
  fromHost.on('data', (d: Buffer) => {
    pending += d.toString('latin1');
    for (let i = pending.indexOf('\n'); i >= 0; i = pending.indexOf('\n')) {
      const line = pending.slice(0, i);
      pending = pending.slice(i + 1);
      const f = decodeHostFrame(line, 2);
      if (!f.ok) continue;
      const h = f.frame;
      if (h.type === 'H') {
        const info = {
          fw: 'lockstep',
          proto: 1,
          board: 'script',
          joints: 2,
          cpr: [4800, 2400],
          pwm: 1000,
          torque: false,
          maxrate: 1000,
          wdt: 100,
        };
        toHost.write(encodeBoardFrame({ type: 'I', seq: seq++, ack: h.seq, info }));
      } else if (h.type === 'R') {
        // One write: the acknowledgement and the first sample.
        toHost.write(encodeBoardFrame({ type: 'A', seq: seq++, ack: h.seq }) + sample(h.seq));
      } else if (h.type === 'M') {
        answered.push(k - 1);
        if (k < 5) toHost.write(sample(h.seq));
      } else toHost.write(encodeBoardFrame({ type: 'A', seq: seq++, ack: h.seq }));
    }
  });
  const link = new LineLink({
    stream,
    name: 'lockstep',
    baudRate: 1_000_000,
    clock,
    encoders: [{ countsPerRev: 4800 }, { countsPerRev: 2400 }] as never,
    watchdogMs: 100,
    handshakeMs: 2000,
  });
  return { clock, link, answered };
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
    const clock = new VirtualClock();
    const toHost = new PassThrough();
    const fromHost = new PassThrough();
    const stream = Duplex.from({ readable: toHost, writable: fromHost });
    let seq = 0;
    fromHost.on('data', (d: Buffer) => {
      for (const line of d.toString('latin1').split('\n').filter(Boolean)) {
        const f = decodeHostFrame(line, 2);
        if (!f.ok) continue;
        const h = f.frame;
        if (h.type === 'H') {
          const info = {
            fw: 'refuser',
            proto: 1,
            board: 'script',
            joints: 2,
            cpr: [4800, 2400],
            pwm: 1000,
            torque: false,
            maxrate: 1000,
            wdt: 100,
          };
          toHost.write(encodeBoardFrame({ type: 'I', seq: seq++, ack: h.seq, info }));
        } else if (h.type === 'R') toHost.write(encodeBoardFrame({ type: 'E', seq: seq++, ack: h.seq, code: 'RANGE', text: 'rate' }));
        else toHost.write(encodeBoardFrame({ type: 'A', seq: seq++, ack: h.seq }));
      }
    });
    const link = new LineLink({
      stream,
      name: 'refuser',
      baudRate: 1_000_000,
      clock,
      encoders: [{ countsPerRev: 4800 }, { countsPerRev: 2400 }] as never,
      watchdogMs: 100,
      handshakeMs: 2000,
    });
    const wait = <T>(p: Promise<T>): Promise<T> => runUntilSettled(clock, p, { maxRealMs: hangGuardMs(15_000) });
    await wait(link.open());
    await expect(wait(link.startSampling(1000))).rejects.toThrow(/refused the command: RANGE rate/);
    expect(link.samplePeriod).toBeUndefined();
    await wait(link.close());
  });
});
