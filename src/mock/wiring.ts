/**
 * The mock rig wired wrong on purpose (`--wiring` on `setup`, `run` and `rig`): a comma list of the
 * mistakes people make when they wire a real arm, so that the simulated arm behaves as that real arm
 * would and `twolink setup` (and the loop's wiring monitor) can be tested against it.
 *
 *   swap-motors        board output 1 drives joint 2's motor and output 2 joint 1's
 *   swap-encoders      board encoder input 1 reads joint 2's encoder and input 2 joint 1's
 *   reverse-motor=J    joint J's motor leads are swapped: a positive duty turns it clockwise
 *   reverse-encoder=J  joint J's encoder A and B are swapped: it counts backwards
 *   cpr=J:N            the board's firmware reports N counts per revolution on input J, but the
 *                      encoder there really gives what the rig file says
 *   offset=J:DEG       the board was powered on with joint J DEG degrees away from the rig file's
 *                      zeroDeg: its counts are zero there, not at zeroDeg
 *
 * Joints and inputs are numbered from 1, as people count them. The text is validated with zod and
 * every error names the item at fault.
 */
import { z } from 'zod';
import { fromDecimal } from '../config/decimal.js';
import type { EncoderParams } from '../config/load.js';
import type { PlantPart } from '../config/parts.js';
import { Plant, type PlantWiring } from './plant.js';

/** One wiring mistake (joints 0-based). */
export type WiringMistake =
  | { kind: 'swap-motors' }
  | { kind: 'swap-encoders' }
  | { kind: 'reverse-motor'; joint: number }
  | { kind: 'reverse-encoder'; joint: number }
  | { kind: 'cpr'; joint: number; counts: number }
  | { kind: 'offset'; joint: number; deg: number };

/** A parsed `--wiring` list: plain data (it crosses into the loop's worker with the target). */
export interface MockWiring {
  /** The text as given, for messages and recordings. */
  spec: string;
  mistakes: WiringMistake[];
}

/** A `--wiring` list that cannot be parsed; the message names the item. */
export class WiringError extends Error {
  override readonly name = 'WiringError';
}

export const WIRING_KINDS = {
  'swap-motors': 'board output 1 drives joint 2 and output 2 joint 1',
  'swap-encoders': "encoder input 1 reads joint 2's encoder and input 2 joint 1's",
  'reverse-motor=J': "joint J's motor leads are swapped (a positive duty turns it clockwise)",
  'reverse-encoder=J': "joint J's encoder counts backwards (A and B swapped)",
  'cpr=J:N': "the board reports N counts per revolution on input J (the encoder really has the rig file's)",
  'offset=J:DEG': 'the board was powered on with joint J DEG degrees away from zeroDeg',
} as const;

const ITEM = /^([a-z-]+)(?:=(.*))?$/;

/** Each mistake's value, as zod reads it, for an arm of `joints` joints. */
function wiringSchemas(joints: 1 | 2) {
  const jointNo = z.preprocess(
    fromDecimal,
    z
      .number({ error: `must be a joint number, 1..${joints}` })
      .int('must be a whole joint number')
      .min(1, `must be a joint number, 1..${joints}`)
      .max(joints, `must be a joint number, 1..${joints} (the arm has ${joints} joint${joints > 1 ? 's' : ''})`),
  );
  return {
    'swap-motors': z.undefined({ error: 'takes no value' }),
    'swap-encoders': z.undefined({ error: 'takes no value' }),
    'reverse-motor': jointNo,
    'reverse-encoder': jointNo,
    cpr: z.tuple([
      jointNo,
      z.preprocess(
        fromDecimal,
        z
          .number({ error: 'counts must be a whole number' })
          .int('counts must be a whole number')
          .min(1, 'counts must be at least 1')
          .max(100_000_000, 'counts must be at most 1e8'),
      ),
    ]),
    offset: z.tuple([
      jointNo,
      z.preprocess(
        fromDecimal,
        z
          .number({ error: 'degrees must be a finite number' })
          .refine(Number.isFinite, 'degrees must be a finite number')
          .refine((d) => Math.abs(d) <= 180, 'degrees must be within -180..180'),
      ),
    ]),
  } as const;
}

