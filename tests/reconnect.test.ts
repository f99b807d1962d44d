// `run --reconnect`'s pure parts (issue 34 item 4): finding the same board again (by USB serial number,
// by vendor:product and USB path, by the path given), telling a board that kept running from one that
// reset (the handshake's up=), and the plan that resumes after the gap (a soft start onto the plan).
import { describe, expect, it } from 'vitest';
import { bootVerdict, BOOT_SLACK_MS, findPort, portKey, waitForPort, type ListedPort } from '../src/run/reconnect.js';
import { pathRemainder, RESUME_RAMP_S, resumePaths, warpedTime } from '../src/run/resume-plan.js';
import { builtinPath } from '../src/model/builtins.js';
import { buildPath } from '../src/model/trajectory.js';
import { loadRig } from '../src/config/load.js';
import { decodeBoardFrame, encodeBoardFrame, type BoardInfo } from '../src/protocol/codec.js';
import { zeroIsHanging } from '../src/run/resume-gate.js';

// Ports as serialport's list() gives them on Linux (udev): an Uno R3 (16U2, 2341:0043) with a serial
// number, a CH340 clone (1a86:7523) that has none, and a pty (not listed at all).
const UNO: ListedPort = {
  path: '/dev/ttyACM0',
  serialNumber: '85735313932351F0B1C1',
  vendorId: '2341',
  productId: '0043',
  locationId: 'pci-0000:00:14.0-usb-0:2:1.0',
};
const CH340: ListedPort = { path: '/dev/ttyUSB0', vendorId: '1a86', productId: '7523', locationId: 'pci-0000:00:14.0-usb-0:3:1.0' };

describe('the same board, found again', () => {
  it('a USB board with a serial number: found by it under a new name, not by its old path', () => {
    const key = portKey('/dev/serial/by-id/usb-Arduino_Uno-if00', '/dev/ttyACM0', [UNO, CH340]);
    expect(key).toEqual({ kind: 'usb-serial', vendorId: '2341', productId: '0043', serialNumber: UNO.serialNumber });
    // Back as /dev/ttyACM1 (the old node was still held when it came back).
    expect(findPort(key, [CH340, { ...UNO, path: '/dev/ttyACM1' }], () => true)).toBe('/dev/ttyACM1');
    // Another Uno (another serial number) on the old path is not it.
    expect(findPort(key, [{ ...UNO, serialNumber: 'OTHER' }], () => true)).toBeUndefined();
    // Upper-case hex from another OS matches.
    expect(findPort(key, [{ ...UNO, vendorId: '2341', productId: '0043'.toUpperCase() }], () => false)).toBe('/dev/ttyACM0');
  });

  it('a USB board without a serial number: found by vendor:product and its USB path (the same socket)', () => {
    const key = portKey('/dev/ttyUSB0', '/dev/ttyUSB0', [UNO, CH340]);
    expect(key).toEqual({ kind: 'usb-location', vendorId: '1a86', productId: '7523', locationId: CH340.locationId });
    expect(findPort(key, [{ ...CH340, path: '/dev/ttyUSB1' }], () => false)).toBe('/dev/ttyUSB1');
    // The same clone in another socket is another board.
    expect(findPort(key, [{ ...CH340, locationId: 'pci-0000:00:14.0-usb-0:4:1.0' }], () => true)).toBeUndefined();
  });

  it('a port that is no USB device (a pty behind a symlink): by the path given, when it exists', () => {
    const key = portKey('/tmp/board', '/dev/pts/7', [UNO]);
    expect(key).toEqual({ kind: 'path', path: '/tmp/board' });
    expect(findPort(key, [], (p) => p === '/tmp/board')).toBe('/tmp/board');
    expect(findPort(key, [], () => false)).toBeUndefined();
    // No udev (list() rejected: an empty list): the path too.
    expect(portKey('/dev/ttyACM0', '/dev/ttyACM0', [])).toEqual({ kind: 'path', path: '/dev/ttyACM0' });
  });

  it('waitForPort: found once it appears, a timeout, and an abort (Ctrl-C) ends the wait', async () => {
    let now = 0;
    let looks = 0;
    const exists = (): boolean => ++looks >= 3;
    const found = await waitForPort({
      key: { kind: 'path', path: '/x' },
      timeoutS: 10,
      signal: new AbortController().signal,
      list: () => Promise.resolve([]),
      exists,
      pollMs: 1,
      now: () => (now += 0.1),
    });
    expect(found).toMatchObject({ kind: 'found', path: '/x' });
    const left: number[] = [];
    const timeout = await waitForPort({
      key: { kind: 'path', path: '/x' },
      timeoutS: 0.5,
      signal: new AbortController().signal,
      list: () => Promise.resolve([]),
      exists: () => false,
      pollMs: 1,
      now: () => (now += 0.1),
      onTick: (l) => left.push(l),
    });
    expect(timeout.kind).toBe('timeout');
    // The countdown goes down.
    expect(left.length).toBeGreaterThan(1);
    expect(left.every((l, i) => i === 0 || l < left[i - 1]!)).toBe(true);
    const ac = new AbortController();
    const p = waitForPort({
      key: { kind: 'usb-serial', vendorId: '2341', productId: '0043', serialNumber: 'x' },
      timeoutS: 3600,
      signal: ac.signal,
      list: () => Promise.reject(new Error('spawn udevadm ENOENT')),
      pollMs: 60_000,
    });
    ac.abort();
    expect((await p).kind).toBe('aborted');
  });
});

