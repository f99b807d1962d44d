// Real, unmodified johnny-five drives the Firmata mock rig over a serialport stream (the rig binding of
// src/mock/binding.ts), in virtual time: the handshake, motors, encoders, potentiometers, refusals, stop,
// connection errors. Assertions are on what crossed the wire and on the plant, not on timing.
import { afterEach, describe, expect, it } from 'vitest';
import { MODE } from '../src/protocol/firmata.js';
import { johnnyFive } from '../src/transport/johnny-five.js';
import { clearFirmataSysexHandlers } from '../src/transport/firmata-link.js';
import { LinkError, type LinkEvent } from '../src/transport/link.js';
import { firmataRig, pumpUntil, runFor, setup, teardown, type Setup } from './helpers/firmata.js';

const open: Setup[] = [];
async function opened(...args: Parameters<typeof setup>): Promise<Setup> {
  const s = await setup(...args);
  open.push(s);
  await pumpUntil(s.clock, s.link.open());
  return s;
}
afterEach(async () => {
  for (const s of open.splice(0)) await teardown(s);
  clearFirmataSysexHandlers();
});

/** The error a promise rejects with, while virtual time runs. */
async function rejection(s: Setup, p: Promise<unknown>, maxS = Infinity): Promise<LinkError> {
  try {
    await pumpUntil(s.clock, p, { maxS, stepS: 0.002, maxRealMs: 20_000 });
  } catch (e) {
    expect(e).toBeInstanceOf(LinkError);
    return e as LinkError;
  }
  throw new Error('expected a LinkError');
}

