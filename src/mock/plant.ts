/**
 * The mock rig's arm: the actuated arm model (src/model/actuated.ts: the rigid arm, the geared DC
 * motors with back-EMF and rotor inertia, viscous and Coulomb friction) built from the rig file's
 * `plant` section, the same equations the controller and the twin evaluate with the nominal values,
 * plus what a real arm has beyond the model: mechanical stops, the wiring as it really is, encoder
 * quantization and noise, and injection knobs (a stalled joint, a slipping or reversed encoder, a
 * payload, a dead motor, a sagging supply, an external torque).
 */
import type { EncoderParams, PlantParams } from '../config/load.js';
import {
  computeForwardDynamics,
  computeFriction,
  computeGravity,
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
  return { arm, motors: p.motors, friction: { viscous: p.viscous, coulomb: p.coulomb }, supplyV: p.supplyV, coulombVelocity: p.coulombVelocity };
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
    this.qd = new Array(n).fill(0);
    this.t = t0;
    this.duty = new Array(n).fill(0);
    this.motorTorque = new Array(n).fill(0);
    this.tau = new Array(n).fill(0);
    this.handTau = new Array(n).fill(0);
    this.injected = {
      stalled: new Array(n).fill(false),
      encoderOffset: new Array(n).fill(0),
      encoderSlip: new Array(n).fill(0),
      encoderReversed: new Array(n).fill(false),
      motorDead: new Array(n).fill(false),
      supplyScale: 1,
      extraTorque: new Array(n).fill(0),
      endpointForce: [0, 0],
      endpointForceUntil: -Infinity,
    };
    this.payload = 0;
    this.setPayload(params.payloadKg);
    this.noise = new Noise(params.seed);
    const ids = [...Array(n).keys()];
    this.motorChannel = wiring?.motorChannel.slice(0, n) ?? ids;
    this.motorSign = wiring?.motorSign.slice(0, n) ?? ids.map(() => 1);
    this.encoderJoint = wiring?.encoderJoint.slice(0, n) ?? ids;
    this.sensor = ids.map((j) => (wiring ? { sign: wiring.encoderSign[j]!, zero: wiring.zero[j]!, cpr: wiring.countsPerRev[j]! } : { sign: encoders[j]!.sign, zero: encoders[j]!.zero, cpr: encoders[j]!.countsPerRev }));
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
    const base = this.params.arm;
    this.model = createActuatedArmModel(plantModelSpec(this.params, isTwoLink(base) ? withPayload(base, kg) : base));
    this.data = createActuatedArmData(this.model);
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
   * after the wiring, the injections and the stops, into `out`.
   */
  accelerations(out: number[] = new Array<number>(this.joints).fill(0)): number[] {
    this.accel(this.q, this.qd, out);
    return out;
  }

  /** Joint torque of motor i at joint velocity w [N m]: the model's motor behind the real wiring and supply. */
  private motor(i: number, w: number): number {
    if (this.injected.motorDead[i]) return 0;
    const duty = this.motorSign[i]! * this.duty[this.motorChannel[i]!]! * this.injected.supplyScale;
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
    const s0 = this.injected.stalled[0];
    const s1 = n === 2 && this.injected.stalled[1];
    if (!s0 && !s1) {
      computeForwardDynamics(this.model, this.data, q, qd, this.tau, out);
      return;
    }
    // A jammed joint is a constraint qdd_i = 0; the free joint obeys its own row of the dynamics.
    out.fill(0);
    if (n === 1 || (s0 && s1)) return;
    const d = this.data;
    const M = computeMassMatrix(this.model, d, q);
    const V = computeVelocityTerms(this.model, d, q, qd);
    const G = computeGravity(this.model, d, q);
    const f = computeFriction(this.model, d, qd);
    const j = s0 ? 1 : 0;
    out[j] = (this.tau[j]! - V[j]! - G[j]! - f[j]!) / M[j]![j]!;
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
      this.integ.step(this.t, this.q, this.qd, h);
      this.enforceStall();
      this.t += h;
      this.onStep?.(this.t);
    }
    const rest = t - this.t;
    if (rest > 1e-12) {
      this.integ.step(this.t, this.q, this.qd, rest);
      this.enforceStall();
      this.t = t;
      this.onStep?.(this.t);
    }
  }

  private enforceStall(): void {
    for (let i = 0; i < this.joints; i++) if (this.injected.stalled[i]) this.qd[i] = 0;
  }

  /** Encoder counts per board input now: quantized, with noise, offsets and reversal (as a board would read them). */
  counts(out: number[] = new Array<number>(this.joints).fill(0)): number[] {
    for (let i = 0; i < this.joints; i++) {
      const j = this.encoderJoint[i]!;
      const e = this.sensor[j]!;
      const ideal = (e.sign * (this.q[j]! - e.zero) * e.cpr) / (2 * Math.PI);
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

  /** Sets the encoders so that they read zero now (the board's `Z`). */
  zeroEncoders(mask: number): void {
    for (let i = 0; i < this.joints; i++) {
      if (!(mask & (1 << i))) continue;
      const j = this.encoderJoint[i]!;
      const e = this.sensor[j]!;
      const ideal = Math.round((e.sign * (this.q[j]! - e.zero) * e.cpr) / (2 * Math.PI));
      this.injected.encoderOffset[i] = -ideal;
    }
  }
}
