/**
 * The H-bridge between the board's PWM pin and a motor, averaged over a PWM period (quasi-static, as
 * the motor model in motor.ts). Per period the bridge loses `deadTimeUs` of on-time (switching delays,
 * dead time, the current's build-up), quantizes the duty to `pwmBits`, and while on it puts the supply
 * less its switches' drop on the motor: a fixed part `dropV` and a resistive part `seriesOhm` that adds
 * to the winding's resistance. With the effective duty e = sign(d) max(0, q(|d|) - t_dead f_pwm):
 *
 *   I = (e (Vs - dropV) - ke N qd) / (R + seriesOhm)        tau = eta N kt I
 *
 * An ideal bridge (all zeros, continuous PWM) gives motor.ts's equations exactly, bit for bit.
 * Pure numbers: no I/O.
 */

/** The bridge's figures (a rig file's `motors[i].driver`, resolved). */
export interface DriverParams {
  /** The preset the figures came from, when they did. */
  preset?: DriverPresetName;
  /** Voltage lost across the two conducting switches, independent of the current [V]. */
  dropV: number;
  /** Resistance of the two conducting switches in series with the motor [ohm]. */
  seriesOhm: number;
  /** On-time lost per PWM period [us]. */
  deadTimeUs: number;
  /** PWM frequency [Hz]. */
  pwmHz: number;
  /** PWM resolution [bits]; 0: continuous. */
  pwmBits: number;
  /** Highest supply voltage the bridge takes [V] (datasheet; the rig's check refuses a higher supply). */
  maxSupplyV?: number;
  /** Continuous output current it is rated for [A] (datasheet; reported, not enforced). */
  maxCurrentA?: number;
}

/** The presets' names, as rig files write them. */
export const DRIVER_PRESET_NAMES = ['ideal', 'l298n', 'tb6612', 'drv8871', 'bts7960', 'vnh5019'] as const;
export type DriverPresetName = (typeof DRIVER_PRESET_NAMES)[number];

/** The board's PWM on an Arduino Uno: `analogWrite` is 8 bit at 490 Hz (980 Hz on pins 5 and 6). */
const ARDUINO_PWM = { pwmHz: 490, pwmBits: 8 } as const;

/**
 * The bridges hobby arms use, with their datasheets' typical figures (tests/driver.test.ts pins them).
 * The PWM is the Arduino's `analogWrite` (8 bit, 490 Hz) for all: override `pwmHz`/`pwmBits` for
 * another board. `maxSupplyV` is the datasheet's highest operating (or absolute) supply, `maxCurrentA`
 * its continuous (or peak, where that is all it gives) current. The MOSFET bridges' dead time is not
 * a datasheet table figure: their switching delays are well under a microsecond to a few, under
 * 0.1 % of a 490 Hz period; the value here is that order.
 */