describe('the handshake', () => {
  it('johnny-five reaches ready on the emulated Mega; the link names the firmware and sets the interval the baud rate allows', async () => {
    const s = await setup();
    open.push(s);
    const id = await pumpUntil(s.clock, s.link.open());
    expect(id).toMatchObject({
      transport: 'firmata',
      port: 'mock:mock-arm-firmata',
      firmware: 'ConfigurableFirmata.ino 2.10',
      board: 'mega',
      protocol: 'Firmata 2.6',
      joints: 2,
      countsPerRev: [4800, 2400],
    });
    expect(s.link.five?.board.isReady).toBe(true);
    // 13 bytes per two-encoder report at 57600 baud: 3 ms, set with a raw sysex (firmata.js would send 10)
    expect(s.link.samplingIntervalMs).toBe(3);
    expect(s.mock.board.samplingIntervalMs).toBe(3);
    // the stock build has no watchdog: said loudly, in the identity too
    expect(s.link.warnings).toEqual([
      expect.stringMatching(
        /^NO BOARD WATCHDOG: the firmware has no FirmataWatchdog \(it answered "Unhandled sysex command" to the watchdog query\)/,
      ),
    ]);
    expect(id.warnings).toEqual(s.link.warnings);
    expect(id.watchdogMs).toBeUndefined();
    expect(s.link.hasBoardWatchdog).toBe(false);
    expect(s.mock.board.stats.refused).toEqual([]);
    // johnny-five's Motor set the pins: PWM on 5 and 6, outputs on 4 and 7
    expect(s.mock.board.pin(5).mode).toBe(MODE.PWM);
    expect(s.mock.board.pin(4).mode).toBe(MODE.OUTPUT);
    expect(s.mock.board.pin(2).mode).toBe(MODE.ENCODER);
    expect(s.link.read()?.raw).toEqual([0, 0]);
  });

  it('on an Uno two encoders get one interrupt pin each: the firmware says "Unknown pin mode" for the B pins and attaches them anyway', async () => {
    const rig = firmataRig((r) => {
      r.firmata = {
        ...r.firmata!,
        board: 'uno',
        sensors: [
          { type: 'encoder', pinA: 2, pinB: 8 },
          { type: 'encoder', pinA: 3, pinB: 12 },
        ],
      };
    });
    const s = await opened(rig);
    expect(s.link.five?.io.pins).toHaveLength(20);
    expect(s.link.warnings.filter((w) => !w.startsWith('NO BOARD WATCHDOG'))).toEqual([]); // both A pins have interrupts
    expect(s.mock.board.stats.refused.map((r) => [r.pin, r.mode])).toEqual([
      [8, MODE.ENCODER],
      [12, MODE.ENCODER],
    ]);
    expect(s.link.boardStrings).toEqual(['Unhandled sysex command', 'Unknown pin mode', 'Unknown pin mode']);
    await pumpUntil(s.clock, s.link.enable(true));
    s.link.writeDuty([0.5, 0.5]);
    await runFor(s.clock, 0.2);
    const r = s.link.read()!;
    expect(r.raw[0]).toBeGreaterThan(100);
    expect(r.raw[1]).toBeGreaterThan(100);
  });

  it('the tail of a message from an earlier session, waiting on the port when it opens, is not counted as corrupt', async () => {
    const s = await setup();
    open.push(s);
    const opening = s.link.open();
    // What a board left streaming had half sent when the host opened: the end of an encoder report.
    s.stream.emit('data', Buffer.from([0x40, 0x1f, 0x00, 0x00, 0xf7]));
    await pumpUntil(s.clock, opening);
    expect(s.link.counters.corrupt).toBe(0);
    // Once open, stray bytes are corruption again.
    s.stream.emit('data', Buffer.from([0x40, 0x1f, 0xf7]));
    expect(s.link.counters.corrupt).toBe(3);
  });

  it('a board that did not reset (a pty) repeats REPORT_VERSION and its name every 250 ms until the host talks', async () => {
    const s = await setup();
    open.push(s);
    const stream = s.stream;
    const seen: number[] = [];
    stream.on('data', (d: Buffer) => seen.push(...d));
    await runFor(s.clock, 1.1);
    const versions = (): number => seen.filter((b, i) => b === 0xf9 && seen[i + 1] === 2 && seen[i + 2] === 6).length;
    expect(versions()).toBe(5); // at 0, 0.25, 0.5, 0.75 and 1.0 s
    stream.write(Buffer.from([0xf0, 0x79, 0xf7])); // the host asks for the firmware name: it has talked
    await runFor(s.clock, 1);
    expect(versions()).toBe(5);
    expect(Buffer.from(seen).includes(Buffer.from('C\0o\0n\0f\0i\0g', 'latin1'))).toBe(true);
  });

  it('an encoder whose A pin has no interrupt works but is a warning naming the interrupt pins', async () => {
    const rig = firmataRig((r) => {
      r.firmata = {
        ...r.firmata!,
        sensors: [
          { type: 'encoder', pinA: 2, pinB: 3 },
          { type: 'encoder', pinA: 24, pinB: 25 },
        ],
      };
    });
    const s = await opened(rig);
    expect(s.link.warnings.filter((w) => !w.startsWith('NO BOARD WATCHDOG'))).toEqual([
      "joint 2's encoder: pin A (24) has no interrupt on this mega (interrupt pins: 2 3 18 19 20 21): counts will be missed at speed",
    ]);
    expect(s.link.read()?.raw).toEqual([0, 0]);
  });

  it('a rig file that says uno for a Mega is an error naming the field', async () => {
    const s = await setup(firmataRig(), { linkRig: firmataRig((r) => (r.firmata = { ...r.firmata!, board: 'uno' })) });
    open.push(s);
    const e = await rejection(s, s.link.open());
    expect(e.reason).toBe('mismatch');
    expect(e.message).toMatch(/^mock:mock-arm-firmata: the board reports 70 pins, the rig file says firmata.board "uno"/);
  });
});

