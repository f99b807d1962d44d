// `twolink identify` as a user runs it: on the mock rig (virtual time), then from the recording it
// made; what it prints last, the rig file it writes, and its refusals of bad input (exit code 2).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { hangGuardMs } from './helpers/hang-guard.js';
import { loadRig } from '../src/config/load.js';
import { BASE_PARAMETERS } from '../src/identify/regressor.js';
import { lastJson, twolink, type CliResult } from './helpers/cli.js';

const RIG = 'rigs/mock-arm-far.json';

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
    for (const k of ['twinRmsDegBefore', 'twinRmsDegAfter', 'trackingRmsDegBefore', 'trackingRmsDegAfter']) expect(j.validation[k]).toHaveLength(2);
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
        [['identify', '--rig', 'rigs/bench-arm.json', '--mock'], /no "plant" section/],
        [['identify', '--rig', RIG, join(dir, 'missing.ndjson')], /missing.ndjson: no such file/],
        [['identify', '--rig', RIG, '--mock', '--centre', '0,x'], /--centre/],
      ];
      writeFileSync(join(dir, 'bad.ndjson'), '{"kind":"tick"}\n');
      cases.push([['identify', '--rig', RIG, join(dir, 'bad.ndjson')], /bad.ndjson:1: the first line is not a header line/]);
      for (const [args, msg] of cases) {
        const r = await twolink(args);
        expect(r.code, args.join(' ')).toBe(2);
        expect(r.stderr).toMatch(msg);
      }
    },
    hangGuardMs(60_000),
  );

  it('--help lists the options', async () => {
    const r = await twolink(['identify', '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/--amplitude/);
    expect(r.stdout).toMatch(/--out FILE/);
  });
});
