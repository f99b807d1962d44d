/**
 * Float mode (twolink run --mode float, twolink teach): the motors cancel gravity and friction from
 * the identified model so that the arm stays where the hand leaves it and moves under a light touch.
 * A ControlLaw (loop.ts): joint torques per sample; the loop's controller turns them into duty through
 * the motor model, which adds the back-EMF term (duty = (R tau / (kt N eta) + ke N qd) / V,
 * src/model/actuated.ts `motorDuty`), so "duty from tau_g / kt plus back-EMF" is the gravity torque
 * handed to that model.
 *
 * The float torque, per joint, before the cap:
 *   tau = G(q)                                   gravity of the (identified) model
 *       + a (b qd + c tanh(qd / v_a))            friction assist: the model's viscous and Coulomb
 *                                                friction, faded in above the assist speed v_a
 *                                                (none above the speed cap: friction brakes there)
 *       + d c sq(t)  (|qd| < v_a)                stiction dither: a square wave of d x Coulomb
 *       + clamp(-K_s (q - z) - D_s qd, +-B)      virtual stiction (an elasto-plastic element, anchor z):
 *                                                holds against what the model misses up to B, slides
 *                                                (a constant B) when a hand pushes harder
 *       + K_b (zone - dist) - D_v qd_in          barrier inside each soft limit (dist < zone)
 *       + J^T F                                  constraint: a task-space spring normal to a line or
 *                                                a circle (F = -(K e + D v_n) n), or a locked joint
 *                                                (PD to its angle at entry)
 *   |tau| <= torque cap, then
 *   tau - D_v (qd - v_cap)  (|qd| > v_cap)       speed cap by damping injection, on top of the capped
 *                                                torque (nothing outpulls it), full torque limit at
 *                                                25 % over the cap; |tau| <= the joint's torque limit.
 *
 * A constraint is checked before the run (`constraintIssue`: inside the workspace, near the start
 * pose) and again at each entry into float (the endpoint within `CONSTRAINT_NEAR_M` of it, else a
 * fault and no float): its spring never pulls the arm from afar.
 *
 * Entering and leaving float never jumps: the law blends between tracking (the loop's plan, or after
 * leaving float a hold where the arm was let go, feedforward + PID of the same model) and the float
 * torque with a weight ramped over `rampS`. At rest both are the gravity torque, so the blend moves
 * nothing. The e-stop and the faults are the loop's: they zero the motors without calling the law.
 */
import type { ControllerPart } from '../config/parts.js';
import {
  computeGravity,
  computeMassMatrix,
  createActuatedArmData,
  createActuatedArmModel,
  maxMassMatrixDiagonal,
  type ActuatedArmData,
  type ActuatedArmModel,
} from '../model/actuated.js';
import { endpoint, inverseKinematics, jacobian } from '../model/kinematics.js';
import { minJerkProfile, type MinJerk, type TrajectorySample } from '../model/trajectory.js';
import { asMat2, asOutPair, asPair, isTwoLink, type Mat2, type TwoLinkParams, type Vec2 } from '../model/types.js';
import { Controller } from './controller.js';
import type { ControlLaw, LawSample } from './loop.js';
import { F } from '../telemetry/tick.js';

const DEG = Math.PI / 180;

/** Where float mode keeps the endpoint: on a line through two points, or on a circle [m]. */
export type FloatConstraint = { kind: 'line'; from: Vec2; to: Vec2 } | { kind: 'circle'; centre: Vec2; radius: number };

