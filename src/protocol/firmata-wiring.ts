/**
 * The wiring of a Firmata rig, resolved once from the rig file's `firmata` section and checked against
 * what the board reports: motor pins (johnny-five's shield presets expanded), sensors per joint (with
 * FirmataEncoder's encoder numbers), and `checkWiring`, a pure check of that wiring against a
 * capability response. Shared by the host (FirmataLink) and the mock rig's board.
 *
 * No I/O and no clock here.
 */
import { BOARDS, MODE, type BoardLayout, type BoardName } from './firmata.js';

/** The pins of one H-bridge channel, as johnny-five's Motor takes them. */
export interface MotorPins {
  pwm: number;
  dir?: number;
  /** Second direction pin (L298-style): driven to the opposite of `dir`. */
  cdir?: number;
  /** Brake pin (high = brake). */
  brake?: number;
  /** Enable pin (high = enabled). */
  enable?: number;
  /** The PWM is inverted when going forward (some shields). */
  invertPWM?: boolean;
}

/** A motor as the rig file gives it: pins, or a johnny-five shield preset. */
export type MotorSpec = { pwm: number; dir: number; cdir?: number | undefined } | { shield: string; motor: string };

/** The subset of a johnny-five `Motor.SHIELD_CONFIGS` entry that twolink reads. */
export interface ShieldConfig {
  pins?: Record<string, number | string>;
  register?: unknown;
  controller?: string;
  address?: number;
  invertPWM?: boolean;
}

/**
 * Resolves a rig file's motor into pins. Shield presets are looked up in johnny-five's table (passed
 * in); presets that drive the bridge through a shift register or an I2C PWM chip are refused, since
 * the emulated board (and twolink's pin checks) speak only to pins.
 */
export function resolveMotorPins(spec: MotorSpec, shields: Record<string, Record<string, ShieldConfig>>): MotorPins | string {
  if ('pwm' in spec) return { pwm: spec.pwm, dir: spec.dir, ...(spec.cdir !== undefined ? { cdir: spec.cdir } : {}) };
  const shield = shields[spec.shield];
  if (!shield) return `unknown shield "${spec.shield}" (johnny-five knows ${Object.keys(shields).join(', ')})`;
  const cfg = shield[spec.motor];
  if (!cfg) return `shield ${spec.shield} has no motor "${spec.motor}" (it has ${Object.keys(shield).join(', ')})`;
  if (cfg.register || cfg.controller) {
    return `shield ${spec.shield} drives its motors through ${cfg.register ? 'a shift register' : `an I2C chip (${cfg.controller})`}, which twolink does not support: give the pins instead`;
  }
  const p = cfg.pins ?? {};
  const num = (k: string): number | undefined => (typeof p[k] === 'number' ? p[k] : undefined);
  const pwm = num('pwm');
  if (pwm === undefined) return `shield ${spec.shield} motor ${spec.motor} has no PWM pin`;
  const out: MotorPins = { pwm };
  for (const k of ['dir', 'cdir', 'brake', 'enable'] as const) {
    const v = num(k);
    if (v !== undefined) out[k] = v;
  }
  if (cfg.invertPWM) out.invertPWM = true;
  return out;
}

/** Every pin a motor uses, with its role. */
export function motorPinList(m: MotorPins): { role: keyof MotorPins; pin: number }[] {
  const out: { role: keyof MotorPins; pin: number }[] = [];
  for (const role of ['pwm', 'dir', 'cdir', 'brake', 'enable'] as const) {
    const pin = m[role];
    if (pin !== undefined) out.push({ role, pin });
  }
  return out;
}

// ------------------------------------------------------------------ the wiring of a rig

/** A sensor as the rig file gives it (`firmata.sensors[]`). */
export type SensorSpec =
  | { type: 'encoder'; pinA: number; pinB: number }
  | { type: 'potentiometer'; channel: number; rawAtMin: number; rawAtMax: number; minDeg: number; maxDeg: number };

/**
 * A second, link-side sensor on a joint (`firmata.linkSensors[j]`): a potentiometer on the joint, after
 * the gearbox, beside the motor-side encoder. Read on an analog channel; raw 0..1023.
 */
