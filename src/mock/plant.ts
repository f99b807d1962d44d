/**
 * The mock rig's arm: the actuated arm model (src/model/actuated.ts: the rigid arm, the geared DC
 * motors with back-EMF and rotor inertia, viscous and Coulomb friction) built from the rig file's
 * `plant` section, the same equations the controller and the twin evaluate with the nominal values,
 * plus what a real arm has beyond the model: mechanical stops, the wiring as it really is, encoder
 * quantization and noise, and injection knobs (a stalled joint, a slipping or reversed encoder, a
 * payload, a dead motor, a sagging supply, an external torque).
 *
 * The arm as hobby arms are built (issue 33) has flaws the model lacks, each per joint and each an
 * injection: the H-bridge's losses (the motor's `driver`, src/model/driver.ts, in the model's motor
 * torque), gearbox play at the output and stiction. With play or stiction (`flaws`) each joint is two
 * bodies: the motor side theta (the rotor, N^2 J_r at the joint, with the motor's torque and all the
 * joint's friction) and the link q (the arm's own inertia and gravity), joined by the gear mesh, a
 * spring over a dead zone of the play:
 *
 *   J_m theta'' = tm(duty, theta') - tau_g - f(theta')      M(q) q'' + V + G = tau_g + pushes and stops
 *   tau_g = k (delta - b/2) + c delta'  for delta > b/2 (mirrored below -b/2), 0 inside; delta = theta - q
 *
 * a push-only contact (it never pulls) when there is play. Friction is Stribeck's with a stick phase
 * (Karnopp): a motor side at rest stays at rest while the torque on it is below the breakaway;
 * sliding, it loses sign(v) (Fc + (Fs - Fc) exp(-(v/vs)^2)) + b v. The encoders sit on the motor side
 * (`encoderQ`); `q` is the link's true angle. The stiff mesh is integrated in sub-steps of the plant's
 * step. Without play or stiction the joint is one rigid body as before, bit for bit.
 *
 * The file is over 650 lines because the split joints integrate the same state, under the same wiring, stops,
 * pushes, hand and injections, as the rigid arm: one class keeps one truth of the arm.
 */
import {
  DEFAULT_GEAR_DAMPING,
  DEFAULT_GEAR_STIFFNESS,
  DEFAULT_STRIBECK_VELOCITY,
  type EncoderParams,
  type PlantParams,
} from '../config/load.js';
import {
  computeForwardDynamics,
  computeFriction,
  computeGravity,
  computeEnergy,
  computeMassMatrix,
  computeVelocityTerms,
  createActuatedArmData,
  createActuatedArmModel,
  motorTorque,
  type ActuatedArmData,
  type ActuatedArmModel,
  type ActuatedArmSpec,
} from '../model/actuated.js';
import { FixedStepIntegrator } from '../model/integrate.js';
import { DRIVER_PRESETS, type DriverParams } from '../model/driver.js';
import { torqueForDuty } from '../model/motor.js';
import { mulberry32 } from '../model/random.js';
import type { ArmParams, Mat2, TwoLinkParams } from '../model/types.js';
import { jacobian } from '../model/kinematics.js';
import { asOutPair, isTwoLink } from '../model/types.js';
import { Hand, type HandPath } from './hand.js';

/** Injections a test can switch on while the plant runs (src/mock/injections.ts). */
export interface PlantInjections {
  /** Joint i is jammed: it does not move whatever the torque. */
  stalled: boolean[];
  /** Counts added to encoder i (a slipping encoder adds to this). */
  encoderOffset: number[];
  /**
   * Encoder i slips on its shaft as the joint turns (`slipping`): it sticks, then jerks back against
   * the motion by this many counts each time the joint has turned SLIP_EVERY times as many (0: none).
   */
  encoderSlip: number[];
  /** Encoder i counts the wrong way. */
  encoderReversed: boolean[];
  /** Motor i produces no torque (a broken wire). */
  motorDead: boolean[];
  /** Supply voltage as a fraction of nominal (a sagging supply). */
  supplyScale: number;
  /** External joint torques [N m] (a push). */
  extraTorque: number[];
  /** A force on the endpoint [N] (x, y), applied as joint torques J^T F until `endpointForceUntil`. */
  endpointForce: [number, number];
  /** Plant time at which the endpoint force ends [s]. */
  endpointForceUntil: number;
}

/**
 * The gearbox and friction flaws per joint (the rig file's `plant` section; --inject backlash=...,
 * breakaway=...). Changed while the plant runs, they take effect at its next step.
 */
