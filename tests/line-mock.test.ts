// The mock rig in virtual time: the handshake, the watchdog, the board's refusals, the plant's physics.
import { Duplex, PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { loadRig } from '../src/config/load.js';
import { encodeBoardFrame, FLAG } from '../src/protocol/codec.js';
import { createLineMock } from '../src/mock/line-mock.js';
import { runUntilSettled, settle, VirtualClock } from '../src/time/clock.js';
import { LinkError, type LinkEvent } from '../src/transport/link.js';
import { LineLink } from '../src/transport/line-link.js';
import { hangGuardMs } from './helpers/hang-guard.js';

async function connect(rigFile = 'rigs/mock-arm.json') {
  // The protocol alone: no USB-serial adapter between the host and the board (tests/usb-adapter.test.ts has it).
  const loaded = loadRig(rigFile);
  const rig = { ...loaded, plant: { ...loaded.plant!, adapter: { kind: 'none' as const, latencyMs: 16 } } };
  const clock = new VirtualClock();
  const mock = createLineMock(rig, clock);
  const stream = await mock.openStream();
  const link = new LineLink({
    stream,
    name: mock.path,
    baudRate: rig.link.baudRate,
    clock,
    encoders: rig.encoders,
    watchdogMs: 100,
    handshakeMs: 2000,
  });
  const events: LinkEvent[] = [];
  link.onEvent((e) => events.push(e));
  const wait = <T>(p: Promise<T>): Promise<T> => runUntilSettled(clock, p, { maxRealMs: hangGuardMs(15_000) });
  const step = async (dt: number): Promise<void> => {
    const end = clock.now() + dt;
    while (clock.now() < end - 1e-12) {
      clock.advanceTo(Math.min(end, clock.nextTimerAt()));
      await settle();
    }
  };
  return { rig, clock, mock, link, events, wait, step };
}

describe('mock rig: handshake and commands', () => {
  it('says who it is, with the rig file encoders, and refuses motion before N 1', async () => {
    const { link, wait, mock, step, events } = await connect();
    const id = await wait(link.open());
    expect(id).toMatchObject({ transport: 'line', protocol: '1', joints: 2, countsPerRev: [4800, 2400], board: 'mock' });
    link.writeDuty([0.5, 0.5]);
    await step(0.01);
    expect(mock.plant.duty).toEqual([0, 0]);
    expect(events.some((e) => e.kind === 'board-error' && e.code === 'DISABLED')).toBe(true);
    await wait(link.enable(true));
    link.writeDuty([0.5, -0.25]);
    await step(0.005);
    expect(mock.plant.duty[0]).toBeCloseTo(0.5, 12);
    expect(mock.plant.duty[1]).toBeCloseTo(-0.25, 12);
  });

  it('the telemetry acknowledges each applied command by its sequence number', async () => {
    const { link, wait, step } = await connect();
    await wait(link.open());
    await wait(link.enable(true));
    for (let k = 0; k < 20; k++) {
      const seq = link.writeDuty([0.1, 0]);
      await step(0.002);
      const r = link.read()!;
      expect(r.ack).toBe(seq);
      expect(r.enabled).toBe(true);
    }
    expect(link.counters.lost).toBe(0);
    expect(link.counters.corrupt).toBe(0);
  });

  it('the watchdog cuts the motors within its timeout when commands stop, and says so', async () => {
    const { link, wait, step, mock, events, clock } = await connect();
    await wait(link.open());
    await wait(link.enable(true));
    link.writeDuty([0.4, 0.2]);
    await step(0.002);
    const t0 = clock.now();
    expect(mock.plant.duty[0]).toBeCloseTo(0.4, 12);
    await step(0.095);
    expect(mock.plant.duty[0]).toBeCloseTo(0.4, 12); // not before the timeout
    await step(0.01);
    expect(mock.plant.duty).toEqual([0, 0]);
    expect(clock.now() - t0).toBeLessThanOrEqual(0.105 + 1e-9);
    expect(events.some((e) => e.kind === 'watchdog')).toBe(true);
    expect(mock.board.flags() & FLAG.WDT).toBe(FLAG.WDT);
    expect(mock.board.flags() & FLAG.EN).toBe(0);
    // It stays off until the host enables again.
    link.writeDuty([0.4, 0.2]);
    await step(0.01);
    expect(mock.plant.duty).toEqual([0, 0]);
    await wait(link.enable(true));
    expect(mock.board.flags() & FLAG.WDT).toBe(0);
  });

  it('S stops at once and is acknowledged', async () => {
    const { link, wait, step, mock } = await connect();
    await wait(link.open());
    await wait(link.enable(true));
    link.writeDuty([0.4, 0.2]);
    await step(0.002);
    expect(await wait(link.stop())).toBe('acknowledged');
    expect(mock.plant.duty).toEqual([0, 0]);
    expect(mock.board.flags() & FLAG.STOP).toBe(FLAG.STOP);
  });

  it('zeroing the encoders makes the joint angles read their zero positions', async () => {
    const { link, wait, step, rig } = await connect();
    await wait(link.open());
    await wait(link.enable(true));
    for (let k = 0; k < 100; k++) {
      link.writeDuty([0.3, 0]);
      await step(0.002);
    }
    const moved = link.read()!;
    expect(moved.q[0]).toBeGreaterThan(rig.encoders[0]!.zero + 0.05);
    await wait(link.enable(false));
    await wait(link.zero());
    await wait(link.enable(true));
    link.writeDuty([0, 0]);
    await step(0.002);
    const r = link.read()!;
    expect(r.raw[0]).toBeLessThanOrEqual(2);
    expect(Math.abs(r.q[0]! - rig.encoders[0]!.zero)).toBeLessThan(0.01);
  });

  it('drops and corruption on the wire are detected: lost frames counted, corrupt lines rejected, never accepted', async () => {
    const { link, wait, step, mock } = await connect();
    await wait(link.open());
    await wait(link.enable(true));
    mock.board.injected.corruptProbability = 0.002;
    mock.board.injected.dropProbability = 0.002;
    for (let k = 0; k < 1000; k++) {
      link.writeDuty([0.05, 0]);
      await step(0.002);
      const r = link.read();
      if (r) for (const v of r.q) expect(Number.isFinite(v)).toBe(true);
    }
    expect(link.counters.corrupt + link.counters.lost).toBeGreaterThan(0);
    expect(mock.board.stats.rxRejected).toBeGreaterThan(0);
  });
});

describe('refusals', () => {
  /** A link opening on /dev/fake that the board answers, once, with `info` in place of its identity: the open's promise. */
  async function answeredWith(info: Partial<{ proto: number; cpr: [number, number] }>): Promise<{ opened: Promise<unknown> }> {
    const clock = new VirtualClock();
    const rig = loadRig('rigs/mock-arm.json');
    const stream = new PassThrough();
    const link = new LineLink({
      stream,
      name: '/dev/fake',
      baudRate: 1e6,
      clock,
      encoders: rig.encoders,
      watchdogMs: 100,
      handshakeMs: 1000,
    });
    const p = link.open();
    p.catch(() => undefined);
    await settle();
    stream.write(
      encodeBoardFrame({
        type: 'I',
        seq: 0,
        ack: 0,
        info: { fw: 'x', proto: 1, board: 'uno', joints: 2, cpr: [4800, 2400], pwm: 400, torque: false, maxrate: 1000, wdt: 100, ...info },
      }),
    );
    await settle();
    return { opened: p }; // (an async function's own promise would take on p's rejection)
  }

  it('a board that speaks another protocol version is refused with a clear message', async () => {
    // the board answers the first H with its identity, protocol 2
    const p = (await answeredWith({ proto: 2 })).opened;
    await expect(p).rejects.toThrow(LinkError);
    await expect(p).rejects.toThrow(/board on \/dev\/fake speaks twolink protocol 2, this host speaks 1/);
  });

  it('no answer at all: the error names the port, the time and the baud rate', async () => {
    const clock = new VirtualClock();
    const rig = loadRig('rigs/mock-arm.json');
    // a port where nothing answers (writes go nowhere)
    const stream = new Duplex({
      read() {},
      write(_c, _e, cb) {
        cb();
      },
    });
    const link = new LineLink({
      stream,
      name: '/dev/ttyACM9',
      baudRate: 115200,
      clock,
      encoders: rig.encoders,
      watchdogMs: 100,
      handshakeMs: 1000,
    });
    const p = link.open();
    p.catch(() => undefined);
    for (let i = 0; i < 2000; i++) {
      clock.advanceBy(0.001);
      await settle();
    }
    await expect(p).rejects.toThrow(/\/dev\/ttyACM9: no twolink handshake within 1000 ms at 115200 baud: nothing at all came back/);
  });

  it('a board with other encoders than the rig file is refused, naming the joint and both numbers', async () => {
    const p = (await answeredWith({ cpr: [2048, 2048] })).opened;
    await expect(p).rejects.toThrow(/counts 2048 per revolution on joint 1, the rig file says 4800/);
  });
});
