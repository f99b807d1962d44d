// twolink doctor: the JSON shape, the round trip through each adapter model on the mock (virtual
// time: a property of the model, not of this machine's load), and the sysfs reading of an adapter
// from a fake /sys (an FTDI at 16 ms gets the exact fix; a pty is not a USB device).
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { twolink } from './helpers/cli.js';
import { adapterCheck, adapterInfo, kernelInfo, realtimeInfo, systemChecks } from '../src/cli/doctor-checks.js';
import { recommend } from '../src/cli/doctor-command.js';
import { hangGuardMs } from './helpers/hang-guard.js';

async function doctorJson(adapter: string, extra: string[] = []): Promise<Record<string, any>> {
  const r = await twolink(['doctor', '--mock', '--rig', 'rigs/mock-arm.json', '--adapter', adapter, '--pings', '400', '--json', ...extra], {
    timeoutMs: 120_000,
  });
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout.trim().split('\n').pop()!);
}

describe('twolink doctor --mock (virtual time through the adapter model)', () => {
  it(
    'gives {kernel, realtime, adapter, roundTripUs, recommend, checks} with pass/warn/fail, evidence and fix',
    async () => {
      const d = await doctorJson('16u2');
      for (const k of ['kernel', 'realtime', 'adapter', 'roundTripUs', 'recommend', 'checks']) expect(d).toHaveProperty(k);
      expect(Object.keys(d.adapter)).toEqual(expect.arrayContaining(['kind', 'vid', 'pid', 'latencyTimerMs', 'flushMs']));
      expect(Object.keys(d.roundTripUs)).toEqual(expect.arrayContaining(['p50', 'p99', 'p999', 'max']));
      expect(Object.keys(d.recommend)).toEqual(expect.arrayContaining(['rateHz', 'answerDelaySamples']));
      expect(typeof d.kernel.version).toBe('string');
      expect(d.checks.length).toBeGreaterThanOrEqual(6);
      for (const c of d.checks) {
        expect(['pass', 'warn', 'fail']).toContain(c.status);
        expect(typeof c.name).toBe('string');
        expect(typeof c.evidence).toBe('string');
        expect(c.fix === null || typeof c.fix === 'string').toBe(true);
      }
      expect(d.checks.map((c: { name: string }) => c.name)).toEqual(
        expect.arrayContaining(['kernel preemption', 'SCHED_FIFO allowed', 'memory locking', 'CPU governor', 'adapter', 'round trip']),
      );
      // The 16U2 model: Timer0 every 4.096 ms plus a USB frame each way.
      expect(d.adapter).toMatchObject({ kind: '16u2', flushMs: 4.096 });
      expect(d.roundTripUs.clock).toBe('virtual');
      expect(d.roundTripUs.max).toBeGreaterThanOrEqual(4000);
      expect(d.roundTripUs.max).toBeLessThanOrEqual(7000);
      expect(d.roundTripUs.p50).toBeGreaterThan(1500);
      expect(d.recommend.rateHz).toBe(500);
      expect(d.recommend.answerDelaySamples).toBe(3);
    },
    hangGuardMs(30_000),
  );

  it(
    'native: p99 at most 2.5 ms and 1 kHz recommended; FTDI at 16 ms: p50 at least 5 ms and 100 Hz',
    async () => {
      const n = await doctorJson('native');
      expect(n.roundTripUs.p99).toBeLessThanOrEqual(2500);
      expect(n.recommend.rateHz).toBe(1000);
      const f = await doctorJson('ftdi');
      expect(f.adapter).toMatchObject({ kind: 'ftdi', latencyTimerMs: 16, flushMs: 16 });
      expect(f.roundTripUs.p50).toBeGreaterThanOrEqual(5000);
      expect(f.recommend.rateHz).toBe(100);
      const tuned = await doctorJson('ftdi', ['--ftdi-latency', '1']);
      expect(tuned.roundTripUs.p50).toBeLessThan(f.roundTripUs.p50 / 3);
    },
    hangGuardMs(60_000),
  );

  it('refuses --port with --mock, and --adapter with --port', async () => {
    expect((await twolink(['doctor', '--mock', '--port', '/dev/null', '--rig', 'rigs/mock-arm.json'])).code).toBe(2);
    expect((await twolink(['doctor', '--port', '/dev/null', '--adapter', '16u2'])).code).toBe(2);
    expect((await twolink(['doctor', '--mock', '--rig', 'rigs/mock-arm.json', '--adapter', 'usb3'])).code).toBe(2);
  });
});

