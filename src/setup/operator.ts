/**
 * The person at the arm, on a terminal: instructions on stderr, Enter to go on, and the e-stop on
 * space or Esc at any time (stdin in raw mode, so no line editing stands in the way; Ctrl-C stops
 * too). With stdin not a terminal, each line read is an Enter and there is no key e-stop (signals
 * still stop). `--yes` answers the prompts before motion, never the requests for the person's hands.
 * Once the signal has fired (the e-stop, Ctrl-C, a signal) every prompt, waiting or still to come,
 * rejects with SetupStopped: no Enter can carry setup on past a stop.
 */
import type { Writable } from 'node:stream';
import { SetupStopped, type Hand, type Operator } from './driver.js';
import type { StopReason } from '../control/stop.js';

/** Where the process's signals come from (`process`; a test passes an EventEmitter). */
export interface SignalSource {
  on(event: 'SIGINT' | 'SIGTERM' | 'SIGHUP', f: (sig: NodeJS.Signals) => void): unknown;
  off(event: 'SIGINT' | 'SIGTERM' | 'SIGHUP', f: (sig: NodeJS.Signals) => void): unknown;
}

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

export class TerminalOperator implements Operator {
  private readonly ac = new AbortController();
  private pending: { resolve: () => void; reject: (e: Error) => void; yesNo?: (yes: boolean) => void } | undefined;
  private readonly signals: SignalSource;
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
  private readonly onSignal = (sig: NodeJS.Signals): void => this.stop({ kind: 'interrupted', signal: sig });

  constructor(private readonly o: { yes: boolean; quiet: boolean; input: NodeJS.ReadStream; err: Writable; signals?: SignalSource }) {
    this.signals = o.signals ?? process;
    for (const s of SIGNALS) this.signals.on(s, this.onSignal);
    // A terminal always listens, for the e-stop key; piped input only when a prompt needs it.
    if (o.input.isTTY) this.attach();
  }

  /** A person at a terminal can answer a yes/no question (not --yes, not piped input). */
  get interactive(): boolean {
    return !this.o.yes && this.o.input.isTTY === true;
  }

  /** Fires the signal once (the first reason wins: a stop value) and ends the prompt that waits. */
  private stop(reason: StopReason): void {
    if (!this.ac.signal.aborted) this.ac.abort(reason);
    const p = this.pending;
    this.pending = undefined;
    p?.reject(this.stopped());
  }

  private stopped(): SetupStopped {
    return SetupStopped.of(this.ac.signal.reason);
  }

  get signal(): AbortSignal {
    return this.ac.signal;
  }

  say(text: string): void {
    if (!this.o.quiet) this.o.err.write(`${text}\n`);
  }

  confirm(prompt: string): Promise<void> {
    if (this.ac.signal.aborted) return Promise.reject(this.stopped());
    if (this.o.yes) {
      this.say(`  (${prompt}: --yes)`);
      return Promise.resolve();
    }
    return this.ask(prompt);
  }

  ask(prompt: string): Promise<void> {
    if (this.ac.signal.aborted) return Promise.reject(this.stopped());
    this.o.err.write(`  > ${prompt} (Enter; space or Esc stops) `);
    this.attach();
    if (this.early > 0) {
      this.early--;
      this.o.err.write('\n');
      return Promise.resolve();
    }
    if (this.ended)
      return Promise.reject(new SetupStopped('stdin is closed: setup cannot wait for Enter (give --yes, or run it on a terminal)'));
    return new Promise((resolve, reject) => (this.pending = { resolve, reject }));
  }

  /**
   * A yes/no question, answered at a terminal with y (yes) or n / Enter (no: the safe answer). Only
   * when `interactive`; elsewhere it answers no without asking. Space or Esc still stops.
   */
  yesNo(prompt: string): Promise<boolean> {
    if (this.ac.signal.aborted) return Promise.reject(this.stopped());
    if (!this.interactive) return Promise.resolve(false);
    this.o.err.write(`  > ${prompt} (y: yes; n or Enter: no; space or Esc stops) `);
    this.attach();
    return new Promise((resolve, reject) => (this.pending = { resolve: () => resolve(false), reject, yesNo: resolve }));
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
        this.stop({ kind: 'estop' });
      } else if (this.raw && ch === '\x03') {
        this.stop({ kind: 'interrupted', signal: 'SIGINT' });
      } else if (this.pending?.yesNo && /^[yYnN]$/.test(ch)) {
        const p = this.pending;
        this.pending = undefined;
        this.o.err.write(`${ch}\n`);
        p.yesNo!(ch === 'y' || ch === 'Y');
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
    for (const s of SIGNALS) this.signals.off(s, this.onSignal);
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
    return this.op.ask(
      `turn joint ${joint + 1} ${direction > 0 ? 'counter-clockwise' : 'clockwise'} by hand until it stops against its mechanical stop (gently: do not force it), hold it there, and press Enter`,
    );
  }
  release(): Promise<void> {
    if (this.lowered) {
      this.lowered = false;
      return Promise.resolve();
    }
    return this.op.ask('let the arm hang freely again, hands off, and press Enter');
  }
}
