// twolink setup on the miswired mock, end to end: `setup --mock --yes --json --wiring X` finds every
// mistake in X and writes a rig file; a run with that file and the same miswired mock completes the
// reach (virtual time), where the original rig file does not.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { loadRig } from '../src/config/load.js';
import { virtualRun } from '../src/testing.js';
import { lastJson, twolink } from './helpers/cli.js';
import { CHILD_GUARD_MS, HANG_GUARD_MS } from './helpers/setup-person.js';

// Hang guards only: the tests wait for events.
vi.setConfig({ testTimeout: HANG_GUARD_MS, hookTimeout: HANG_GUARD_MS });

const dir = mkdtempSync(join(tmpdir(), 'twolink-setup-'));
const RIG = 'rigs/mock-arm.json';
/** The soft limits', the speed test's, the breakaway pulses' and the identification's changes (limits, motors[j].ke and kt, motors[j].breakawayDuty; arm, friction): measured on every arm, not wiring findings. */
const MEASURED = /^motor \d constant$|^identification$|^limits \d$|^breakaway \d$/;
const wiringChanges = (changes: { field: string; step: string }[]): string[] =>
  changes.filter((c) => !MEASURED.test(c.step)).map((c) => c.field);

interface Step {
  name: string;
  status: 'pass' | 'warn' | 'fail' | 'skip';
  summary: string;
  fix: string | null;
  corrected: boolean;
  evidence: Record<string, unknown>;
}