describe('doctor checks from a fake /proc and /sys', () => {
  /** A fake root with a USB serial device `tty` at vid:pid bound to `driver`. */
  function fakeRoot(tty: string, vid: string, pid: string, driver: string, latency?: string): string {
    const root = mkdtempSync(join(tmpdir(), 'doctor-'));
    const usb = join(root, 'sys/devices/pci0000:00/usb1/1-1');
    const intf = join(usb, '1-1:1.0', tty);
    mkdirSync(intf, { recursive: true });
    writeFileSync(join(usb, 'idVendor'), `${vid}\n`);
    writeFileSync(join(usb, 'idProduct'), `${pid}\n`);
    mkdirSync(join(root, 'sys/bus/usb-serial/drivers', driver), { recursive: true });
    symlinkSync(join(root, 'sys/bus/usb-serial/drivers', driver), join(intf, 'driver'));
    mkdirSync(join(root, 'sys/class/tty', tty), { recursive: true });
    symlinkSync(intf, join(root, 'sys/class/tty', tty, 'device'));
    if (latency !== undefined) {
      mkdirSync(join(root, 'sys/bus/usb-serial/devices', tty), { recursive: true });
      writeFileSync(join(root, 'sys/bus/usb-serial/devices', tty, 'latency_timer'), `${latency}\n`);
    }
    return root;
  }

  it('an FTDI with its latency timer at 16 ms: warn, and the exact command and udev rule that set it to 1', () => {
    const root = fakeRoot('ttyUSB3', '0403', '6001', 'ftdi_sio', '16');
    const a = adapterInfo('/dev/ttyUSB3', root);
    expect(a).toMatchObject({ kind: 'ftdi', vid: 0x0403, pid: 0x6001, driver: 'ftdi_sio', latencyTimerMs: 16, flushMs: 16, usb: true });
    const c = adapterCheck(a, '/dev/ttyUSB3');
    expect(c.status).toBe('warn');
    expect(c.fix).toContain('echo 1 | sudo tee /sys/bus/usb-serial/devices/ttyUSB3/latency_timer');
    expect(c.fix).toContain('ATTR{latency_timer}="1"');
    const tuned = adapterCheck(adapterInfo('/dev/ttyUSB3', fakeRoot('ttyUSB3', '0403', '6001', 'ftdi_sio', '1')), '/dev/ttyUSB3');
    expect(tuned.status).toBe('pass');
  });

  it('an Uno R3 is a 16U2, a Leonardo native, a CH340 a CH340; a pty is not a USB device', () => {
    expect(adapterInfo('/dev/ttyACM0', fakeRoot('ttyACM0', '2341', '0043', 'cdc_acm')).kind).toBe('16u2');
    expect(adapterInfo('/dev/ttyACM0', fakeRoot('ttyACM0', '2341', '8036', 'cdc_acm')).kind).toBe('native');
    expect(adapterInfo('/dev/ttyUSB0', fakeRoot('ttyUSB0', '1a86', '7523', 'ch341-uart')).kind).toBe('ch340');
    const pty = adapterInfo('/dev/pts/7', mkdtempSync(join(tmpdir(), 'doctor-')));
    expect(pty.usb).toBe(false);
    expect(pty.what).toMatch(/not a USB device/);
  });

  it('kernel and real-time limits: PREEMPT_RT passes, a voluntary kernel and no rtprio warn with the fix', () => {
    const root = mkdtempSync(join(tmpdir(), 'doctor-'));
    mkdirSync(join(root, 'proc/self'), { recursive: true });
    writeFileSync(
      join(root, 'proc/self/limits'),
      'Max locked memory         8388608              8388608              bytes\nMax realtime priority     0                    0\n',
    );
    writeFileSync(join(root, 'proc/self/status'), 'Uid:\t1000\t1000\t1000\t1000\nCapEff:\t0000000000000000\n');
    const k = kernelInfo(root, '#1 SMP Debian 6.1.0', '6.1.0-18-amd64');
    const r = realtimeInfo(root);
    expect(k.preempt).toBe('voluntary');
    expect(r).toMatchObject({ uid: 1000, rtprio: 0, capSysNice: false, memlockBytes: 8388608 });
    const checks = systemChecks(k, r);
    expect(checks.find((c) => c.name === 'kernel preemption')!.status).toBe('warn');
    expect(checks.find((c) => c.name === 'SCHED_FIFO allowed')!.fix).toContain('rtprio');
    expect(checks.find((c) => c.name === 'memory locking')!.fix).toContain('memlock');
    mkdirSync(join(root, 'sys/kernel'), { recursive: true });
    writeFileSync(join(root, 'sys/kernel/realtime'), '1\n');
    expect(kernelInfo(root, '#1 SMP PREEMPT_RT Debian', '6.1.0-rt-amd64').preempt).toBe('rt');
  });

  it('recommends from the cable and the measured round trip', () => {
    expect(recommend('native', 16, { p50: 1400, p99: 2000, p999: 2000, max: 2000, n: 100, clock: 'virtual' }).rateHz).toBe(1000);
    expect(recommend('none', 16, { p50: 4000, p99: 9000, p999: 9000, max: 9000, n: 100, clock: 'real' }).rateHz).toBe(250);
    expect(recommend('none', 16, { p50: 4000, p99: 9000, p999: 9000, max: 9000, n: 100, clock: 'real' }).answerDelaySamples).toBe(3);
  });

  it("as root with PREEMPT_DYNAMIC's mode unreadable, it does not say 'needs root'", () => {
    const k = { version: '#1 SMP PREEMPT_DYNAMIC', release: '6.18', preempt: 'dynamic' as const, realtimeFlag: false };
    const r = { uid: 0, rtprio: 0, capSysNice: true, memlockBytes: 8388608, governors: null };
    const root = systemChecks(k, r).find((c) => c.name === 'kernel preemption')!;
    expect(root.evidence).not.toMatch(/needs root/);
    expect(root.evidence).toMatch(/debugfs is not mounted or not readable here/);
    const user = systemChecks(k, { ...r, uid: 1000 }).find((c) => c.name === 'kernel preemption')!;
    expect(user.evidence).toMatch(/needs root/);
  });
});

