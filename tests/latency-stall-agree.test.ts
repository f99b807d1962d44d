// Every latency figure agrees with the recording and with the stall figures (issue 35, item 5): 20
// virtual runs at 1 kHz behind the 16U2 model, each with host stalls injected at seeded moments (the
// loop's thread does nothing while the board samples on, as tests/loop-samples.test.ts injects them).
// A latency is the time from a sample to its answer; a stall, the board time between two answered
// samples. An answer L late leaves the board that long without a new command, so no latency can stand
// far above the longest stall: at most the stall plus the link's usual delay (the 16U2's burst and
// its USB frames, a few periods). And the summary's figures are the recording's, recomputed from its
// tick lines with nothing of stats.ts. (A run reported latency p99 21 ms beside a longest stall of
// 12 ms: the board's clock had stood still and the link read every sample against the old clock
// offset; tests/line-link-clock-step.test.ts has that case.)
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadRig } from '../src/config/load.js';
import { builtinPath } from '../src/model/builtins.js';
import { F } from '../src/telemetry/tick.js';
import { fromRecording } from './helpers/recording-figures.js';
import { mulberry32 } from './helpers/random.js';
import { virtualRun } from './helpers/virtual-run.js';

/**
 * How far a latency may stand above the longest stall [ms]: the latency of the answer before it (the
 * stall runs from one answer written to the next: stats.ts), behind the 16U2 at 1 kHz a few ms.
 */
const SLACK_MS = 7;

describe('latency figures agree with the stall figures and the recording', () => {
  it('20 virtual runs with injected host stalls: latency max and p99 within the longest stall plus the link delay; the summary is the recording', async () => {
    const base = loadRig('rigs/mock-arm.json');
    const rig = {
      ...base,
      control: { ...base.control, rateHz: 1000 },
      plant: { ...base.plant!, adapter: { kind: '16u2' as const, latencyMs: 16 } },
    };
    const dir = mkdtempSync(join(tmpdir(), 'twolink-agree-'));
    const seen: string[] = [];
    for (let run = 0; run < 20; run++) {
      const rnd = mulberry32(1000 + run);
      // One to three stalls of 2-60 ms (under the 100 ms watchdog), at seeded samples.
      const stalls = Array.from({ length: 1 + Math.floor(rnd() * 3) }, () => ({
        at: 300 + Math.floor(rnd() * 3500),
        s: 0.002 + rnd() * 0.058,
      }));
      const file = join(dir, `run-${run}.ndjson`);
      const res = await virtualRun(rig, [builtinPath(rig.arm, 'reach')!], {
        rateHz: 1000,
        keepRows: false,
        record: file,
        onTick: (core, clock) => {
          const i = core.row[F.i]!;
          for (const st of stalls) if (st.at === i) clock.advanceBy(st.s);
        },
      });
      const p = res.summary.period;
      const rec = fromRecording(file);
      const stallMs = rec.stallMs;
      const what = `run ${run} (stalls ${stalls.map((x) => `${(x.s * 1e3).toFixed(0)} ms at row ${x.at}`).join(', ')}): latency p99 ${p.p99Us} us max ${p.maxUs} us, longest stall ${stallMs} ms`;
      seen.push(what);
      expect(res.summary.stop, what).toEqual({ kind: 'done' });
      // The summary's figures are the recording's.
      expect([p.p50Us, p.p99Us, p.maxUs], what).toEqual([rec.p50, rec.p99, rec.max]);
      // No latency far above the longest stall: at most the stall plus the answer before it.
      expect(p.maxUs / 1000, what).toBeLessThanOrEqual(stallMs + SLACK_MS);
      expect(p.p99Us, what).toBeLessThanOrEqual(p.maxUs);
      // The longest injected stall shows as a stall.
      expect(stallMs, what).toBeGreaterThanOrEqual(Math.max(...stalls.map((x) => x.s)) * 1e3 - SLACK_MS);
    }
    expect(seen).toHaveLength(20);
  });
});