/** Parses the `--wiring` text for an arm of `joints` joints; an empty text is the correct wiring. */
export function parseWiring(spec: string, joints: 1 | 2): MockWiring {
  const schemas = wiringSchemas(joints);
  const mistakes: WiringMistake[] = [];
  const seen = new Set<string>();
  const items = spec.split(',').map((s) => s.trim());
  if (spec.trim() === '') return { spec: '', mistakes };
  items.forEach((item, k) => {
    const where = `--wiring "${spec}": item ${k + 1} "${item}"`;
    const m = ITEM.exec(item);
    const kind = m?.[1] as keyof typeof schemas | undefined;
    if (!m || !kind || !(kind in schemas)) {
      throw new WiringError(`${where}: unknown mistake; write a comma list of ${Object.keys(WIRING_KINDS).join(', ')}`);
    }
    const value = m[2];
    const pair = kind === 'cpr' || kind === 'offset';
    const input = value === undefined ? undefined : pair ? value.split(':') : value.trim() === '' ? Number.NaN : value;
    if ((kind === 'reverse-motor' || kind === 'reverse-encoder') && value === undefined) {
      throw new WiringError(`${where}: write ${kind}=J, e.g. ${kind}=1`);
    }
    if (pair && (!Array.isArray(input) || input.length !== 2 || input.some((s) => s.trim() === ''))) {
      throw new WiringError(`${where}: write ${kind === 'cpr' ? 'cpr=J:N, e.g. cpr=1:2048' : 'offset=J:DEG, e.g. offset=1:30'}`);
    }
    const r = schemas[kind].safeParse(input);
    if (!r.success) {
      const is = r.error.issues[0]!;
      const what = pair ? (is.path[0] === 0 ? 'J' : kind === 'cpr' ? 'N' : 'DEG') : kind.startsWith('swap') ? '' : 'J';
      const got = pair ? (input as string[])[Number(is.path[0] ?? 0)] : value;
      throw new WiringError(`${where}: ${what ? `${what} ` : ''}${is.message}${got !== undefined ? ` (got "${got}")` : ''}`);
    }
    if ((kind === 'swap-motors' || kind === 'swap-encoders') && joints < 2)
      throw new WiringError(`${where}: a one-link arm has nothing to swap`);
    const v = r.data;
    let mk: WiringMistake;
    if (kind === 'swap-motors' || kind === 'swap-encoders') mk = { kind };
    else if (kind === 'reverse-motor' || kind === 'reverse-encoder') mk = { kind, joint: (v as number) - 1 };
    else if (kind === 'cpr') mk = { kind, joint: (v as [number, number])[0] - 1, counts: (v as [number, number])[1] };
    else mk = { kind, joint: (v as [number, number])[0] - 1, deg: (v as [number, number])[1] };
    const key = 'joint' in mk ? `${mk.kind}=${mk.joint}` : mk.kind;
    if (seen.has(key)) throw new WiringError(`${where}: said twice (each mistake once per joint)`);
    seen.add(key);
    mistakes.push(mk);
  });
  return { spec: spec.trim(), mistakes };
}

/** The mistakes in words, one per item, for logs. */
export function describeWiring(w: MockWiring): string[] {
  return w.mistakes.map((m) => {
    switch (m.kind) {
      case 'swap-motors':
        return 'motors swapped (output 1 drives joint 2)';
      case 'swap-encoders':
        return 'encoders swapped (input 1 reads joint 2)';
      case 'reverse-motor':
        return `motor ${m.joint + 1} reversed`;
      case 'reverse-encoder':
        return `encoder ${m.joint + 1} reversed`;
      case 'cpr':
        return `board reports ${m.counts} counts per revolution on input ${m.joint + 1}`;
      case 'offset':
        return `powered on with joint ${m.joint + 1} ${m.deg} deg from zeroDeg`;
    }
  });
}

/**
 * What the plant and the board need to behave as the miswired arm. The truth comes from the plant
 * (`startRad`, where the arm is at power-on: the counts are zero there, or `offset` away) and the
 * mistakes, never from the rig file's encoder signs and zeros, which `twolink setup` rewrites: a
 * corrected rig file still drives the same miswired arm. `encoders` are the rig file's; the board's
 * firmware believes their counts per revolution per input (it reports them), except where `cpr` says.
 */
export function plantWiring(
  w: MockWiring,
  encoders: readonly EncoderParams[],
  startRad: readonly number[],
): { boardEncoders: EncoderParams[]; wiring: PlantWiring } {
  const n = encoders.length;
  const ids = [...Array(n).keys()];
  const wiring: PlantWiring = {
    motorChannel: ids.slice(),
    motorSign: ids.map(() => 1),
    encoderJoint: ids.slice(),
    encoderSign: ids.map(() => 1),
    countsPerRev: encoders.map((e) => e.countsPerRev),
    zero: ids.map((j) => startRad[j] ?? 0),
  };
  const boardEncoders = encoders.map((e) => ({ ...e }));
  for (const m of w.mistakes) {
    switch (m.kind) {
      case 'swap-motors':
        wiring.motorChannel.reverse();
        break;
      case 'swap-encoders':
        wiring.encoderJoint.reverse();
        break;
      case 'reverse-motor':
        wiring.motorSign[m.joint] = -1;
        break;
      case 'reverse-encoder':
        wiring.encoderSign[m.joint] = -1;
        break;
      case 'cpr':
        boardEncoders[m.joint]!.countsPerRev = m.counts;
        break;
      case 'offset':
        wiring.zero[m.joint]! += (m.deg * Math.PI) / 180;
        break;
    }
  }
  return { boardEncoders, wiring };
}

/**
 * The plant of a rig file's `plant` section, wired as `wiring` says (an empty list: wired right, the
 * counts zero at the power-on pose); without `wiring`, as the rig file's encoders say.
 */
export function createPlant(rig: PlantPart, t0: number, wiring?: MockWiring): Plant {
  if (!wiring) return new Plant(rig.plant, rig.encoders, t0);
  const w = plantWiring(wiring, rig.encoders, rig.plant.start);
  return new Plant(rig.plant, w.boardEncoders, t0, w.wiring);
}
