/**
 * From identified base parameters back to a rig file: an arm (m, d, I per link) whose dynamics are
 * exactly the identified ones, the friction, and motor 2's rotor inertia; everything else in the
 * file is kept as written.
 *
 * The base parameters fix J1, J2, m2 d2 and m1 d1 + m2 L1, not the masses and centres of mass
 * themselves: any split with the same combinations has the same dynamics. The split written keeps
 * each link's nominal centre of mass d when that gives a physical link (m > 0, 0 <= I <= m
 * max(d, L - d)^2, the rig schema's rule), else the nearest d that does; joint 1's nominal rotor
 * inertia stays in `motors` and I1 takes the rest of J1. Motor 2's reflected rotor inertia is
 * separable, so it is written to `motors[1].rotorInertia` (the one field outside `arm` and `friction`
 * that changes). A mock rig's `plant` is made explicit (every arm key, and the motors' rotor
 * inertias and the rest of the motors) so that the simulated arm stays the same arm when the nominal one changes under it.
 */
import type { Rig } from '../config/load.js';
import { twoLinkArm } from '../config/load.js';
import { reflectedInertia } from '../model/motor.js';
import { asPair, type TwoLinkParams } from '../model/types.js';
import type { BaseParameters } from './regressor.js';

/** The identified parameters cannot be a physical arm (the message says why). */
export class RealizationError extends Error {
  override readonly name = 'RealizationError';
}

/** Relative margin inside the rig schema's inertia bound, so that rounding for the file keeps it valid. */
const MARGIN = 1e-5;

/** Splits a link's (m d, J about the joint) into m, d, I with d as near `dNominal` as keeps it physical. */
function splitLink(
  md: number,
  J: number,
  L: number,
  dNominal: number,
  ok: (m: number, d: number, I: number) => boolean,
): { m: number; d: number; I: number } | undefined {
  const at = (d: number): { m: number; d: number; I: number } => ({ m: md / d, d, I: J - md * d });
  const fits = (d: number): boolean => {
    if (!(d > 0 && d <= L)) return false;
    const s = at(d);
    return s.I >= 0 && s.I <= s.m * Math.max(d, L - d) ** 2 * (1 - MARGIN) && ok(s.m, s.d, s.I);
  };
  if (fits(dNominal)) return at(dNominal);
  // The nearest physical d: scan the link, then refine between the last miss and the first hit.
  let best: number | undefined;
  const N = 2000;
  for (let k = 1; k <= N; k++) {
    const d = (k / N) * L;
    if (fits(d) && (best === undefined || Math.abs(d - dNominal) < Math.abs(best - dNominal))) best = d;
  }
  if (best === undefined) return undefined;
  let hit = best;
  let miss = best + (dNominal > best ? L / N : -L / N);
  for (let i = 0; i < 50; i++) {
    const mid = (hit + miss) / 2;
    if (fits(mid)) hit = mid;
    else miss = mid;
  }
  return at(hit);
}

/**
 * An arm with the identified dynamics: J1 = I1 + m1 d1^2 + m2 L1^2 + rotor1, J2 = I2 + m2 d2^2,
 * m2 d2 = mL, m1 d1 + m2 L1 = mG; `rotor1` is joint 1's reflected rotor inertia kept in `motors`.
 */
export function realizeArm(nominal: TwoLinkParams, p: BaseParameters, rotor1: number): TwoLinkParams {
  const { L1, L2 } = nominal;
  const J1 = p.J1 - rotor1;
  if (!(p.mL > 0))
    throw new RealizationError(`m2 d2 = ${p.mL} kg m: link 2's centre of mass would be at the elbow; the data do not show link 2's weight`);
  if (!(p.mG > 0)) throw new RealizationError(`m1 d1 + m2 L1 = ${p.mG} kg m: the data do not show link 1's weight`);
  // Link 2 first; any m2 must leave link 1 a positive first moment (m1 d1 = mG - m2 L1 > 0) and room
  // for its inertia (I1 + m1 d1^2 = J1 - m2 L1^2 > 0).
  let link1: { m: number; d: number; I: number } | undefined;
  const link2 = splitLink(p.mL, p.J2, L2, nominal.d2, (m2) => {
    const md1 = p.mG - m2 * L1;
    const J1rest = J1 - m2 * L1 * L1;
    if (!(md1 > 0 && J1rest > 0)) return false;
    link1 = splitLink(md1, J1rest, L1, nominal.d1, () => true);
    return link1 !== undefined;
  });
  if (!link2) {
    throw new RealizationError(
      `no physical arm has J1 = ${p.J1.toPrecision(4)} kg m^2 (less rotor 1, ${rotor1.toPrecision(3)}), J2 = ${p.J2.toPrecision(4)} kg m^2, ` +
        `m2 d2 = ${p.mL.toPrecision(4)} kg m and m1 d1 + m2 L1 = ${p.mG.toPrecision(4)} kg m with L1 = ${L1} m, L2 = ${L2} m`,
    );
  }
  // Run link 1's split again for the chosen link 2 (the scan above left the last tried one).
  const m2 = link2.m;
  link1 = splitLink(p.mG - m2 * L1, J1 - m2 * L1 * L1, L1, nominal.d1, () => true)!;
  return { ...nominal, d1: link1.d, m1: link1.m, I1: Math.max(0, link1.I), d2: link2.d, m2, I2: Math.max(0, link2.I) };
}

/** Rounds to 6 significant digits for the file (well below the identification's uncertainty). */
function r6(v: number): number {
  return Number(v.toPrecision(6));
}

/**
 * The rig file (as raw JSON) with the identified arm, friction and motor 2 rotor inertia in place of
 * the nominal ones, everything else as in `raw` (the file as written). `rig` is `raw` resolved.
 */
export function identifiedRigFile(raw: Record<string, unknown>, rig: Rig, p: BaseParameters): Record<string, unknown> {
  const nominal = twoLinkArm(rig);
  const motors = asPair(rig.motors.slice(0, 2), `${rig.file}: motors`);
  const rotor1 = reflectedInertia(motors[0]);
  const arm = realizeArm(nominal, p, rotor1);
  const out: Record<string, unknown> = JSON.parse(JSON.stringify(raw)) as Record<string, unknown>;
  out.arm = Object.fromEntries((Object.entries(arm) as [string, number][]).map(([k, v]) => [k, r6(v)]));
  out.friction = { viscous: [r6(p.fv1), r6(p.fv2)], coulomb: [r6(p.fc1), r6(p.fc2)] };
  const gear2 = motors[1].gear;
  const rawMotors = (out.motors as Record<string, unknown>[] | undefined) ?? motors.map((m) => ({ ...m }));
  out.motors = rawMotors.map((m, i) => (i === 1 ? { ...m, rotorInertia: r6(p.Jm2 / (gear2 * gear2)) } : m));
  if (rig.plant && out.plant && typeof out.plant === 'object') {
    const plant = out.plant as Record<string, unknown>;
    plant.arm = { ...(rig.plant.arm as unknown as Record<string, number>) };
    // Every field, not only the rotor inertia: a partial plant motor takes the schema's defaults
    // (efficiency 1, rotorInertia 0) for the fields it omits, not the nominal motor's.
    // (what setup measured, motors[j].breakawayDuty, is the nominal motor's, not the plant's)
    plant.motors = rig.plant.motors.slice(0, 2).map(({ breakawayDuty: _measured, ...m }) => ({ ...m }));
  }
  return out;
}
