// Issue 12's fuzzers, smaller than the bench's (npm run bench -- --only inputs): mutated rig files,
// command lines and recordings. Every bad input is a clear error; none is a stack trace, a hang or a
// non-finite number. (The counts of clear errors and accepted inputs are printed by the bench.)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { afterAll, describe, expect, it } from 'vitest';
import { hangGuardMs } from './helpers/hang-guard.js';
import { argumentCases, argumentFiles, classifyRun, fuzzArguments, fuzzRecordings, fuzzRigFiles } from '../src/bench/fuzz.js';
import { BIN, ROOT } from './helpers/cli.js';

const REC = 'tests/fixtures/bad-input/recording-ok.ndjson';
const dir = mkdtempSync(`${tmpdir()}/twolink-bad-fuzz-`);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('fuzzing the inputs', () => {
  it(
    '300 mutated rig files: refused with one line or loaded, computed on and run in virtual time with finite numbers',
    async () => {
      const f = await fuzzRigFiles(300, 21, { runs: 2 });
      expect(f.examples).toEqual([]);
      expect(f.stackTraces).toBe(0);
      expect(f.hangs).toBe(0);
      expect(f.nonFinite).toBe(0);
      expect(f.clearErrors + f.accepted).toBe(300);
      expect(f.clearErrors).toBeGreaterThan(100);
      expect(f.accepted).toBeGreaterThan(5);
    },
    hangGuardMs(240_000),
  );

  it(
    '200 mutated recordings: refused naming the line, or compared with finite figures',
    async () => {
      const f = await fuzzRecordings(200, REC, 22);
      expect(f.examples).toEqual([]);
      expect(f.stackTraces + f.hangs + f.nonFinite).toBe(0);
      expect(f.clearErrors).toBeGreaterThan(50);
      expect(f.accepted).toBeGreaterThan(10);
    },
    hangGuardMs(240_000),
  );

  it(
    "the probe's command lines and 12 mutated ones: one line and exit 2, or a run; never a trace, a hang or a null",
    async () => {
      const files = await argumentFiles(dir, REC, 9);
      const cases = argumentCases(12, files, 23);
      const f = await fuzzArguments(cases, { bin: BIN, cwd: ROOT, parallel: 2, budgetS: 90 });
      expect(f.examples).toEqual([]);
      expect(f.stackTraces + f.hangs + f.nonFinite + f.unclear).toBe(0);
      expect(f.cases).toBe(cases.length);
      expect(f.clearErrors).toBeGreaterThan(30);
    },
    hangGuardMs(600_000),
  );

  it('the classifier itself: a stack, a hang, a null and a multi-line error are told apart from a clear error', () => {
    const base = { code: 2, signal: null, stdout: '', stderr: 'twolink: x: bad\n', timedOut: false };
    expect(classifyRun(base)).toBe('clear');
    expect(classifyRun({ ...base, code: 1, stderr: 'twolink: TypeError: x\n    at f (file:///a.js:1:2)\n' })).toBe('stack');
    expect(classifyRun({ ...base, timedOut: true })).toBe('hang');
    expect(classifyRun({ ...base, code: 0, stderr: '', stdout: '{"tau":[null,1]}\n' })).toBe('nonFinite');
    expect(classifyRun({ ...base, stderr: 'twolink: a\ntwolink: b\n' })).toBe('unclear');
    expect(classifyRun({ ...base, code: 0, stderr: '', stdout: '{"tau":[0,1]}\n' })).toBe('ran');
  });
});