/** Float mode's settings (defaults from the rig: `floatSettings`). Arrays per joint. */
export interface FloatSettings {
  /** Fraction of the model's friction the motors give back while the joint moves, 0..1. */
  frictionAssist: number;
  /** Speed above which the friction assist is (nearly) full and the dither off [rad/s]. */
  assistSpeedRadS: number;
  /** Stiction dither amplitude as a fraction of the model's Coulomb friction, 0..1. */
  ditherFraction: number;
  /** Stiction dither frequency [Hz]. */
  ditherHz: number;
  /** Virtual stiction: the torque a hand must exceed to move the joint [N m]. */
  holdBreakNm: number[];
  /** Virtual stiction's stiffness [N m/rad]. */
  holdStiffness: number[];
  /** Cap on the float torque [N m]. */
  torqueCapNm: number[];
  /** Speed above which damping is injected [rad/s]. */
  speedCapRadS: number[];
  /** Damping injected above the speed cap and in the barrier [N m s/rad]. */
  speedDamping: number[];
  /** Width of the barrier inside each soft limit [rad]. */
  barrierRad: number;
  /** Barrier stiffness [N m/rad]: at the limit it pushes back with barrierRad x this. */
  barrierStiffness: number[];
  /** Time to blend into and out of float [s]. */
  rampS: number;
  /** Float from the start of the run (else the law tracks until `setFloat(true)`, or `floatFromS`). */
  startFloating: boolean;
  /** Float from this board time on [s] (a law in another thread: the bench's poses). */
  floatFromS?: number;
  /** ... and hold where the arm is from this board time on [s]. */
  floatUntilS?: number;
  /** A joint locked at its angle on entry (0-based). */
  lock?: number;
  /** The endpoint kept on a line or a circle. */
  constraint?: FloatConstraint;
  /** The constraint's stiffness normal to it [N/m]. */
  constraintStiffness: number;
  /** The constraint's damping ratio (with the endpoint's inertia normal to it). */
  constraintDampingRatio: number;
}

/**
 * Defaults from the rig's limits: caps at 80 % of the torque limit and half the speed limit (the
 * mock arm's joint 2: 270 deg/s), a barrier 10 deg deep. The speed cap's damping gives the joint's
 * full torque limit at 25 % over the cap (docs/float-teach-replay.md, "Float"), whatever cap is set.
 */
export function floatSettings(rig: Pick<ControllerPart, 'limits'>, over: Partial<FloatSettings> = {}): FloatSettings {
  const lim = rig.limits;
  const zone = over.barrierRad ?? 10 * DEG;
  const speedCap = over.speedCapRadS ?? lim.map((l) => 0.5 * l.maxVel);
  return {
    frictionAssist: 1,
    assistSpeedRadS: 0.05,
    ditherFraction: 0.3,
    ditherHz: 25,
    holdBreakNm: lim.map((l) => 0.03 * l.maxTorque),
    holdStiffness: lim.map((l) => 7 * l.maxTorque),
    torqueCapNm: lim.map((l) => 0.8 * l.maxTorque),
    speedCapRadS: speedCap,
    speedDamping: lim.map((l, i) => l.maxTorque / (0.25 * speedCap[i]!)),
    barrierRad: zone,
    barrierStiffness: lim.map((l) => l.maxTorque / zone),
    rampS: 0.5,
    startFloating: true,
    constraintStiffness: 1000,
    constraintDampingRatio: 1,
    ...over,
  };
}

/**
 * How far ahead the speed cap looks [samples]: the answer of a sample applies ~3 samples later behind a
 * 16U2 adapter at 500 Hz (config/cable.ts), and a hand's push keeps accelerating the joint meanwhile;
 * braking on the velocity that far ahead keeps a pushed joint within 10 % of its cap (tests/float.test.ts).
 */
const SPEED_LEAD_SAMPLES = 4;

/** How near the endpoint must be to a constraint when float begins [m]: its 1000 N/m spring pulls it in at 10 N at most. */
export const CONSTRAINT_NEAR_M = 0.01;

/** Distance [m] of the point p from the constraint (normal to the line, radial to the circle). */
export function constraintDistance(c: FloatConstraint, p: readonly number[]): number {
  if (c.kind === 'circle') return Math.abs(Math.hypot(p[0]! - c.centre[0], p[1]! - c.centre[1]) - c.radius);
  const dx = c.to[0] - c.from[0];
  const dy = c.to[1] - c.from[1];
  return Math.abs((p[0]! - c.from[0]) * dy - (p[1]! - c.from[1]) * dx) / Math.hypot(dx, dy);
}