describe('twolink doctor without a cable', () => {
  it(
    'with no arguments it runs the machine checks and says the cable was not checked; --rig alone is refused',
    async () => {
      const r = await twolink(['doctor', '--json']);
      expect(r.code === 0 || r.code === 1, r.stderr).toBe(true); // 1 only where a machine check fails
      const d = JSON.parse(r.stdout.trim().split('\n').pop()!);
      expect(d).toMatchObject({ adapter: null, roundTripUs: null, recommend: null });
      expect(d.checks.map((c: { name: string }) => c.name)).toEqual(
        expect.arrayContaining(['kernel preemption', 'SCHED_FIFO allowed', 'serial path']),
      );
      const human = await twolink(['doctor']);
      expect(human.stdout).toMatch(/the cable and the round trip were not checked: twolink doctor --port PATH/);
      const rig = await twolink(['doctor', '--rig', 'rigs/mock-arm.json']);
      expect(rig.code).toBe(2);
      expect(rig.stderr).toMatch(/--rig is for a cable check/);
      const both = await twolink(['doctor', '--port', '/dev/null', '--mock', '--rig', 'rigs/mock-arm.json']);
      expect(both.code).toBe(2);
      expect(both.stderr).toMatch(/not both/);
    },
    hangGuardMs(30_000),
  );

  it(
    'a failed round trip recommends no rate (the cable alone would have said 1000 Hz)',
    async () => {
      const r = await twolink(['doctor', '--port', '/dev/null', '--json']);
      expect(r.code).toBe(1);
      const d = JSON.parse(r.stdout.trim().split('\n').pop()!);
      expect(d.roundTripUs).toBeNull();
      expect(d.recommend).toBeNull();
      const human = await twolink(['doctor', '--port', '/dev/null']);
      expect(human.stdout).toMatch(/recommend: no loop rate: the round trip failed/);
      expect(human.stdout).not.toMatch(/recommend: \d+ Hz/);
    },
    hangGuardMs(30_000),
  );
});

describe('twolink doctor with no port: the machine (issue 34 item 3)', () => {
  for (const serial of ['auto', 'serialport'] as const) {
    it(`one line names the OS, Node and its support status, the serial path (--serial ${serial}) and the priority obtained; --json carries the same`, async () => {
      const more = serial === 'auto' ? [] : ['--serial', serial];
      const human = await twolink(['doctor', ...more], { timeoutMs: 60_000 });
      expect(human.code, human.stderr).toBe(0);
      const os = await import('node:os');
      const osText = `${process.platform} ${os.release()} ${process.arch}`;
      const path = serial === 'auto' ? (process.platform === 'linux' ? 'tty' : 'serialport') : 'serialport';
      const line = human.stdout.split('\n').find((l) => l.startsWith('OS '));
      expect(line, human.stdout).toBeDefined();
      const m =
        /^OS (.+); Node (v\d+\.\d+\.\d+) \((supported|end-of-life|untested)\); serial path (\S+) \(--serial (\S+)\); priority (.+)$/.exec(
          line!,
        );
      expect(m, line).not.toBeNull();
      expect(m![1]).toBe(osText);
      expect(m![2]).toBe(process.version);
      expect(m![4]).toBe(path);
      expect(m![5]).toBe(serial);
      expect(m![6]).toMatch(/^(SCHED_FIFO \d+|HIGH priority class|ABOVE_NORMAL priority class|normal)/);
      const json = await twolink(['doctor', '--json', ...more], { timeoutMs: 60_000 });
      const p = (
        JSON.parse(json.stdout) as {
          platform: { os: string; node: string; nodeStatus: string; serial: { choice: string; path: string }; priority: { what: string } };
        }
      ).platform;
      expect(p).toMatchObject({ os: osText, node: process.version, nodeStatus: m![3], serial: { choice: serial, path } });
      expect(p.priority.what).toBe(m![6]);
    });
  }
});
