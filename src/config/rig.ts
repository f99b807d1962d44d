/**
 * Rig description files (rigs/*.json), validated with zod. A rig file describes one arm: the nominal
 * model the host believes (`arm`, `friction`, `motors`), its encoders and limits, the controller's
 * gains, the twin's alarm, the link to the board, and for the mock rig the plant's true parameters
 * (`plant`). Only `arm` is required: every other section has defaults.
 *
 * Unknown keys are errors (a typo such as "kP" must not be silently ignored), and every error names the
 * file and the field: `rigs/x.json: arm.m1: must be > 0 (got -1)`.
 *
 * The file is over 650 lines because it is the rig file's one schema: every section's fields with their
 * units, ranges and meaning in one place, which the reference of the rig file is read from.
 */
import { z } from 'zod';
import { wiringSchema } from './wiring.js';
import { RigFileError } from './rig-error.js';
import { BOARDS } from '../protocol/firmata.js';
import { ADAPTER_KINDS, BOARD_KINDS } from './cable.js';
import { breakawayDutySchema } from './measured-schema.js';
import { driverSchema } from './driver-schema.js';

const num = z.number().refine(Number.isFinite, 'must be a finite number');
const pos = num.refine((v) => v > 0, 'must be > 0');
const nonneg = num.refine((v) => v >= 0, 'must be >= 0');

/**
 * Physical ranges. A schema-valid number can still be absurd (a mass of 1e300 kg, a torque constant
 * of 9e15 N m/A): such values make the model's numbers overflow to Infinity and NaN deep inside a run,
 * so they are refused here, with the range and its unit. The bounds are wide (a bench-top arm sits far
 * inside them); the relations between fields (can the motor hold the arm?) are checked in plausible.ts.
 */
const atMost = <T extends z.ZodType<number>>(s: T, max: number, unit: string, why = ''): T =>
  s.refine((v) => !(v > max), `must be at most ${max}${unit ? ` ${unit}` : ''}${why ? ` (${why})` : ''}`);
const atLeast = <T extends z.ZodType<number>>(s: T, min: number, unit: string, why = ''): T =>
  s.refine((v) => !(v < min), `must be at least ${min}${unit ? ` ${unit}` : ''}${why ? ` (${why})` : ''}`);
const within = <T extends z.ZodType<number>>(s: T, min: number, max: number, unit: string, why = ''): T =>
  atMost(atLeast(s, min, unit, why), max, unit, why);

const BENCH = 'a bench-top arm';
/** [m] */
const length = within(pos, 1e-3, 10, 'm', BENCH);
/** [m] */
const offset = atMost(nonneg, 10, 'm', BENCH);
/** [kg] */
const mass = within(pos, 1e-6, 1e4, 'kg', BENCH);
/** [kg m^2] (bounded by the mass and length in the arm's refinement too) */
const inertia = atMost(nonneg, 1e4, 'kg m^2', BENCH);
/** [m/s^2] */
const gravity = atMost(nonneg, 50, 'm/s^2', "9.81 on Earth's surface");
/** [deg] */
const angleDeg = within(num, -720, 720, 'deg', 'two turns either way');
/** Controller gains. */
const gain = atMost(nonneg, 1e6, '', 'larger gains only overflow the torque');
/** Viscous friction [N m s/rad]. */
const viscous = atMost(nonneg, 1e3, 'N m s/rad', BENCH);
/** Coulomb friction [N m]. */
const coulomb = atMost(nonneg, 1e4, 'N m', BENCH);
/** Supply voltage [V]. */
const supply = within(pos, 1, 1000, 'V');

/** Nominal arm parameters, seed notation. A one-link arm has only L1, d1, m1, I1, g. */
export const twoLinkSchema = z.strictObject({
  L1: length.describe('length of link 1 [m]'),
  L2: length.describe('length of link 2 [m]'),
  d1: offset.describe('joint 1 to the centre of mass of link 1 [m]'),
  d2: offset.describe('joint 2 to the centre of mass of link 2 [m]'),
  m1: mass.describe('mass of link 1 [kg]'),
  m2: mass.describe('mass of link 2 [kg]'),
  I1: inertia.describe('inertia of link 1 about its centre of mass [kg m^2]'),
  I2: inertia.describe('inertia of link 2 about its centre of mass [kg m^2]'),
  g: gravity.describe('gravity along -y [m/s^2]'),
});
export const oneLinkSchema = z.strictObject({
  L1: length,
  d1: offset,
  m1: mass,
  I1: inertia,
  g: gravity,
});
/**
 * The arm is two-link when any link-2 key is present (L2, d2, m2, I2), else one-link; choosing the
 * schema by that rule (rather than a union) makes the errors talk about the arm the user meant.
 */
const armSchema = z.unknown().transform((v, ctx): z.infer<typeof twoLinkSchema> | z.infer<typeof oneLinkSchema> => {
  const two = v !== null && typeof v === 'object' && ['L2', 'd2', 'm2', 'I2'].some((k) => k in v);
  const r = (two ? twoLinkSchema : oneLinkSchema).safeParse(v);
  if (r.success) return r.data;
  for (const is of r.error.issues) ctx.issues.push({ ...is, input: v } as never);
  return z.NEVER;
});

/** Per-joint numbers: an array with one entry per joint (checked against the arm below). */
const perJoint = (s: z.ZodType<number>) => z.array(s).min(1).max(2);

