/**
 * Impedance mode (twolink run --mode impedance, issue 23): the arm behaves as a spring and a damper
 * pulled along the plan (a moving equilibrium) or about a held pose, with the model cancelling
 * gravity, friction and the plan's inertia. It plugs into the loop as a ControlLaw, so the loop's
 * guards, ramps, saturation and e-stop are the same as for every other law.
 *
 *   tau = ID_a(q, qd_des, qdd_des) + J^T F                  (endpoint space)
 *   F   = K (x_des - x) + D (v_des - v) + F_barrier, |F| <= maxForceN
 *   D   = zeta (sqrt(Lambda) sqrt(K) + sqrt(K) sqrt(Lambda)), Lambda = (J M_a^-1 J^T)^-1
 *   tau = ID_a(q, qd_des, qdd_des) + K_q (q_des - q) + D_q (qd_des - qd)   (joint space, M_a for Lambda)
 *
 * ID_a is the actuated arm's inverse dynamics (src/model/actuated.ts): gravity at the measured pose,
 * inertia along the plan, and the model's friction at the measured (predicted) velocity: what a push
 * must overcome besides the spring (frictionAtMeasured). The bound counts the motors' back-EMF
 * damping only, so cancelling the model's viscous friction leaves it as it was.
 *
 * Safety, in the order applied:
 * - the stiffness a live change asks for is reached by a first-order filter (rig `impedance.stiffnessFilterS`,
 *   0.2 s: Franka's cartesian_impedance_example_controller filters its stiffness with 0.005 per 1 ms tick);
 * - near the straight elbow (|sin q2| < sin(singularElbowDeg)) the stiffness is scaled by
 *   |sin q2| / sin(singularElbowDeg), down to 10 %: there J loses a direction and Lambda grows without bound;
 * - the stiffness never exceeds what the loop's delay keeps passive at the pose (impedance-math.ts,
 *   passiveStiffnessBound); asking for more is refused before motion (checkImpedance, and at the
 *   law's first step for a pose only known then), and a live change is capped at it;
 * - a workspace box (rig `impedance.workspace`): the equilibrium is kept inside, and a soft barrier
 *   `barrierM` deep pushes the endpoint back, growing to maxForceN at the wall;
 * - a force cap: |F| <= maxForceN (joint space: each joint's torque <= maxForceN times its reach);
 * - a torque-rate limit per joint (default maxTorqueNm per 12 ms, rig.ts says why).
 */
import type { ArmPart } from '../config/parts.js';
import type { RigFile } from '../config/rig.js';
import type { JointLimits } from '../config/load.js';
import {
  computeFriction,
  computeGravity,
  computeInverseDynamics,
  computeMassMatrix,
  createActuatedArmData,
  createActuatedArmModel,
  type ActuatedArmData,
  type ActuatedArmModel,
} from '../model/actuated.js';
import { endpoint, jacobian } from '../model/kinematics.js';
import { asMat2, asPair, J as JOINTS, type Pair, type ReadonlyPair, type TwoLinkParams, type Vec2 } from '../model/types.js';
import {
  boundScratch,
  capNorm,
  designDamping,
  endpointInertia,
  forceFromTorque,
  inertiaScratch,
  jointDamping,
  passiveStiffnessBound,
  passivityTimeS,
  writeStiffnessBound,
  zero2,
  type M2,
} from './impedance-math.js';
import { impedanceSchema } from '../config/rig.js';
import { cableAdvice, runCable } from '../config/cable.js';
import type { ControlLaw, LawResult, LawSample } from './law.js';
import { F } from '../telemetry/tick.js';

export type ImpedanceConfig = RigFile['impedance'];
export type ImpedanceSpace = ImpedanceConfig['space'];

/** What the rig gives impedance mode: the nominal arm, its torque limits and the `impedance` section. */
export type ImpedancePart = ArmPart & { limits: JointLimits[]; impedance?: ImpedanceConfig };

