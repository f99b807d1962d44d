/**
 * johnny-five and its Firmata IO, loaded as the CommonJS packages they are (unmodified), with types
 * for the part twolink uses. Loading is lazy: nothing pulls johnny-five in until the Firmata path runs.
 */
import type { EventEmitter } from 'node:events';
import { createRequire } from 'node:module';
import type { ShieldConfig } from '../protocol/firmata-wiring.js';

/** firmata.js's Firmata instance (johnny-five's `board.io`), the members twolink touches. */
export interface FirmataIO extends EventEmitter {
  isReady: boolean;
  versionReceived: boolean;
  version: { major?: number; minor?: number };
  firmware: { name?: string; version?: { major: number; minor: number } };
  pins: { supportedModes: number[]; mode?: number; value?: number; state?: number; analogChannel?: number; report?: number }[];
  analogPins: number[];
  MODES: Record<string, number>;
  RESOLUTION: { ADC: number | null; PWM: number | null; DAC: number | null };
  transport: unknown;
  pending: number;
  queryPinState(pin: number, callback: () => void): void;
  reportVersion(callback: () => void): void;
  queryFirmware(callback: () => void): void;
  sysexCommand(message: number[]): FirmataIO;
  sysexResponse(command: number, handler: (this: FirmataIO, data: number[]) => void): FirmataIO;
  clearSysexResponse(command: number): void;
  pinMode(pin: number, mode: number): void;
  analogWrite(pin: number, value: number): void;
  digitalWrite(pin: number, value: number): void;
  reportAnalogPin(pin: number, value: 0 | 1): void;
  constructor: { SYSEX_RESPONSE: Record<number, unknown> };
}

/** johnny-five's Board. */
export interface FiveBoard extends EventEmitter {
  io: FirmataIO;
  isReady: boolean;
  isConnected: boolean;
  port: unknown;
  timer: NodeJS.Timeout | null;
  register: unknown[];
}

/** johnny-five's Motor. */
export interface FiveMotor extends EventEmitter {
  pins: { pwm: number; dir?: number; cdir?: number; brake?: number; enable?: number };
  direction: { value: number; name?: string };
  invertPWM: boolean;
  threshold: number;
  speed(options?: number | { speed: number }): number | FiveMotor;
  forward(speed: number): FiveMotor;
  reverse(speed: number): FiveMotor;
  stop(): FiveMotor;
  enable(): void;
  disable(): void;
  readonly isOn: boolean;
}

/** johnny-five's Sensor (analog). */
export interface FiveSensor extends EventEmitter {
  readonly raw: number | null;
  readonly value: number;
  pin: number | string;
  disable(): FiveSensor;
}

export interface BoardOptions {
  port: object;
  repl: false;
  debug: false;
  sigint: false;
  /** How long after connect `ready` may take before johnny-five reports an error [ms]. */
  timeout: number;
  id?: string;
}

export interface JohnnyFive {
  Board: new (options: BoardOptions) => FiveBoard;
  Motor: (new (options: { board: FiveBoard; pins: Record<string, number>; threshold: number; invertPWM?: boolean }) => FiveMotor) & {
    SHIELD_CONFIGS: Record<string, Record<string, ShieldConfig>>;
  };
  Sensor: new (options: { board: FiveBoard; pin: number | string; freq: number; threshold?: number }) => FiveSensor;
}

let cached: JohnnyFive | undefined;

/** johnny-five, loaded on first use. */
export function johnnyFive(): JohnnyFive {
  if (!cached) cached = createRequire(import.meta.url)('johnny-five') as JohnnyFive;
  return cached;
}
