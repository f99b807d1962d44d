// The Firmata pieces as pure functions: the FirmataEncoder reply, capabilities, motor presets, the
// wire budget of a control cycle, and the rig file's `firmata` section.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { describe, expect, it } from 'vitest';
import { loadRig } from '../src/config/load.js';
import { RigFileError } from '../src/config/rig.js';
import {
  BOARDS,
  capabilities,
  cycleBudget,
  decodeEncoderPositions,
  decodeString7,
  decodeWatchdog,
  encodeCapabilities,
  encodeEncoderPositions,
  encodeString7,
  encodeWatchdogArm,
  encodeWatchdogStatus,
  FIRMATA,
  FirmataFramer,
  MODE,
  motorBytes,
  parseCapabilities,
  reportBytes,
  samplingIntervalFor,
  WATCHDOG,
} from '../src/protocol/firmata.js';
import { checkWiring, isWiringIssue, resolveMotorPins, resolveWiring, type Wiring } from '../src/protocol/firmata-wiring.js';
import { johnnyFive } from '../src/transport/johnny-five.js';

describe('FirmataEncoder replies', () => {
  it('encode as sign bit + 28-bit magnitude, 5 bytes per encoder, and decode back, negative counts too', () => {
    const list = [
      { encoder: 0, count: 0 },
      { encoder: 1, count: -1 },
      { encoder: 2, count: 123456 },
      { encoder: 3, count: -(2 ** 28 - 1) },
      { encoder: 4, count: 2 ** 28 - 1 },
    ];
    const body = encodeEncoderPositions(list);
    expect(body).toHaveLength(25);
    expect(body.every((b) => b <= 0x7f)).toBe(true);
    // encoder 1 at -1: sign in bit 6 of the first byte, magnitude 1
    expect(body.slice(5, 10)).toEqual([0x41, 1, 0, 0, 0]);
    expect(decodeEncoderPositions(body)).toEqual(list);
  });

  it('the decoder agrees with the byte layout of FirmataEncoder._reportEncoderPosition', () => {
    // -300 on encoder 1: (1 << 6) | 1, then 300 = 0b10_0101100 -> 0x2c, 0x02
    expect(decodeEncoderPositions([0x41, 0x2c, 0x02, 0x00, 0x00])).toEqual([{ encoder: 1, count: -300 }]);
  });

  it('rejects bodies that are not whole encoders or carry a byte with bit 7 set', () => {
    expect(decodeEncoderPositions([])).toBeUndefined();
    expect(decodeEncoderPositions([0, 1, 2, 3])).toBeUndefined();
    expect(decodeEncoderPositions([0, 0x80, 0, 0, 0])).toBeUndefined();
  });

  it('strings travel as two 7-bit bytes per character', () => {
    expect(decodeString7(encodeString7('ConfigurableFirmata.ino'))).toBe('ConfigurableFirmata.ino');
  });
});

describe('board pin sets', () => {
  it('an Uno offers PWM on 3 5 6 9 10 11, ENCODER on the interrupt pins 2 and 3, nothing on the serial pins', () => {
    const caps = parseCapabilities(encodeCapabilities(capabilities(BOARDS.uno, { encoder: true })));
    expect(caps).toHaveLength(20);
    expect(caps.flatMap((c, p) => (c.has(MODE.PWM) ? [p] : []))).toEqual([3, 5, 6, 9, 10, 11]);
    expect(caps.flatMap((c, p) => (c.has(MODE.ENCODER) ? [p] : []))).toEqual([2, 3]);
    expect(caps[0]!.size).toBe(0);
    expect(caps[14]!.get(MODE.ANALOG)).toBe(10);
    expect(caps[5]!.get(MODE.PWM)).toBe(8);
  });

  it('a Mega has 70 pins, encoders on 2 3 18 19 20 21, and no ENCODER mode at all without FirmataEncoder', () => {
    const caps = parseCapabilities(encodeCapabilities(capabilities(BOARDS.mega, { encoder: true })));
    expect(caps).toHaveLength(70);
    expect(caps.flatMap((c, p) => (c.has(MODE.ENCODER) ? [p] : []))).toEqual([2, 3, 18, 19, 20, 21]);
    const plain = parseCapabilities(encodeCapabilities(capabilities(BOARDS.mega, { encoder: false })));
    expect(plain.some((c) => c.has(MODE.ENCODER))).toBe(false);
  });
});

