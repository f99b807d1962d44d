/**
 * The nominal geared DC motor behind an H-bridge: joint torque <-> PWM duty, with back-EMF, gear,
 * gearbox efficiency and supply. Quasi-static (the armature inductance is neglected: its time
 * constant, well under a millisecond, is shorter than a control period):
 *
 *   tau = eta N kt (duty Vs - ke N qd) / R        duty = (tau R / (eta N kt) + ke N qd) / Vs
 *
 * with the joint torque tau [N m], the joint speed qd [rad/s], the duty -1..1, the supply Vs [V].
 * The rotor's inertia appears at the joint as N^2 J_rotor.
 *
 * A motor with a `driver` (driver.ts) sees the H-bridge's losses: its fixed drop, its resistance in
 * series with the winding, and the duty lost per PWM period; without one (or with the ideal bridge)
 * the equations above hold exactly.
 */
import { driverCommandFor, driverEffectiveDuty, type DriverParams } from './driver.js';

/** One motor as the rig file describes it (the rig file's `motors[i]`, validated there). */
export interface MotorParams {
  /** Torque constant [N m/A] at the motor shaft. */
  kt: number;
  /** Back-EMF constant [V s/rad] at the motor shaft. */
  ke: number;
  /** Armature resistance [ohm]. */
  R: number;
  /** Gear ratio N (motor turns per joint turn). */
  gear: number;
  /** Gearbox efficiency eta, 0..1. */
  efficiency: number;
  /** Rotor inertia at the motor shaft [kg m^2]. */
  rotorInertia: number;
  /** The H-bridge that drives it; none: an ideal bridge. */
  driver?: DriverParams | undefined;
  /** The duty that started the joint from rest, [ccw, cw] (0..1 each), as `twolink setup` measured it; none: not measured. */
  breakawayDuty?: readonly [number, number] | undefined;
}

/** Duty (-1..1, unclamped) that produces joint torque `tau` [N m] at joint speed `qd` [rad/s]; `supplyV` [V]. */
export function dutyForTorque(m: MotorParams, supplyV: number, tau: number, qd: number): number {
  const d = m.driver;
  if (d) {
    // The effective duty for the current tau / (eta N kt) through R + the bridge's resistance, over
    // the supply less its drop; then the duty the bridge loses per period on top.
    const volts = (tau * (m.R + d.seriesOhm)) / (m.efficiency * m.gear * m.kt) + m.ke * m.gear * qd;
    return driverCommandFor(d, volts / (supplyV - d.dropV));
  }
  const volts = (tau * m.R) / (m.efficiency * m.gear * m.kt) + m.ke * m.gear * qd;
  return volts / supplyV;
}

/** Joint torque [N m] that `duty` (-1..1) produces at joint speed `qd` [rad/s]; `supplyV` [V]. */
export function torqueForDuty(m: MotorParams, supplyV: number, duty: number, qd: number): number {
  const d = m.driver;
  // (a supply at or below the bridge's drop drives nothing: the back-EMF alone brakes through the bridge)
  if (d)
    return (
      (m.efficiency * m.gear * m.kt * (driverEffectiveDuty(d, duty) * Math.max(0, supplyV - d.dropV) - m.ke * m.gear * qd)) /
      (m.R + d.seriesOhm)
    );
  return (m.efficiency * m.gear * m.kt * (duty * supplyV - m.ke * m.gear * qd)) / m.R;
}

/** Rotor inertia reflected to the joint, N^2 J_rotor [kg m^2]. */
export function reflectedInertia(m: MotorParams): number {
  return m.gear * m.gear * m.rotorInertia;
}