export interface PlantFlaws {
  /** Gearbox play at the output [rad] (0: none). */
  backlash: number[];
  /** Gear mesh stiffness [N m/rad]. */
  gearStiffness: number[];
  /** Gear mesh damping while in contact [N m s/rad]. */
  gearDamping: number[];
  /** Breakaway friction [N m]; at or below the Coulomb level: no stiction. */
  breakaway: number[];
  /** Stribeck velocity [rad/s]. */
  stribeckVelocity: number[];
}

/** Defaults of the flaws a PlantParams built by hand leaves out (src/config/load.ts has the rig file's). */
const FLAW_DEFAULTS = {
  gearStiffness: DEFAULT_GEAR_STIFFNESS,
  gearDamping: DEFAULT_GEAR_DAMPING,
  stribeckVelocity: DEFAULT_STRIBECK_VELOCITY,
};

/** The motor side's inertia when the rig gives the rotor none [kg m^2 at the joint]: the split needs one. */
const MIN_MOTOR_INERTIA = 1e-4;
/** Encoder readings the plant remembers the links' angles at (linkAtReading): 64 covers 60 ms of Firmata's per-joint reads at 1 kHz. */
const READINGS = 64;
/** A motor side slower than this is at rest for the stick test [rad/s]. */
const REST_SPEED = 1e-6;
/** The mesh's fastest mode times a sub-step stays below this [rad] (RK4 is accurate well inside its limit of 2.8). */
const SUBSTEP_PHASE = 0.25;

/**
 * How the real motors and encoders are connected to the board, and how the encoders really count
 * (the mock rig wired wrong on purpose, src/mock/wiring.ts). It is the truth, independent of what the
 * rig file believes: a rig file that `twolink setup` corrected still drives the same miswired arm.
 * Without it the plant is wired as the rig file says.
 */
export interface PlantWiring {
  /** Per joint: the board output (0-based) that drives its motor. */
  motorChannel: number[];
  /** Per joint: -1 when its motor leads are reversed (a positive duty turns it clockwise). */
  motorSign: number[];
  /** Per board encoder input: the joint (0-based) whose encoder is wired to it. */
  encoderJoint: number[];
  /** Per joint: +1 when its encoder counts up as the joint turns counter-clockwise, -1 when backwards. */
  encoderSign: number[];
  /** Per joint: the counts per revolution its encoder really gives. */
  countsPerRev: number[];
  /** Per joint: the angle where its counts are zero: where the joint was at power-on [rad]. */
  zero: number[];
}

/** A deterministic Gaussian noise source (mulberry32 + Box-Muller), so runs are reproducible. */
export class Noise {
  private spare: number | undefined;
  /** Uniform in [0, 1). */
  readonly uniform: () => number;
  constructor(seed: number) {
    this.uniform = mulberry32(seed);
  }
  gaussian(): number {
    if (this.spare !== undefined) {
      const s = this.spare;
      this.spare = undefined;
      return s;
    }
    const u = Math.max(this.uniform(), 1e-300);
    const v = this.uniform();
    const r = Math.sqrt(-2 * Math.log(u));
    this.spare = r * Math.sin(2 * Math.PI * v);
    return r * Math.cos(2 * Math.PI * v);
  }
}

/** Parameters of link 2 with a point payload at the endpoint. */
export function withPayload(p: TwoLinkParams, payloadKg: number): TwoLinkParams {
  if (payloadKg <= 0) return p;
  const m2 = p.m2 + payloadKg;
  const d2 = (p.m2 * p.d2 + payloadKg * p.L2) / m2;
  const I2 = p.I2 + p.m2 * (d2 - p.d2) ** 2 + payloadKg * (p.L2 - d2) ** 2;
  return { ...p, m2, d2, I2 };
}

/** The plant's true actuated arm: `arm` (the plant's, with any payload) and the `plant` section's motors, friction and supply. */
export function plantModelSpec(p: PlantParams, arm: ArmParams = p.arm): ActuatedArmSpec {
  return {
    arm,
    motors: p.motors,
    friction: { viscous: p.viscous, coulomb: p.coulomb },
    supplyV: p.supplyV,
    coulombVelocity: p.coulombVelocity,
  };
}

/** A mechanical stop's stiffness [N m/rad] and damping [N m s/rad] (a rubber bumper on a bench arm). */
/** A slipping encoder (`slipping`) jerks back by its slip each time the joint has turned this many times its slip: it loses a tenth of the motion. */
export const SLIP_EVERY = 10;
const STOP_STIFFNESS = 300;
const STOP_DAMPING = 3;

