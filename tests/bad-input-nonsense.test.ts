// Issue 35, item 10: nonsense that used to be taken silently is refused, one line naming it, exit 2,
// before anything is opened. The classes: a single-valued option given twice (parseArgs keeps the
// last), a flag with its negation, contradictory options (--port with --mock, --firmware with a Firmata
// rig file, --mode float with a trajectory), numbers in another base than decimal (--wiring, --joint,
// --constrain, as every other option), unbounded numbers and mutually exclusive fields in hil suites.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse, UsageError } from '../src/cli/args.js';
import { decimal } from '../src/config/decimal.js';
import { loadSuite, parseSuite } from '../src/hil/suite.js';
import { parseWiring, WiringError } from '../src/mock/wiring.js';
import { ROOT, twolink } from './helpers/cli.js';

const SPECS = {
  q: { type: 'string', help: '' },
  traj: { type: 'string', multiple: true, help: '' },
  rt: { type: 'boolean', help: '' },
  'no-rt': { type: 'boolean', help: '' },
  feedforward: { type: 'string', help: '' },
  'no-feedforward': { type: 'boolean', help: '' },
  json: { type: 'boolean', help: '' },
} as const;

describe('parse (src/cli/args.ts): every command', () => {
  it('refuses a single-valued option given twice, naming both values and what may repeat', () => {
    expect(() => parse(['--q', '0,0', '--q', '1,1'], SPECS, 'model id')).toThrow(UsageError);
    expect(() => parse(['--q', '0,0', '--q=1,1'], SPECS, 'model id')).toThrow(
      /^model id: --q given 2 times \("0,0", "1,1"\): give it once \(only --traj may be repeated\)$/,
    );
    expect(() => parse(['--q', '-1,0', '--q', '-2,0'], SPECS, 'x')).toThrow(/--q given 2 times \("-1,0", "-2,0"\)/);
  });

  it('refuses a flag with its negation, either order, and a value with its negation', () => {
    expect(() => parse(['--rt', '--no-rt'], SPECS, 'run')).toThrow(/^run: --rt and --no-rt contradict each other: give one of them$/);
    expect(() => parse(['--no-rt', '--rt'], SPECS, 'run')).toThrow(/--rt and --no-rt contradict/);
    expect(() => parse(['--feedforward', 'measured', '--no-feedforward'], SPECS, 'run')).toThrow(
      /--feedforward and --no-feedforward contradict/,
    );
  });

  it('takes what says one thing: a repeatable option repeated, a flag said twice', () => {
    const { values } = parse(['--traj', 'reach', '--traj', 'circle', '--json', '--json', '--q', '0,1'], SPECS, 'run');
    expect(values.traj).toEqual(['reach', 'circle']);
    expect(values.json).toBe(true);
    expect(values.q).toBe('0,1');
  });
});

describe('numbers are decimal everywhere (src/config/decimal.ts)', () => {
  it('decimal() takes decimal text only', () => {
    for (const [t, v] of [
      ['12', 12],
      ['-0.5', -0.5],
      ['.5', 0.5],
      ['3e-2', 0.03],
      [' 7 ', 7],
    ] as const)
      expect(decimal(t)).toBe(v);
    for (const t of ['0x10', '0b1', '0o7', '', ' ', 'Infinity', '1,5', '1_000', 'NaN']) expect(decimal(t)).toBeNaN();
  });

  it('--wiring: hex, binary and blanks refused as other options refuse them', () => {
    for (const w of [
      'reverse-encoder=0x2',
      'reverse-motor=0b1',
      'cpr=1:0x800',
      'cpr=1:0b101',
      'offset=1:0x10',
      'offset=0b1:10',
      'reverse-encoder= 1e0x',
    ]) {
      expect(() => parseWiring(w, 2), w).toThrow(WiringError);
    }
    expect(parseWiring('reverse-encoder=2,cpr=1:2048,offset=2:-1.5e1', 2).mistakes).toEqual([
      { kind: 'reverse-encoder', joint: 1 },
      { kind: 'cpr', joint: 0, counts: 2048 },
      { kind: 'offset', joint: 1, deg: -15 },
    ]);
  });
});

/** Refused by the built CLI: exit 2, one line on stderr, nothing on stdout, nothing opened. */
async function refused(args: string[], message: RegExp): Promise<void> {
  const r = await twolink(args);
  expect(r.code, `${args.join(' ')}\n${r.stderr}`).toBe(2);
  expect(r.stderr).toMatch(message);
  expect(r.stderr.trim().split('\n'), r.stderr).toHaveLength(1);
  expect(r.stdout).toBe('');
}

