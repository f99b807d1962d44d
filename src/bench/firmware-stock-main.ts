/**
 * The stock rig's process: runs one job of firmware-stock.ts (a reach, two, a killed run and the next)
 * with the stock Firmata image in simavr, the plant stepped here at real-time priority, and prints the
 * runs as one JSON line on stdout. A process of its own so that the process that asks (a test's
 * worker, the bench) keeps its own priority and the plant's process does nothing else.
 *
 *   node dist/bench/firmware-stock-main.js '{"job":{"op":"reach"},"rigFile":...,"elf":...,"bin":...,"root":...}'
 */
import { z } from 'zod';
import { loadRig } from '../config/load.js';
import { stockJobHere } from './firmware-stock.js';

const Args = z.strictObject({
  job: z.discriminatedUnion('op', [
    z.strictObject({ op: z.literal('reach'), killAfterS: z.number().positive().optional() }),
    z.strictObject({ op: z.literal('twice') }),
    z.strictObject({ op: z.literal('killed-then-run'), killAfterS: z.number().positive() }),
  ]),
  rigFile: z.string().min(1),
  elf: z.string().min(1),
  bin: z.string().min(1),
  root: z.string().min(1),
});

async function main(): Promise<number> {
  let raw: unknown;
  try {
    raw = JSON.parse(process.argv[2] ?? '');
  } catch {
    process.stderr.write('firmware-stock-main: the argument is not JSON (see the file comment)\n');
    return 2;
  }
  const a = Args.safeParse(raw);
  if (!a.success) {
    process.stderr.write(
      `firmware-stock-main: ${a.error.issues.map((i) => `${i.path.join('.') || '(argument)'}: ${i.message}`).join('; ')}\n`,
    );
    return 2;
  }
  const { job, rigFile, elf, bin, root } = a.data;
  const runs = await stockJobHere(job, loadRig(rigFile), elf, bin, root);
  process.stdout.write(`${JSON.stringify(runs)}\n`);
  return 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    process.stderr.write(`firmware-stock-main: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exitCode = 1;
  },
);