/** What a run asks of impedance mode (the CLI's --space, --stiffness, --damping-ratio over the rig file's defaults). */
export interface ImpedanceSettings {
  space: ImpedanceSpace;
  /** [N/m] at the endpoint, [N m/rad] in joint space. */
  stiffness: number;
  dampingRatio: number;
}

/** The lowest stiffness scale at a straight elbow. */
const SINGULAR_FLOOR = 0.1;
/** Franka's torque-rate limit, 1 N m per 1 ms, on its 12 N m wrist joints: full torque in 12 ms [s]. */
const FULL_TORQUE_S = 0.012;
/**
 * At rest for the force estimate's tare: joint speeds, low-passed over REST_FILTER_S (the velocity
 * estimate's noise alone reaches 0.13 rad/s on the mock's joint 2), below this [rad/s] ...
 */
const REST_SPEED = 0.02;
/** ... for this long [s]. */
const REST_S = 0.1;
/**
 * The tare takes the observer's torque at rest as a share of the model's gravity (what a mass error
 * gives: it scales with gravity from pose to pose) on a joint whose gravity torque there is above this
 * [N m]; below it, as a constant torque.
 */
const GRAVITY_TARE_NM = 0.05;
/** Time constant of the rest test's speed filter and of the force estimate's low-pass [s]. */
const REST_FILTER_S = 0.1;

/** The rig's impedance section, or the schema's defaults. */
export function impedanceConfig(rig: { impedance?: ImpedanceConfig }): ImpedanceConfig {
  return rig.impedance ?? impedanceSchema.parse({});
}

/** The settings from the rig file's defaults, with what the command line gives in place of them. */
export function impedanceSettings(
  rig: { impedance?: ImpedanceConfig },
  given: { space?: ImpedanceSpace; stiffness?: number; dampingRatio?: number } = {},
): ImpedanceSettings {
  const c = impedanceConfig(rig);
  const space = given.space ?? c.space;
  return {
    space,
    stiffness: given.stiffness ?? (space === 'joint' ? c.jointStiffnessNmPerRad : c.stiffnessNPerM),
    dampingRatio: given.dampingRatio ?? c.dampingRatio,
  };
}

/** The unit of a stiffness in this space. */
export const stiffnessUnit = (space: ImpedanceSpace): string => (space === 'joint' ? 'N m/rad' : 'N/m');

/** The stiffness scale near the straight elbow: |sin q2| / sin(limit), between SINGULAR_FLOOR and 1. */
export function singularScale(q2: number, singularElbowDeg: number): number {
  const s = Math.abs(Math.sin(q2)) / Math.sin((singularElbowDeg * Math.PI) / 180);
  return Math.max(SINGULAR_FLOOR, Math.min(1, s));
}

/** The workspace box [m]: the rig file's, or the arm's reach as a square around joint 1. */
export function workspaceBox(arm: TwoLinkParams, c: ImpedanceConfig): { xMin: number; xMax: number; yMin: number; yMax: number } {
  const r = arm.L1 + arm.L2;
  return c.workspace ?? { xMin: -r, xMax: r, yMin: -r, yMax: r };
}

/** What the loop's timing allows: the passivity time and the joints' physical damping. */
export interface PassivityInputs {
  rateHz: number;
  /** Samples from a sample to the one at which its answer applies (cable.ts `answerDelaySamples`). */
  answerDelaySamples: number;
}

/**
 * The passivity inputs of a run: its rate and the answer delay its cable is expected to give
 * (cable.ts cableAdvice: what `twolink run` prints at start-up), known before anything moves.
 */
export function loopPassivity(rig: Parameters<typeof runCable>[0], mock: boolean, rateHz: number): PassivityInputs {
  const c = runCable(rig, mock);
  return { rateHz, answerDelaySamples: cableAdvice(c.kind, c.latencyMs, rateHz).answerDelaySamples };
}

/** A stiffness refused (too stiff for the loop's delay at a pose), with the bound. */
export class ImpedanceError extends Error {
  override readonly name = 'ImpedanceError';
  constructor(
    message: string,
    /** The largest stiffness accepted at the worst pose [N/m or N m/rad]. */
    readonly bound: number,
  ) {
    super(message);
  }
}

