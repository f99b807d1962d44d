// How `twolink rig --firmware` turns the end of its rig process into an exit code (src/mock/firmware-mock.ts):
// the code the process reported before exiting wins over a signal that killed it while node exited
// (the race behind an exit 1 after a clean Ctrl-C under six CPU hogs); otherwise a signal or a
// non-zero code is exit 1 with a line that says why.
import { describe, expect, it } from 'vitest';
import { mockProcessExit } from '../src/mock/firmware-mock.js';

describe('mockProcessExit', () => {
  it('reported 0, then killed by the SIGINT passed on late: 0, nothing to say', () => {
    expect(mockProcessExit({ reported: 0, code: null, signal: 'SIGINT', passed: 'SIGINT' })).toEqual({ code: 0 });
  });
  it('reported 0 and exited 0: 0', () => {
    expect(mockProcessExit({ reported: 0, code: 0, signal: null, passed: 'SIGTERM' })).toEqual({ code: 0 });
  });
  it('reported 2 (a missing package): 2, pointing at its own lines', () => {
    expect(mockProcessExit({ reported: 2, code: 2, signal: null, passed: undefined })).toEqual({
      code: 2,
      why: expect.stringMatching(/exit code 2 \(its lines above say why\)/),
    });
  });
  it('killed by a signal before it reported: 1, naming the signal and the one passed on', () => {
    expect(mockProcessExit({ reported: undefined, code: null, signal: 'SIGKILL', passed: 'SIGINT' })).toEqual({
      code: 1,
      why: "the firmware rig's process was ended by SIGKILL (after SIGINT was passed on to it) before it had stopped the simulator",
    });
  });
  it('exited 3 without reporting: 3, said', () => {
    expect(mockProcessExit({ reported: undefined, code: 3, signal: null, passed: undefined })).toEqual({
      code: 3,
      why: expect.stringMatching(/exited with code 3/),
    });
  });
});