/** Torque constant [N m/A] (= back-EMF constant [V s/rad] in SI units for a DC motor). */
const motorConstant = within(pos, 1e-5, 10, '', 'in SI units: N m/A, V s/rad');
/** [ohm] */
const resistance = within(pos, 1e-3, 1e4, 'ohm');
/** Motor turns per joint turn. */
const gearRatio = within(pos, 1, 1e5, '', 'motor turns per joint turn');
/** [kg m^2] at the motor shaft */
const rotorInertia = atMost(nonneg, 0.1, 'kg m^2', 'at the motor shaft');

const motorSchema = z.strictObject({
  /** Torque constant [N m/A] at the motor shaft. */
  kt: motorConstant,
  /** Back-EMF constant [V s/rad] at the motor shaft. */
  ke: motorConstant,
  /** Armature resistance [ohm]. */
  R: resistance,
  /** Gear ratio (motor turns per joint turn). */
  gear: gearRatio,
  /** Gearbox efficiency, 0..1. */
  efficiency: pos.refine((v) => v <= 1, 'must be <= 1').default(1),
  /** Rotor inertia at the motor shaft [kg m^2]; it appears at the joint times gear^2. */
  rotorInertia: rotorInertia.default(0),
  /** The H-bridge that drives it (a preset or its numbers); none: an ideal bridge, as before drivers were declared. */
  driver: driverSchema.optional(),
  /** Duty that starts the joint from rest, [ccw, cw], as `twolink setup` measured it (src/config/measured-schema.ts). */
  breakawayDuty: breakawayDutySchema.optional(),
});
export type MotorParams = z.infer<typeof motorSchema>;

const limitSchema = z
  .strictObject({
    /** Lowest joint angle [deg]. */
    minDeg: angleDeg.default(-170),
    /** Highest joint angle [deg]. */
    maxDeg: angleDeg.default(170),
    /** Largest joint speed [deg/s]. */
    maxVelDegS: atMost(pos, 36_000, 'deg/s', '100 turns per second').default(360),
    /** Largest joint torque the controller may ask for [N m]. */
    maxTorqueNm: atMost(pos, 1e4, 'N m', BENCH).default(5),
    /**
     * Largest following error [deg]: the plan's angle less the measured one, while the arm tracks or
     * holds at full torque; past it the loop stops (fault:following-error). Default: 5 deg (the room
     * the limit guard allows past a soft limit) with the model's feedforward, 10 deg with PID alone,
     * 30 deg with a user's controller (src/control/following.ts says why).
     */
    followingErrorDeg: atMost(pos, 180, 'deg', 'half a turn').optional(),
  })
  .refine((l) => l.minDeg < l.maxDeg, { message: 'minDeg must be below maxDeg (the limits are reversed)', path: ['minDeg'] });

const pidSchema = z.strictObject({
  /** Proportional gain [N m/rad] per joint. */
  kp: perJoint(gain).optional(),
  /** Integral gain [N m/(rad s)] per joint. */
  ki: perJoint(gain).optional(),
  /** Derivative gain [N m s/rad] per joint (on the measurement). */
  kd: perJoint(gain).optional(),
  /** Largest integral contribution [N m] per joint. */
  iLimitNm: perJoint(atMost(nonneg, 1e4, 'N m')).optional(),
  /** Anti-windup: stop integrating when saturated (`clamp`) or bleed the integrator (`backcalc`). */
  antiWindup: z.enum(['clamp', 'backcalc']).default('backcalc'),
  /** Back-calculation gain [1/s]. */
  backcalcPerS: atMost(pos, 1e4, '1/s').default(20),
  /**
   * Gains scheduled on the elbow angle (written by `twolink tune`): per point the elbow angle [deg]
   * and kp, ki, kd per joint; the controller interpolates linearly between the points (held beyond
   * the ends) and uses these instead of kp, ki, kd. Two-link arms only; ascending elbowDeg.
   */
  schedule: z
    .array(z.strictObject({ elbowDeg: angleDeg, kp: perJoint(gain), ki: perJoint(gain), kd: perJoint(gain) }))
    .min(2)
    .max(16)
    .refine((a) => a.every((p, i) => i === 0 || p.elbowDeg > a[i - 1]!.elbowDeg), 'elbowDeg must rise from one point to the next')
    .optional(),
});

const controlSchema = z.strictObject({
  /** Loop rate [Hz], 100..1000; by default what the board's cable carries (src/config/cable.ts: 500 Hz behind a 16U2, 1 kHz native). */
  rateHz: num.refine((v) => v >= 100 && v <= 1000, 'must be between 100 and 1000 Hz').optional(),
  /** Inverse-dynamics feedforward on the desired state, computed torque on the measured state, or none. */
  feedforward: z.enum(['desired', 'measured', 'none']).default('desired'),
  pid: pidSchema.prefault({}),
  /**
   * Add the twin's estimate of the unexplained joint torque (momentum observer) to the feedforward,
   * cancelling unmodelled friction and mass errors. Off with --no-feedforward.
   */
  disturbanceObserver: z.boolean().default(true),
  /**
   * The corner of the low-pass the observer's estimate passes before the feedforward takes it [Hz]
   * (src/control/disturbance-feed.ts): by default none, or 6 Hz on a joint whose encoder has play
   * before the link (`encoders[j].backlashDeg`); a warning of the duty's reversals lowers it.
   */
  disturbanceFeedHz: within(pos, 0.1, 1000, 'Hz').optional(),
  /** Bandwidth of the velocity estimator (an alpha-beta tracking filter on the encoder angles) [Hz]. */
  velocityFilterHz: atMost(pos, 1000, 'Hz').default(25),
  /** Ramp of the output scale from 0 to 1 when a motion starts [s]. */
  softStartS: atMost(nonneg, 60, 's').default(0.2),
  /** Ramp from 1 to 0 at the end or on a soft stop [s]. */
  softStopS: atMost(nonneg, 60, 's').default(0.2),
  /**
   * A joint whose torque stays saturated this long stops the arm (a jam, a collision, a load it cannot
   * carry) [s].
   */
  maxSaturationS: atMost(pos, 3600, 's').default(1),
});

