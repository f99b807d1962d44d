// Issue 34: the serial path of each OS (--serial, the rig file's link.serial), the priority a user gets
// on macOS and Windows (os.setPriority through a fake of each OS's answers), the Node lines twolink
// supports (package.json engines and the serialport stall of Node >= 26.4), the serial relay's
// argument, and serialport's native binding loading from its prebuild (npm runs no install script).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import os from 'node:os';
import { twolink } from './helpers/cli.js';
import { parseRigFile } from '../src/config/rig.js';
import { platformChecks, serialBinding, type PlatformInfo } from '../src/cli/doctor-checks.js';
import { nodeSupport, nodeVersion, serialportStall, SUPPORTED_NODE_LINES } from '../src/time/platform.js';
import { raiseProcessPriority, type PriorityOs } from '../src/time/priority.js';
import { noRealtimeLine } from '../src/time/threads.js';
import { resolveSerialPath } from '../src/transport/open.js';
import { parseRelayArgs } from '../src/transport/relay-wire.js';

const P = os.constants.priority;

/** Windows's answers (documented for os.setPriority): a user's REALTIME becomes HIGH; the class reads back as its number. */
function fakeWindows(admin: boolean): PriorityOs & { set: number[] } {
  let value = 0;
  const set: number[] = [];
  return {
    set,
    setPriority: (_pid, p) => {
      set.push(p);
      value = p <= P.PRIORITY_HIGHEST && !admin ? P.PRIORITY_HIGH : p;
    },
    getPriority: () => value,
  };
}

/** macOS for a user: any negative nice value is refused (EACCES). */
const fakeMacUser: PriorityOs = {
  setPriority: (_pid, p) => {
    if (p < 0)
      throw Object.assign(new Error('A system error occurred: uv_os_setpriority returned EACCES (permission denied)'), {
        code: 'ERR_SYSTEM_ERROR',
      });
  },
  getPriority: () => 0,
};

describe('the serial path of each OS', () => {
  it('auto is tty on Linux and serialport on macOS and Windows; tty off Linux is refused with the fix', () => {
    expect(resolveSerialPath('auto', 'linux')).toBe('tty');
    expect(resolveSerialPath(undefined, 'linux')).toBe('tty');
    expect(resolveSerialPath('auto', 'darwin')).toBe('serialport');
    expect(resolveSerialPath('auto', 'win32')).toBe('serialport');
    expect(resolveSerialPath('serialport', 'linux')).toBe('serialport');
    expect(resolveSerialPath('tty', 'linux')).toBe('tty');
    expect(() => resolveSerialPath('tty', 'darwin')).toThrow(/--serial tty is the Linux path.*on darwin use --serial serialport/);
    expect(() => resolveSerialPath('tty', 'win32')).toThrow(/on win32 use --serial serialport/);
  });

  it("the rig file's link.serial takes auto, tty or serialport and names the field otherwise", () => {
    const base = JSON.parse(readFileSync('rigs/mock-arm.json', 'utf8')) as Record<string, unknown>;
    const withSerial = (serial: unknown): unknown => ({ ...base, link: { ...(base.link as object), serial } });
    expect(parseRigFile(withSerial('serialport'), 'x.json').link.serial).toBe('serialport');
    expect(parseRigFile(base, 'x.json').link.serial).toBeUndefined();
    expect(() => parseRigFile(withSerial('usb'), 'x.json')).toThrow(/link\.serial/);
  });

  it('--serial is checked: a word outside the three, and --serial without --port, are usage errors', async () => {
    const bad = await twolink(['run', '--rig', 'rigs/mock-arm.json', '--port', '/dev/null', '--serial', 'usb']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--serial: "usb" is not one of auto, tty, serialport/);
    const mock = await twolink(['run', '--rig', 'rigs/mock-arm.json', '--mock', '--serial', 'serialport']);
    expect(mock.code).toBe(2);
    expect(mock.stderr).toMatch(/--serial serialport goes with --port/);
  });

  it("the relay's argument is validated field by field", () => {
    expect(
      parseRelayArgs(
        JSON.stringify({ path: '/dev/ttyACM0', baudRate: 115200, lock: true, hupcl: true, rt: false, rtPriority: 41, nudge: true }),
      ),
    ).toMatchObject({ path: '/dev/ttyACM0', baudRate: 115200 });
    expect(() => parseRelayArgs('{nope')).toThrow(/not JSON/);
    expect(() =>
      parseRelayArgs(JSON.stringify({ path: '', baudRate: -1, lock: true, hupcl: true, rt: false, rtPriority: 41, nudge: true })),
    ).toThrow(/path: .*baudRate: /);
  });

  it("serialport's native binding loads from its prebuild (package.json allowScripts keeps npm from running its install script)", () => {
    const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { allowScripts?: Record<string, boolean> };
    expect(pkg.allowScripts?.['@serialport/bindings-cpp']).toBe(false);
    const b = serialBinding();
    expect(b).toHaveProperty('file');
    if ('file' in b) expect(b.file).toMatch(/[\\/]prebuilds[\\/].*\.node$/);
  });
});

