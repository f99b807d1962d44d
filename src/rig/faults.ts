/**
 * Scheduled faults for the mock rig (`--fault KIND[=VALUE][@T]`, repeatable): how tests and users make
 * the simulated arm and link misbehave at a given time, to see what twolink does.
 *
 * Every value is checked here, with its unit and its range, so that what runs later (the mock rig,
 * the loop's thread) only ever sees valid values: `payload=-5`, `drop=NaN` or `busy=1e9` (a loop
 * thread blocked for 30 years) are refused with one line naming the argument.
 */
import { z } from 'zod';

export const FAULT_KINDS = {
  payload: 'a mass [kg] at the endpoint, 0..20 kg, e.g. payload=0.2@1.5',
  stall: 'joint N jams, e.g. stall=2@1',
  slip: 'encoder of joint N slips by C counts (|C| <= 1000000), e.g. slip=1:200@1',
  reverse: 'encoder of joint N counts backwards, e.g. reverse=1@1',
  dead: 'motor of joint N gives no torque, e.g. dead=1@1',
  sag: 'supply drops to a fraction of nominal, 0..1, e.g. sag=0.6@1',
  drop: 'probability that a byte is lost, 0..1, e.g. drop=0.01@0',
  corrupt: 'probability that a byte gets a flipped bit, 0..1, e.g. corrupt=0.01@0',
  latency: 'extra board latency [ms], 0..1000 ms, e.g. latency=5@1',
  silent: 'the board stops answering (hung firmware, a cable cut on the TX line), e.g. silent@1',
  unplug: 'the USB cable is pulled: the port vanishes, e.g. unplug@1',
  push: 'an external torque [N m] on joint N (someone pushes the arm; |T| <= 100 N m), e.g. push=1:2@1',
  reset: 'the board resets, e.g. reset@1',
  garbage: 'the board sends N bytes of noise (1..10000000), e.g. garbage=5000@1',
  longline: 'the board sends a line of N bytes without LF (1..10000000), e.g. longline=1000000@1',
  busy: 'the loop thread is blocked for S seconds (a busy machine), 0..30 s, e.g. busy=1@1',
  throw: 'an exception inside the loop thread, e.g. throw@1',
} as const;

export type FaultKind = keyof typeof FAULT_KINDS;

export interface FaultSpec {
  kind: FaultKind;
  /** The value after '=', as text (its meaning depends on the kind; checked by parseFault). */
  value?: string;
  /** Loop time at which it happens [s]. */
  at: number;
}

/** A --fault argument that cannot be used; the message starts with `--fault "TEXT":`. */
export class FaultSpecError extends Error {
  override readonly name = 'FaultSpecError';
}

/** Latest time a fault can be scheduled at [s] (a day). */
export const MAX_FAULT_TIME_S = 86_400;

/** A number with its unit and range. */
interface Quantity {
  what: string;
  unit: string;
  min: number;
  max: number;
  /** The lower bound itself is excluded. */
  above?: boolean;
  integer?: boolean;
}

/** What the value of each kind is: nothing, one quantity, a joint, or a joint and a quantity. */
type ValueSpec = { none: true } | { quantity: Quantity } | { joint: true; then?: Quantity };

const VALUES: Record<FaultKind, ValueSpec> = {
  payload: { quantity: { what: 'the payload', unit: 'kg', min: 0, max: 20 } },
  stall: { joint: true },
  slip: { joint: true, then: { what: 'the slip', unit: 'counts', min: -1_000_000, max: 1_000_000, integer: true } },
  reverse: { joint: true },
  dead: { joint: true },
  sag: { quantity: { what: 'the supply fraction', unit: '', min: 0, max: 1 } },
  drop: { quantity: { what: 'the probability', unit: '', min: 0, max: 1 } },
  corrupt: { quantity: { what: 'the probability', unit: '', min: 0, max: 1 } },
  latency: { quantity: { what: 'the latency', unit: 'ms', min: 0, max: 1000 } },
  silent: { none: true },
  unplug: { none: true },
  push: { joint: true, then: { what: 'the torque', unit: 'N m', min: -100, max: 100 } },
  reset: { none: true },
  garbage: { quantity: { what: 'the byte count', unit: 'bytes', min: 1, max: 10_000_000, integer: true } },
  longline: { quantity: { what: 'the line length', unit: 'bytes', min: 1, max: 10_000_000, integer: true } },
  busy: { quantity: { what: 'the time', unit: 's', min: 0, max: 30, above: true } },
  throw: { none: true },
};

