/** The options and identity types of the emulated Firmata board (src/mock/firmata-board.ts). */
import type { BoardLayout, FirmwareFeatures } from '../protocol/firmata.js';
import type { LinkSensorSpec, MotorPins, SensorSpec } from '../protocol/firmata-wiring.js';
import type { Clock } from '../time/clock.js';
import type { Plant } from './plant.js';

/** How a joint's sensor is wired to the board (a rig file's `firmata.sensors[]` entry). */
export type FirmataSensorSpec = SensorSpec;

/** The firmware's name and version, as its QUERY_FIRMWARE reply gives them. */
export interface FirmwareId {
  name: string;
  major: number;
  minor: number;
}

/** ConfigurableFirmata 2.10 built from its example sketch. */
export const CONFIGURABLE_FIRMATA: FirmwareId = { name: 'ConfigurableFirmata.ino', major: 2, minor: 10 };

export interface FirmataBoardOptions {
  clock: Clock;
  plant: Plant;
  /** The baud rate the firmware runs at (Firmata.begin). */
  baudRate: number;
  /** The pin set. @default BOARDS.uno */
  layout?: BoardLayout;
  /** How each joint's H-bridge is wired (index = joint). */
  motors: readonly MotorPins[];
  /** How each joint's sensor is wired (index = joint). */
  sensors: readonly FirmataSensorSpec[];
  /**
   * Per joint, a potentiometer on the joint after the gearbox (`firmata.linkSensors[]`): its channel
   * reads the plant's true link angle, through the 10-bit ADC with `adcNoiseLsb` of noise. @default none
   */
  linkSensors?: readonly (LinkSensorSpec | null | undefined)[];
  /** Delay between a command's arrival and its effect on the motors [s]. @default 0 */
  latency?: number;
  /** Features compiled in. @default { encoder: true, watchdog: false } */
  features?: FirmwareFeatures;
  /** Timer0's millis() fraction at power-on (0..124): where in its ~42 ms pattern the 2 ms step falls. @default 0 */
  millisFract0?: number;
  /** @default CONFIGURABLE_FIRMATA */
  firmware?: FirmwareId;
  /** Firmata protocol version in REPORT_VERSION. @default [2, 6] */
  protocol?: [number, number];
  /** UART buffers [bytes]. @default 64 each (an AVR's HardwareSerial) */
  txBuffer?: number;
  rxBuffer?: number;
  /** Period of the boot messages until the host talks [s]; 0 = once, as real firmware. @default 0.25 */
  versionRepeatS?: number;
  /** Time from reset to the first message [s] (bootloader + blinkVersion: ~4 s on a real Uno). @default 0 */
  bootDelayS?: number;
  /** ADC noise [LSB, standard deviation]. @default 0.5 */
  adcNoiseLsb?: number;
  /** Noise source for the line faults (uniform 0..1). */
  random: () => number;
}

/** A refused SET_PIN_MODE, for tests. */
export interface RefusedMode {
  pin: number;
  mode: number;
  /** Board time [s]. */
  at: number;
}
