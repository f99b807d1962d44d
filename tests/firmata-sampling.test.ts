// The Firmata path on the board's clock, in virtual time against the emulated ConfigurableFirmata:
// samples handed out one per report with board time from the report count, the emulator's millis(),
// a second session on a board that was not reset, and the watchdog (twolink's FirmataWatchdog feature
// present, and stock Firmata without it). Assertions are on what crossed the wire, the plant and the
// board's pins.
import { afterEach, describe, expect, it } from 'vitest';
import { FIRMATA } from '../src/protocol/firmata.js';
import { VirtualClock } from '../src/time/clock.js';
import { clearFirmataSysexHandlers, FirmataLink } from '../src/transport/firmata-link.js';
import type { LinkEvent, Reading } from '../src/transport/link.js';
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

/** Enables the motors and starts sampling at `hz`; every sample is collected and answered with `duty`. */
async function sampling(s: Setup, hz: number, duty: () => number[] | undefined): Promise<Reading[]> {
  const got: Reading[] = [];
  s.link.onSample((r) => {
    got.push(r);
    const d = duty();
    if (d && !r.superseded) s.link.writeDuty(d);
  });
  await pumpUntil(s.clock, s.link.enable(true));
  await pumpUntil(s.clock, s.link.startSampling(hz));
  return got;
}

describe('samples on the board clock', () => {
  it('one sample per report: consecutive indices, board time = index x period, a command applies after the sample', async () => {
    const s = await opened();
    const got = await sampling(s, 333, () => [0.3, -0.3]);
    expect(s.link.samplePeriod).toBeCloseTo(0.003, 6);
    expect(s.link.samplingIntervalMs).toBe(3);
    await runFor(s.clock, 1);
    expect(got.length).toBeGreaterThan(320);
    expect(got.map((r) => r.index)).toEqual(got.map((_, i) => i));
    for (let i = 1; i < got.length; i++) {
      expect(got[i]!.boardTime - got[i - 1]!.boardTime).toBeCloseTo(s.link.samplePeriod!, 9);
      expect(got[i]!.applyAt).toBeGreaterThan(got[i]!.boardTime);
      expect(got[i]!.superseded).toBe(false);
    }
    // answered in time, nothing lost; the arm moved the way it was told
    expect(s.link.counters.late).toBe(0);
    expect(s.link.counters.lost).toBe(0);
    expect(got.at(-1)!.raw[0]).toBeGreaterThan(50);
    expect(got.at(-1)!.raw[1]).toBeLessThan(-50);
  });

  it("behind a Mega's 16U2 (4.096 ms flush) some 3 ms reports arrive in pairs: the older one is recorded, not answered; none is lost", async () => {
    const s = await opened(firmataRig((r) => (r.plant = { ...r.plant!, adapter: { kind: '16u2', latencyMs: 16 } })));
    const got = await sampling(s, 333, () => [0.3, -0.3]);
    await runFor(s.clock, 1);
    expect(got.length).toBeGreaterThan(320);
    expect(got.map((r) => r.index)).toEqual(got.map((_, i) => i));
    const paired = got.filter((r) => r.superseded).length;
    // 333 reports a second into 244 flushes a second: about a quarter come with the next one.
    expect(paired).toBeGreaterThan(got.length * 0.15);
    expect(paired).toBeLessThan(got.length * 0.4);
    expect(s.link.counters.lost).toBe(0);
  });

  it('a host stall: the backlog arrives in one chunk, all but the newest superseded, indices still consecutive', async () => {
    const s = await opened();
    const got = await sampling(s, 333, () => [0.2, 0.2]);
    await runFor(s.clock, 0.2);
    const before = got.length;
    // the host's thread is busy for 40 ms: virtual time jumps, the stream's bytes wait for it
    s.clock.advanceBy(0.04);
    await runFor(s.clock, 0.0005);
    const backlog = got.slice(before);
    expect(backlog.length).toBeGreaterThan(10);
    expect(backlog.slice(0, -1).every((r) => r.superseded)).toBe(true);
    expect(backlog.at(-1)!.superseded).toBe(false);
    expect(got.map((r) => r.index)).toEqual(got.map((_, i) => i));
    expect(s.link.counters.lost).toBe(0);
    // their board times are a period apart, although they arrived together
    expect(backlog.at(-1)!.boardTime - backlog[0]!.boardTime).toBeCloseTo((backlog.length - 1) * s.link.samplePeriod!, 9);
    // only the newest is answered, at once: not late (the loop counts the superseded ones)
    expect(s.link.counters.late).toBe(0);
  });

  it("the emulator's millis(): reports every 3 ms are taken 3.072 ms apart, and 2.048 ms once in about 14", async () => {
    const s = await opened();
    await pumpUntil(s.clock, s.link.startSampling(333));
    // when each report's last byte leaves the board's UART
    const at: number[] = [];
    const transmit = s.mock.board.onTransmit;
    s.mock.board.onTransmit = (b) => {
      if (b[0] === FIRMATA.START_SYSEX && b[1] === FIRMATA.ENCODER_DATA) at.push(s.clock.now());
      transmit(b);
    };
    await runFor(s.clock, 1, () => {}, 0.00005);
    // (the first few follow the change of interval)
    const d = at
      .slice(1)
      .map((t, i) => (t - at[i]!) * 1000)
      .slice(4);
    // 3.072 ms, except the 2.048 ms interval: its report cannot leave before the previous one has
    // (13 bytes at 57600 baud take 2.257 ms), so it leaves 2.257 ms after it and the next 2.863 ms later
    const near = (x: number, v: number): boolean => Math.abs(x - v) < 0.002;
    let short = 0;
    for (let i = 0; i < d.length; i++) {
      if (near(d[i]!, 3.072)) continue;
      expect(d[i]!).toBeCloseTo(2.257, 2);
      expect(d[i]! + d[i + 1]!).toBeCloseTo(3.072 + 2.048, 6);
      short++;
      i++;
    }
    expect(short / d.length).toBeCloseTo(1 / 14, 1);
    expect(Math.abs(d.reduce((a, b) => a + b, 0) / d.length - 3)).toBeLessThan(0.01); // millis() is right on average
  });
});