export class Plant {
  readonly joints: 1 | 2;
  /** Joint angles [rad]. */
  readonly q: number[];
  /** Joint velocities [rad/s]. */
  readonly qd: number[];
  /** Plant time [s]. */
  t: number;
  readonly injected: PlantInjections;
  /** Duty being applied, -1..1 per board output (per joint unless the mock is miswired). */
  readonly duty: number[];
  /** Joint torques of the motors at the last step [N m]. */
  readonly motorTorque: number[];
  /** The actuated arm as it really is (with the payload): rebuilt when the payload changes. */
  private model!: ActuatedArmModel;
  private data!: ActuatedArmData;
  private payload: number;
  private readonly integ: FixedStepIntegrator;
  private readonly tau: number[];
  private readonly jac: Mat2 = [
    [0, 0],
    [0, 0],
  ];
  private readonly noise: Noise;
  /** Per encoder input while it slips: its ideal count at the last reading, and the motion since its last jerk [counts]. */
  private readonly slipFrom: (number | undefined)[] = [];
  private readonly slipTurned: number[] = [];
  /** Per joint: the encoder as it really is (sign, zero [rad], counts per revolution). */
  private readonly sensor: { sign: number; zero: number; cpr: number }[];
  private readonly motorChannel: number[];
  private readonly motorSign: number[];
  private readonly encoderJoint: number[];
  /** A scripted hand holding the endpoint (hand.ts), and the torques it puts on the joints [N m]. */
  private hand: Hand | undefined;
  private readonly handTau: number[];
  /** The gearbox and friction flaws, per joint (changed by injections). */
  readonly flaws: PlantFlaws;
  /** Per joint: the H-bridge as injected (undefined: the rig's), applied when the model is built. */
  private readonly driverOverride: (DriverParams | undefined)[];
  /** The link alone (no rotors, no friction): the link side of a split joint. */
  private linkModel!: ActuatedArmModel;
  private linkData!: ActuatedArmData;
  /** Per joint: the motor side's inertia at the joint [kg m^2]. */
  private motorInertia!: number[];
  /** The split joints' state: the motor side's angle [rad] and speed [rad/s], at the joint. */
  private readonly theta: number[];
  private readonly thetaD: number[];
  /** Whether the joints are split now (play or stiction on). */
  private split = false;
  /** Per joint: the motor side sticks (Karnopp); while it slides, the sign of its motion this step. */
  private readonly stuck: boolean[];
  private readonly slideDir: number[];
  /** The split integration: state [q, theta], [qd, thetaD], and the mesh torques [N m]. */
  private splitInteg: FixedStepIntegrator | undefined;
  private readonly xq: number[];
  private readonly xqd: number[];
  private readonly meshTau: number[];
  private readonly linkQdd: number[];
  /** Sub-steps per plant step while split. */
  private substeps = 1;
  /** The link's true angles at the last encoder reading [rad] (counts()): what the encoders would read without play. */
  readonly linkAtSample: number[];
  /** The last READINGS encoder readings: plant time [s] and the links' true angles [rad], a ring. */
  private readonly readingT = new Float64Array(READINGS).fill(-Infinity);
  private readonly readingQ = new Float64Array(2 * READINGS);
  private readingAt = 0;

