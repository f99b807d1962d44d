// Issue 26: no command writes over its own input (not even with --force, not through a symlink), an
// existing file is written over only with --force, and user files are read through the bounded reader
// (a FIFO or /dev/zero as a hil suite is refused at once). The built CLI, as users run it.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadRig } from '../src/config/load.js';
import { builtinPath } from '../src/model/builtins.js';
import { virtualRun } from '../src/run/virtual.js';
import { twolink, type CliResult } from './helpers/cli.js';
import { hangGuardMs } from './helpers/hang-guard.js';

const dir = mkdtempSync(join(tmpdir(), 'twolink-no-overwrite-'));
const rec = join(dir, 'reach.ndjson');
let recText = '';

beforeAll(async () => {
  const rig = loadRig('rigs/mock-arm.json');
  await virtualRun(rig, [builtinPath(rig.arm, 'reach')!], { record: rec, keepRows: false, maxSeconds: 30 });
  recText = readFileSync(rec, 'utf8');
}, hangGuardMs(30_000));

function refused(r: CliResult, message: RegExp): void {
  expect(r.code, r.stderr).toBe(2);
  expect(r.stderr).toMatch(message);
  expect(r.stderr.trim().split('\n')).toHaveLength(1);
}

describe('an export never writes over its input', () => {
  it('compare R --export csv --out R: refused, with or without --force, and R is unchanged', async () => {
    for (const extra of [[], ['--force']]) {
      const r = await twolink(['compare', rec, '--export', 'csv', '--out', rec, ...extra]);
      refused(
        r,
        /^twolink: .*reach\.ndjson: is an input of this command: the CSV export never writes over its input; give another file\n$/,
      );
    }
    expect(readFileSync(rec, 'utf8')).toBe(recText);
  });

  it('the library too: exportCsv and exportMcap refuse to write over the recording they read', async () => {
    const { exportCsv, exportMcap } = await import('../src/record/export.js');
    await expect(exportCsv(rec, rec)).rejects.toThrow(
      /reach\.ndjson: is an input of this command: the CSV export never writes over its input/,
    );
    await expect(exportMcap(rec, rec)).rejects.toThrow(/the MCAP export never writes over its input/);
    expect(readFileSync(rec, 'utf8')).toBe(recText);
  });

  it('plot R --out LINK.svg where LINK is a symlink to R: refused (the same file by inode)', async () => {
    const link = join(dir, 'link.svg');
    symlinkSync(rec, link);
    const r = await twolink(['plot', rec, '--out', link, '--force']);
    refused(r, /link\.svg: is the input .*reach\.ndjson: the figure never writes over its input/);
    expect(readFileSync(rec, 'utf8')).toBe(recText);
  });

  it('hil S --junit S: refused', async () => {
    const suite = join(dir, 'suite.json');
    writeFileSync(
      suite,
      JSON.stringify({ scenarios: [{ name: 'a', rig: join(process.cwd(), 'rigs/mock-arm.json'), traj: 'reach', expect: {} }] }),
    );
    const r = await twolink(['hil', suite, '--junit', suite, '--force']);
    refused(r, /^twolink: --junit .*suite\.json: is an input of this command: the JUnit XML never writes over its input/);
  });
});

describe('an existing file is written over only with --force', () => {
  it('compare --export csv over an existing file', async () => {
    const csv = join(dir, 'old.csv');
    writeFileSync(csv, 'keep me\n');
    refused(
      await twolink(['compare', rec, '--export', 'csv', '--out', csv]),
      /old\.csv: exists: the CSV export would replace it; give --force to write over it, or another file\n$/,
    );
    expect(readFileSync(csv, 'utf8')).toBe('keep me\n');
    const r = await twolink(['compare', rec, '--export', 'csv', '--out', csv, '--force']);
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(csv, 'utf8')).toMatch(/^t_s,/);
  });

  it('run --record over an existing recording: refused before the run starts', async () => {
    const r = await twolink(['run', '--rig', 'rigs/mock-arm.json', '--mock', '--traj', 'reach', '--record', rec]);
    refused(r, /reach\.ndjson: exists: the recording would replace it; give --force/);
    expect(readFileSync(rec, 'utf8')).toBe(recText);
  });

  it('sim --out over an existing file needs --overwrite (--force is the endpoint force there)', async () => {
    const out = join(dir, 'sim.ndjson');
    writeFileSync(out, 'keep me\n');
    const args = ['sim', '--rig', 'rigs/seed-arm.json', '--q0', '0,0', '--duration', '0.01', '--out', out];
    refused(await twolink(args), /sim\.ndjson: exists: the simulation output would replace it; give --overwrite to write over it/);
    const r = await twolink([...args, '--overwrite']);
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(out, 'utf8')).not.toBe('keep me\n');
  });
});

describe('hil reads its suite through the bounded reader', () => {
  it('/dev/zero is refused at once, not read to 4 GB', async () => {
    refused(await twolink(['hil', '/dev/zero']), /^twolink: \/dev\/zero: is a character device, not a suite file/);
  });

  it('a FIFO is refused at once, not waited on', async () => {
    const fifo = join(dir, 'suite.fifo');
    execFileSync('mkfifo', [fifo]);
    expect(existsSync(fifo)).toBe(true);
    refused(await twolink(['hil', fifo]), /suite\.fifo: is a named pipe \(FIFO\), not a suite file/);
  });
});