describe('a board that kept running, told from one that reset', () => {
  it('kept running: its uptime grew by the time away (within the slack)', () => {
    expect(bootVerdict({ uptimeMs: 60_000, hostMs: 1_000 }, { uptimeMs: 62_100, hostMs: 3_000 })).toEqual({
      kind: 'kept-running',
      awayMs: 2_000,
      grewMs: 2_100,
    });
  });
  it('reset: an uptime that went back, or grew less than the time away', () => {
    expect(bootVerdict({ uptimeMs: 60_000, hostMs: 1_000 }, { uptimeMs: 900, hostMs: 3_000 }).kind).toBe('reset');
    expect(bootVerdict({ uptimeMs: 60_000, hostMs: 0 }, { uptimeMs: 60_000 + 2_000 - BOOT_SLACK_MS - 50, hostMs: 2_000 }).kind).toBe(
      'reset',
    );
    // A board that reset long enough ago (uptime larger) but not by the time away: reset too.
    expect(bootVerdict({ uptimeMs: 500, hostMs: 0 }, { uptimeMs: 10_000, hostMs: 2_000 }).kind).toBe('reset');
  });
  it('unknown (older firmware without up=, Firmata): the caller treats it as reset', () => {
    expect(bootVerdict({ uptimeMs: undefined, hostMs: 0 }, { uptimeMs: 5, hostMs: 1 }).kind).toBe('unknown');
    expect(bootVerdict({ uptimeMs: 5, hostMs: 0 }, { uptimeMs: undefined, hostMs: 1 }).kind).toBe('unknown');
  });
  it("the handshake carries up= (the mock's identity frame; optional on decode)", () => {
    const info: BoardInfo = {
      fw: 'twolink-mock/1.0.0',
      proto: 1,
      board: 'mock',
      joints: 2,
      cpr: [4800, 2400],
      pwm: 1000,
      torque: false,
      maxrate: 1000,
      wdt: 100,
      up: 1234,
    };
    const line = encodeBoardFrame({ type: 'I', seq: 0, ack: null, info });
    expect(line).toContain(' up=1234*');
    const d = decodeBoardFrame(line.trimEnd(), 2);
    expect(d.ok && d.frame.type === 'I' && d.frame.info.up).toBe(1234);
    const { up: _up, ...old } = info;
    const d2 = decodeBoardFrame(encodeBoardFrame({ type: 'I', seq: 0, ack: null, info: old }).trimEnd(), 2);
    expect(d2.ok && d2.frame.type === 'I' && d2.frame.info.up).toBeUndefined();
  });
  it("the zero can be re-taken by the hanging pose only where the rig file's zero is it", () => {
    const rig = loadRig('rigs/mock-arm.json');
    expect(zeroIsHanging(rig)).toBe(true);
    expect(zeroIsHanging({ ...rig, encoders: rig.encoders.map((e) => ({ ...e, zero: 0 })) })).toBe(false);
  });
});

