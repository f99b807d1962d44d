// The fault matrix, in virtual time against the mock rig: for each injection (src/mock/injections.ts,
// applied through its table as --inject does) and each host mishap, the fault the loop declares (the
// stop reason), what the arm does (the motors end at zero), and what the recording holds.
import { mkdtempSync, readFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { describe, expect, it } from 'vitest';
import { loadRig, type Rig } from '../src/config/load.js';
import { F, LOOP_STATES } from '../src/telemetry/tick.js';
import { builtinPath } from '../src/model/builtins.js';
import { Recorder } from '../src/telemetry/recorder.js';
import { createFirmataMock } from '../src/mock/firmata-mock.js';
import { applyInjection, lineMockSite, parseInjection } from '../src/mock/injections.js';
import { createLineMock } from '../src/mock/line-mock.js';
import { settle, VirtualClock } from '../src/time/clock.js';
import { LineLink } from '../src/transport/line-link.js';
import { lineMock, virtualRun } from './helpers/virtual-run.js';
import type { LineMock } from '../src/mock/line-mock.js';
import type { LoopCore } from '../src/control/loop.js';

const rig = (): Rig => loadRig('rigs/mock-arm.json');

/** Runs a trajectory and does `act` once, when the trajectory proper has run for `at` seconds. */
async function withAct(path: string, at: number, act: (mock: LineMock, core: LoopCore) => void, r: Rig = rig()) {
  let done = false;
  return virtualRun(r, [builtinPath(r.arm, path)!], {
    onTick: (core, _clock, mock) => {
      const p = core.progress;
      if (!done && p && p.t >= at) {
        done = true;
        act(lineMock({ mock }), core);
      }
    },
  });
}

/** Runs a trajectory and applies the injections (`--inject` text) once the trajectory proper has run for `at` seconds. */
function withInjection(path: string, at: number, injections: string[], r: Rig = rig()) {
  return withAct(
    path,
    at,
    (m) => {
      const site = lineMockSite('the mock rig', m.plant, m.board, () => m.unplug());
      for (const text of injections) expect(applyInjection(site, parseInjection(text, r.joints))).toEqual({ ok: true });
    },
    r,
  );
}

function endsAtZero(res: Awaited<ReturnType<typeof virtualRun>>): void {
  expect(res.mock.plant.duty).toEqual([0, 0]);
  const last = res.rows.at(-1)!;
  expect(last[F.duty0]).toBe(0);
  expect(last[F.duty1]).toBe(0);
}

describe('injected into the link and the board', () => {
  it('dropped and corrupted bytes (1%): counted, never applied as data, the run completes', async () => {
    const res = await withInjection('reach', 0.01, ['drop=0.01', 'corrupt=0.01']);
    expect(res.summary.stop).toEqual({ kind: 'done' });
    expect(res.summary.link.corrupt + res.summary.link.lost).toBeGreaterThan(10);
    for (const row of res.rows) for (let i = 0; i < row.length; i++) expect(Number.isFinite(row[i])).toBe(true);
    // 1% of bytes dropped and 1% corrupted lose ~59% of the 44-byte samples and ~40% of the answers: a
    // lost sample gets no answer and the board holds the last command, so tracking degrades (about
    // 1.3 / 3 deg RMS here, against 0.04 / 0.12 clean) but stays bounded.
    expect(res.summary.tracking.rmsDeg.every((e) => e < 5)).toBe(true);
  });

  it('a burst of garbage from the board is rejected and counted; the run goes on', async () => {
    // 1000 bytes hold the board's UART for 10 ms (5 ticks): the telemetry arrives late, not lost
    const res = await withInjection('reach', 1.5, ['garbage=1000']);
    expect(res.summary.stop).toEqual({ kind: 'done' });
    expect(res.summary.link.corrupt).toBeGreaterThan(0);
  });

  it('a line of 1 MB that never ends: memory stays bounded, the link is declared lost, the arm stops', async () => {
    const before = process.memoryUsage().heapUsed;
    const res = await withInjection('reach', 1.5, ['longline=1000000']);
    expect(res.summary.stop).toMatchObject({ kind: 'fault', fault: { kind: 'link-lost' } });
    expect(res.link.counters.overlong).toBeGreaterThanOrEqual(1);
    expect(process.memoryUsage().heapUsed - before).toBeLessThan(64 * 1024 * 1024);
    endsAtZero(res);
  });

  it('the board stops answering: link lost after the watchdog time (25 ticks at 500 Hz would be sooner); the stop cannot be confirmed but the motors stop', async () => {
    const res = await withInjection('reach', 1.5, ['silent']);
    expect(res.summary.stop).toEqual({ kind: 'fault', fault: { kind: 'link-lost', samples: 50, ms: expect.closeTo(100, 0) } });
    // the words people read
    expect(res.summary.stopReason).toBe('fault:link-lost (no telemetry for 50 samples, 100 ms)');
    expect(res.summary.stopOutcome).toBe('watchdog');
    endsAtZero(res);
  });

  it('the cable is pulled (the port vanishes, EIO): fault:cable naming the port, the board watchdog stops the motors', async () => {
    const res = await withInjection('reach', 1.5, ['unplug']);
    expect(res.summary.stop).toEqual({
      kind: 'fault',
      fault: { kind: 'cable', port: 'mock:mock-arm', code: 'EIO', message: 'the device was unplugged (EIO)' },
    });
    expect(res.summary.stopReason).toMatch(/^fault:cable: mock:mock-arm vanished \(the device was unplugged \(EIO\)\)/);
    expect(res.summary.stopOutcome).toBe('watchdog');
    endsAtZero(res);
  });

  it('the board resets mid-run: fault:board-reset, and it comes back with its motors off', async () => {
    const res = await withInjection('reach', 1.5, ['reset']);
    expect(res.summary.stop).toEqual({ kind: 'fault', fault: { kind: 'board-reset' } });
    endsAtZero(res);
  });

  it('the wrong baud rate: the handshake fails and says so', async () => {
    const r = rig();
    const clock = new VirtualClock();
    const mock = createLineMock(r, clock);
    const stream = await mock.openStream(115200);
    const link = new LineLink({
      stream,
      name: mock.path,
      baudRate: 115200,
      clock,
      encoders: r.encoders,
      watchdogMs: 100,
      handshakeMs: 1500,
    });
    const p = link.open();
    p.catch(() => undefined);
    for (let i = 0; i < 1700; i++) {
      clock.advanceBy(0.001);
      await settle();
    }
    await expect(p).rejects.toThrow(
      /no twolink handshake within 1500 ms at 115200 baud: \d+ bytes came back but no valid twolink frame: wrong baud rate/,
    );
    mock.dispose();
  });

  it('the wrong firmware (Firmata on a line-protocol rig file): the handshake fails and suggests the Firmata transport', async () => {
    const r = loadRig('rigs/mock-arm-firmata.json');
    const clock = new VirtualClock();
    const mock = createFirmataMock(r, clock);
    const stream = await mock.openStream(r.link.baudRate);
    const line = { ...r, link: { ...r.link, transport: 'line' as const } };
    const link = new LineLink({
      stream,
      name: mock.path,
      baudRate: r.link.baudRate,
      clock,
      encoders: line.encoders,
      watchdogMs: 100,
      handshakeMs: 1500,
    });
    const p = link.open();
    p.catch(() => undefined);
    for (let i = 0; i < 1700; i++) {
      clock.advanceBy(0.001);
      await settle();
    }
    await expect(p).rejects.toThrow(/Firmata\? set "link": \{"transport": "firmata"\}/);
    mock.dispose();
  });
});

describe('injected into the arm', () => {
  it('a joint stalls: the twin alarm fires on it, then the following-error guard stops the arm: the joint does not move (jammed, or stuck: jammed or dead)', async () => {
    const res = await withInjection('point', 0.5, ['stall=1']);
    expect(res.events.some((e) => e.kind === 'alarm' && e.joints.includes(0))).toBe(true);
    expect(res.result.core.stop).toMatchObject({
      kind: 'fault',
      fault: { kind: 'following-error', joint: 0, cause: expect.stringMatching(/^(jammed|stuck)$/) },
    });
    endsAtZero(res);
  });

  it('a joint stalls with a following-error limit too wide to see it: the saturation guard stops the arm', async () => {
    const r = rig();
    r.limits = r.limits.map((l) => ({ ...l, followingError: Math.PI }));
    const res = await withInjection('point', 0.5, ['stall=1'], r);
    // The stalled joint cannot move, so it neither reaches a limit nor a speed: its motor saturates.
    expect(res.summary.stop).toMatchObject({ kind: 'fault', fault: { kind: 'saturated', joint: 0 } });
    endsAtZero(res);
  });

  it('an encoder reversed (positive feedback): the arm is stopped by a guard within half a second', async () => {
    let at = -1;
    const res = await withAct('reach', 1.5, (m, core) => {
      expect(
        applyInjection(
          lineMockSite('the mock rig', m.plant, m.board, () => m.unplug()),
          parseInjection('reverse=2'),
        ),
      ).toEqual({ ok: true });
      at = core.row[F.t]!;
    });
    // Reversing the counts mid-run turns joint 2's angle over about its zero in one sample: not a motion
    // the joint can make, so the jump guard names the encoder (positive feedback would follow).
    expect(res.result.core.stop).toMatchObject({ kind: 'fault', fault: { kind: 'encoder-jump', joint: 1 } });
    const stop = res.rows.find((x) => LOOP_STATES[x[F.state]!] === 'fault')!;
    expect(stop[F.t]! - at).toBeLessThan(0.5);
    endsAtZero(res);
  });

  it('an encoder slips by 200 counts (15 deg): the jump trips a guard on that joint', async () => {
    const res = await withInjection('reach', 1.5, ['slip=1:200']);
    // The jump is one sample long: far more than joint 1 can turn in 2 ms, so the jump guard names its
    // encoder (the speed guard would have called it a speed), before the twin's alarm hold time.
    expect(res.result.core.stop).toEqual({
      kind: 'fault',
      fault: { kind: 'encoder-jump', joint: 0, deg: expect.closeTo((200 / 4800) * 360, 0), ms: expect.closeTo(2, 3) },
    });
  });

  it('an encoder slips by 20 counts: the twin residual sees it (no other guard does)', async () => {
    const res = await withInjection('reach', 1.5, ['slip=1:20']);
    expect(res.summary.twin.maxDeg[0]).toBeGreaterThan(1);
  });

  it('someone pushes joint 2 into its limit: fault:limit names the joint, the motors stop', async () => {
    const r = rig();
    // (a following-error limit wide enough for the push to reach the limit: this is the limit guard's test)
    r.limits[1] = { ...r.limits[1]!, min: -0.2, max: 1.7, followingError: Math.PI };
    const res = await withInjection('reach', 1.2, ['push=2:3'], r);
    expect(res.summary.stop).toMatchObject({ kind: 'fault', fault: { kind: 'limit', joint: 1 } });
    endsAtZero(res);
  });

  it('a motor that does not respond: the twin residual says which joint', async () => {
    const res = await withInjection('point', 0.5, ['dead=2']);
    expect(res.events.some((e) => e.kind === 'alarm' && e.joints.includes(1))).toBe(true);
  });

  it('the supply sags to 60%: the torque is lower than commanded and the twin says so', async () => {
    const res = await withInjection('point', 0.5, ['sag=0.6']);
    expect(res.events.some((e) => e.kind === 'alarm')).toBe(true);
  });

  it('with twin.onAlarm = "stop" an alarm stops the arm', async () => {
    const r = rig();
    r.twin.onAlarm = 'stop';
    const res = await withInjection('reach', 1.5, ['payload=0.3'], r);
    expect(res.summary.stop).toMatchObject({ kind: 'fault', fault: { kind: 'twin-alarm' } });
    endsAtZero(res);
  });
});

describe('the host', () => {
  it('the loop thread is blocked for a second: the samples it could not answer are counted late, the board watchdog had already stopped the arm', async () => {
    let blocked = false;
    const r = rig();
    const res = await virtualRun(r, [builtinPath(r.arm, 'reach')!], {
      onTick: (core, clock) => {
        if (!blocked && core.progress && core.progress.t > 1.5) {
          blocked = true;
          clock.advanceBy(1.0); // the machine was busy: a whole second passes between two ticks
        }
      },
    });
    // The board's watchdog (100 ms) cut the motors long before the second ended; its report is what
    // the loop sees first when it runs again.
    expect(res.summary.stop).toEqual({ kind: 'fault', fault: { kind: 'watchdog' } });
    // The board went on sampling: 500 samples came in a burst after the stall; only the newest was answered.
    expect(res.result.timing.lateSamples).toBeGreaterThanOrEqual(400);
    expect(res.result.timing.maxGap).toBeGreaterThanOrEqual(0.9);
    expect(lineMock(res).board.stats.watchdogTrips).toBe(1);
    endsAtZero(res);
  });

  it('an exception in the loop thread: the motors are zeroed and the run ends with a fault that quotes it', async () => {
    const r = rig();
    const res = await virtualRun(r, [builtinPath(r.arm, 'reach')!], {
      onTick: (core) => {
        if (core.progress && core.progress.t > 1.5) throw new Error('boom');
      },
    });
    // A bug of twolink's own (issue 32): fault:internal naming the thread.
    expect(res.summary.stop).toEqual({ kind: 'fault', fault: { kind: 'internal', where: 'the loop thread', message: 'boom' } });
    endsAtZero(res);
  });

  it('the disk fills up: the recording stops at the last complete line and says why', () => {
    const dir = mkdtempSync(`${tmpdir()}/twolink-full-`);
    let budget = 5000; // bytes the "disk" takes
    const rec = new Recorder(`${dir}/run.ndjson`, 2, (fd, buf, off, position) => {
      const n = Math.min(budget, buf.length - off);
      if (n <= 0) throw Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' });
      budget -= n;
      return writeSync(fd, buf, off, n, position);
    });
    rec.open({
      kind: 'header',
      twolink: 'x',
      protocol: 1,
      startedAt: '',
      joints: 2,
      rateHz: 500,
      rig: { file: 'x', name: 'x', content: null },
    });
    const row = new Float64Array(64).fill(0.5);
    let ok = true;
    for (let k = 0; k < 200 && ok; k++) {
      rec.tick(row);
      ok = rec.flush();
    }
    expect(ok).toBe(false);
    expect(rec.failure!.message).toMatch(/the disk is full/);
    rec.close({ stopReason: 'x' });
    const text = readFileSync(`${dir}/run.ndjson`, 'utf8');
    expect(text.endsWith('\n')).toBe(true);
    const lines = text.trim().split('\n');
    for (const l of lines) expect(() => JSON.parse(l)).not.toThrow();
    expect(lines.length).toBeGreaterThan(5);
  });
});

describe('wiring mistakes during a run (the original rig file on a miswired mock)', () => {
  // What the wiring monitor names first (a reversed encoder 2 also moves joint 1 against its command,
  // through the coupling, so joint 1 is named before joint 2's own diagnosis).
  const named: Record<string, RegExp> = {
    'reverse-motor=1': /^joint 1 moves against its command: its motor is reversed/,
    'reverse-encoder=2':
      /^joints 1 and 2 move against their commands: .* or else joint 2 moves against its command: its encoder counts backwards/,
    'swap-motors': / or else joint 1 follows motor 2 and joint 2 motor 1: the motors \(or the encoders\) are swapped/,
  };
  for (const spec of ['reverse-motor=1', 'reverse-encoder=2', 'swap-motors']) {
    it(`${spec}: the loop stops within the first second of motion with a fault that names the wiring`, async () => {
      const { parseWiring } = await import('../src/mock/wiring.js');
      const r = rig();
      const res = await virtualRun(r, [builtinPath(r.arm, 'reach')!], { wiring: parseWiring(spec, 2) });
      expect(res.summary.stop).toEqual({
        kind: 'fault',
        fault: { kind: 'wiring', joint: 0, message: expect.stringMatching(named[spec]!) },
      });
      const stop = res.rows.find((x) => LOOP_STATES[x[F.state]!] === 'fault')!;
      const start = res.rows.find((x) => LOOP_STATES[x[F.state]!] === 'track')!;
      expect(stop[F.t]! - start[F.t]!).toBeLessThan(1);
      endsAtZero(res);
    });
  }
});
