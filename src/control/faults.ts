/**
 * Scheduled faults for the mock rig (`--fault KIND[=VALUE][@T]`, repeatable): how tests and users make
 * the simulated arm and link misbehave at a given time, to see what twolink does.
 */
import { z } from 'zod';

export const FAULT_KINDS = {
  payload: 'a mass [kg] at the endpoint, e.g. payload=0.2@1.5',
  stall: 'joint N jams, e.g. stall=2@1',
  slip: 'encoder of joint N slips by C counts, e.g. slip=1:200@1',
  reverse: 'encoder of joint N counts backwards, e.g. reverse=1@1',
  dead: 'motor of joint N gives no torque, e.g. dead=1@1',
  sag: 'supply drops to a fraction of nominal, e.g. sag=0.6@1',
  drop: 'probability that a byte is lost, e.g. drop=0.01@0',
  corrupt: 'probability that a byte gets a flipped bit, e.g. corrupt=0.01@0',
  latency: 'extra board latency [ms], e.g. latency=5@1',
  silent: 'the board stops answering (hung firmware, a cable cut on the TX line), e.g. silent@1',
  unplug: 'the USB cable is pulled: the port vanishes, e.g. unplug@1',
  push: 'an external torque [N m] on joint N (someone pushes the arm), e.g. push=1:2@1',
  reset: 'the board resets, e.g. reset@1',
  garbage: 'the board sends N bytes of noise, e.g. garbage=5000@1',
  longline: 'the board sends a line of N bytes without LF, e.g. longline=1000000@1',
  busy: 'the loop thread is blocked for S seconds (a busy machine), e.g. busy=1@1',
  throw: 'an exception inside the loop thread, e.g. throw@1',
} as const;

export type FaultKind = keyof typeof FAULT_KINDS;

export interface FaultSpec {
  kind: FaultKind;
  /** The value after '=', as text (its meaning depends on the kind). */
  value?: string;
  /** Loop time at which it happens [s]. */
  at: number;
}

const kindSchema = z.enum(Object.keys(FAULT_KINDS) as [FaultKind, ...FaultKind[]]);

/** Parses `KIND[=VALUE][@T]`; throws with the argument and the list of kinds. */
export function parseFault(text: string): FaultSpec {
  const m = /^([a-z]+)(?:=([^@]+))?(?:@([0-9.]+))?$/.exec(text);
  if (!m) throw new Error(`--fault "${text}": write KIND[=VALUE][@SECONDS], e.g. payload=0.2@1.5`);
  const k = kindSchema.safeParse(m[1]);
  if (!k.success) throw new Error(`--fault "${text}": unknown kind "${m[1]}"; kinds: ${Object.keys(FAULT_KINDS).join(', ')}`);
  const at = m[3] === undefined ? 0 : Number(m[3]);
  if (!Number.isFinite(at)) throw new Error(`--fault "${text}": the time after @ is not a number`);
  return { kind: k.data, ...(m[2] !== undefined ? { value: m[2] } : {}), at };
}
