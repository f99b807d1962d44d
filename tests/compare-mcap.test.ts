// `compare`, `plot` and the exports read MCAP recordings as well as NDJSON (issue 35, item 6): the
// reader (record/read.ts) tells an MCAP by its magic and reads it with @mcap/core's streaming reader.
// The MCAP of a run (compare --export mcap, the writer `run --record F.mcap` uses) reads back as the
// NDJSON of the same run does: the same header, ticks, events and summary, the same comparison, the
// same CSV export. An MCAP that is not twolink's, or whose chunk is corrupt, is refused by name.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { McapWriter, type IWritable } from '@mcap/core';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadRig } from '../src/config/load.js';
import { builtinPath } from '../src/model/builtins.js';
import { COMPARE_FIELDS, compareRecordings, formatReport } from '../src/record/compare.js';
import { exportCsv, exportMcap } from '../src/record/export.js';
import { loadRecording, readRecording, type LoadedRecording } from '../src/record/read.js';
import { virtualRun } from './helpers/virtual-run.js';
import { hangGuardMs } from './helpers/hang-guard.js';

const rig = loadRig('rigs/mock-arm.json');
const dir = mkdtempSync(join(tmpdir(), 'twolink-compare-mcap-'));
const ndjson = join(dir, 'reach.ndjson');
const mcap = join(dir, 'reach.mcap');
let a: LoadedRecording;
let b: LoadedRecording;

beforeAll(async () => {
  await virtualRun(rig, [builtinPath(rig.arm, 'reach')!], { record: ndjson, keepRows: false, maxSeconds: 8 });
  await exportMcap(ndjson, mcap);
  a = await loadRecording(ndjson, COMPARE_FIELDS);
  b = await loadRecording(mcap, COMPARE_FIELDS);
}, hangGuardMs(60_000));

describe('an MCAP reads back as the NDJSON of the same run', () => {
  it('the same header (the law included), ticks, events and summary', () => {
    expect(b.info.format).toBe('mcap');
    expect(a.info.format).toBe('ndjson');
    expect(b.info.header).toEqual(a.info.header);
    expect(b.info.header.law?.kind).toBe('pid');
    expect(b.info.ticks).toBe(a.info.ticks);
    expect(b.info.ticks).toBeGreaterThan(2000);
    expect(b.info.summary).toEqual(a.info.summary);
    expect(b.info.eventCount).toBe(a.info.eventCount);
    expect(b.info.events.map((e) => [e.what, e.t, e.data])).toEqual(a.info.events.map((e) => [e.what, e.t, e.data]));
    expect(b.info.truncated).toBeUndefined();
    for (const f of COMPARE_FIELDS) expect(b.columns.get(f)).toEqual(a.columns.get(f));
  });

  it('compare gives the same report, labelled by the file and its law', () => {
    const ra = compareRecordings(a);
    const rb = compareRecordings(b);
    expect(rb.comparisons).toEqual(ra.comparisons);
    expect(rb.notes).toEqual([]);
    const text = formatReport(rb);
    expect(text).toContain(`A  ${mcap}: mock-arm, reach, 500 Hz, ${a.info.ticks} ticks`);
    expect(text).toMatch(/law: feedforward desired \+ PID \(kp 32\.6\/3\.02 N m\/rad/);
    // Run vs run of the two files: the same run, so zero error.
    const both = compareRecordings(a, b);
    const runRun = both.comparisons.find((c) => c.id === 'run-run')!;
    for (const j of runRun.joints) expect(j.maxAbsDeg).toBe(0);
  });

  it('the CSV export of the MCAP is the CSV export of the NDJSON, byte for byte', async () => {
    await exportCsv(ndjson, join(dir, 'a.csv'));
    await exportCsv(mcap, join(dir, 'b.csv'));
    expect(readFileSync(join(dir, 'b.csv'), 'utf8')).toBe(readFileSync(join(dir, 'a.csv'), 'utf8'));
  });
});

describe('MCAPs that are not a twolink recording', () => {
  it("an MCAP without twolink's header: refused, saying what it lacks", async () => {
    const chunks: Uint8Array[] = [];
    let pos = 0n;
    const writable: IWritable = {
      write: async (buf) => {
        chunks.push(buf.slice());
        pos += BigInt(buf.length);
      },
      position: () => pos,
    };
    const w = new McapWriter({ writable });
    await w.start({ profile: '', library: 'test' });
    const channelId = await w.registerChannel({ topic: '/twolink/tick', schemaId: 0, messageEncoding: 'json', metadata: new Map() });
    await w.addMessage({ channelId, sequence: 0, logTime: 0n, publishTime: 0n, data: new TextEncoder().encode('{"i":0}') });
    await w.end();
    const file = join(dir, 'other.mcap');
    writeFileSync(file, Buffer.concat(chunks));
    await expect(readRecording(file)).rejects.toThrow(
      `${file}: MCAP message 1 on /twolink/tick comes before twolink's header (the metadata "twolink.header"): not a twolink recording`,
    );
  });

  it('a corrupt chunk (a flipped byte): refused as not a valid MCAP, naming the file', async () => {
    const bytes = readFileSync(mcap);
    bytes[Math.floor(bytes.length / 2)]! ^= 0xff;
    const file = join(dir, 'corrupt.mcap');
    writeFileSync(file, bytes);
    await expect(readRecording(file)).rejects.toThrow(new RegExp(`^${file}: (not a valid MCAP: .*|MCAP message \\d+.*)`));
  });
});
