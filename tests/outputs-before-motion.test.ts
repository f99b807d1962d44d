// Issue 32, item 6: every command that writes checks every output before anything moves (a missing
// folder, a directory, a file in the way of a folder, /dev/full for a command that moves the arm), and
// none writes over an existing file without --force (tune included). Each refusal: exit 2, one line
// naming the path, nothing opened, nothing written. Every command runs in a fresh working folder.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkWritableFolder, checkWritablePath, FileError } from '../src/config/files.js';
import { ROOT, twolink as twolinkIn, type CliResult } from './helpers/cli.js';

const fresh = (): string => mkdtempSync(join(tmpdir(), 'twolink-outputs-'));
const rig = (name: string): string => join(ROOT, 'rigs', name);

/** Refused before anything moved: exit 2, one line naming `message`, nothing on stdout, no motion said. */
async function refused(args: string[], message: RegExp, cwd = fresh()): Promise<CliResult> {
  const r = await twolinkIn(args, { cwd });
  expect(r.code, `${args.join(' ')}\n${r.stderr}`).toBe(2);
  expect(r.stderr).toMatch(message);
  expect(r.stderr.trim().split('\n'), r.stderr).toHaveLength(1);
  expect(r.stderr).not.toMatch(/connected|the mock rig|excitation|\[PASS\]|\n\s+at /);
  expect(r.stdout).toBe('');
  return r;
}

describe('checkWritablePath / checkWritableFolder (src/config/files.ts)', () => {
  const dir = fresh();
  it('refuses a missing folder, a directory, a file used as a folder, an existing file without force', () => {
    expect(() => checkWritablePath('/nonexistent/t.json', 'tuned rig file')).toThrow(/the folder \/nonexistent does not exist/);
    expect(() => checkWritablePath(dir, 'tuned rig file')).toThrow(/is a directory: give a file name for the tuned rig file/);
    writeFileSync(join(dir, 'f'), 'x');
    expect(() => checkWritablePath(join(dir, 'f', 'g.json'))).toThrow(FileError);
    expect(() => checkWritablePath(join(dir, 'f'), 'tuned rig file')).toThrow(/exists: the tuned rig file would replace it; give --force/);
    expect(() => checkWritablePath(join(dir, 'f'), 'x', { force: true })).not.toThrow();
  });

  it('/dev/full: refused for a command that moves the arm, left to the write elsewhere; /dev/null taken', () => {
    expect(() => checkWritablePath('/dev/full', 'recording', { motion: true })).toThrow(
      /is \/dev\/full, a device that refuses every write \(no space left\): the recording would be lost after the motion/,
    );
    expect(() => checkWritablePath('/dev/full', 'CSV export')).not.toThrow();
    expect(() => checkWritablePath('/dev/null', 'recording', { motion: true })).not.toThrow();
  });

  it('a folder of figures: a file in its place, a missing parent, a figure already there without force', () => {
    writeFileSync(join(dir, 'notdir'), 'x');
    expect(() => checkWritableFolder(join(dir, 'notdir'), ['a.svg'], 'figures')).toThrow(/is not a folder: the figures go into a folder/);
    expect(() => checkWritableFolder('/nonexistent/figs', ['a.svg'], 'figures')).toThrow(/the folder \/nonexistent does not exist/);
    expect(() => checkWritableFolder(join(dir, 'new'), ['a.svg'], 'figures')).not.toThrow(); // made at the write
    mkdirSync(join(dir, 'figs'));
    writeFileSync(join(dir, 'figs', 'a.svg'), '<svg/>');
    expect(() => checkWritableFolder(join(dir, 'figs'), ['a.svg'], 'figures')).toThrow(/a\.svg: exists: the figures would replace it/);
    expect(() => checkWritableFolder(join(dir, 'figs'), ['a.svg'], 'figures', { force: true })).not.toThrow();
  });
});