  /**
   * `encoders` are what the board believes per encoder input (it reports their counts per
   * revolution); `wiring` how the arm is really connected (default: as the rig file says).
   */
  constructor(
    readonly params: PlantParams,
    readonly encoders: EncoderParams[],
    t0 = 0,
    wiring?: PlantWiring,
  ) {
    this.joints = isTwoLink(params.arm) ? 2 : 1;
    const n = this.joints;
    this.q = params.start.slice(0, n);
    this.qd = new Array<number>(n).fill(0);
    this.t = t0;
    this.duty = new Array<number>(n).fill(0);
    this.motorTorque = new Array<number>(n).fill(0);
    this.tau = new Array<number>(n).fill(0);
    this.handTau = new Array<number>(n).fill(0);
    this.injected = {
      stalled: new Array<boolean>(n).fill(false),
      encoderOffset: new Array<number>(n).fill(0),
      encoderSlip: new Array<number>(n).fill(0),
      encoderReversed: new Array<boolean>(n).fill(false),
      motorDead: new Array<boolean>(n).fill(false),
      supplyScale: 1,
      extraTorque: new Array<number>(n).fill(0),
      endpointForce: [0, 0],
      endpointForceUntil: -Infinity,
    };
    const per = (a: readonly number[] | undefined, def: number): number[] => (a ? a.slice(0, n) : new Array<number>(n).fill(def));
    this.flaws = {
      backlash: per(params.backlash, 0),
      gearStiffness: per(params.gearStiffness, FLAW_DEFAULTS.gearStiffness),
      gearDamping: per(params.gearDamping, FLAW_DEFAULTS.gearDamping),
      breakaway: per(params.breakaway, 0),
      stribeckVelocity: per(params.stribeckVelocity, FLAW_DEFAULTS.stribeckVelocity),
    };
    this.driverOverride = new Array<DriverParams | undefined>(n).fill(undefined);
    this.theta = new Array<number>(n).fill(0);
    this.thetaD = new Array<number>(n).fill(0);
    this.stuck = new Array<boolean>(n).fill(false);
    this.slideDir = new Array<number>(n).fill(0);
    this.xq = new Array<number>(2 * n).fill(0);
    this.xqd = new Array<number>(2 * n).fill(0);
    this.meshTau = new Array<number>(n).fill(0);
    this.linkQdd = new Array<number>(n).fill(0);
    this.linkAtSample = this.q.slice();
    this.payload = 0;
    this.setPayload(params.payloadKg);
    this.noise = new Noise(params.seed);
    const ids = [...Array(n).keys()];
    this.motorChannel = wiring?.motorChannel.slice(0, n) ?? ids;
    this.motorSign = wiring?.motorSign.slice(0, n) ?? ids.map(() => 1);
    this.encoderJoint = wiring?.encoderJoint.slice(0, n) ?? ids;
    this.sensor = ids.map((j) =>
      wiring
        ? { sign: wiring.encoderSign[j]!, zero: wiring.zero[j]!, cpr: wiring.countsPerRev[j]! }
        : { sign: encoders[j]!.sign, zero: encoders[j]!.zero, cpr: encoders[j]!.countsPerRev },
    );
    this.integ = new FixedStepIntegrator(n, 'rk4', (t, q, qd, out) => this.accel(q, qd, out, t));
  }

  /** A scripted hand takes the endpoint now and leads it along `path` (two links only). */
  setHand(path: HandPath): void {
    if (!isTwoLink(this.params.arm)) throw new Error('the scripted hand needs a two-link arm');
    this.hand = new Hand(this.params.arm, path, this.t, this.q);
  }

  /** The scripted hand, while it holds the arm. */
  get handHolding(): Hand | undefined {
    return this.hand && !this.hand.done(this.t) ? this.hand : undefined;
  }

  /** Pushes the endpoint with force (fx, fy) [N] from now for `seconds` (a hand: the force=FX,FY@T+D injection). */
  pushEndpoint(fx: number, fy: number, seconds: number): void {
    this.injected.endpointForce = [Number.isFinite(fx) ? fx : 0, Number.isFinite(fy) ? fy : 0];
    this.injected.endpointForceUntil = this.t + Math.max(0, seconds);
  }

  /** Puts a point mass [kg] at the endpoint (0 removes it). */
  setPayload(kg: number): void {
    this.payload = kg;
    this.rebuild();
  }

  /** Joint `joint`'s H-bridge now (the ideal bridge's figures when it has none). */
  driverOf(joint: number): DriverParams {
    return { ...(this.model.motors[joint]?.driver ?? DRIVER_PRESETS.ideal) };
  }

  /** Joint `joint`'s H-bridge is now `driver` (an injection: the bridge as it really is). */
  setDriver(joint: number, driver: DriverParams): void {
    this.driverOverride[joint] = { ...driver };
    this.rebuild();
  }

  /** The models from the parameters, the payload and the injected bridges. */
  private rebuild(): void {
    const base = this.params.arm;
    const arm = isTwoLink(base) ? withPayload(base, this.payload) : base;
    const spec = plantModelSpec(this.params, arm);
    if (this.driverOverride.some((d) => d !== undefined))
      spec.motors = spec.motors.map((m, i) => (this.driverOverride[i] ? { ...m, driver: this.driverOverride[i] } : m));
    this.model = createActuatedArmModel(spec);
    this.data = createActuatedArmData(this.model);
    this.linkModel = createActuatedArmModel({ arm, motors: spec.motors.map((m) => ({ ...m, rotorInertia: 0 })), supplyV: spec.supplyV });
    this.linkData = createActuatedArmData(this.linkModel);
    this.motorInertia = this.model.rotorInertia.map((r) => Math.max(r, MIN_MOTOR_INERTIA));
  }