describe('a board that was not reset between sessions', () => {
  it('the emulator ignores a second attach of an attached encoder, as FirmataEncoder 0.1.0 does: no reply', async () => {
    const s = await opened();
    const replies: number[] = [];
    await pumpUntil(s.clock, s.link.close());
    await runFor(s.clock, 0.05); // the reports still on the wire
    // a host that attaches without detaching: nothing comes back
    const ignored = s.mock.board.encoder.ignoredAttaches;
    const again = await s.mock.openStream();
    again.on('data', (d: Buffer) => {
      for (let i = 0; i + 1 < d.length; i++) if (d[i] === FIRMATA.START_SYSEX && d[i + 1] === FIRMATA.ENCODER_DATA) replies.push(i);
    });
    again.write(Buffer.from([FIRMATA.START_SYSEX, FIRMATA.ENCODER_DATA, 0x00, 0, 2, 3, FIRMATA.END_SYSEX]));
    await runFor(s.clock, 0.1);
    expect(s.mock.board.encoder.ignoredAttaches).toBe(ignored + 1);
    expect(replies).toEqual([]);
    again.destroy();
  });

  it('a second link on the same board opens: it detaches before it attaches, and the readings go on', async () => {
    const s = await opened();
    await pumpUntil(s.clock, s.link.enable(true));
    s.link.writeDuty([0.4, 0.4]);
    await runFor(s.clock, 0.2);
    const moved = s.link.last()!.raw[0]!;
    expect(moved).toBeGreaterThan(50);
    expect(await pumpUntil(s.clock, s.link.stop())).toBe('acknowledged');
    await pumpUntil(s.clock, s.link.close());
    // the same board, not reset: its encoders are still attached and counting
    const stream = await s.mock.openStream();
    const rig = s.rig;
    const second = new FirmataLink({
      stream,
      name: 'second',
      baudRate: rig.link.baudRate,
      clock: s.clock,
      firmata: rig.firmata!,
      encoders: rig.encoders,
      handshakeMs: 3000,
      answerMs: 500,
      watchdogMs: 100,
    });
    open.push({ ...s, stream, link: second });
    await pumpUntil(s.clock, second.open());
    expect(s.mock.board.stats.resets).toBe(0);
    expect(s.mock.board.encoder.ignoredAttaches).toBe(0);
    // a fresh attach counts from 0 where the arm is (FirmataEncoder makes a new Encoder), and counts on
    const start = second.read()!.raw[0]!;
    expect(Math.abs(start)).toBeLessThan(moved / 4);
    await pumpUntil(s.clock, second.enable(true));
    second.writeDuty([0.4, 0]);
    await runFor(s.clock, 0.2);
    expect(second.last()!.raw[0]! - start).toBeGreaterThan(50);
  });
});

