/**
 * The nominal DC motor model of the host: joint torque <-> PWM duty, with back-EMF, gear and supply.
 * Quasi-static (inductance neglected): tau = eta N kt (duty Vs - ke N qd) / R.
 */
import type { MotorParams } from '../config/rig.js';

/** Duty (-1..1) that produces joint torque `tau` [N m] at joint speed `qd` [rad/s]. */
export function dutyForTorque(m: MotorParams, supplyV: number, tau: number, qd: number): number {
  const volts = (tau * m.R) / (m.efficiency * m.gear * m.kt) + m.ke * m.gear * qd;
  return volts / supplyV;
}

/** Joint torque [N m] that duty (-1..1) produces at joint speed `qd` [rad/s]. */
export function torqueForDuty(m: MotorParams, supplyV: number, duty: number, qd: number): number {
  return (m.efficiency * m.gear * m.kt * (duty * supplyV - m.ke * m.gear * qd)) / m.R;
}

/** Rotor inertia reflected to the joint, N^2 J [kg m^2]. */
export function reflectedInertia(m: MotorParams): number {
  return m.gear * m.gear * m.rotorInertia;
}
