/**
 * Setup's soft limits from the mechanical stops (as LeRobot's calibration does it): the person turns
 * each joint by hand, motors off, to its two mechanical stops; setup reads the angles there and
 * proposes soft limits STOP_MARGIN_DEG inside them, for the rig file's `limits`. The controller then
 * never drives a joint into its stop. A limit the file has narrower than that is kept (it was set
 * on purpose) unless the person asks for the wider one. Pure: the driver collects the angles.
 */
import type { Rig } from '../config/load.js';
import type { Findings, StepResult } from './steps.js';

/** Angles [deg] read with joint `joint` held against its clockwise and counter-clockwise stops (null: not read). */
export interface StopEvidence {
  joint: number;
  /** Where the joint was before each move [deg]. */
  startDeg: number;
  cwDeg: number;
  ccwDeg: number;
}

/** How far inside each stop the soft limit goes [deg] (the hand presses a stop's bumper a little; the controller overshoots a little). */
export const STOP_MARGIN_DEG = 5;
/** Soft range below which the joint cannot do the built-in reach [deg]. */
export const MIN_RANGE_DEG = 90;
/** A hand that turned farther than this found no stop [deg] (a full turn less a margin). */
export const NO_STOP_DEG = 290;

const DEG = 180 / Math.PI;
const half = (v: number): number => Math.round(v * 2) / 2;

/** Soft limits of a joint [deg]. */
type LimitsDeg = { minDeg: number; maxDeg: number };

/** The stops a joint's sweep did not find (none read past where it started, or none within NO_STOP_DEG), in words. */
function stopsNotFound(e: StopEvidence): string[] {
  const noStop: string[] = [];
  if (!(e.cwDeg < e.startDeg - 1))
    noStop.push(`the clockwise stop (read ${half(e.cwDeg)} deg, not below where it started, ${half(e.startDeg)} deg)`);
  else if (e.startDeg - e.cwDeg > NO_STOP_DEG)
    noStop.push(`a clockwise stop (turned ${Math.round(e.startDeg - e.cwDeg)} deg without meeting one)`);
  if (!(e.ccwDeg > e.startDeg + 1))
    noStop.push(`the counter-clockwise stop (read ${half(e.ccwDeg)} deg, not above where it started, ${half(e.startDeg)} deg)`);
  else if (e.ccwDeg - e.startDeg > NO_STOP_DEG)
    noStop.push(`a counter-clockwise stop (turned ${Math.round(e.ccwDeg - e.startDeg)} deg without meeting one)`);
  return noStop;
}

