// Setup's step 5: a gentle identification with the rig file it corrected (on the miswired mock too),
// only the well identified parameters written, then the first reach with that file.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { loadRig } from '../src/config/load.js';
import { WELL_IDENTIFIED } from '../src/setup/identify-step.js';
import { lastJson, twolink } from './helpers/cli.js';
import { CHILD_GUARD_MS, HANG_GUARD_MS } from './helpers/setup-person.js';

// Hang guards only: the tests wait for events.
vi.setConfig({ testTimeout: HANG_GUARD_MS, hookTimeout: HANG_GUARD_MS });

const dir = mkdtempSync(join(tmpdir(), 'twolink-setup-id-'));
const RIG = 'rigs/mock-arm.json';
const WIRING = 'swap-motors,reverse-encoder=2';

interface Step {
  name: string;
  status: string;
  summary: string;
  evidence: Record<string, any>;
}

async function setup(extra: string[], out: string): Promise<{ steps: Step[]; changes: { field: string; step: string }[] }> {
  const r = await twolink(['setup', '--rig', RIG, '--mock', '--wiring', WIRING, '--yes', '--json', '--out', out, ...extra], {
    timeoutMs: CHILD_GUARD_MS,
  });
  expect(r.code, r.stderr).toBe(0);
  return lastJson(r);
}

describe('setup: the gentle identification', () => {
  it('writes only the parameters it determines well, and the first reach follows the model better for it', async () => {
    const withId = await setup([], join(dir, 'with.json'));
    const without = await setup(['--no-identify'], join(dir, 'without.json'));
    const id = withId.steps.find((s) => s.name === 'identification')!;
    expect(id, JSON.stringify(withId.steps.map((s) => s.name))).toBeDefined();
    expect(id.status).toBe('pass');
    expect(without.steps.some((s) => s.name === 'identification')).toBe(false);
    // Every parameter says whether it was written; a written one is within WELL_IDENTIFIED, a kept one says why.
    const params = Object.entries<{ estimate: number; std: number; written: boolean; kept?: string }>(id.evidence.parameters);
    expect(params.length).toBe(9);
    for (const [k, p] of params) {
      if (p.written) expect(p.std, k).toBeLessThanOrEqual(WELL_IDENTIFIED * Math.abs(p.estimate));
      else expect(p.kept, k).toBeTruthy();
    }
    expect(params.some(([, p]) => p.written)).toBe(true);
    const idChanges = withId.changes.filter((c) => c.step === 'identification').map((c) => c.field);
    expect(idChanges.some((f) => f.startsWith('arm.'))).toBe(true);
    // The written file is valid and drives the same miswired mock; with the model identified the
    // twin's residual on the first reach is smaller than with the nominal masses.
    loadRig(join(dir, 'with.json'));
    const reach = (j: { steps: Step[] }): number =>
      Math.max(...(j.steps.find((s) => s.name === 'first reach')!.evidence.twinRmsDeg as number[]));
    expect(withId.steps.at(-1)).toMatchObject({ name: 'first reach', status: 'pass' });
    expect(reach(withId)).toBeLessThan(reach(without));
  });
});

describe('identify --mock --wiring', () => {
  it('runs on the miswired mock with the rig file setup wrote for it, and stops on a wiring fault with the original', async () => {
    const fixed = join(dir, 'for-identify.json');
    await setup(['--no-identify', '--no-reach'], fixed);
    const ok = await twolink(
      [
        'identify',
        '--rig',
        fixed,
        '--mock',
        '--wiring',
        WIRING,
        '--amplitude',
        '0.3',
        '--duration',
        '8',
        '--no-validate',
        '--record',
        join(dir, 'ok.ndjson'),
      ],
      { timeoutMs: CHILD_GUARD_MS },
    );
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stderr).toMatch(new RegExp(`wired "${WIRING}"`));
    const bad = await twolink(
      [
        'identify',
        '--rig',
        RIG,
        '--mock',
        '--wiring',
        WIRING,
        '--amplitude',
        '0.3',
        '--duration',
        '8',
        '--no-validate',
        '--record',
        join(dir, 'bad.ndjson'),
      ],
      { timeoutMs: CHILD_GUARD_MS },
    );
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/the excitation run stopped early: fault:wiring/);
  });
  it('a bad --wiring is one line, exit 2; --wiring needs --mock', async () => {
    const a = await twolink(['identify', '--rig', RIG, '--mock', '--wiring', 'swap-motor']);
    expect(a.code).toBe(2);
    expect(a.stderr).toMatch(/--wiring "swap-motor": item 1 "swap-motor": unknown mistake/);
    const b = await twolink(['identify', '--rig', RIG, '--port', '/dev/null', '--wiring', 'swap-motors']);
    expect(b.code).toBe(2);
    expect(b.stderr).toMatch(/--wiring needs --mock/);
  });
});
