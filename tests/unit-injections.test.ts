// The injection table as a unit (src/mock/injections.ts): every entry's example is what its parser
// accepts, applying an entry changes the part it names on a real mock (and only where the mock has that
// part), the parts each mock offers are what MOCK_PARTS says, ranges are inclusive at both ends (busy's
// lower bound excluded), and the forms the parser refuses. The messages of refused values:
// tests/bad-input-injections.test.ts.
import { describe, expect, it } from 'vitest';
import { loadRig } from '../src/config/load.js';
import {
  actsOn,
  applyInjection,
  firmataMockSite,
  formatInjection,
  injectFromHandshake,
  injectionHelp,
  InjectionError,
  injectionSchema,
  INJECTION_NAMES,
  INJECTIONS,
  injectOnPlantTime,
  lineMockSite,
  MAX_INJECTION_TIME_S,
  MOCK_PARTS,
  parseInjection,
  refusal,
  type Injection,
  type InjectionSite,
} from '../src/mock/injections.js';
import { createFirmataMock } from '../src/mock/firmata-mock.js';
import { createLineMock } from '../src/mock/line-mock.js';
import { VirtualClock } from '../src/time/clock.js';
import { encodeHostFrame, PROTOCOL } from '../src/protocol/codec.js';
import { FIRMATA } from '../src/protocol/firmata.js';

const rig = loadRig('rigs/mock-arm.json');

/** A fresh line-protocol mock and its site. */
function lineMock() {
  const mock = createLineMock(rig, new VirtualClock());
  let unplugged = 0;
  const site = lineMockSite('the mock rig', mock.plant, mock.board, () => void unplugged++);
  return { mock, site, unplugged: () => unplugged };
}

