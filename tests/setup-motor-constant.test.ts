// Setup's speed test: ke (and kt = ke) from the steady speed per volt, on a mock whose true motors
// differ from the rig file's, through `setup --mock --yes --json`; and the algebra it rests on.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { loadRig } from '../src/config/load.js';
import { keFromSlope } from '../src/setup/motor-constant.js';
import { lastJson, twolink } from './helpers/cli.js';
import { CHILD_GUARD_MS, HANG_GUARD_MS } from './helpers/setup-person.js';

// Hang guards only: the tests wait for events.
vi.setConfig({ testTimeout: HANG_GUARD_MS, hookTimeout: HANG_GUARD_MS });

const dir = mkdtempSync(join(tmpdir(), 'twolink-setup-ke-'));

/** The mock arm with true motors 30% stronger (joint 1) and 20% weaker with another R (joint 2) than the file says; its viscous friction known to the file. */
function rigWithTrueMotors(): { path: string; trueKe: number[] } {
  const raw = JSON.parse(readFileSync('rigs/mock-arm.json', 'utf8')) as Record<string, any>;
  raw.friction = { viscous: raw.plant.viscous };
  raw.plant.motors = [
    { ke: 0.013, kt: 0.013 },
    { ke: 0.008, kt: 0.008, R: 2.4 },
  ];
  const path = join(dir, 'true-motors.json');
  writeFileSync(path, JSON.stringify(raw, null, 2));
  return { path, trueKe: [0.013, 0.008] };
}

/** What the speed test recovers: within 5% of the plant's true ke, when the file knows the viscous friction. */
const KE_TOLERANCE = 0.05;

describe('setup: the motor constants from the speed per volt', () => {
  it.each([[''], ['swap-motors,reverse-encoder=2,offset=1:20']])(
    'recovers the true ke and kt of the mock (wiring "%s")',
    async (wiring) => {
      const { path, trueKe } = rigWithTrueMotors();
      const out = join(dir, `out-${wiring ? 'miswired' : 'right'}.json`);
      const r = await twolink(
        ['setup', '--rig', path, '--mock', '--yes', '--json', '--no-reach', '--out', out, ...(wiring ? ['--wiring', wiring] : [])],
        { timeoutMs: CHILD_GUARD_MS },
      );
      expect(r.code, r.stderr).toBe(0);
      const j = lastJson(r);
      const written = loadRig(out);
      for (const k of [0, 1]) {
        const step = j.steps.find((s: { name: string }) => s.name === `motor ${k + 1} constant`);
        expect(step, r.stderr).toBeDefined();
        const ke = step.evidence.measuredKe as number;
        expect(Math.abs(ke / trueKe[k]! - 1), step.summary).toBeLessThan(KE_TOLERANCE);
        // Written: ke and kt equal (SI units), the plant's true motors kept as they were.
        expect(Math.abs(written.motors[k]!.ke / trueKe[k]! - 1)).toBeLessThan(KE_TOLERANCE);
        expect(written.motors[k]!.kt).toBe(written.motors[k]!.ke);
        expect(written.plant!.motors[k]!.ke).toBe(trueKe[k]);
        expect(j.changes.map((c: { field: string }) => c.field)).toContain(`motors[${k}].ke`);
      }
      // The joint 1 motor is 30% off the file: a warning that says what was written.
      const m1 = j.steps.find((s: { name: string }) => s.name === 'motor 1 constant');
      expect(m1.status).toBe('warn');
      expect(m1.fix).toMatch(/motors\[0\]\.ke and kt = 0\.01\d+ \(written\)/);
    },
  );
});

describe('keFromSlope: dV/dw = ke N + fv R / (eta N ke)', () => {
  it('without friction the slope is ke N', () => {
    expect(keFromSlope(1.2, 100, 0, 2, 0.8)).toBeCloseTo(0.012, 12);
  });
  it('with friction it is the root that gives the slope back', () => {
    const ke = keFromSlope(0.75, 50, 0.05, 2, 0.8);
    expect(50 * ke + (0.05 * 2) / (0.8 * 50 * ke)).toBeCloseTo(0.75, 12);
    expect(ke).toBeCloseTo(0.01, 12);
  });
  it('a slope friction alone could explain is no motor constant', () => {
    expect(keFromSlope(0.1, 50, 0.05, 2, 0.8)).toBeNaN();
  });
});
