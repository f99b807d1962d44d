/**
 * The values of injections (`--inject NAME=VALUE`): how each is written and checked, with its unit and
 * range, so that what runs later only ever sees valid values (injections.ts, the table, uses them).
 */
import { z } from 'zod';
import { DECIMAL } from '../config/decimal.js';
import { handPath } from './hand.js';
import { DRIVER_PRESET_NAMES, type DriverPresetName } from '../model/driver.js';

/** A value, or why the text is not one. */
export type Checked<T> = { ok: true; value: T } | { ok: false; why: string };

/** How an injection's value is written and checked. */
export interface ValueParser<T> {
  /** The form of the value for the help: `=KG (0..20 kg, default 0.2)`; empty when it takes none. */
  readonly form: string;
  /** Checks the text after '=' (undefined: none given) for an arm with `joints` joints. */
  check(text: string | undefined, joints: number, name: string): Checked<T>;
}

/** A number with its unit and range. */
export interface Quantity {
  what: string;
  unit: string;
  min: number;
  max: number;
  /** The lower bound itself is excluded. */
  above?: boolean;
  integer?: boolean;
}

/** A decimal number as text (no hex, no "Infinity", no empty string). */
const numberText = z.string().regex(DECIMAL).transform(Number).pipe(z.number().refine(Number.isFinite));

/** Checks one quantity. */
export function checkQuantity(text: string, q: Quantity): Checked<number> {
  const r = numberText.safeParse(text);
  const unit = q.unit ? ` ${q.unit}` : '';
  if (!r.success) return { ok: false, why: `${q.what} "${text}" is not a number${unit ? ` of${unit}` : ''}` };
  const v = r.data;
  if (q.integer && !Number.isInteger(v)) return { ok: false, why: `${q.what} ${v}${unit} must be a whole number` };
  if (v > q.max || v < q.min || (q.above && v === q.min)) {
    return {
      ok: false,
      why: `${q.what} ${v}${unit} is out of range: it must be ${q.above ? `above ${q.min}` : `at least ${q.min}`} and at most ${q.max}${unit}`,
    };
  }
  return { ok: true, value: v };
}

const range = (q: Quantity): string => `${q.above ? `>${q.min}` : q.min}..${q.max}${q.unit ? ` ${q.unit}` : ''}`;

/** No value. */
export const none: ValueParser<undefined> = {
  form: '',
  check: (text, _joints, name) =>
    text === undefined ? { ok: true, value: undefined } : { ok: false, why: `${name} takes no value (write ${name}@SECONDS)` },
};

/** One quantity, `def` when none is given. */
export function quantity(label: string, q: Quantity, def: number): ValueParser<number> {
  return {
    form: `=${label} (${range(q)}, default ${def})`,
    check: (text) => (text === undefined ? { ok: true, value: def } : checkQuantity(text, q)),
  };
}

/** Checks a joint number (1-based as written); gives the index from 0. */
export function checkJoint(text: string, joints: number): Checked<number> {
  if (!/^\d+$/.test(text) || Number(text) < 1 || Number(text) > joints) {
    return {
      ok: false,
      why: `the joint "${text}" must be ${joints === 1 ? '1' : `1..${joints}`} (this arm has ${joints} joint${joints > 1 ? 's' : ''})`,
    };
  }
  return { ok: true, value: Number(text) - 1 };
}

/** A joint (index from 0; joint 1 when none is given). */
export const joint: ValueParser<number> = {
  form: '=JOINT (default 1)',
  check: (text, joints, name) => {
    if (text === undefined) return { ok: true, value: 0 };
    const [j, rest, ...extra] = text.split(':');
    if (extra.length) return { ok: false, why: `write ${name}=JOINT` };
    if (rest !== undefined) return { ok: false, why: `${name} takes only a joint number (write ${name}=N)` };
    return checkJoint(j!, joints);
  },
};