const twinSchema = z.strictObject({
  /** Residual above which the divergence alarm may fire [deg]. */
  alarmDeg: atMost(pos, 360, 'deg').default(3),
  /** How long the residual must stay above the threshold before the alarm fires [ms]. */
  holdMs: atMost(nonneg, 60_000, 'ms').default(30),
  /** Time constant with which the twin is pulled back to the measurement [s]. */
  anchorS: atMost(pos, 3600, 's').default(0.05),
  /** Bandwidth of the momentum observer that estimates external torque [Hz]. */
  observerHz: atMost(pos, 1000, 'Hz').default(8),
  /** What the divergence alarm does: `report` it (the dashboard, the recording), or `stop` the arm. */
  onAlarm: z.enum(['report', 'stop']).default('report'),
});

/**
 * Impedance mode's defaults (twolink run --mode impedance, src/control/impedance.ts): the spring, its
 * damping ratio, and the safety limits. Command-line flags override the spring and the ratio.
 */
export const impedanceSchema = z.strictObject({
  /** `endpoint`: a spring at the endpoint [N/m]; `joint`: one per joint [N m/rad]. */
  space: z.enum(['endpoint', 'joint']).default('endpoint'),
  /** Endpoint stiffness [N/m] (Kx = Ky), the default of --stiffness in endpoint space. */
  stiffnessNPerM: within(pos, 1, 10_000, 'N/m').default(100),
  /** Joint stiffness [N m/rad], the default of --stiffness with --space joint. */
  jointStiffnessNmPerRad: within(pos, 0.01, 1000, 'N m/rad').default(5),
  /** Damping ratio zeta of the spring with the arm's own inertia at the pose. */
  dampingRatio: within(pos, 0.1, 3, '').default(1),
  /** The largest force the spring, its damper and the workspace barrier may put on the endpoint [N]. */
  maxForceN: within(pos, 0.1, 1000, 'N').default(10),
  /**
   * The largest change of a joint's torque [N m/s]; by default each joint's maxTorqueNm in 12 ms (Franka's
   * 1 N m per 1 ms on its 12 N m wrist joints: its fastest full swing).
   */
  torqueRateNmPerS: atMost(pos, 1e6, 'N m/s').optional(),
  /** The box the endpoint is kept in [m] (default: the arm's reach, a square around joint 1). */
  workspace: z
    .strictObject({ xMin: num, xMax: num, yMin: num, yMax: num })
    .refine((w) => w.xMin < w.xMax && w.yMin < w.yMax, 'needs xMin < xMax and yMin < yMax')
    .optional(),
  /** Depth of the soft barrier inside the box's walls [m]: the push back grows over it to maxForceN. */
  barrierM: within(pos, 0.001, 1, 'm').default(0.02),
  /** Below this elbow angle (from straight) the stiffness is scaled down, to 10 % at a straight elbow [deg]. */
  singularElbowDeg: within(pos, 1, 60, 'deg').default(15),
  /** Time constant of a live stiffness change [s] (Franka's example: 0.2 s). */
  stiffnessFilterS: within(pos, 0.01, 5, 's').default(0.2),
  /**
   * Bandwidth of the model-aided velocity estimate the damper reads [Hz] (control/estimator.ts
   * ModelAidedEstimator, in place of the loop's 25 Hz tracker, whose lag is a negative mass against the damper).
   */
  velocityObserverHz: within(pos, 1, 200, 'Hz').default(30),
});

/**
 * How a serial port is opened (docs/serial.md): `tty` twolink's own Linux path (fs + stty, in the
 * loop's worker); `serialport` serialport's binding in a relay process (Linux, macOS, Windows); `auto`
 * the best of the OS (tty on Linux, serialport elsewhere).
 */
export const SERIAL_PATHS = ['auto', 'tty', 'serialport'] as const;
export type SerialPathChoice = (typeof SERIAL_PATHS)[number];

const linkSchema = z.strictObject({
  /** `line`: our firmware's protocol (firmware-protocol/PROTOCOL.md); `firmata`: stock Firmata through johnny-five. */
  transport: z.enum(['line', 'firmata']).default('line'),
  /** How a serial port is opened (SERIAL_PATHS; --serial overrides it). @default auto */
  serial: z.enum(SERIAL_PATHS).optional(),
  /** Serial baud rate. @default 1000000 for the line protocol, 57600 for Firmata (its usual speed) */
  baudRate: z.number().int().positive().max(12_000_000).optional(),
  /** Board watchdog timeout [ms]. */
  watchdogMs: z.number().int().min(10).max(1000).default(100),
  /** Time to wait for the board's banner at connect [ms]. */
  handshakeMs: z.number().int().positive().max(600_000).default(3000),
  /** Samples without telemetry after which the link is declared lost (never sooner than watchdogMs). */
  lostAfterTicks: z.number().int().positive().max(100_000).default(25),
});

