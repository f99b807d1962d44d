/**
 * Reading rig files from disk and resolving them into the numbers the rest of twolink uses (SI units,
 * radians, one entry per joint, defaults filled).
 */
import { createActuatedArmModel, maxMassMatrixDiagonal } from '../model/actuated.js';
import type { ArmParams, TwoLinkParams } from '../model/types.js';
import { FileError, MAX_CONFIG_BYTES, readTextFile } from './files.js';
import { plausibilityIssues } from './plausible.js';
import { checkShields } from './shields.js';
import { oneLine, parseRigFile, RigFileError, type MotorParams, type RigFile } from './rig.js';
import { resolveWiring, type HostWiring } from './wiring.js';
import { BOARD_ADAPTER, defaultRateHz, type AdapterKind, type BoardKind } from './cable.js';

const DEG = Math.PI / 180;

/** Limits of one joint, in SI units. */
export interface JointLimits {
  /** [rad] */
  min: number;
  /** [rad] */
  max: number;
  /** [rad/s] */
  maxVel: number;
  /** [N m] */
  maxTorque: number;
  /** Largest following error [rad]; undefined: the default (src/control/following.ts). */
  followingError?: number;
}

/** Encoder of one joint. */
export interface EncoderParams {
  countsPerRev: number;
  sign: 1 | -1;
  /** Joint angle at count 0 [rad]. */
  zero: number;
  /** Where it sits: on the motor shaft (before the gearbox) or on the joint. Absent in an EncoderParams built by hand: the motor. */
  side?: 'motor' | 'joint';
  /** The play between it and the link [rad] (the gearbox's, for a motor-side encoder). Absent: none. */
  backlash?: number;
}

/** The plant of the mock rig: the arm as it really is. */
export interface PlantParams {
  arm: ArmParams;
  /** [N m s/rad] per joint */
  viscous: number[];
  /** [N m] per joint */
  coulomb: number[];
  /** [rad/s] */
  coulombVelocity: number;
  motors: MotorParams[];
  /** [V] */
  supplyV: number;
  /** Encoder noise standard deviation [counts]. */
  noiseCounts: number;
  /** [s] */
  latency: number;
  /** The USB-serial adapter the mock models between the host and the board. */
  adapter: { kind: AdapterKind; latencyMs: number };
  /** [kg] at the endpoint */
  payloadKg: number;
  /** Integration step [s]. */
  step: number;
  seed: number;
  /** Mechanical stops per joint [rad], when the plant has them. */
  stops?: { min: number; max: number }[];
  /** Joint angles at power-on [rad]. */
  start: number[];
  /**
   * The gearbox and friction flaws (absent in a PlantParams built by hand: none). Gearbox play at the
   * output per joint [rad] (0: none); the encoder is on the motor side.
   */
  backlash?: number[];
  /** Gear mesh stiffness per joint [N m/rad]. */
  gearStiffness?: number[];
  /** Gear mesh damping per joint while in contact [N m s/rad]. */
  gearDamping?: number[];
  /** Breakaway friction per joint [N m] (the Coulomb level: no stiction). */
  breakaway?: number[];
  /** Stribeck velocity per joint [rad/s]. */
  stribeckVelocity?: number[];
}

/**
 * The gear mesh's stiffness when the rig file gives none [N m/rad]: about 87 N m per deg at the
 * output, so holding a 2 N m load winds the gearbox up 0.02 deg. No maker publishes it for hobby
 * gearmotors; on the mock arm it puts the link-on-gearbox resonance near 40 Hz, well above the loop's
 * bandwidth (a softer mesh, 1000 N m/rad at 0.3 N m s/rad, rings at 19 Hz and the loop chatters).
 */
export const DEFAULT_GEAR_STIFFNESS = 5000;
/** The gear mesh's damping while in contact when the rig file gives none [N m s/rad]. */
export const DEFAULT_GEAR_DAMPING = 1;
/** The Stribeck velocity when the rig file gives none [rad/s] (about 1 deg/s at the joint). */
export const DEFAULT_STRIBECK_VELOCITY = 0.02;

