// The errors twolink prints as one line with exit code 2 (src/cli/input-errors.ts), named as their
// classes name themselves: a renamed class would otherwise fall out of the list and print a stack trace.
import { describe, expect, it } from 'vitest';
import { UsageError } from '../src/cli/args.js';
import { INPUT_ERROR_NAMES } from '../src/cli/input-errors.js';
import { main } from '../src/cli/main.js';
import { FileError } from '../src/config/files.js';
import { RigFileError } from '../src/config/rig-error.js';
import { FeasibilityError } from '../src/control/feasibility.js';
import { ControllerError } from '../src/control/user-controller.js';
import { InjectionError } from '../src/mock/injections.js';
import { ReachError } from '../src/model/kinematics.js';
import { TrajectoryError } from '../src/model/trajectory.js';
import { RecordingError } from '../src/record/read.js';

/** One of each, made as their callers make them. */
const made = (): Error[] => [
  new UsageError('a message'),
  new RigFileError('rig.json', 'a message'),
  new ReachError([2, 0], 2, 0.1, 1),
  new TrajectoryError('a message'),
  new FeasibilityError('a message', 0.5, 0),
  new RecordingError('run.ndjson', 'a message'),
  new FileError('out.json', 'a message'),
  new ControllerError('a message'),
  new InjectionError('a message'),
];

describe('input errors: one list, by the names the classes give themselves', () => {
  it('every input error class is in the list, and the list has nothing else', () => {
    expect(new Set(made().map((e) => e.name))).toEqual(INPUT_ERROR_NAMES);
  });

  it('twolink prints one as a line, exit code 2 (an unknown command: a UsageError)', async () => {
    const writes: string[] = [];
    const write = process.stderr.write.bind(process.stderr);
    process.stderr.write = (s: string | Uint8Array): boolean => (writes.push(String(s)), true);
    try {
      expect(await main(['no-such-command'])).toBe(2);
    } finally {
      process.stderr.write = write;
    }
    expect(writes.join('')).toMatch(/^twolink: unknown command "no-such-command"; commands: .*\n$/);
  });
});