const encoderSchema = z.strictObject({
  /** Counts per joint revolution (after the gearbox, 4x decoding). */
  countsPerRev: z.number().int().positive().max(10_000_000),
  /** +1 when a positive count is counter-clockwise, -1 when the encoder is wired the other way. */
  sign: z.union([z.literal(1), z.literal(-1)]).default(1),
  /** Joint angle at count 0 [deg] (where the arm is when the encoders are zeroed). */
  zeroDeg: angleDeg.default(0),
  /**
   * Where the encoder sits: on the motor shaft, before the gearbox (hobby gearmotors: the Pololu 37D's
   * 64 CPR encoder, the JGA25-370's), where it cannot see the gearbox's play; or on the joint, after
   * it. Figures from a motor-side encoder are the motor's, not the link's. @default motor
   */
  side: z.enum(['motor', 'joint']).optional(),
  /**
   * The play between this encoder and the link, at the joint [deg]: the gearbox's backlash when the
   * encoder is on the motor side (no maker publishes it; hobby gearboxes have about 1-3 deg). The
   * controller then moves the motor across the play so that the link follows the plan (a backlash
   * inverse, src/control/backlash.ts). @default 0
   */
  backlashDeg: atMost(nonneg, 30, 'deg', 'a gearbox, not a free joint').optional(),
});

const firmataMotorSchema = z.union([
  z.strictObject({ pwm: z.number().int().min(0), dir: z.number().int().min(0), cdir: z.number().int().min(0).optional() }),
  z.strictObject({ shield: z.string().min(1), motor: z.string().min(1) }),
]);
const firmataSensorSchema = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('encoder'), pinA: z.number().int().min(0), pinB: z.number().int().min(0) }),
  z.strictObject({
    type: z.literal('potentiometer'),
    /** Analog channel (0 = A0). */
    channel: z.number().int().min(0).max(15),
    /** Raw reading (0..1023) at minDeg and maxDeg. */
    rawAtMin: z.number().int().min(0).max(1023),
    rawAtMax: z.number().int().min(0).max(1023),
    minDeg: num,
    maxDeg: num,
  }),
]);
/**
 * A second sensor on a joint, after the gearbox: a potentiometer on the joint read on an analog
 * channel, beside the motor-side encoder that the loop controls with. It sees the link, so the run
 * reports the link-side tracking error and the gearbox's play it measures (issue 33).
 */
const firmataLinkSensorSchema = z.strictObject({
  /** Analog channel (0 = A0) of the potentiometer on the joint. */
  channel: z.number().int().min(0).max(15),
  /** Raw reading (0..1023, the 10-bit ADC) at minDeg. */
  rawAtMin: z.number().int().min(0).max(1023),
  /** Raw reading (0..1023) at maxDeg. */
  rawAtMax: z.number().int().min(0).max(1023),
  /** Joint angle at rawAtMin [deg]. */
  minDeg: num,
  /** Joint angle at rawAtMax [deg]. */
  maxDeg: num,
});
/** The firmata section as its fields give it (before the pins are checked). */
interface FirmataFields {
  board: keyof typeof BOARDS;
  motors: z.infer<typeof firmataMotorSchema>[];
  sensors: z.infer<typeof firmataSensorSchema>[];
  linkSensors?: (z.infer<typeof firmataLinkSensorSchema> | null)[] | undefined;
}

/**
 * Every pin must exist on the board the file names, take the job it is given there, and not be the
 * serial pins 0 and 1 that carry Firmata itself; one pin, one job (a pin used twice is a wiring mistake
 * the board would not report). Refused here, at load, from the file alone, rather than by the board at
 * connect time.
 */
function checkFirmataPins(f: FirmataFields, ctx: z.RefinementCtx): void {
  const used = new Map<number, string>();
  const claim = (pin: number, path: (string | number)[]): void => {
    const prev = used.get(pin);
    if (prev !== undefined) ctx.addIssue({ code: 'custom', path, message: `pin ${pin} is already used by firmata.${prev}` });
    else used.set(pin, fieldPath(path));
  };
  const board = BOARDS[f.board];
  const an = f.board === 'uno' ? 'an Uno' : 'a Mega';
  const digital = (pin: number, path: (string | number)[], job: string): boolean => {
    if (pin >= board.totalPins) {
      ctx.addIssue({ code: 'custom', path, message: `pin ${pin} does not exist on ${an} (pins 0-${board.totalPins - 1})` });
      return false;
    }
    if (!board.digital(pin)) {
      ctx.addIssue({
        code: 'custom',
        path,
        message: `pin ${pin} is the serial line to the laptop on ${an} (pins 0 and 1 carry Firmata): use another pin for the ${job}`,
      });
      return false;
    }
    return true;
  };
  /** A potentiometer (`at`: its path): an analog input the board has, and a calibration that is not flat. */
  const potentiometer = (
    p: { channel: number; rawAtMin: number; rawAtMax: number; minDeg: number; maxDeg: number },
    at: (string | number)[],
  ): void => {
    if (p.channel >= board.analogPins.length) {
      ctx.addIssue({
        code: 'custom',
        path: [...at, 'channel'],
        message: `${an} has analog inputs A0-A${board.analogPins.length - 1} (got A${p.channel})`,
      });
    } else {
      claim(board.analogPins[p.channel]!, [...at, 'channel']);
    }
    if (p.rawAtMin === p.rawAtMax) ctx.addIssue({ code: 'custom', path: [...at, 'rawAtMax'], message: 'must differ from rawAtMin' });
    if (p.minDeg === p.maxDeg) ctx.addIssue({ code: 'custom', path: [...at, 'maxDeg'], message: 'must differ from minDeg' });
  };
  f.motors.forEach((m, i) => {
    if (!('pwm' in m)) return;
    if (digital(m.pwm, ['motors', i, 'pwm'], 'PWM')) {
      if (!board.pwm.has(m.pwm)) {
        ctx.addIssue({
          code: 'custom',
          path: ['motors', i, 'pwm'],
          message: `pin ${m.pwm} cannot do PWM on ${an} (PWM pins: ${[...board.pwm].join(' ')})`,
        });
      }
      claim(m.pwm, ['motors', i, 'pwm']);
    }
    if (digital(m.dir, ['motors', i, 'dir'], 'direction')) claim(m.dir, ['motors', i, 'dir']);
    if (m.cdir !== undefined && digital(m.cdir, ['motors', i, 'cdir'], 'second direction')) claim(m.cdir, ['motors', i, 'cdir']);
  });
  f.sensors.forEach((s, i) => {
    if (s.type !== 'encoder') return potentiometer(s, ['sensors', i]);
    if (digital(s.pinA, ['sensors', i, 'pinA'], 'encoder')) claim(s.pinA, ['sensors', i, 'pinA']);
    if (digital(s.pinB, ['sensors', i, 'pinB'], 'encoder')) claim(s.pinB, ['sensors', i, 'pinB']);
  });
  f.linkSensors?.forEach((s, i) => {
    if (s) potentiometer(s, ['linkSensors', i]);
  });
}