describe('motor pins', () => {
  const shields = johnnyFive().Motor.SHIELD_CONFIGS;
  it('pins pass through; a johnny-five shield preset resolves to its pins', () => {
    expect(resolveMotorPins({ pwm: 5, dir: 4 }, shields)).toEqual({ pwm: 5, dir: 4 });
    expect(resolveMotorPins({ pwm: 9, dir: 8, cdir: 11 }, shields)).toEqual({ pwm: 9, dir: 8, cdir: 11 });
    expect(resolveMotorPins({ shield: 'DF_ROBOT', motor: 'A' }, shields)).toEqual({ pwm: 6, dir: 7 });
    expect(resolveMotorPins({ shield: 'POLOLU_VNH5019_SHIELD', motor: 'M1' }, shields)).toEqual({ pwm: 9, dir: 2, cdir: 4, enable: 6 });
  });

  it('presets that go through a shift register or an I2C chip, and unknown names, are refused with a reason', () => {
    expect(resolveMotorPins({ shield: 'ADAFRUIT_V1', motor: 'M1' }, shields)).toMatch(/shift register/);
    expect(resolveMotorPins({ shield: 'ADAFRUIT_V2', motor: 'M1' }, shields)).toMatch(/I2C chip \(PCA9685\)/);
    expect(resolveMotorPins({ shield: 'NOPE', motor: 'A' }, shields)).toMatch(/unknown shield "NOPE".*DF_ROBOT/);
    expect(resolveMotorPins({ shield: 'DF_ROBOT', motor: 'C' }, shields)).toMatch(/no motor "C".*A, B/);
  });
});

describe('the wire budget of a control cycle', () => {
  const motors = [
    { pwm: 5, dir: 4 },
    { pwm: 6, dir: 7 },
  ];
  it('two encoders report 13 bytes, two motors take 6 bytes (18 when both reverse)', () => {
    expect(reportBytes(2, 0)).toBe(13);
    expect(reportBytes(0, 2)).toBe(6);
    expect(motorBytes(motors)).toBe(6);
    expect(motorBytes(motors, 2)).toBe(18);
    expect(motorBytes([{ pwm: 44, dir: 42 }])).toBe(6); // EXTENDED_ANALOG above pin 15
  });

  it('57600 baud fits a report every 3 ms (333 Hz), 115200 every 2 ms (500 Hz); 1 ms needs 130 kbaud', () => {
    const slow = cycleBudget(motors, 2, 0, 57600);
    expect(slow.samplingIntervalMs).toBe(3);
    expect(slow.loopHz).toBeCloseTo(333.3, 1);
    expect(slow.busLimitHz).toBeCloseTo(443.1, 1);
    const fast = cycleBudget(motors, 2, 0, 115200);
    expect(fast.samplingIntervalMs).toBe(2);
    expect(fast.busLimitHz).toBeCloseTo(886.2, 1);
    expect(samplingIntervalFor(13, 57600, 1)).toBe(3); // even at a full wire 13 bytes take 2.26 ms
    expect(samplingIntervalFor(13, 130000, 1)).toBe(1);
  });
});

describe('the rig file firmata section', () => {
  const dir = mkdtempSync(`${tmpdir()}/twolink-firmata-rig-`);
  const base = JSON.parse(readFileSync('rigs/mock-arm-firmata.json', 'utf8')) as Record<string, unknown>;
  let n = 0;
  const write = (f: unknown): string => {
    const file = `${dir}/rig${n++}.json`;
    writeFileSync(file, JSON.stringify({ ...base, firmata: f }));
    return file;
  };

  it('rigs/mock-arm-firmata.json selects the firmata transport at 57600 on a Mega', () => {
    const rig = loadRig('rigs/mock-arm-firmata.json');
    expect(rig.link.transport).toBe('firmata');
    expect(rig.link.baudRate).toBe(57600);
    expect(rig.firmata?.board).toBe('mega');
  });

  it('a pin used twice is an error naming both fields', () => {
    const file = write({
      motors: [
        { pwm: 5, dir: 4 },
        { pwm: 6, dir: 7 },
      ],
      sensors: [
        { type: 'encoder', pinA: 2, pinB: 4 },
        { type: 'encoder', pinA: 18, pinB: 19 },
      ],
    });
    expect(() => loadRig(file)).toThrow(RigFileError);
    expect(() => loadRig(file)).toThrow(/firmata\.sensors\[0\]\.pinB: pin 4 is already used by firmata\.motors\[0\]\.dir/);
  });

  it('the board defaults to an Uno, and an unknown board is named', () => {
    const ok = loadRig(
      write({
        motors: [
          { pwm: 5, dir: 4 },
          { pwm: 6, dir: 7 },
        ],
        sensors: [
          { type: 'encoder', pinA: 2, pinB: 8 },
          { type: 'encoder', pinA: 3, pinB: 12 },
        ],
      }),
    );
    expect(ok.firmata?.board).toBe('uno');
    const bad = write({
      board: 'due',
      motors: [
        { pwm: 5, dir: 4 },
        { pwm: 6, dir: 7 },
      ],
      sensors: [
        { type: 'encoder', pinA: 2, pinB: 8 },
        { type: 'encoder', pinA: 3, pinB: 12 },
      ],
    });
    expect(() => loadRig(bad)).toThrow(/firmata\.board/);
  });
});

