/**
 * The rig file's `wiring` section: how the arm's motors and encoders are connected to the board when
 * that is not "output i drives joint i, input i reads joint i", as `twolink setup` finds it. The host
 * maps joints to the board's outputs and inputs (src/transport/joints.ts, for the line protocol and
 * Firmata alike: there, output and input i are `firmata.motors[i]` and `firmata.sensors[i]`), so an arm wired
 * differently from the wiring table of docs/first-arm.md runs as it is; rewiring it and deleting the section is better.
 *
 * Encoder direction, resolution and zero stay in `encoders[]` (`sign`, `countsPerRev`, `zeroDeg`).
 */
import { z } from 'zod';
import { RigFileError } from './rig-error.js';

const channel = z
  .number()
  .int()
  .min(1, 'must be 1 or 2 (outputs and inputs are numbered from 1)')
  .max(2, 'must be 1 or 2 (the board has two)');
const perJoint = <T extends z.ZodType>(s: T) => z.array(s).min(1).max(2);

export const wiringSchema = z
  .strictObject({
    /** Per joint: the board's motor output (1-based) that drives it. @default [1, 2] */
    motorOutput: perJoint(channel).optional(),
    /** Per joint: -1 when a positive duty turns the joint clockwise (its motor leads are reversed). @default [1, 1] */
    motorSign: perJoint(z.union([z.literal(1), z.literal(-1)])).optional(),
    /** Per joint: the board's encoder input (1-based) that reads it. @default [1, 2] */
    encoderInput: perJoint(channel).optional(),
    /**
     * Per joint: the counts per revolution the board's firmware reports for that joint's input, when
     * it differs from `encoders[].countsPerRev` (the firmware's config.h is wrong: reflash it and
     * delete this).
     */
    boardCountsPerRev: perJoint(z.number().int().positive()).optional(),
  })
  .superRefine((w, ctx) => {
    for (const k of ['motorOutput', 'encoderInput'] as const) {
      const a = w[k];
      if (a && new Set(a).size !== a.length)
        ctx.addIssue({ code: 'custom', path: [k], message: 'two joints on one channel: each joint needs its own' });
    }
  });

export type WiringSection = z.infer<typeof wiringSchema>;

/** The `wiring` section resolved: 0-based channels, one entry per joint. */
export interface HostWiring {
  /** Per joint: the board output (0-based) that drives it. */
  motorOutput: number[];
  /** Per joint: +1, or -1 when its motor is reversed. */
  motorSign: number[];
  /** Per joint: the board input (0-based) that reads it. */
  encoderInput: number[];
  /** Per joint: the counts per revolution the board reports for its input (= encoders[].countsPerRev unless the firmware is wrong). */
  boardCountsPerRev: number[];
}

/** Resolves the section for an arm of `joints` joints with encoders of `countsPerRev`; the errors name the file and the field. */
export function resolveWiring(w: WiringSection, joints: number, countsPerRev: readonly number[], file: string): HostWiring {
  const ids = [...Array(joints).keys()];
  for (const k of ['motorOutput', 'motorSign', 'encoderInput', 'boardCountsPerRev'] as const) {
    const a = w[k];
    if (a && a.length !== joints)
      throw new RigFileError(file, `wiring.${k}: needs ${joints} entries, one per joint (got ${a.length})`, `wiring.${k}`);
  }
  for (const k of ['motorOutput', 'encoderInput'] as const) {
    const bad = w[k]?.findIndex((c) => c > joints) ?? -1;
    if (bad >= 0)
      throw new RigFileError(
        file,
        `wiring.${k}[${bad}]: channel ${w[k]![bad]} does not exist on a ${joints}-joint board`,
        `wiring.${k}[${bad}]`,
      );
  }
  return {
    motorOutput: w.motorOutput?.map((c) => c - 1) ?? ids,
    motorSign: w.motorSign?.slice() ?? ids.map(() => 1),
    encoderInput: w.encoderInput?.map((c) => c - 1) ?? ids,
    boardCountsPerRev: w.boardCountsPerRev?.slice() ?? countsPerRev.slice(0, joints),
  };
}

/** True when the wiring is the table's of docs/first-arm.md: nothing to map. */
export function isPlainWiring(w: HostWiring, countsPerRev: readonly number[]): boolean {
  return (
    w.motorOutput.every((c, j) => c === j) &&
    w.motorSign.every((s) => s === 1) &&
    w.encoderInput.every((c, j) => c === j) &&
    w.boardCountsPerRev.every((c, j) => c === countsPerRev[j])
  );
}
