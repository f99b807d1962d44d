/**
 * A motor's H-bridge in a rig file (`motors[j].driver`, `plant.motors[j].driver`), validated with zod
 * and resolved to its figures (src/model/driver.ts). Kept out of rig.ts, which every issue edits.
 */
import { z } from 'zod';
import { DRIVER_PRESETS, DRIVER_PRESET_NAMES, type DriverParams } from '../model/driver.js';

const num = z.number().refine(Number.isFinite, 'must be a finite number');
const nonneg = num.refine((v) => v >= 0, 'must be >= 0');
const pos = num.refine((v) => v > 0, 'must be > 0');
const atMost = (s: z.ZodType<number>, max: number, unit: string): z.ZodType<number> =>
  s.refine((v) => !(v > max), `must be at most ${max} ${unit}`);
const within = (s: z.ZodType<number>, min: number, max: number, unit: string): z.ZodType<number> =>
  atMost(
    s.refine((v) => !(v < min), `must be at least ${min} ${unit}`),
    max,
    unit,
  );

/**
 * The H-bridge between the board and a motor (src/model/driver.ts): a preset's name (`l298n`,
 * `tb6612`, ... with its datasheet figures) or its numbers, optionally on top of a preset
 * (`{ "preset": "l298n", "pwmHz": 980 }`); numbers left out are the preset's (or the ideal bridge's).
 * Resolved here to the numbers, with the preset's name kept, so the file as validated writes back.
 */
const driverNumbersSchema = z.strictObject({
  /** The preset the numbers start from. @default ideal */
  preset: z.enum(DRIVER_PRESET_NAMES).optional(),
  /** Voltage lost across the bridge's two conducting switches, independent of the current [V]. */
  dropV: atMost(nonneg, 20, 'V').optional(),
  /** Resistance of the bridge's two conducting switches (and wiring) in series with the motor [ohm]. */
  seriesOhm: atMost(nonneg, 100, 'ohm').optional(),
  /** Time lost per PWM period (switching delays, dead time, current build-up) [us]. */
  deadTimeUs: atMost(nonneg, 10_000, 'us').optional(),
  /** PWM frequency [Hz]. */
  pwmHz: within(pos, 1, 1e6, 'Hz').optional(),
  /** PWM resolution [bits] (0: continuous). */
  pwmBits: z.number().int().min(0).max(16).optional(),
  /** Highest supply voltage the bridge takes [V] (datasheet). */
  maxSupplyV: atMost(pos, 1000, 'V').optional(),
  /** Continuous output current the bridge is rated for [A] (datasheet). */
  maxCurrentA: atMost(pos, 1000, 'A').optional(),
});
export const driverSchema = z.union([z.enum(DRIVER_PRESET_NAMES), driverNumbersSchema]).transform((d): DriverParams => {
  if (typeof d === 'string') return { ...DRIVER_PRESETS[d] };
  const { preset: _ideal, ...ideal } = DRIVER_PRESETS.ideal;
  // Numbers without a preset start from the ideal bridge's, and are no preset's.
  const base = d.preset ? DRIVER_PRESETS[d.preset] : ideal;
  return { ...base, ...Object.fromEntries(Object.entries(d).filter(([, v]) => v !== undefined)) };
});
