/**
 * The firmware rig's own process (started by serveFirmwareMock, not through bin/twolink.js, so with
 * V8's default garbage collector): argv[2] is a JSON object { rigFile, board, elf, injections, sliceUs, rt, report }.
 * Errors a user can fix (a missing package, a build failure) are one line and exit code 2.
 */
import { z } from 'zod';
import { loadRig } from '../config/load.js';
import { runFirmwareMock } from './firmware-mock.js';
import { injectionSchema } from './injections.js';
import { FirmwareSimError } from './firmware-sim.js';
import { mockReportLine, type MockReport } from './mock-report.js';

const Args = z.object({
  rigFile: z.string(),
  board: z.enum(['uno', 'mega', 'uno-firmata']),
  elf: z.string().optional(),
  injections: z.array(injectionSchema),
  sliceUs: z.number().int().min(20).max(10_000).optional(),
  rt: z.boolean().optional(),
  report: z.boolean().optional(),
});

async function main(): Promise<number> {
  const a = Args.parse(JSON.parse(process.argv[2] ?? '{}'));
  const rig = loadRig(a.rigFile);
  try {
    return await runFirmwareMock(rig, {
      board: a.board,
      ...(a.elf !== undefined ? { elf: a.elf } : {}),
      injections: a.injections,
      ...(a.sliceUs ? { sliceUs: a.sliceUs } : {}),
      ...(a.rt ? { rt: true } : {}),
      log: (l) => process.stderr.write(`${l}\n`),
      out: (l) => process.stdout.write(`${l}\n`),
      ...(a.report ? { report: (r: MockReport) => process.stdout.write(mockReportLine(r)) } : {}),
    });
  } catch (e) {
    if (e instanceof FirmwareSimError) {
      process.stderr.write(`twolink: ${e.message}\n`);
      return 2;
    }
    throw e;
  }
}

/**
 * Reports the exit code to the parent (serveFirmwareMock: whatever happens after, that is the answer),
 * then exits with its signal handlers in place: node's natural exit closes them first, and a signal
 * in that window (a Ctrl-C that came twice) killed a rig that had stopped cleanly.
 */
function finish(code: number): void {
  process.exitCode = code;
  if (process.send) process.send({ code }, () => process.exit(code));
  else process.exit(code);
}

main().then(finish, (e: unknown) => {
  process.stderr.write(`twolink rig --firmware: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  finish(1);
});
