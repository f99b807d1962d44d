/**
 * Command-line arguments: node's util.parseArgs splits them, zod validates every value, and every
 * error names the argument. Bad arguments exit with code 2.
 */
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { baseHint, decimal } from '../config/decimal.js';
import { SERIAL_PATHS, type SerialPathChoice } from '../config/rig.js';

/** A usage error: the message names the argument; the CLI prints it and exits with code 2. */
/** `--force`: the one option that lets a command write over an existing file (never over its input). */
export const FORCE_OPTION = { type: 'boolean', help: 'write over an existing output file (never over one of the inputs)' } as const;

export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** How one option is declared. */
export interface OptionSpec {
  type: 'string' | 'boolean';
  /** Shown by --help. */
  help: string;
  /** Value placeholder for --help, e.g. `a,b`. */
  arg?: string;
  multiple?: boolean;
  short?: string;
}

export type OptionSpecs = Record<string, OptionSpec>;

/** The value one declared option parses to: a boolean flag, a list (`multiple`) or a string. */
type ValueOf<S extends OptionSpec> = S['type'] extends 'boolean' ? boolean : S extends { multiple: true } ? string[] : string;

/** Parsed options typed by their declaration (`{ q: { type: 'string' } }` gives `{ q?: string }`): no casts at the use. */
export type ParsedOf<S extends OptionSpecs> = { -readonly [K in keyof S]?: ValueOf<S[K]> };

/**
 * Splits argv against the specs. A value that starts with a minus and a digit is taken as the value
 * of the option before it, so both `--q=-1,2` and `--q -1,2` work.
 */
export function parse<S extends OptionSpecs>(
  argv: readonly string[],
  specs: S,
  command: string,
): { values: ParsedOf<S>; positionals: string[] } {
  const args: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const next = argv[i + 1];
    const name = a.startsWith('--') ? a.slice(2) : undefined;
    if (name && !name.includes('=') && specs[name]?.type === 'string' && next !== undefined && /^-[\d.]/.test(next)) {
      args.push(`${a}=${next}`);
      i++;
    } else {
      args.push(a);
    }
  }
  let r;
  try {
    r = parseArgs({
      args,
      options: Object.fromEntries(
        Object.entries(specs).map(([k, s]) => [
          k,
          { type: s.type, ...(s.multiple ? { multiple: true } : {}), ...(s.short ? { short: s.short } : {}) },
        ]),
      ),
      allowPositionals: true,
      strict: true,
      tokens: true,
    });
  } catch (e) {
    const msg = errorMessage(e).split('\n')[0]!;
    throw new UsageError(`${command}: ${msg} (see twolink ${command} --help)`);
  }
  checkGivenOnce(r.tokens, specs, command);
  return { values: r.values as ParsedOf<S>, positionals: r.positionals };
}

/**
 * Nonsense that parseArgs takes silently, refused: a single-valued option given twice (parseArgs
 * keeps the last: `--q 0,0 --q 1,1` would run with 1,1) and a flag given with its negation
 * (`--rt --no-rt`, `--feedforward measured --no-feedforward`). Options declared `multiple` repeat;
 * a flag said twice (`--json --json`) says one thing and is let through.
 */
function checkGivenOnce(
  tokens: readonly { kind: string; name?: string; value?: string | undefined }[],
  specs: OptionSpecs,
  command: string,
): void {
  const given = new Map<string, string[]>();
  for (const t of tokens) {
    if (t.kind !== 'option' || t.name === undefined) continue;
    const values = given.get(t.name) ?? [];
    values.push(t.value ?? '');
    given.set(t.name, values);
  }
  for (const [name, values] of given) {
    const spec = specs[name];
    if (spec?.type === 'string' && !spec.multiple && values.length > 1) {
      const repeatable = Object.entries(specs)
        .filter(([, s]) => s.multiple)
        .map(([k]) => `--${k}`);
      throw new UsageError(
        `${command}: --${name} given ${values.length} times (${values.map((x) => `"${x}"`).join(', ')}): give it once${repeatable.length ? ` (only ${repeatable.join(', ')} may be repeated)` : ''}`,
      );
    }
    if (name.startsWith('no-') && given.has(name.slice(3))) {
      throw new UsageError(`${command}: --${name.slice(3)} and --${name} contradict each other: give one of them`);
    }
  }
}

/** The message of a caught value: an Error's, or the value in words (a throw of something else). */
export function errorMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

const finite = z.number().refine(Number.isFinite, 'not a finite number');

/** A stray positional argument is an error (a forgotten option name, a misplaced value): never ignored. */
export function noPositionals(positionals: readonly string[], command: string, hint = ''): void {
  if (positionals.length === 0) return;
  throw new UsageError(`${command}: unexpected argument "${positionals[0]}"${hint ? ` (${hint})` : ''}; see twolink ${command} --help`);
}

/** The range of the numbers of a list (inclusive), with their unit, for the message. */
export interface ListRange {
  /** Largest magnitude allowed. */
  maxAbs: number;
  unit: string;
}

/** Parses "a,b" into numbers; `n` fixes the count; `range` bounds their magnitude. */

/** `--port ''` and `--baud` without `--port` are refused (the mock's line runs at the rig file's link.baudRate). */
export function checkPortArgs(v: { port?: string; baud?: string }): void {
  if (v.port === '')
    throw new UsageError("--port: an empty path: give the board's serial port, e.g. /dev/ttyACM0 (twolink ports lists them)");
  if (v.baud !== undefined && typeof v.port !== 'string') {
    throw new UsageError(`--baud ${String(v.baud)} goes with --port: the mock rig's serial line runs at the rig file's link.baudRate`);
  }
}

