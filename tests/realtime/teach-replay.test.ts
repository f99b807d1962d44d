// twolink teach and replay end to end on the mock rig in real time (its own thread): the scripted
// hand shows a line, teach writes a trajectory file, replay follows it and its summary carries the
// replay report; off a terminal teach takes stdin lines. Figures are asserted in virtual time
// (tests/teach-replay.test.ts); here only that the pieces connect.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { lastJson, twolink, whyExit } from '../helpers/cli.js';
import { hangGuardMs } from '../helpers/hang-guard.js';

const dir = mkdtempSync(join(tmpdir(), 'twolink-teach-rt-'));
const RIG = ['--rig', 'rigs/mock-arm-identified.json'];

describe('teach and replay on the mock rig (real time)', () => {
  it(
    'the scripted hand teaches a line; replay reports how closely it followed',
    async () => {
      const out = join(dir, 'line.json');
      const t = await twolink(['teach', ...RIG, '--mock', '--hand', 'line', '--out', out, '--json'], { timeoutMs: 40_000 });
      expect(t.code, t.stderr).toBe(0);
      const report = lastJson(t);
      expect(report.samples).toBeGreaterThan(1000);
      const file = JSON.parse(readFileSync(out, 'utf8'));
      expect(file.taught.target).toBe('mock');
      const r = await twolink(['replay', out, ...RIG, '--mock', '--json', '--no-park'], { timeoutMs: 40_000 });
      expect(r.code, whyExit(r)).toBe(0);
      const s = lastJson(r);
      expect(s.replay.rmsDeg).toHaveLength(2);
      expect(s.replay.endpointRmsMm).toBeGreaterThan(0);
      expect(s.replay.endpointMaxMm).toBeGreaterThanOrEqual(s.replay.endpointRmsMm);
    },
    hangGuardMs(80_000),
  );

  it(
    'off a terminal, a stdin line starts the recording',
    async () => {
      const out = join(dir, 'still.json');
      const t = await twolink(['teach', ...RIG, '--mock', '--out', out, '--max-seconds', '3', '--json'], {
        input: 'record\n',
        timeoutMs: 20_000,
      });
      expect(t.code, t.stderr).toBe(0);
      expect(lastJson(t).samples).toBeGreaterThan(100);
    },
    hangGuardMs(20_000),
  );
});
