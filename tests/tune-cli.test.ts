// `twolink tune --mock` end to end (virtual time): the JSON on the last stdout line with the fields
// issue 24 names, the tuned rig file (--out, or by default in the current directory; the input is left as it was), the SVG figures,
// and exit 2 with the bound for a bandwidth out of reach.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { hangGuardMs } from './helpers/hang-guard.js';
import { lastJson, ROOT, twolink } from './helpers/cli.js';
import { loadRig } from '../src/config/load.js';

describe('twolink tune --mock', () => {
  it(
    'tunes, prints the JSON, writes the tuned rig file and the figures',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'tune-cli-'));
      const out = join(dir, 'tuned.json');
      const r = await twolink(
        ['tune', '--rig', 'rigs/mock-arm.json', '--mock', '--yes', '--json', '--out', out, '--plot', join(dir, 'fig')],
        { timeoutMs: hangGuardMs(60_000) },
      );
      expect(r.code).toBe(0);
      const j = lastJson(r);
      expect(Object.keys(j).sort()).toEqual(['joints', 'motionSeconds', 'out']);
      expect(j.out).toBe(out);
      expect(j.motionSeconds).toBeLessThanOrEqual(60);
      for (const x of j.joints) {
        expect(Object.keys(x).sort()).toEqual(['gains', 'joint', 'ku', 'measured', 'predicted', 'targetCrossoverHz', 'tu']);
        expect(Object.keys(x.measured).sort()).toEqual([
          'crossoverHz',
          'gainMarginAtLeastDb',
          'gainMarginDb',
          'overshootPct',
          'phaseMarginDeg',
          'settlingS',
        ]);
        expect(x.gains).toHaveLength(3);
      }
      const rig = loadRig(out);
      expect(rig.control.pid.schedule).toHaveLength(3);
      expect(rig.control.pid.kp[0]).toBe(Number(j.joints[0].gains[1].kp.toPrecision(3)));
      for (const f of ['bode-joint1.svg', 'step-joint1.svg', 'bode-joint2.svg', 'step-joint2.svg'])
        expect(readFileSync(join(dir, 'fig', f), 'utf8')).toContain('<svg');
      // The Bode figure: the measured plant, the model overlaid, the measured loop, the margins marked, the coherence, the clock.
      const bode = readFileSync(join(dir, 'fig', 'bode-joint1.svg'), 'utf8');
      for (const s of [
        'plant, measured',
        'plant, model',
        'loop C P, measured',
        `crossover ${j.joints[0].measured.crossoverHz.toFixed(2)} Hz, PM`,
        'GM',
        'coherence (plant)',
        'virtual time',
      ])
        expect(bode).toContain(s);
      const step = readFileSync(join(dir, 'fig', 'step-joint2.svg'), 'utf8');
      for (const s of ['closed-loop step', 'overshoot', 'settling', 'reference', 'measured']) expect(step).toContain(s);
      expect(r.stderr).toContain('[PASS] validation 2');
      expect(existsSync(`${out}.bak`)).toBe(false);
    },
    hangGuardMs(90_000),
  );

  it(
    'with no --out writes NAME.tuned.json into the current directory, not beside the rig file',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'tune-cwd-'));
      const r = await twolink(['tune', '--rig', join(ROOT, 'rigs/mock-arm.json'), '--mock', '--yes', '--json', '--joint', '2'], {
        cwd: dir,
        timeoutMs: hangGuardMs(30_000),
      });
      try {
        expect(r.code).toBe(0);
        expect(lastJson(r).out).toBe(join(dir, 'mock-arm.tuned.json'));
        expect(loadRig(join(dir, 'mock-arm.tuned.json')).control.pid.schedule).toHaveLength(3);
        expect(existsSync(join(ROOT, 'rigs/mock-arm.tuned.json'))).toBe(false);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
    hangGuardMs(40_000),
  );

  it(
    'refuses a bandwidth out of reach with the bound (exit 2), before any motion',
    async () => {
      const r = await twolink(
        [
          'tune',
          '--rig',
          'rigs/mock-arm.json',
          '--mock',
          '--yes',
          '--json',
          '--bandwidth',
          '40',
          '--out',
          join(mkdtempSync(join(tmpdir(), 'tune-cli-')), 'x.json'),
        ],
        { timeoutMs: hangGuardMs(30_000) },
      );
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/40 Hz crossover is out of reach.*reaches at most [\d.]+ Hz on joint 1/);
      expect(lastJson(r).motionSeconds).toBe(0);
    },
    hangGuardMs(40_000),
  );
});
