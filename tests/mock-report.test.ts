// What `twolink rig --report` writes and the HIL engine reads (src/mock/mock-report.ts): one JSON object
// a line, checked with one schema on both sides; anything else is an error that quotes the line.
import { describe, expect, it } from 'vitest';
import { parseMockReport, mockReportLine, type MockReport } from '../src/mock/mock-report.js';

describe('the pty rig report', () => {
  it('every report survives its line', () => {
    const all: MockReport[] = [
      { kind: 'pty', host: '/dev/pts/7' },
      { kind: 'refused', injection: 'garbage', why: 'garbage acts on the wire, which the pty rig does not have' },
      { kind: 'serving', board: '/dev/pts/6' },
      { kind: 'handshake', monoMs: 827921.25 },
      { kind: 'injected', injection: 'stall=2@1', at: 1, plantS: 1.0002, wallS: 1.35 },
      { kind: 'motors', zero: true, monoMs: 827925.583117 },
      { kind: 'mock-end', samples: 4012, maxLateMs: 1.25, lateTimers: 3 },
      {
        kind: 'firmware-end',
        boardS: 12.5,
        wallS: 12.61,
        maxBehindMs: 4.2,
        restarts: 0,
        code: null,
        pins: { slices: 50000, rmsDeg: [0.031, 0.062], staleSlices: 2, maxStale: 1, staleRmsDeg: [0.04, 0.07] },
      },
    ];
    for (const r of all) {
      const line = mockReportLine(r);
      expect(line.endsWith('\n')).toBe(true);
      expect(parseMockReport(line.trimEnd())).toEqual(r);
    }
  });

  it('a line that is no report is refused, naming what is wrong', () => {
    expect(() => parseMockReport('/dev/pts/7')).toThrow(/^twolink rig --report: a line that is not JSON: "\/dev\/pts\/7"$/);
    expect(() => parseMockReport('{"kind":"serving"}')).toThrow(/a line that is no report \(board: /);
    expect(() => parseMockReport('{"kind":"pty","host":"/dev/pts/7","extra":1}')).toThrow(/no report/);
    expect(() => parseMockReport('{"kind":"ready"}')).toThrow(/no report \(kind: /);
    expect(() => parseMockReport('{"kind":"injected","injection":"stall=2@1","at":1,"plantS":1}')).toThrow(/no report \(wallS: /);
    expect(() => parseMockReport('{"kind":"motors","zero":true}')).toThrow(/no report \(monoMs: /);
    expect(() => parseMockReport('{"kind":"handshake"}')).toThrow(/no report \(monoMs: /);
    // A non-finite figure is written as null by JSON: refused, naming the field.
    expect(() => parseMockReport(mockReportLine({ kind: 'mock-end', samples: 1, maxLateMs: NaN, lateTimers: 0 }).trimEnd())).toThrow(
      /no report \(maxLateMs: /,
    );
  });
});
