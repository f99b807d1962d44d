// The line-protocol mock board's UART sends its frames in the order it numbered them, however late its
// thread runs (issue 35, item 2). The board runs on a DrivenClock as in its own thread
// (src/mock/mock-thread.ts): the thread's passes are late now and then, and a pass more than 2 ms late
// holds the board's time still (DrivenClock.pause) before it runs the timers due. Here the wall clock
// is the test's, so the thread is starved at chosen (seeded) moments, in virtual time. Before the fix,
// an acknowledgment queued while the thread ran late left after the telemetry numbered after it: the
// host drops such a frame as reordered, and the zero command of a run's end went unconfirmed (the run
// ended on the board's watchdog: `zero command watchdog`).
import { describe, expect, it } from 'vitest';
import { loadRig } from '../src/config/load.js';
import { buildLineMock } from '../src/mock/line-mock.js';
import { decodeBoardFrame, encodeHostFrame, type BoardFrame, type HostFrame } from '../src/protocol/codec.js';
import { DrivenClock } from '../src/time/clock.js';
import { mulberry32 } from './helpers/random.js';

/** A host frame without its sequence number (the session numbers it). */
type Unnumbered<F> = F extends unknown ? Omit<F, 'seq'> : never;

/** mock-thread.ts: a timer this late [s] means the board's thread was not running. */
const STARVED_S = 0.002;

interface Session {
  /** Every frame the board sent, in the order it reached the host. */
  frames: BoardFrame[];
  /** The A that answered the S, if any, and whether it came in sequence order. */
  stopAck: { inOrder: boolean } | undefined;
}

/**
 * One session: handshake, 500 Hz streaming, each T answered with an M, an S after `stopAfterS`; the
 * thread's passes late by up to `lateMs` (a few of them, at random) as a busy machine makes them.
 */
function session(seed: number, stopAfterS: number, lateMs: number): Session {
  const rnd = mulberry32(seed);
  const rig = loadRig('rigs/mock-arm.json');
  let wallMs = 1000;
  // The thread is held up at any moment, in the middle of a pass too (a garbage-collector pause): now
  // and then a reading of the wall clock finds it up to `lateMs` further on.
  const clock = new DrivenClock(() => (wallMs += rnd() < 0.003 ? rnd() * lateMs : 0));
  const mock = buildLineMock(rig, clock);
  const frames: BoardFrame[] = [];
  let pending = '';
  let hostSeq = 0;
  const toBoard: Buffer[] = [];
  const send = (f: Unnumbered<HostFrame>): number => {
    const seq = hostSeq++;
    toBoard.push(Buffer.from(encodeHostFrame({ ...f, seq }), 'latin1'));
    return seq;
  };
  let stopSeq: number | undefined;
  let lastBoardSeq = -1;
  let stopAck: Session['stopAck'];
  mock.end.onTransmit = (b) => {
    pending += b.toString('latin1');
    for (let i = pending.indexOf('\n'); i >= 0; i = pending.indexOf('\n')) {
      const line = pending.slice(0, i);
      pending = pending.slice(i + 1);
      const d = decodeBoardFrame(line, 2);
      if (!d.ok) throw new Error(`the board sent a bad line: ${line}`);
      const f = d.frame;
      frames.push(f);
      const inOrder = f.seq > lastBoardSeq || f.type === 'I';
      if (f.type !== 'I') lastBoardSeq = Math.max(lastBoardSeq, f.seq);
      if (f.type === 'A' && stopSeq !== undefined && f.ack === stopSeq) stopAck = { inOrder };
      if (f.type === 'T' && stopSeq === undefined && streaming) send({ type: 'M', duty: [200, -100] });
    }
  };
  let streaming = false;
  send({ type: 'H', proto: 1 });
  send({ type: 'W', ms: 1000 });
  send({ type: 'N', enable: true });
  send({ type: 'R', hz: 500 });
  streaming = true;
  const endS = stopAfterS + 0.2;
  while (clock.now() < endS) {
    // One pass of the board's thread (mock-thread.ts main): starved: the board's time stands still.
    const missed = clock.now() - clock.nextTimerAt();
    if (missed > STARVED_S) clock.pause(missed);
    for (const b of toBoard.splice(0)) mock.end.receive(b);
    clock.runDue(false, STARVED_S);
    if (stopSeq === undefined && clock.now() >= stopAfterS) stopSeq = send({ type: 'S' });
    // Then it sleeps until its next timer.
    const next = Math.min(clock.nextTimerAt(), clock.now() + 0.005);
    wallMs += Math.max(0.01, (next - clock.now()) * 1000);
  }
  mock.dispose();
  return { frames, stopAck };
}

describe('the line mock board sends its frames in sequence order, however late its thread runs', () => {
  it('20 sessions with the thread held up by up to 3 ms now and then, mid-pass too: every frame in order, every stop acknowledged in order', () => {
    const acks: (boolean | undefined)[] = [];
    for (let seed = 1; seed <= 20; seed++) {
      const s = session(seed, 0.5 + seed * 0.013, 3);
      const seqs = s.frames.filter((f) => f.type !== 'I').map((f) => f.seq);
      const out = seqs.findIndex((q, i) => i > 0 && q <= seqs[i - 1]!);
      expect(out, `seed ${seed}: frame ${out} (seq ${seqs[out]}) after seq ${seqs[out - 1]}`).toBe(-1);
      expect(s.frames.filter((f) => f.type === 'T').length, `seed ${seed}`).toBeGreaterThan(200);
      acks.push(s.stopAck?.inOrder);
    }
    expect(acks).toEqual(new Array(20).fill(true));
  });

  it('a thread that is never late sends in order too (the plain case)', () => {
    const s = session(7, 0.3, 0);
    expect(s.stopAck).toEqual({ inOrder: true });
  });
});