describe('priority without admin rights', () => {
  it('Windows: asks for HIGH (never REALTIME) and reports the class it reads back', () => {
    const w = fakeWindows(false);
    expect(raiseProcessPriority(1234, 'win32', w)).toEqual({ kind: 'raised', value: P.PRIORITY_HIGH, name: 'HIGH priority class' });
    expect(w.set).toEqual([P.PRIORITY_HIGH]);
    // an administrator gets the same: twolink does not take REALTIME, which outranks the machine's input and disk
    expect(raiseProcessPriority(1234, 'win32', fakeWindows(true))).toMatchObject({ name: 'HIGH priority class' });
  });

  it('macOS: a user is refused any negative nice value: normal priority, with the reason and the way to more', () => {
    const p = raiseProcessPriority(1234, 'darwin', fakeMacUser);
    expect(p.kind).toBe('normal');
    if (p.kind === 'normal') expect(p.reason).toMatch(/^macOS gives a user no priority above normal without root \(sudo\): .*EACCES/);
    const line = noRealtimeLine('twolink', p.kind === 'normal' ? p.reason : '', 'darwin');
    expect(line).toMatch(/^twolink: WARNING: normal priority \(macOS gives/);
    expect(line).toMatch(/start twolink with sudo/);
    expect(line.split('\n')).toHaveLength(1);
  });

  it('a policy that takes only ABOVE_NORMAL is read back as that', () => {
    let v = 0;
    const capped: PriorityOs = {
      setPriority: (_pid, p) => {
        if (p < P.PRIORITY_ABOVE_NORMAL) throw new Error('EPERM');
        v = p;
      },
      getPriority: () => v,
    };
    expect(raiseProcessPriority(1, 'win32', capped)).toEqual({
      kind: 'raised',
      value: P.PRIORITY_ABOVE_NORMAL,
      name: 'ABOVE_NORMAL priority class',
    });
    expect(raiseProcessPriority(1, 'darwin', capped)).toEqual({
      kind: 'raised',
      value: P.PRIORITY_ABOVE_NORMAL,
      name: `nice ${P.PRIORITY_ABOVE_NORMAL}`,
    });
  });
});

describe('Node versions', () => {
  it('engines names the supported LTS lines (22, 24) and still 20 (end of life, unsupported)', () => {
    const engines = (JSON.parse(readFileSync('package.json', 'utf8')) as { engines: { node: string } }).engines.node;
    const lines = [...engines.matchAll(/\^(\d+)\./g)].map((m) => Number(m[1]));
    expect(lines).toEqual([20, ...SUPPORTED_NODE_LINES]);
    expect(nodeSupport('v22.12.0')).toEqual({ status: 'supported', line: 22 });
    expect(nodeSupport('24.1.0')).toEqual({ status: 'supported', line: 24 });
    expect(nodeSupport('v20.19.0')).toMatchObject({ status: 'end-of-life', note: expect.stringMatching(/April 2026/) });
    expect(nodeSupport('v26.12.1')).toMatchObject({ status: 'untested' });
    expect(() => nodeVersion('twenty')).toThrow(/not a Node version: "twenty"/);
  });

  it("the serialport path stalls from Node 26.4 on without the relay's workaround: said with the upstream PR; not before", () => {
    expect(serialportStall('v24.22.3')).toBeUndefined();
    expect(serialportStall('v26.3.1')).toBeUndefined();
    expect(serialportStall('v26.4.0')).toMatch(/serialport\/bindings-cpp PR #239/);
    expect(serialportStall('v27.0.0')).toMatch(
      /relay wakes each read itself; if a run stalls, use --serial tty on Linux, or Node 22 or 24/,
    );
  });

  it("doctor's platform checks: Node's status, the serial path (a fail where the OS has none), the priority", () => {
    const base: PlatformInfo = {
      os: 'darwin 23.0.0 arm64',
      node: 'v26.12.1',
      nodeStatus: 'untested',
      nodeNote: 'Node 26 is not a line twolink tests (22 and 24 are)',
      serial: {
        choice: 'auto',
        path: 'serialport',
        problem: serialportStall('v26.12.1')!,
        binding: { file: '/x/prebuilds/darwin-x64+arm64/b.node' },
      },
      priority: { granted: false, what: 'normal (macOS gives a user no priority above normal without root (sudo))' },
    };
    const c = Object.fromEntries(platformChecks(base).map((x) => [x.name, x]));
    expect(c.Node).toMatchObject({ status: 'warn', fix: expect.stringMatching(/Node 22 or 24/) });
    expect(c['serial path']).toMatchObject({ status: 'warn', evidence: expect.stringMatching(/PR #239/) });
    expect(c.priority).toMatchObject({ status: 'warn', evidence: expect.stringMatching(/^normal/) });
    const noTty = platformChecks({
      ...base,
      serial: { choice: 'tty', path: null, problem: 'no tty path on darwin', binding: { error: 'x' } },
    });
    expect(noTty.find((x) => x.name === 'serial path')).toMatchObject({ status: 'fail', fix: 'use --serial serialport (or auto)' });
    const noBinding = platformChecks({
      ...base,
      serial: { ...base.serial, problem: null, binding: { error: 'No native build was found' } },
    });
    expect(noBinding.find((x) => x.name === 'serial path')).toMatchObject({ status: 'fail', fix: expect.stringMatching(/npm ci/) });
  });
});
