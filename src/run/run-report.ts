/**
 * What `twolink run` tells a program that drives it (the benches, the tests) as values, not words: with
 * `TWOLINK_REPORT_FD=N` in its environment (N >= 3, a pipe the parent opened: `stdio[N]`), one JSON
 * object a line on that descriptor, as `twolink rig --report` writes its records on stdout
 * (src/mock/mock-report.ts) and the start-up bench's probe its CPU time on fd 3 (src/bench/startup.ts).
 * Without the variable nothing is written. The human lines on stderr stay as they are; nothing parses
 * them. The schema is written once here for the run that writes the lines and the program that reads
 * them.
 */
import { writeSync } from 'node:fs';
import { z } from 'zod';

/** The environment variable that names the descriptor. */
export const REPORT_FD_ENV = 'TWOLINK_REPORT_FD';

export const runReportSchema = z.discriminatedUnion('kind', [
  /** The Foxglove live view (--foxglove) listens on `port` (the one the system gave for `--foxglove 0`). */
  z.strictObject({ kind: z.literal('live'), port: z.number().int().min(1).max(65535) }),
  /**
   * The live view closed after clients talked to it: `requests` client messages read, `closed` clients
   * closed for a message outside the protocol, `refused` connections refused, `rateClosed` clients closed
   * for their message rate; `handlingMs` of the main thread handling them [ms], and the sampled CPU per
   * message [us] (null: none sampled).
   */
  z.strictObject({
    kind: z.literal('live-end'),
    requests: z.number().int().min(0),
    closed: z.number().int().min(0),
    refused: z.number().int().min(0),
    rateClosed: z.number().int().min(0),
    handlingMs: z.number().finite().min(0),
    cpuUsPerMessage: z.number().finite().min(0).nullable(),
  }),
  /**
   * The test-only hook TWOLINK_TEST_CRASH (src/run/crash.ts) throws now on `thread`, at `monoMs` on the
   * machine's monotonic clock [ms] (as the rig's `motors` reports: comparable across processes).
   */
  z.strictObject({
    kind: z.literal('test-crash'),
    thread: z.enum(['main', 'main-rejection', 'loop', 'recorder']),
    monoMs: z.number().finite(),
  }),
]);

export type RunReport = z.infer<typeof runReportSchema>;

/** The descriptor TWOLINK_REPORT_FD names, or undefined without it; anything but an integer >= 3 is an error naming the variable. */
export function reportFd(env: NodeJS.ProcessEnv = process.env): number | undefined {
  const v = env[REPORT_FD_ENV];
  if (v === undefined || v === '') return undefined;
  const fd = Number(v);
  if (!/^\d+$/.test(v) || !Number.isSafeInteger(fd) || fd < 3)
    throw new Error(
      `${REPORT_FD_ENV}="${v}": give the number of a descriptor the parent opened, 3 or more (stdin, stdout and stderr are 0-2)`,
    );
  return fd;
}

/**
 * Writes `r` as one line on TWOLINK_REPORT_FD, if it is set (synchronously: a crash test's record is out
 * before the throw). A variable that names no descriptor, or one that fails (its reader gone), is not the
 * run's fault: said once on stderr, and no more reports.
 */
export function writeRunReport(r: RunReport, env: NodeJS.ProcessEnv = process.env): void {
  if (failed) return;
  let fd: number | undefined;
  try {
    fd = reportFd(env);
    if (fd !== undefined) writeSync(fd, `${JSON.stringify(r)}\n`);
  } catch (e) {
    failed = true;
    const why = e instanceof Error ? e.message : String(e);
    process.stderr.write(
      `twolink: ${fd === undefined ? why : `${REPORT_FD_ENV}=${fd}: cannot write the report (${why})`}; no more reports\n`,
    );
  }
}
let failed = false;

/** A line from TWOLINK_REPORT_FD, checked; throws naming the line when it is no report. */
export function parseRunReport(line: string): RunReport {
  let raw: unknown;
  try {
    raw = JSON.parse(line);
  } catch {
    throw new Error(`${REPORT_FD_ENV}: a line that is not JSON: ${JSON.stringify(line.slice(0, 200))}`);
  }
  const r = runReportSchema.safeParse(raw);
  if (!r.success)
    throw new Error(
      `${REPORT_FD_ENV}: a line that is no report (${r.error.issues.map((i) => `${i.path.join('.') || 'line'}: ${i.message}`).join('; ')}): ${line.slice(0, 200)}`,
    );
  return r.data;
}
