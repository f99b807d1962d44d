/**
 * A backlash inverse: where the rig declares play between a joint's encoder and its link (a gearbox's
 * backlash `b` with the encoder on the motor side: `encoders[j].backlashDeg`), the motor must lead the
 * link by half the play, on the side the gear pushes, for the link to be where the plan says. The gear
 * mesh pushes the link with the torque the link needs, tau_g = M(q) qdd + V(q, qd) + G(q) of the links
 * alone (no rotors: they sit on the motor side); the motor side then sits at theta = q + (b/2) sign(tau_g)
 * (plus the mesh's wind-up tau_g / k, unknown and left out: about 0.1 deg at 2 N m on a typical
 * hobby gearbox). So the motor's reference is the plan shifted by
 *
 *   s = (b/2) tanh(tau_g / tau_band)
 *
 * at the plan, with a smooth sign whose band `tau_band` (BAND_OF_LIMIT of the joint's torque limit)
 * lets the motor cross the play over a short stretch of the plan rather than in one jump where the
 * torque changes sign; the shift's rate joins the plan's velocity (the PID's derivative error).
 * The feedforward and the figures keep the plan: the encoder's error then shows the shift (the motor
 * leads), the link's the plan.
 */
import {
  computeInverseDynamics,
  createActuatedArmData,
  createRigidArmModel,
  type ActuatedArmData,
  type ActuatedArmModel,
} from '../model/actuated.js';
import type { ArmParams } from '../model/types.js';
import type { TrajectorySample } from '../model/trajectory.js';

/** The smooth sign's band as a fraction of each joint's torque limit. */
export const BAND_OF_LIMIT = 0.015;

export class BacklashInverse {
  /** The motor's reference less the plan [rad], per joint. */
  readonly shift: number[];
  /** Its rate [rad/s]. */
  readonly rate: number[];
  /** The link torque the gear transmits at the plan [N m] (the last update's). */
  readonly linkTorque: number[];
  private readonly model: ActuatedArmModel;
  private readonly data: ActuatedArmData;
  private started = false;

  constructor(
    arm: ArmParams,
    /** Per joint: half the play between the encoder and the link [rad] (0: none). */
    readonly half: readonly number[],
    /** Per joint: the smooth sign's band [N m]. */
    private readonly band: readonly number[],
  ) {
    this.model = createRigidArmModel(arm);
    this.data = createActuatedArmData(this.model);
    const z = (): number[] => new Array<number>(this.model.joints).fill(0);
    this.shift = z();
    this.rate = z();
    this.linkTorque = z();
  }

  /** The next update starts without a rate (a trajectory starts, the motors come back). */
  reset(): void {
    this.started = false;
  }

  /** The shift and its rate at the plan `d`, `dt` [s] after the last update. */
  update(d: Pick<TrajectorySample, 'q' | 'qd' | 'qdd'>, dt: number): void {
    computeInverseDynamics(this.model, this.data, d.q, d.qd, d.qdd, this.linkTorque);
    for (let i = 0; i < this.model.joints; i++) {
      const s = this.half[i]! > 0 ? this.half[i]! * Math.tanh(this.linkTorque[i]! / this.band[i]!) : 0;
      this.rate[i] = this.started && dt > 0 ? (s - this.shift[i]!) / dt : 0;
      this.shift[i] = s;
    }
    this.started = true;
  }
}

/**
 * The backlash inverse of a rig, when it declares play between a motor-side encoder and its link
 * (`encoders[j].backlashDeg`, `side` motor); undefined otherwise (a joint-side encoder sees the link).
 */
export function backlashInverseOf(
  rig: { arm: ArmParams; limits: readonly { maxTorque: number }[]; encoders?: readonly { side?: 'motor' | 'joint'; backlash?: number }[] },
  joints: number,
): BacklashInverse | undefined {
  const half = Array.from({ length: joints }, (_, j) => {
    const e = rig.encoders?.[j];
    return e && (e.side ?? 'motor') === 'motor' ? (e.backlash ?? 0) / 2 : 0;
  });
  if (!half.some((h) => h > 0)) return undefined;
  return new BacklashInverse(
    rig.arm,
    half,
    rig.limits.slice(0, joints).map((l) => BAND_OF_LIMIT * l.maxTorque),
  );
}