describe('motors', () => {
  it('follow writeDuty: the board applies the signed duty and the plant turns that way', async () => {
    const s = await opened();
    const q0 = s.mock.plant.q.slice();
    s.link.writeDuty([0.6, -0.4]);
    await runFor(s.clock, 0.02);
    expect(s.mock.board.appliedDuty).toEqual([0, 0]); // nothing moves before enable
    await pumpUntil(s.clock, s.link.enable(true));
    s.link.writeDuty([0.6, -0.4]);
    await runFor(s.clock, 0.01);
    expect(s.mock.board.appliedDuty[0]).toBeCloseTo(0.6, 2); // 153/255
    expect(s.mock.board.appliedDuty[1]).toBeCloseTo(-0.4, 2); // 102/255, DIR low
    expect(s.mock.board.pin(5).state).toBe(153);
    expect(s.mock.board.pin(7).state).toBe(0);
    await runFor(s.clock, 0.3);
    expect(s.mock.plant.q[0]!).toBeGreaterThan(q0[0]! + 0.05);
    expect(s.mock.plant.q[1]!).toBeLessThan(q0[1]! - 0.05);
  });

  it("a new speed is one 3-byte analog message per motor; a reversal is johnny-five's PWM 0, direction, speed", async () => {
    const s = await opened();
    await pumpUntil(s.clock, s.link.enable(true));
    s.link.writeDuty([0.3, 0.3]);
    await runFor(s.clock, 0.005);
    let sent = s.link.counters.sent;
    let bytes = s.link.counters.bytesOut;
    s.link.writeDuty([0.35, 0.3]);
    expect([s.link.counters.sent - sent, s.link.counters.bytesOut - bytes]).toEqual([1, 3]);
    s.link.writeDuty([0.35, 0.3]); // unchanged: nothing to send
    expect(s.link.counters.sent - sent).toBe(1);
    await runFor(s.clock, 0.005);
    sent = s.link.counters.sent;
    bytes = s.link.counters.bytesOut;
    const dutyChanges = s.mock.board.stats.dutyChanges;
    s.link.writeDuty([-0.35, 0.3]);
    expect([s.link.counters.sent - sent, s.link.counters.bytesOut - bytes]).toEqual([3, 9]);
    await runFor(s.clock, 0.005);
    // on the board: PWM 0 first (a brief stop), then DIR low, then the speed
    expect(s.mock.board.stats.dutyChanges - dutyChanges).toBe(2);
    expect(s.mock.board.appliedDuty[0]).toBeCloseTo(-0.35, 2);
  });

  it('a PWM pin above 15 (Mega 44) goes through EXTENDED_ANALOG and drives the motor too', async () => {
    const s = await opened(
      firmataRig(
        (r) =>
          (r.firmata = {
            ...r.firmata!,
            motors: [
              { pwm: 44, dir: 42 },
              { pwm: 6, dir: 7 },
            ],
          }),
      ),
    );
    await pumpUntil(s.clock, s.link.enable(true));
    const bytes = s.link.counters.bytesOut;
    s.link.writeDuty([0.5, 0]);
    expect(s.link.counters.bytesOut - bytes).toBe(6); // F0 6F 44 lsb msb F7
    await runFor(s.clock, 0.01);
    expect(s.mock.board.pin(44)).toEqual({ mode: MODE.PWM, state: 128 });
    expect(s.mock.board.appliedDuty[0]).toBeCloseTo(128 / 255, 6);
  });

  it('never sends NaN: a non-finite duty is counted and sent as 0', async () => {
    const s = await opened();
    await pumpUntil(s.clock, s.link.enable(true));
    s.link.writeDuty([0.5, 0.5]);
    await runFor(s.clock, 0.005);
    s.link.writeDuty([Number.NaN, Number.POSITIVE_INFINITY]);
    await runFor(s.clock, 0.005);
    expect(s.link.counters.nonFinite).toBe(2);
    expect(s.mock.board.appliedDuty).toEqual([0, 0]);
    expect(s.mock.board.stats.ignoredWrites).toBe(0);
  });
});

