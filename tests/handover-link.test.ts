// Clean hand-overs, in virtual time (issue 20, item 7): what a session finds on the port from an
// earlier one is discarded, not counted, and a session that closes leaves its board quiet. The same
// with real processes, SIGKILL and simavr: tests/realtime/handover.test.ts.
import { Duplex } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { loadRig } from '../src/config/load.js';
import { encodeBoardFrame, type BoardInfo } from '../src/protocol/codec.js';
import { createLineMock } from '../src/mock/line-mock.js';
import { runUntilSettled, settle, VirtualClock } from '../src/time/clock.js';
import { quietBoard } from '../src/transport/firmata-setup.js';
import { LineLink } from '../src/transport/line-link.js';

const INFO: BoardInfo = {
  fw: 'twolink-fw/1.0.0',
  proto: 1,
  board: 'uno',
  joints: 2,
  cpr: [4800, 2400],
  pwm: 400,
  torque: false,
  maxrate: 1000,
  wdt: 100,
};
const T = (seq: number, t: number): string => encodeBoardFrame({ type: 'T', seq, ack: null, t, counts: [10, -20], flags: 0x04 });

describe('LineLink: what the port held from an earlier session', () => {
  it('telemetry and a cut line before the board answers our hello are discarded, not lost or corrupt; counting starts with the answer', async () => {
    const clock = new VirtualClock();
    const rig = loadRig('rigs/mock-arm.json');
    const written: string[] = [];
    const stream = new Duplex({
      read() {},
      write(c: Buffer, _e, cb) {
        written.push(c.toString('latin1'));
        cb();
      },
    });
    const link = new LineLink({
      stream,
      name: '/dev/fake',
      baudRate: 1e6,
      clock,
      encoders: rig.encoders,
      watchdogMs: 100,
      handshakeMs: 1000,
    });
    const opened = link.open();
    await settle();
    expect(written[0]).toMatch(/^H 0 1\*/);
    // The earlier session's stream, as the port kept it: the tail of a cut frame, then frames with a gap
    // (the board's transmit buffer overflowed while nobody read).
    stream.push(Buffer.from(`-20 04*1A2B\n${T(7000, 1_000_000)}${T(7001, 1_002_000)}${T(7950, 2_900_000)}`, 'latin1'));
    await settle();
    // The answer to our hello (the board returns to sync mode: PROTOCOL.md section 8), then the W's.
    stream.push(Buffer.from(encodeBoardFrame({ type: 'I', seq: 7951, ack: 0, info: INFO }), 'latin1'));
    await settle();
    expect(written[1]).toMatch(/^W 1 100\*/);
    stream.push(Buffer.from(encodeBoardFrame({ type: 'A', seq: 7952, ack: 1 }), 'latin1'));
    const id = await runUntilSettled(clock, opened);
    expect(id.firmware).toBe('twolink-fw/1.0.0');
    expect(link.stale).toEqual({ frames: 3, lines: 1 });
    expect(link.counters.lost).toBe(0);
    expect(link.counters.corrupt).toBe(0);
    expect(link.counters.received).toBe(2); // the I and the A
    // From the answer on, a gap is a loss again.
    stream.push(Buffer.from(T(7953, 3_000_000) + T(7955, 3_004_000), 'latin1'));
    await settle();
    expect(link.counters.lost).toBe(1);
    expect(link.stale.frames).toBe(3);
  });

  it("close() stops the board's sample clock first (R 0): the mock board sends nothing more", async () => {
    const loaded = loadRig('rigs/mock-arm.json');
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
    await runUntilSettled(clock, link.open());
    await runUntilSettled(clock, link.startSampling(500));
    const streaming = mock.board.stats.txFrames;
    for (let i = 0; i < 100; i++) {
      clock.advanceBy(0.001);
      await settle();
    }
    expect(mock.board.stats.txFrames - streaming).toBeGreaterThanOrEqual(45); // 500 Hz for 0.1 s
    await runUntilSettled(clock, link.stop());
    await runUntilSettled(clock, link.close());
    const after = mock.board.stats.txFrames;
    for (let i = 0; i < 200; i++) {
      clock.advanceBy(0.001);
      await settle();
    }
    // Without the R 0 the board would have sent 100 more telemetry frames into the closed port.
    expect(mock.board.stats.txFrames - after).toBe(0);
  });
});

describe('Firmata: the messages that quiet a board an earlier session left reporting', () => {
  it('FirmataEncoder auto-report off (F0 61 04 00 F7), then reporting off for every digital port and analog channel 0-15', () => {
    const b = [...quietBoard()];
    expect(b.slice(0, 5)).toEqual([0xf0, 0x61, 0x04, 0x00, 0xf7]);
    const rest = b.slice(5);
    expect(rest).toHaveLength(64);
    for (let i = 0; i < 16; i++) expect(rest.slice(4 * i, 4 * i + 4)).toEqual([0xd0 | i, 0, 0xc0 | i, 0]);
  });
});
