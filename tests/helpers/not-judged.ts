// A test whose simulated board starved on every attempt (RIG_STARVED_ATTEMPTS, src/mock/starvation.ts)
// could not judge the host: a real board keeps its crystal's time whatever the laptop does, a board
// simulated on this machine does not. Such a test is skipped and said: on stderr, and in a file that
// .ci/run prints in its closing lines, so that a skip is never silent. A failure with the board keeping
// time still fails. (The stock Firmata tests say theirs in their own line: firmware-loop.test.ts.)
import { appendFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { TestContext } from 'vitest';
import { ROOT } from './cli.js';

/** Where the skipped tests are listed, one line each; .ci/run removes it first and prints it last. */
export const NOT_JUDGED_FILE = join(ROOT, 'firmware-protocol/firmware/build/not-judged.txt');

/** Skips the test under way, saying why on stderr and in NOT_JUDGED_FILE. Never returns. */
export function notJudged(ctx: TestContext, why: string): never {
  const line = `NOT JUDGED: ${ctx.task.name}: ${why}`;
  console.warn(line);
  mkdirSync(dirname(NOT_JUDGED_FILE), { recursive: true });
  appendFileSync(NOT_JUDGED_FILE, `${line.replace(/\s*\n\s*/g, ' ')}\n`);
  return ctx.skip(why);
}