const firmataSchema = z
  .strictObject({
    /** The board's pin set: `uno` (ATmega328P: PWM 3 5 6 9 10 11, interrupts 2 3) or `mega` (2560: PWM 2-13 44-46, interrupts 2 3 18 19 20 21). */
    board: z.enum(['uno', 'mega']).default('uno'),
    /** Per joint: the H-bridge's pins, or a johnny-five shield preset (Motor.SHIELD_CONFIGS). */
    motors: z.array(firmataMotorSchema).min(1).max(2),
    /** Per joint: a quadrature encoder (FirmataEncoder; counts per rev from `encoders[]`) or a potentiometer. */
    sensors: z.array(firmataSensorSchema).min(1).max(2),
    /**
     * Per joint, an optional second sensor on the link side (null: none): a potentiometer on the joint,
     * after the gearbox, read beside `sensors[j]` (the motor-side encoder the loop controls with). The
     * recording's `meas.qLink` and the summary's link (potentiometer) figures and measured play come
     * from it. @default none
     */
    linkSensors: z.array(firmataLinkSensorSchema.nullable()).max(2).optional(),
    /** Firmata sampling interval [ms]; 0 = as fast as the baud rate allows. */
    samplingIntervalMs: z.number().int().min(0).max(1000).default(0),
  })
  .superRefine(checkFirmataPins);

