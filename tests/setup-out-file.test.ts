// Where `twolink setup` writes the rig file is checked before the arm first moves (an empty path, a
// folder, a FIFO, a device, a folder that takes no file: exit 2, one line naming the path, and the
// mock never driven), and a file it replaces is backed up, through a symlink too.
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { loadRig } from '../src/config/load.js';
import { FileError } from '../src/config/files.js';
import { checkOutFile, writeOutFile } from '../src/setup/out-file.js';
import { lastJson, twolink } from './helpers/cli.js';
import { CHILD_GUARD_MS, HANG_GUARD_MS } from './helpers/setup-person.js';

// Hang guards only: the tests wait for events.
vi.setConfig({ testTimeout: HANG_GUARD_MS, hookTimeout: HANG_GUARD_MS });

const dir = realpathSync(mkdtempSync(join(tmpdir(), 'twolink-setup-out-')));
const RIG = 'rigs/mock-arm.json';
const original = readFileSync(RIG, 'utf8');
const root = process.getuid?.() === 0;

function copyRig(name: string): string {
  const p = join(dir, name);
  writeFileSync(p, original);
  return p;
}

describe('setup --out: checked before the arm moves', () => {
  const fifo = join(dir, 'fifo');
  execFileSync('mkfifo', [fifo]);
  it.each([
    ['an empty path', '', /--out: the path is empty/],
    ['a folder', dir, /is a directory: the rig file must go to a regular file/],
    ['a FIFO (would hang)', fifo, /is a named pipe \(FIFO\): the rig file must go to a regular file/],
    ['a device', '/dev/null', /\/dev\/null: is a device/],
    ['a folder that does not exist', join(dir, 'nope', 'x.json'), /the folder .*nope does not exist/],
    // sysfs takes no new file, even from root (a read-only folder for any user)
    [
      'a folder that takes no file',
      '/sys/twolink-setup.json',
      /\/sys\/twolink-setup.json: cannot write in its folder \/sys: permission denied/,
    ],
  ])(
    '%s: exit 2, one line, nothing moved',
    async (_what, out, msg) => {
      const r = await twolink(['setup', '--rig', RIG, '--mock', '--yes', '--out', out], { timeoutMs: CHILD_GUARD_MS });
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toMatch(msg);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      // Nothing ran: no step was reported.
      expect(r.stderr).not.toMatch(/twolink setup:|\[PASS\]/);
    },
    HANG_GUARD_MS,
  );

  it.skipIf(root)(
    '--rig in a read-only folder (no --out: the file would be replaced there): exit 2 before any motion',
    async () => {
      const ro = join(dir, 'ro');
      mkdirSync(ro);
      const rig = join(ro, 'arm.json');
      writeFileSync(rig, original);
      chmodSync(ro, 0o555);
      try {
        const r = await twolink(['setup', '--rig', rig, '--mock', '--yes'], { timeoutMs: CHILD_GUARD_MS });
        expect(r.code, r.stderr).toBe(2);
        expect(r.stderr).toMatch(/cannot write in its folder .*ro: permission denied/);
        expect(r.stderr).not.toMatch(/twolink setup:/);
      } finally {
        chmodSync(ro, 0o755);
      }
    },
    HANG_GUARD_MS,
  );

  it('checkOutFile refuses a folder that takes no file with the reason (as root too: sysfs)', () => {
    expect(() => checkOutFile(RIG, '/sys/x.json')).toThrow(FileError);
  });
});

describe('setup --out over an existing file: a backup first', () => {
  it(
    '--out naming another existing file: refused without --force (before the arm moves); with it, kept as .bak',
    async () => {
      const rig = copyRig('in.json');
      const out = join(dir, 'existing.json');
      writeFileSync(out, '{"mine": "a file I care about"}\n');
      const no = await twolink(['setup', '--rig', rig, '--mock', '--yes', '--json', '--no-identify', '--no-reach', '--out', out], {
        timeoutMs: CHILD_GUARD_MS,
      });
      expect(no.code).toBe(2);
      expect(no.stderr).toMatch(/existing\.json: exists: the rig file setup writes would replace it; give --force/);
      expect(no.stdout).toBe('');
      expect(readFileSync(out, 'utf8')).toBe('{"mine": "a file I care about"}\n');
      const r = await twolink(
        ['setup', '--rig', rig, '--mock', '--yes', '--json', '--no-identify', '--no-reach', '--out', out, '--force'],
        { timeoutMs: CHILD_GUARD_MS },
      );
      expect(r.code, r.stderr).toBe(0);
      expect(lastJson(r)).toMatchObject({ rigFile: out, backup: `${out}.bak` });
      expect(readFileSync(`${out}.bak`, 'utf8')).toBe('{"mine": "a file I care about"}\n');
      loadRig(out);
      expect(readFileSync(rig, 'utf8')).toBe(original);
    },
    HANG_GUARD_MS,
  );

  it(
    '--out a symlink to --rig: the rig file is backed up (not skipped), the link kept',
    async () => {
      const rig = copyRig('linked.json');
      const link = join(dir, 'link-to-rig.json');
      symlinkSync(rig, link);
      const r = await twolink(
        ['setup', '--rig', rig, '--mock', '--wiring', 'reverse-encoder=2', '--yes', '--json', '--no-identify', '--no-reach', '--out', link],
        { timeoutMs: CHILD_GUARD_MS },
      );
      expect(r.code, r.stderr).toBe(0);
      expect(lastJson(r)).toMatchObject({ rigFile: link, backup: `${rig}.bak` });
      expect(readFileSync(`${rig}.bak`, 'utf8')).toBe(original);
      expect(loadRig(rig).encoders[1]!.sign).toBe(-1);
      expect(realpathSync(link)).toBe(rig);
    },
    HANG_GUARD_MS,
  );

  it('a second backup does not overwrite the first', () => {
    const target = copyRig('twice.json');
    const o = checkOutFile(target, undefined);
    expect(o.isInput).toBe(true);
    expect(writeOutFile(o, '{"a":1}\n').backup).toBe(`${target}.bak`);
    expect(writeOutFile(o, '{"a":2}\n').backup).toBe(`${target}.bak1`);
    expect(readFileSync(`${target}.bak`, 'utf8')).toBe(original);
    expect(readFileSync(`${target}.bak1`, 'utf8')).toBe('{"a":1}\n');
    expect(readFileSync(target, 'utf8')).toBe('{"a":2}\n');
  });

  it('an existing --out too large for a rig file is refused up front (bounded read), not replaced', () => {
    const big = join(dir, 'big.json');
    writeFileSync(big, Buffer.alloc((1 << 20) + 1, 32));
    expect(() => checkOutFile(RIG, big)).toThrow(/larger than 1 MiB/);
    expect(existsSync(`${big}.bak`)).toBe(false);
  });
});