/** The sentence of a refusal: the stiffness, the bound, the pose and where the bound comes from. */
function refusalText(s: ImpedanceSettings, asked: number, bound: number, q: ReadonlyPair, p: PassivityInputs, b: ReadonlyPair): string {
  const u = stiffnessUnit(s.space);
  const deg = (v: number): string => ((v * 180) / Math.PI).toFixed(1);
  const tau = passivityTimeS(p.rateHz, p.answerDelaySamples);
  return (
    `stiffness ${asked.toFixed(1)} ${u} is more than the loop keeps passive at alpha = (${deg(q[0])}, ${deg(q[1])}) deg: at most ${bound.toFixed(1)} ${u} there ` +
    `(${p.rateHz} Hz, answers ${p.answerDelaySamples} sample(s) late: T/2 + t_d = ${(tau * 1000).toFixed(2)} ms; joint damping ${b.map((v) => v.toFixed(3)).join(', ')} N m s/rad; ` +
    `b > K (T/2 + t_d), Colgate and Schenkel 1997, Diolaiti et al. 2006): lower --stiffness, or a loop with T/2 + t_d <= ${((tau * bound * 1000) / asked).toFixed(2)} ms (a faster rate, a cable with less delay)`
  );
}

/**
 * Refuses, before motion, a stiffness the loop does not keep passive at any of `poses` (the planned
 * trajectory's, the held pose): throws an ImpedanceError with the bound at the worst pose. The
 * stiffness counted is the one the law uses there (scaled down near the straight elbow).
 */
export function checkImpedance(rig: ImpedancePart, s: ImpedanceSettings, p: PassivityInputs, poses: readonly (readonly number[])[]): void {
  const model = createActuatedArmModel(rig);
  const arm = twoLink(rig);
  const b = asPair(jointDamping(model), 'the joint damping');
  const tau = passivityTimeS(p.rateHz, p.answerDelaySamples);
  const c = impedanceConfig(rig);
  let worst: { ratio: number; q: ReadonlyPair; bound: number; asked: number } | undefined;
  for (const pose of poses) {
    const q = asPair(pose, 'a planned pose');
    const asked = s.stiffness * (s.space === 'endpoint' ? singularScale(q[1], c.singularElbowDeg) : 1);
    const bound = passiveStiffnessBound(arm, b, q[1], tau, s.space);
    if (!worst || asked / bound > worst.ratio) worst = { ratio: asked / bound, q, bound, asked };
  }
  if (worst && worst.ratio > 1) throw new ImpedanceError(refusalText(s, worst.asked, worst.bound, worst.q, p, b), worst.bound);
}

function twoLink(rig: ArmPart): TwoLinkParams {
  if (!('L2' in rig.arm)) throw new RangeError('impedance mode needs a two-link arm');
  return rig.arm;
}

/** A LawSample of the two-link arm: its per-joint arrays as pairs. */
interface PairSample {
  readonly q: ReadonlyPair;
  readonly qd: ReadonlyPair;
  readonly qDesired: ReadonlyPair;
  readonly qdDesired: ReadonlyPair;
  readonly qddDesired: ReadonlyPair;
}

/**
 * True when the loop's sample has two entries in each per-joint array (the loop builds them with one
 * entry per joint, and the law is only built for a two-link arm), so that they are read as pairs.
 */
function isPairSample(s: LawSample): s is LawSample & PairSample {
  return s.q.length === 2 && s.qd.length === 2 && s.qDesired.length === 2 && s.qdDesired.length === 2 && s.qddDesired.length === 2;
}

/** True when the law's output array has two entries (one per joint of a two-link arm). */
const isOutPair = (out: number[]): out is Pair => out.length === 2;

/** A step's success: one value for every tick (the tick allocates nothing). */
const OK: LawResult = Object.freeze({ ok: true });