describe('tune: --out and --plot checked before any motion, no overwrite without --force', () => {
  const TUNE = ['tune', '--rig', rig('mock-arm.json'), '--mock', '--yes', '--joint', '2'];
  it("--out /nonexistent/t.json (the issue's example): exit 2 before motion", () =>
    refused([...TUNE, '--out', '/nonexistent/t.json'], /^twolink: \/nonexistent\/t\.json: the folder \/nonexistent does not exist\n$/));
  it('--out a directory', async () => {
    const cwd = fresh();
    mkdirSync(join(cwd, 'd'));
    await refused([...TUNE, '--out', 'd'], /d: is a directory: give a file name for the tuned rig file/, cwd);
  });
  it('--out /dev/full', () => refused([...TUNE, '--out', '/dev/full'], /\/dev\/full: is \/dev\/full, a device that refuses every write/));
  it('--out an existing file: refused without --force, the file unchanged', async () => {
    const cwd = fresh();
    writeFileSync(join(cwd, 'keep.json'), 'keep me\n');
    await refused(
      [...TUNE, '--out', 'keep.json'],
      /keep\.json: exists: the tuned rig file would replace it; give --force to write over it/,
      cwd,
    );
    expect(readFileSync(join(cwd, 'keep.json'), 'utf8')).toBe('keep me\n');
  });
  it('the default --out (runs/NAME.tuned.json) already there: refused without --force', async () => {
    const cwd = fresh();
    mkdirSync(join(cwd, 'runs'));
    writeFileSync(join(cwd, 'runs', 'mock-arm.tuned.json'), 'keep me\n');
    await refused(TUNE, /runs\/mock-arm\.tuned\.json: exists: the tuned rig file would replace it; give --force/, cwd);
  });
  it('--plot: a file in place of the folder, a missing parent, a figure already there', async () => {
    const cwd = fresh();
    writeFileSync(join(cwd, 'figs'), 'x');
    await refused([...TUNE, '--out', 'o.json', '--plot', 'figs'], /figs: is not a folder: the figures go into a folder/, cwd);
    await refused([...TUNE, '--out', 'o.json', '--plot', '/nonexistent/figs'], /the folder \/nonexistent does not exist/, cwd);
    mkdirSync(join(cwd, 'old'));
    writeFileSync(join(cwd, 'old', 'bode-joint2.svg'), '<svg/>');
    await refused(
      [...TUNE, '--out', 'o.json', '--plot', 'old'],
      /old\/bode-joint2\.svg: exists: the figures would replace it; give --force/,
      cwd,
    );
    expect(readdirSync(cwd).sort()).toEqual(['figs', 'old']);
  });
});

describe('the other commands that write, before anything moves', () => {
  it('run --record: a missing folder, a directory', async () => {
    const RUN = ['run', '--rig', rig('mock-arm.json'), '--mock', '--traj', 'reach', '--json'];
    await refused([...RUN, '--record', '/nonexistent/r.ndjson'], /the folder \/nonexistent does not exist/);
    const cwd = fresh();
    mkdirSync(join(cwd, 'r.ndjson'));
    await refused([...RUN, '--record', 'r.ndjson'], /r\.ndjson: is a directory/, cwd);
  });

  it('identify --out and --record: a missing folder, /dev/full, an existing file', async () => {
    const ID = ['identify', '--rig', rig('mock-arm-far.json'), '--mock'];
    await refused([...ID, '--out', '/nonexistent/id.json'], /the folder \/nonexistent does not exist/);
    await refused([...ID, '--out', '/dev/full'], /\/dev\/full: is \/dev\/full, a device that refuses every write/);
    const cwd = fresh();
    writeFileSync(join(cwd, 'id.json'), '{}\n');
    await refused([...ID, '--out', 'id.json'], /id\.json: exists: the identified rig file would replace it; give --force/, cwd);
  });

  it('teach --out: a missing folder, /dev/full, an existing file (after the arguments are checked)', async () => {
    const TEACH = ['teach', '--rig', rig('mock-arm-identified.json'), '--mock', '--hand', 'line'];
    await refused([...TEACH, '--out', '/nonexistent/t.json'], /the folder \/nonexistent does not exist/);
    await refused([...TEACH, '--out', '/dev/full'], /\/dev\/full: is \/dev\/full/);
    await refused([...TEACH, '--out', '/nonexistent/t.json', '--rate', '5'], /--rate: 5 Hz is out of range/);
    const cwd = fresh();
    writeFileSync(join(cwd, 't.json'), 'keep me\n');
    await refused([...TEACH, '--out', 't.json'], /t\.json: exists: the trajectory file would replace it; give --force/, cwd);
  });

  it('setup --out a missing folder; hil --junit a missing folder (before any scenario runs)', async () => {
    await refused(['setup', '--rig', rig('mock-arm.json'), '--mock', '--yes', '--out', '/nonexistent/r.json'], /\/nonexistent/);
    await refused(
      ['hil', join(ROOT, 'examples/hil/suite.json'), '--junit', '/nonexistent/h.xml'],
      /^twolink: --junit \/nonexistent\/h\.xml: the folder \/nonexistent does not exist/,
    );
  });

  it('urdf --out over an existing file: only with --force', async () => {
    const cwd = fresh();
    writeFileSync(join(cwd, 'arm.urdf'), 'keep me\n');
    await refused(
      ['urdf', '--rig', rig('mock-arm.json'), '--out', 'arm.urdf'],
      /arm\.urdf: exists: the URDF would replace it; give --force/,
      cwd,
    );
    const r = await twolinkIn(['urdf', '--rig', rig('mock-arm.json'), '--out', 'arm.urdf', '--force'], { cwd });
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(join(cwd, 'arm.urdf'), 'utf8')).toMatch(/<robot/);
  });
});