export const DRIVER_PRESETS: Record<DriverPresetName, DriverParams> = {
  /** No losses, continuous duty: the motor model as it was before drivers (the default). */
  ideal: { preset: 'ideal', dropV: 0, seriesOhm: 0, deadTimeUs: 0, pwmHz: ARDUINO_PWM.pwmHz, pwmBits: 0 },
  /**
   * ST L298 ("Dual full-bridge driver", Jan 2000, electrical characteristics): bipolar switches,
   * source saturation VCEsat(H) typ 1.35 V at 1 A, 2 V at 2 A; sink VCEsat(L) typ 1.2 V at 1 A,
   * 1.7 V at 2 A: 2.55 V at 1 A, 3.7 V at 2 A in all, i.e. 1.4 V + 1.15 ohm. Supply VS up to 46 V
   * (operative); 2 A DC per channel (absolute maximum ratings). Source turn-on delay typ 2 us.
   */
  l298n: { preset: 'l298n', dropV: 1.4, seriesOhm: 1.15, deadTimeUs: 2, ...ARDUINO_PWM, maxSupplyV: 46, maxCurrentA: 2 },
  /**
   * Toshiba TB6612FNG (datasheet 2014-10-01, features): LD-MOS, output ON resistance 0.5 ohm
   * (upper + lower, typ, VM >= 5 V); VM up to 15 V; 1.2 A average (3.2 A peak) per channel.
   */
  tb6612: { preset: 'tb6612', dropV: 0, seriesOhm: 0.5, deadTimeUs: 0.3, ...ARDUINO_PWM, maxSupplyV: 15, maxCurrentA: 1.2 },
  /** TI DRV8871 (SLVSCY9B, features): RDS(on) 565 mOhm typ (high + low side); 6.5-45 V; 3.6 A peak. */
  drv8871: { preset: 'drv8871', dropV: 0, seriesOhm: 0.565, deadTimeUs: 0.5, ...ARDUINO_PWM, maxSupplyV: 45, maxCurrentA: 3.6 },
  /**
   * Infineon BTS7960B (Rev. 1.1, 2004-12-07, 4.2.1 and 4.2.4): ON resistance typ 7 mOhm high side +
   * 9 mOhm low side at 25 C (13.5 V, 9 A); over-voltage lock-out from 27.5 V (4.3.4); current
   * limitation typ 43 A low side at 25 C (4.3.8). Two of them make the IBT-2 H-bridge boards.
   */
  bts7960: { preset: 'bts7960', dropV: 0, seriesOhm: 0.016, deadTimeUs: 1, ...ARDUINO_PWM, maxSupplyV: 27.5, maxCurrentA: 43 },
  /**
   * ST VNH5019A-E (Doc ID 15701): RDS(on) 18 mOhm per leg in its summary, two legs in the current's
   * path (how that splits between the switches was not checked); maximum bridge supply 41 V and 30 A
   * continuous output (absolute maximum ratings, table 4).
   */
  vnh5019: { preset: 'vnh5019', dropV: 0, seriesOhm: 0.036, deadTimeUs: 1, ...ARDUINO_PWM, maxSupplyV: 41, maxCurrentA: 30 },
};

/** The duty lost per PWM period to the bridge's dead time, t_dead f_pwm (0..1). */
export function driverLostDuty(d: DriverParams): number {
  return Math.min(1, d.deadTimeUs * 1e-6 * d.pwmHz);
}

/**
 * The duty the bridge really applies for a commanded `duty` (-1..1): quantized to its PWM resolution,
 * less the on-time lost per period, never past zero: sign(d) max(0, q(|d|) - t_dead f_pwm).
 */
export function driverEffectiveDuty(d: DriverParams, duty: number): number {
  const a = Math.abs(duty);
  const steps = d.pwmBits > 0 ? 2 ** d.pwmBits - 1 : 0;
  const q = steps > 0 ? Math.round(a * steps) / steps : a;
  const e = q - driverLostDuty(d);
  return e > 0 ? (duty < 0 ? -e : e) : 0;
}

/**
 * The commanded duty (unclamped) that makes the bridge apply `effective` (its inverse without the
 * quantization): sign(e) (|e| + t_dead f_pwm), 0 for 0. It jumps by the lost duty at zero; the bridge
 * then applies exactly `effective`, so the torque stays continuous.
 */
export function driverCommandFor(d: DriverParams, effective: number): number {
  if (effective === 0) return 0;
  const lost = driverLostDuty(d);
  return effective < 0 ? effective - lost : effective + lost;
}

/** The bridges' names as people write them. */
const LABELS: Record<DriverPresetName, string> = {
  ideal: 'ideal H-bridge',
  l298n: 'L298N',
  tb6612: 'TB6612FNG',
  drv8871: 'DRV8871',
  bts7960: 'BTS7960',
  vnh5019: 'VNH5019',
};

/** A bridge for a message: its preset's name, or its figures (`H-bridge (1.4 V + 1.15 ohm, 2 us per period at 490 Hz)`). */
export function driverLabel(d: DriverParams): string {
  const figures = `${round(d.dropV)} V + ${round(d.seriesOhm)} ohm, ${round(d.deadTimeUs)} us per period at ${round(d.pwmHz)} Hz`;
  return d.preset && d.preset !== 'ideal'
    ? `${LABELS[d.preset]} H-bridge (${figures})`
    : d.preset === 'ideal'
      ? LABELS.ideal
      : `H-bridge (${figures})`;
}

function round(x: number): string {
  return String(Number(x.toPrecision(3)));
}