describe('the plan after the gap', () => {
  const rig = loadRig('rigs/mock-arm.json');
  const arm = rig.arm;
  const reach = builtinPath(arm, 'reach')!;
  const point = builtinPath(arm, 'point')!;

  it("the soft start: the plan's clock starts at rest, with no jump in its rate, and runs at full speed after the ramp", () => {
    expect(warpedTime(0)).toBe(0);
    const h = 1e-6;
    expect((warpedTime(h) - warpedTime(0)) / h).toBeLessThan(1e-6);
    const rateAtRamp = (warpedTime(RESUME_RAMP_S + h) - warpedTime(RESUME_RAMP_S - h)) / (2 * h);
    expect(rateAtRamp).toBeCloseTo(1, 6);
    expect(warpedTime(RESUME_RAMP_S)).toBeCloseTo(RESUME_RAMP_S / 2, 12);
    expect(warpedTime(2)).toBeCloseTo(2 - RESUME_RAMP_S / 2, 12);
  });

  it('the remainder of a reach cut 0.4 s in: starts where the plan was, at rest, ends where the reach ends', () => {
    const r = pathRemainder(arm, reach, 0.4)!;
    const startQ = buildPath(arm, reach.start, [{ kind: 'hold', duration: 0 }]).sample(0).q;
    const main = buildPath(arm, { q: startQ, elbow: 'down' }, reach.steps);
    const t = buildPath(arm, r.start, r.steps);
    const s0 = t.sample(0);
    const cut = main.sample(0.4);
    for (let j = 0; j < 2; j++) {
      expect(s0.q[j]).toBeCloseTo(cut.q[j]!, 9);
      expect(Math.abs(s0.qd[j]!)).toBeLessThan(1e-9);
    }
    // The plan was moving there: the remainder is not asked to jump to that speed.
    expect(Math.hypot(...cut.qd)).toBeGreaterThan(0.5);
    const end = t.sample(t.duration);
    const mainEnd = main.sample(main.duration);
    for (let j = 0; j < 2; j++) expect(end.q[j]).toBeCloseTo(mainEnd.q[j]!, 6);
    // The peak joint speed stays near the plan's own (no catching up).
    let peak = 0;
    let planPeak = 0;
    for (let k = 0; k <= 400; k++) {
      peak = Math.max(peak, ...t.sample((t.duration * k) / 400).qd.map(Math.abs));
      planPeak = Math.max(planPeak, ...main.sample((main.duration * k) / 400).qd.map(Math.abs));
    }
    expect(peak).toBeLessThan(planPeak * 1.1);
  });

  it('resumePaths: in the track phase the remainder and the rest, in the approach the path again, after it the rest, with nothing left a hold', () => {
    const paths = [reach, point];
    expect(resumePaths(arm, paths, false, { pathIndex: 0, phase: 'track', trackS: 0.4 }).map((p) => p.name)).toEqual([
      'reach (resumed)',
      'point',
    ]);
    expect(resumePaths(arm, paths, false, { pathIndex: 0, phase: 'approach' }).map((p) => p.name)).toEqual(['reach', 'point']);
    expect(resumePaths(arm, paths, false, { pathIndex: 0, phase: 'park' }).map((p) => p.name)).toEqual(['point']);
    expect(resumePaths(arm, paths, false, { pathIndex: -1, phase: 'none' }).map((p) => p.name)).toEqual(['reach', 'point']);
    expect(resumePaths(arm, paths, false, { pathIndex: 1, phase: 'none' }).map((p) => p.name)).toEqual(['hold (resumed)']);
    // --cycle: from the interrupted path, whole.
    expect(resumePaths(arm, paths, true, { pathIndex: 3, phase: 'track', trackS: 1 }).map((p) => p.name)).toEqual(['point', 'reach']);
  });
});
