/**
 * The loop's commands and, per loop state (the kind of the loop's mode, loop.ts), which of them the
 * loop acts on. `LoopCore.command` refuses what this table refuses, and the dashboard reads the same
 * table to decide what a key sends and to say why a key does nothing now: the rule is written once.
 */
import type { PathSpec } from '../model/builtins.js';
import type { LoopState } from '../telemetry/tick.js';
import type { StopReason } from './stop.js';

export type LoopCommand =
  | { kind: 'start'; path: PathSpec; park?: boolean }
  | { kind: 'pause' }
  | { kind: 'resume' }
  | { kind: 'hold' }
  /** A soft stop (the arm released to a hold, then the motors off); `reason` ends the run as. */
  | { kind: 'stop'; reason: StopReason }
  /** The motors zeroed at once. @default reason { kind: 'estop' } */
  | { kind: 'estop'; reason?: StopReason }
  /** Outputs off (the runner also disables the board); the loop keeps reading. */
  | { kind: 'disable' }
  /** Outputs on again, holding where the arm is (with the soft start). */
  | { kind: 'enable' }
  /** Zero the encoders (the runner does it on the board). */
  | { kind: 'zero' }
  /** The encoders were zeroed: start the estimator and the twin again from the new reading. */
  | { kind: 'rezero' }
  /** Give up the current trajectory (the runner starts the next). */
  | { kind: 'next' };

export type LoopCommandKind = LoopCommand['kind'];

/**
 * The commands the loop acts on in each state; any other command is refused (ignored, with the
 * reason `refusal` gives). Once stopped, e-stopped or faulted the loop is finished: only `rezero`
 * (harmless) is taken. `start` is taken where the runner starts trajectories and where one is under
 * way (it replaces it), not during a soft stop (it would cancel the stop) nor while disabled (the
 * board's outputs are off).
 */
export const ACCEPTED_COMMANDS: { readonly [S in LoopState]: readonly LoopCommandKind[] } = {
  idle: ['start', 'hold', 'stop', 'estop', 'disable', 'zero', 'rezero'],
  hold: ['start', 'stop', 'estop', 'disable', 'rezero'],
  track: ['start', 'pause', 'hold', 'stop', 'estop', 'disable', 'next', 'rezero'],
  paused: ['start', 'resume', 'hold', 'stop', 'estop', 'disable', 'next', 'rezero'],
  release: ['estop', 'disable', 'rezero'],
  disabled: ['stop', 'estop', 'disable', 'enable', 'zero', 'rezero'],
  stopped: ['rezero'],
  estop: ['rezero'],
  fault: ['rezero'],
};

/** Whether the loop acts on `kind` in `state`. */
export function accepts(state: LoopState, kind: LoopCommandKind): boolean {
  return ACCEPTED_COMMANDS[state].includes(kind);
}

/** Why the loop does not act on a command now, in words, and the command that would make it act. */
export interface Refusal {
  command: LoopCommandKind;
  state: LoopState;
  why: string;
  /** A command to give first (zero: disable first). */
  first?: LoopCommandKind;
  /** The loop is finished (stopped, e-stopped, faulted): no command does anything now. */
  over?: true;
}

const FINISHED: ReadonlySet<LoopState> = new Set(['stopped', 'estop', 'fault']);

/** Whether the loop is finished in `state` (stopped, e-stopped or faulted): it takes no command that acts. */
export function isFinished(state: LoopState): boolean {
  return FINISHED.has(state);
}

/** Why each command is refused in a state that is not finished. */
const WHY: { readonly [K in LoopCommandKind]: (s: LoopState) => Omit<Refusal, 'command' | 'state'> } = {
  start: (s) => ({
    why: s === 'disabled' ? 'the motors are disabled' : `no trajectory starts while ${s}`,
    ...(s === 'disabled' ? { first: 'enable' as const } : {}),
  }),
  pause: (s) =>
    s === 'disabled'
      ? { why: 'the motors are disabled', first: 'enable' }
      : { why: `nothing to pause while ${s} (trajectories start by themselves)` },
  resume: (s) => ({ why: `nothing to resume while ${s}` }),
  hold: (s) => ({ why: `nothing to hold while ${s}` }),
  stop: (s) => ({ why: s === 'release' ? 'already stopping' : `nothing to stop while ${s}` }),
  estop: (s) => ({ why: `nothing to e-stop while ${s}` }),
  disable: (s) => ({ why: `the motors cannot be disabled while ${s}` }),
  enable: () => ({ why: 'the motors are not disabled' }),
  zero: () => ({ why: 'zero: only while the motors are disabled or the loop is idle', first: 'disable' }),
  rezero: (s) => ({ why: `no re-zero while ${s}` }),
  next: () => ({ why: 'no trajectory to skip' }),
};

/** Why the loop refuses `kind` in `state`; undefined when it acts on it. */
export function refusal(state: LoopState, kind: LoopCommandKind): Refusal | undefined {
  if (accepts(state, kind)) return undefined;
  if (isFinished(state)) return { command: kind, state, why: `the run is over (${state})`, over: true };
  return { command: kind, state, ...WHY[kind](state) };
}

/** What `LoopCore.command` did: acted, or refused with the reason (a value, never an exception). */
export type CommandResult = { ok: true } | { ok: false; refusal: Refusal };