describe('the CLI refuses the nonsense issue 35 found', () => {
  const cases: [string, string[], RegExp][] = [
    [
      '--q given twice',
      ['model', 'id', '--rig', 'rigs/seed-arm.json', '--q', '0,0', '--q', '1,1', '--qd', '0,0', '--qdd', '0,0'],
      /^twolink: model id: --q given 2 times \("0,0", "1,1"\): give it once/,
    ],
    [
      '--rt --no-rt',
      ['run', '--rig', 'rigs/mock-arm.json', '--mock', '--rt', '--no-rt'],
      /^twolink: run: --rt and --no-rt contradict each other/,
    ],
    [
      '--rig given twice',
      ['run', '--rig', 'rigs/mock-arm.json', '--rig', 'rigs/mock-arm-far.json', '--mock'],
      /--rig given 2 times .*\(only --traj, --inject, --fault, --foxglove-allow-origin may be repeated\)/,
    ],
    [
      'rig --firmware with a Firmata rig file',
      ['rig', '--rig', 'rigs/mock-arm-firmata.json', '--firmware', '--pty'],
      /is a Firmata rig file \("link\.transport": "firmata"\), and our firmware speaks twolink's line protocol/,
    ],
    [
      'rig --firmware --board uno-firmata with a line rig file',
      ['rig', '--rig', 'rigs/mock-arm.json', '--firmware', '--pty', '--board', 'uno-firmata', '--elf', 'x.elf'],
      /line-protocol rig file, and a stock Firmata image speaks Firmata/,
    ],
    [
      'rig --firmware --wiring',
      ['rig', '--rig', 'rigs/mock-arm.json', '--firmware', '--pty', '--wiring', 'swap-motors'],
      /--wiring miswires the mock board: with --firmware/,
    ],
    [
      'hex in --wiring',
      ['run', '--rig', 'rigs/mock-arm.json', '--mock', '--wiring', 'reverse-encoder=0x2'],
      /--wiring "reverse-encoder=0x2": item 1 .*J must be a joint number, 1\.\.2 \(got "0x2"\)/,
    ],
    [
      'binary in --wiring',
      ['setup', '--rig', 'rigs/mock-arm.json', '--mock', '--wiring', 'cpr=1:0b101'],
      /N counts must be a whole number \(got "0b101"\)/,
    ],
    [
      'hex in tune --joint',
      ['tune', '--rig', 'rigs/mock-arm.json', '--mock', '--joint', '0x2'],
      /--joint must be 1, 2 or both \(got "0x2"\)/,
    ],
    [
      '--mode float --traj reach',
      ['run', '--rig', 'rigs/mock-arm-identified.json', '--mock', '--mode', 'float', '--traj', 'reach'],
      /--mode float --traj reach: float follows no trajectory/,
    ],
  ];
  for (const [what, args, message] of cases) it(what, () => refused(args, message));

  it('--port with --mock: refused by every command that takes both, before the port is opened', async () => {
    const commands: string[][] = [
      ['run', '--rig', 'rigs/mock-arm.json'],
      ['identify', '--rig', 'rigs/mock-arm-far.json'],
      ['setup', '--rig', 'rigs/mock-arm.json'],
      ['teach', '--rig', 'rigs/mock-arm-identified.json', '--out', join(mkdtempSync(join(tmpdir(), 'twolink-nonsense-')), 't.json')],
      ['tune', '--rig', 'rigs/mock-arm.json'],
    ];
    for (const c of commands) await refused([...c, '--mock', '--port', '/dev/null'], /^twolink: give either --port or --mock, not both\n$/);
    await refused(
      ['doctor', '--mock', '--rig', 'rigs/mock-arm.json', '--port', '/dev/null'],
      /^twolink: give either --port PATH or --mock --rig FILE, not both/,
    );
    await refused(
      ['rig', '--rig', 'rigs/mock-arm.json', '--pty', '--port', '/dev/null'],
      /^twolink: give exactly one of --pty and --port PATH/,
    );
  });
});

describe('hil suites: no number without a bound, no field that another makes meaningless', () => {
  const rig = join(ROOT, 'rigs/mock-arm.json');
  const scenario = (over: Record<string, unknown>, expect: Record<string, unknown> = {}): unknown => ({
    scenarios: [{ name: 's', rig, traj: 'reach', ...over, expect }],
  });
  const cases: [string, unknown, RegExp][] = [
    ['stopWithinMs 1e308', scenario({}, { stopWithinMs: 1e308 }), /scenarios\[0\] \("s"\)\.expect\.stopWithinMs: must be at most 60000 ms/],
    ['maxSeconds 1e308', scenario({ maxSeconds: 1e308 }), /scenarios\[0\] \("s"\)\.maxSeconds: must be at most 3600 s/],
    ['maxRmsDeg 1e308', scenario({}, { maxRmsDeg: [1, 1e308] }), /expect\.maxRmsDeg.*must be at most 360 deg/],
    ['twinAlarms 1e12', scenario({}, { twinAlarms: 1e12 }), /expect\.twinAlarms/],
    ['twinAlarms {}', scenario({}, { twinAlarms: {} }), /give min, max or both/],
    [
      'controller and feedforward',
      scenario({ controller: join(ROOT, 'examples/controllers/pd-gravity.js'), feedforward: 'none' }),
      /scenarios\[0\] \("s"\)\.feedforward: goes with twolink's own law; "controller" replaces that law/,
    ],
  ];
  for (const [what, raw, message] of cases) {
    it(what, () => {
      expect(() => parseSuite(raw, 'suite.json')).toThrow(message);
    });
  }

  it('through the CLI: exit 2 naming the file, the scenario and the field', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'twolink-nonsense-'));
    const file = join(dir, 'suite.json');
    writeFileSync(file, JSON.stringify(scenario({}, { stopWithinMs: 1e308 })));
    await refused(['hil', file], /suite\.json: scenarios\[0\] \("s"\)\.expect\.stopWithinMs: must be at most 60000 ms .* \(got 1e\+308\)/);
  });

  it('the shipped suite still loads (its bounds are what a suite needs)', () => {
    expect(loadSuite(join(ROOT, 'examples/hil/suite.json')).scenarios.length).toBeGreaterThan(1);
  });
});

describe('trajectory files: a step of 1e308 s is a typo, not a plan', () => {
  it('a step longer than a day is refused, naming the file and the field', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'twolink-nonsense-'));
    const file = join(dir, 'long.json');
    writeFileSync(file, JSON.stringify({ start: { q: [-90, 0] }, steps: [{ hold: 1e308 }] }));
    await refused(
      ['run', '--rig', join(ROOT, 'rigs/mock-arm.json'), '--mock', '--traj', file],
      /long\.json: steps\[0\]\.hold: must be at most 86400 s \(a day; --cycle repeats a trajectory\)/,
    );
  });
});
