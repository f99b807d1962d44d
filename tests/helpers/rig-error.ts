// The RigFileError a call throws (the test fails when it throws nothing, or something else).
import { expect } from 'vitest';
import { RigFileError } from '../../src/config/rig.js';

export function rigFileErrorOf(fn: () => unknown): RigFileError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(RigFileError);
    return e as RigFileError;
  }
  throw new Error('expected a RigFileError');
}
