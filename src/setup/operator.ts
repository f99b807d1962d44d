/**
 * The person at the arm, on a terminal: instructions on stderr, Enter to go on, and the e-stop on
 * space or Esc at any time (stdin in raw mode, so no line editing stands in the way; Ctrl-C stops
 * too). With stdin not a terminal, each line read is an Enter and there is no key e-stop (signals
 * still stop). `--yes` answers the prompts before motion, never the requests for the person's hands.
 */
import type { Writable } from 'node:stream';
import { SetupStopped, type Hand, type Operator } from './driver.js';

export class TerminalOperator implements Operator {
  private readonly ac = new AbortController();
  private pending: { resolve: () => void; reject: (e: Error) => void } | undefined;
  private attached = false;
  private raw = false;
  private ended = false;
  /** Enters read from piped input before a prompt asked for them. */
  private early = 0;
  private readonly onData = (d: Buffer | string): void => this.data(typeof d === 'string' ? d : d.toString('latin1'));
  private readonly onEnd = (): void => {
    this.ended = true;
    this.pending?.reject(new SetupStopped('stdin closed while setup was waiting for Enter (give --yes to run without prompts)'));
    this.pending = undefined;
  };
  private readonly onSignal = (sig: NodeJS.Signals): void => this.ac.abort(`interrupted:${sig}`);

  constructor(
    private readonly o: { yes: boolean; quiet: boolean; input: NodeJS.ReadStream; err: Writable },
  ) {
    for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(s, this.onSignal);
    // A terminal always listens, for the e-stop key; piped input only when a prompt needs it.
    if (o.input.isTTY) this.attach();
  }

  get signal(): AbortSignal {
    return this.ac.signal;
  }

  say(text: string): void {
    if (!this.o.quiet) this.o.err.write(`${text}\n`);
  }

  confirm(prompt: string): Promise<void> {
    if (this.o.yes) {
      this.say(`  (${prompt}: --yes)`);
      return Promise.resolve();
    }
    return this.ask(prompt);
  }

  ask(prompt: string): Promise<void> {
    this.o.err.write(`  > ${prompt} (Enter; space or Esc stops) `);
    this.attach();
    if (this.early > 0) {
      this.early--;
      this.o.err.write('\n');
      return Promise.resolve();
    }
    if (this.ended) return Promise.reject(new SetupStopped('stdin is closed: setup cannot wait for Enter (give --yes, or run it on a terminal)'));
    return new Promise((resolve, reject) => (this.pending = { resolve, reject }));
  }

  private attach(): void {
    if (this.attached) return;
    this.attached = true;
    const input = this.o.input;
    if (input.isTTY) {
      input.setRawMode(true);
      this.raw = true;
    }
    input.on('data', this.onData);
    input.on('end', this.onEnd);
    input.resume();
  }

  private data(s: string): void {
    for (const ch of s) {
      if (this.raw && (ch === ' ' || ch === '\x1b')) {
        this.o.err.write('\nE-STOP\n');
        this.ac.abort('estop');
      } else if (this.raw && ch === '\x03') {
        this.ac.abort('interrupted:SIGINT');
      } else if (ch === '\r' || ch === '\n') {
        const p = this.pending;
        this.pending = undefined;
        if (p) {
          this.o.err.write('\n');
          p.resolve();
        } else if (!this.raw) {
          // Piped input: lines that came before their prompt answer the next prompts, in order. (On a
          // terminal a stray Enter must not answer a prompt not yet shown.)
          this.early++;
        }
      }
    }
  }

  /** Restores the terminal and lets the process exit. */
  dispose(): void {
    for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.off(s, this.onSignal);
    if (!this.attached) return;
    const input = this.o.input;
    input.off('data', this.onData);
    input.off('end', this.onEnd);
    if (this.raw) input.setRawMode(false);
    input.pause();
  }
}

/** The person's own hands (a real arm): setup says what to do and waits for Enter. */
export class PersonHand implements Hand {
  /** The person was just asked to lower the arm and let go: the release that follows asks nothing more. */
  private lowered = false;
  constructor(private readonly op: Operator) {}
  move(joint: number, deg: number): Promise<void> {
    return this.op.ask(`turn joint ${joint + 1} ${deg} deg counter-clockwise as above, hold it still, and press Enter`);
  }
  lower(): Promise<void> {
    this.lowered = true;
    return this.op.ask('lower the arm gently back to hanging, let go once it hangs still, hands off, and press Enter');
  }
  toStop(joint: number, direction: 1 | -1): Promise<void> {
    return this.op.ask(`turn joint ${joint + 1} ${direction > 0 ? 'counter-clockwise' : 'clockwise'} by hand until it stops against its mechanical stop (gently: do not force it), hold it there, and press Enter`);
  }
  release(): Promise<void> {
    if (this.lowered) {
      this.lowered = false;
      return Promise.resolve();
    }
    return this.op.ask('let the arm hang freely again, hands off, and press Enter');
  }
}
