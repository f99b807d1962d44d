/**
 * Checks a trajectory against the rig before the arm moves: joint limits, speed limits, and the
 * torque the nominal model says it needs against the torque limit and what the motor can give at that
 * speed. A trajectory that fails is refused with the time and the joint.
 */
import type { Rig } from '../config/load.js';
import { armModel } from '../model/arm.js';
import { externalTorques } from '../model/dynamics.js';
import type { Trajectory } from '../model/trajectory.js';
import { reflectedInertia, torqueForDuty } from './motor.js';

export class FeasibilityError extends Error {
  override readonly name = 'FeasibilityError';
  constructor(
    message: string,
    /** [s] on the trajectory */
    readonly t: number,
    /** 0-based joint */
    readonly joint: number,
  ) {
    super(message);
  }
}

const DEG = 180 / Math.PI;

/** Throws a FeasibilityError at the first sample (1 kHz) that breaks a limit. */
export function checkFeasible(rig: Rig, traj: Trajectory, what = 'the trajectory'): void {
  const m = armModel(rig.arm);
  const n = rig.joints;
  const rotor = rig.motors.slice(0, n).map(reflectedInertia);
  const tau = new Array<number>(n).fill(0);
  const fric = new Array<number>(n).fill(0);
  const steps = Math.max(1, Math.ceil(traj.duration * 1000));
  for (let k = 0; k <= steps; k++) {
    const t = (k / steps) * traj.duration;
    const s = traj.sample(t);
    m.inverseDynamics(s.q, s.qd, s.qdd, tau);
    externalTorques(rig.arm, s.q, s.qd, { viscous: rig.friction.viscous, coulomb: rig.friction.coulomb, coulombVelocity: 0.01 }, fric);
    for (let i = 0; i < n; i++) {
      const lim = rig.limits[i]!;
      const at = `${what} at t = ${t.toFixed(3)} s, joint ${i + 1}`;
      const q = s.q[i]!;
      if (q < lim.min - 1e-9 || q > lim.max + 1e-9) {
        throw new FeasibilityError(`${at}: angle ${(q * DEG).toFixed(1)} deg is outside the joint limits ${(lim.min * DEG).toFixed(0)}..${(lim.max * DEG).toFixed(0)} deg`, t, i);
      }
      const v = s.qd[i]!;
      if (Math.abs(v) > lim.maxVel + 1e-9) {
        throw new FeasibilityError(`${at}: speed ${(v * DEG).toFixed(0)} deg/s is beyond the limit ${(lim.maxVel * DEG).toFixed(0)} deg/s (slow it down: a longer duration)`, t, i);
      }
      const need = tau[i]! + rotor[i]! * s.qdd[i]! - fric[i]!;
      const motorMax = need >= 0 ? torqueForDuty(rig.motors[i]!, rig.supplyV, rig.maxDuty, v) : -torqueForDuty(rig.motors[i]!, rig.supplyV, -rig.maxDuty, v);
      const avail = Math.min(lim.maxTorque, motorMax);
      if (Math.abs(need) > avail) {
        throw new FeasibilityError(
          `${at}: needs ${Math.abs(need).toFixed(2)} N m but only ${Math.max(0, avail).toFixed(2)} N m is available ` +
            `(torque limit ${lim.maxTorque} N m, motor at ${(v * DEG).toFixed(0)} deg/s): slow it down or lighten the load`,
          t,
          i,
        );
      }
    }
  }
}
