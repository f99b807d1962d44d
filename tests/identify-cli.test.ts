// `twolink identify` as a user runs it: on the mock rig (virtual time), then from the recording it
// made; what it prints last, the rig file it writes, and its refusals of bad input (exit code 2).
// Every run is in a fresh working folder of its own (issue 35: the test once failed because the
// README's tour had left identify-excitation.ndjson in the repo root): nothing here depends on what
// the repo's folder holds, and what identify writes by default is looked for there.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { hangGuardMs } from './helpers/hang-guard.js';
import { loadRig } from '../src/config/load.js';
import { BASE_PARAMETERS } from '../src/identify/regressor.js';
import { lastJson, ROOT, twolink as twolinkIn, type CliResult } from './helpers/cli.js';

const RIG = join(ROOT, 'rigs/mock-arm-far.json');
/** A fresh, empty working folder. */
const fresh = (): string => mkdtempSync(join(tmpdir(), 'twolink-identify-cwd-'));
/** twolink in a working folder of its own (default: a fresh one). */
const twolink = (args: readonly string[], cwd = fresh()): Promise<CliResult> => twolinkIn(args, { cwd });

describe('twolink identify', () => {
  const dir = mkdtempSync(join(tmpdir(), 'twolink-identify-cli-'));
  const out = join(dir, 'identified.json');
  const rec = join(dir, 'excitation.ndjson');
  let mock: CliResult;

  beforeAll(async () => {
    mock = await twolink(['identify', '--rig', RIG, '--mock', '--out', out, '--record', rec]);
  }, hangGuardMs(60_000));

  it('--mock: runs, fits, writes the rig and validates; the last stdout line is the JSON result', () => {
    expect(mock.code, mock.stderr).toBe(0);
    const j = lastJson(mock);
    expect(Object.keys(j.parameters).sort()).toEqual(BASE_PARAMETERS.map((b) => b.key).sort());
    for (const b of BASE_PARAMETERS) {
      expect(j.parameters[b.key].unit).toBe(b.unit);
      expect(j.parameters[b.key].std).toBeGreaterThan(0);
    }
    for (const k of ['twinRmsDegBefore', 'twinRmsDegAfter', 'trackingRmsDegBefore', 'trackingRmsDegAfter'])
      expect(j.validation[k]).toHaveLength(2);
    for (let i = 0; i < 2; i++) expect(j.validation.twinRmsDegAfter[i]).toBeLessThan(j.validation.twinRmsDegBefore[i] / 5);
    expect(j.fit.conditionNumber).toBeGreaterThan(1);
    expect(j.clock).toBe('virtual');
    expect(mock.stderr).toMatch(/condition number/);
  });

  it('--out writes a rig file that loads, with the identified arm and the same plant', () => {
    const before = loadRig(RIG);
    const after = loadRig(out);
    expect(after.plant).toEqual(before.plant);
    expect(after.friction.coulomb[0]).toBeGreaterThan(0);
    expect(after.arm).not.toEqual(before.arm);
  });

  it(
    'fits from the recording it made, to the same parameters, and replays the twin for the validation',
    async () => {
      const r = await twolink(['identify', '--rig', RIG, rec]);
      expect(r.code, r.stderr).toBe(0);
      const j = lastJson(r);
      const first = lastJson(mock);
      for (const b of BASE_PARAMETERS) expect(j.parameters[b.key].value).toBeCloseTo(first.parameters[b.key].value, 12);
      expect(j.validation.trackingRmsDegBefore).toBeNull();
      for (let i = 0; i < 2; i++) expect(j.validation.twinRmsDegAfter[i]).toBeLessThan(j.validation.twinRmsDegBefore[i]);
    },
    hangGuardMs(60_000),
  );

  it(
    'refuses bad input with exit code 2 and a message naming the problem',
    async () => {
      const cases: [string[], RegExp][] = [
        [['identify', '--rig', RIG], /--mock.*--port.*recording/],
        [['identify', '--rig', RIG, '--mock', '--port', '/dev/null'], /either --port or --mock/],
        [['identify', '--rig', RIG, '--mock', '--amplitude', '3'], /--amplitude: 3 is out of range/],
        [['identify', '--rig', RIG, '--mock', '--out', RIG], /--out .*new file/],
        [['identify', '--rig', join(ROOT, 'rigs/bench-arm.json'), '--mock'], /no "plant" section/],
        [['identify', '--rig', RIG, join(dir, 'missing.ndjson')], /missing.ndjson: no such file/],
        [['identify', '--rig', RIG, '--mock', '--centre', '0,x'], /--centre/],
      ];
      writeFileSync(join(dir, 'bad.ndjson'), '{"kind":"tick"}\n');
      cases.push([['identify', '--rig', RIG, join(dir, 'bad.ndjson')], /bad.ndjson:1: the first line is not a header line/]);
      for (const [args, msg] of cases) {
        const cwd = fresh();
        const r = await twolink(args, cwd);
        expect(r.code, args.join(' ')).toBe(2);
        expect(r.stderr).toMatch(msg);
        expect(readdirSync(cwd), args.join(' ')).toEqual([]); // refused: nothing written
      }
    },
    hangGuardMs(60_000),
  );

  it(
    'bad arguments are refused before any file is looked at: a recording left by an earlier run changes nothing',
    async () => {
      const cwd = fresh();
      mkdirSync(join(cwd, 'runs'));
      writeFileSync(join(cwd, 'runs', 'identify-excitation.ndjson'), 'left by an earlier run\n');
      writeFileSync(join(cwd, 'old.json'), '{}\n');
      for (const [args, msg] of [
        [['--amplitude', '3'], /--amplitude: 3 is out of range/],
        [['--duration', '0x10'], /--duration: "0x10" is not a number \(write it in decimal\)/],
        [['--estimator', 'nope', '--out', 'old.json'], /--estimator: "nope" is not one of iv, ls/],
        [['--record', 'x.csv'], /--record x\.csv: the excitation is recorded as NDJSON/],
      ] as const) {
        const r = await twolink(['identify', '--rig', RIG, '--mock', ...args], cwd);
        expect(r.code, r.stderr).toBe(2);
        expect(r.stderr).toMatch(msg);
        expect(r.stderr).not.toMatch(/exists/);
      }
      // and the output check itself, with good arguments: the old recording is not written over without --force
      const r = await twolink(['identify', '--rig', RIG, '--mock'], cwd);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/runs\/identify-excitation\.ndjson: exists: the recording would replace it; give --force/);
    },
    hangGuardMs(60_000),
  );

  it(
    'by default the excitation is recorded beside --out, or in runs/, never loose in the working folder',
    async () => {
      const beside = fresh();
      mkdirSync(join(beside, 'out'));
      const a = await twolink(['identify', '--rig', RIG, '--mock', '--duration', '5', '--no-validate', '--out', 'out/id.json'], beside);
      expect(a.code, a.stderr).toBe(0);
      expect(readdirSync(beside)).toEqual(['out']);
      expect(readdirSync(join(beside, 'out')).sort()).toEqual(['id.excitation.ndjson', 'id.json']);
      expect(lastJson(a).recording).toBe('out/id.excitation.ndjson');

      const repo = fresh();
      mkdirSync(join(repo, 'runs'));
      const b = await twolink(['identify', '--rig', RIG, '--mock', '--duration', '5', '--no-validate'], repo);
      expect(b.code, b.stderr).toBe(0);
      expect(readdirSync(repo)).toEqual(['runs']);
      expect(existsSync(join(repo, 'runs', 'identify-excitation.ndjson'))).toBe(true);

      const bare = fresh();
      const c = await twolink(['identify', '--rig', RIG, '--mock', '--duration', '5', '--no-validate'], bare);
      expect(c.code, c.stderr).toBe(0);
      expect(readdirSync(bare)).toEqual([]);
      expect(c.stderr).toMatch(/not recorded \(give --record FILE\.ndjson, or --out/);
      expect(lastJson(c).recording).toBeNull();
    },
    hangGuardMs(120_000),
  );

  it('--help lists the options', async () => {
    const r = await twolink(['identify', '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/--amplitude/);
    expect(r.stdout).toMatch(/--out FILE/);
  });
});