/** The findings each mistake must produce: a step that fails or warns with this text, and the rig file's change. */
const EXPECT: Record<string, { step: string; text: RegExp; change: string }[]> = {
  'swap-motors': [
    { step: 'motor output 1', text: /output 1 drives joint 2/, change: 'wiring.motorOutput' },
    { step: 'motor output 2', text: /output 2 drives joint 1/, change: 'wiring.motorOutput' },
  ],
  'swap-encoders': [
    { step: 'encoder 1', text: /joint 1's encoder is on input 2/, change: 'wiring.encoderInput' },
    { step: 'encoder 2', text: /joint 2's encoder is on input 1/, change: 'wiring.encoderInput' },
  ],
  'reverse-motor=1': [{ step: 'motor output 1', text: /a positive duty turns joint 1 clockwise/, change: 'wiring.motorSign' }],
  'reverse-motor=2': [{ step: 'motor output 2', text: /a positive duty turns joint 2 clockwise/, change: 'wiring.motorSign' }],
  'reverse-encoder=1': [{ step: 'encoder 1', text: /counts down as the joint turns counter-clockwise/, change: 'encoders[0].sign' }],
  'reverse-encoder=2': [{ step: 'encoder 2', text: /counts down as the joint turns counter-clockwise/, change: 'encoders[1].sign' }],
  'cpr=1:2048': [
    {
      step: 'encoder 1',
      text: /the board's firmware reports 2048 counts per revolution on input 1, but the encoder gives about 4[78]\d\d/,
      change: 'wiring.boardCountsPerRev',
    },
  ],
  'cpr=2:1000': [
    {
      step: 'encoder 2',
      text: /reports 1000 counts per revolution on input 2, but the encoder gives about 2[34]\d\d/,
      change: 'wiring.boardCountsPerRev',
    },
  ],
  'offset=1:30': [{ step: 'zero', text: /powered on with joint 1 away from zeroDeg/, change: 'encoders[0].zeroDeg' }],
  'offset=2:-25': [{ step: 'zero', text: /powered on with joint 2 away from zeroDeg/, change: 'encoders[1].zeroDeg' }],
};

/** Combinations, and the rig file changes each must make (under a swap, a reversal shows on the other output's step). */
const COMBOS: [string, string[]][] = [
  // Swapped encoder cables also put each encoder on an input whose counts per revolution the board has for the other.
  ['swap-motors,swap-encoders', ['wiring.motorOutput', 'wiring.encoderInput', 'wiring.boardCountsPerRev']],
  ['reverse-motor=1,reverse-encoder=1', ['wiring.motorSign', 'encoders[0].sign']],
  ['swap-motors,reverse-motor=2,reverse-encoder=1', ['wiring.motorOutput', 'wiring.motorSign', 'encoders[0].sign']],
  ['swap-encoders,cpr=1:2048,offset=1:20', ['wiring.encoderInput', 'wiring.boardCountsPerRev', 'encoders[0].zeroDeg']],
  [
    'swap-motors,swap-encoders,reverse-motor=1,reverse-motor=2,reverse-encoder=1,reverse-encoder=2,offset=2:15',
    [
      'wiring.motorOutput',
      'wiring.encoderInput',
      'wiring.boardCountsPerRev',
      'wiring.motorSign',
      'encoders[0].sign',
      'encoders[1].sign',
      'encoders[1].zeroDeg',
    ],
  ],
];

/** Runs setup on the mock wired as `wiring`; returns its JSON and the rig file it wrote. */
async function setup(wiring: string): Promise<{
  json: { steps: Step[]; changes: { field: string; step: string }[]; completed: boolean; rigFile: string | null; clock: string };
  out: string;
  stderr: string;
}> {
  const out = join(dir, `${wiring.replace(/[^a-z0-9]+/gi, '_')}.json`);
  const r = await twolink(['setup', '--rig', RIG, '--mock', '--wiring', wiring, '--yes', '--json', '--out', out], {
    timeoutMs: CHILD_GUARD_MS,
  });
  expect(r.code, r.stderr).toBe(0);
  return { json: lastJson(r), out, stderr: r.stderr };
}

/** Every finding of the mistake `wiring` is reported by its step, with a fix, and is in the rig file's changes. */
function expectFound(wiring: string, json: { steps: Step[]; changes: { field: string }[] }): void {
  for (const e of EXPECT[wiring]!) {
    const step = json.steps.find((s) => s.name === e.step);
    expect(step, `${wiring}: no step ${e.step}`).toBeDefined();
    expect(step!.status, `${wiring}: ${e.step} ${step!.summary}`).not.toBe('pass');
    expect(step!.summary, wiring).toMatch(e.text);
    expect(step!.fix, wiring).toBeTruthy();
    expect(
      json.changes.map((c) => c.field),
      wiring,
    ).toContain(e.change);
  }
}

describe('twolink setup --mock: every wiring mistake alone, then a run with the rig file it wrote', () => {
  it('a correctly wired arm: every step passes and nothing changes', async () => {
    const r = await twolink(['setup', '--rig', RIG, '--mock', '--yes', '--json', '--out', join(dir, 'right.json')], {
      timeoutMs: CHILD_GUARD_MS,
    });
    expect(r.code, r.stderr).toBe(0);
    const j = lastJson(r);
    expect(j.steps.map((s: Step) => `${s.name}:${s.status}`)).toEqual([
      'board:pass',
      'encoder 1:pass',
      'encoder 2:pass',
      'zero:pass',
      'limits 1:warn',
      'limits 2:warn',
      'motor output 1:pass',
      'breakaway 1:pass',
      'motor output 2:pass',
      'breakaway 2:pass',
      'motor 1 constant:pass',
      'motor 2 constant:pass',
      'identification:pass',
      'play:pass',
      'first reach:pass',
    ]);
    // Nothing about the wiring changes; the motor constants and the model measured may (the mock's
    // plant is heavier than the nominal file, with friction the file lacks).
    expect(wiringChanges(j.changes)).toEqual([]);
    expect(j.clock).toBe('virtual');
    expect(r.stderr).toMatch(/\[PASS\] encoder 1: joint 1 is read by input 1/);
    // The mock's file has soft limits narrower than its stops on purpose: kept, with a warning.
    expect(j.steps.find((s: Step) => s.name === 'limits 1').summary).toMatch(/the file's narrower \[-150, 150\] kept/);
  });

  it.each(Object.keys(EXPECT))('%s', async (wiring) => {
    const { json, out } = await setup(wiring);
    expect(json.completed).toBe(true);
    expect(json.rigFile).toBe(out);
    expectFound(wiring, json);
    // Setup's own first reach (slow, tight limits) with the file it wrote, on the same miswired mock.
    expect(json.steps.at(-1)).toMatchObject({ name: 'first reach', status: 'pass' });
    loadRig(out);
    const after = await virtualRun({ rig: out, traj: 'reach', wiring, maxSeconds: 30 });
    expect(after.summary.stop).toEqual({ kind: 'done' });
    expect(Math.max(...after.summary.tracking.rmsDeg)).toBeLessThan(0.5);
    // With the original rig file: a misreported count per revolution is refused at connect, a
    // reversed or swapped motor or encoder runs away and is stopped; an offset runs (off by it).
    const before = await virtualRun({ rig: RIG, traj: 'reach', wiring, maxSeconds: 30 }).catch((e: Error) => e);
    if (wiring.startsWith('cpr')) expect((before as Error).message).toMatch(/counts \d+ per revolution on joint \d, the rig file says/);
    else if (/swap|reverse/.test(wiring)) expect((before as Awaited<ReturnType<typeof virtualRun>>).summary.stop.kind).toBe('fault');
  });
});

describe('twolink setup --mock: combinations', () => {
  it.each(COMBOS)('%s', async (wiring, fields) => {
    const { json, out } = await setup(wiring);
    expect(json.completed).toBe(true);
    expect(wiringChanges(json.changes).sort()).toEqual(fields.slice().sort());
    const failed = json.steps.filter((s) => s.status === 'fail');
    expect(failed.length).toBeGreaterThan(0);
    for (const s of failed) expect(s.corrected, s.summary).toBe(true);
    expect(json.steps.at(-1)).toMatchObject({ name: 'first reach', status: 'pass' });
    const after = await virtualRun({ rig: out, traj: 'reach', wiring, maxSeconds: 30 });
    expect(after.summary.stop).toEqual({ kind: 'done' });
  });
});

describe('twolink setup: bad input is one line, exit 2', () => {
  it.each([
    [['setup', '--rig', RIG, '--mock', '--wiring', 'swap-motor'], /--wiring "swap-motor": item 1 "swap-motor": unknown mistake/],
    [['setup', '--rig', RIG, '--mock', '--wiring', 'reverse-encoder=3'], /J must be a joint number, 1\.\.2/],
    [['setup', '--rig', RIG], /say where the arm is: --port PATH \(the board\) or --mock/],
    [['setup', '--rig', RIG, '--port', '/dev/null', '--wiring', 'swap-motors'], /--wiring needs --mock/],
    [['setup', '--rig', 'rigs/bench-arm.json', '--mock'], /has no "plant" section/],
    [['run', '--rig', RIG, '--mock', '--wiring', 'offset=1'], /write offset=J:DEG, e\.g\. offset=1:30/],
  ])('%j', async (args, msg) => {
    const r = await twolink(args);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(msg);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
  });
});

describe('twolink setup: the rig file it writes over the input keeps a backup', () => {
  it('--out omitted: the input is replaced and the old one kept as .bak', async () => {
    const input = join(dir, 'mine.json');
    const original = readFileSync(RIG, 'utf8');
    (await import('node:fs')).writeFileSync(input, original);
    const r = await twolink(['setup', '--rig', input, '--mock', '--wiring', 'reverse-encoder=2', '--yes', '--json'], {
      timeoutMs: CHILD_GUARD_MS,
    });
    expect(r.code, r.stderr).toBe(0);
    expect(lastJson(r)).toMatchObject({ rigFile: input, backup: `${input}.bak` });
    expect(readFileSync(`${input}.bak`, 'utf8')).toBe(original);
    expect(loadRig(input).encoders[1]!.sign).toBe(-1);
  });
});