/** A rig file resolved: what the host believes about the arm, and how to drive it. */
export interface Rig {
  /** Path the rig was read from (or a label). */
  file: string;
  name: string;
  joints: 1 | 2;
  /** The nominal arm. */
  arm: ArmParams;
  /** Nominal friction [N m s/rad], [N m] per joint; the breakaway [N m] and Stribeck velocity [rad/s] when the file gives them. */
  friction: { viscous: number[]; coulomb: number[]; breakaway?: number[]; stribeckVelocity?: number[] };
  motors: MotorParams[];
  /** [V] */
  supplyV: number;
  /** 0..1 */
  maxDuty: number;
  encoders: EncoderParams[];
  limits: JointLimits[];
  /** The board and its USB adapter (the rig file's `board`, the adapter defaulting from the board). */
  cable: { board: BoardKind; adapter: AdapterKind; latencyMs: number };
  control: Omit<RigFile['control'], 'pid' | 'rateHz'> & {
    /** [Hz] */
    rateHz: number;
    pid: Omit<RigFile['control']['pid'], 'kp' | 'ki' | 'kd' | 'iLimitNm'> & {
      kp: number[];
      ki: number[];
      kd: number[];
      iLimitNm: number[];
    };
  };
  twin: RigFile['twin'];
  /** Impedance mode's defaults and limits (absent in a Rig built by hand: the schema's defaults apply). */
  impedance?: RigFile['impedance'];
  link: RigFile['link'] & { baudRate: number };
  firmata?: RigFile['firmata'];
  /** Present for rigs that have a simulated plant (the mock rig). */
  plant?: PlantParams;
  /** How the motors and encoders are connected to the board, when the rig file says (src/config/wiring.ts). */
  wiring?: HostWiring;
  /** The file as validated, for recording headers and for writing identified rigs. */
  source: RigFile;
}

/** Closed-loop bandwidth of the gains twolink computes when a rig file gives none [Hz]. */
export const DEFAULT_BANDWIDTH_HZ = 3;

/**
 * PID gains from the nominal model when the rig file gives none: per joint, the largest inertia the
 * joint sees J (the actuated arm's M_ii over the workspace, reflected rotor inertia included), then
 * a PD with natural frequency wn = 2 pi 3 Hz and damping 0.7 (kp = J wn^2, kd = 2 zeta J wn), an
 * integral time of 1 s (ki = kp) and an integral limit of a fifth of the joint's torque limit. The
 * feedforward and the disturbance observer carry the dynamics; a modest feedback bandwidth keeps
 * encoder noise out of the torque and leaves the observer (8 Hz) room: with the PID at 5 Hz and the
 * observer at 10 Hz or more the two fight and the loop oscillates (measured on the mock rig).
 */
export function defaultGains(
  arm: ArmParams,
  motors: MotorParams[],
  limits: JointLimits[],
): { kp: number[]; ki: number[]; kd: number[]; iLimitNm: number[] } {
  // The supply, the bridges and friction do not enter the inertia: any valid values do.
  const J = maxMassMatrixDiagonal(createActuatedArmModel({ arm, motors: motors.map(({ driver: _bridge, ...m }) => m), supplyV: 1 }));
  const wn = 2 * Math.PI * DEFAULT_BANDWIDTH_HZ;
  const out = { kp: [] as number[], ki: [] as number[], kd: [] as number[], iLimitNm: [] as number[] };
  for (let i = 0; i < J.length; i++) {
    const j = J[i]!;
    const kp = j * wn * wn;
    out.kp.push(round3(kp));
    out.kd.push(round3(2 * 0.7 * j * wn));
    out.ki.push(round3(kp));
    out.iLimitNm.push(round3(0.2 * limits[i]!.maxTorque));
  }
  return out;
}

function round3(v: number): number {
  return Number(v.toPrecision(3));
}

const DEFAULT_MOTOR: MotorParams = { kt: 0.01, ke: 0.01, R: 2, gear: 100, efficiency: 0.8, rotorInertia: 1e-6 };

/** The rig file's encoders with their zero and play in radians; absent, 2048 counts per rev on the motor per joint. */
function resolveEncoders(f: RigFile, joints: 1 | 2): EncoderParams[] {
  return (f.encoders ?? new Array(joints).fill({ countsPerRev: 2048, sign: 1, zeroDeg: 0 })).map(
    (e: { countsPerRev: number; sign: 1 | -1; zeroDeg: number; side?: 'motor' | 'joint'; backlashDeg?: number }) => ({
      countsPerRev: e.countsPerRev,
      sign: e.sign,
      zero: e.zeroDeg * DEG,
      side: e.side ?? 'motor',
      backlash: (e.backlashDeg ?? 0) * DEG,
    }),
  );
}

/** The rig file's joint limits in SI units; absent, +-170 deg, 360 deg/s and 5 N m per joint. */
function resolveLimits(f: RigFile, joints: 1 | 2): JointLimits[] {
  return (f.limits ?? new Array(joints).fill({ minDeg: -170, maxDeg: 170, maxVelDegS: 360, maxTorqueNm: 5 })).map(
    (l: { minDeg: number; maxDeg: number; maxVelDegS: number; maxTorqueNm: number; followingErrorDeg?: number }) => ({
      min: l.minDeg * DEG,
      max: l.maxDeg * DEG,
      maxVel: l.maxVelDegS * DEG,
      maxTorque: l.maxTorqueNm,
      ...(l.followingErrorDeg !== undefined ? { followingError: l.followingErrorDeg * DEG } : {}),
    }),
  );
}

