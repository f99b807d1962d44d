// Issue 22 item 7: what replaced the casts in src/cli — the rig file kept as written is checked to be
// an object (not cast), and a caught value that is not an Error still has a message.
import { describe, expect, it } from 'vitest';
import { parseJsonObject } from '../src/config/load.js';
import { RigFileError } from '../src/config/rig.js';
import { errorMessage } from '../src/cli/args.js';

describe('parseJsonObject', () => {
  it('returns the fields of a top-level object', () => {
    expect(parseJsonObject('{"name": "arm", "arm": {"L1": 0.3}}', 'my-arm.json')).toEqual({ name: 'arm', arm: { L1: 0.3 } });
  });

  it.each([
    ['[1, 2]', 'an array'],
    ['null', 'null'],
    ['42', 'a number'],
    ['"arm"', 'a string'],
  ])('refuses %s at the top level, naming the file and what it got', (text, got) => {
    let err: unknown;
    try {
      parseJsonObject(text, 'my-arm.json');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(RigFileError);
    expect((err as RigFileError).message).toBe(`my-arm.json: (top level): must be a JSON object, got ${got}`);
  });

  it('keeps the line and column of invalid JSON', () => {
    expect(() => parseJsonObject('{\n  "a": ,\n}', 'my-arm.json')).toThrow(/^my-arm\.json: line 2, column \d+: invalid JSON/);
  });
});

describe('errorMessage', () => {
  it("is an Error's message, and anything else in words", () => {
    expect(errorMessage(new Error('no udevadm'))).toBe('no udevadm');
    expect(errorMessage('udevadm missing')).toBe('udevadm missing');
    expect(errorMessage(undefined)).toBe('undefined');
  });
});