  /** The actuated arm the plant integrates (the plant's true values, the payload included). */
  get armModel(): ActuatedArmModel {
    return this.model;
  }

  get payloadKg(): number {
    return this.payload;
  }

  /** Sets the duty (-1..1 per board output; non-finite values are treated as 0, as a board would). */
  setDuty(duty: readonly number[]): void {
    for (let i = 0; i < this.joints; i++) {
      const d = duty[i]!;
      this.duty[i] = Number.isFinite(d) ? Math.max(-1, Math.min(1, d)) : 0;
    }
  }

  /**
   * The joint accelerations [rad/s^2] the plant integrates at its state (q, qd) under the duty now,
   * after the wiring, the injections and the stops, into `out`: the rigid arm's (with play or
   * stiction the joints are split and integrated apart: this is then what the rigid arm would do).
   */
  accelerations(out: number[] = new Array<number>(this.joints).fill(0)): number[] {
    this.accel(this.q, this.qd, out);
    return out;
  }

  /** Joint torque of motor i at joint velocity w [N m]: the model's motor behind the real wiring and supply. */
  private motor(i: number, w: number): number {
    if (this.injected.motorDead[i]) return 0;
    const scale = this.injected.supplyScale;
    const m = this.model.motors[i]!;
    // Through a bridge the sagging supply loses the bridge's drop too (not a scaled duty: the PWM's steps and dead time are the bridge's).
    if (m.driver && scale !== 1)
      return torqueForDuty(m, this.model.supplyV * scale, this.motorSign[i]! * this.duty[this.motorChannel[i]!]!, w);
    const duty = this.motorSign[i]! * this.duty[this.motorChannel[i]!]! * scale;
    return motorTorque(this.model, i, duty, w);
  }

  /** qdd of the actuated arm under the motors, the pushes and the stops; a jammed joint has qdd = 0. */
  private accel(q: readonly number[], qd: readonly number[], out: number[], t = this.t): void {
    const n = this.joints;
    if (this.hand) this.hand.torque(t, q, qd, this.handTau);
    for (let i = 0; i < n; i++) {
      const mt = this.motor(i, qd[i]!);
      this.motorTorque[i] = mt;
      this.tau[i] = mt + this.injected.extraTorque[i]! + this.stopTorque(i, q[i]!, qd[i]!) + (this.hand ? this.handTau[i]! : 0);
    }
    if (n === 2 && this.t < this.injected.endpointForceUntil) this.addEndpointForce(q);
    this.linkAccel(this.model, this.data, q, qd, out);
  }

  /** tau += J(q)^T F for the endpoint force in force (virtual work: a force at the endpoint acts on the joints through the Jacobian's transpose). */
  private addEndpointForce(q: readonly number[]): void {
    const J = jacobian(this.params.arm as TwoLinkParams, q, this.jac);
    const [fx, fy] = this.injected.endpointForce;
    const tau = asOutPair(this.tau, 'the plant torque');
    tau[0] += J[0][0] * fx + J[1][0] * fy;
    tau[1] += J[0][1] * fx + J[1][1] * fy;
  }

  /**
   * Torque of joint i's mechanical stop [N m]: a stiff spring and damper once the joint is past it
   * (STOP_STIFFNESS, STOP_DAMPING), none inside the range or without stops.
   */
  private stopTorque(i: number, q: number, qd: number): number {
    const s = this.params.stops?.[i];
    if (!s) return 0;
    if (q < s.min) return STOP_STIFFNESS * (s.min - q) - (qd < 0 ? STOP_DAMPING * qd : 0);
    if (q > s.max) return STOP_STIFFNESS * (s.max - q) - (qd > 0 ? STOP_DAMPING * qd : 0);
    return 0;
  }

  /**
   * Called after each integration step with the plant's time [s]: what must happen at a moment of the
   * arm's motion (the pty rig's injections, injections.ts `injectOnPlantTime`) is polled here, on the
   * arm's own time, whoever advances it and however late.
   */
  onStep: ((t: number) => void) | undefined;

  /** Integrates up to time `t` [s] at the plant's step (never backwards). */
  advance(t: number): void {
    const h = this.params.step;
    while (this.t + h <= t + 1e-12) {
      this.stepBy(h);
      this.t += h;
      this.onStep?.(this.t);
    }
    const rest = t - this.t;
    if (rest > 1e-12) {
      this.stepBy(rest);
      this.t = t;
      this.onStep?.(this.t);
    }
  }

