// What `twolink run` writes for a program that drives it on TWOLINK_REPORT_FD (src/run/run-report.ts):
// one JSON object a line, checked with one schema on both sides; nothing without the variable; a bad
// variable or a descriptor that fails is said once on stderr, and the run goes on.
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { parseRunReport, REPORT_FD_ENV, reportFd, writeRunReport, type RunReport } from '../src/run/run-report.js';

const dir = mkdtempSync(join(tmpdir(), 'twolink-run-report-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ALL: RunReport[] = [
  { kind: 'live', port: 41234 },
  { kind: 'live-end', requests: 10_204, closed: 311, refused: 2, rateClosed: 1, handlingMs: 412.5, cpuUsPerMessage: 38.2 },
  { kind: 'live-end', requests: 0, closed: 0, refused: 1, rateClosed: 0, handlingMs: 0, cpuUsPerMessage: null },
  { kind: 'test-crash', thread: 'loop', monoMs: 827925.583117 },
];

describe('the run report', () => {
  it('every record written on the descriptor is read back as it was, one line each', () => {
    const file = join(dir, 'reports.ndjson');
    const fd = openSync(file, 'w');
    try {
      for (const r of ALL) writeRunReport(r, { [REPORT_FD_ENV]: String(fd) });
    } finally {
      closeSync(fd);
    }
    const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
    expect(lines.map(parseRunReport)).toEqual(ALL);
  });

  it('without the variable nothing is written; a value that is no descriptor >= 3 is refused naming the variable', () => {
    expect(reportFd({})).toBeUndefined();
    expect(reportFd({ [REPORT_FD_ENV]: '' })).toBeUndefined();
    expect(reportFd({ [REPORT_FD_ENV]: '3' })).toBe(3);
    for (const bad of ['1', '2', 'x', '3.5', '-4', '1e3'])
      expect(() => reportFd({ [REPORT_FD_ENV]: bad }), bad).toThrow(
        new RegExp(`^${REPORT_FD_ENV}="${bad.replace('.', '\\.')}": give the number of a descriptor`),
      );
  });

  it('a bad variable is said once on stderr and writes nothing more (the run goes on)', () => {
    const said = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      writeRunReport(ALL[0]!, { [REPORT_FD_ENV]: 'stdout' });
      writeRunReport(ALL[0]!, { [REPORT_FD_ENV]: 'stdout' });
      expect(said.mock.calls.map((c) => String(c[0]))).toEqual([
        expect.stringMatching(/^twolink: TWOLINK_REPORT_FD="stdout": .*; no more reports\n$/),
      ]);
    } finally {
      said.mockRestore();
    }
  });

  it('a line that is no report is refused, naming what is wrong', () => {
    expect(() => parseRunReport('twolink: Foxglove live view on ws://127.0.0.1:8765')).toThrow(
      /^TWOLINK_REPORT_FD: a line that is not JSON: /,
    );
    expect(() => parseRunReport('{"kind":"live","port":0}')).toThrow(/no report \(port: /);
    expect(() => parseRunReport('{"kind":"live","port":8765,"host":"x"}')).toThrow(/no report/);
    expect(() => parseRunReport('{"kind":"test-crash","thread":"dashboard","monoMs":1}')).toThrow(/no report \(thread: /);
    // A non-finite figure is written as null by JSON: refused, naming the field.
    expect(() =>
      parseRunReport(
        JSON.stringify({ kind: 'live-end', requests: 1, closed: 0, refused: 0, rateClosed: 0, handlingMs: NaN, cpuUsPerMessage: null }),
      ),
    ).toThrow(/no report \(handlingMs: /);
  });
});
