/**
 * Asks a board on the line protocol who it is (H, then its I frame) without judging the answer: the
 * Link's handshake refuses a board whose counts per revolution differ from the rig file, and finding
 * out which of the two is right is setup's job. Nothing else is sent; the Link handshakes again after.
 */
import type { Duplex } from 'node:stream';
import { decodeBoardFrame, frameLine, hostBody, LineAssembler, PROTOCOL, type BoardInfo } from '../protocol/codec.js';
import type { Clock } from '../time/clock.js';

/** The board's identity, or undefined when no I frame came within `timeoutMs` (the Link's open() then says why). */
export function probeLineBoard(stream: Duplex, clock: Clock, joints: number, timeoutMs: number): Promise<BoardInfo | undefined> {
  return new Promise((resolve) => {
    const lines = new LineAssembler();
    let seq = 0;
    let done = false;
    const onData = (d: Buffer): void =>
      lines.push(d, (line) => {
        const f = decodeBoardFrame(line, joints);
        if (f.ok && f.frame.type === 'I') finish(f.frame.info);
      });
    const hello = (): void => {
      if (done) return;
      stream.write(frameLine(hostBody({ type: 'H', seq: seq++, proto: PROTOCOL })), 'latin1');
      timer = clock.setTimer(0.25, hello);
    };
    const deadline = clock.setTimer(timeoutMs / 1000, () => finish(undefined));
    let timer = clock.setTimer(0, hello);
    const finish = (info: BoardInfo | undefined): void => {
      if (done) return;
      done = true;
      clock.clearTimer(timer);
      clock.clearTimer(deadline);
      stream.off('data', onData);
      stream.pause();
      resolve(info);
    };
    stream.on('data', onData);
  });
}