const mm = (m: number): string => `${(m * 1000).toFixed(0)} mm`;
const xy = (p: readonly number[]): string => `(${p.map((v) => Number(v.toFixed(4))).join(', ')}) m`;

/** True when the endpoint can be at p with both joints within their soft limits (either elbow). */
function reachableWithinLimits(arm: TwoLinkParams, limits: ControllerPart['limits'], p: readonly number[]): boolean {
  for (const elbow of ['down', 'up'] as const) {
    let q: Vec2;
    try {
      q = inverseKinematics(arm, p, elbow);
    } catch {
      return false;
    }
    const inside = (a: number, i: number): boolean =>
      [a, a - 2 * Math.PI, a + 2 * Math.PI].some((x) => x >= limits[i]!.min && x <= limits[i]!.max);
    if (inside(q[0], 0) && inside(q[1], 1)) return true;
  }
  return false;
}

/**
 * Why a float constraint cannot be used on this arm, or undefined: a line's two points (or a circle)
 * must be within the arm's reach (|L1 - L2| .. L1 + L2, so a length typed in millimetres is caught), the
 * segment between the points (or the whole circle) reachable within the soft limits, and, when the
 * start pose `startQ` [rad] is known, the constraint within CONSTRAINT_NEAR_M of the endpoint there.
 */
export function constraintIssue(
  rig: Pick<ControllerPart, 'arm' | 'limits'>,
  c: FloatConstraint,
  startQ?: readonly number[],
): string | undefined {
  if (!isTwoLink(rig.arm)) return 'an endpoint constraint needs a two-link arm';
  const arm = rig.arm;
  const inner = Math.abs(arm.L1 - arm.L2);
  const outer = arm.L1 + arm.L2;
  const reach = `the arm reaches from ${Number(inner.toPrecision(4))} to ${Number(outer.toPrecision(4))} m from joint 1 (the numbers are metres)`;
  const points: Vec2[] = [];
  if (c.kind === 'line') {
    if (Math.hypot(c.to[0] - c.from[0], c.to[1] - c.from[1]) < 1e-3) return "the line's two points are the same (closer than 1 mm)";
    for (const p of [c.from, c.to]) {
      const r = Math.hypot(p[0], p[1]);
      if (r > outer || r < inner) return `the point ${xy(p)} is ${Number(r.toPrecision(4))} m from joint 1, out of reach: ${reach}`;
    }
    for (let k = 0; k <= 100; k++)
      points.push([c.from[0] + ((c.to[0] - c.from[0]) * k) / 100, c.from[1] + ((c.to[1] - c.from[1]) * k) / 100]);
  } else {
    if (!(c.radius >= 1e-3)) return `the radius ${c.radius} m is not a circle (give at least 0.001 m)`;
    const d = Math.hypot(c.centre[0], c.centre[1]);
    if (d + c.radius > outer || Math.abs(d - c.radius) < inner) {
      return `the circle spans ${Number(Math.abs(d - c.radius).toPrecision(4))} to ${Number((d + c.radius).toPrecision(4))} m from joint 1, beyond the reach: ${reach}`;
    }
    for (let k = 0; k < 360; k++)
      points.push([c.centre[0] + c.radius * Math.cos((k * Math.PI) / 180), c.centre[1] + c.radius * Math.sin((k * Math.PI) / 180)]);
  }
  const out = points.find((p) => !reachableWithinLimits(arm, rig.limits, p));
  if (out)
    return `the ${c.kind === 'line' ? 'segment' : 'circle'} passes through ${xy(out)}, which the arm cannot reach within its joint limits`;
  if (startQ) {
    const p = endpoint(arm, startQ);
    const d = constraintDistance(c, p);
    if (d > CONSTRAINT_NEAR_M)
      return `the ${c.kind} passes ${mm(d)} from the endpoint at the start pose ${xy(p)}: float would pull the arm onto it; it must pass within ${mm(CONSTRAINT_NEAR_M)}`;
  }
  return undefined;
}

/** What the law is doing: following the loop's plan, floating, holding where float was left, or going back to where the run began. */
export type FloatPhase = 'plan' | 'float' | 'hold' | 'home';

