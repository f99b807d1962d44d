// Recordings on a full disk (issue 32, item 5), with ENOSPC injected at the file system's boundary
// (the recorders' write call), so that it runs unprivileged: a disk of a few hundred kB that takes
// writes up to its capacity, then a partial write, then ENOSPC, as Linux does. Both formats: the file
// reads back (record/read.ts, what `twolink compare` uses) up to its last tick, the tick count the
// recorder says equals the count the file holds, and the ticks held are the run's first ones,
// unchanged. The real tmpfs case is in tests/realtime/recording-full-disk.test.ts.
import { fstatSync, mkdtempSync, readFileSync, statSync, truncateSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadRig } from '../src/config/load.js';
import { builtinPath } from '../src/model/builtins.js';
import { McapRecorder, McapRunWriter } from '../src/record/mcap.js';
import { readRecording } from '../src/record/read.js';
import { runHeader } from '../src/run/header.js';
import { Recorder, type RunRecorder } from '../src/telemetry/recorder.js';
import { F } from '../src/telemetry/tick.js';
import { virtualRun, type VirtualRun } from './helpers/virtual-run.js';
import { hangGuardMs } from './helpers/hang-guard.js';

const rig = loadRig('rigs/mock-arm.json');
const reach = builtinPath(rig.arm, 'reach')!;
const dir = mkdtempSync(join(tmpdir(), 'twolink-full-disk-'));

/** A disk of `capacity` bytes at the write call: a write past it is cut at the capacity, the next one fails with ENOSPC. */
function diskOf(capacity: number): (fd: number, buf: Uint8Array, off: number, position: number | null) => number {
  return (fd, buf, off, position) => {
    const at = position ?? fstatSync(fd).size;
    const room = capacity - at;
    if (room <= 0) throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', errno: -28 });
    return writeSync(fd, buf, off, Math.min(room, buf.length - off), position);
  };
}

let run: VirtualRun;
beforeAll(async () => {
  run = await virtualRun(rig, [reach], { maxSeconds: 8 });
}, hangGuardMs(60_000));

/** Feeds the run to a recorder as the session does: the rows in batches of 10 (a 20 ms drain at 500 Hz), a flush after each; stops feeding once a flush fails. */
function feed(rec: RunRecorder): { handed: number } {
  rec.open(
    runHeader({
      rig,
      rateHz: rig.control.rateHz,
      feedforward: 'desired',
      target: { kind: 'mock' },
      clock: 'virtual',
      paths: [reach],
      injections: [],
    }),
  );
  rec.event({ event: 'connected', describe: 'the mock rig (virtual time)' });
  let handed = 0;
  for (let k = 0; k < run.rows.length; k += 10) {
    for (const row of run.rows.slice(k, k + 10)) rec.tick(row);
    handed = Math.min(run.rows.length, k + 10);
    if (!rec.flush()) break;
  }
  rec.close({ ...run.summary, recordingFailure: rec.failure?.message, recordedTicks: rec.ticks });
  return { handed };
}

/** The ticks of a recording, by their loop time [s], and what the reader says of the file. */
async function readBack(file: string): Promise<{ t: number[]; info: Awaited<ReturnType<typeof readRecording>> }> {
  const t: number[] = [];
  const info = await readRecording(file, { tick: (row) => void t.push(row[F.t]!) });
  return { t, info };
}

const runT = (): number[] => run.rows.map((r) => r[F.t]!);