  /** One step of `h` [s] from this.t: the rigid arm, or the split joints in sub-steps. */
  private stepBy(h: number): void {
    if (!this.flawsOn()) {
      this.split = false;
      this.integ.step(this.t, this.q, this.qd, h);
      this.enforceStall();
      return;
    }
    if (!this.split) this.enterSplit();
    const n = this.joints;
    const s = this.substeps;
    const dt = h / s;
    for (let k = 0; k < s; k++) {
      this.decideStick();
      for (let i = 0; i < n; i++) {
        this.xq[i] = this.q[i]!;
        this.xq[n + i] = this.theta[i]!;
        this.xqd[i] = this.qd[i]!;
        this.xqd[n + i] = this.thetaD[i]!;
      }
      this.splitInteg!.step(this.t + k * dt, this.xq, this.xqd, dt);
      for (let i = 0; i < n; i++) {
        this.q[i] = this.xq[i]!;
        this.theta[i] = this.xq[n + i]!;
        this.qd[i] = this.xqd[i]!;
        this.thetaD[i] = this.xqd[n + i]!;
        // Friction cannot reverse the motion within a step: a motor side that crossed zero stops there
        // (the next sub-step decides whether it sticks or turns back).
        if (!this.stuck[i] && this.slideDir[i]! * this.thetaD[i]! < 0) this.thetaD[i] = 0;
      }
      this.enforceStall();
    }
  }

  /** Play or stiction on any joint: the joints are split into motor and link sides. */
  private flawsOn(): boolean {
    const f = this.flaws;
    for (let i = 0; i < this.joints; i++) if (f.backlash[i]! > 0 || f.breakaway[i]! > this.params.coulomb[i]!) return true;
    return false;
  }

  /** Splits the joints: the motor sides start where the links are, in the middle of the play, sliding. */
  private enterSplit(): void {
    const n = this.joints;
    for (let i = 0; i < n; i++) {
      this.theta[i] = this.q[i]!;
      this.thetaD[i] = this.qd[i]!;
      this.stuck[i] = false;
      this.slideDir[i] = 0;
    }
    this.splitInteg ??= new FixedStepIntegrator(2 * n, 'rk4', (t, x, xd, out) => this.splitAccel(x, xd, out, t));
    this.substeps = this.substepsFor(this.params.step);
    this.split = true;
  }

  /**
   * Sub-steps per step of `h` [s]: the mesh's fastest mode sqrt(k (1/J_m + 1/J_l)) (J_l the link's
   * smallest effective inertia at the joint over the elbow's range) and its damping rate c (1/J_m +
   * 1/J_l), each times a sub-step below SUBSTEP_PHASE.
   */
  private substepsFor(h: number): number {
    const n = this.joints;
    const inv = new Array<number>(n).fill(0);
    const q = new Array<number>(n).fill(0);
    for (const elbow of [0, Math.PI / 2, Math.PI]) {
      if (n === 2) q[1] = elbow;
      const M = computeMassMatrix(this.linkModel, this.linkData, q);
      if (n === 1) inv[0] = Math.max(inv[0]!, 1 / M[0]![0]!);
      else {
        const det = M[0]![0]! * M[1]![1]! - M[0]![1]! * M[1]![0]!;
        inv[0] = Math.max(inv[0]!, M[1]![1]! / det);
        inv[1] = Math.max(inv[1]!, M[0]![0]! / det);
      }
    }
    let s = 1;
    for (let i = 0; i < n; i++) {
      const mobility = 1 / this.motorInertia[i]! + inv[i]!; // [1/(kg m^2)]
      const w = Math.sqrt(this.flaws.gearStiffness[i]! * mobility);
      const rate = this.flaws.gearDamping[i]! * mobility;
      s = Math.max(s, Math.ceil((h * w) / SUBSTEP_PHASE), Math.ceil((h * rate) / SUBSTEP_PHASE));
    }
    return s;
  }

  /** The gear mesh's torque on the link [N m] at the twist delta = theta - q [rad] and its rate [rad/s]: a spring over the play's dead zone, push-only with play. */
  private mesh(i: number, delta: number, rate: number): number {
    const half = this.flaws.backlash[i]! / 2;
    const k = this.flaws.gearStiffness[i]!;
    const c = this.flaws.gearDamping[i]!;
    if (half <= 0) return k * delta + c * rate;
    if (delta > half) return Math.max(0, k * (delta - half) + c * rate);
    if (delta < -half) return Math.min(0, k * (delta + half) + c * rate);
    return 0;
  }

