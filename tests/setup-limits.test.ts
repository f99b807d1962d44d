// Setup's soft limits from the mechanical stops (LeRobot-style): the verdicts on the angles read at the
// stops, and through `setup --mock` on plants with stops, without, and with a range too small.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { loadRig } from '../src/config/load.js';
import { checkLimits, MIN_RANGE_DEG, STOP_MARGIN_DEG } from '../src/setup/limits.js';
import { believed } from '../src/setup/steps.js';
import { Writable } from 'node:stream';
import { setupCommand } from '../src/cli/setup-command.js';
import { lastJson, twolink } from './helpers/cli.js';
import { Person, CHILD_GUARD_MS, HANG_GUARD_MS } from './helpers/setup-person.js';

// Hang guards only: the tests wait for events.
vi.setConfig({ testTimeout: HANG_GUARD_MS, hookTimeout: HANG_GUARD_MS });

const rig = loadRig('rigs/mock-arm.json');
const dir = mkdtempSync(join(tmpdir(), 'twolink-setup-limits-'));

describe('checkLimits', () => {
  it('proposes soft limits the margin inside the stops', () => {
    const f = believed(rig);
    const r = checkLimits({ joint: 0, startDeg: -90, cwDeg: -140.2, ccwDeg: 120.3 }, rig, f);
    // The file's [-150, 150] reach past both stops: a warning, and the proposal written.
    expect(r.status).toBe('warn');
    expect(r.fix).toMatch(/limits\[0\]\.minDeg = -135, maxDeg = 115.5 \(written\)/);
    expect(f.limitsDeg[0]).toEqual({ minDeg: -140 + STOP_MARGIN_DEG, maxDeg: 115.5 });
  });
  it('passes when the file is the margin inside the stops', () => {
    const f = believed(rig);
    // The file's joint 2 is [-160, 160].
    expect(checkLimits({ joint: 1, startDeg: 0, cwDeg: -165.2, ccwDeg: 165.1 }, rig, f).status).toBe('pass');
    expect(f.limitsDeg[1]).toEqual({ minDeg: -160, maxDeg: 160 });
  });
  it('never widens a narrower limit on its own: the file kept, a warning that says how to widen', () => {
    const f = believed(rig);
    // The file's joint 1 is [-150, 150], narrower on purpose than stops at +-165.5 allow.
    const r = checkLimits({ joint: 0, startDeg: -90, cwDeg: -165.5, ccwDeg: 165.5 }, rig, f);
    expect(r.status).toBe('warn');
    expect(r.summary).toMatch(/the file's narrower \[-150, 150\] kept \(setup never widens a limit on its own\)/);
    expect(r.fix).toMatch(/to use the wider \[-160.5, 160.5\], run setup again with --widen-limits/);
    expect(r.corrected).toBe(false);
    expect(r.evidence.widerDeg).toEqual([-160.5, 160.5]);
    expect(f.limitsDeg[0]).toEqual({ minDeg: -150, maxDeg: 150 });
  });
  it("widens only when asked (widen: --widen-limits or the person's yes)", () => {
    const f = believed(rig);
    const r = checkLimits({ joint: 0, startDeg: -90, cwDeg: -165.5, ccwDeg: 165.5 }, rig, f, true);
    expect(r.status).toBe('pass');
    expect(r.summary).toMatch(/widened to \[-160.5, 160.5\], as asked/);
    expect(f.limitsDeg[0]).toEqual({ minDeg: -160.5, maxDeg: 160.5 });
  });
  it('one side past a stop, the other narrower: that side narrowed, the other kept', () => {
    const f = believed(rig);
    const r = checkLimits({ joint: 0, startDeg: -90, cwDeg: -170, ccwDeg: 140 }, rig, f);
    expect(r.status).toBe('warn');
    expect(f.limitsDeg[0]).toEqual({ minDeg: -150, maxDeg: 135 });
    expect(r.fix).toMatch(/limits\[0\]\.minDeg = -150, maxDeg = 135 \(written\)/);
    expect(r.corrected).toBe(true);
  });
  it('a range too small for the reach fails, with what to check', () => {
    const f = believed(rig);
    const r = checkLimits({ joint: 1, startDeg: 0, cwDeg: -40, ccwDeg: 40 }, rig, f);
    expect(r.status).toBe('fail');
    expect(r.summary).toMatch(new RegExp(`less than the ${MIN_RANGE_DEG} deg the reach needs`));
    expect(r.fix).toMatch(/check what stops joint 2/);
    expect(f.limitsDeg[1]).toBeNull();
  });
  it('a stop not reached (no motion that way, or a whole turn) keeps the file and says so', () => {
    const f = believed(rig);
    const a = checkLimits({ joint: 0, startDeg: -90, cwDeg: -90.2, ccwDeg: 150 }, rig, f);
    expect(a.status).toBe('warn');
    expect(a.summary).toMatch(/no reading of the clockwise stop/);
    const b = checkLimits({ joint: 0, startDeg: -90, cwDeg: -150, ccwDeg: 215 }, rig, f);
    expect(b.summary).toMatch(/a counter-clockwise stop \(turned 305 deg without meeting one\)/);
    expect(f.limitsDeg[0]).toBeNull();
  });
});

/** rigs/mock-arm.json with its plant's stops replaced (undefined: none). */
function rigWithStops(name: string, stops: { minDeg: number; maxDeg: number }[] | undefined): string {
  const raw = JSON.parse(readFileSync('rigs/mock-arm.json', 'utf8')) as { plant: Record<string, unknown> };
  if (stops) raw.plant.stops = stops;
  else delete raw.plant.stops;
  const path = join(dir, `${name}.json`);
  writeFileSync(path, JSON.stringify(raw, null, 2));
  return path;
}

async function setup(rigPath: string, out: string, extra: string[] = []) {
  const r = await twolink(['setup', '--rig', rigPath, '--mock', '--yes', '--json', '--no-identify', '--no-reach', '--out', out, ...extra], {
    timeoutMs: CHILD_GUARD_MS,
  });
  return { code: r.code, stderr: r.stderr, json: lastJson(r) };
}

describe('setup --mock: the stops by the mock hand', () => {
  it("the file's narrower limits (+-150, +-160) are kept with a warning, not widened to the stops", async () => {
    const out = join(dir, 'kept.json');
    const { code, stderr, json } = await setup('rigs/mock-arm.json', out);
    expect(code, stderr).toBe(0);
    const written = loadRig(out).limits.map((l) => [Math.round((l.min * 180) / Math.PI), Math.round((l.max * 180) / Math.PI)]);
    expect(written).toEqual([
      [-150, 150],
      [-160, 160],
    ]);
    const steps = json.steps.filter((s: { name: string }) => /^limits/.test(s.name));
    expect(steps.map((s: { status: string }) => s.status)).toEqual(['warn', 'warn']);
    expect(steps[0].summary).toMatch(/the file's narrower \[-150, 150\] kept/);
    expect(json.changes.filter((c: { field: string }) => c.field.startsWith('limits'))).toEqual([]);
    expect(stderr).toMatch(/\[WARN\] limits 1: .*setup never widens a limit on its own/);
  });
  it('--widen-limits: the plant stops at +-165 / +-170 deg, soft limits 5 deg inside written (also miswired)', async () => {
    const out = join(dir, 'stops.json');
    // (No offset here: the stops are read through the zero found against gravity, which a joint's
    // friction leaves up to ~3 deg off; the margin covers that, this test's 1 deg would not.)
    const { code, stderr, json } = await setup('rigs/mock-arm.json', out, [
      '--wiring',
      'swap-encoders,reverse-encoder=1',
      '--widen-limits',
    ]);
    expect(code, stderr).toBe(0);
    const written = loadRig(out).limits.map((l) => [(l.min * 180) / Math.PI, (l.max * 180) / Math.PI]);
    const stops = [
      [-165, 165],
      [-170, 170],
    ];
    written.forEach(([lo, hi], j) => {
      // Within a degree of the stop plus the margin (the hand presses the bumper a little).
      expect(Math.abs(lo! - (stops[j]![0]! + STOP_MARGIN_DEG)), `joint ${j + 1} min`).toBeLessThanOrEqual(1);
      expect(Math.abs(hi! - (stops[j]![1]! - STOP_MARGIN_DEG)), `joint ${j + 1} max`).toBeLessThanOrEqual(1);
    });
    expect(json.steps.filter((s: { name: string }) => /^limits/.test(s.name)).map((s: { status: string }) => s.status)).toEqual([
      'pass',
      'pass',
    ]);
    expect(json.changes.map((c: { field: string }) => c.field)).toContain('limits[0].minDeg');
  });
  it('a plant without stops: no stop found, the file kept, setup goes on', async () => {
    const { code, json } = await setup(rigWithStops('no-stops', undefined), join(dir, 'no-stops-out.json'));
    expect(code).toBe(0);
    const steps = json.steps.filter((s: { name: string }) => /^limits/.test(s.name));
    expect(steps.map((s: { status: string }) => s.status)).toEqual(['warn', 'warn']);
    expect(steps[0].summary).toMatch(/without meeting one/);
    expect(json.changes.filter((c: { field: string }) => c.field.startsWith('limits'))).toEqual([]);
  });
  it('joint 2 between stops 97 deg apart (room for the 90 deg hand move, not for the reach): fails, no rig file', async () => {
    const { code, json } = await setup(
      rigWithStops('narrow', [
        { minDeg: -165, maxDeg: 165 },
        { minDeg: -2, maxDeg: 95 },
      ]),
      join(dir, 'narrow-out.json'),
    );
    expect(code).toBe(1);
    expect(json.rigFile).toBeNull();
    expect(json.steps.find((s: { name: string }) => s.name === 'limits 2')).toMatchObject({ status: 'fail' });
  });
});

describe('setup at a terminal: the person is asked before a limit is widened', () => {
  it.each([
    ['y', [-160.5, 160.5], /widened to \[-160.5, 160.5\], as asked/],
    ['n', [-150, 150], /the file's narrower \[-150, 150\] kept/],
    ['Enter', [-150, 150], /the file's narrower \[-150, 150\] kept/],
  ] as const)(
    'answer %s to joint 1',
    async (key, limitsDeg, summary) => {
      const out = join(dir, `asked-${key}.json`);
      const person = new Person();
      person.answer = (p) => ({
        keys: /> joint 1: the stops allow/.test(`  > ${p}`) ? (key === 'Enter' ? '\r' : key) : /\(y: yes/.test(p) ? 'n' : '\r',
      });
      const stdout: string[] = [];
      const code = await setupCommand(['--rig', 'rigs/mock-arm.json', '--mock', '--json', '--no-identify', '--no-reach', '--out', out], {
        input: person.input as unknown as NodeJS.ReadStream,
        err: person.err,
        out: new Writable({ write: (c: Buffer, _e, cb) => (stdout.push(c.toString()), cb()) }),
        signals: person.signals,
      });
      expect(code, person.text).toBe(0);
      expect(person.prompts.filter((p) => /the stops allow soft limits/.test(p))).toHaveLength(2);
      const l = loadRig(out).limits[0]!;
      expect([Math.round(((l.min * 180) / Math.PI) * 2) / 2, Math.round(((l.max * 180) / Math.PI) * 2) / 2]).toEqual(limitsDeg);
      const json = JSON.parse(stdout.join('').trim().split('\n').at(-1)!);
      expect(json.steps.find((s: { name: string }) => s.name === 'limits 1').summary).toMatch(summary);
    },
    HANG_GUARD_MS,
  );
});
