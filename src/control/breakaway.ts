/**
 * The breakaway torque per direction the tracking law kicks a joint at rest with (tracking-law.ts
 * breakawayKick), from what the rig knows of it (issue 33 items 2-3):
 *
 * - `friction.breakawayNm` above the Coulomb level (the nominal model's stiction): that torque, both ways;
 * - else the duty `twolink setup` measured to start the joint from rest, `motors[j].breakawayDuty`
 *   [ccw, cw]: the torque the motor gives at rest for that duty through its declared bridge
 *   (model/motor.ts torqueForDuty). The bridge's lost duty (its dead time) is in the measured duty and
 *   taken out here, and the torque-to-duty map (dutyForTorque) puts it back: the kick's duty at rest
 *   is then the measured one, per direction, whatever the bridge;
 * - else none (0): the law is as it was without stiction.
 */
import { motorTorque, type ActuatedArmModel } from '../model/actuated.js';

/** Per joint, the breakaway torque [N m] for a positive (ccw) and a negative (cw) push, both >= 0. */
export type BreakawayNm = readonly [ccw: number, cw: number];

/** Where the numbers came from, per joint (for the run's words). */
export type BreakawaySource = 'friction' | 'measured-duty' | 'none';

export function breakawayTorques(model: ActuatedArmModel): { nm: BreakawayNm[]; source: BreakawaySource[] } {
  const nm: BreakawayNm[] = [];
  const source: BreakawaySource[] = [];
  for (let i = 0; i < model.joints; i++) {
    const duty = model.motors[i]?.breakawayDuty;
    if (model.stiction[i]! > 0) {
      const s = model.coulomb[i]! + model.stiction[i]!;
      nm.push([s, s]);
      source.push('friction');
    } else if (duty && duty[0] > 0 && duty[1] > 0) {
      nm.push([Math.max(0, motorTorque(model, i, duty[0], 0)), Math.max(0, -motorTorque(model, i, -duty[1], 0))]);
      source.push('measured-duty');
    } else {
      nm.push([0, 0]);
      source.push('none');
    }
  }
  return { nm, source };
}