export function numberList(value: string | undefined, name: string, n?: number, range?: ListRange): number[] {
  if (value === undefined) throw new UsageError(`--${name} is required`);
  const parts = value.split(',').map((s) => s.trim());
  const nums = parts.map(decimal);
  const r = z.array(finite).safeParse(nums);
  if (!r.success) {
    const bad = parts[nums.findIndex((v) => !Number.isFinite(v))];
    throw new UsageError(`--${name}: "${bad}" in "${value}" is not a number (write numbers separated by commas, e.g. --${name}=0.1,-0.2)`);
  }
  if (n !== undefined && r.data.length !== n) {
    throw new UsageError(`--${name}: expected ${n} comma-separated number${n > 1 ? 's' : ''}, got ${r.data.length} in "${value}"`);
  }
  if (range) {
    const k = r.data.findIndex((x) => Math.abs(x) > range.maxAbs);
    if (k >= 0)
      throw new UsageError(
        `--${name}: ${r.data[k]} ${range.unit} is out of range: each value must be between -${range.maxAbs} and ${range.maxAbs} ${range.unit}`,
      );
  }
  return r.data;
}

/** The first non-finite number in a JSON-like value, as a path (`M[0][1]`), or undefined when all are finite. */
export function nonFinitePath(v: unknown, path = ''): string | undefined {
  if (typeof v === 'number') return Number.isFinite(v) ? undefined : path || '(the value)';
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const p = nonFinitePath(v[i], `${path}[${i}]`);
      if (p) return p;
    }
    return undefined;
  }
  if (v !== null && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) {
      const p = nonFinitePath(x, path ? `${path}.${k}` : k);
      if (p) return p;
    }
  }
  return undefined;
}

/** Parses one number with optional bounds (inclusive). */
export function numberArg(
  value: string | boolean | string[] | undefined,
  name: string,
  opts: { default?: number; min?: number; max?: number; integer?: boolean; unit?: string } = {},
): number {
  if (value === undefined) {
    if (opts.default !== undefined) return opts.default;
    throw new UsageError(`--${name} is required`);
  }
  if (typeof value !== 'string') throw new UsageError(`--${name} needs a value`);
  let s = z.coerce.number().refine(Number.isFinite, 'not a finite number');
  if (opts.integer) s = s.refine(Number.isInteger, 'not an integer');
  const r = s.safeParse(decimal(value.trim()));
  const unit = opts.unit ? ` ${opts.unit}` : '';
  if (!r.success) {
    const hint = baseHint(value);
    throw new UsageError(`--${name}: "${value}" is ${opts.integer ? 'not an integer' : 'not a number'}${hint}`);
  }
  const v = r.data;
  if ((opts.min !== undefined && v < opts.min) || (opts.max !== undefined && v > opts.max)) {
    const range =
      opts.min !== undefined && opts.max !== undefined
        ? `between ${opts.min} and ${opts.max}${unit}`
        : opts.min !== undefined
          ? `at least ${opts.min}${unit}`
          : `at most ${opts.max}${unit}`;
    throw new UsageError(`--${name}: ${v}${unit} is out of range: it must be ${range}`);
  }
  return v;
}

/** `--serial auto|tty|serialport` (docs/serial.md), for commands with `--port`. */
export const SERIAL_OPTION = {
  type: 'string',
  arg: 'PATH',
  help: "how the port is opened: auto (the default, or the rig file's link.serial: tty on Linux, serialport elsewhere) | tty (twolink's Linux binding) | serialport (serialport's binding in a relay process: Linux, macOS, Windows); docs/serial.md",
} as const;

/** `--serial`: the serial path, undefined when not given (the rig file's `link.serial` then); refused without --port. */
export function serialArg(value: string | boolean | string[] | undefined, port: unknown): SerialPathChoice | undefined {
  if (value === undefined) return undefined;
  if (typeof port !== 'string')
    throw new UsageError(`--serial ${String(value)} goes with --port: the mock rig is not opened through a serial path`);
  return choiceArg(value, 'serial', SERIAL_PATHS, 'auto');
}

/** Parses one of a fixed set of words. */
export function choiceArg<T extends string>(
  value: string | boolean | string[] | undefined,
  name: string,
  choices: readonly T[],
  def: T,
): T {
  if (value === undefined) return def;
  const r = z.enum(choices).safeParse(value);
  if (!r.success) throw new UsageError(`--${name}: "${String(value)}" is not one of ${choices.join(', ')}`);
  return r.data;
}

/** A required string option. */
export function stringArg(value: string | boolean | string[] | undefined, name: string, what = 'a value'): string {
  if (typeof value !== 'string' || value === '') throw new UsageError(`--${name} is required: give ${what}`);
  return value;
}

/** Formats the help of a command. */
export function formatHelp(command: string, summary: string, usage: string, specs: OptionSpecs, more = ''): string {
  const lines = [`twolink ${command}: ${summary}`, '', `usage: twolink ${usage}`, ''];
  const rows = Object.entries(specs).map(([k, s]) => [`--${k}${s.type === 'string' ? ` ${s.arg ?? 'VALUE'}` : ''}`, s.help] as const);
  const w = Math.max(...rows.map((r) => r[0].length), 10);
  for (const [l, h] of rows) lines.push(`  ${l.padEnd(w)}  ${h}`);
  if (more) lines.push('', more);
  return `${lines.join('\n')}\n`;
}
