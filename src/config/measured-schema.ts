/**
 * What `twolink setup` measures of a gearmotor's flaws (issue 33.5), in a rig file's `motors[j]`:
 * the duty that starts the joint from rest, per direction. Kept out of rig.ts, which every issue edits.
 */
import { z } from 'zod';

const duty = z
  .number()
  .refine(Number.isFinite, 'must be a finite number')
  .refine((v) => v >= 0 && v <= 1, 'must be a duty fraction, 0..1');

/**
 * The smallest duty (fraction of the supply) that started the joint from rest near hanging, turning
 * counter-clockwise (a positive joint torque) and clockwise: [ccw, cw]. The driver's dead band and the
 * gearmotor's breakaway friction together, as `twolink setup` measured them with a slow ramp.
 */
export const breakawayDutySchema = z.tuple([duty, duty]);