describe('parseInjection', () => {
  it.each(INJECTION_NAMES)('the example of %s parses to it with its value and time, and prints back as written', (name) => {
    const example = INJECTIONS[name].example;
    const m = /^([a-z]+)(?:=([^@]*))?@([^+]*)(?:\+(.*))?$/.exec(example)!;
    expect(m[1]).toBe(name);
    const i = parseInjection(example);
    expect(i).toEqual({
      name,
      ...(m[2] !== undefined ? { value: m[2] } : {}),
      at: Number(m[3]),
      ...(m[4] !== undefined ? { for: Number(m[4]) } : {}),
    });
    expect(formatInjection(i)).toBe(example);
    expect(injectionSchema.parse(i)).toEqual(i);
  });

  it('the help has one line per injection, with its value form from the parser', () => {
    const lines = injectionHelp().split('\n');
    expect(lines.map((l) => l.trim().split(/\s+/)[0])).toEqual(INJECTION_NAMES);
    expect(lines.find((l) => l.trim().startsWith('payload'))).toMatch(
      /payload=KG \(0\.\.20 kg, default 0\.2\); acts on the simulated arm; e\.g\. payload=0\.2@1\.5/,
    );
    expect(lines.find((l) => l.trim().startsWith('busy'))).toMatch(/busy=S \(>0\.\.30 s, default 1\)/);
  });

  it('range ends: inclusive, except busy above 0; the time after @ from 0 to a day', () => {
    expect(parseInjection('payload=0').value).toBe('0');
    expect(parseInjection('payload=20').value).toBe('20');
    expect(() => parseInjection('payload=20.001')).toThrow(/out of range/);
    expect(parseInjection('slip=2:-1000000').value).toBe('2:-1000000');
    expect(() => parseInjection('slip=2:1000001')).toThrow(/out of range/);
    expect(parseInjection('busy=30').value).toBe('30');
    expect(parseInjection('busy=1e-3').value).toBe('1e-3');
    expect(() => parseInjection('busy=0')).toThrow(/above 0/);
    expect(parseInjection(`reset@${MAX_INJECTION_TIME_S}`).at).toBe(MAX_INJECTION_TIME_S);
    expect(parseInjection('reset@0').at).toBe(0);
    expect(parseInjection('reset@.5').at).toBe(0.5);
  });

  it('no value: no value key (the entry has a default); no time: at 0', () => {
    expect(parseInjection('payload')).toEqual({ name: 'payload', at: 0 });
    expect(parseInjection('stall')).toEqual({ name: 'stall', at: 0 });
  });

  it('the flag the argument came with names it in the message (--fault, the deprecated name)', () => {
    expect(() => parseInjection('payload=-1', 2, '--fault')).toThrow(/^--fault "payload=-1": the payload -1 kg is out of range/);
  });

  it.each([
    ['', /write NAME\[=VALUE\]\[@SECONDS\]/],
    ['payload=1@2@3', /write NAME\[=VALUE\]\[@SECONDS\]/],
    ['Payload=1', /write NAME\[=VALUE\]\[@SECONDS\]/],
    ['payload=Infinity', /"Infinity" is not a number/],
    ['payload=1@Infinity', /the time after @ "Infinity" is not a number of s/],
    ['slip=1:2:3', /write slip=JOINT:VALUE \(the slip \[counts\]\)/],
    ['stall=0', /the joint "0" must be 1\.\.2/],
    ['push=1:', /the torque "" is not a number of N m/],
    ['constructor=1', /unknown injection "constructor"/],
  ])('%j is refused with an InjectionError naming the argument', (text, re) => {
    let err: unknown;
    try {
      parseInjection(text);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(InjectionError);
    expect((err as Error).message.startsWith(`--inject "${text}": `)).toBe(true);
    expect((err as Error).message).toMatch(re);
  });
});

describe('applyInjection', () => {
  it('values and defaults reach the part they act on', () => {
    const { mock, site, unplugged } = lineMock();
    const apply = (text: string) => expect(applyInjection(site, parseInjection(text))).toEqual({ ok: true });
    apply('slip=2:-7');
    apply('slip=2');
    expect(mock.plant.injected.encoderOffset).toEqual([0, 93]);
    apply('push=1:-2.5');
    apply('stall');
    apply('dead=2');
    apply('reverse=1');
    apply('sag');
    expect(mock.plant.injected).toMatchObject({
      extraTorque: [-2.5, 0],
      stalled: [true, false],
      motorDead: [false, true],
      encoderReversed: [true, false],
      supplyScale: 0.6,
    });
    apply('latency=7');
    apply('drop=0.25');
    apply('corrupt');
    apply('silent');
    expect(mock.board.injected).toEqual({ extraLatency: 0.007, dropProbability: 0.25, corruptProbability: 0.01, silent: true });
    apply('reset');
    expect(mock.board.stats.resets).toBe(1);
    apply('unplug');
    expect(unplugged()).toBe(1);
    mock.dispose();
  });

  it('a site without the part says so and changes nothing (the host is not the mock; the Firmata board has no line bytes)', () => {
    const { mock, site } = lineMock();
    expect(applyInjection(site, parseInjection('busy=1'))).toEqual({
      ok: false,
      why: "busy acts on the host's loop thread, which the mock rig does not have",
    });
    const f = createFirmataMock(loadRig('rigs/mock-arm-firmata.json'), new VirtualClock());
    const fs = firmataMockSite('the Firmata mock rig', f.plant, f.board, () => undefined);
    expect(applyInjection(fs, parseInjection('drop=0.5'))).toEqual({
      ok: false,
      why: "drop acts on the line protocol's bytes, which the Firmata mock rig does not have",
    });
    expect(applyInjection(fs, parseInjection('silent'))).toEqual({ ok: true });
    expect(f.board.injected.silent).toBe(true);
    mock.dispose();
    f.dispose();
  });

  it('the host part gets the value: busy blocks for its seconds, throw raises', () => {
    const blocked: number[] = [];
    const site: InjectionSite = {
      name: 'a test host',
      host: { block: (s) => void blocked.push(s), raise: (m) => void blocked.push(m.length) },
    };
    applyInjection(site, parseInjection('busy=2.5'));
    applyInjection(site, parseInjection('busy'));
    expect(blocked).toEqual([2.5, 1]);
    expect(actsOn('throw')).toBe('host');
    const throwing: InjectionSite = {
      name: 'a test host',
      host: {
        block: () => undefined,
        raise: (m) => {
          throw new Error(m);
        },
      },
    };
    expect(() => applyInjection(throwing, parseInjection('throw'))).toThrow(/injected exception \(--inject throw\)/);
  });

  it('a value that crossed a boundary is checked again: a joint the arm lacks is refused, not applied', () => {
    const { mock, site } = lineMock();
    expect(applyInjection(site, { name: 'stall', value: '7', at: 0 })).toEqual({
      ok: false,
      why: 'stall=7@0: the joint "7" must be 1..2 (this arm has 2 joints)',
    });
    expect(mock.plant.injected.stalled).toEqual([false, false]);
    mock.dispose();
  });

  it('the mocks offer the parts MOCK_PARTS says (what the CLI refuses up front)', () => {
    const { mock, site } = lineMock();
    const f = createFirmataMock(loadRig('rigs/mock-arm-firmata.json'), new VirtualClock());
    const fs = firmataMockSite('the Firmata mock rig', f.plant, f.board, () => undefined);
    const parts = (s: InjectionSite) =>
      Object.keys(s)
        .filter((k) => k !== 'name')
        .sort();
    expect(parts(site)).toEqual([...MOCK_PARTS.line].sort());
    expect(parts(fs)).toEqual([...MOCK_PARTS.firmata].sort());
    for (const n of INJECTION_NAMES) expect(refusal(fs, n) === undefined).toBe(MOCK_PARTS.firmata.includes(actsOn(n)));
    mock.dispose();
    f.dispose();
  });
});

describe("injectOnPlantTime: the pty rig's injections on its simulated arm's time", () => {
  const step = rig.plant!.step;
  /** A line mock on a virtual clock at 0.5 s, its injections' zero there; each applied: [as written, the time it says, the plant's own time since zero]. */
  function scheduled(texts: string[]) {
    const clock = new VirtualClock();
    clock.advanceTo(0.5);
    const mock = createLineMock(rig, clock);
    const zero = clock.now();
    const applied: [string, number, number][] = [];
    const site = lineMockSite('the mock rig', mock.plant, mock.board, () => undefined);
    const injections = texts.map((t) => parseInjection(t));
    const s = injectOnPlantTime(clock, mock.plant, zero, injections, (i: Injection, t) => {
      expect(applyInjection(site, i)).toEqual({ ok: true });
      applied.push([formatInjection(i), t, mock.plant.t - zero]);
    });
    return { clock, mock, zero, applied, s };
  }

  it("what acts on the arm lands within one plant step of its time however late the board advances the plant (a starved board's one long advance)", () => {
    const { clock, mock, zero, applied, s } = scheduled(['stall=2@0.3', 'payload=0.1@0.3001', 'reset@0.2', 'slip=1:50@0.7']);
    mock.plant.duty[1] = 0.8; // joint 2 driven: it moves until it jams
    // The board's time has not reached any of them (its clock stands at zero): the plant is advanced by 1 s in one call.
    mock.plant.advance(zero + 1);
    expect(applied.map((a) => a[0])).toEqual(['stall=2@0.3', 'payload=0.1@0.3001', 'slip=1:50@0.7']);
    for (const [text, t, plantT] of applied) {
      const at = parseInjection(text).at;
      expect(t, text).toBeGreaterThanOrEqual(at - 1e-9);
      expect(t, text).toBeLessThanOrEqual(at + step + 1e-9);
      expect(t, text).toBeCloseTo(plantT, 9); // the time it says is the arm's own
    }
    expect(mock.plant.qd[1]).toBe(0); // jammed since 0.3 s
    expect(mock.plant.payloadKg).toBe(0.1);
    // The board's reset is the board's event, on the board's clock: not before its time there.
    expect(mock.board.stats.resets).toBe(0);
    clock.advanceTo(zero + 0.2);
    expect(mock.board.stats.resets).toBe(1);
    expect(applied.at(-1)).toEqual(['reset@0.2', expect.closeTo(0.2, 9), expect.closeTo(1, 9)]);
    expect(s.pending).toEqual([]);
    mock.dispose();
  });

  it('an arm nobody advances (no host yet) is brought to each due time by the board clock: applied at its time exactly', () => {
    const { clock, mock, zero, applied, s } = scheduled(['push=1:0.5@0.25', 'dead=2@0.4']);
    clock.advanceTo(zero + 0.3);
    expect(applied).toEqual([['push=1:0.5@0.25', expect.closeTo(0.25, 9), expect.closeTo(0.25, 9)]]);
    expect(mock.plant.injected.extraTorque).toEqual([0.5, 0]);
    expect(s.pending.map(formatInjection)).toEqual(['dead=2@0.4']);
    clock.advanceTo(zero + 0.5);
    expect(applied.map((a) => a[0])).toEqual(['push=1:0.5@0.25', 'dead=2@0.4']);
    expect(applied[1]![1]).toBeCloseTo(0.4, 9);
    mock.dispose();
  });

  it('stopped (the rig ends), it applies no more and leaves the plant without its hook', () => {
    const { clock, mock, zero, applied, s } = scheduled(['stall=1@0.1', 'reset@0.1']);
    s.stop();
    expect(mock.plant.onStep).toBeUndefined();
    clock.advanceTo(zero + 1);
    mock.plant.advance(zero + 2);
    expect(applied).toEqual([]);
    expect(mock.plant.injected.stalled).toEqual([false, false]);
    expect(mock.board.stats.resets).toBe(0);
    mock.dispose();
  });
});

describe("injectFromHandshake: the pty rig's injections count from the host's handshake, not the rig's start", () => {
  const step = rig.plant!.step;
  const firmataRig = loadRig('rigs/mock-arm-firmata.json');
  /** The line mock's or the Firmata mock's board, its plant, its handshake hook and how a host asks for its identity. */
  const boards = {
    line: () => {
      const clock = new VirtualClock();
      const m = createLineMock(rig, clock);
      const hello = (): void => m.board.receive(Buffer.from(encodeHostFrame({ type: 'H', seq: 1, proto: PROTOCOL })));
      return {
        clock,
        plant: m.plant,
        hook: (fn: (() => void) | undefined) => void (m.board.onHandshake = fn),
        hello,
        dispose: () => m.dispose(),
      };
    },
    firmata: () => {
      const clock = new VirtualClock();
      const m = createFirmataMock(firmataRig, clock);
      const hello = (): void => m.board.receive(Uint8Array.from([FIRMATA.REPORT_VERSION]));
      return {
        clock,
        plant: m.plant,
        hook: (fn: (() => void) | undefined) => void (m.board.onIdentify = fn),
        hello,
        dispose: () => m.dispose(),
      };
    },
  };

  it.each(Object.keys(boards) as (keyof typeof boards)[])(
    '%s: nothing before a host asks; a host 3 s late meets stall=2@0.5 0.5 s after its handshake, a second handshake moves nothing',
    (kind) => {
      const b = boards[kind]();
      const applied: [string, number][] = [];
      const zeros: number[] = [];
      const s = injectFromHandshake(
        b.clock,
        b.plant,
        [parseInjection('stall=2@0.5'), parseInjection('push=1:0.5@0.8')],
        b.hook,
        (i, t) => void applied.push([formatInjection(i), t]),
        () => zeros.push(b.clock.now()),
      );
      // The rig serves for 3 s with no host: the arm moves on, its injections wait.
      b.clock.advanceTo(3);
      b.plant.advance(3);
      expect(applied).toEqual([]);
      expect(s.pending.map(formatInjection)).toEqual(['stall=2@0.5', 'push=1:0.5@0.8']);
      // The host connects late: the board answers its request on its own time (UART, its loop).
      b.hello();
      b.clock.advanceTo(3.05);
      expect(zeros).toHaveLength(1);
      const zero = zeros[0]!;
      expect(zero).toBeGreaterThanOrEqual(3);
      b.clock.advanceTo(zero + 0.6);
      b.hello(); // another host's handshake (a reconnect): the zero stays
      b.clock.advanceTo(zero + 1);
      expect(zeros).toHaveLength(1);
      expect(applied.map((a) => a[0])).toEqual(['stall=2@0.5', 'push=1:0.5@0.8']);
      expect(applied[0]![1]).toBeGreaterThanOrEqual(0.5 - 1e-9);
      expect(applied[0]![1]).toBeLessThanOrEqual(0.5 + step + 1e-9);
      expect(applied[1]![1]).toBeCloseTo(0.8, 6);
      expect(s.pending).toEqual([]);
      s.stop();
      expect(b.plant.onStep).toBeUndefined();
      b.dispose();
    },
  );

  it('stopped before any host came: none is applied when one comes', () => {
    const b = boards.line();
    const applied: string[] = [];
    const s = injectFromHandshake(
      b.clock,
      b.plant,
      [parseInjection('stall=1@0.1')],
      b.hook,
      (i) => void applied.push(formatInjection(i)),
      () => undefined,
    );
    s.stop();
    b.hello();
    b.clock.advanceTo(1);
    expect(applied).toEqual([]);
    b.dispose();
  });
});
