/**
 * Setup's play step (issue 33 item 5): each joint swept slowly through hanging, where gravity on it
 * changes sign and the link crosses from one flank of the gear to the other while the motor side moves
 * through the play (src/identify/sweep.ts: with a motor-side encoder the play shows in the duty's
 * torque, as the motor travel between the two flanks' gravity curves). The play measured goes into
 * the rig file as `encoders[j].backlashDeg`, which the run's backlash inverse reads
 * (src/control/backlash.ts); the friction per direction and the breakaway the sweep also measures are
 * evidence (identify writes them). A joint-side encoder (`side: joint`) sees the link: no play to
 * measure. Where the arm is (the mock in virtual time, a port) is the caller's `RunPaths`.
 */
import type { Rig } from '../config/load.js';
import {
  measured,
  measureFlaws,
  noPlayFound,
  PLAY_MIN_DEG,
  PLAY_SIGMAS,
  PLAY_STD_MAX_DEG,
  playSignificant,
  withFlaws,
  type JointFlaws,
} from '../identify/flaws.js';
import { RunError, type RunPaths } from '../identify/pipeline.js';
import type { RigChange } from './rigfile.js';
import type { StepResult } from './steps.js';

/** What the play step found, the rig file with the play written, and whether a run stopped on a fault. */
export interface PlayOutcome {
  step: StepResult;
  file: Record<string, unknown>;
  changes: RigChange[];
  stopped: boolean;
}

const r3 = (v: number): number => Number(v.toPrecision(3));

function evidenceOf(flaws: readonly JointFlaws[]): Record<string, unknown> {
  return Object.fromEntries(
    flaws.map((f) => [
      `joint${f.joint + 1}`,
      measured(f)
        ? {
            playDeg: r3(f.playDeg),
            playStdDeg: r3(f.playStdDeg),
            coulombNm: f.coulombNm.map(r3),
            viscousNms: r3(f.viscousNms),
            breakawayNm: f.breakawayNm.map(r3),
            starts: f.starts,
          }
        : { skipped: f.skipped },
    ]),
  );
}

/** Runs each joint's sweep with `rig` (the file `raw`, as setup has corrected it) and writes the play measured. */
export async function playStep(rig: Rig, raw: Record<string, unknown>, run: RunPaths): Promise<PlayOutcome> {
  const name = 'play';
  let flaws: JointFlaws[];
  try {
    flaws = await measureFlaws(rig, run);
  } catch (e) {
    if (!(e instanceof RunError)) throw e;
    return {
      step: {
        name,
        status: 'fail',
        summary: `the play sweep stopped: ${e.message}`,
        evidence: {},
        fix: 'see the stop reason; the first reach is not run. Fix it and run setup again',
        corrected: false,
      },
      file: raw,
      changes: [],
      stopped: true,
    };
  }
  const withPlay = withFlaws(raw, rig, flaws);
  const encoders = (raw.encoders as Record<string, unknown>[] | undefined) ?? [];
  const next = (withPlay.encoders as Record<string, unknown>[]).map((e, j) => ({
    ...(encoders[j] ?? e),
    ...('backlashDeg' in e ? { backlashDeg: e.backlashDeg } : {}),
  }));
  const file = { ...raw, encoders: next };
  const changes: RigChange[] = next.flatMap((e, j) =>
    e.backlashDeg !== undefined && e.backlashDeg !== encoders[j]?.backlashDeg
      ? [{ field: `encoders[${j}].backlashDeg`, from: encoders[j]?.backlashDeg ?? null, to: e.backlashDeg, step: name }]
      : [],
  );
  const said = flaws.map((f) => {
    if (!measured(f)) return `joint ${f.joint + 1} not measured (${f.skipped})`;
    const fig = `joint ${f.joint + 1} ${f.playDeg.toFixed(2)} deg (+-${f.playStdDeg.toFixed(2)})`;
    if (playSignificant(f)) return fig;
    if (noPlayFound(f)) return `${fig}: no play found (not above ${PLAY_MIN_DEG} deg and ${PLAY_SIGMAS} standard deviations)`;
    return `${fig}: not written, not determined (needs +-${PLAY_STD_MAX_DEG} deg at most)`;
  });
  const all = flaws.every((f) => measured(f) && (playSignificant(f) || noPlayFound(f)));
  return {
    step: {
      name,
      status: all ? 'pass' : 'warn',
      summary: `the play between each motor-side encoder and its link: ${said.join(', ')}${changes.length ? ' (written: encoders[].backlashDeg)' : ''}`,
      evidence: evidenceOf(flaws),
      fix: all
        ? null
        : 'a light link shows its play faintly in the duty: write encoders[].backlashDeg by hand (1-2 deg is a fair start), or give the joint room about hanging (limits[].minDeg/maxDeg)',
      corrected: changes.length > 0,
    },
    file,
    changes,
    stopped: false,
  };
}
