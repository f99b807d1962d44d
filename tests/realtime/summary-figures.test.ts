// `twolink run` in real time on the mock: the summary's timing figures are the ones a reader of the
// recording of the same run computes (tests/helpers/recording-figures.ts), whatever this machine's
// load made them; and a run cut short by --max-seconds is `timeout`, exit code 4, its tracking over
// what ran. Nothing here asserts how fast anything was.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { lastJson, twolink } from '../helpers/cli.js';
import { fromRecording } from '../helpers/recording-figures.js';

const dir = mkdtempSync(join(tmpdir(), 'twolink-summary-figures-'));

describe('twolink run: the summary and the recording', () => {
  it('at 1 kHz on the mock: latency, sample period and the longest gap equal those recomputed from the recording', async () => {
    const file = join(dir, 'reach.ndjson');
    const r = await twolink(
      ['run', '--rig', 'rigs/mock-arm.json', '--mock', '--rate', '1000', '--traj', 'reach', '--record', file, '--json'],
      { timeoutMs: 60_000 },
    );
    const s = lastJson(r);
    expect(s.stop, r.stderr).toEqual({ kind: 'done' });
    expect(r.code).toBe(0);
    const rec = fromRecording(file);
    expect(rec.answered).toBeGreaterThan(1000);
    expect(s.period).toEqual({ p50Us: rec.p50, p99Us: rec.p99, maxUs: rec.max });
    expect({
      p50: s.timing.latencyP50Us,
      p99: s.timing.latencyP99Us,
      period: s.timing.samplePeriodP99Us,
      stall: s.timing.maxStallMs,
    }).toEqual({
      p50: rec.p50,
      p99: rec.p99,
      period: rec.periodP99,
      stall: rec.stallMs,
    });
    // The recording's own summary line says the same.
    const last = JSON.parse(readFileSync(file, 'utf8').trim().split('\n').at(-1)!);
    expect(last.timing.latencyP99Us).toBe(s.timing.latencyP99Us);
    expect(last.timing.maxStallMs).toBe(s.timing.maxStallMs);
  });

  it('--max-seconds before the trajectory is done: timeout, exit code 4, the motors stopped, tracking over the approach', async () => {
    const r = await twolink(['run', '--rig', 'rigs/mock-arm.json', '--mock', '--traj', 'reach', '--max-seconds', '1', '--json'], {
      timeoutMs: 60_000,
    });
    const s = lastJson(r);
    expect(s.stop, r.stderr).toEqual({ kind: 'timeout', seconds: 1 });
    expect(r.code).toBe(4);
    expect(s.stopOutcome).toBe('acknowledged');
    expect(s.tracking.covers).toBe('approach');
    for (const v of s.tracking.rmsDeg) expect(v).toBeGreaterThan(0);
  });
});