describe('the framer (one for the host and the emulated board)', () => {
  it("splits the board's bytes: a report, an analog message, a version, with stray bytes counted", () => {
    const f = new FirmataFramer({ from: 'board' });
    const bytes = [
      0x12,
      FIRMATA.START_SYSEX,
      FIRMATA.ENCODER_DATA,
      0x41,
      1,
      0,
      0,
      0,
      FIRMATA.END_SYSEX,
      FIRMATA.ANALOG_MESSAGE | 3,
      0x7f,
      0x07,
      FIRMATA.REPORT_VERSION,
      2,
      6,
    ];
    // fed one byte at a time or all at once, the same messages
    const one = bytes.flatMap((b) => f.push([b]));
    const all = new FirmataFramer({ from: 'board' }).push(bytes);
    expect(one).toEqual(all);
    expect(all).toEqual([
      { kind: 'sysex', cmd: FIRMATA.ENCODER_DATA, body: [0x41, 1, 0, 0, 0] },
      { kind: 'command', cmd: FIRMATA.ANALOG_MESSAGE, channel: 3, data: [0x7f, 0x07] },
      { kind: 'command', cmd: FIRMATA.REPORT_VERSION, channel: 9, data: [2, 6] },
    ]);
    expect(f.stray).toBe(1);
  });

  it('on the board: REPORT_VERSION has no data, SET_PIN_MODE two, a sysex keeps at most 64 bytes and stores bytes >= 0x80 as the firmware does', () => {
    const f = new FirmataFramer({ from: 'host', maxSysex: 63, abortSysexOnCommand: false });
    expect(f.push([FIRMATA.REPORT_VERSION, FIRMATA.SET_PIN_MODE, 5, 3, FIRMATA.SYSTEM_RESET])).toEqual([
      { kind: 'command', cmd: FIRMATA.REPORT_VERSION, channel: 9, data: [] },
      { kind: 'command', cmd: FIRMATA.SET_PIN_MODE, channel: 4, data: [5, 3] },
      { kind: 'command', cmd: FIRMATA.SYSTEM_RESET, channel: 15, data: [] },
    ]);
    const long = f.push([FIRMATA.START_SYSEX, 0x71, ...new Array<number>(100).fill(1), 0x90, FIRMATA.END_SYSEX]);
    expect(long).toHaveLength(1);
    expect(long[0]!.kind === 'sysex' && long[0]!.body.length).toBe(63);
    // the host's framer abandons a sysex at a command byte instead
    const h = new FirmataFramer({ from: 'board' });
    expect(h.push([FIRMATA.START_SYSEX, 0x71, 1, FIRMATA.ANALOG_MESSAGE, 1, 2])).toEqual([
      { kind: 'command', cmd: FIRMATA.ANALOG_MESSAGE, channel: 0, data: [1, 2] },
    ]);
    expect(h.stray).toBe(3);
  });
});

