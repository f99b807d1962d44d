// `twolink run --record` on a real full disk (issue 32, item 5): a 200 KB tmpfs, NDJSON and MCAP. The
// recorder stops 16 kB short of full (the reserve that closes the file), the run stops with
// fault:recording (exit 1), the tick count said on stderr equals the ticks the file
// holds, and `twolink compare` reads the file up to its last tick, its summary saying why the recording
// stopped. Mounting a tmpfs needs root: without it this file is skipped, and the same behaviour is
// tested unprivileged with ENOSPC injected at the write call (tests/recording-full-disk.test.ts).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lastJson, twolink, whyExit } from '../helpers/cli.js';
import { hangGuardMs } from '../helpers/hang-guard.js';

const dir = mkdtempSync(join(tmpdir(), 'twolink-tmpfs-'));
const root = process.getuid?.() === 0;
let mounted = false;
if (root) mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=200k', 'tmpfs', dir]).status === 0;

afterAll(() => {
  if (mounted) spawnSync('umount', [dir]);
  rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(!mounted)('run --record on a 200 KB tmpfs (root: a real full disk)', () => {
  for (const ext of ['ndjson', 'mcap']) {
    describe(ext, () => {
      const file = join(dir, `reach.${ext}`);
      let said: number;
      let summary: any;
      beforeAll(async () => {
        rmSync(join(dir, 'reach.ndjson'), { force: true });
        rmSync(join(dir, 'reach.mcap'), { force: true });
        const r = await twolink(['run', '--rig', 'rigs/mock-arm.json', '--mock', '--traj', 'reach', '--record', file, '--json'], {
          timeoutMs: 90_000,
        });
        expect(r.code, whyExit(r)).toBe(1);
        summary = lastJson(r);
        said = Number(/recorded (\d+) ticks to /.exec(r.stderr)?.[1]);
      }, hangGuardMs(120_000));

      it('the run stops with fault:recording naming the file and the full disk', () => {
        expect(summary.stop).toEqual({
          kind: 'fault',
          fault: { kind: 'recording', file, message: expect.stringMatching(/the disk is nearly full/) },
        });
        expect(summary.stopReason).toMatch(
          new RegExp(`^fault:recording ${file}: .*the disk is nearly full \\(\\d+ kB free; twolink keeps 16 kB to close the recording\\)`),
        );
        expect(statSync(file).size).toBeLessThanOrEqual(200 * 1024);
      });

      it('compare reads it to its last tick: the count said is the count held, and the summary says why it stopped', async () => {
        const c = await twolink(['compare', file, '--json'], { timeoutMs: 60_000 });
        expect(c.code, whyExit(c)).toBe(0);
        const report = lastJson(c);
        const run = report.runs[0];
        expect(said).toBeGreaterThan(0);
        expect(run.ticks).toBe(said);
        expect(run.ticks).toBeLessThan(summary.ticks);
        // The recorder stops 16 kB short of a full disk (RESERVE_BYTES): the summary always goes in.
        expect(run.complete).toBe(true);
        expect(run.recordingFailure).toEqual({ message: expect.stringMatching(/the disk is nearly full/), runTicks: summary.ticks });
        expect(run.stop).toEqual(summary.stop);
        expect(report.notes.join('\n')).toMatch(
          new RegExp(`A: the recording stopped before the run did .*: it holds ${said} of the run's ${summary.ticks} ticks`),
        );
      });
    });
  }
});
