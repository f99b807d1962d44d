/**
 * The `--json` summary a child `twolink run` prints last, read with zod (it is outside input): its
 * stop as a value, and the few figures the bench tables take. How a child run ended when it printed
 * no summary (killed on purpose, or it failed) is a value too, with its words.
 */
import { z } from 'zod';
import { describeStop, type StopReason } from '../control/stop.js';
import { stopSchema } from '../run/stop-schema.js';
import { asPair, type ReadonlyPair } from '../model/types.js';

const childSummarySchema = z.looseObject({
  stop: stopSchema,
  stopReason: z.string(),
  tracking: z.looseObject({ rmsDeg: z.array(z.number()) }).optional(),
  timing: z.looseObject({ lateSamples: z.number(), lostSamples: z.number().optional() }).optional(),
  link: z.looseObject({ corrupt: z.number().optional() }).optional(),
});

export type ChildSummary = z.infer<typeof childSummarySchema>;

/** How a child run ended: its stop, killed (the bench ended it on purpose), or no summary (and why). */
export type ChildEnd = { kind: 'stopped'; stop: StopReason } | { kind: 'killed' } | { kind: 'no-summary'; why: string };

/** A two-link child run's tracking RMS per joint [deg] (NaN, NaN when the summary has none): checked as a pair. */
export function trackingRmsDeg(s: ChildSummary | undefined): ReadonlyPair {
  return s?.tracking ? asPair(s.tracking.rmsDeg, "a child run's tracking.rmsDeg") : [NaN, NaN];
}

/** The summary on the last line of `stdout`, or why there is none (`stderr`'s last line says more). */
export function lastSummary(stdout: string, stderr = ''): { summary: ChildSummary } | { why: string } {
  const last = stdout.trim().split('\n').pop() ?? '';
  const said = stderr.trim().split('\n').pop() ?? '';
  let raw: unknown;
  try {
    raw = JSON.parse(last);
  } catch {
    return { why: `no summary${said ? `: ${said}` : ''}` };
  }
  const r = childSummarySchema.safeParse(raw);
  if (!r.success)
    return { why: `a summary without a valid stop (${r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')})` };
  return { summary: r.data };
}

/** The end of a child run from its output. */
export function childEnd(stdout: string, stderr = ''): ChildEnd {
  const s = lastSummary(stdout, stderr);
  return 'summary' in s ? { kind: 'stopped', stop: s.summary.stop } : { kind: 'no-summary', why: s.why };
}

/** Whether the child run did all it was asked (its stop is `done`). */
export function childDone(e: ChildEnd): boolean {
  return e.kind === 'stopped' && e.stop.kind === 'done';
}

/** The end in words, for a bench table. */
export function childEndText(e: ChildEnd): string {
  switch (e.kind) {
    case 'stopped':
      return describeStop(e.stop);
    case 'killed':
      return 'killed';
    case 'no-summary':
      return e.why;
  }
}