/** The limits written for both stops found (into `f`), and the step's result: kept, narrowed, or widened as asked. */
function writtenLimits(
  e: StopEvidence,
  f: Findings,
  c: { name: string; file: LimitsDeg; proposal: LimitsDeg; evidence: Record<string, unknown>; widen: boolean },
): StepResult {
  const { name, file, proposal, evidence, widen } = c;
  const j = e.joint;
  // Narrowing is always safe: a file's limit past a stop (or inside its margin) comes in. Widening is
  // never done on our own: a limit narrower than the stops allow was set on purpose until the person
  // says otherwise (`widen`: --widen-limits, or their yes to the question).
  const written = widen ? proposal : { minDeg: Math.max(file.minDeg, proposal.minDeg), maxDeg: Math.min(file.maxDeg, proposal.maxDeg) };
  f.limitsDeg[j] = written;
  evidence.writtenDeg = [written.minDeg, written.maxDeg];
  const wider = proposal.minDeg < file.minDeg - 0.5 || proposal.maxDeg > file.maxDeg + 0.5;
  if (wider) evidence.widerDeg = [proposal.minDeg, proposal.maxDeg];
  const narrowed = written.minDeg > file.minDeg || written.maxDeg < file.maxDeg;
  const outside = file.minDeg < e.cwDeg || file.maxDeg > e.ccwDeg;
  const stops = `joint ${j + 1}'s stops are at ${half(e.cwDeg)} and ${half(e.ccwDeg)} deg (soft limits ${STOP_MARGIN_DEG} deg inside: [${proposal.minDeg}, ${proposal.maxDeg}])`;
  const was = `[${file.minDeg}, ${file.maxDeg}]`;
  const now = `[${written.minDeg}, ${written.maxDeg}]`;
  const fix = narrowed || (widen && wider) ? `limits[${j}].minDeg = ${written.minDeg}, maxDeg = ${written.maxDeg} (written)` : null;
  if (widen && wider) {
    return { name, status: 'pass', summary: `${stops}; the file's ${was} widened to ${now}, as asked`, evidence, fix, corrected: true };
  }
  if (wider) {
    const keptWhat = narrowed
      ? `written ${now}: the file's ${was} narrowed where it ${outside ? 'let the controller drive the joint into a stop' : 'came within the margin of a stop'}, kept where narrower`
      : `the file's narrower ${was} kept`;
    return {
      name,
      status: 'warn',
      summary: `${stops}; ${keptWhat} (setup never widens a limit on its own)`,
      evidence,
      fix: `${fix ? `${fix}; ` : ''}to use the wider [${proposal.minDeg}, ${proposal.maxDeg}], run setup again with --widen-limits (or at a terminal without --yes answer y when asked), or edit limits[${j}]`,
      corrected: narrowed,
    };
  }
  if (!narrowed) return { name, status: 'pass', summary: `${stops}; the file's ${was} kept`, evidence, fix: null, corrected: false };
  if (!outside) return { name, status: 'pass', summary: `${stops}; the file had ${was}`, evidence, fix: null, corrected: false };
  return {
    name,
    status: 'warn',
    summary: `${stops}; the file's ${was} let the controller drive the joint into a stop`,
    evidence,
    fix,
    corrected: true,
  };
}

/**
 * The verdict on joint `e.joint`'s stops and the soft limits to write (into `f.limitsDeg`): the file's
 * limits, narrowed where they reach past a stop or into its margin, and widened to the stops only
 * with `widen` (the person's explicit yes, or --widen-limits); `evidence.widerDeg` says when the
 * stops would allow more than the file has.
 */
export function checkLimits(e: StopEvidence, rig: Rig, f: Findings, widen = false): StepResult {
  const j = e.joint;
  const name = `limits ${j + 1}`;
  const lim = rig.limits[j]!;
  const file = { minDeg: half(lim.min * DEG), maxDeg: half(lim.max * DEG) };
  const evidence: Record<string, unknown> = {
    joint: j + 1,
    startDeg: half(e.startDeg),
    cwStopDeg: half(e.cwDeg),
    ccwStopDeg: half(e.ccwDeg),
    marginDeg: STOP_MARGIN_DEG,
    fileLimitsDeg: [file.minDeg, file.maxDeg],
  };
  const noStop = stopsNotFound(e);
  if (noStop.length) {
    return {
      name,
      status: 'warn',
      summary: `joint ${j + 1}: no reading of ${noStop.join(' nor ')}: the file's limits [${file.minDeg}, ${file.maxDeg}] deg are kept`,
      evidence,
      fix: `turn joint ${j + 1} by hand until it stops, both ways, when asked (if the joint has no stop, keep limits[${j}] inside the range the cables allow)`,
      corrected: false,
    };
  }
  const proposal = { minDeg: half(e.cwDeg + STOP_MARGIN_DEG), maxDeg: half(e.ccwDeg - STOP_MARGIN_DEG) };
  evidence.proposedDeg = [proposal.minDeg, proposal.maxDeg];
  const range = proposal.maxDeg - proposal.minDeg;
  if (range < MIN_RANGE_DEG) {
    return {
      name,
      status: 'fail',
      summary: `joint ${j + 1} moves only ${Math.round(e.ccwDeg - e.cwDeg)} deg between its stops (${half(e.cwDeg)} to ${half(e.ccwDeg)} deg): soft limits ${STOP_MARGIN_DEG} deg inside leave ${range} deg, less than the ${MIN_RANGE_DEG} deg the reach needs`,
      evidence,
      fix: `check what stops joint ${j + 1} (a cable, a screw, the other link) and free it, then run setup again`,
      corrected: false,
    };
  }
  return writtenLimits(e, f, { name, file, proposal, evidence, widen });
}
