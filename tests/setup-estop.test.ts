// twolink setup's e-stop: space or Esc while a motor pulse or the speed test runs zeroes the motors at once and the board
// confirms the stop (virtual time, the mock rig); the terminal's keys reach the operator's signal.
import { PassThrough } from 'node:stream';
import { describe, expect, it, vi } from 'vitest';
import { loadRig } from '../src/config/load.js';
import { FLAG } from '../src/protocol/codec.js';
import { createLineMock } from '../src/mock/line-mock.js';
import { runSetup, SetupStopped, type Hand, type Operator } from '../src/setup/driver.js';
import { MockHand } from '../src/setup/mock-hand.js';
import { PersonHand, TerminalOperator } from '../src/setup/operator.js';
import { probeLineBoard } from '../src/setup/probe.js';
import { runUntilSettled, VirtualClock } from '../src/time/clock.js';
import { LineLink } from '../src/transport/line-link.js';
import { Person, CHILD_GUARD_MS, HANG_GUARD_MS } from './helpers/setup-person.js';

// Hang guards only: the tests wait for events.
vi.setConfig({ testTimeout: HANG_GUARD_MS, hookTimeout: HANG_GUARD_MS });

const rig = loadRig('rigs/mock-arm.json');

/** The mock board in virtual time, probed as setup probes a port, and the line link to it; `drive` runs a promise for up to `maxS` of board time. */
async function boardOnMock(maxS: number) {
  const clock = new VirtualClock();
  const mock = createLineMock(rig, clock);
  const stream = await mock.openStream();
  const drive = <T>(p: Promise<T>): Promise<T> => runUntilSettled(clock, p, { stepS: 0.001, maxS, maxRealMs: CHILD_GUARD_MS });
  const info = (await drive(probeLineBoard(stream, clock, 2, 2000)))!;
  const link = new LineLink({
    stream,
    name: mock.path,
    baudRate: rig.link.baudRate,
    clock,
    encoders: info.cpr.map((c) => ({ countsPerRev: c, sign: 1, zero: 0 })),
    watchdogMs: 100,
    handshakeMs: 2000,
  });
  return { clock, mock, drive, link, info };
}

describe('setup: the e-stop while a motor is driven', () => {
  it.each([
    ['a motor pulse', 'motor output 1', '[PASS] encoder 2'],
    ['the speed test (motor constants)', 'motor 1 constant', '[PASS] motor output 2'],
  ])('during %s: zeroes the motors at once, the board confirms, and setup stops with the reason', async (_what, running, before) => {
    const { clock, mock, drive, link, info } = await boardOnMock(600);
    const ac = new AbortController();
    const said: string[] = [];
    const operator: Operator = {
      say: (t) => said.push(t),
      confirm: () => Promise.resolve(),
      ask: () => Promise.resolve(),
      signal: ac.signal,
    };
    // The person presses space as soon as a motor is driven; then watch the duty at the plant.
    let pressedAt = -1;
    let zeroAt = -1;
    let constantsAt = -1;
    const watch = (): void => {
      const driven = mock.plant.duty.some((d) => d !== 0);
      // For the speed test: once it has driven for half a second (well into its first pass).
      const ready =
        before === '[PASS] encoder 2' ||
        (said.some((t) => t.startsWith('Motor constants')) &&
          clock.now() - (constantsAt < 0 ? (constantsAt = clock.now()) : constantsAt) > 0.5);
      if (pressedAt < 0 && driven && ready) {
        pressedAt = clock.now();
        ac.abort('estop');
      } else if (pressedAt >= 0 && zeroAt < 0 && !driven) zeroAt = clock.now();
      clock.setTimer(0.0001, watch);
    };
    watch();
    const board = { firmware: info.fw, board: info.board, protocol: String(info.proto), joints: info.joints, countsPerRev: info.cpr };
    const outcome = drive(runSetup({ rig, link, board, clock, operator, hand: new MockHand(mock.plant, clock) }));
    await expect(outcome).rejects.toThrow(SetupStopped);
    await expect(outcome).rejects.toThrow('estop');
    expect(pressedAt).toBeGreaterThan(0);
    expect(zeroAt).toBeGreaterThanOrEqual(pressedAt);
    // Zero reaches the motors within a couple of the board's samples (virtual time: the link's and the board's timing).
    expect(zeroAt - pressedAt).toBeLessThan(0.01);
    expect(mock.plant.duty).toEqual([0, 0]);
    expect(mock.board.flags() & FLAG.EN).toBe(0);
    expect(mock.board.flags() & FLAG.STOP).not.toBe(0);
    expect(said.some((s) => s.startsWith(before))).toBe(true);
    // Stopped inside the step that was running: it reported nothing.
    expect(said.some((s) => s.includes(`] ${running}:`))).toBe(false);
    console.log(`e-stop to motors at zero: ${((zeroAt - pressedAt) * 1000).toFixed(2)} ms (virtual time)`);
    mock.dispose();
  });
});