/** The barrier's push along axis i into out[i], at coordinate v [m] between walls lo and hi: band m [m], stiffness kb [N/m]. */
function barrierPush(out: Vec2, i: 0 | 1, v: number, lo: number, hi: number, m: number, kb: number): void {
  out[i] = v < lo + m ? kb * (lo + m - v) : v > hi - m ? -kb * (v - (hi - m)) : 0;
}

/** t within +-limit. */
const capTorque = (t: number, limit: number): number => Math.max(-limit, Math.min(limit, t));

/** The twin's observer as the law reads it. */
export interface TorqueObserver {
  readonly tauExt: readonly number[];
}

/**
 * The law. `step` writes joint torques; `record` writes the force estimate and the stiffness in
 * force into the tick; `setStiffness` / `scaleStiffness` are the live change (filtered). `step` runs
 * once a tick (500-1000 Hz) and allocates nothing: every vector and matrix it works on is a field
 * below, written in place (tests/impedance-alloc.test.ts).
 */
export class ImpedanceLaw implements ControlLaw {
  readonly settings: ImpedanceSettings;
  readonly config: ImpedanceConfig;
  private readonly arm: TwoLinkParams;
  private readonly model: ActuatedArmModel;
  private readonly data: ActuatedArmData;
  private readonly b: ReadonlyPair;
  private readonly tauS: number;
  private readonly box: { xMin: number; xMax: number; yMin: number; yMax: number };
  /** The barrier's stiffness: maxForceN over its band, capped at the passivity bound at a right-angle elbow [N/m]. */
  private readonly kb: number;
  /** Each joint's lever for the joint-space force cap: L1 + L2, L2 [m]. */
  private readonly reach: ReadonlyPair;
  private readonly rate: ReadonlyPair;
  /** The twin's observer torque [N m] (its tauExt, updated in place), once attached. */
  private observed: ReadonlyPair | undefined;
  /** The loop's tracker velocity [rad/s], for the rest test (law.ts attach); the sample's own without it. */
  private restQd: ReadonlyPair | undefined;
  /** The stiffness asked for, and the filtered one in force before the pose's scaling [N/m or N m/rad]. */
  private target: number;
  private k: number;
  /** The stiffness in force at the last step, after scaling and the passivity cap. */
  kEff = 0;
  /** Steps at which the passivity bound capped the stiffness. */
  capped = 0;
  /** The endpoint force estimate [N] (tared). */
  readonly force: Vec2 = [0, 0];
  /** The observer's joint torque taken as zero force where its joint's gravity is too small to scale [N m]. */
  private readonly bias: Pair = [0, 0];
  /** The observer's torque at the tare as a share of the model's gravity there, per joint. */
  private readonly gravityShare: Pair = [0, 0];
  private readonly lastQ: Pair = [0, 0];
  private tared = false;
  private restS = 0;
  private readonly prevTau: Pair = [0, 0];
  private started = false;
  private readonly J: M2 = zero2();
  private readonly Jd: M2 = zero2();
  private readonly lambda: M2 = zero2();
  private readonly D: M2 = zero2();
  private readonly ff: Pair = [0, 0];
  private readonly x: Vec2 = [0, 0];
  private readonly xd: Vec2 = [0, 0];
  private readonly scratch: Pair = [0, 0];
  /** The barrier's push and the endpoint force [N]. */
  private readonly push: Vec2 = [0, 0];
  private readonly f: Vec2 = [0, 0];
  private readonly inertiaWork = inertiaScratch();
  private readonly sqrtWork: M2 = zero2();
  private readonly boundWork = boundScratch();
  /** Low-passed joint speeds [rad/s] and observer torques [N m]. */
  private readonly speed: Pair = [0, 0];
  private readonly ext: Pair = [0, 0];
  private readonly passivity: PassivityInputs;
  /** The damper's velocity comes from the loop's model-aided estimator at this bandwidth (law.ts). */
  readonly velocityObserverHz: number;

