// A person at `twolink setup`'s terminal, for in-process tests: a stdin that says it is a terminal (raw
// mode, as a pty's), a stderr the person reads, and a source of signals. The person acts on what they
// read: a rule fires when its text first appears (after the write returns, as a person reacts to a
// prompt already on the screen), and answers prompts with the keys a person would press.
import { EventEmitter } from 'node:events';
import { PassThrough, Writable } from 'node:stream';
import { hangGuardMs } from './hang-guard.js';

export interface FakeTty extends PassThrough {
  isTTY: boolean;
  raw: boolean;
  setRawMode(on: boolean): void;
}

/** A stdin that says it is a terminal, as a pty would. */
export function fakeTty(): FakeTty {
  const s = new PassThrough() as FakeTty;
  s.isTTY = true;
  s.raw = false;
  s.setRawMode = (on) => (s.raw = on);
  return s;
}

/** What a person can do: press keys, or (from another terminal) send the process a signal. */
export type Act = { keys: string } | { signal: 'SIGINT' | 'SIGTERM' | 'SIGHUP' };

/** Prompts start with this on setup's stderr (operator.ts). */
export const PROMPT = '  > ';

export class Person {
  readonly input = fakeTty();
  readonly signals = new EventEmitter();
  text = '';
  /** Prompts seen so far, in order. */
  readonly prompts: string[] = [];
  private readonly rules: { when: RegExp; act: Act; done: boolean }[] = [];
  /** How each prompt not covered by a rule is answered (Enter; 'n' for a yes/no question). */
  answer: (prompt: string) => Act | undefined = (p) => ({ keys: /\(y: yes/.test(p) ? 'n' : '\r' });

  readonly err = new Writable({
    write: (chunk: Buffer | string, _enc, cb) => {
      this.read(chunk.toString());
      cb();
    },
  });

  /** When `when` first appears on the screen, `act`. */
  on(when: RegExp, act: Act): this {
    this.rules.push({ when, act, done: false });
    return this;
  }

  /** Does `act` now (a key or a signal), as a person would at any moment. */
  act(a: Act): void {
    if ('keys' in a) this.input.write(a.keys);
    else this.signals.emit(a.signal, a.signal);
  }

  private read(s: string): void {
    this.text += s;
    const acts: Act[] = [];
    for (const r of this.rules) {
      if (!r.done && r.when.test(this.text)) {
        r.done = true;
        acts.push(r.act);
      }
    }
    const at = s.indexOf(PROMPT);
    if (at >= 0) {
      const prompt = s.slice(at + PROMPT.length);
      this.prompts.push(prompt);
      if (acts.length === 0) {
        const a = this.answer(prompt);
        if (a) acts.push(a);
      }
    }
    // After the write returns: the prompt is on the screen and waiting.
    if (acts.length) setImmediate(() => acts.forEach((a) => this.act(a)));
  }
}

/**
 * Setup's tests wait for events; these are hang guards only, long enough for a machine with six CPU
 * hogs on two cores (a whole mock setup takes ~8 s quiet, a minute or more under that load). A child
 * process is killed a little before its test gives up, so that the failure shows its output.
 */
export const HANG_GUARD_MS = hangGuardMs(180_000);
export const CHILD_GUARD_MS = hangGuardMs(168_000);
