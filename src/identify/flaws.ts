/**
 * The gearmotors' flaws in identification (issue 33 item 5): each joint's play sweep run and fitted
 * (src/identify/sweep.ts), the figures written into the identified rig file where the controller
 * reads them (`encoders[j].backlashDeg`: the backlash inverse, src/control/backlash.ts;
 * `friction.coulomb`, `friction.viscous`, `friction.breakawayNm`: the feedforward's Stribeck friction),
 * and a validation with the disturbance observer as `run` uses it.
 */
import type { Rig } from '../config/load.js';
import { describeStop, type StopReason } from '../control/stop.js';
import { gapDerivativeCap } from '../control/tracking-law.js';
import { createActuatedArmModel } from '../model/actuated.js';
import type { PathSpec } from '../model/builtins.js';
import type { RunSummary } from '../run/stats.js';
import { fitTickFromRow, type FitTick } from './fit.js';
import { RunError, withoutObserver, type RunPaths } from './pipeline.js';
import { analyseSweep, SweepError, sweepPath, type SweepFigures, type SweepOptions } from './sweep.js';

/** A joint whose sweep could not be run or fitted, and why. */
export interface SweepSkipped {
  joint: number;
  skipped: string;
}

export type JointFlaws = SweepFigures | SweepSkipped;

export function measured(f: JointFlaws): f is SweepFigures {
  return !('skipped' in f);
}

/**
 * The rig the sweeps run with: the disturbance observer off (withoutObserver: the torques are the
 * PID's and the feedforward's), and each joint's derivative gain at most the motor side's alone within
 * the play (gapDerivativeCap, as the loop caps it where a play is declared). The play is what the
 * sweep measures, so it is never declared here; gains made for the whole arm act on the motor side
 * alone, a tenth of the arm on joint 1 of the flawed mock, and a little more of them (setup's
 * identified masses: kd 3.07 against the nominal 2.42) made the loop ring through the play at 30 Hz
 * with +-4 N m through the fast passes and the holds: joint 1's play fitted 0.29 +-0.49 deg, its
 * breakaway 1.2 N m. The cap (0.94 on that joint) also divides the derivative gain's share of the
 * encoder's flicker by 2.6: the dither that started the joint before the loop's steady torque reached
 * the breakaway.
 *
 * A breakaway compensation the rig has (motors[j].breakawayDuty from setup, friction.breakawayNm) is
 * kept: without it joint 2's fit was worse in one of setup's realisations (its play 1.20 +-0.15 deg,
 * the residual doubled, against 1.38 with it). The breakaway then read is the loop's
 * kick at least (docs/identify.md).
 */
export function sweepRig(rig: Rig): Rig {
  const r = withoutObserver(rig);
  const model = createActuatedArmModel(r);
  const kd = r.control.pid.kd.map((k, i) => Math.min(k, gapDerivativeCap(model.rotorInertia[i] ?? 0)));
  return { ...r, control: { ...r.control, pid: { ...r.control.pid, kd } } };
}

/**
 * Runs each joint's play sweep, then fits them. A sweep that stops on a fault is a RunError; one that
 * does not fit the limits or gives no fit is skipped (said why). The sweeps run with sweepRig: the
 * disturbance observer off (their torques are then the PID's and the feedforward's alone: an observer
 * rattles through play nobody declared) and the derivative gains capped to the motor side's.
 *
 * Each joint's fit needs the other joint's play: the other link sits off its motor-side encoder by
 * half of it, which moves where gravity acts (on the flawed mock, link 1's 0.75 deg shifts link 2's
 * gravity zero and read as joint 2's Coulomb friction 0.005 N m apart per direction; link 2's play
 * crossing as joint 1 crosses hanging added 0.2 deg to joint 1's play). So the fits go round twice:
 * joint 1 with the other's play as declared, joint 2 with joint 1's measured, then joint 1 again with
 * joint 2's, and joint 2 again (on the flawed mock a third round moves neither play by 0.001 deg).
 */
export async function measureFlaws(rig: Rig, run: RunPaths, o: SweepOptions = {}, onPath?: (p: PathSpec) => void): Promise<JointFlaws[]> {
  const ticks: (FitTick[] | SweepSkipped)[] = [];
  for (const j of [0, 1]) {
    let path: PathSpec;
    try {
      path = sweepPath(rig, j, o);
    } catch (e) {
      if (!(e instanceof SweepError)) throw e;
      ticks.push({ joint: j, skipped: e.message });
      continue;
    }
    onPath?.(path);
    const r = await run(sweepRig(rig), [path]);
    if (r.summary.stop.kind !== 'done')
      throw new RunError(`the play sweep of joint ${j + 1} stopped early: ${describeStop(r.summary.stop)}`, false, r.summary.stop);
    ticks.push(r.rows.map(fitTickFromRow));
  }
  // the play each joint's link sits off its encoder by, as far as known: declared in the file, then measured
  const plays = rig.encoders.slice(0, 2).map((e) => ((e.side ?? 'motor') === 'motor' ? ((e.backlash ?? 0) * 180) / Math.PI : 0));
  const out: JointFlaws[] = [];
  for (let round = 0; round < 2; round++) {
    for (const j of [0, 1]) {
      const t = ticks[j]!;
      if (!Array.isArray(t)) {
        out[j] = t;
        continue;
      }
      try {
        const f = analyseSweep(rig, t, j, { ...o, otherPlayDeg: plays[1 - j] });
        out[j] = f;
        if ((rig.encoders[j]?.side ?? 'motor') === 'motor' && playSignificant(f)) plays[j] = f.playDeg;
      } catch (e) {
        if (!(e instanceof SweepError)) throw e;
        out[j] = { joint: j, skipped: e.message };
      }
    }
  }
  return out;
}

