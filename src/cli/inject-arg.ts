/**
 * `--inject NAME[=VALUE][@T]` (run, rig): test knobs injected into the mock rig (src/mock/injections.ts).
 * `--fault` is its old name, still accepted with a one-line notice.
 */
import { INJECTION_NAMES, injectionHelp, InjectionError, parseInjection, type Injection } from '../mock/injections.js';
import { UsageError, type OptionSpec, type ParsedOf } from './args.js';

export const INJECT_OPTION = {
  type: 'string',
  arg: 'NAME[=V][@T]',
  multiple: true,
  help: 'inject a test knob into the mock rig at loop time T [s], e.g. payload=0.25@2.2 (repeatable; see --help)',
} as const satisfies OptionSpec;

/** `--fault`: the deprecated name of --inject (scripts and suites written before the rename). */
export const FAULT_ALIAS_OPTION = {
  type: 'string',
  arg: 'NAME[=V][@T]',
  multiple: true,
  help: 'deprecated: the old name of --inject',
} as const satisfies OptionSpec;

/** The notice printed once when --fault is used. */
export const FAULT_ALIAS_NOTICE =
  'twolink: --fault is deprecated: use --inject (same syntax; "fault" now means only a safety stop the loop declares)';

/** Help text: every injection, from the table. */
export function injectHelp(): string {
  return `Injections for --mock (--inject NAME[=VALUE][@SECONDS]; without @ at 0 s):\n${injectionHelp()}`;
}

/** A short list for one-line help. */
export function injectionNames(): string {
  return INJECTION_NAMES.join(', ');
}

/**
 * The injections of `--inject` and its deprecated alias `--fault` for an arm of `joints` joints. Bad
 * text is a UsageError naming the option, the argument, the value and what is allowed.
 */
export function injectArgs(
  v: ParsedOf<{ inject: typeof INJECT_OPTION; fault: typeof FAULT_ALIAS_OPTION }>,
  joints: number,
  notice: (line: string) => void = (l) => process.stderr.write(`${l}\n`),
): Injection[] {
  const inject = v.inject ?? [];
  const fault = v.fault ?? [];
  if (fault.length) notice(FAULT_ALIAS_NOTICE);
  const parse = (text: string, flag: string): Injection => {
    try {
      return parseInjection(text, joints, flag);
    } catch (e) {
      if (e instanceof InjectionError) throw new UsageError(e.message);
      throw e;
    }
  };
  return [...inject.map((t) => parse(t, '--inject')), ...fault.map((t) => parse(t, '--fault'))];
}