  constructor(rig: ImpedancePart, settings: ImpedanceSettings, passivity: PassivityInputs) {
    this.settings = { ...settings };
    this.config = impedanceConfig(rig);
    this.arm = twoLink(rig);
    this.model = createActuatedArmModel(rig);
    this.data = createActuatedArmData(this.model);
    this.b = asPair(jointDamping(this.model), 'the joint damping');
    this.tauS = passivityTimeS(passivity.rateHz, passivity.answerDelaySamples);
    this.box = workspaceBox(this.arm, this.config);
    this.kb = Math.min(
      this.config.maxForceN / this.config.barrierM,
      passiveStiffnessBound(this.arm, this.b, Math.PI / 2, this.tauS, 'endpoint'),
    );
    this.reach = [this.arm.L1 + this.arm.L2, this.arm.L2];
    this.rate = asPair(
      rig.limits.map((l) => this.config.torqueRateNmPerS ?? l.maxTorque / FULL_TORQUE_S),
      "the rig's joint limits",
    );
    this.target = settings.stiffness;
    this.k = settings.stiffness;
    this.passivity = passivity;
    this.velocityObserverHz = this.config.velocityObserverHz;
  }

  /** The twin whose momentum observer gives the force estimate (the loop calls it once). */
  attach(observer: TorqueObserver, trackerQd?: readonly number[]): void {
    this.observed = asPair(observer.tauExt, "the twin's tauExt");
    this.restQd = trackerQd && asPair(trackerQd, "the loop's tracker qd");
  }

  /**
   * A new trajectory starts (the loop calls this at each `start`): nothing changes. The torque-rate
   * limit goes on from the torque in force (from zero would drop the arm for a moment between two
   * trajectories), and the stiffness filter from where it is (a live change must not jump).
   */
  reset(): void {
    // deliberately empty: see above
  }

  /** The stiffness asked for now (before the filter) [N/m or N m/rad]. */
  get stiffness(): number {
    return this.target;
  }

  /** A live change: the stiffness is reached over about `stiffnessFilterS`. Returns the stiffness asked for. */
  setStiffness(k: number): number {
    // Within the rig file's range for the space (rig.ts impedanceSchema).
    const [lo, hi] = this.settings.space === 'joint' ? [0.01, 1000] : [1, 10_000];
    if (Number.isFinite(k)) this.target = Math.min(hi, Math.max(lo, k));
    return this.target;
  }

  /** A live change by a factor (the dashboard's keys). */
  scaleStiffness(factor: number): number {
    return this.setStiffness(this.target * factor);
  }

  /** Takes the force estimate's zero here (as a force sensor is zeroed before contact). */
  tare(): void {
    if (!this.observed) return;
    // As a share of the model's gravity where it is large enough (a mass error scales gravity), else as a torque.
    const g = asPair(computeGravity(this.model, this.data, this.lastQ));
    for (const j of JOINTS) {
      const big = Math.abs(g[j]) > GRAVITY_TARE_NM;
      this.gravityShare[j] = big ? this.ext[j] / g[j] : 0;
      this.bias[j] = big ? 0 : this.ext[j];
    }
    this.tared = true;
  }

  /** True once the force estimate has its zero. */
  get isTared(): boolean {
    return this.tared;
  }

