// The --fault parser as a unit: the help's examples are what the parser accepts, every kind is either
// an effect on the mock rig or the host's own, ranges are inclusive at both ends (busy's lower bound
// excluded), and the forms it refuses. The messages of refused values: tests/bad-input-faults.test.ts.
import { describe, expect, it } from 'vitest';
import { FAULT_KINDS, FaultSpecError, MAX_FAULT_TIME_S, parseFault, type FaultKind } from '../src/rig/faults.js';
import { FAULT_EFFECTS, isHostFault } from '../src/rig/fault-effects.js';

const kinds = Object.keys(FAULT_KINDS) as FaultKind[];

describe('parseFault', () => {
  it.each(kinds)('the example in the help of %s parses to that kind with its value and time', (kind) => {
    const example = /e\.g\. (\S+)$/.exec(FAULT_KINDS[kind])?.[1];
    expect(example, FAULT_KINDS[kind]).toBeTypeOf('string');
    const m = /^[a-z]+(?:=([^@]*))?@(.*)$/.exec(example!)!;
    expect(parseFault(example!)).toEqual({ kind, ...(m[1] !== undefined ? { value: m[1] } : {}), at: Number(m[2]) });
  });

  it.each(kinds)('%s is either applied to the mock rig or done by the host, not both', (kind) => {
    expect(FAULT_EFFECTS[kind] !== undefined).toBe(!isHostFault(kind));
  });

  it('range ends: inclusive, except busy above 0; the time after @ from 0 to a day', () => {
    expect(parseFault('payload=0').value).toBe('0');
    expect(parseFault('payload=20').value).toBe('20');
    expect(() => parseFault('payload=20.001')).toThrow(/out of range/);
    expect(parseFault('slip=2:-1000000').value).toBe('2:-1000000');
    expect(() => parseFault('slip=2:1000001')).toThrow(/out of range/);
    expect(parseFault('busy=30').value).toBe('30');
    expect(parseFault('busy=1e-3').value).toBe('1e-3');
    expect(() => parseFault('busy=0')).toThrow(/above 0/);
    expect(parseFault(`reset@${MAX_FAULT_TIME_S}`).at).toBe(MAX_FAULT_TIME_S);
    expect(parseFault('reset@0').at).toBe(0);
    expect(parseFault('reset@.5').at).toBe(0.5);
  });

  it('no value: the kind default is left to the rig (no value key); no time: at 0', () => {
    expect(parseFault('payload')).toEqual({ kind: 'payload', at: 0 });
    expect(parseFault('stall')).toEqual({ kind: 'stall', at: 0 });
  });

  it.each([
    ['', /write KIND\[=VALUE\]\[@SECONDS\]/],
    ['payload=1@2@3', /write KIND\[=VALUE\]\[@SECONDS\]/],
    ['Payload=1', /write KIND\[=VALUE\]\[@SECONDS\]/],
    ['payload=Infinity', /"Infinity" is not a number/],
    ['payload=1@Infinity', /the time after @ "Infinity" is not a number of s/],
    ['slip=1:2:3', /write slip=JOINT:VALUE \(the slip \[counts\]\)/],
    ['stall=0', /the joint "0" must be 1\.\.2/],
    ['push=1:', /the torque "" is not a number of N m/],
  ])('%j is refused with a FaultSpecError naming the argument', (text, re) => {
    let err: unknown;
    try {
      parseFault(text);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(FaultSpecError);
    expect((err as Error).message.startsWith(`--fault "${text}": `)).toBe(true);
    expect((err as Error).message).toMatch(re);
  });
});