describe('the watchdog', () => {
  it('present (FirmataWatchdog): the host finds it, arms it with the motor PWM pins, and no warning is given', async () => {
    const s = await setup(firmataRig(), { features: { encoder: true, watchdog: true } });
    open.push(s);
    const id = await pumpUntil(s.clock, s.link.open());
    expect(s.link.hasBoardWatchdog).toBe(true);
    expect(id.watchdogMs).toBe(100);
    expect(id.warnings).toBeUndefined();
    expect(s.mock.board.watchdog!.status).toEqual({ version: 1, timeoutMs: 100, pins: [5, 6] });
  });

  it('present: while the host answers, unchanged duties keep it fed; when the host goes silent the board zeroes the motors and says so', async () => {
    const s = await setup(firmataRig(), { features: { encoder: true, watchdog: true } });
    open.push(s);
    await pumpUntil(s.clock, s.link.open());
    const events: LinkEvent[] = [];
    s.link.onEvent((e) => events.push(e));
    let answering = true;
    await sampling(s, 333, () => (answering ? [0.5, -0.5] : undefined));
    await runFor(s.clock, 1);
    expect(s.mock.board.watchdog!.fired).toBe(0);
    expect(s.mock.board.appliedDuty[0]).toBeCloseTo(0.5, 2);
    // the host stops answering
    answering = false;
    const silentFrom = s.clock.now();
    let zeroedAt = -1;
    await runFor(s.clock, 0.3, () => {
      if (zeroedAt < 0 && s.mock.board.appliedDuty.every((d) => d === 0)) zeroedAt = s.clock.now();
    });
    expect(s.mock.board.watchdog!.fired).toBe(1);
    expect(s.link.last()!.watchdog).toBe(true);
    // the board counts from the last message: the last command, or a feed up to a quarter of the timeout before it
    expect(zeroedAt - silentFrom).toBeGreaterThan(0.1 - 0.025 - 0.004);
    expect(zeroedAt - silentFrom).toBeLessThan(0.1 + 0.004);
    expect(s.mock.board.pin(5).state).toBe(0);
    expect(s.mock.board.pin(6).state).toBe(0);
    expect(events).toContainEqual({
      kind: 'watchdog',
      text: expect.stringMatching(/^the board's FirmataWatchdog zeroed 2 motor\(s\) after 10\d ms without a message from the host$/),
    });
  });

  it('absent (stock Firmata): loud at start-up; a host that stops commanding has its motors zeroed by the link, and a stop it cannot confirm says there is no watchdog', async () => {
    const s = await opened();
    expect(s.link.hasBoardWatchdog).toBe(false);
    expect(s.link.warnings[0]).toMatch(/^NO BOARD WATCHDOG: .* stock Firmata keeps the motors at their last PWM/);
    let answering = true;
    await sampling(s, 333, () => (answering ? [0.5, 0.5] : undefined));
    await runFor(s.clock, 0.2);
    answering = false;
    await runFor(s.clock, 0.3);
    // the board did nothing; the link zeroed them once the command was older than watchdogMs
    expect(s.link.hostStops).toHaveLength(1);
    expect(s.link.hostStops[0]!).toBeGreaterThan(100);
    expect(s.link.hostStops[0]!).toBeLessThan(110);
    expect(s.mock.board.appliedDuty).toEqual([0, 0]);
    s.mock.board.injected.silent = true;
    expect(await pumpUntil(s.clock, s.link.stop(100))).toBe('unconfirmed-no-watchdog');
  });
});

describe('startSampling', () => {
  it('asks for the whole-ms interval of the rate, never shorter than the report takes on the wire', async () => {
    const s = await opened();
    await pumpUntil(s.clock, s.link.startSampling(100));
    expect(s.link.samplingIntervalMs).toBe(10);
    expect(s.mock.board.samplingIntervalMs).toBe(10);
    await pumpUntil(s.clock, s.link.startSampling(1000)); // 13 bytes at 57600 need 2.26 ms
    expect(s.link.samplingIntervalMs).toBe(3);
    expect(s.link.samplePeriod).toBeCloseTo(0.003, 6);
    await expect(s.link.startSampling(Number.NaN)).rejects.toThrow(/NaN is not a sampling rate/);
  });

  it('is refused before open', async () => {
    const clock = new VirtualClock();
    const s = await setup(firmataRig());
    open.push(s);
    expect(clock.now()).toBe(0);
    await expect(s.link.startSampling(333)).rejects.toThrow(/the link is not open/);
  });
});