  /** The torque on motor side i at rest, besides friction [N m]: the motor's at zero speed less the mesh's. */
  private restTorque(i: number): number {
    return this.motor(i, 0) - this.mesh(i, this.theta[i]! - this.q[i]!, -this.qd[i]!);
  }

  /**
   * The stick test (Karnopp) at the start of each sub-step: a motor side at rest sticks while the
   * torque on it stays within the breakaway (never below the Coulomb level); otherwise it slides the
   * way it moves, or the way it is pushed.
   */
  private decideStick(): void {
    for (let i = 0; i < this.joints; i++) {
      const fs = Math.max(this.flaws.breakaway[i]!, this.params.coulomb[i]!);
      const v = this.thetaD[i]!;
      if (!this.stuck[i] && Math.abs(v) > REST_SPEED) {
        this.slideDir[i] = Math.sign(v);
        continue;
      }
      const a = this.restTorque(i);
      if (Math.abs(a) <= fs) {
        this.stuck[i] = true;
        this.thetaD[i] = 0;
      } else {
        this.stuck[i] = false;
        this.slideDir[i] = Math.sign(a);
      }
    }
  }

  /** Friction of a sliding motor side i at speed v [rad/s] the way it slides [N m]: Stribeck's curve plus viscous. */
  private friction(i: number, v: number): number {
    const fc = this.params.coulomb[i]!;
    const fs = Math.max(this.flaws.breakaway[i]!, fc);
    const vs = this.flaws.stribeckVelocity[i]!;
    const r = v / vs;
    return this.slideDir[i]! * (fc + (fs - fc) * Math.exp(-r * r)) + this.params.viscous[i]! * v;
  }

  /** Accelerations of the split joints: x = [q, theta], xd = [qd, thetaD], into out. */
  private splitAccel(x: readonly number[], xd: readonly number[], out: number[], t: number): void {
    const n = this.joints;
    const q = this.xqStage;
    const qd = this.xqdStage;
    for (let i = 0; i < n; i++) {
      q[i] = x[i]!;
      qd[i] = xd[i]!;
    }
    if (this.hand) this.hand.torque(t, q, qd, this.handTau);
    for (let i = 0; i < n; i++) {
      const th = x[n + i]!;
      const thd = xd[n + i]!;
      const g = this.mesh(i, th - q[i]!, thd - qd[i]!);
      this.meshTau[i] = g;
      const mt = this.motor(i, thd);
      this.motorTorque[i] = mt;
      out[n + i] = this.stuck[i] || this.injected.stalled[i] ? 0 : (mt - g - this.friction(i, thd)) / this.motorInertia[i]!;
      this.tau[i] = g + this.injected.extraTorque[i]! + this.stopTorque(i, q[i]!, qd[i]!) + (this.hand ? this.handTau[i]! : 0);
    }
    if (n === 2 && this.t < this.injected.endpointForceUntil) this.addEndpointForce(q);
    this.linkAccel(this.linkModel, this.linkData, q, qd, this.linkQdd);
    for (let i = 0; i < n; i++) out[i] = this.linkQdd[i]!;
  }
  private readonly xqStage: number[] = [0, 0];
  private readonly xqdStage: number[] = [0, 0];

  /** The accelerations of `model`'s arm under this.tau, into out: a jammed joint is a constraint qdd_i = 0; the free joint obeys its own row of the dynamics. */
  private linkAccel(model: ActuatedArmModel, data: ActuatedArmData, q: readonly number[], qd: readonly number[], out: number[]): void {
    const n = this.joints;
    const s0 = this.injected.stalled[0];
    const s1 = n === 2 && this.injected.stalled[1];
    if (!s0 && !s1) {
      computeForwardDynamics(model, data, q, qd, this.tau, out);
      return;
    }
    out.fill(0);
    if (n === 1 || (s0 && s1)) return;
    const M = computeMassMatrix(model, data, q);
    const V = computeVelocityTerms(model, data, q, qd);
    const G = computeGravity(model, data, q);
    const f = computeFriction(model, data, qd);
    const j = s0 ? 1 : 0;
    out[j] = (this.tau[j]! - V[j]! - G[j]! - f[j]!) / M[j]![j]!;
  }

  /** The angles the encoders read: the motor sides while the joints are split, else the joints [rad]. */
  get encoderQ(): number[] {
    return this.split ? this.theta : this.q;
  }

  /** The speeds of what the encoders read [rad/s]. */
  get encoderQd(): number[] {
    return this.split ? this.thetaD : this.qd;
  }

  /** The motor sides now stuck (stiction), per joint. */
  get motorStuck(): readonly boolean[] {
    return this.stuck;
  }

