// Issue 12: every --inject value is checked with its unit and range at parse time, so that what runs
// later (the mock rig, the loop's thread) never sees `payload=-5`, `drop=NaN` or `busy=1e9`.
import { describe, expect, it } from 'vitest';
import { InjectionError, parseInjection } from '../src/mock/injections.js';

describe('--inject values', () => {
  it.each([
    ['payload=abc', /--inject "payload=abc": the payload "abc" is not a number of kg/],
    ['payload=-5', /the payload -5 kg is out of range: it must be at least 0 and at most 20 kg/],
    ['latency=-50', /the latency -50 ms is out of range: it must be at least 0 and at most 1000 ms/],
    ['drop=NaN', /the probability "NaN" is not a number/],
    ['drop=1.5', /the probability 1\.5 is out of range: it must be at least 0 and at most 1$/],
    ['corrupt=0x10', /the probability "0x10" is not a number/],
    ['busy=1e9', /the time 1000000000 s is out of range: it must be above 0 and at most 30 s/],
    ['busy=0', /the time 0 s is out of range: it must be above 0/],
    ['stall=3', /the joint "3" must be 1\.\.2 \(this arm has 2 joints\)/],
    ['slip=1:2.5', /the slip 2\.5 counts must be a whole number/],
    ['push=2:1e6', /the torque 1000000 N m is out of range/],
    ['stall=1:3', /stall takes only a joint number/],
    ['silent=3', /silent takes no value \(write silent@SECONDS\)/],
    ['garbage=1e12', /the byte count 1000000000000 bytes is out of range/],
    ['payload=', /an empty value after "=" \(payload takes KG \(0\.\.20 kg, default 0\.2\)\)/],
    ['payload=0.2@-1', /the time after @ -1 s is out of range/],
    ['payload=0.2@1e9', /the time after @ 1000000000 s is out of range: it must be at least 0 and at most 86400 s/],
    ['payload=0.2@x', /the time after @ "x" is not a number of s/],
    ['wobble@1', /unknown injection "wobble"; injections: payload, stall/],
  ])('%s is refused', (text, re) => {
    expect(() => parseInjection(text)).toThrow(InjectionError);
    expect(() => parseInjection(text)).toThrow(re);
  });

  it('valid values parse (the value kept as written: it is checked again where it is applied)', () => {
    expect(parseInjection('payload=0.25@2.2')).toEqual({ name: 'payload', value: '0.25', at: 2.2 });
    expect(parseInjection('slip=1:-200@1')).toEqual({ name: 'slip', value: '1:-200', at: 1 });
    expect(parseInjection('push=2:-3')).toEqual({ name: 'push', value: '2:-3', at: 0 });
    expect(parseInjection('busy=8@1')).toEqual({ name: 'busy', value: '8', at: 1 });
    expect(parseInjection('silent@1')).toEqual({ name: 'silent', at: 1 });
    expect(parseInjection('payload@1')).toEqual({ name: 'payload', at: 1 });
  });

  it('the joint is checked against the arm: a one-link arm has only joint 1', () => {
    expect(parseInjection('stall=1', 1)).toEqual({ name: 'stall', value: '1', at: 0 });
    expect(() => parseInjection('stall=2', 1)).toThrow(/the joint "2" must be 1 \(this arm has 1 joint\)/);
  });
});
