// The first sample of a stream, when it comes in the same chunk as the board's `A` to the host's `R`.
// The link took the sample grid after `startSampling`'s await resumed, so a `T` read in the same turn
// as that `A` went to no listener and was never answered. A busy host reads the two together now and
// then; the simavr harness in host lock-step then waited on that answer (the board's clock stood still,
// no `T` came) and the host called the link lost 5 s later (the lock-step case of
// tests/realtime/firmware-loop.test.ts failed now and then: 3 slices waited for the host, then none).
// A scripted board on a stream pair, in virtual time: the chunk is chosen.
import { PassThrough, Duplex } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { decodeHostFrame, encodeBoardFrame, FLAG } from '../src/protocol/codec.js';
import { runUntilSettled, settle, VirtualClock } from '../src/time/clock.js';
import { LineLink } from '../src/transport/line-link.js';
import type { Reading } from '../src/transport/link.js';
import { hangGuardMs } from './helpers/hang-guard.js';

/** A board that answers every command; the `A` to `R` carries `withR` (T frames) in the same write. */
async function scripted(withR: (seq: () => number) => string) {
  const clock = new VirtualClock();
  const toHost = new PassThrough();
  const fromHost = new PassThrough();
  const stream = Duplex.from({ readable: toHost, writable: fromHost });
  let seq = 0;
  let pending = '';
  const duties: number[] = [];
  fromHost.on('data', (d: Buffer) => {
    pending += d.toString('latin1');
    for (let i = pending.indexOf('\n'); i >= 0; i = pending.indexOf('\n')) {
      const line = pending.slice(0, i);
      pending = pending.slice(i + 1);
      const f = decodeHostFrame(line, 2);
      if (!f.ok) continue;
      if (f.frame.type === 'H') {
        const info = { fw: 'script', proto: 1, board: 'script', joints: 2, cpr: [4800, 2400], pwm: 1000, torque: false, maxrate: 1000, wdt: 100 };
        toHost.write(encodeBoardFrame({ type: 'I', seq: seq++, ack: f.frame.seq, info }));
      } else if (f.frame.type === 'M') duties.push(f.frame.seq);
      else {
        const a = encodeBoardFrame({ type: 'A', seq: seq++, ack: f.frame.seq });
        toHost.write(f.frame.type === 'R' ? a + withR(() => seq++) : a);
      }
    }
  });
  const link = new LineLink({ stream, name: 'script', baudRate: 1_000_000, clock, encoders: [{ countsPerRev: 4800 }, { countsPerRev: 2400 }] as never, watchdogMs: 100, handshakeMs: 2000 });
  const wait = <T>(p: Promise<T>): Promise<T> => runUntilSettled(clock, p, { maxRealMs: hangGuardMs(15_000) });
  await wait(link.open());
  return { link, wait, duties };
}

const t = (seq: number, us: number): string => encodeBoardFrame({ type: 'T', seq, ack: null, t: us, counts: [0, 0], flags: FLAG.EN });

describe("the stream's first sample, in the same chunk as the board's A to R", () => {
  it('reaches the sample listener as sample 0, and its answer goes out', async () => {
    const s = await scripted((seq) => t(seq(), 5000));
    const readings: Reading[] = [];
    // As the runner does: the listener answers every sample it is handed.
    s.link.onSample((r) => {
      readings.push(r);
      s.link.writeDuty([0.1, -0.1]);
    });
    await s.wait(s.link.startSampling(500));
    await settle();
    expect(readings.map((r) => ({ index: r.index, superseded: r.superseded, boardTime: r.boardTime }))).toEqual([{ index: 0, superseded: false, boardTime: 0.005 }]);
    expect(s.duties).toHaveLength(1);
  });

  it('two samples behind the A: both reach the listener, the older superseded (answered: the newest only)', async () => {
    const s = await scripted((seq) => t(seq(), 5000) + t(seq(), 7000));
    const readings: Reading[] = [];
    s.link.onSample((r) => readings.push(r));
    await s.wait(s.link.startSampling(500));
    await settle();
    expect(readings.map((r) => [r.index, r.superseded])).toEqual([
      [0, true],
      [1, false],
    ]);
  });
});
