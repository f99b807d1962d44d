// Issue 34 item 5: a native-USB board (Leonardo/Micro) is never opened at 1200 baud, since closing a
// port opened at 1200 baud makes it jump to its bootloader (the "1200 bps touch" used to flash it).
// twolink flashes no board: --baud 1200 on such a rig is refused (exit 2) before any port is opened.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadRig } from '../src/config/load.js';
import { bootloaderBaudRefusal } from '../src/config/cable.js';
import { openEnd } from '../src/run/compose.js';
import { RealClock } from '../src/time/clock.js';
import { twolink } from './helpers/cli.js';

// A port that does not exist: a refusal comes before the open (an open would fail "no such serial port", exit 3).
const NO_PORT = '/dev/ttyACM77';

describe('bootloaderBaudRefusal', () => {
  it('refuses 1200 baud on a native-USB board only, saying why', () => {
    expect(bootloaderBaudRefusal({ board: 'leonardo', adapter: 'native' }, 1200)).toMatch(/bootloader/);
    expect(bootloaderBaudRefusal({ board: 'micro', adapter: 'native' }, 1200)).toMatch(/board "micro"/);
    // a board named other but wired through its own USB is the same
    expect(bootloaderBaudRefusal({ board: 'other', adapter: 'native' }, 1200)).toBeDefined();
    expect(bootloaderBaudRefusal({ board: 'leonardo', adapter: 'native' }, 9600)).toBeUndefined();
    expect(bootloaderBaudRefusal({ board: 'uno', adapter: '16u2' }, 1200)).toBeUndefined();
  });

  it('the rig file of a Leonardo is a native-USB board', () => {
    const rig = loadRig('rigs/mock-arm-leonardo.json');
    expect(rig.cable).toMatchObject({ board: 'leonardo', adapter: 'native' });
  });

  it('opening the port itself refuses it too, for any caller that skipped the command line', async () => {
    const rig = loadRig('rigs/mock-arm-leonardo.json');
    await expect(openEnd(rig, { kind: 'port', path: NO_PORT, baudRate: 1200 }, new RealClock())).rejects.toMatchObject({
      reason: 'config',
      message: expect.stringMatching(/^\/dev\/ttyACM77: 1200 baud on a native-USB board/),
    });
  });
});

describe('the commands refuse --baud 1200 on a Leonardo rig: exit 2, one line saying why', () => {
  const refused =
    /^twolink: --baud 1200: rigs\/mock-arm-leonardo\.json: 1200 baud on a native-USB board \(board "leonardo": its own USB, a Leonardo\/Micro\) is refused: closing a port opened at 1200 baud makes such a board jump to its bootloader .*twolink does not flash boards/;
  const cases: [string, string[]][] = [
    ['run', ['run', '--rig', 'rigs/mock-arm-leonardo.json', '--port', NO_PORT, '--baud', '1200', '--traj', 'reach']],
    ['identify', ['identify', '--rig', 'rigs/mock-arm-leonardo.json', '--port', NO_PORT, '--baud', '1200']],
    ['doctor', ['doctor', '--rig', 'rigs/mock-arm-leonardo.json', '--port', NO_PORT, '--baud', '1200']],
  ];
  for (const [name, args] of cases) {
    it(name, async () => {
      const r = await twolink(args);
      expect(r.stderr).toMatch(refused);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.code).toBe(2);
    });
  }

  // The rig file's own link.baudRate of 1200: every command that opens a port refuses it the same way
  // (teach and tune have no --baud, so only the rig file can ask for it).
  const leo1200 = join(mkdtempSync(join(tmpdir(), 'twolink-baud-')), 'leo1200.json');
  const spec = JSON.parse(readFileSync('rigs/mock-arm-leonardo.json', 'utf8')) as { link: Record<string, unknown> };
  writeFileSync(leo1200, JSON.stringify({ ...spec, link: { ...spec.link, baudRate: 1200 } }));
  const fromFile: [string, string[]][] = [
    ['run', ['--traj', 'reach']],
    ['identify', []],
    ['doctor', []],
    ['setup', []],
    ['teach', ['--out', join(tmpdir(), 'twolink-never-written.json')]],
    ['tune', []],
  ];
  for (const [name, more] of fromFile) {
    it(`${name}: a rig file's link.baudRate 1200`, async () => {
      const r = await twolink([name, '--rig', leo1200, '--port', NO_PORT, ...more]);
      expect(r.stderr).toContain(`twolink: link.baudRate 1200: ${leo1200}: 1200 baud on a native-USB board`);
      expect(r.stderr).not.toMatch(/no such serial port/);
      expect(r.code).toBe(2);
    });
  }

  it('other baud rates on the Leonardo, and 1200 on an Uno, are not refused (the open is tried: no such port, exit 3)', async () => {
    for (const args of [
      ['run', '--rig', 'rigs/mock-arm-leonardo.json', '--port', NO_PORT, '--baud', '9600', '--traj', 'reach'],
      ['run', '--rig', 'rigs/mock-arm.json', '--port', NO_PORT, '--baud', '1200', '--traj', 'reach'],
    ]) {
      const r = await twolink(args);
      expect(r.stderr).toMatch(/no such serial port/);
      expect(r.code).toBe(3);
    }
  });
});