describe('NDJSON on a full disk', () => {
  it.each([60_000, 150_000, 400_000])(
    'a %i-byte disk: readable to its last tick, the count said is the count held, the summary says why it stopped',
    async (capacity) => {
      const file = join(dir, `run-${capacity}.ndjson`);
      const rec = new Recorder(file, rig.joints, diskOf(capacity));
      const { handed } = feed(rec);
      expect(rec.failure?.message).toMatch(/the disk is full/);
      expect(statSync(file).size).toBeLessThanOrEqual(capacity);
      const { t, info } = await readBack(file);
      expect(info.truncated).toBeUndefined();
      // The ticks said are the ticks held: the run's first ones, none dropped or changed.
      expect(t.length).toBe(rec.ticks);
      expect(t).toEqual(runT().slice(0, t.length));
      expect(rec.ticks).toBeLessThan(handed);
      // The summary line fits in the space the cut batch took: it says the recording stopped and what it holds.
      expect(info.summary?.recordingFailure).toBe(rec.failure!.message);
      expect(info.summary?.recordedTicks).toBe(rec.ticks);
    },
  );

  it('a disk that does not take the summary line either: the file ends at its last whole tick line', async () => {
    const file = join(dir, 'run-tight.ndjson');
    // Full exactly at the end of a batch: nothing of the next batch lands, so no space is freed for the summary.
    const probe = join(dir, 'probe.ndjson');
    const p = new Recorder(probe, rig.joints);
    p.open(
      runHeader({
        rig,
        rateHz: rig.control.rateHz,
        feedforward: 'desired',
        target: { kind: 'mock' },
        clock: 'virtual',
        paths: [reach],
        injections: [],
      }),
    );
    p.event({ event: 'connected', describe: 'the mock rig (virtual time)' });
    for (const row of run.rows.slice(0, 10)) p.tick(row);
    p.flush();
    const capacity = statSync(probe).size;
    p.close({});
    const rec = new Recorder(file, rig.joints, diskOf(capacity));
    feed(rec);
    const { t, info } = await readBack(file);
    expect(rec.ticks).toBe(10);
    expect(t).toEqual(runT().slice(0, 10));
    expect(info.summary).toBeUndefined();
    expect(readFileSync(file, 'utf8').endsWith('\n')).toBe(true);
  });
});

/**
 * The start time of every MCAP recording here. The scene's messages (/tf, joint states) carry their
 * wall-clock stamp, startedAt + t, as JSON numbers ("nsec":5000000 or "nsec":925000000), so two
 * recordings of the same run started at different instants differ in size by a few hundred bytes: a
 * disk sized from one recording ("full while the writer ends the file") must hold the other's start.
 */
const STARTED_AT = '2026-01-02T03:04:05.678Z';

/** Feeds the run to the MCAP recorder as the session does (the chain runs between drains); the ticks handed over. */
async function feedMcap(rec: McapRecorder): Promise<number> {
  rec.open({
    ...runHeader({
      rig,
      rateHz: rig.control.rateHz,
      feedforward: 'desired',
      target: { kind: 'mock' },
      clock: 'virtual',
      paths: [reach],
      injections: [],
    }),
    startedAt: STARTED_AT,
  });
  rec.event({ event: 'connected', describe: 'the mock rig (virtual time)' });
  let handed = 0;
  for (let k = 0; k < run.rows.length; k += 10) {
    for (const row of run.rows.slice(k, k + 10)) rec.tick(row);
    handed = Math.min(run.rows.length, k + 10);
    await rec.done;
    if (!rec.flush()) break;
  }
  rec.close({ ...run.summary });
  await rec.done;
  return handed;
}

describe('MCAP on a full disk', () => {
  it('full while the writer ends the file (in its summary section): every tick, the summary, a footer', async () => {
    const free = join(dir, 'free.mcap');
    await feedMcap(new McapRecorder(free, rig));
    const file = join(dir, 'run-end.mcap');
    const rec = new McapRecorder(file, rig, { writeFn: diskOf(statSync(free).size - 300) });
    await feedMcap(rec);
    // The same start, the same bytes: the disk is full 300 bytes before the free recording's end.
    expect(rec.failure?.message, `${statSync(file).size} bytes written of ${statSync(free).size}`).toMatch(/the disk is full/);
    const { t, info } = await readBack(file);
    expect(rec.ticks).toBe(run.rows.length);
    expect(t).toEqual(runT());
    expect(info.truncated).toBeUndefined();
    expect(info.summary?.recordedTicks).toBe(run.rows.length);
  });

  it.each([150_000, 260_000, 500_000])(
    'a %i-byte disk: the chunks written read back, the count said is the count held, the summary and a footer close it',
    async (capacity) => {
      const file = join(dir, `run-${capacity}.mcap`);
      const rec = new McapRecorder(file, rig, { writeFn: diskOf(capacity) });
      const handed = await feedMcap(rec);
      expect(rec.failure?.message).toMatch(/cannot write it: the disk is full/);
      expect(statSync(file).size).toBeLessThanOrEqual(capacity);
      const { t, info } = await readBack(file);
      expect(info.format).toBe('mcap');
      expect(t.length).toBe(rec.ticks);
      expect(t.length).toBeGreaterThan(0);
      expect(rec.ticks).toBeLessThan(handed);
      expect(t).toEqual(runT().slice(0, t.length));
      // The tail after the failure: the summary as metadata, DataEnd and the footer (no truncation).
      expect(info.truncated).toBeUndefined();
      expect(info.summary?.recordingFailure).toBe(rec.failure!.message);
      expect(info.summary?.recordedTicks).toBe(rec.ticks);
      expect(info.summary?.stopReason).toBe(run.summary.stopReason);
    },
    hangGuardMs(30_000),
  );
});