const plantSchema = z.strictObject({
  /** The true arm, overriding the nominal one key by key. */
  arm: z
    .strictObject({
      L1: length.optional(),
      L2: length.optional(),
      d1: offset.optional(),
      d2: offset.optional(),
      m1: mass.optional(),
      m2: mass.optional(),
      I1: inertia.optional(),
      I2: inertia.optional(),
      g: gravity.optional(),
    })
    .default({}),
  /** True viscous friction per joint [N m s/rad]. */
  viscous: perJoint(viscous).optional(),
  /** True Coulomb friction per joint [N m]. */
  coulomb: perJoint(coulomb).optional(),
  /** Velocity below which Coulomb friction is smoothed [rad/s]. */
  coulombVelocity: within(pos, 1e-6, 10, 'rad/s').default(0.01),
  /**
   * True motors, overriding the nominal ones field by field (no defaults here: a field left out keeps
   * the nominal motor's value).
   */
  motors: z
    .array(
      z.strictObject({
        kt: motorConstant.optional(),
        ke: motorConstant.optional(),
        R: resistance.optional(),
        gear: gearRatio.optional(),
        efficiency: pos.refine((v) => v <= 1, 'must be <= 1').optional(),
        rotorInertia: rotorInertia.optional(),
        /** The H-bridge as it really is (its drop, resistance, dead time, PWM); by default the nominal motor's. */
        driver: driverSchema.optional(),
      }),
    )
    .max(2)
    .optional(),
  /**
   * Gearbox play at the output per joint [deg] (0: none). The encoder sits on the motor shaft, before
   * the gearbox: it cannot see the play. With play or stiction the plant splits each joint into the
   * motor side (the rotor, reflected, with the friction) and the link, joined by the gear's stiffness.
   */
  backlashDeg: perJoint(atMost(nonneg, 30, 'deg', 'a gearbox, not a free joint')).optional(),
  /** Stiffness of the gear mesh per joint, at the joint, once the play is taken up [N m/rad]. */
  gearStiffnessNmPerRad: perJoint(within(pos, 1, 1e5, 'N m/rad')).optional(),
  /** Damping of the gear mesh per joint while in contact [N m s/rad]. */
  gearDampingNmsPerRad: perJoint(atMost(nonneg, 100, 'N m s/rad')).optional(),
  /** Breakaway (static) friction per joint [N m]: the torque it takes to start from rest, at least the Coulomb level. */
  breakawayNm: perJoint(coulomb).optional(),
  /** Stribeck velocity per joint: friction falls from breakaway to Coulomb over about this speed [rad/s]. */
  stribeckVelocityRadS: perJoint(within(pos, 1e-4, 10, 'rad/s')).optional(),
  /** Supply voltage of the plant when it differs from motors' (a sagging supply) [V]. */
  supplyV: supply.optional(),
  /** Standard deviation of the encoder noise [counts]. */
  noiseCounts: atMost(nonneg, 1e4, 'counts').default(0),
  /** Board latency between receiving a command and applying it, in sync mode (R 0) [ms]. */
  latencyMs: atMost(nonneg, 1000, 'ms').default(0),
  /**
   * The USB-serial adapter between the laptop and the board, as the mock models it: the Uno's
   * ATmega16U2 (1 ms USB frames; the default), a CH340, an FTDI with its latency timer (16 ms by
   * default, 1 ms tuned), or none (a bare wire).
   */
  adapter: z
    .strictObject({
      /** By default the adapter of the rig's `board`. */
      kind: z.enum(ADAPTER_KINDS).optional(),
      /** FTDI latency timer [ms]; by default the rig's `board.ftdiLatencyMs`. */
      latencyMs: z.number().int().min(1).max(255).optional(),
    })
    .prefault({}),
  /** Payload at the endpoint [kg]. */
  payloadKg: atMost(nonneg, 1000, 'kg', BENCH).default(0),
  /** Integration step of the plant [s]. */
  stepS: atLeast(
    pos.refine((v) => v <= 1e-3, 'must be <= 0.001 s'),
    1e-6,
    's',
    'smaller steps only take longer',
  ).default(2e-4),
  /** Seed of the noise generator. */
  seed: z
    .number()
    .int()
    .min(-(2 ** 31))
    .max(2 ** 32)
    .default(1),
  /** Joint angles at power-on [deg]; the encoders read zero there. */
  startDeg: perJoint(angleDeg).optional(),
  /** The joints' mechanical stops [deg] (the arm cannot pass them); none when left out. */
  stops: z
    .array(
      z
        .strictObject({ minDeg: angleDeg, maxDeg: angleDeg })
        .refine((s) => s.minDeg < s.maxDeg, { message: 'minDeg must be below maxDeg', path: ['minDeg'] }),
    )
    .min(1)
    .max(2)
    .optional(),
});

export const rigFileSchema = z
  .strictObject({
    /** A JSON Schema's address, for editors; twolink ignores it. */
    $schema: z.string().optional(),
    /** The rig's name in summaries and recordings. @default the file's name */
    name: z.string().optional(),
    /** Free text about the rig. */
    description: z.string().optional(),
    /** The nominal arm the host believes (seed notation): two-link when any of L2, d2, m2, I2 is given, else one-link (L1, d1, m1, I1, g). */
    arm: armSchema,
    /** Nominal friction the host compensates for. */
    friction: z
      .strictObject({
        viscous: perJoint(viscous).optional(),
        coulomb: perJoint(coulomb).optional(),
        /**
         * Breakaway (static) friction per joint [N m]: what it takes to start from rest, at least the
         * Coulomb level (hobby gearmotors: about twice their running friction). The feedforward and the
         * twin then carry Stribeck's curve (src/model/actuated.ts). @default the Coulomb level
         */
        breakawayNm: perJoint(coulomb).optional(),
        /** Speed over which the friction falls from the breakaway to the Coulomb level [rad/s]. @default 0.02 */
        stribeckVelocityRadS: perJoint(within(pos, 1e-4, 10, 'rad/s')).optional(),
      })
      .default({}),
    /** Supply voltage of the H-bridge [V]. */
    supplyV: supply.default(12),
    /** Largest duty the host commands, 0..1. */
    maxDuty: pos.refine((v) => v <= 1, 'must be <= 1').default(1),
    /** Per joint: the gearmotor. @default DEFAULT_MOTOR of src/config/load.ts on each joint */
    motors: z.array(motorSchema).min(1).max(2).optional(),
    /** Per joint: the encoder. @default 2048 counts per revolution on each joint */
    encoders: z.array(encoderSchema).min(1).max(2).optional(),
    /** Per joint: the soft limits the loop keeps to. @default the fields' defaults on each joint */
    limits: z.array(limitSchema).min(1).max(2).optional(),
    /** The loop: its rate, the feedforward, the PID gains, the estimators, the ramps. */
    control: controlSchema.prefault({}),
    /** The simulated twin that runs beside the arm, and its divergence alarm. */
    twin: twinSchema.prefault({}),
    /** Impedance mode's defaults and safety limits (twolink run --mode impedance). */
    impedance: impedanceSchema.prefault({}),
    /** The serial link to the board: the protocol, the port's path and speed, the watchdog. */
    link: linkSchema.prefault({}),
    /**
     * The board and the USB path to it: `uno`/`mega` (an ATmega16U2 with arduino-usbserial),
     * `leonardo`/`micro` (native USB, the board for 1 kHz), `nano` (FTDI), `nano-ch340`, `other`.
     * `adapter` overrides the board's; `ftdiLatencyMs` is the FTDI latency timer the cable runs with.
     */
    board: z
      .strictObject({
        name: z.enum(BOARD_KINDS).default('uno'),
        adapter: z.enum(ADAPTER_KINDS).optional(),
        ftdiLatencyMs: z.number().int().min(1).max(255).default(16),
      })
      .prefault({}),
    /** Stock Firmata's pins and sensors (with `link.transport: "firmata"`). */
    firmata: firmataSchema.optional(),
    /** The mock rig's simulated arm: the true parameters and flaws it has (the nominal ones are the host's belief). */
    plant: plantSchema.optional(),
    /** How the motors and encoders are connected to the board, when not as the wiring table of docs/first-arm.md (twolink setup writes it). */
    wiring: wiringSchema.optional(),
  })
  .superRefine((rig, ctx) => {
    const n = 'L2' in rig.arm ? 2 : 1;
    const check = (path: (string | number)[], arr: readonly unknown[] | undefined): void => {
      if (arr && arr.length !== n) {
        ctx.addIssue({ code: 'custom', path, message: `needs ${n} entries, one per joint (got ${arr.length})` });
      }
    };
    check(['friction', 'viscous'], rig.friction.viscous);
    check(['friction', 'coulomb'], rig.friction.coulomb);
    check(['friction', 'breakawayNm'], rig.friction.breakawayNm);
    check(['friction', 'stribeckVelocityRadS'], rig.friction.stribeckVelocityRadS);
    rig.friction.breakawayNm?.forEach((b, i) => {
      const c = rig.friction.coulomb?.[i] ?? 0;
      if (b < c)
        ctx.addIssue({
          code: 'custom',
          path: ['friction', 'breakawayNm', i],
          message: `the breakaway friction (${b} N m) is below the Coulomb level friction.coulomb[${i}] (${c} N m): it is the torque to start from rest, at least the running friction`,
        });
    });
    check(['motors'], rig.motors);
    check(['encoders'], rig.encoders);
    check(['limits'], rig.limits);
    for (const k of ['kp', 'ki', 'kd', 'iLimitNm'] as const) check(['control', 'pid', k], rig.control.pid[k]);
    rig.control.pid.schedule?.forEach((p, i) => {
      for (const k of ['kp', 'ki', 'kd'] as const) check(['control', 'pid', 'schedule', i, k], p[k]);
    });
    if (rig.control.pid.schedule && !('L2' in rig.arm))
      ctx.addIssue({
        code: 'custom',
        path: ['control', 'pid', 'schedule'],
        message: 'a gain schedule needs an elbow: this arm has one link',
      });
    if (rig.link.transport === 'firmata' && !rig.firmata) {
      ctx.addIssue({
        code: 'custom',
        path: ['firmata'],
        message:
          'link.transport is "firmata" but there is no "firmata" section: give the motor pins and sensors per joint (see rigs/mock-arm-firmata.json)',
      });
    }
    if (rig.firmata) {
      check(['firmata', 'motors'], rig.firmata.motors);
      check(['firmata', 'sensors'], rig.firmata.sensors);
      check(['firmata', 'linkSensors'], rig.firmata.linkSensors);
    }
    if (rig.plant) checkPlant(rig.plant, n, ctx, check);
    checkLinkBodies(rig.arm, n, ctx);
  });

