/**
 * What `twolink rig --report` says on stdout, one JSON object a line, for a program that drives it
 * (the HIL suite's real-time engine): where the host connects, which injections it cannot take, and
 * when it serves, when the host's handshake came (the zero of its injections' times), and when each
 * injection was applied on the simulated arm's time. Its stderr stays words for people; nothing reads those back. The schema is written
 * once here for the rig that writes the lines and the program that reads them.
 */
import { z } from 'zod';

export const mockReportSchema = z.discriminatedUnion('kind', [
  /** The pty pair is made: the host opens `host`. */
  z.strictObject({ kind: z.literal('pty'), host: z.string().min(1) }),
  /** An injection the rig does not have the part for: it serves on without it. */
  z.strictObject({ kind: z.literal('refused'), injection: z.string().min(1), why: z.string() }),
  /** The board serves on `board` (its end open): the host may talk now. */
  z.strictObject({ kind: z.literal('serving'), board: z.string().min(1) }),
  /**
   * The host's first handshake request reached the board (the line protocol's H; Firmata's
   * REPORT_VERSION or REPORT_FIRMWARE query), at `monoMs` on the machine's monotonic clock [ms] (as
   * `motors`): injection times count from here. Once per rig, however many hosts come after.
   */
  z.strictObject({ kind: z.literal('handshake'), monoMs: z.number().finite() }),
  /**
   * An injection was applied: `injection` as written (NAME[=VALUE]@T[+D]), `at` its time T, `plantS` the
   * simulated arm's time when it was applied and `wallS` the wall clock's, both from `handshake` [s]
   * (the firmware rig: board time). The rig applies it on the arm's time; on a starved machine the
   * wall's runs ahead of it.
   */
  z.strictObject({
    kind: z.literal('injected'),
    injection: z.string().min(1),
    at: z.number().finite().min(0),
    plantS: z.number().finite(),
    wallS: z.number().finite(),
  }),
  /**
   * The Firmata board's motors went from running to all stopped (`zero` true: every PWM pin at its
   * stopped value) or back, when the pins took the write, at `monoMs`: the machine's monotonic clock
   * [ms] (CLOCK_MONOTONIC, as process.hrtime reads it in every process: comparable with the host's).
   */
  z.strictObject({ kind: z.literal('motors'), zero: z.boolean(), monoMs: z.number().finite() }),
  /**
   * The line-protocol mock rig ended: its board's thread took `samples` samples and its timers ran up to
   * `maxLateMs` late [ms], `lateTimers` of them more than 0.5 ms (a starved rig, not the host).
   */
  z.strictObject({
    kind: z.literal('mock-end'),
    samples: z.number().int().min(0),
    maxLateMs: z.number().finite(),
    lateTimers: z.number().int().min(0),
  }),
  /**
   * The firmware rig (`--firmware`) ended: `boardS` of board time simulated in `wallS` of the wall's [s],
   * behind the wall clock at most `maxBehindMs` [ms] and `restarts` times over 100 ms (skipped ahead);
   * the encoder pins against the plant over `slices` lock-step slices: RMS per joint [deg], and over the
   * `staleSlices` that ran ahead of the plant process (at most `maxStale` behind) [deg]. `code` is the
   * harness's exit code (null: killed).
   */
  z.strictObject({
    kind: z.literal('firmware-end'),
    boardS: z.number().finite(),
    wallS: z.number().finite(),
    maxBehindMs: z.number().finite(),
    restarts: z.number().int().min(0),
    code: z.number().int().nullable(),
    pins: z.strictObject({
      slices: z.number().int().min(0),
      rmsDeg: z.array(z.number().finite()),
      staleSlices: z.number().int().min(0),
      maxStale: z.number().int().min(0),
      staleRmsDeg: z.array(z.number().finite()),
    }),
  }),
]);

export type MockReport = z.infer<typeof mockReportSchema>;

/** One report line (with its newline). */
export function mockReportLine(r: MockReport): string {
  return `${JSON.stringify(r)}\n`;
}

/** A stdout line of `twolink rig --report`, checked; throws naming the line when it is no report. */
export function parseMockReport(line: string): MockReport {
  let raw: unknown;
  try {
    raw = JSON.parse(line);
  } catch {
    throw new Error(`twolink rig --report: a line that is not JSON: ${JSON.stringify(line.slice(0, 200))}`);
  }
  const r = mockReportSchema.safeParse(raw);
  if (!r.success)
    throw new Error(
      `twolink rig --report: a line that is no report (${r.error.issues.map((i) => `${i.path.join('.') || 'line'}: ${i.message}`).join('; ')}): ${line.slice(0, 200)}`,
    );
  return r.data;
}
