// A scripted board on a stream pair, for LineLink tests in virtual time: it parses the host's lines,
// answers H with its identity, hands every other frame to `onFrame` (which answers as the test needs;
// by default an A), and gives the LineLink over it. Written once (line-link-clock-step and
// line-link-first-sample each had a copy).
import { Duplex, PassThrough } from 'node:stream';
import { decodeHostFrame, encodeBoardFrame, type BoardFrame, type HostFrame } from '../../src/protocol/codec.js';
import { VirtualClock } from '../../src/time/clock.js';
import { LineLink } from '../../src/transport/line-link.js';

export interface ScriptedBoard {
  clock: VirtualClock;
  link: LineLink;
  /** Writes board frames to the host, in one write. */
  send: (...frames: BoardFrame[]) => void;
  /** The board's next sequence number (and counts it used). */
  nextSeq: () => number;
}

/** `onFrame` answers a host frame other than H; it returns false to have the frame acknowledged with an A. */
export function scriptedBoard(fw: string, onFrame: (h: HostFrame, board: ScriptedBoard) => boolean = () => false): ScriptedBoard {
  const clock = new VirtualClock();
  const toHost = new PassThrough();
  const fromHost = new PassThrough();
  const stream = Duplex.from({ readable: toHost, writable: fromHost });
  let seq = 0;
  let pending = '';
  const link = new LineLink({
    stream,
    name: fw,
    baudRate: 1_000_000,
    clock,
    encoders: [{ countsPerRev: 4800 }, { countsPerRev: 2400 }] as never,
    watchdogMs: 100,
    handshakeMs: 2000,
  });
  const board: ScriptedBoard = {
    clock,
    link,
    send: (...frames) => void toHost.write(frames.map(encodeBoardFrame).join('')),
    nextSeq: () => seq++,
  };
  fromHost.on('data', (d: Buffer) => {
    pending += d.toString('latin1');
    for (let i = pending.indexOf('\n'); i >= 0; i = pending.indexOf('\n')) {
      const line = pending.slice(0, i);
      pending = pending.slice(i + 1);
      const f = decodeHostFrame(line, 2);
      if (!f.ok) continue;
      const h = f.frame;
      if (h.type === 'H') {
        const info = { fw, proto: 1, board: 'script', joints: 2, cpr: [4800, 2400], pwm: 1000, torque: false, maxrate: 1000, wdt: 100 };
        board.send({ type: 'I', seq: seq++, ack: h.seq, info });
      } else if (!onFrame(h, board)) board.send({ type: 'A', seq: seq++, ack: h.seq });
    }
  });
  return board;
}
