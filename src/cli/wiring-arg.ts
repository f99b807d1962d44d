/** `--wiring LIST` (setup, run, rig): the mock rig wired wrong on purpose (src/mock/wiring.ts). */
import { parseWiring, WIRING_KINDS, WiringError, type MockWiring } from '../mock/wiring.js';
import { UsageError, type OptionSpec } from './args.js';

export const WIRING_OPTION = {
  type: 'string',
  arg: 'LIST',
  help: `the mock rig wired wrong on purpose, a comma list of: ${Object.keys(WIRING_KINDS).join(', ')}`,
} as const satisfies OptionSpec;

/** Help text: what each mistake means. */
export function wiringHelp(): string {
  return `Wiring mistakes for --mock (--wiring A,B,...; joints and channels from 1):\n${Object.entries(WIRING_KINDS)
    .map(([k, v]) => `  ${k.padEnd(17)} ${v}`)
    .join('\n')}`;
}

/** Parses `--wiring` for an arm of `joints` joints; undefined when not given. Bad text is a UsageError naming the item. */
export function wiringArg(value: string | boolean | string[] | undefined, joints: 1 | 2, mock: boolean): MockWiring | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw new UsageError('--wiring needs a value, e.g. --wiring swap-motors,reverse-encoder=2');
  if (!mock) throw new UsageError('--wiring needs --mock: it miswires the simulated rig (a real arm is wired as it is)');
  try {
    return parseWiring(value, joints);
  } catch (e) {
    if (e instanceof WiringError) throw new UsageError(e.message);
    throw e;
  }
}
