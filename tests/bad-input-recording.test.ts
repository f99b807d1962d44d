// Issue 12: the recording reader says what is wrong, with the line (reordered or repeated ticks, null
// numbers, a line over the bound), output files fail with one line naming the output, and the console
// line of a link error carries its text.
import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { describe, expect, it } from 'vitest';
import { describeEvent } from '../src/control/events.js';
import { FileError } from '../src/config/files.js';
import { exportCsv } from '../src/record/export.js';
import { MAX_LINE_BYTES, readRecording, RecordingError } from '../src/record/read.js';
import { Recorder } from '../src/telemetry/recorder.js';

const FIX = 'tests/fixtures/bad-input';
const dir = mkdtempSync(`${tmpdir()}/twolink-bad-rec-`);

async function failure(file: string): Promise<RecordingError> {
  try {
    await readRecording(file);
  } catch (e) {
    expect(e).toBeInstanceOf(RecordingError);
    expect((e as Error).message).not.toContain('\n');
    return e as RecordingError;
  }
  throw new Error(`${file} was read without an error`);
}

describe('the recording reader refuses what it used to accept without a word', () => {
  it('the fixture it starts from is a valid recording', async () => {
    const info = await readRecording(`${FIX}/recording-ok.ndjson`);
    expect(info.ticks).toBe(40);
  });

  it('two tick lines swapped: the line, both ticks, and the line of the one before', async () => {
    const e = await failure(`${FIX}/recording-reordered.ndjson`);
    expect(e.line).toBe(17);
    expect(e.message).toMatch(
      /recording-reordered\.ndjson:17: tick i = 2005 at t = 4\.0100 s comes after tick i = 2006 at t = 4\.0120 s \(line 16\): the tick lines are out of order or repeated/,
    );
  });

  it('a tick line written twice', async () => {
    const e = await failure(`${FIX}/recording-repeated.ndjson`);
    expect(e.line).toBe(27);
    expect(e.message).toMatch(/tick i = 2015 .* comes after tick i = 2015 .*\(line 26\)/);
  });

  it('a null where a number belongs: the line and the field', async () => {
    const e = await failure(`${FIX}/recording-null.ndjson`);
    expect(e.line).toBe(13);
    expect(e.message).toMatch(/:13: bad tick line: twin\.q\[0\]: a non-finite number: the run wrote a NaN or an Infinity here/);
  });

  it('a line longer than the bound is refused without being held as one string', async () => {
    const f = `${dir}/long.ndjson`;
    const fd = openSync(f, 'w');
    writeSync(fd, `${readFileSync(`${FIX}/recording-ok.ndjson`, 'utf8').split('\n')[0]}\n{"kind":"event","pad":"`);
    const mb = Buffer.alloc(1 << 20, 0x78);
    for (let k = 0; k <= MAX_LINE_BYTES >> 20; k++) writeSync(fd, mb);
    writeSync(fd, '"}\n');
    closeSync(fd);
    const e = await failure(f);
    expect(e.line).toBe(2);
    expect(e.message).toMatch(/:2: the line is longer than 8 MiB/);
  });

  it('a FIFO, a device and a directory are refused before reading', async () => {
    const fifo = `${dir}/rec.fifo`;
    execFileSync('mkfifo', [fifo]);
    expect((await failure(fifo)).message).toMatch(/is a named pipe \(FIFO\), not a recording/);
    expect((await failure('/dev/zero')).message).toMatch(/is a character device, not a recording/);
    expect((await failure(dir)).message).toMatch(/is a directory, not a recording/);
  });
});

describe('output files fail with one line naming the output', () => {
  it('an export to a full disk names /dev/full, not the recording', async () => {
    let err: unknown;
    await exportCsv(`${FIX}/recording-ok.ndjson`, '/dev/full').catch((e: unknown) => (err = e));
    expect(err).toBeInstanceOf(FileError);
    expect((err as Error).message).toBe('/dev/full: cannot write it: the disk is full (no space left on the device)');
  });

  it('a recording that cannot be created: a FileError naming the path', () => {
    const r = new Recorder(`${dir}/no/such/folder/run.ndjson`, 2);
    expect(() =>
      r.open({
        kind: 'header',
        twolink: 'x',
        protocol: 1,
        startedAt: '',
        joints: 2,
        rateHz: 500,
        rig: { file: 'x', name: 'x', content: null },
      }),
    ).toThrow(FileError);
    expect(() =>
      r.open({
        kind: 'header',
        twolink: 'x',
        protocol: 1,
        startedAt: '',
        joints: 2,
        rateHz: 500,
        rig: { file: 'x', name: 'x', content: null },
      }),
    ).toThrow(/run\.ndjson: cannot create it: its folder does not exist/);
  });
});

describe('the console line of a link error', () => {
  it('carries the error text (it used to print "link: error" and nothing else)', () => {
    const line = describeEvent({ kind: 'link', t: 1.5, event: { kind: 'error', message: '/dev/ttyACM0: read EIO' } } as never);
    expect(line).toBe('[1.50 s] link: error /dev/ttyACM0: read EIO');
  });
});