/** The mock's plant: an entry per joint in its per-joint lists, breakaway friction at least the Coulomb level, no link 2 on a one-link arm. */
function checkPlant(
  plant: z.infer<typeof plantSchema>,
  n: number,
  ctx: z.RefinementCtx,
  check: (path: (string | number)[], arr: readonly unknown[] | undefined) => void,
): void {
  check(['plant', 'viscous'], plant.viscous);
  check(['plant', 'coulomb'], plant.coulomb);
  check(['plant', 'startDeg'], plant.startDeg);
  check(['plant', 'stops'], plant.stops);
  for (const k of ['backlashDeg', 'gearStiffnessNmPerRad', 'gearDampingNmsPerRad', 'breakawayNm', 'stribeckVelocityRadS'] as const)
    check(['plant', k], plant[k]);
  plant.breakawayNm?.forEach((b, i) => {
    const c = plant.coulomb?.[i] ?? 0;
    if (b < c)
      ctx.addIssue({
        code: 'custom',
        path: ['plant', 'breakawayNm', i],
        message: `the breakaway friction (${b} N m) is below the Coulomb level plant.coulomb[${i}] (${c} N m): it is the torque to start from rest, at least the running friction`,
      });
  });
  if (plant.motors) check(['plant', 'motors'], plant.motors);
  if (n === 1 && Object.keys(plant.arm).some((k) => k.endsWith('2'))) {
    ctx.addIssue({ code: 'custom', path: ['plant', 'arm'], message: 'a one-link arm has no link 2 parameters' });
  }
}

/** The arm's links as rigid bodies (`arm`: L1, d1, m1, I1, ...). */
function checkLinkBodies(arm: Record<string, number>, n: number, ctx: z.RefinementCtx): void {
  // A link's centre of mass lies on the link, and a rigid body's inertia about its centre of mass is at
  // most that of its mass concentrated at the far end: I <= m * max(d, L - d)^2.
  for (let i = 1; i <= n; i++) {
    const L = arm[`L${i}`]!;
    const d = arm[`d${i}`]!;
    const m = arm[`m${i}`]!;
    const I = arm[`I${i}`]!;
    if (d > L)
      ctx.addIssue({
        code: 'custom',
        path: ['arm', `d${i}`],
        message: `the centre of mass (${d} m) lies beyond the link's end (L${i} = ${L} m)`,
      });
    const bound = m * Math.max(d, L - d) ** 2;
    if (I > bound * 1.0000001) {
      ctx.addIssue({
        code: 'custom',
        path: ['arm', `I${i}`],
        message: `inertia ${I} kg m^2 is impossible for a ${m} kg link of ${L} m (at most m*max(d, L-d)^2 = ${bound.toPrecision(4)})`,
      });
    }
  }
}