/** A joint and a quantity, `JOINT:VALUE` (joint 1 and `def` when not given). */
export function jointAnd(label: string, q: Quantity, def: number): ValueParser<{ joint: number; amount: number }> {
  return {
    form: `=JOINT:${label} (${range(q)}, default 1:${def})`,
    check: (text, joints, name) => {
      if (text === undefined) return { ok: true, value: { joint: 0, amount: def } };
      const [j, rest, ...extra] = text.split(':');
      if (extra.length) return { ok: false, why: `write ${name}=JOINT:VALUE (${q.what} [${q.unit}])` };
      const jc = checkJoint(j!, joints);
      if (!jc.ok) return jc;
      if (rest === undefined) return { ok: true, value: { joint: jc.value, amount: def } };
      const a = checkQuantity(rest, q);
      return a.ok ? { ok: true, value: { joint: jc.value, amount: a.value } } : a;
    },
  };
}

/** A scripted hand's path: circle, line or a .json file of points (hand.ts), checked here for its form and at apply for the arm's reach. */
export const handArg: ValueParser<string> = {
  form: '=circle|line|FILE.json (default circle)',
  check: (text, joints) => {
    if (joints !== 2) return { ok: false, why: 'the scripted hand needs a two-link arm' };
    const name = text ?? 'circle';
    try {
      handPath(name, { L1: Number.MAX_VALUE / 4, L2: 0 });
      return { ok: true, value: name };
    } catch (e) {
      return { ok: false, why: e instanceof Error ? e.message : String(e) };
    }
  },
};

export const probability = (def: number): ValueParser<number> => quantity('P', { what: 'the probability', unit: '', min: 0, max: 1 }, def);
export const byteCount = (what: string, def: number): ValueParser<number> =>
  quantity('BYTES', { what, unit: 'bytes', min: 1, max: 10_000_000, integer: true }, def);

/** A force at the endpoint, `FX,FY` [N] (each -100..100 N). */
export const endpointForce: ValueParser<[number, number]> = {
  form: '=FX,FY (-100..100 N each, default 2,0)',
  check: (text, joints, name) => {
    if (joints < 2) return { ok: false, why: `${name} pushes the endpoint of a two-link arm (this arm has ${joints} joint)` };
    if (text === undefined) return { ok: true, value: [2, 0] };
    const parts = text.split(',');
    if (parts.length !== 2) return { ok: false, why: `write ${name}=FX,FY (the force's x and y components [N]), e.g. ${name}=2,0@1+2` };
    const q = (what: string): Quantity => ({ what, unit: 'N', min: -100, max: 100 });
    const fx = checkQuantity(parts[0]!, q('the force x'));
    if (!fx.ok) return fx;
    const fy = checkQuantity(parts[1]!, q('the force y'));
    if (!fy.ok) return fy;
    return { ok: true, value: [fx.value, fy.value] };
  },
};

/** A joint and an H-bridge preset, `JOINT:PRESET` (joint 1 and the L298N when not given). */
export const bridgePreset: ValueParser<{ joint: number; preset: DriverPresetName }> = {
  form: `=JOINT:PRESET (${DRIVER_PRESET_NAMES.join('|')}, default 1:l298n)`,
  check: (text, joints, name) => {
    if (text === undefined) return { ok: true, value: { joint: 0, preset: 'l298n' } };
    const [j, rest, ...extra] = text.split(':');
    if (extra.length || rest === undefined) return { ok: false, why: `write ${name}=JOINT:PRESET (${DRIVER_PRESET_NAMES.join(', ')})` };
    const jc = checkJoint(j!, joints);
    if (!jc.ok) return jc;
    if (!(DRIVER_PRESET_NAMES as readonly string[]).includes(rest))
      return { ok: false, why: `unknown H-bridge "${rest}"; presets: ${DRIVER_PRESET_NAMES.join(', ')}` };
    return { ok: true, value: { joint: jc.value, preset: rest as DriverPresetName } };
  },
};