describe('encoders', () => {
  it("counts arrive every sampling interval and decode to the plant's angles, negative counts too", async () => {
    const s = await opened();
    await pumpUntil(s.clock, s.link.enable(true));
    s.link.writeDuty([0.5, -0.5]);
    let readings = 0;
    await runFor(s.clock, 0.3, () => {
      if (s.link.read()) readings++;
    });
    const r = s.link.last()!;
    expect(r.raw[0]).toBeGreaterThan(200);
    expect(r.raw[1]).toBeLessThan(-200);
    // the reading is at most one interval and a report's wire time old: within what the arm moves then
    const truth = s.mock.plant.counts();
    expect(Math.abs(r.raw[0]! - truth[0]!)).toBeLessThan(40);
    expect(Math.abs(r.raw[1]! - truth[1]!)).toBeLessThan(40);
    expect(r.q[0]).toBeCloseTo(-Math.PI / 2 + (r.raw[0]! * 2 * Math.PI) / 4800, 12);
    expect(r.q[1]).toBeCloseTo((r.raw[1]! * 2 * Math.PI) / 2400, 12);
    expect(Math.abs(r.q[0]! - s.mock.plant.q[0]!)).toBeLessThan(0.05);
    expect(r.sampleTime).toBeLessThan(r.hostTime);
    // one reading per 3 ms report
    expect(readings).toBeGreaterThan(90);
    expect(readings).toBeLessThanOrEqual(101);
    expect(s.link.counters.corrupt).toBe(0);
  });

  it('zero() resets the counts on the board, and readings after it start from 0', async () => {
    const s = await opened();
    await pumpUntil(s.clock, s.link.enable(true));
    s.link.writeDuty([0.5, 0.5]);
    await runFor(s.clock, 0.3);
    const before = s.link.last()!.raw;
    expect(Math.abs(before[0]!)).toBeGreaterThan(100);
    await pumpUntil(s.clock, s.link.zero());
    expect(s.link.read()).toBeUndefined(); // the pre-zero reading is not handed out
    await runFor(s.clock, 0.004);
    const r = s.link.read()!;
    // the arm keeps moving: what it did since the reset, a few counts, not the hundreds before
    expect(Math.abs(r.raw[0]!)).toBeLessThan(Math.abs(before[0]!) / 10);
    expect(Math.abs(r.raw[1]!)).toBeLessThan(Math.abs(before[1]!) / 10);
  });

  it('firmware without FirmataEncoder is refused with an error naming ConfigurableFirmata and FirmataEncoder', async () => {
    const s = await setup(firmataRig(), {
      features: { encoder: false },
      firmware: { name: 'StandardFirmata.ino', major: 2, minor: 5 },
      protocol: [2, 5],
    });
    open.push(s);
    const e = await rejection(s, s.link.open());
    expect(e.reason).toBe('no-encoder');
    expect(e.message).toMatch(
      /^mock:mock-arm-firmata: StandardFirmata\.ino 2\.5 has no encoder support.*ConfigurableFirmata.*FirmataEncoder/,
    );
  });
});

describe('potentiometer joints', () => {
  it('johnny-five Sensors read the 10-bit values and the link maps them to angles', async () => {
    const rig = firmataRig((r) => {
      r.firmata = {
        ...r.firmata!,
        sensors: [
          { type: 'potentiometer', channel: 0, rawAtMin: 100, rawAtMax: 900, minDeg: -150, maxDeg: 150 },
          { type: 'potentiometer', channel: 3, rawAtMin: 900, rawAtMax: 100, minDeg: -150, maxDeg: 150 },
        ],
      };
    });
    const s = await opened(rig);
    const lsb = (300 / 800) * (Math.PI / 180); // [rad per count]
    const r0 = s.link.read()!;
    // at power-on the arm hangs at -90, 0 deg
    expect(r0.raw[0]).toBeCloseTo(100 + (60 / 300) * 800, -1);
    expect(Math.abs(r0.q[0]! + Math.PI / 2)).toBeLessThan(3 * lsb);
    expect(Math.abs(r0.q[1]!)).toBeLessThan(3 * lsb);
    await pumpUntil(s.clock, s.link.enable(true));
    s.link.writeDuty([0.4, -0.4]);
    await runFor(s.clock, 0.3);
    s.link.read();
    await runFor(s.clock, 0.01);
    const r = s.link.read()!;
    expect(Math.abs(r.q[0]! - s.mock.plant.q[0]!)).toBeLessThan(0.05);
    expect(Math.abs(r.q[1]! - s.mock.plant.q[1]!)).toBeLessThan(0.05);
    expect(r.q[1]).toBeLessThan(-0.1);
    // 3 bytes per channel per pass: 6 bytes fit 2 ms at 57600
    expect(s.link.samplingIntervalMs).toBe(2);
  });
});

