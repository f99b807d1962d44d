// Reading recordings back: every line is validated; a last line cut short by a crash is tolerated and
// reported; a bad line anywhere else is an error that names the file and the line.
import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { TICK_WIDTH } from '../src/telemetry/tick.js';
import { loadRecording, readRecording, RecordingError } from '../src/record/read.js';
import { tmp, writeSynthetic, type SyntheticRun } from './compare-synthetic.js';

const run: SyntheticRun = {
  rateHz: 100,
  q0: [-0.2, 0.1],
  approachS: 0.2,
  parkS: 0.2,
  idleTicks: 3,
  error: () => 0.001,
  residual: () => 0,
};

function rewrite(lines: string[], edit: (lines: string[]) => void): string {
  const copy = lines.slice();
  edit(copy);
  const f = tmp('edited.ndjson');
  writeFileSync(f, `${copy.join('\n')}\n`);
  return f;
}

async function failure(file: string): Promise<RecordingError> {
  try {
    await readRecording(file);
  } catch (e) {
    expect(e).toBeInstanceOf(RecordingError);
    return e as RecordingError;
  }
  throw new Error(`${file} was read without an error`);
}

describe('reading a recording', () => {
  it('gives every tick as a row, the header, the events and the summary', async () => {
    const { file, ticks } = writeSynthetic(run);
    const rows: number[][] = [];
    const info = await readRecording(file, { tick: (r) => void rows.push(Array.from(r)) });
    expect(info.ticks).toBe(ticks.length);
    expect(rows).toHaveLength(ticks.length);
    expect(rows[0]).toHaveLength(TICK_WIDTH);
    expect(info.header.joints).toBe(2);
    expect(info.header.trajectories[0]!.name).toBe('synthetic');
    expect(info.events.map((e) => e.what)).toEqual(['trajectory']);
    // The synthetic summary is written as recordings were before `stop`: its words only, accepted.
    expect(info.summary?.stopReason).toBe('done');
    expect(info.summary?.stop).toBeUndefined();
    expect(info.truncated).toBeUndefined();
  });

  it('a summary with its stop as a value is read with the stop checked; a bad stop names the line and the field', async () => {
    const { lines } = writeSynthetic(run);
    const last = lines.length - 1;
    const stop = { kind: 'fault', fault: { kind: 'following-error', joint: 1, errorDeg: 5.2, limitDeg: 5, t: 1.25, cause: 'jammed' } };
    const good = rewrite(
      lines,
      (l) => (l[last] = JSON.stringify({ kind: 'summary', ticks: 1, stop, stopReason: 'fault:following-error joint 2: ...' })),
    );
    expect((await readRecording(good)).summary?.stop).toEqual(stop);
    const bad = rewrite(
      lines,
      (l) =>
        (l[last] = JSON.stringify({
          kind: 'summary',
          ticks: 1,
          stop: { kind: 'fault', fault: { kind: 'following-error', joint: 'two' } },
          stopReason: 'x',
        })),
    );
    expect((await failure(bad)).message).toMatch(new RegExp(`:${last + 1}: bad summary line: stop\\.fault\\.joint`));
  });

  it('tolerates a last line cut short, and says so', async () => {
    const { file, ticks } = writeSynthetic(run, { truncate: true, summary: false });
    const { info, columns } = await loadRecording(file, ['t', 'q0']);
    expect(columns.length).toBe(ticks.length);
    expect(info.truncated).toEqual({ line: ticks.length + 3, bytes: '{"kind":"tick","t":9.99,"i":'.length });
    expect(info.summary).toBeUndefined();
  });

  it('refuses a bad line in the middle, naming the line', async () => {
    const { lines } = writeSynthetic(run);
    const cut = rewrite(lines, (l) => (l[10] = l[10]!.slice(0, 40)));
    expect((await failure(cut)).message).toMatch(/:11: not JSON/);
    const shortArray = rewrite(lines, (l) => {
      const o = JSON.parse(l[12]!);
      o.meas.q = [0.1];
      l[12] = JSON.stringify(o);
    });
    const e = await failure(shortArray);
    expect(e.line).toBe(13);
    expect(e.message).toMatch(/:13: bad tick line: meas\.q/);
    const badState = rewrite(
      lines,
      (l) => (l[7] = l[7]!.replace('"state":"track"', '"state":"dancing"').replace('"state":"idle"', '"state":"dancing"')),
    );
    expect((await failure(badState)).message).toMatch(/:8: bad tick line: state/);
  });

  it('refuses a file that is not a recording, or has no ticks', async () => {
    const notRec = tmp('not.ndjson');
    writeFileSync(notRec, '{"hello":1}\n');
    expect((await failure(notRec)).message).toMatch(/:1: the first line is not a header line/);
    const { lines } = writeSynthetic(run);
    const headerOnly = rewrite(lines, (l) => l.splice(1));
    expect((await failure(headerOnly)).message).toMatch(/no tick lines/);
    expect((await failure(tmp('missing.ndjson'))).message).toMatch(/no such file/);
    const twoHeaders = rewrite(lines, (l) => l.splice(5, 0, l[0]!));
    expect((await failure(twoHeaders)).message).toMatch(/:6: a second header line/);
  });

  it('refuses a NaN that the recorder wrote as null, naming the line and the field', async () => {
    const { lines } = writeSynthetic(run);
    const f = rewrite(lines, (l) => {
      const o = JSON.parse(l[6]!);
      o.twin.res = [null, 0];
      l[6] = JSON.stringify(o);
    });
    expect(readFileSync(f, 'utf8')).toContain('"res":[null,0]');
    expect((await failure(f)).message).toMatch(
      /:7: bad tick line: twin\.res\[0\]: a non-finite number: the run wrote a NaN or an Infinity here/,
    );
  });
});