describe('the reserve: a recording stops 16 kB short of a full disk, so that its summary fits', () => {
  it('NDJSON: stopped by the free space statfs gives, the summary in full after it', async () => {
    const file = join(dir, 'reserve.ndjson');
    // A disk with 120 kB free when the recording starts: what the file takes comes off it.
    const rec = new Recorder(file, rig.joints, undefined, () => 120_000 - statSync(file).size);
    feed(rec);
    expect(rec.failure?.message).toMatch(/the disk is nearly full \(\d+ kB free; twolink keeps 16 kB to close the recording\)/);
    const { t, info } = await readBack(file);
    expect(t).toEqual(runT().slice(0, rec.ticks));
    expect(statSync(file).size).toBeLessThan(120_000);
    expect(info.summary?.stopReason).toBe(run.summary.stopReason);
    expect(info.summary?.tracking).toEqual(JSON.parse(JSON.stringify(run.summary.tracking)));
  });

  it('MCAP: the same, with the summary and a footer', async () => {
    const file = join(dir, 'reserve.mcap');
    const rec = new McapRecorder(file, rig, { free: () => 300_000 - statSync(file).size });
    await feedMcap(rec);
    expect(rec.failure?.message).toMatch(/cannot write it: the disk is nearly full/);
    const { t, info } = await readBack(file);
    expect(t).toEqual(runT().slice(0, rec.ticks));
    expect(rec.ticks).toBeGreaterThan(0);
    expect(info.truncated).toBeUndefined();
    expect(info.summary?.recordedTicks).toBe(rec.ticks);
  });
});

describe('MCAP cut short (a crash while writing): the recovering read', () => {
  let whole: string;
  let size: number;
  let chunkEnds: number;
  beforeAll(async () => {
    whole = join(dir, 'whole.mcap');
    const w = await McapRunWriter.open(
      whole,
      rig,
      runHeader({
        rig,
        rateHz: rig.control.rateHz,
        feedforward: 'desired',
        target: { kind: 'mock' },
        clock: 'virtual',
        paths: [reach],
        injections: [],
      }),
      {
        chunkBytes: 64 * 1024,
        bufferBytes: 0,
      },
    );
    for (const row of run.rows) await w.tick(row);
    await w.end({ kind: 'summary', ...run.summary });
    size = statSync(whole).size;
    chunkEnds = w.ticks;
  });

  it('the whole file reads every tick, with its summary and no truncation', async () => {
    const { t, info } = await readBack(whole);
    expect(chunkEnds).toBe(run.rows.length);
    expect(t).toEqual(runT());
    expect(info.truncated).toBeUndefined();
    expect(info.summary?.ticks).toBe(run.summary.ticks);
  });

  it('cut anywhere after its first chunk: the ticks of its whole chunks, in order and unchanged, and the cut said', async () => {
    let last = -1;
    for (const frac of [0.35, 0.5, 0.71, 0.9, 0.999]) {
      const cut = join(dir, `cut-${frac}.mcap`);
      writeFileSync(cut, readFileSync(whole));
      truncateSync(cut, Math.floor(size * frac));
      const { t, info } = await readBack(cut);
      expect(t.length).toBeGreaterThan(0);
      // Cut in the data: the ticks of the chunks before the cut; cut in the summary section (0.999): every tick.
      if (frac < 0.9) expect(t.length).toBeLessThan(run.rows.length);
      expect(t.length).toBeGreaterThanOrEqual(last);
      last = t.length;
      expect(t).toEqual(runT().slice(0, t.length));
      expect(info.truncated).toBeDefined();
      expect(info.truncated!.line).toBeGreaterThanOrEqual(t.length);
    }
  });

  it('cut inside its first chunk: no tick, said as such', async () => {
    const cut = join(dir, 'cut-early.mcap');
    writeFileSync(cut, readFileSync(whole));
    truncateSync(cut, 20_000);
    await expect(readRecording(cut)).rejects.toThrow(
      /no messages on \/twolink\/tick: the run recorded nothing \(the file is cut short before its first whole chunk\)/,
    );
  });
});