// Float mode runs on one-joint rigs too: the per-joint arrays (settings, anchors, the samples' q and qd,
// `out`) have `rig.joints` entries, 1 or 2, and are indexed with a `!` in loops to `this.n`. Only the
// endpoint constraint, which needs two links, reads its values as pairs (asPair, Mat2).
export class FloatLaw implements ControlLaw {
  readonly settings: FloatSettings;
  private readonly n: number;
  private readonly model: ActuatedArmModel;
  private readonly data: ActuatedArmData;
  private readonly track: Controller;
  private readonly arm: TwoLinkParams | undefined;
  private readonly rig: ControllerPart;
  /** Blend weight of the float torque, 0..1, and where it is going. */
  private w = 0;
  private target: boolean;
  private floated = false;
  private phase: FloatPhase = 'plan';
  private readonly anchor: number[];
  private readonly lockQ: number[];
  private readonly tauFloat: number[];
  private readonly d: TrajectorySample;
  private readonly hold: TrajectorySample;
  /** The reach of each joint's rotor and links about it, for the stiction's damping [kg m^2]. */
  private readonly inertia: number[];
  private t = 0;
  private dt = 0;
  /** Where the run began [rad] (the first sample after a reset), and the way back there (`home()`). */
  private readonly start: number[];
  private homeFrom: number[] | undefined;
  private homeT0 = 0;
  private homeS = 0;
  private readonly prof: MinJerk = [0, 0, 0, 0];
  /** The locked joint's integral term [N m]. */
  private lockI = 0;
  /** Samples the law has computed (a test counts them across an e-stop). */
  steps = 0;
  /** The joint velocities of the last sample [rad/s], and the acceleration seen from them, low-passed [rad/s^2]: the speed cap's lead. */
  private readonly vPrev: number[];
  private readonly accel: number[];
  /** Why float was refused at entry (the endpoint far from the constraint): a fault, no float. */
  private refused: string | undefined;

  constructor(rig: ControllerPart, settings: FloatSettings, model: ActuatedArmModel = createActuatedArmModel(rig)) {
    this.rig = rig;
    this.settings = settings;
    this.n = rig.joints;
    this.model = model;
    this.data = createActuatedArmData(model);
    this.track = new Controller(rig, 'desired', model);
    this.arm = isTwoLink(rig.arm) ? rig.arm : undefined;
    if (settings.constraint && !this.arm) throw new RangeError('an endpoint constraint needs a two-link arm');
    if (settings.lock !== undefined && !(settings.lock >= 0 && settings.lock < this.n))
      throw new RangeError(`lock: no joint ${settings.lock + 1}`);
    this.target = settings.startFloating;
    const z = (): number[] => new Array<number>(this.n).fill(0);
    this.anchor = z();
    this.lockQ = z();
    this.tauFloat = z();
    this.vPrev = z();
    this.accel = z();
    this.start = [];
    const s = (): TrajectorySample => ({ t: 0, q: z(), qd: z(), qdd: z(), qddd: z() });
    this.d = s();
    this.hold = s();
    this.inertia = maxMassMatrixDiagonal(model);
  }

  /** While the law follows the loop's plan (before the first float), the loop's following guard applies. */
  get followsPlan(): boolean {
    return !this.floated;
  }

  /** Plan, float or hold, and the blend weight of the float torque (0..1). */
  get state(): { phase: FloatPhase; weight: number } {
    return { phase: this.phase, weight: this.w };
  }

  /** The law's column of the tick: the float blend weight (0 held, 1 floating). */
  record(row: Float64Array): void {
    row[F.float] = this.w;
  }

  /** Float (true) or hold where the arm is (false), blended over `rampS`. */
  setFloat(on: boolean): void {
    this.target = on;
  }

  /**
   * Leave float and go back to where the run began (minimum jerk at a quarter of the speed limits,
   * 1 s at least), then hold there: the end of a float run, so that the soft stop lets the arm go
   * where it started (hanging, on the mock) rather than wherever the hand left it.
   */
  home(): void {
    this.target = false;
    this.homeFrom = undefined;
    this.phase = 'home';
  }