describe('refusals', () => {
  it('the board refuses PWM on a pin without it: "Unknown pin mode", and analog writes there drive nothing', async () => {
    const s = await opened();
    const events: LinkEvent[] = [];
    s.link.onEvent((e) => events.push(e));
    const five = johnnyFive();
    // a real johnny-five Motor on Mega pins 22 (no PWM) and 23
    const motor = new five.Motor({ board: s.link.five!.board, pins: { pwm: 22, dir: 23 }, threshold: 0 });
    motor.forward(200);
    await runFor(s.clock, 0.02);
    expect(s.mock.board.stats.refused.map((r) => [r.pin, r.mode])).toEqual([[22, MODE.PWM]]);
    expect(s.mock.board.stats.ignoredWrites).toBeGreaterThan(0);
    expect(s.mock.board.pin(22)).toEqual({ mode: MODE.PWM, state: 0 }); // recorded, but nothing drives it
    expect(events).toContainEqual({ kind: 'board-error', code: 'FIRMATA', text: 'Unknown pin mode', ack: null });
    expect(s.mock.board.appliedDuty).toEqual([0, 0]);
  });

  it('a rig file with a motor on a non-PWM pin is refused at open, before anything is sent to that pin', async () => {
    const s = await setup(
      firmataRig(
        (r) =>
          (r.firmata = {
            ...r.firmata!,
            motors: [
              { pwm: 22, dir: 4 },
              { pwm: 6, dir: 7 },
            ],
          }),
      ),
    );
    open.push(s);
    const e = await rejection(s, s.link.open());
    expect(e.reason).toBe('pins');
    expect(e.message).toMatch(
      /mock:mock-arm-firmata: motor 1's PWM pin 22 cannot do PWM on this mega \(PWM pins: 2 3 4 5 6 7 8 9 10 11 12 13 44 45 46\)/,
    );
    expect(s.mock.board.stats.refused).toEqual([]);
  });
});

describe('stop', () => {
  it('zeroes the motors and a pin state query confirms the PWM pins at 0', async () => {
    const s = await opened();
    await pumpUntil(s.clock, s.link.enable(true));
    s.link.writeDuty([0.7, -0.7]);
    await runFor(s.clock, 0.05);
    expect(s.mock.board.appliedDuty[0]).toBeGreaterThan(0.6);
    const outcome = await pumpUntil(s.clock, s.link.stop());
    expect(outcome).toBe('acknowledged');
    expect(s.mock.board.pin(5)).toEqual({ mode: MODE.PWM, state: 0 });
    expect(s.mock.board.pin(6)).toEqual({ mode: MODE.PWM, state: 0 });
    expect(s.mock.board.appliedDuty).toEqual([0, 0]);
    // after a stop, duties are held at 0 until enable(true)
    s.link.writeDuty([0.7, 0.7]);
    await runFor(s.clock, 0.01);
    expect(s.mock.board.appliedDuty).toEqual([0, 0]);
    expect(await pumpUntil(s.clock, s.link.stop())).toBe('acknowledged');
  });

  it('stock Firmata: a stop the board does not confirm says the board has no watchdog, never "watchdog"', async () => {
    const s = await opened();
    await pumpUntil(s.clock, s.link.enable(true));
    s.link.writeDuty([0.5, 0.5]);
    await runFor(s.clock, 0.01);
    s.mock.board.injected.silent = true;
    expect(await pumpUntil(s.clock, s.link.stop(100))).toBe('unconfirmed-no-watchdog');
    // and it was right: nothing on the board stopped the motors
    await runFor(s.clock, 0.5);
    expect(s.mock.board.appliedDuty[0]).toBeGreaterThan(0.4);
  });

  it('with the FirmataWatchdog: an unconfirmed stop is "unconfirmed" (the board will cut the motors)', async () => {
    const s = await opened(firmataRig(), { features: { encoder: true, watchdog: true } });
    s.mock.board.injected.silent = true;
    expect(await pumpUntil(s.clock, s.link.stop(100))).toBe('unconfirmed');
  });
});