/** The rig file's `control` section with what it leaves out filled: the rate the USB adapter allows, the gains from the model. */
function resolveControl(f: RigFile, motors: MotorParams[], limits: JointLimits[], cable: Rig['cable']): Rig['control'] {
  const pid = f.control.pid;
  const auto = defaultGains(f.arm, motors, limits);
  return {
    ...f.control,
    rateHz: f.control.rateHz ?? defaultRateHz(cable.adapter, cable.latencyMs),
    pid: {
      ...pid,
      kp: pid.kp ?? auto.kp,
      ki: pid.ki ?? auto.ki,
      kd: pid.kd ?? auto.kd,
      iLimitNm: pid.iLimitNm ?? auto.iLimitNm,
    },
  };
}

/** The rig file's `plant` section (the mock's arm: what differs from the model, the adapter, the start pose) in SI units. */
function resolvePlant(
  f: RigFile,
  p: NonNullable<RigFile['plant']>,
  rig: Rig,
  cable: Rig['cable'],
  zeros: () => number[],
): NonNullable<Rig['plant']> {
  const arm = { ...f.arm, ...stripUndefined(p.arm) } as ArmParams;
  return {
    arm,
    viscous: p.viscous ?? zeros(),
    coulomb: p.coulomb ?? zeros(),
    coulombVelocity: p.coulombVelocity,
    motors: rig.motors.map((m, i) => ({ ...m, ...stripUndefined(p.motors?.[i] ?? {}) })),
    supplyV: p.supplyV ?? f.supplyV,
    noiseCounts: p.noiseCounts,
    latency: p.latencyMs / 1000,
    adapter: { kind: p.adapter.kind ?? cable.adapter, latencyMs: p.adapter.latencyMs ?? cable.latencyMs },
    payloadKg: p.payloadKg,
    step: p.stepS,
    seed: p.seed,
    start: (p.startDeg ?? zeros()).map((d) => d * DEG),
    backlash: (p.backlashDeg ?? zeros()).map((d) => d * DEG),
    gearStiffness: p.gearStiffnessNmPerRad ?? zeros().map(() => DEFAULT_GEAR_STIFFNESS),
    gearDamping: p.gearDampingNmsPerRad ?? zeros().map(() => DEFAULT_GEAR_DAMPING),
    breakaway: p.breakawayNm ?? (p.coulomb ?? zeros()).slice(),
    stribeckVelocity: p.stribeckVelocityRadS ?? zeros().map(() => DEFAULT_STRIBECK_VELOCITY),
    ...(p.stops ? { stops: p.stops.map((s) => ({ min: s.minDeg * DEG, max: s.maxDeg * DEG })) } : {}),
  };
}

/** Resolves a validated rig file. */
export function resolveRig(f: RigFile, file: string): Rig {
  const joints: 1 | 2 = 'L2' in f.arm ? 2 : 1;
  const zeros = (): number[] => new Array<number>(joints).fill(0);
  const motors = f.motors ?? new Array<MotorParams>(joints).fill(DEFAULT_MOTOR);
  const encoders = resolveEncoders(f, joints);
  const limits = resolveLimits(f, joints);
  const cable = {
    board: f.board.name,
    adapter: f.board.adapter ?? BOARD_ADAPTER[f.board.name],
    latencyMs: f.board.ftdiLatencyMs,
  };
  const control = resolveControl(f, motors, limits, cable);
  const rig: Rig = {
    file,
    name: f.name ?? file.replace(/^.*\//, '').replace(/\.json$/, ''),
    joints,
    cable,
    arm: { ...f.arm },
    friction: {
      viscous: f.friction.viscous ?? zeros(),
      coulomb: f.friction.coulomb ?? zeros(),
      ...(f.friction.breakawayNm ? { breakaway: f.friction.breakawayNm.slice() } : {}),
      ...(f.friction.stribeckVelocityRadS ? { stribeckVelocity: f.friction.stribeckVelocityRadS.slice() } : {}),
    },
    motors: motors.map((m: MotorParams) => ({ ...m })),
    supplyV: f.supplyV,
    maxDuty: f.maxDuty,
    encoders,
    limits,
    control,
    twin: { ...f.twin },
    impedance: { ...f.impedance },
    link: { ...f.link, baudRate: f.link.baudRate ?? (f.link.transport === 'firmata' ? 57600 : 1_000_000) },
    ...(f.firmata ? { firmata: f.firmata } : {}),
    ...(f.wiring
      ? {
          wiring: resolveWiring(
            f.wiring,
            joints,
            encoders.map((e) => e.countsPerRev),
            file,
          ),
        }
      : {}),
    source: f,
  };
  if (f.plant) rig.plant = resolvePlant(f, f.plant, rig, cable, zeros);
  return rig;
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** Parses JSON text, turning a syntax error into one that names the line and column. */
export function parseJsonText(text: string, file: string): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    const msg = e instanceof Error ? e.message : String(e);
    const pos = jsonErrorPosition(msg, text);
    if (pos !== undefined) {
      const before = text.slice(0, pos);
      const line = before.split('\n').length;
      const col = pos - before.lastIndexOf('\n');
      throw new RigFileError(file, `line ${line}, column ${col}: invalid JSON (${oneLineJson(msg)})`);
    }
    throw new RigFileError(file, `invalid JSON (${oneLineJson(msg)})`);
  }
}

