/**
 * Asks a board on the line protocol who it is (H, then its I frame) without judging the answer: the
 * Link's handshake refuses a board whose counts per revolution differ from the rig file, and finding
 * out which of the two is right is setup's job. Nothing else is sent; the Link handshakes again after.
 */
import type { Duplex } from 'node:stream';
import { decodeBoardFrame, frameLine, hostBody, LineAssembler, PROTOCOL, type BoardInfo } from '../protocol/codec.js';
import type { Clock } from '../time/clock.js';
import { BOOTLOADER_WAIT_MS, bootloaderWaitText } from '../transport/dtr.js';

/**
 * The board's identity, or undefined when no I frame came within `timeoutMs` (the Link's open() then
 * says why). `boot`: opening the port reset the board (transport/dtr.ts): once the first hello goes
 * unanswered, `say` hears the one line that says so, and the probe waits `bootloaderMs` longer.
 */
/** What probeLineBoard waits for when opening `end`'s port reset the board (BoardEnd.resetOnOpen), with the line said on stderr. */
export function bootOf(end: {
  name: string;
  resetOnOpen?: boolean;
}): { name: string; bootloaderMs: number; say: (text: string) => void } | undefined {
  return end.resetOnOpen
    ? { name: end.name, bootloaderMs: BOOTLOADER_WAIT_MS, say: (text) => void process.stderr.write(`twolink: ${text}\n`) }
    : undefined;
}

export function probeLineBoard(
  stream: Duplex,
  clock: Clock,
  joints: number,
  timeoutMs: number,
  boot?: { name: string; bootloaderMs: number; say: (text: string) => void },
): Promise<BoardInfo | undefined> {
  return new Promise((resolve) => {
    const lines = new LineAssembler();
    let seq = 0;
    let done = false;
    let heard = false;
    const onData = (d: Buffer): void =>
      lines.push(d, (line) => {
        heard = true;
        const f = decodeBoardFrame(line, joints);
        if (f.ok && f.frame.type === 'I') finish(f.frame.info);
      });
    const hello = (): void => {
      if (done) return;
      if (seq === 1 && boot && boot.bootloaderMs > 0 && !heard)
        boot.say(bootloaderWaitText(boot.name, timeoutMs + boot.bootloaderMs - 250));
      stream.write(frameLine(hostBody({ type: 'H', seq: seq++, proto: PROTOCOL })), 'latin1');
      timer = clock.setTimer(0.25, hello);
    };
    const deadline = clock.setTimer((timeoutMs + (boot?.bootloaderMs ?? 0)) / 1000, () => finish(undefined));
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