describe('connection problems', () => {
  it("a wrong baud rate ends in johnny-five's handshake timeout, as a LinkError that names the port and the baud rate", async () => {
    const s = await setup(firmataRig(), { hostBaud: 115200, handshakeMs: 800 });
    open.push(s);
    const e = await rejection(s, s.link.open());
    expect(e.reason).toBe('no-answer');
    expect(e.message).toMatch(/^mock:mock-arm-firmata: no Firmata handshake within 800 ms at 115200 baud/);
    // Mostly no version at all; now and then the random bytes hold a REPORT_VERSION 2.x by chance, and
    // the message then says a wrong baud rate can make one up. Either way it names the baud rate.
    expect(e.message).toMatch(
      /bytes came back but no Firmata version: wrong baud rate|never its firmware name \(\d+ bytes came back\): a wrong baud rate can make a version up/,
    );
    expect(s.mock.board.stats.garbled).toBeGreaterThan(0);
  });

  it('a board that never answers: the error says nothing came back', async () => {
    const s = await setup(firmataRig(), { handshakeMs: 600 });
    open.push(s);
    s.mock.board.injected.silent = true;
    const e = await rejection(s, s.link.open());
    expect(e.message).toMatch(/no Firmata handshake within 600 ms at 57600 baud .*nothing at all came back: is the board connected/);
  });

  it('the port vanishing (johnny-five says close) becomes a closed event naming the port and the cable loss (EIO); the link stays safe to call', async () => {
    const s = await opened();
    const events: LinkEvent[] = [];
    s.link.onEvent((e) => events.push(e));
    await pumpUntil(s.clock, s.link.enable(true));
    s.link.writeDuty([0.3, 0.3]);
    await runFor(s.clock, 0.01);
    s.mock.unplug();
    await runFor(s.clock, 0.01);
    const cable = { port: 'mock:mock-arm-firmata', code: 'EIO', message: 'the device was unplugged (EIO)' };
    expect(events).toContainEqual({
      kind: 'closed',
      reason: 'mock:mock-arm-firmata: the port vanished (the device was unplugged (EIO))',
      cable,
    });
    expect(() => s.link.writeDuty([0.1, 0.1])).not.toThrow();
    expect(await pumpUntil(s.clock, s.link.stop())).toBe('unconfirmed-no-watchdog');
    await expect(s.link.enable(true)).rejects.toThrow(LinkError);
  });

  it('a board reset (a REPORT_VERSION and pins back to their defaults) becomes a board-reset event', async () => {
    const s = await opened();
    const events: LinkEvent[] = [];
    s.link.onEvent((e) => events.push(e));
    s.mock.board.reset();
    await runFor(s.clock, 0.05);
    expect(events).toContainEqual({ kind: 'board-reset' });
  });
});

describe('the shared sysex table', () => {
  it("two links at once each get their own encoder replies; a handler someone left in firmata.js's static table changes nothing", async () => {
    // twolink reads the encoder replies off the stream itself and registers no sysex handler.
    const first = await setup();
    open.push(first);
    const FirmataCtor = (await import('node:module')).createRequire(import.meta.url)('firmata') as {
      SYSEX_RESPONSE: Record<number, unknown>;
    };
    FirmataCtor.SYSEX_RESPONSE[0x61] = () => {};
    await pumpUntil(first.clock, first.link.open());
    const second = await opened();
    await pumpUntil(first.clock, first.link.enable(true));
    await pumpUntil(second.clock, second.link.enable(true));
    first.link.writeDuty([0.5, 0]);
    second.link.writeDuty([-0.5, 0]);
    for (let i = 0; i < 200; i++) {
      await runFor(first.clock, 0.001);
      await runFor(second.clock, 0.001);
    }
    expect(first.link.last()!.raw[0]).toBeGreaterThan(100);
    expect(second.link.last()!.raw[0]).toBeLessThan(-100);
    // closing one leaves the other working; opening a third after both closed registers afresh
    await teardown(open.splice(1, 1)[0]!);
    await runFor(first.clock, 0.02);
    expect(first.link.read()).toBeDefined();
    await teardown(open.splice(0, 1)[0]!);
    const third = await opened();
    expect(third.link.read()?.raw).toEqual([0, 0]);
  });
});