const r4 = (v: number): number => Number(v.toPrecision(4));

/** A play whose standard deviation is above this [deg] is not written: the sweep did not determine it. */
export const PLAY_STD_MAX_DEG = 0.3;

/** The sweep determined the play: positive, at most 30 deg (the schema's), its standard deviation within PLAY_STD_MAX_DEG. */
export function playDetermined(f: SweepFigures): boolean {
  return Number.isFinite(f.playDeg) && f.playDeg > 0 && f.playDeg <= 30 && f.playStdDeg <= PLAY_STD_MAX_DEG;
}

/**
 * The physical floor of a play worth writing [deg]. The bench encoders count 2400-4800 a motor
 * revolution (rigs/*.json: 0.075-0.15 deg a count), and the fit's play is a difference of two
 * gravity curves read through those counts: below about one to two counts it is quantisation and
 * fit residual, not gear play (the ideal mock, with no play in its plant, fits -0.01 and 0.05 deg).
 * A backlash inverse given a play that is not there injects a jump of that size at every reversal.
 */
export const PLAY_MIN_DEG = 0.2;
/** A play is written only when it is this many of its standard deviations above zero (a 3-sigma test). */
export const PLAY_SIGMAS = 3;

/** The play measured is significantly above zero: above PLAY_MIN_DEG and PLAY_SIGMAS standard deviations. */
export function playSignificant(f: SweepFigures): boolean {
  return playDetermined(f) && f.playDeg > Math.max(PLAY_MIN_DEG, PLAY_SIGMAS * f.playStdDeg);
}

/** The sweep determined that there is no play worth writing: its figure is precise (within PLAY_STD_MAX_DEG) but not significant. */
export function noPlayFound(f: SweepFigures): boolean {
  return (
    Number.isFinite(f.playDeg) &&
    Number.isFinite(f.playStdDeg) &&
    f.playStdDeg <= PLAY_STD_MAX_DEG &&
    f.playDeg <= 30 &&
    !playSignificant(f)
  );
}

/**
 * The rig file `file` (raw JSON, as identifiedRigFile wrote it) with the measured flaws: per joint the
 * Coulomb friction (the mean of both directions: the model has one level), the viscous friction, the
 * breakaway (at least the Coulomb level) and the play (`encoders[j].backlashDeg`, side motor, when
 * playSignificant: a play measured on an arm that has none is not written). A joint
 * without a measurement, or a figure that is not physical (negative, not finite), keeps the file's.
 */
export function withFlaws(file: Record<string, unknown>, rig: Rig, flaws: readonly JointFlaws[]): Record<string, unknown> {
  const out = JSON.parse(JSON.stringify(file)) as Record<string, unknown>;
  const fr = (out.friction ?? {}) as { viscous?: number[]; coulomb?: number[]; breakawayNm?: number[] };
  const viscous = (fr.viscous ?? rig.friction.viscous).slice(0, 2);
  const coulomb = (fr.coulomb ?? rig.friction.coulomb).slice(0, 2);
  const breakaway = (fr.breakawayNm ?? rig.friction.breakaway ?? coulomb).slice(0, 2);
  const rawEnc =
    (out.encoders as Record<string, unknown>[] | undefined) ??
    rig.encoders.map((e) => ({ countsPerRev: e.countsPerRev, sign: e.sign, zeroDeg: (e.zero * 180) / Math.PI }));
  const encoders = rawEnc.map((e) => ({ ...e }));
  const ok = (v: number): boolean => Number.isFinite(v) && v >= 0;
  for (const f of flaws) {
    if (!measured(f)) continue;
    const j = f.joint;
    const c = (f.coulombNm[0] + f.coulombNm[1]) / 2;
    if (ok(c)) coulomb[j] = r4(c);
    if (ok(f.viscousNms)) viscous[j] = r4(f.viscousNms);
    const b = (f.breakawayNm[0] + f.breakawayNm[1]) / 2;
    breakaway[j] = ok(b) ? r4(Math.max(b, coulomb[j]!)) : Math.max(breakaway[j]!, coulomb[j]!);
    if ((rig.encoders[j]?.side ?? 'motor') === 'motor' && playSignificant(f))
      encoders[j] = { ...encoders[j], backlashDeg: Number(f.playDeg.toFixed(2)) };
  }
  out.friction = { ...fr, viscous, coulomb, breakawayNm: breakaway.map((b, j) => Math.max(b, coulomb[j]!)) };
  out.encoders = encoders;
  return out;
}

/** One validation run with the observer on: how it stopped, and the trajectory's RMS of the encoder and (the mock's) link [deg]. */
export interface ObserverRun {
  stop: StopReason;
  encoderRmsDeg: number[] | null;
  linkRmsDeg: number[] | null;
  reversalsPerS: number[] | null;
}

function observerRun(s: RunSummary): ObserverRun {
  const t = s.phases?.trajectory;
  return {
    stop: s.stop,
    encoderRmsDeg: t ? t.encoder.rmsDeg : null,
    linkRmsDeg: t?.link ? t.link.rmsDeg : null,
    reversalsPerS: s.reversals ? s.reversals.perS : null,
  };
}

/**
 * Runs `path` with the rig before and after identification, each with its disturbance observer as
 * its file says (on by default: as `run` uses it), the identified rig with its measured play and
 * friction. A run that stops on a fault is reported, not thrown: an unflawed model on a flawed arm
 * may stop where the identified one does not.
 */
export async function validateWithObserver(
  before: Rig,
  after: Rig,
  run: RunPaths,
  path: PathSpec,
): Promise<{ before: ObserverRun; after: ObserverRun }> {
  const a = await run(before, [path]);
  const b = await run(after, [path]);
  return { before: observerRun(a.summary), after: observerRun(b.summary) };
}
