// What `twolink rig --report` writes and the HIL engine reads (src/mock/rig-report.ts): one JSON object
// a line, checked with one schema on both sides; anything else is an error that quotes the line.
import { describe, expect, it } from 'vitest';
import { parseRigReport, rigReportLine, type RigReport } from '../src/mock/rig-report.js';

describe('the pty rig report', () => {
  it('every report survives its line', () => {
    const all: RigReport[] = [
      { kind: 'pty', host: '/dev/pts/7' },
      { kind: 'refused', injection: 'garbage', why: 'garbage acts on the wire, which the pty rig does not have' },
      { kind: 'serving', board: '/dev/pts/6' },
      { kind: 'injected', injection: 'stall=2@1', at: 1, plantS: 1.0002, wallS: 1.35 },
    ];
    for (const r of all) {
      const line = rigReportLine(r);
      expect(line.endsWith('\n')).toBe(true);
      expect(parseRigReport(line.trimEnd())).toEqual(r);
    }
  });

  it('a line that is no report is refused, naming what is wrong', () => {
    expect(() => parseRigReport('/dev/pts/7')).toThrow(/^twolink rig --report: a line that is not JSON: "\/dev\/pts\/7"$/);
    expect(() => parseRigReport('{"kind":"serving"}')).toThrow(/a line that is no report \(board: /);
    expect(() => parseRigReport('{"kind":"pty","host":"/dev/pts/7","extra":1}')).toThrow(/no report/);
    expect(() => parseRigReport('{"kind":"ready"}')).toThrow(/no report \(kind: /);
    expect(() => parseRigReport('{"kind":"injected","injection":"stall=2@1","at":1,"plantS":1}')).toThrow(/no report \(wallS: /);
  });
});