  step(s: LawSample, periodS: number, out: number[]): LawResult {
    // Not reached (the loop's arrays have one entry per joint): a failure value, as the loop wants, not a throw.
    if (!isPairSample(s) || !isOutPair(out)) return { ok: false, reason: 'impedance: the sample or the output is not of a two-link arm' };
    const q = s.q;
    const c = this.config;
    // The straight elbow is the endpoint spring's trouble only (J loses a direction); a joint spring does not mind.
    const scale = this.settings.space === 'endpoint' ? singularScale(q[1], c.singularElbowDeg) : 1;
    const bound = writeStiffnessBound(this.arm, this.b, q[1], this.tauS, this.settings.space, this.boundWork).bound;
    if (!this.started) {
      // The first step, before any torque: a pose the plan could not know (a hold where the arm is).
      if (this.target * scale > bound)
        return { ok: false, reason: refusalText(this.settings, this.target * scale, bound, q, this.passivity, this.b) };
      this.started = true;
    }
    this.k += (this.target - this.k) * (1 - Math.exp(-periodS / c.stiffnessFilterS));
    let k = this.k * scale;
    if (k > bound) {
      k = bound;
      this.capped++;
    }
    this.kEff = k;
    computeInverseDynamics(this.model, this.data, q, s.qdDesired, s.qddDesired, this.ff);
    this.frictionAtMeasured(s);
    jacobian(this.arm, q, this.J);
    if (this.settings.space === 'endpoint') this.endpointTorque(s, out);
    else this.jointTorque(s, out);
    this.estimateForce(s, periodS);
    for (const j of JOINTS) {
      let t = this.ff[j] + out[j];
      const d = this.rate[j] * periodS;
      if (t > this.prevTau[j] + d) t = this.prevTau[j] + d;
      else if (t < this.prevTau[j] - d) t = this.prevTau[j] - d;
      if (!Number.isFinite(t)) return { ok: false, reason: `impedance: a non-finite torque on joint ${j + 1}` };
      out[j] = t;
      this.prevTau[j] = t;
    }
    return OK;
  }

  /**
   * The model's friction at the measured velocity in place of the plan's: a push moves the arm off the
   * plan, and the plant's friction then resists the motion the spring and damper are meant to shape
   * (on the standard mock at 50 N/m, uncompensated: the half-deflection time 18-24 % over the ideal;
   * compensated: within 3 %). Viscous friction compensated this way does not touch the passivity bound,
   * which counts the motors' back-EMF damping only (impedance-math.ts jointDamping); the Coulomb part
   * is the model's tanh (coulombVelocity), smooth through zero.
   */
  private frictionAtMeasured(s: PairSample): void {
    const fp = asPair(computeFriction(this.model, this.data, s.qdDesired));
    const p0 = fp[0];
    const p1 = fp[1];
    const fm = asPair(computeFriction(this.model, this.data, s.qd));
    this.ff[0] += fm[0] - p0;
    this.ff[1] += fm[1] - p1;
  }

  /** J^T F into `out`: the spring and damper at the endpoint, the workspace barrier, the force cap. */
  private endpointTorque(s: PairSample, out: Pair): void {
    const c = this.config;
    const k = this.kEff;
    const J = this.J;
    const x = endpoint(this.arm, s.q, this.x);
    const xd = endpoint(this.arm, s.qDesired, this.xd);
    const Jd = jacobian(this.arm, s.qDesired, this.Jd);
    const vx = J[0][0] * s.qd[0] + J[0][1] * s.qd[1];
    const vy = J[1][0] * s.qd[0] + J[1][1] * s.qd[1];
    const vdx = Jd[0][0] * s.qdDesired[0] + Jd[0][1] * s.qdDesired[1];
    const vdy = Jd[1][0] * s.qdDesired[0] + Jd[1][1] * s.qdDesired[1];
    const box = this.box;
    const m = c.barrierM;
    // The equilibrium inside the box, clear of the barrier.
    const ex = Math.min(box.xMax - m, Math.max(box.xMin + m, xd[0])) - x[0];
    const ey = Math.min(box.yMax - m, Math.max(box.yMin + m, xd[1])) - x[1];
    endpointInertia(this.model, this.data, s.q, J, this.lambda, this.inertiaWork);
    const D = designDamping(this.lambda, k, k, this.settings.dampingRatio, this.D, this.sqrtWork);
    const push = this.barrier(x);
    const f = this.f;
    f[0] = k * ex + D[0][0] * (vdx - vx) + D[0][1] * (vdy - vy) + push[0];
    f[1] = k * ey + D[1][0] * (vdx - vx) + D[1][1] * (vdy - vy) + push[1];
    capNorm(f, c.maxForceN);
    out[0] = J[0][0] * f[0] + J[1][0] * f[1];
    out[1] = J[0][1] * f[0] + J[1][1] * f[1];
  }

