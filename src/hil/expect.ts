/**
 * A scenario's expectations against what its run measured: one figure per expectation, with the
 * measured value, the limit and whether it holds. Pure: the run's summary and events in, figures out.
 */
import { describeStop, isStopOf, type StopReason } from '../control/stop.js';
import type { RunSummary } from '../run/stats.js';
import type { Expectations } from './suite.js';

/** One checked expectation. */
export interface Figure {
  /** The expectation's key in the suite file (`maxRmsDeg`). */
  key: keyof Expectations;
  /** What was measured, in words with its unit: `tracking RMS [deg]`. */
  label: string;
  /** The measured value(s), formatted. */
  measured: string;
  /** The limit, formatted with its comparison: `<= 0.5`. */
  limit: string;
  pass: boolean;
}

/** What a run gives the checks. */
export interface Outcome {
  summary: RunSummary;
  /**
   * How long after the first injection the arm was stopped [ms] (how the engine measures it: see
   * src/hil/engines.ts); `never` if it was not; absent when the scenario has no injection.
   */
  stopMs?: number | 'never';
}

/** States in which the loop no longer tracks: the stop has begun. */
export const STOPPING: ReadonlySet<string> = new Set(['release', 'stopped', 'estop', 'fault', 'disabled']);

const fmt = (v: number): string => (Math.abs(v) >= 100 ? v.toFixed(0) : v.toFixed(3));

/** A per-joint figure of a one- or two-joint rig: `measured` has an entry per joint, an array `limit` too. */
function perJoint(key: 'maxRmsDeg' | 'maxErrorDeg' | 'maxTwinRmsDeg', label: string, measured: number[], limit: number | number[]): Figure {
  const limits = measured.map((_, i) => (Array.isArray(limit) ? limit[i]! : limit));
  const pass = measured.every((v, i) => v <= limits[i]!);
  const lim = Array.isArray(limit) ? limits.map(fmt).join(', ') : fmt(limit);
  return { key, label, measured: measured.map(fmt).join(', '), limit: `<= ${lim}`, pass };
}

/**
 * A tracking figure as far as the run measured it: one that tracked nothing fails (its zeros are no
 * measurement: a limit on them checked nothing); one that covers only the approach says so.
 */
function tracking(f: Figure, t: RunSummary['tracking']): Figure {
  if (t.covers === 'none' || t.samples === 0)
    return { ...f, measured: 'nothing tracked (the run ended before any trajectory began)', pass: false };
  return t.covers === 'approach' ? { ...f, label: `${f.label} (approach only)` } : f;
}

/**
 * Whether a suite's `expect.stopReason` is written as a kind path (`done`, `fault`, `fault.link-lost`:
 * words of lower-case letters and hyphens, a dot between them) rather than in the old form, the start
 * of the stop's text (`fault:link-lost`, with its colon).
 */
export function looksLikeStopPath(v: string): boolean {
  return /^[a-z-]+(\.[a-z-]+)*$/.test(v);
}

/**
 * The stop expectation. A kind path compares the stop's value (`fault` takes any fault,
 * `fault.following-error` one kind); the old form, kept as an alias, compares the start of the
 * stop's text as people read it (describeStop), as it always did.
 */
function stopFigure(expected: string, stop: StopReason): Figure {
  const text = describeStop(stop);
  const byKind = looksLikeStopPath(expected);
  return {
    key: 'stopReason',
    label: 'stop reason',
    measured: text,
    limit: byKind ? `kind ${expected}` : text === expected ? `= ${expected}` : `starts with ${expected}`,
    pass: byKind ? isStopOf(stop, expected) : text.startsWith(expected),
  };
}

/** Checks every expectation of a scenario; the stop reason always (it defaults to "done"). */
export function evaluate(expect: Expectations, o: Outcome): Figure[] {
  const s = o.summary;
  const out: Figure[] = [stopFigure(expect.stopReason, s.stop)];
  if (expect.maxRmsDeg !== undefined)
    out.push(tracking(perJoint('maxRmsDeg', 'tracking RMS [deg]', s.tracking.rmsDeg, expect.maxRmsDeg), s.tracking));
  if (expect.maxErrorDeg !== undefined)
    out.push(tracking(perJoint('maxErrorDeg', 'tracking max [deg]', s.tracking.maxDeg, expect.maxErrorDeg), s.tracking));
  if (expect.maxTwinRmsDeg !== undefined)
    out.push(perJoint('maxTwinRmsDeg', 'twin residual RMS [deg]', s.twin.rmsDeg, expect.maxTwinRmsDeg));
  if (expect.twinAlarms !== undefined) {
    const a = expect.twinAlarms;
    const n = s.twin.alarms;
    if (typeof a === 'number') {
      out.push({ key: 'twinAlarms', label: 'twin alarms', measured: String(n), limit: `= ${a}`, pass: n === a });
    } else {
      const lim =
        [a.min !== undefined ? `>= ${a.min}` : '', a.max !== undefined ? `<= ${a.max}` : ''].filter(Boolean).join(' and ') || 'any';
      out.push({
        key: 'twinAlarms',
        label: 'twin alarms',
        measured: String(n),
        limit: lim,
        pass: (a.min === undefined || n >= a.min) && (a.max === undefined || n <= a.max),
      });
    }
  }
  if (expect.stopWithinMs !== undefined) {
    const d = o.stopMs;
    out.push({
      key: 'stopWithinMs',
      label: 'stopped after the injection [ms]',
      measured: d === undefined ? 'no injection happened' : d === 'never' ? 'never stopped' : fmt(d),
      limit: `<= ${fmt(expect.stopWithinMs)}`,
      pass: typeof d === 'number' && d <= expect.stopWithinMs,
    });
  }
  return out;
}