  /**
   * The split arm's mechanical energy [J]: the links' kinetic and potential, the motor sides' kinetic
   * and the mesh springs'; the rigid arm's (rotors included) when not split. Without friction, damping
   * or torque it stays constant: tests check the integration by it.
   */
  mechanicalEnergy(): number {
    if (!this.split) return computeEnergy(this.model, this.data, this.q, this.qd).total;
    let e = computeEnergy(this.linkModel, this.linkData, this.q, this.qd).total;
    for (let i = 0; i < this.joints; i++) {
      e += 0.5 * this.motorInertia[i]! * this.thetaD[i]! ** 2;
      const half = this.flaws.backlash[i]! / 2;
      const d = this.theta[i]! - this.q[i]!;
      const over = half <= 0 ? d : d > half ? d - half : d < -half ? d + half : 0;
      e += 0.5 * this.flaws.gearStiffness[i]! * over * over;
    }
    return e;
  }

  private enforceStall(): void {
    for (let i = 0; i < this.joints; i++)
      if (this.injected.stalled[i]) {
        this.qd[i] = 0;
        this.thetaD[i] = 0;
      }
  }

  /** Encoder counts per board input now: quantized, with noise, offsets and reversal (as a board would read them). */
  counts(out: number[] = new Array<number>(this.joints).fill(0)): number[] {
    const at = this.encoderQ;
    for (let j = 0; j < this.joints; j++) this.linkAtSample[j] = this.q[j]!;
    const k = this.readingAt++ % READINGS;
    this.readingT[k] = this.t;
    this.readingQ[2 * k] = this.q[0]!;
    this.readingQ[2 * k + 1] = this.joints > 1 ? this.q[1]! : 0;
    for (let i = 0; i < this.joints; i++) {
      const j = this.encoderJoint[i]!;
      const e = this.sensor[j]!;
      const ideal = (e.sign * (at[j]! - e.zero) * e.cpr) / (2 * Math.PI);
      const noisy = ideal + (this.params.noiseCounts > 0 ? this.params.noiseCounts * this.noise.gaussian() : 0);
      this.slipAt(i, ideal);
      let c = Math.round(noisy) + this.injected.encoderOffset[i]!;
      if (this.injected.encoderReversed[i]) c = -c;
      out[i] = Math.max(-2147483648, Math.min(2147483647, c));
    }
    return out;
  }

  /**
   * A slipping encoder (input i, at `ideal` counts now): after each SLIP_EVERY x its slip of motion
   * since the last jerk, it jerks back against the motion by its slip. Counted from the motion between
   * readings, so how often the board reads does not change what is lost.
   */
  private slipAt(i: number, ideal: number): void {
    const slip = this.injected.encoderSlip[i]!;
    if (!(slip > 0)) {
      this.slipFrom[i] = undefined;
      return;
    }
    const from = this.slipFrom[i];
    this.slipFrom[i] = ideal;
    if (from === undefined) {
      this.slipTurned[i] = 0;
      return;
    }
    const turned = this.slipTurned[i]! + ideal - from;
    const way = Math.sign(turned);
    if (Math.abs(turned) >= SLIP_EVERY * slip) {
      this.injected.encoderOffset[i]! -= way * slip;
      this.slipTurned[i] = turned - way * SLIP_EVERY * slip;
    } else this.slipTurned[i] = turned;
  }

  /**
   * The links' true angles [rad] at the last encoder reading at or before plant time `t` [s] (of the
   * last READINGS), into `out`; its plant time [s], or NaN when none is that old (`out` untouched).
   */
  linkAtReading(t: number, out: number[]): number {
    let best = -1;
    for (let k = 0; k < READINGS; k++) {
      const tk = this.readingT[k]!;
      if (tk <= t + 1e-9 && (best < 0 || tk > this.readingT[best]!)) best = k;
    }
    if (best < 0) return Number.NaN;
    out[0] = this.readingQ[2 * best]!;
    out[1] = this.readingQ[2 * best + 1]!;
    return this.readingT[best]!;
  }

  /** Sets the encoders so that they read zero now (the board's `Z`). */
  zeroEncoders(mask: number): void {
    for (let i = 0; i < this.joints; i++) {
      if (!(mask & (1 << i))) continue;
      const j = this.encoderJoint[i]!;
      const e = this.sensor[j]!;
      const ideal = Math.round((e.sign * (this.encoderQ[j]! - e.zero) * e.cpr) / (2 * Math.PI));
      this.injected.encoderOffset[i] = -ideal;
    }
  }
}