export interface LinkSensorSpec {
  channel: number;
  rawAtMin: number;
  rawAtMax: number;
  minDeg: number;
  maxDeg: number;
}

/** A potentiometer's raw reading (0..1023) as an angle [rad], through its two-point calibration. */
export function potAngleRad(s: LinkSensorSpec, raw: number): number {
  const deg = s.minDeg + ((raw - s.rawAtMin) / (s.rawAtMax - s.rawAtMin)) * (s.maxDeg - s.minDeg);
  return (deg * Math.PI) / 180;
}

/** A rig file's `firmata` section, as far as the wiring goes. */
export interface WiringSpec {
  board: BoardName;
  motors: readonly MotorSpec[];
  sensors: readonly SensorSpec[];
}

/** One joint's sensor, resolved: an encoder has its FirmataEncoder number (0, 1, ... in joint order). */
export type JointSensor =
  | { type: 'encoder'; encoder: number; pinA: number; pinB: number }
  | { type: 'potentiometer'; channel: number; rawAtMin: number; rawAtMax: number; minDeg: number; maxDeg: number };

/** The wiring of a rig: what every joint's motor and sensor are connected to. */
export interface Wiring {
  board: BoardName;
  layout: BoardLayout;
  /** Per joint. */
  motors: MotorPins[];
  /** Per joint. */
  sensors: JointSensor[];
  /** Joints with an encoder, in encoder-number order. */
  encoderJoints: number[];
  potentiometers: number;
}

/** A wiring problem: which rig file field, and why. */
export interface WiringIssue {
  /** The rig file field, e.g. `firmata.motors[0]`. */
  field: string;
  message: string;
}

/**
 * Resolves a rig file's `firmata` section (shield presets through johnny-five's table, passed in) and
 * checks every pin exists on the board. Returns the wiring, or the first problem.
 */
export function resolveWiring(spec: WiringSpec, shields: Record<string, Record<string, ShieldConfig>>): Wiring | WiringIssue {
  const layout = BOARDS[spec.board];
  const motors: MotorPins[] = [];
  for (let i = 0; i < spec.motors.length; i++) {
    const r = resolveMotorPins(spec.motors[i]!, shields);
    if (typeof r === 'string') return { field: `firmata.motors[${i}]`, message: r };
    for (const { role, pin } of motorPinList(r)) {
      if (pin >= layout.totalPins)
        return {
          field: `firmata.motors[${i}].${role}`,
          message: `pin ${pin} does not exist on an ${spec.board} (0-${layout.totalPins - 1})`,
        };
    }
    motors.push(r);
  }
  let n = 0;
  const sensors: JointSensor[] = [];
  const encoderJoints: number[] = [];
  for (let i = 0; i < spec.sensors.length; i++) {
    const s = spec.sensors[i]!;
    if (s.type === 'potentiometer') {
      if (s.channel >= layout.analogPins.length)
        return { field: `firmata.sensors[${i}].channel`, message: `an ${spec.board} has A0-A${layout.analogPins.length - 1}` };
      sensors.push({ ...s });
      continue;
    }
    for (const p of [s.pinA, s.pinB]) {
      if (p >= layout.totalPins)
        return { field: `firmata.sensors[${i}]`, message: `pin ${p} does not exist on an ${spec.board} (0-${layout.totalPins - 1})` };
    }
    encoderJoints.push(i);
    sensors.push({ type: 'encoder', encoder: n++, pinA: s.pinA, pinB: s.pinB });
  }
  return { board: spec.board, layout, motors, sensors, encoderJoints, potentiometers: sensors.length - encoderJoints.length };
}

/** A capability response, parsed: per pin, mode -> resolution. */
export type Capabilities = readonly ReadonlyMap<number, number>[];

/** What checkWiring found: problems that stop the run (with a reason code), and warnings. */
export interface WiringCheck {
  /** The first problem, or undefined. `reason`: 'mismatch' (another board), 'pins', 'no-encoder'. */
  error?: { reason: 'mismatch' | 'pins' | 'no-encoder'; message: string };
  warnings: string[];
  /** The board's name by its pin count: uno, mega, or "N-pin board". */
  boardName: string;
}