  /** True once the way back is done. */
  get atHome(): boolean {
    return this.phase === 'home' && this.homeFrom !== undefined && this.t >= this.homeT0 + this.homeS;
  }

  reset(): void {
    this.refused = undefined;
    this.start.length = 0;
    this.homeFrom = undefined;
    this.track.reset();
    this.w = 0;
    this.t = 0;
    this.floated = false;
    this.phase = 'plan';
    this.target = this.settings.startFloating;
  }

  step(s: LawSample, periodS: number, out: number[]): { ok: true } | { ok: false; reason: string } {
    this.steps++;
    // The time since the last call (a link that delivers samples in bursts answers only the newest):
    // the ramp and the integrals run on it, the sample period at the least, ten at the most.
    const dt = this.t > 0 && s.t > this.t ? Math.min(10 * periodS, Math.max(periodS, s.t - this.t)) : periodS;
    this.t = s.t;
    this.dt = dt;
    const n = this.n;
    if (this.start.length === 0) this.start.push(...s.q);
    this.advance(s, dt);
    if (this.refused) return { ok: false, reason: this.refused };
    if (this.phase === 'home') this.homeRef(s);
    // Tracking: the loop's plan before the first float, else the pose where float was left.
    let ref: TrajectorySample = this.hold;
    if (this.phase === 'plan') {
      ref = this.d;
      for (let i = 0; i < n; i++) {
        ref.q[i] = s.qDesired[i]!;
        ref.qd[i] = s.qdDesired[i]!;
        ref.qdd[i] = s.qddDesired[i]!;
      }
    }
    for (let i = 0; i < n; i++) {
      const a = this.steps > 1 ? (s.qd[i]! - this.vPrev[i]!) / dt : 0;
      this.accel[i] = this.accel[i]! + 0.3 * (a - this.accel[i]!);
      this.vPrev[i] = s.qd[i]!;
    }
    const w = this.w;
    const tr = w < 1 ? this.track.update(ref, ref, s.q, s.qd, dt, 1).out.tauCmd : undefined;
    if (w > 0) this.floatTorque(s.q, s.qd, this.tauFloat);
    for (let i = 0; i < n; i++) out[i] = (tr ? (1 - w) * tr[i]! : 0) + (w > 0 ? w * this.tauFloat[i]! : 0);
    for (let i = 0; i < n; i++) if (!Number.isFinite(out[i]!)) return { ok: false, reason: `float: joint ${i + 1} torque is ${out[i]}` };
    return { ok: true };
  }

  /** The blend weight one period on; entry captures the anchors and the lock, leaving the hold pose. */
  private advance(s: LawSample, dt: number): void {
    const r = this.settings.rampS;
    const step = r > 0 ? dt / r : 1;
    const st = this.settings;
    if (st.floatFromS !== undefined && s.t >= st.floatFromS && !this.floated) this.target = true;
    if (st.floatUntilS !== undefined && s.t >= st.floatUntilS && this.phase === 'float') this.target = false;
    if (this.target) {
      if (this.phase !== 'float') {
        const c = st.constraint;
        if (c && this.arm) {
          const d = constraintDistance(c, endpoint(this.arm, s.q));
          if (d > CONSTRAINT_NEAR_M) {
            this.refused = `float: the endpoint is ${mm(d)} from the ${c.kind} constraint as float begins (at most ${mm(CONSTRAINT_NEAR_M)}): its spring would pull the arm onto it`;
            return;
          }
        }
        // Entering: the stiction anchors, the locked joint and the tracking blended out, where the arm is now.
        for (let i = 0; i < this.n; i++) {
          this.anchor[i] = s.q[i]!;
          this.lockQ[i] = s.q[i]!;
          this.hold.q[i] = s.q[i]!;
        }
        this.lockI = 0;
        this.phase = 'float';
        this.floated = true;
      }
      this.w = Math.min(1, this.w + step);
    } else {
      if (this.phase === 'home' && this.homeFrom === undefined) {
        this.homeFrom = s.q.slice();
        this.homeT0 = s.t;
        this.homeS = 1;
        for (let i = 0; i < this.n; i++)
          this.homeS = Math.max(this.homeS, (1.875 * Math.abs(this.start[i]! - s.q[i]!)) / (0.25 * this.rig.limits[i]!.maxVel));
        this.track.reset();
      } else if (this.phase === 'float') {
        // Leaving: hold where the hand left the arm (a fresh integrator: at rest the feedforward holds it).
        for (let i = 0; i < this.n; i++) this.hold.q[i] = s.q[i]!;
        this.track.reset();
        this.phase = 'hold';
      }
      this.w = Math.max(0, this.w - step);
    }
  }