  /**
   * The soft barrier: inside `barrierM` of a wall, a push back that grows linearly to maxForceN at the
   * wall (its stiffness `kb`: maxForceN / barrierM, capped at the passivity bound), and more beyond
   * it. Into `this.push`, which it returns.
   */
  private barrier(x: Readonly<Vec2>): Readonly<Vec2> {
    const box = this.box;
    const m = this.config.barrierM;
    barrierPush(this.push, 0, x[0], box.xMin, box.xMax, m, this.kb);
    barrierPush(this.push, 1, x[1], box.yMin, box.yMax, m, this.kb);
    return this.push;
  }

  /** K_q (q_des - q) + D_q (qd_des - qd) into `out`, each joint's torque capped at maxForceN times its reach. */
  private jointTorque(s: PairSample, out: Pair): void {
    const c = this.config;
    const k = this.kEff;
    const mm = this.massAt(s.q, this.lambda);
    const D = designDamping(mm, k, k, this.settings.dampingRatio, this.D, this.sqrtWork);
    const e0 = s.qDesired[0] - s.q[0];
    const e1 = s.qDesired[1] - s.q[1];
    const w0 = s.qdDesired[0] - s.qd[0];
    const w1 = s.qdDesired[1] - s.qd[1];
    const push = this.barrier(endpoint(this.arm, s.q, this.x));
    const bx = push[0];
    const by = push[1];
    const J = this.J;
    const t0 = k * e0 + D[0][0] * w0 + D[0][1] * w1 + J[0][0] * bx + J[1][0] * by;
    const t1 = k * e1 + D[1][0] * w0 + D[1][1] * w1 + J[0][1] * bx + J[1][1] * by;
    out[0] = capTorque(t0, c.maxForceN * this.reach[0]);
    out[1] = capTorque(t1, c.maxForceN * this.reach[1]);
  }

  private massAt(q: ReadonlyPair, out: M2): M2 {
    const M = asMat2(computeMassMatrix(this.model, this.data, q));
    out[0][0] = M[0][0];
    out[0][1] = M[0][1];
    out[1][0] = M[1][0];
    out[1][1] = M[1][1];
    return out;
  }

  /**
   * F = J^-T (tauExt - bias), tauExt low-passed over REST_FILTER_S (the observer passes the velocity
   * estimate's noise: +-0.4 N at the endpoint unfiltered on the mock); the bias is taken the first time
   * the arm rests with the plan still after the start.
   */
  private estimateForce(s: PairSample, periodS: number): void {
    const tauExt = this.observed;
    if (!tauExt) return;
    const a = 1 - Math.exp(-periodS / REST_FILTER_S);
    for (const j of JOINTS) {
      // The tracker's speed: the sample's (the model-aided estimate) carries the model's error at rest.
      this.speed[j] += a * ((this.restQd ?? s.qd)[j] - this.speed[j]);
      this.ext[j] += a * (tauExt[j] - this.ext[j]);
    }
    const still =
      Math.abs(this.speed[0]) < REST_SPEED && Math.abs(this.speed[1]) < REST_SPEED && s.qdDesired[0] === 0 && s.qdDesired[1] === 0;
    this.restS = still ? this.restS + periodS : 0;
    this.lastQ[0] = s.q[0];
    this.lastQ[1] = s.q[1];
    if (!this.tared && this.restS >= REST_S) this.tare();
    const g = asPair(computeGravity(this.model, this.data, s.q));
    this.scratch[0] = this.ext[0] - this.bias[0] - this.gravityShare[0] * g[0];
    this.scratch[1] = this.ext[1] - this.bias[1] - this.gravityShare[1] * g[1];
    forceFromTorque(this.J, this.scratch, this.force);
  }

  /** The law's columns of the tick: the force estimate and the stiffness in force. */
  record(row: Float64Array): void {
    row[F.fEst0] = this.force[0];
    row[F.fEst1] = this.force[1];
    row[F.stiffness] = this.kEff;
  }
}