/** A JSON file whose top level is an object (a rig file kept as written, to be edited and written back): its fields, or a RigFileError naming the file. */
export function parseJsonObject(text: string, file: string): Record<string, unknown> {
  const raw = parseJsonText(text, file);
  if (!isJsonObject(raw))
    throw new RigFileError(
      file,
      `(top level): must be a JSON object, got ${Array.isArray(raw) ? 'an array' : raw === null ? 'null' : `a ${typeof raw}`}`,
    );
  return raw;
}

function isJsonObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Where V8's JSON.parse failed: "at position N", or, for "Unexpected token 'x', ..."context"... is
 * not valid JSON" (which gives no position), where that context and its token are in the text.
 */
function jsonErrorPosition(msg: string, text: string): number | undefined {
  const m = /position (\d+)/.exec(msg);
  if (m) return Number(m[1]);
  const t = /^Unexpected token '([\s\S])', (\.\.\.)?"([\s\S]*?)"(?:\.\.\.)? is not valid JSON$/.exec(msg);
  if (!t) return undefined;
  const at = text.indexOf(t[3]!);
  if (at < 0) return undefined;
  const k = t[3]!.indexOf(t[1]!, t[2] ? Math.min(10, t[3]!.length - 1) : 0);
  return at + Math.max(0, k);
}

/** V8's JSON message without its position and with the quoted context on one line. */
function oneLineJson(msg: string): string {
  return msg
    .replace(/ in JSON at position \d+.*$/s, '')
    .replace(/, (\.\.\.)?"[\s\S]*"(\.\.\.)? is not valid JSON$/, '')
    .replace(/\s*\n\s*/g, ' ');
}

/**
 * Reads a rig or trajectory file's text: a regular file of at most MAX_CONFIG_BYTES. Throws a
 * RigFileError naming the file (a missing file, a directory, a FIFO, a device, a file too large).
 */
export function readConfigText(file: string, what = 'rig file'): string {
  try {
    return readTextFile(file, MAX_CONFIG_BYTES, what);
  } catch (e) {
    if (!(e instanceof FileError)) throw e;
    const hint = e.code === 'ENOENT' && what === 'rig file' ? ' (the rig files that ship are in rigs/)' : '';
    throw new RigFileError(file, `${e.message.slice(file.length + 2)}${hint}`);
  }
}

/**
 * Refuses a resolved rig that is physically implausible (plausible.ts): a RigFileError naming the file,
 * the field and the reason, one line per problem.
 */
export function checkPlausible(rig: Rig): Rig {
  const issues = plausibilityIssues(rig);
  if (issues.length) {
    throw new RigFileError(rig.file, oneLine(issues.map((i) => ({ field: i.path, text: i.message }))), issues[0]!.path);
  }
  return rig;
}

/**
 * Reads, validates and resolves a rig file, and checks that it is physically plausible. Throws
 * RigFileError naming the file and the field. Everything a run needs from the file is checked here,
 * in the main thread, before any loop or worker starts.
 */
export function loadRig(file: string): Rig {
  const text = readConfigText(file);
  return checkShields(checkPlausible(resolveRig(parseRigFile(parseJsonText(text, file), file), file)));
}

/** The nominal two-link parameters of a rig, or an error naming the rig when it has one link. */
export function twoLinkArm(rig: Rig): TwoLinkParams {
  if (rig.joints !== 2) throw new RigFileError(rig.file, 'this needs a two-link arm (L2, d2, m2, I2)', 'arm');
  return rig.arm as TwoLinkParams;
}