  /** The way back: minimum jerk from where home() was asked to where the run began, into the tracking reference. */
  private homeRef(s: LawSample): void {
    const from = this.homeFrom!;
    const T = this.homeS;
    const m = minJerkProfile((s.t - this.homeT0) / T, this.prof);
    const p = m[0];
    const v = m[1] / T;
    const a = m[2] / (T * T);
    for (let i = 0; i < this.n; i++) {
      const d = this.start[i]! - from[i]!;
      this.hold.q[i] = from[i]! + d * p;
      this.hold.qd[i] = d * v;
      this.hold.qdd[i] = d * a;
    }
  }

  /** The float torque at (q, qd) into `out` (see the top), capped. */
  floatTorque(q: readonly number[], qd: readonly number[], out: number[]): number[] {
    const st = this.settings;
    const m = this.model;
    const g = computeGravity(m, this.data, q);
    const va = st.assistSpeedRadS;
    const sq = Math.floor(2 * this.t * st.ditherHz) % 2 === 0 ? 1 : -1;
    for (let i = 0; i < this.n; i++) {
      const v = qd[i]!;
      const b = m.viscous[i]!;
      const c = m.coulomb[i]!;
      // Above the speed cap the law gives back no friction: the arm's own friction brakes with the cap's damping.
      const assist = Math.abs(v) > st.speedCapRadS[i]! ? 0 : st.frictionAssist;
      let tau = g[i]! + assist * (b * v + c * (va > 0 ? Math.tanh(v / va) : Math.sign(v)));
      if (Math.abs(v) < va) tau += st.ditherFraction * c * sq * (1 - Math.abs(v) / va);
      tau += this.stiction(i, q[i]!, v);
      tau += this.barrier(i, q[i]!, v);
      out[i] = tau;
    }
    if (st.lock !== undefined) {
      const j = st.lock;
      const pid = this.rig.control.pid;
      const e = this.lockQ[j]! - q[j]!;
      // PID on the locked joint (the rig's gains; the integral clamped to its iLimitNm)
      const lim = pid.iLimitNm[j]!;
      this.lockI = Math.max(-lim, Math.min(lim, this.lockI + pid.ki[j]! * e * this.dt));
      out[j] = g[j]! + pid.kp[j]! * e + this.lockI - pid.kd[j]! * qd[j]!;
    }
    if (st.constraint && this.arm) this.constraintTorque(st.constraint, q, qd, out);
    // The speed cap comes last, on the capped torque: no other term (a constraint's spring far from
    // its line, the barrier) can outpull it, and at 25 % over the cap it brakes with the full limit.
    for (let i = 0; i < this.n; i++) {
      const cap = st.torqueCapNm[i]!;
      const tau = Math.max(-cap, Math.min(cap, out[i]!)) + this.speedCap(i, qd[i]!);
      const lim = this.rig.limits[i]!.maxTorque;
      out[i] = Math.max(-lim, Math.min(lim, tau));
    }
    return out;
  }

  /** The elasto-plastic stiction element of joint i: holds up to B, then its anchor slides along. */
  private stiction(i: number, q: number, v: number): number {
    const st = this.settings;
    const B = st.holdBreakNm[i]!;
    const K = st.holdStiffness[i]!;
    if (!(B > 0 && K > 0)) return 0;
    const dev = q - this.anchor[i]!;
    if (Math.abs(K * dev) > B) this.anchor[i] = q - (Math.sign(dev) * B) / K;
    const D = 2 * 0.7 * Math.sqrt(K * this.inertia[i]!);
    const tau = -K * (q - this.anchor[i]!) - D * v;
    return Math.max(-B, Math.min(B, tau));
  }