describe("the watchdog feature's messages", () => {
  it('arm carries the timeout in two 7-bit bytes and the pins; status and fired decode back', () => {
    expect(encodeWatchdogArm(100, [5, 6])).toEqual([WATCHDOG.ARM, 100, 0, 5, 6]);
    expect(encodeWatchdogArm(1000, [44])).toEqual([WATCHDOG.ARM, 1000 & 0x7f, 1000 >> 7, 44]);
    expect(decodeWatchdog(encodeWatchdogStatus(WATCHDOG.ARM, { version: 1, timeoutMs: 1000, pins: [44] }))).toEqual({
      kind: 'status',
      status: { version: 1, timeoutMs: 1000, pins: [44] },
    });
    expect(decodeWatchdog([WATCHDOG.FIRED, 2, 101, 0])).toEqual({ kind: 'fired', zeroed: 2, silentMs: 101 });
    expect(decodeWatchdog([WATCHDOG.FIRED, 2])).toBeUndefined();
    expect(decodeWatchdog([0x05, 1, 2, 3])).toBeUndefined();
  });
});

describe("checkWiring (pure: capabilities and the rig file's wiring)", () => {
  const wiring = (f: Parameters<typeof resolveWiring>[0]): Wiring => {
    const w = resolveWiring(f, {});
    if (isWiringIssue(w)) throw new Error(w.message);
    return w;
  };
  const mega = parseCapabilities(encodeCapabilities(capabilities(BOARDS.mega, { encoder: true })));
  const good = wiring({
    board: 'mega',
    motors: [
      { pwm: 5, dir: 4 },
      { pwm: 6, dir: 7 },
    ],
    sensors: [
      { type: 'encoder', pinA: 2, pinB: 3 },
      { type: 'encoder', pinA: 18, pinB: 19 },
    ],
  });

  it('accepts the example wiring on a Mega, encoders numbered in joint order', () => {
    expect(good.sensors).toEqual([
      { type: 'encoder', encoder: 0, pinA: 2, pinB: 3 },
      { type: 'encoder', encoder: 1, pinA: 18, pinB: 19 },
    ]);
    expect(checkWiring(mega, good, 'fw', 16)).toEqual({ warnings: [], boardName: 'mega' });
  });

  it('names what is wrong: another board, a motor pin without PWM, firmware without encoders, an encoder pin without interrupt', () => {
    const uno = parseCapabilities(encodeCapabilities(capabilities(BOARDS.uno, { encoder: true })));
    expect(checkWiring(uno, good, 'fw', 6).error).toEqual({
      reason: 'mismatch',
      message: expect.stringMatching(
        /^the board reports 20 pins, the rig file says firmata.board "mega" \(70 pins\): it is an Uno; set firmata.board to "uno" .*rigs\/mock-arm-firmata-uno.json/,
      ),
    });
    // The shipped Uno rig file is what the hint says: it loads, and its wiring passes on an Uno's pins.
    const unoRig = loadRig('rigs/mock-arm-firmata-uno.json');
    expect(unoRig.firmata?.board).toBe('uno');
    expect(checkWiring(uno, wiring(unoRig.firmata!), 'fw', 6)).toEqual({ warnings: expect.any(Array), boardName: 'uno' });
    const noPwm = wiring({ board: 'mega', motors: [{ pwm: 22, dir: 4 }], sensors: [{ type: 'encoder', pinA: 2, pinB: 3 }] });
    expect(checkWiring(mega, noPwm, 'fw', 16).error?.message).toMatch(/^motor 1's PWM pin 22 cannot do PWM on this mega/);
    const plain = parseCapabilities(encodeCapabilities(capabilities(BOARDS.mega, { encoder: false })));
    expect(checkWiring(plain, good, 'StandardFirmata 2.5', 16).error).toEqual({
      reason: 'no-encoder',
      message: expect.stringMatching(/^StandardFirmata 2.5 has no encoder support/),
    });
    const polled = wiring({ board: 'mega', motors: [{ pwm: 5, dir: 4 }], sensors: [{ type: 'encoder', pinA: 24, pinB: 25 }] });
    expect(checkWiring(mega, polled, 'fw', 16).warnings).toEqual([
      expect.stringMatching(/^joint 1's encoder: pin A \(24\) has no interrupt/),
    ]);
  });

  it('resolveWiring refuses a pin the board does not have, naming the field', () => {
    const w = resolveWiring({ board: 'uno', motors: [{ pwm: 5, dir: 40 }], sensors: [{ type: 'encoder', pinA: 2, pinB: 3 }] }, {});
    expect(w).toEqual({ field: 'firmata.motors[0].dir', message: 'pin 40 does not exist on an uno (0-19)' });
  });
});
