/**
 * Checks a trajectory against the rig before the arm moves: joint limits, speed limits, and the
 * torque the nominal model says it needs against the torque limit and what the motor can give at that
 * speed. A trajectory that fails is refused with the time and the joint.
 */
import type { FeasibilityPart } from '../config/parts.js';
import { computeInverseDynamics, createActuatedArmData, createActuatedArmModel, motorTorqueLimit, type ActuatedArmModel } from '../model/actuated.js';
import type { Trajectory } from '../model/trajectory.js';

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

/**
 * Throws a FeasibilityError at the first sample (1 kHz) that breaks a limit. The torque needed is the
 * inverse dynamics of `model` (default: the rig's nominal actuated arm, rotors and friction included).
 */
export function checkFeasible(rig: FeasibilityPart, traj: Trajectory, what = 'the trajectory', model: ActuatedArmModel = createActuatedArmModel(rig)): void {
  const n = rig.joints;
  const data = createActuatedArmData(model);
  const steps = Math.max(1, Math.ceil(traj.duration * 1000));
  for (let k = 0; k <= steps; k++) {
    const t = (k / steps) * traj.duration;
    const s = traj.sample(t);
    const tau = computeInverseDynamics(model, data, s.q, s.qd, s.qdd);
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
      const need = tau[i]!;
      const motorMax = motorTorqueLimit(model, i, rig.maxDuty, v, need);
      const avail = Math.min(lim.maxTorque, motorMax);
      if (Math.abs(need) > avail) {
        throw new FeasibilityError(torqueMessage(rig, i, at, need, avail, v), t, i);
      }
    }
  }
}

/** A torque for a message: two decimals, or two significant digits below 0.01 N m (never "0.00"). */
function nm(x: number): string {
  const a = Math.abs(x);
  return a === 0 || a >= 0.01 ? a.toFixed(2) : a.toPrecision(2);
}

/**
 * Why joint `i` cannot have the torque `need` [N m] at speed `v` [rad/s]: the torque limit or the motor
 * (`avail` [N m] is the smaller); when the motor gives nothing in that direction (its back-EMF at that
 * speed is above the supply), the joint is faster than the motor's no-load speed, and that is said.
 */
function torqueMessage(rig: FeasibilityPart, i: number, at: string, need: number, avail: number, v: number): string {
  const lim = rig.limits[i]!;
  const dir = need >= 0 ? 'positive' : 'negative';
  if (avail <= 0) {
    const m = rig.motors[i]!;
    const noLoad = (rig.maxDuty * rig.supplyV) / (m.ke * m.gear);
    return (
      `${at}: needs ${nm(need)} N m (${dir}) at ${(v * DEG).toFixed(0)} deg/s, where the motor gives no ${dir} torque at all: ` +
      `the joint moves faster than the motor's no-load speed ${(noLoad * DEG).toFixed(0)} deg/s (maxDuty Vs / (ke N)): slow it down`
    );
  }
  const by = avail < lim.maxTorque ? `the motor at ${(v * DEG).toFixed(0)} deg/s` : `the torque limit limits[${i}].maxTorqueNm`;
  return `${at}: needs ${nm(need)} N m but only ${nm(avail)} N m is available (${by}; torque limit ${lim.maxTorque} N m): slow it down or lighten the load`;
}