describe('setup: the operator on a terminal', () => {
  /** A stdin that says it is a terminal, as a pty would. */
  function fakeTty(): PassThrough & { isTTY: boolean; raw: boolean; setRawMode(on: boolean): void } {
    const s = new PassThrough() as PassThrough & { isTTY: boolean; raw: boolean; setRawMode(on: boolean): void };
    s.isTTY = true;
    s.raw = false;
    s.setRawMode = (on) => (s.raw = on);
    return s;
  }

  it.each([
    [' ', { kind: 'estop' }],
    ['\x1b', { kind: 'estop' }],
    ['\x03', { kind: 'interrupted', signal: 'SIGINT' }],
  ])('key %j aborts with %o, even while nothing is asked', (key, reason) => {
    const input = fakeTty();
    const err = new PassThrough();
    const op = new TerminalOperator({ yes: true, quiet: true, input: input as unknown as NodeJS.ReadStream, err });
    expect(input.raw).toBe(true);
    input.write(key);
    expect(op.signal.aborted).toBe(true);
    expect(op.signal.reason).toEqual(reason);
    op.dispose();
    expect(input.raw).toBe(false);
  });

  it('Enter answers a prompt; --yes answers the motion prompt but not the request for hands', async () => {
    const input = fakeTty();
    const err = new PassThrough();
    const op = new TerminalOperator({ yes: true, quiet: true, input: input as unknown as NodeJS.ReadStream, err });
    await op.confirm('the arm will move');
    let answered = false;
    const asked = op.ask('turn joint 1').then(() => (answered = true));
    await new Promise((r) => setImmediate(r));
    expect(answered).toBe(false);
    input.write('\r');
    await asked;
    expect(answered).toBe(true);
    expect(op.signal.aborted).toBe(false);
    op.dispose();
  });

  it('piped stdin: lines that come before their prompts answer them in order', async () => {
    const input = new PassThrough() as PassThrough & { isTTY?: boolean };
    const op = new TerminalOperator({ yes: false, quiet: true, input: input as unknown as NodeJS.ReadStream, err: new PassThrough() });
    const first = op.ask('turn joint 1');
    input.write('\n\n');
    await first;
    await op.ask('let it hang');
    input.end();
    await new Promise((r) => setImmediate(r));
    await expect(op.ask('again')).rejects.toBeInstanceOf(SetupStopped);
    op.dispose();
  });

  it('piped stdin that ends while a prompt waits: setup is told to use --yes', async () => {
    const input = new PassThrough() as PassThrough & { isTTY?: boolean };
    const op = new TerminalOperator({ yes: false, quiet: true, input: input as unknown as NodeJS.ReadStream, err: new PassThrough() });
    const p = op.confirm('the arm will move');
    input.end();
    await expect(p).rejects.toThrow(/stdin closed while setup was waiting for Enter \(give --yes/);
    await expect(p).rejects.toBeInstanceOf(SetupStopped);
    op.dispose();
  });
});

/**
 * The hand of a person at a real arm, on the mock: the mock's hand turns the joint, then the person is
 * asked (as PersonHand asks on a port) and answers at the terminal.
 */
class AskedHand implements Hand {
  private readonly person: PersonHand;
  constructor(
    op: Operator,
    private readonly mock: MockHand,
  ) {
    this.person = new PersonHand(op);
  }
  async move(joint: number, deg: number): Promise<void> {
    await this.mock.move(joint, deg);
    await this.person.move(joint, deg);
  }
  async toStop(joint: number, direction: 1 | -1): Promise<void> {
    await this.mock.toStop(joint, direction);
    await this.person.toStop(joint, direction);
  }
  async lower(): Promise<void> {
    await this.mock.lower();
    await this.person.lower();
  }
  async release(): Promise<void> {
    await this.person.release();
    await this.mock.release();
  }
}

/** Every prompt of setup's steps on a port (the person's hands, the limits questions, the motion prompts), in order. */
const HAND_PROMPTS = [
  'turn joint 1 90 deg',
  'let the arm hang freely again',
  'turn joint 2 90 deg',
  'let the arm hang freely again',
  'turn joint 1 clockwise by hand until it stops',
  'lower the arm gently back to hanging',
  'turn joint 1 counter-clockwise by hand until it stops',
  'lower the arm gently back to hanging',
  'joint 1: the stops allow soft limits',
  'turn joint 2 clockwise by hand until it stops',
  'lower the arm gently back to hanging',
  'turn joint 2 counter-clockwise by hand until it stops',
  'lower the arm gently back to hanging',
  'joint 2: the stops allow soft limits',
  'the arm will move: clear it',
  'the arm will move: clear it',
];

describe('setup on a port: the e-stop at each prompt of its steps ends it, motors at zero, the board stopped', () => {
  it.each(HAND_PROMPTS.map((p, i) => [i + 1, p] as const))(
    'prompt %i (%s): space',
    async (k, text) => {
      const { clock, mock, drive, link, info } = await boardOnMock(3600);
      const person = new Person();
      // The person answers every prompt before the k-th, and presses space at the k-th.
      person.answer = (p) => (person.prompts.length === k ? { keys: ' ' } : { keys: /\(y: yes/.test(p) ? 'n' : '\r' });
      const op = new TerminalOperator({
        yes: false,
        quiet: false,
        input: person.input as unknown as NodeJS.ReadStream,
        err: person.err,
        signals: person.signals,
      });
      const board = { firmware: info.fw, board: info.board, protocol: String(info.proto), joints: info.joints, countsPerRev: info.cpr };
      const outcome = drive(runSetup({ rig, link, board, clock, operator: op, hand: new AskedHand(op, new MockHand(mock.plant, clock)) }));
      await expect(outcome).rejects.toThrow(SetupStopped);
      await expect(outcome).rejects.toThrow('estop');
      op.dispose();
      expect(person.prompts).toHaveLength(k);
      expect(person.prompts[k - 1]).toContain(text);
      expect(mock.plant.duty).toEqual([0, 0]);
      expect(mock.board.flags() & FLAG.EN).toBe(0);
      expect(mock.board.flags() & FLAG.STOP).not.toBe(0);
      expect(person.input.raw).toBe(false);
      mock.dispose();
    },
    HANG_GUARD_MS,
  );
});