/**
 * Checks a wiring against the board's capability response: the pin count matches the rig file's board,
 * every motor pin can do PWM / be an output, encoders have the ENCODER mode (the firmware has
 * FirmataEncoder) and interrupts, potentiometer channels exist. Pure: messages name the rig file field.
 * `firmware` names the firmware in messages.
 */
export function checkWiring(caps: Capabilities, w: Wiring, firmware: string, analogChannels: number): WiringCheck {
  const has = (pin: number, mode: number): boolean => caps[pin]?.has(mode) ?? false;
  const boardName =
    caps.length === BOARDS.uno.totalPins ? 'uno' : caps.length === BOARDS.mega.totalPins ? 'mega' : `${caps.length}-pin board`;
  const warnings: string[] = [];
  const fail = (reason: 'mismatch' | 'pins' | 'no-encoder', message: string): WiringCheck => ({
    error: { reason, message },
    warnings,
    boardName,
  });
  if (caps.length !== w.layout.totalPins) {
    const known = boardName === 'uno' || boardName === 'mega';
    const fix = known
      ? `: it is ${boardName === 'uno' ? 'an Uno' : 'a Mega'}; set firmata.board to "${boardName}" and its motors and encoders to that board's pins${boardName === 'uno' ? ' (rigs/mock-arm-firmata-uno.json is an Uno wired for twolink)' : ''}`
      : ': fix firmata.board (uno: 20 pins, mega: 70)';
    return fail(
      'mismatch',
      `the board reports ${caps.length} pins, the rig file says firmata.board "${w.board}" (${w.layout.totalPins} pins)${fix}`,
    );
  }
  const pwmPins = caps.flatMap((c, p) => (c.has(MODE.PWM) ? [p] : []));
  for (let j = 0; j < w.motors.length; j++) {
    const m = w.motors[j]!;
    if (!has(m.pwm, MODE.PWM)) {
      return fail(
        'pins',
        `motor ${j + 1}'s PWM pin ${m.pwm} cannot do PWM on this ${boardName} (PWM pins: ${pwmPins.join(' ')}): fix firmata.motors[${j}]`,
      );
    }
    for (const { role, pin } of motorPinList(m)) {
      if (role !== 'pwm' && !has(pin, MODE.OUTPUT))
        return fail(
          'pins',
          `motor ${j + 1}'s ${role} pin ${pin} cannot be a digital output on this ${boardName}: fix firmata.motors[${j}]`,
        );
    }
  }
  if (w.encoderJoints.length > 0) {
    const encPins = caps.flatMap((c, p) => (c.has(MODE.ENCODER) ? [p] : []));
    if (encPins.length === 0) {
      return fail(
        'no-encoder',
        `${firmware} has no encoder support (no pin offers the ENCODER mode): flash ConfigurableFirmata 2.x with the FirmataEncoder feature (docs/firmata.md)`,
      );
    }
    for (const j of w.encoderJoints) {
      const s = w.sensors[j] as Extract<JointSensor, { type: 'encoder' }>;
      for (const pin of [s.pinA, s.pinB]) {
        if (!has(pin, MODE.INPUT))
          return fail('pins', `joint ${j + 1}'s encoder pin ${pin} is not a digital input on this ${boardName}: fix firmata.sensors[${j}]`);
      }
      if (!has(s.pinA, MODE.ENCODER)) {
        warnings.push(
          `joint ${j + 1}'s encoder: pin A (${s.pinA}) has no interrupt on this ${boardName} (interrupt pins: ${encPins.join(' ')}): counts will be missed at speed`,
        );
      }
    }
  }
  for (const s of w.sensors) {
    if (s.type === 'potentiometer' && s.channel >= analogChannels) {
      return fail('pins', `analog channel A${s.channel} does not exist on this ${boardName} (A0-A${analogChannels - 1})`);
    }
  }
  return { warnings, boardName };
}

/** Whether resolveWiring returned a problem. */
export function isWiringIssue(w: Wiring | WiringIssue): w is WiringIssue {
  return 'field' in w;
}
