/**
 * What `twolink tune --json` prints (the last stdout line): the motion time, per joint Ku and Tu,
 * the target, what the design predicted and what the validation measured, and the scheduled gains;
 * and where the tuned rig file went. Figures rounded to 4 significant digits; a margin never
 * measured (no crossing in the chirp's band) is null, and measured.gainMarginAtLeastDb then bounds it.
 */
import type { TuneOutcome } from './driver.js';

export interface MarginsJson {
  crossoverHz: number | null;
  phaseMarginDeg: number | null;
  gainMarginDb: number | null;
}

export interface TuneJson {
  motionSeconds: number;
  joints: {
    joint: number;
    ku: number | null;
    tu: number | null;
    targetCrossoverHz: number;
    predicted: MarginsJson | null;
    /** gainMarginAtLeastDb: the gain margin, or its lower bound when the phase does not cross -180 deg in the chirp's coherent band (gainMarginDb null then). */
    measured: (MarginsJson & { gainMarginAtLeastDb: number | null; overshootPct: number; settlingS: number }) | null;
    gains: { elbowDeg: number; kp: number; ki: number; kd: number }[];
  }[];
  out: string | null;
}

const r4 = (v: number): number | null => (Number.isFinite(v) ? Number(v.toPrecision(4)) : null);

export function tuneJson(o: TuneOutcome, out: string | null): TuneJson {
  return {
    motionSeconds: r4(o.motionS) ?? 0,
    joints: o.joints.map((t) => {
      const p = t.design?.predicted;
      const m = t.measured;
      return {
        joint: t.joint + 1,
        ku: t.relay ? r4(t.relay.ku) : null,
        tu: t.relay ? r4(t.relay.tu) : null,
        targetCrossoverHz: r4(o.bandwidthHz) ?? 0,
        predicted: p ? { crossoverHz: r4(p.crossoverHz), phaseMarginDeg: r4(p.phaseMarginDeg), gainMarginDb: r4(p.gainMarginDb) } : null,
        measured: m
          ? {
              crossoverHz: r4(m.crossoverHz),
              phaseMarginDeg: r4(m.phaseMarginDeg),
              gainMarginDb: r4(m.gainMarginDb),
              gainMarginAtLeastDb: r4(m.gainMarginAtLeastDb),
              overshootPct: r4(m.overshootPct) ?? 0,
              settlingS: r4(m.settlingS) ?? 0,
            }
          : null,
        gains: (t.design?.gains ?? []).map((g) => ({ elbowDeg: g.elbowDeg, kp: r4(g.kp)!, ki: r4(g.ki)!, kd: r4(g.kd)! })),
      };
    }),
    out,
  };
}