  /** Damping injected above the speed cap [N m]. */
  private speedCap(i: number, v: number): number {
    const cap = this.settings.speedCapRadS[i]!;
    // Led by the acceleration over the next SPEED_LEAD_SAMPLES: the brake starts as the joint is about to pass the cap.
    const lead = v + this.accel[i]! * SPEED_LEAD_SAMPLES * this.dt;
    const over = Math.max(Math.abs(v), Math.sign(v) === Math.sign(lead) ? Math.abs(lead) : 0) - cap;
    return over > 0 ? -Math.sign(v) * this.settings.speedDamping[i]! * over : 0;
  }

  /** The barrier inside the soft limits: a spring from `barrierRad` inside the limit, damping toward it [N m]. */
  private barrier(i: number, q: number, v: number): number {
    const st = this.settings;
    const lim = this.rig.limits[i]!;
    const zone = st.barrierRad;
    const k = st.barrierStiffness[i]!;
    const dLo = q - lim.min;
    const dHi = lim.max - q;
    let tau = 0;
    if (dLo < zone) tau += k * (zone - dLo) - (v < 0 ? st.speedDamping[i]! * v : 0);
    if (dHi < zone) tau -= k * (zone - dHi) + (v > 0 ? st.speedDamping[i]! * v : 0);
    return tau;
  }

  /** Adds J^T F: a spring-damper normal to the constraint at the endpoint (two links). */
  private constraintTorque(c: FloatConstraint, q: readonly number[], qd: readonly number[], out: number[]): void {
    const arm = this.arm!;
    const p = endpoint(arm, q);
    const J = jacobian(arm, q);
    const v = asPair(qd, 'float: the joint velocities');
    const vx = J[0][0] * v[0] + J[0][1] * v[1];
    const vy = J[1][0] * v[0] + J[1][1] * v[1];
    let nx: number;
    let ny: number;
    let e: number;
    if (c.kind === 'line') {
      const dx = c.to[0] - c.from[0];
      const dy = c.to[1] - c.from[1];
      const len = Math.hypot(dx, dy);
      nx = -dy / len;
      ny = dx / len;
      e = (p[0] - c.from[0]) * nx + (p[1] - c.from[1]) * ny;
    } else {
      const rx = p[0] - c.centre[0];
      const ry = p[1] - c.centre[1];
      const rho = Math.hypot(rx, ry) || 1e-9;
      nx = rx / rho;
      ny = ry / rho;
      e = rho - c.radius;
    }
    const K = this.settings.constraintStiffness;
    const D = 2 * this.settings.constraintDampingRatio * Math.sqrt(K * this.normalMass(q, J, nx, ny));
    const f = -(K * e + D * (vx * nx + vy * ny));
    const tau = asOutPair(out, 'float: the joint torques');
    tau[0] += (J[0][0] * nx + J[1][0] * ny) * f;
    tau[1] += (J[0][1] * nx + J[1][1] * ny) * f;
  }

  /** The endpoint's inertia along (nx, ny): 1 / (n^T J M^-1 J^T n) [kg]. */
  private normalMass(q: readonly number[], J: Mat2, nx: number, ny: number): number {
    const M = asMat2(computeMassMatrix(this.model, this.data, q), 'float: the mass matrix');
    const a = M[0][0];
    const b = M[0][1];
    const d = M[1][1];
    const det = a * d - b * b;
    // u = J^T n; n^T J M^-1 J^T n = u^T M^-1 u
    const u0 = J[0][0] * nx + J[1][0] * ny;
    const u1 = J[0][1] * nx + J[1][1] * ny;
    const s = (d * u0 * u0 - 2 * b * u0 * u1 + a * u1 * u1) / det;
    return s > 1e-9 ? 1 / s : 1e9;
  }
}