describe('the wire budget, on the wire', () => {
  it('a two-encoder report every 1 ms at 57600 baud does not fit: reports come at the wire rate, stale, and the firmware loop stalls', async () => {
    const measure = async (intervalMs: number) => {
      const s = await opened(firmataRig((r) => (r.firmata = { ...r.firmata!, samplingIntervalMs: intervalMs })));
      await pumpUntil(s.clock, s.link.enable(true));
      await runFor(s.clock, 0.2); // let the buffers reach their steady state
      const st = s.mock.board.stats;
      const before = { reports: st.reports, blocked: st.blockedS, age: st.reportAgeSumS };
      let readings = 0;
      await runFor(s.clock, 1, () => {
        if (s.link.read()) readings++;
      });
      // a command's round trip: PWM change, then a pin state query behind the reports
      const t0 = s.clock.now();
      const outcome = await pumpUntil(s.clock, s.link.stop(), { stepS: 0.0001 });
      const stopS = s.clock.now() - t0;
      const n = st.reports - before.reports;
      return { readings, meanAgeS: (st.reportAgeSumS - before.age) / n, blockedS: st.blockedS - before.blocked, stopS, outcome };
    };
    const fits = await measure(0); // auto: 3 ms
    const tooFast = await measure(1);
    const noted = (s: Setup): string[] => s.link.warnings.filter((w) => !w.startsWith('NO BOARD WATCHDOG'));
    expect(noted(open[0]!)).toEqual([]);
    expect(noted(open[1]!)).toEqual([
      "firmata.samplingIntervalMs 1 ms is shorter than the 2.26 ms a 13-byte report takes at 57600 baud: reports will queue in the board's transmit buffer and arrive up to 13 ms old (0 = automatic: 3 ms)",
    ]);
    // asked for 1000 reports a second, the wire carries 5760 / 13 = 443
    expect(fits.readings).toBeGreaterThan(320);
    expect(fits.readings).toBeLessThan(340);
    expect(tooFast.readings).toBeGreaterThan(420);
    expect(tooFast.readings).toBeLessThan(450);
    // the 64-byte transmit buffer stays full: each report waits ~11 ms behind it
    expect(fits.meanAgeS).toBeLessThan(0.003);
    expect(tooFast.meanAgeS).toBeGreaterThan(0.01);
    // ConfigurableFirmata's loop spends most of its time blocked in Serial.write()
    expect(fits.blockedS).toBe(0);
    expect(tooFast.blockedS).toBeGreaterThan(0.5);
    // and the stop's confirmation waits behind the queued reports
    expect(fits.outcome).toBe('acknowledged');
    expect(tooFast.outcome).toBe('acknowledged');
    expect(tooFast.stopS).toBeGreaterThan(fits.stopS + 0.008);
  });
});

describe('createFirmataLink', () => {
  it("needs the rig file's firmata section", async () => {
    const { createFirmataLink } = await import('../src/transport/firmata-link.js');
    const rig = firmataRig((r) => delete r.firmata);
    const s = await setup();
    open.push(s);
    expect(() => createFirmataLink(rig, {} as never, 'x', s.clock)).toThrow(/no "firmata" section/);
    expect(() =>
      createFirmataLink(
        firmataRig(
          (r) =>
            (r.firmata = {
              ...r.firmata!,
              motors: [
                { shield: 'NOPE', motor: 'A' },
                { pwm: 6, dir: 7 },
              ],
            }),
        ),
        {} as never,
        'x',
        s.clock,
      ),
    ).toThrow(/^x: firmata\.motors\[0\]: unknown shield "NOPE"/);
  });
});
