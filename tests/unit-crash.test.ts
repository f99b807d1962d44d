// Issue 32: fault:internal as a value (its words derived at the edge, read back from a recording by
// its schema), and the test-only hook TWOLINK_TEST_CRASH's plan (src/run/crash.ts, docs/safety.md).
import { describe, expect, it } from 'vitest';
import { describeStop, internalFault, isStopOf, STOP_PATHS } from '../src/control/stop.js';
import { stopSchema } from '../src/run/stop-schema.js';
import { testCrashPlan, whereInStack } from '../src/run/crash.js';

describe('fault:internal', () => {
  it('is a value naming where and what was thrown (its first line, at most 400 characters)', () => {
    expect(internalFault('the loop thread', new Error('boom\n    at x (file.js:1:1)'))).toEqual({
      kind: 'fault',
      fault: { kind: 'internal', where: 'the loop thread', message: 'boom' },
    });
    expect(internalFault('the main thread', new TypeError("Cannot read properties of null (reading 'op')"))).toEqual({
      kind: 'fault',
      fault: { kind: 'internal', where: 'the main thread', message: "TypeError: Cannot read properties of null (reading 'op')" },
    });
    expect(internalFault('the main thread', 42)).toMatchObject({ fault: { message: '42' } });
    const long = internalFault('the main thread', new Error('x'.repeat(1000)));
    expect(long.kind === 'fault' && long.fault.kind === 'internal' && long.fault.message.length).toBe(400);
    // Something whose String() throws is still a stop.
    expect(
      internalFault('the main thread', {
        toString: () => {
          throw new Error('no');
        },
      }),
    ).toMatchObject({ fault: { message: 'a value that cannot be printed' } });
  });

  it('has its words for people, a kind path for HIL, and survives a recording (the schema reads it back)', () => {
    const stop = internalFault('the main thread (the recorder)', new Error('EBADF'));
    expect(describeStop(stop)).toBe(
      'fault:internal: an error twolink did not catch, in the main thread (the recorder): EBADF (a bug in twolink: the motors were zeroed and the run ended; please report it)',
    );
    expect(isStopOf(stop, 'fault.internal')).toBe(true);
    expect(isStopOf(stop, 'fault')).toBe(true);
    expect(STOP_PATHS).toContain('fault.internal');
    expect(stopSchema.parse(JSON.parse(JSON.stringify(stop)))).toEqual(stop);
    expect(() => stopSchema.parse({ kind: 'fault', fault: { kind: 'internal', message: 'no where' } })).toThrow();
  });
});

describe('TWOLINK_TEST_CRASH (test-only)', () => {
  it('THREAD@SECONDS for the main thread, a rejection there, the loop thread, the recorder; unset is no plan', () => {
    expect(testCrashPlan({})).toBeUndefined();
    expect(testCrashPlan({ TWOLINK_TEST_CRASH: '' })).toBeUndefined();
    expect(testCrashPlan({ TWOLINK_TEST_CRASH: 'main@1' })).toEqual({ thread: 'main', afterS: 1 });
    expect(testCrashPlan({ TWOLINK_TEST_CRASH: 'main-rejection@0.25' })).toEqual({ thread: 'main-rejection', afterS: 0.25 });
    expect(testCrashPlan({ TWOLINK_TEST_CRASH: 'loop@2' })).toEqual({ thread: 'loop', afterS: 2 });
    expect(testCrashPlan({ TWOLINK_TEST_CRASH: 'recorder@1.5' })).toEqual({ thread: 'recorder', afterS: 1.5 });
  });

  it('anything else is an error naming the variable and the form', () => {
    for (const v of ['main', 'main@', 'main@-1', 'main@1s', 'dashboard@1', 'main@NaN', ' main@1']) {
      expect(() => testCrashPlan({ TWOLINK_TEST_CRASH: v })).toThrow(
        `TWOLINK_TEST_CRASH="${v}": write THREAD@SECONDS, THREAD main, main-rejection, loop or recorder (a test-only hook: docs/safety.md)`,
      );
    }
  });
});

describe('whereInStack', () => {
  it("names the first frame in twolink's own files (dist/ or src/), else nothing", () => {
    const e = new Error('x');
    e.stack =
      'Error: x\n    at f (node:internal/timers:1:1)\n    at g (/home/u/twolink/dist/viz/live-view.js:120:7)\n    at h (/home/u/twolink/dist/run/session.js:5:1)';
    expect(whereInStack(e)).toBe('dist/viz/live-view.js:120');
    const n = new Error('y');
    n.stack = 'Error: y\n    at f (node:internal/timers:1:1)';
    expect(whereInStack(n)).toBeUndefined();
    expect(whereInStack('not an error')).toBeUndefined();
  });
});
