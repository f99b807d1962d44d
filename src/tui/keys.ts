/**
 * The dashboard's keys and its help line. The e-stop key is recognised on the raw bytes from the
 * terminal, before blessed parses them and before anything is drawn (`estopInInput`), so that it
 * acts on the first event the input produces, whatever the rendering is doing.
 */

import type { LoopCommandKind } from '../control/commands.js';

/** `quit` (q) is a normal quit; `interrupt` (Ctrl-C) stops the same way but reports an interruption. */
export type KeyAction =
  'pause' | 'estop' | 'enable' | 'next' | 'record' | 'zero' | 'quit' | 'interrupt' | 'stiffer' | 'softer' | 'tare' | 'float';

export interface KeyBinding {
  /** blessed key names. */
  keys: string[];
  /** How the help line names the keys. */
  shown: string;
  label: string;
  /** The label on narrow terminals. */
  short: string;
  action: KeyAction;
  /**
   * The loop commands the key asks for, in order: the first the loop accepts in its state
   * (ACCEPTED_COMMANDS) is sent; if it accepts none, the status line says why not. Absent for the
   * keys that do not go through that table: the e-stop (always sent), quit and record.
   */
  commands?: readonly LoopCommandKind[];
}

export const KEYS: readonly KeyBinding[] = [
  { keys: ['space'], shown: 'space', label: 'start/pause', short: 'pause', action: 'pause', commands: ['pause', 'resume'] },
  { keys: ['e', 'S-e', 'escape'], shown: 'e/Esc', label: 'E-STOP', short: 'E-STOP', action: 'estop' },
  { keys: ['d', 'S-d'], shown: 'd', label: 'disable/enable', short: 'dis/en', action: 'enable', commands: ['enable', 'disable'] },
  { keys: ['n', 'S-n'], shown: 'n', label: 'next trajectory', short: 'next', action: 'next', commands: ['next'] },
  { keys: ['r', 'S-r'], shown: 'r', label: 'record', short: 'rec', action: 'record' },
  { keys: ['z', 'S-z'], shown: 'z', label: 'zero encoders', short: 'zero', action: 'zero', commands: ['zero'] },
  { keys: ['q', 'S-q'], shown: 'q', label: 'quit', short: 'quit', action: 'quit' },
];

/** Keys that work but are not on the help line. */
export const HIDDEN_KEYS: readonly Pick<KeyBinding, 'keys' | 'action'>[] = [
  { keys: ['C-c'], action: 'interrupt' },
  // Impedance mode (--mode impedance): the stiffness up or down by STIFFNESS_STEP, filtered over ~0.2 s.
  { keys: ['+', '=', ']'], action: 'stiffer' },
  { keys: ['-', '['], action: 'softer' },
  // Impedance mode: the force estimate's zero, here and now (as a force sensor is zeroed before contact).
  { keys: ['f', 'S-f'], action: 'tare' },
  // Float mode (--mode float): enter or leave float, blended over the law's rampS (no jump either way).
  { keys: ['g', 'S-g'], action: 'float' },
];

/** The factor one press of + or - changes impedance mode's stiffness by. */
export const STIFFNESS_STEP = 1.25;

/**
 * The help line as plain text for a terminal `width` columns wide. Once the run is over (after an
 * e-stop or a fault the dashboard keeps the screen until q), only q does anything, and the line says so.
 */
export function helpText(width: number, over = false): string {
  if (over) {
    const line = ' q quit (the run is over: the other keys do nothing now)';
    return line.length <= width
      ? line
      : ' q quit (run over)'.length <= width
        ? ' q quit (run over)'
        : ' q quit'.slice(0, Math.max(0, width));
  }
  const long = KEYS.map((k) => `${k.shown} ${k.label}`).join('  ');
  if (long.length + 1 <= width) return ` ${long}`;
  const short = KEYS.map((k) => `${k.shown === 'space' ? 'spc' : k.shown} ${k.short}`).join(' ');
  if (short.length + 1 <= width) return ` ${short}`;
  return ' e=E-STOP q=quit'.slice(0, Math.max(0, width));
}

/**
 * Whether a chunk of terminal input holds the e-stop key: `e` or `E` (with or without Alt), or Esc
 * alone. Escape sequences (arrow keys, terminal replies such as cursor reports) are skipped, so
 * their letters never count.
 */
export function estopInInput(chunk: string): boolean {
  for (let i = 0; i < chunk.length; i++) {
    const ch = chunk[i]!;
    if (ch === 'e' || ch === 'E') return true;
    if (ch !== '\x1b') continue;
    const next = chunk[i + 1];
    // Esc on its own (the chunk ends, or another escape follows): the Esc key.
    if (next === undefined || next === '\x1b') return true;
    if (next === '[') {
      // CSI: parameters and intermediates, then one final byte in @..~
      let j = i + 2;
      while (j < chunk.length && !(chunk.charCodeAt(j) >= 0x40 && chunk.charCodeAt(j) <= 0x7e)) j++;
      i = j;
    } else if (next === 'O') {
      i += 2; // SS3 and one character (F1-F4, keypad)
    } else if (next === ']' || next === 'P' || next === '_' || next === '^') {
      // A string (OSC, DCS, ...) up to BEL or ESC \
      let j = i + 2;
      while (j < chunk.length && chunk[j] !== '\x07' && !(chunk[j] === '\x1b' && chunk[j + 1] === '\\')) j++;
      i = chunk[j] === '\x1b' ? j + 1 : j;
    } else {
      // Alt + a key: Alt+e is still e.
      if (next === 'e' || next === 'E') return true;
      i += 1;
    }
  }
  return false;
}
