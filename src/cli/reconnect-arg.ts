/**
 * `twolink run --reconnect [--reconnect-timeout S] [--yes]` (docs/cable.md): the options, and the
 * session's ReconnectOptions from them. The board is found again by what the OS lists for its port now,
 * before the run (reconnect.ts); re-zeroing a board that reset is asked on a terminal, answered by
 * --yes, and automatic on the mock rig.
 */
import { numberArg, UsageError } from './args.js';
import { keyOfPort, type ListedPort } from '../run/reconnect.js';
import type { ReconnectOptions } from '../run/session-reconnect.js';
import type { Target } from '../run/target.js';

/** How long `--reconnect` waits for the board by default [s]. */
export const RECONNECT_DEFAULT_S = 30;

export const RECONNECT_OPTIONS = {
  reconnect: {
    type: 'boolean',
    help: `after a pulled cable (fault:cable), wait for the same board (--reconnect-timeout, default ${RECONNECT_DEFAULT_S} s), re-handshake, re-take the zero of a board that reset, and resume the plan from where the arm is; the recording goes on in the same file (docs/cable.md)`,
  },
  'reconnect-timeout': {
    type: 'string',
    arg: 'S',
    help: `with --reconnect: how long to wait for the board each time it is lost, 1..3600 s (default ${RECONNECT_DEFAULT_S})`,
  },
  yes: {
    type: 'boolean',
    help: 'with --reconnect: re-take the zero of a board that reset (the arm let hang at rest, the encoders zeroed there) without asking',
  },
} as const;

/** The parsed values these options give. */
export interface ReconnectArgs {
  reconnect?: boolean | undefined;
  'reconnect-timeout'?: string | undefined;
  yes?: boolean | undefined;
}

/** serialport's list(), loaded when needed (it spawns udevadm: rejects where there is none). */
async function listPorts(): Promise<ListedPort[]> {
  const { SerialPort } = await import('serialport');
  return SerialPort.list();
}

/** A yes/no question on the terminal (stdin a TTY, no dashboard): y goes on, anything else does not. */
function askOnTerminal(prompt: string): Promise<boolean> {
  return new Promise((resolve) => {
    process.stderr.write(`  > ${prompt} (y: yes; n or Enter: no) `);
    const input = process.stdin;
    const on = (d: Buffer): void => {
      input.off('data', on);
      input.pause();
      resolve(/^\s*y/i.test(d.toString('utf8')));
    };
    input.resume();
    input.on('data', on);
  });
}

/** The dashboard, as far as its notices go (run-command.ts's). */
interface NoticeLine {
  say?(text: string, level?: 'warn'): void;
}

/**
 * The session's `reconnect` from the options (an empty object without --reconnect). `interactive`: a
 * full-screen dashboard owns the terminal (`dashboard()` once it is up): the steps and the countdown
 * go on its notice line, and a reset board is only re-zeroed with --yes.
 */
export async function reconnectOptions(
  v: ReconnectArgs,
  target: Target,
  interactive: boolean,
  dashboard: () => NoticeLine | undefined,
): Promise<{ reconnect?: ReconnectOptions }> {
  if (!v.reconnect) {
    if (v['reconnect-timeout'] !== undefined) throw new UsageError('--reconnect-timeout goes with --reconnect');
    if (v.yes) throw new UsageError('--yes goes with --reconnect (it answers its question before re-zeroing a board that reset)');
    return {};
  }
  if (target.kind !== 'port')
    throw new UsageError(
      '--reconnect goes with --port: the mock rig in this process has no cable to pull (use twolink rig --pty and --port for a test)',
    );
  const timeoutS = numberArg(v['reconnect-timeout'], 'reconnect-timeout', { default: RECONNECT_DEFAULT_S, min: 1, max: 3600, unit: 's' });
  const key = await keyOfPort(target.path, listPorts);
  const log = (s: string): void => void (interactive ? dashboard()?.say?.(s) : process.stderr.write(`twolink: ${s}\n`));
  const onWaiting = (left: number | undefined, what: string): void =>
    void (left !== undefined && dashboard()?.say?.(`waiting for the board (${what}): ${Math.ceil(left)} s left; Ctrl-C stops`, 'warn'));
  const rezero = (why: string): Promise<boolean> => {
    const prompt = `${why}. Re-take its zero: the motors stay off while the arm comes to rest hanging (joint 1 straight down), then the encoders are zeroed there. Let it hang freely`;
    if (v.yes) {
      log(`  (${prompt}: --yes)`);
      return Promise.resolve(true);
    }
    if (interactive || process.stdin.isTTY !== true) {
      log(
        `${why}: not re-zeroed without --yes (${interactive ? 'the dashboard owns the terminal' : 'no terminal to ask on'}): the arm is not moved`,
      );
      return Promise.resolve(false);
    }
    return askOnTerminal(prompt);
  };
  return { reconnect: { timeoutS, key, list: listPorts, rezero, log, onWaiting } };
}