const kindSchema = z.enum(Object.keys(FAULT_KINDS) as [FaultKind, ...FaultKind[]]);
/** A decimal number as text (no hex, no "Infinity", no empty string). */
const numberText = z
  .string()
  .regex(/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/)
  .transform(Number)
  .pipe(z.number().refine(Number.isFinite));

/** Checks one quantity; returns why it is bad, or undefined. */
function checkQuantity(text: string, q: Quantity): string | undefined {
  const r = numberText.safeParse(text);
  const unit = q.unit ? ` ${q.unit}` : '';
  if (!r.success) return `${q.what} "${text}" is not a number${unit ? ` of${unit}` : ''}`;
  const v = r.data;
  if (q.integer && !Number.isInteger(v)) return `${q.what} ${v}${unit} must be a whole number`;
  if (v > q.max || v < q.min || (q.above && v === q.min)) {
    return `${q.what} ${v}${unit} is out of range: it must be ${q.above ? `above ${q.min}` : `at least ${q.min}`} and at most ${q.max}${unit}`;
  }
  return undefined;
}

/** Checks the value of a kind for an arm with `joints` joints; returns why it is bad, or undefined. */
function checkValue(kind: FaultKind, value: string | undefined, joints: number): string | undefined {
  const spec = VALUES[kind];
  if ('none' in spec) return value === undefined ? undefined : `${kind} takes no value (write ${kind}@SECONDS)`;
  if (value === undefined) return undefined; // the kind's default (see FAULT_KINDS)
  if ('quantity' in spec) return checkQuantity(value, spec.quantity);
  const [j, rest, ...extra] = value.split(':');
  if (extra.length) return `write ${kind}=JOINT${spec.then ? `:VALUE (${spec.then.what} [${spec.then.unit}])` : ''}`;
  if (!/^\d+$/.test(j!) || Number(j) < 1 || Number(j) > joints) return `the joint "${j}" must be ${joints === 1 ? '1' : `1..${joints}`} (this arm has ${joints} joint${joints > 1 ? 's' : ''})`;
  if (rest === undefined) return undefined;
  if (!spec.then) return `${kind} takes only a joint number (write ${kind}=N)`;
  return checkQuantity(rest, spec.then);
}

/**
 * Parses `KIND[=VALUE][@T]` for an arm with `joints` joints; throws a FaultSpecError that names the
 * argument, the value, its unit and its range (or the list of kinds).
 */
export function parseFault(text: string, joints = 2): FaultSpec {
  const m = /^([a-z]+)(?:=([^@]*))?(?:@([^@]*))?$/.exec(text);
  if (!m) throw new FaultSpecError(`--fault "${text}": write KIND[=VALUE][@SECONDS], e.g. payload=0.2@1.5`);
  const k = kindSchema.safeParse(m[1]);
  if (!k.success) throw new FaultSpecError(`--fault "${text}": unknown kind "${m[1]}"; kinds: ${Object.keys(FAULT_KINDS).join(', ')}`);
  let at = 0;
  if (m[3] !== undefined) {
    const bad = checkQuantity(m[3], { what: 'the time after @', unit: 's', min: 0, max: MAX_FAULT_TIME_S });
    if (bad) throw new FaultSpecError(`--fault "${text}": ${bad}`);
    at = Number(m[3]);
  }
  if (m[2] === '') throw new FaultSpecError(`--fault "${text}": an empty value after "=" (${FAULT_KINDS[k.data]})`);
  const bad = checkValue(k.data, m[2], joints);
  if (bad) throw new FaultSpecError(`--fault "${text}": ${bad}`);
  return { kind: k.data, ...(m[2] !== undefined ? { value: m[2] } : {}), at };
}