/** A rig file as written (defaults filled). */
export type RigFile = z.infer<typeof rigFileSchema>;

export { RigFileError } from './rig-error.js';

/** Renders a zod path the way people write it: control.pid.kp[1]. */
export function fieldPath(path: readonly PropertyKey[]): string {
  let s = '';
  for (const k of path) {
    if (typeof k === 'number') s += `[${k}]`;
    else s += s ? `.${String(k)}` : String(k);
  }
  return s || '(top level)';
}

/** Describes the value found at a path of the raw input, for error messages. */
function valueAt(raw: unknown, path: readonly PropertyKey[]): string {
  let v: unknown = raw;
  for (const k of path) {
    if (v === null || typeof v !== 'object') return '';
    v = (v as Record<PropertyKey, unknown>)[k];
  }
  if (v === undefined) return ' (missing)';
  const s = preview(v, 3);
  return ` (got ${s.length > 40 ? `${s.slice(0, 40)}...` : s})`;
}

/**
 * A short JSON-like text of a value, at most `depth` levels deep and a few entries wide, so that a
 * value nested thousands of levels deep (or a huge array) costs nothing to describe.
 */
export function preview(v: unknown, depth: number): string {
  if (typeof v === 'number') return String(v);
  if (v === null || typeof v !== 'object') return JSON.stringify(v) ?? String(v);
  if (depth <= 0) return Array.isArray(v) ? '[...]' : '{...}';
  if (Array.isArray(v)) {
    const items = v.slice(0, 4).map((x) => preview(x, depth - 1));
    return `[${items.join(',')}${v.length > 4 ? ',...' : ''}]`;
  }
  const keys = Object.keys(v).slice(0, 4);
  const items = keys.map((k) => `${JSON.stringify(k)}:${preview((v as Record<string, unknown>)[k], depth - 1)}`);
  return `{${items.join(',')}${Object.keys(v).length > 4 ? ',...' : ''}}`;
}

/** Flattens zod issues into one message per problem, each with the path of its field. */
function flatten(issues: readonly z.core.$ZodIssue[]): { path: PropertyKey[]; text: string; unknown?: boolean }[] {
  const out: { path: PropertyKey[]; text: string; unknown?: boolean }[] = [];
  for (const is of issues) {
    if (is.code === 'unrecognized_keys') {
      for (const k of is.keys) out.push({ path: [...is.path, k], text: 'unknown key (a typo?)', unknown: true });
    } else if (is.code === 'invalid_union') {
      // Report the closest branch (the one with the fewest problems) rather than zod's summary.
      const branches = (is as unknown as { errors: z.core.$ZodIssue[][] }).errors;
      const scored = branches.map((br) => flatten(br.map((b) => ({ ...b, path: [...is.path, ...b.path] }))));
      out.push(...(scored.sort((a, b) => a.length - b.length)[0] ?? []));
    } else {
      out.push({ path: [...is.path], text: is.message });
    }
  }
  return out;
}

/** One problem in a file: where (`path`, and `field` as people write it) and what is wrong there (`text`, with the value found). */
export interface FieldProblem {
  path: readonly PropertyKey[];
  field: string;
  text: string;
}

/** A problem as one line: `field: text`. */
export const problemLine = (p: Pick<FieldProblem, 'field' | 'text'>): string => `${p.field}: ${p.text}`;

/** Turns zod issues into problems (and one message per line), each naming its field and the value found there. */
export function describeIssues(
  issues: readonly z.core.$ZodIssue[],
  raw: unknown,
): { field: string; lines: string[]; problems: FieldProblem[] } {
  const problems = flatten(issues).map((f) => ({
    path: f.path,
    field: fieldPath(f.path),
    text: `${f.text}${f.unknown ? '' : valueAt(raw, f.path)}`,
  }));
  return { field: problems[0]?.field ?? '', lines: problems.map(problemLine), problems };
}

/**
 * Several problems as one line: the first in full, then the fields of the others, so that the CLI
 * prints one line however many things are wrong (`a: why (and 2 more problems: b, c)`).
 */
export function oneLine(problems: readonly Pick<FieldProblem, 'field' | 'text'>[]): string {
  const unique = [...new Map(problems.map((p) => [problemLine(p), p])).values()];
  const rest = unique.slice(1).map((p) => p.field);
  const first = unique[0] ? problemLine(unique[0]).replace(/\s*\n\s*/g, ' ') : '';
  return rest.length ? `${first} (and ${rest.length} more problem${rest.length > 1 ? 's' : ''}: ${[...new Set(rest)].join(', ')})` : first;
}

/** Validates a parsed rig file; throws RigFileError naming `file` and the first field at fault. */
export function parseRigFile(raw: unknown, file: string): RigFile {
  // jitless: zod's eval-compiled fast path for objects costs more to generate (~5 ms of CPU at start-up)
  // than it saves on the one or two rig files a process reads.
  const r = rigFileSchema.safeParse(raw, { jitless: true });
  if (!r.success) {
    const { field, problems } = describeIssues(r.error.issues, raw);
    throw new RigFileError(file, oneLine(problems), field);
  }
  return r.data;
}
