/**
 * A minimal host at the frame level of the line protocol, on a serial device (the firmware-in-the-loop
 * pty): sends frame bodies with its own sequence numbers and reads lines in order. For tests and the
 * bench, which drive the board frame by frame where `twolink run` would hide what they measure.
 */
import { ReadlineParser } from '@serialport/parser-readline';
import { SerialPort } from 'serialport';
import { frameLine } from '../protocol/codec.js';

export class FrameHost {
  private seq = 0;
  private cursor = 0;
  private waiter: (() => void) | undefined;
  private closed = false;
  /** Every line received, without its LF (CRC not checked: the caller reads what the board sent). */
  readonly lines: string[] = [];

  private constructor(readonly port: SerialPort) {
    port.pipe(new ReadlineParser({ delimiter: '\n' })).on('data', (l: string) => {
      this.lines.push(l);
      this.waiter?.();
    });
    port.on('close', () => {
      this.closed = true;
      this.waiter?.();
    });
  }

  static async open(path: string, baudRate = 1_000_000): Promise<FrameHost> {
    const port = new SerialPort({ path, baudRate, autoOpen: false });
    await new Promise<void>((res, rej) => port.open((e) => (e ? rej(e) : res())));
    return new FrameHost(port);
  }

  /** Sends `type seq fields...` with the next sequence number; returns that number. */
  send(type: string, ...fields: (string | number)[]): number {
    const s = this.seq++;
    this.port.write(frameLine([type, s, ...fields].join(' ')));
    return s;
  }

  /**
   * The line protocol's handshake: waits for the board's banner (it repeats until answered), drops
   * what came before, sends `H` and waits for the `I` that answers it (its sequence field 0).
   */
  async handshake(): Promise<void> {
    await this.next((l) => l.startsWith('I '));
    this.skip();
    this.send('H', 1);
    await this.next((l) => l.startsWith('I ') && field(l, 2) === '0');
  }

  /** Sends bytes as they are (a corrupted line, garbage). */
  raw(bytes: string): void {
    this.port.write(bytes, 'latin1');
  }

  /** The first line after the last one returned (or after skip()) that passes `test`; waits for it. */
  async next(test: (line: string) => boolean): Promise<string> {
    for (;;) {
      while (this.cursor < this.lines.length) {
        const l = this.lines[this.cursor++]!;
        if (test(l)) return l;
      }
      if (this.closed)
        throw new Error(
          `${this.port.path}: the port closed while waiting for a line (${this.lines.length} read, the last: ${JSON.stringify(this.lines.at(-1) ?? '')})`,
        );
      await new Promise<void>((r) => (this.waiter = r));
    }
  }

  /** Forgets the lines received so far. */
  skip(): void {
    this.cursor = this.lines.length;
  }

  close(): Promise<void> {
    return new Promise((r) => (this.port.isOpen ? this.port.close(() => r()) : r()));
  }
}

/** Field i of a frame body (0 = type). */
export const field = (line: string, i: number): string => line.split(' ')[i] ?? '';
