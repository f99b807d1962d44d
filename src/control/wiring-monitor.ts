/**
 * Wiring diagnosis while the arm runs: is the arm moving as the model says the applied duties should
 * move it, or as they would if a motor (or encoder) were reversed, or the two motors (or encoders)
 * swapped? Each sample, the model's forward dynamics under the applied duties gives the expected
 * joint accelerations, and again under the duties as each wiring mistake would deliver them; the
 * measured acceleration (from the velocity estimate) is compared with each. Gravity, Coulomb and
 * viscous friction and the motors' back-EMF are in every prediction, so they are not mistaken for a
 * wiring error; a mistake is concluded only on clear evidence: the predictions must differ a lot
 * (the commands are large enough to tell them apart), the measurement must fit a mistake several
 * times better than the correct wiring, and keep doing so for a while.
 *
 * A reversed encoder looks to the loop like a reversed motor (the joint runs away from its command),
 * and swapped encoders like swapped motors: the message names both, and the fix for each. Some
 * mistakes make nearly the same motion under some commands (both motors reversed and the motors
 * swapped, when the two duties are about equal and opposite), and the model's errors (unmodelled
 * friction at speed) can favour the wrong one for a while: then the message names the likelier and
 * the other.
 *
 * A joint in trouble is not a wiring mistake, and the monitor weighs it as another hypothesis: a dead
 * motor (the joint moves as the model says it would with its duty at zero: under gravity and the
 * other joint's coupling alone, whatever the duty, where a reversed motor gives the opposite
 * acceleration) and a jam (the joint does not accelerate at all, whatever the torque, and the other
 * joint moves as if it were fixed). When one of those fits best, the monitor gives no wiring verdict;
 * `trouble(joint)` names it for the stop another guard makes (the following-error guard).
 *
 * Usage (the loop's safety step, every sample):
 *   const monitor = new WiringMonitor(model, { encoders: rig.encoders });
 *   const fault = monitor.update(dt, dutyInEffect, q, qd);   // undefined, or { joint, kind, message }
 *   // when another guard stops the arm first: monitor.suspect()?.message, for that stop's message
 * Measured on the mock (virtual time, seed reach, the original rig file): the verdict comes 0.13-0.24 s
 * after the motion starts, before the limit guard stops the runaway (0.38-0.5 s).
 *
 * Pure and allocation-free after construction (a verdict's message is built once, when it is given).
 */
import {
  computeActuatorTorques,
  computeForwardDynamics,
  computeForwardDynamicsUnderDuty,
  computeGravity,
  computeMassMatrix,
  computeVelocityTerms,
  createActuatedArmData,
  motorTorque,
  type ActuatedArmData,
  type ActuatedArmModel,
} from '../model/actuated.js';
import { asMat2, asOutPair, asPair, type Joint } from '../model/types.js';
import type { JointTrouble } from './stop.js';

/** A wiring mistake the monitor concluded. */
export interface WiringFault {
  /** The joint (0-based) the message is about first. */
  joint: number;
  /** `reversed`: joint(s) move against their command; `swapped`: each joint follows the other's command. */
  kind: 'reversed' | 'swapped' | 'swapped-reversed';
  /** One line for people: what is wrong and which wire to swap. */
  message: string;
}

export interface WiringMonitorOptions {
  /**
   * The rig file's encoders (zero [rad], counts per revolution), to predict what a reversed or
   * swapped encoder makes the loop measure. @default zero 0, equal counts
   */
  encoders: readonly { zero: number; countsPerRev: number }[] | undefined;
  /** Time constant of the evidence [s]: how long a pattern must hold to count. @default 0.05 */
  evidenceS: number;
  /** Low-pass of the measured and predicted accelerations [Hz]. @default 10 */
  filterHz: number;
  /**
   * Root-mean-square difference between the correct wiring's prediction and a mistake's, below which
   * the samples cannot tell them apart [rad/s^2]. @default 15
   */
  minContrast: number;
  /** A mistake must fit this many times better (mean squared error) than the correct wiring. @default 25 */
  ratio: number;
  /** ... and the correct wiring must miss by at least this much, root mean square [rad/s^2]. @default 40 */
  minError: number;
  /** ... and it must fit this many times better (mean squared error) than any other mistake (model errors of 10-20 % make some mistakes look alike for a while). @default 4 */
  distinct: number;
  /** ... for this long without a break [s]. @default 0.03 */
  holdS: number;
}

const DEFAULTS: WiringMonitorOptions = {
  encoders: undefined,
  evidenceS: 0.05,
  filterHz: 10,
  minContrast: 15,
  ratio: 25,
  minError: 40,
  distinct: 4,
  holdS: 0.03,
};

/** The hypotheses: index 0 is the correct wiring. */
interface Hypothesis {
  /** The motors are swapped: joint i's motor gets the other joint's duty. */
  swap: boolean;
  /** Bit i: joint i's motor turns the other way (its duty arrives with the opposite sign). */
  flip: number;
  /** The encoders are swapped: the loop's joint i reads the other joint's encoder. */
  encSwap: boolean;
  /** Bit i: joint i's encoder counts backwards. */
  encFlip: number;
  /** Not wiring: joint i's motor gives no torque (`dead-motor`), or joint i does not move (`jammed`). */
  trouble?: { kind: 'dead-motor' | 'jammed'; joint: number };
}

// Most index `!`s here are honest: the joints' arrays have `model.joints` entries (1 or 2: a one-joint rig
// has its wiring checked too), and the per-hypothesis arrays (`pred`, `err`, `fitS`, ...) one entry per
// hypothesis in `hyp` (5 for one joint, 16 for two), indexed in loops to their length. The two-joint
// cases (swapped encoders, a jam's other joint) read their values as pairs.
export class WiringMonitor {
  private readonly o: WiringMonitorOptions;
  private readonly n: number;
  private readonly hyp: Hypothesis[];
  private readonly data: ActuatedArmData;
  /** Filtered prediction per hypothesis [rad/s^2]. */
  private readonly pred: number[][];
  /** Scratch: the duties as hypothesis h delivers them, and its raw prediction. */
  private readonly duty: number[];
  private readonly raw: number[];
  /** Filtered measured acceleration [rad/s^2]. */
  private readonly acc: number[];
  /** The previous angles [rad], the velocity estimated from the angles [rad/s], and the first filter stage of each prediction. */
  private readonly qPrev: number[];
  private readonly vel: number[];
  /** Per joint: how long it has stayed within `band` of `anchor` [s], the band [rad] (a few counts), the anchor [rad]. */
  private readonly stillS: number[];
  /** Per hypothesis: how long it has explained the motion without a break (`explains`) [s]. */
  private readonly fitS: number[];
  private readonly band: number[];
  private readonly anchor: number[];
  private readonly pred1: number[][];
  /** Exponentially weighted mean squared error of each hypothesis, and its contrast with hypothesis 0. */
  private readonly err: number[];
  private readonly contrast: number[];
  /** Per hypothesis: its family (what to fix). */
  private readonly family: number[];
  /** Encoder zeros [rad], and the counts ratio of encoder 2 over encoder 1. */
  private readonly zero: number[];
  private readonly scale: number;
  /** Scratch: the true state under an encoder hypothesis. */
  private readonly qt: number[];
  private readonly qdt: number[];
  /** The duties of the last sample (-1..1), for `trouble`. */
  private readonly lastDuty: number[];
  private started = false;
  private samples = 0;
  private heldS = 0;
  private leader = -1;
  /** The last ranking: the best hypothesis, and its rival of another family (-1: none). */
  private best = 0;
  private rival = -1;

  constructor(
    private readonly model: ActuatedArmModel,
    opts: Partial<WiringMonitorOptions> = {},
  ) {
    this.o = { ...DEFAULTS, ...opts };
    this.n = model.joints;
    this.hyp = [];
    const none = { swap: false, flip: 0, encSwap: false, encFlip: 0 };
    for (const swap of this.n === 2 ? [false, true] : [false])
      for (let flip = 0; flip < 1 << this.n; flip++) this.hyp.push({ ...none, swap, flip });
    for (let encFlip = 1; encFlip < 1 << this.n; encFlip++) this.hyp.push({ ...none, encFlip });
    if (this.n === 2) this.hyp.push({ ...none, encSwap: true });
    for (const kind of ['dead-motor', 'jammed'] as const)
      for (let joint = 0; joint < this.n; joint++) this.hyp.push({ ...none, trouble: { kind, joint } });
    // Mistakes with the same fix are one family: a reversed motor and a reversed encoder of the same joint
    // look alike to the loop. Each joint trouble is a family of its own (above the wiring families' bits).
    this.family = this.hyp.map((h, k) => (h.trouble ? 1000 + k : (h.swap || h.encSwap ? 1 << this.n : 0) | h.flip | h.encFlip));
    const enc = this.o.encoders;
    this.zero = [...Array(this.n).keys()].map((i) => enc?.[i]?.zero ?? 0);
    // Measured over true, for swapped encoders: input 1 reads joint 2 with joint 1's counts per revolution.
    const encPair = this.n === 2 && enc ? asPair(enc, "the rig's encoders") : undefined;
    this.scale = encPair ? encPair[1].countsPerRev / encPair[0].countsPerRev : 1;
    this.qt = new Array<number>(this.n).fill(0);
    this.qdt = new Array<number>(this.n).fill(0);
    this.lastDuty = new Array<number>(this.n).fill(0);
    this.data = createActuatedArmData(model);
    this.pred = this.hyp.map(() => new Array<number>(this.n).fill(0));
    this.duty = new Array<number>(this.n).fill(0);
    this.raw = new Array<number>(this.n).fill(0);
    this.acc = new Array<number>(this.n).fill(0);
    this.qPrev = new Array<number>(this.n).fill(0);
    this.vel = new Array<number>(this.n).fill(0);
    this.stillS = new Array<number>(this.n).fill(0);
    this.fitS = this.hyp.map(() => 0);
    this.anchor = new Array<number>(this.n).fill(0);
    this.band = [...Array(this.n).keys()].map((i) => Math.max(JAM_BAND, (JAM_COUNTS * 2 * Math.PI) / (enc?.[i]?.countsPerRev ?? 2048)));
    this.pred1 = this.hyp.map(() => new Array<number>(this.n).fill(0));
    this.err = this.hyp.map(() => 0);
    this.contrast = this.hyp.map(() => 0);
  }

  /** Forgets everything (after a stop, a zeroing, a pause). */
  reset(): void {
    this.started = false;
    this.samples = 0;
    this.heldS = 0;
    this.leader = -1;
    this.acc.fill(0);
    this.stillS.fill(0);
    this.fitS.fill(0);
    this.err.fill(0);
    this.contrast.fill(0);
    for (const p of this.pred) p.fill(0);
    for (const p of this.pred1) p.fill(0);
  }

  /**
   * One sample: `dt` [s] since the last, the duties in effect between the last sample and this one
   * (-1..1 per joint: on the line protocol the answer to the sample before the last, which the board
   * applied at the last), and the measured angles [rad] and velocities [rad/s] (the velocities feed
   * the model's back-EMF and friction; the acceleration is taken from the angles). Returns the likely
   * mistake once the correct wiring is clearly out, for `holdS`.
   */
  update(dt: number, duty: readonly number[], q: readonly number[], qd: readonly number[]): WiringFault | undefined {
    const n = this.n;
    if (!(dt > 0) || !Number.isFinite(dt)) return undefined;
    for (let i = 0; i < n; i++) if (!Number.isFinite(duty[i]!) || !Number.isFinite(q[i]!) || !Number.isFinite(qd[i]!)) return undefined;
    if (!this.started) {
      for (let i = 0; i < n; i++) {
        this.qPrev[i] = q[i]!;
        this.vel[i] = qd[i]!;
        this.anchor[i] = q[i]!;
        this.stillS[i] = 0;
      }
      this.started = true;
      return undefined;
    }
    // The measured acceleration from the angles themselves (the loop's velocity estimate leans on the
    // plan, which a miswired arm does not follow): velocity low-passed at VELOCITY_HZ, its derivative
    // at filterHz. The predictions go through the same two filters, so that the lags match.
    const kv = 1 - Math.exp(-2 * Math.PI * VELOCITY_HZ * dt);
    const k = 1 - Math.exp(-2 * Math.PI * this.o.filterHz * dt);
    const w = 1 - Math.exp(-dt / this.o.evidenceS);
    for (let i = 0; i < n; i++) {
      const v = this.vel[i]! + kv * ((q[i]! - this.qPrev[i]!) / dt - this.vel[i]!);
      this.acc[i]! += k * ((v - this.vel[i]!) / dt - this.acc[i]!);
      this.vel[i] = v;
      if (Math.abs(q[i]! - this.anchor[i]!) > this.band[i]!) {
        this.anchor[i] = q[i]!;
        this.stillS[i] = 0;
      } else this.stillS[i]! += dt;
      this.qPrev[i] = q[i]!;
      this.lastDuty[i] = duty[i]!;
    }
    for (let h = 0; h < this.hyp.length; h++) {
      this.predict(this.hyp[h]!, duty, q, qd);
      const p = this.pred[h]!;
      const p1 = this.pred1[h]!;
      let e2 = 0;
      let c2 = 0;
      for (let i = 0; i < n; i++) {
        p1[i]! += kv * (this.raw[i]! - p1[i]!);
        p[i]! += k * (p1[i]! - p[i]!);
        e2 += (this.acc[i]! - p[i]!) ** 2;
        c2 += (p[i]! - this.pred[0]![i]!) ** 2;
      }
      this.err[h]! += w * (e2 - this.err[h]!);
      this.contrast[h]! += w * (c2 - this.contrast[h]!);
    }
    for (let h = 1; h < this.hyp.length; h++) this.fitS[h] = this.explains(h) ? this.fitS[h]! + dt : 0;
    this.samples++;
    return this.judge(dt);
  }

  /** The acceleration [rad/s^2] the loop would measure if the arm were wired as `h` says, into `raw`. */
  private predict(h: Hypothesis, duty: readonly number[], q: readonly number[], qd: readonly number[]): void {
    const n = this.n;
    if (h.trouble) {
      this.predictTrouble(h.trouble, duty, q, qd);
      return;
    }
    for (let i = 0; i < n; i++) {
      const src = h.swap ? n - 1 - i : i;
      this.duty[i] = h.flip & (1 << i) ? -duty[src]! : duty[src]!;
    }
    if (!h.encSwap && h.encFlip === 0) {
      computeForwardDynamicsUnderDuty(this.model, this.data, q, qd, this.duty, this.raw);
      return;
    }
    // The true state from the measured one: a reversed encoder reflects the angle about its zero; swapped
    // encoders exchange the joints, each read with the other's counts per revolution.
    const z = this.zero;
    if (h.encSwap) {
      // (only a two-joint arm has this hypothesis)
      const zp = asPair(z);
      const qp = asPair(q);
      const qdp = asPair(qd);
      this.qt[0] = zp[0] + (qp[1] - zp[1]) / this.scale;
      this.qt[1] = zp[1] + (qp[0] - zp[0]) * this.scale;
      this.qdt[0] = qdp[1] / this.scale;
      this.qdt[1] = qdp[0] * this.scale;
    } else {
      for (let i = 0; i < n; i++) {
        const s = h.encFlip & (1 << i) ? -1 : 1;
        this.qt[i] = z[i]! + s * (q[i]! - z[i]!);
        this.qdt[i] = s * qd[i]!;
      }
    }
    computeForwardDynamicsUnderDuty(this.model, this.data, this.qt, this.qdt, this.duty, this.raw);
    if (h.encSwap) {
      const raw = asOutPair(this.raw);
      const a0 = raw[0];
      raw[0] = raw[1] * this.scale;
      raw[1] = a0 / this.scale;
    } else {
      for (let i = 0; i < n; i++) if (h.encFlip & (1 << i)) this.raw[i] = -this.raw[i]!;
    }
  }

  /**
   * A joint in trouble, into `raw`: a dead motor is the arm under the other joints' motor torques alone;
   * a jammed joint does not accelerate, and the other joint obeys its own row of the dynamics with the
   * jammed one fixed (as the mock's plant models a jam).
   */
  private predictTrouble(
    t: NonNullable<Hypothesis['trouble']>,
    duty: readonly number[],
    q: readonly number[],
    qd: readonly number[],
  ): void {
    if (t.kind === 'dead-motor') {
      // No current at all (a broken wire): no torque, and no back-EMF braking either (a duty of zero brakes).
      for (let i = 0; i < this.n; i++) this.duty[i] = i === t.joint ? 0 : motorTorque(this.model, i, duty[i]!, qd[i]!);
      computeForwardDynamics(this.model, this.data, q, qd, this.duty, this.raw);
      return;
    }
    for (let i = 0; i < this.n; i++) this.duty[i] = duty[i]!;
    this.raw.fill(0);
    if (this.n === 1) return;
    // Two joints: j is the one that is not jammed.
    const j: Joint = t.joint === 0 ? 1 : 0;
    const tau = asPair(computeActuatorTorques(this.model, this.data, qd, this.duty));
    const V = asPair(computeVelocityTerms(this.model, this.data, q, qd));
    const G = asPair(computeGravity(this.model, this.data, q));
    const M = asMat2(computeMassMatrix(this.model, this.data, q));
    this.raw[j] = (tau[j] - V[j] - G[j]) / M[j][j];
  }

  /**
   * The hypothesis with the smallest error, and the best one of another family that still explains the
   * motion about as well (-1: none): it fits nearly as well, or it predicts nearly the same motion (the
   * commands happen to make the two coincide, and the model is not exact) without fitting much worse.
   */
  private ranks(): void {
    let best = 0;
    for (let h = 1; h < this.hyp.length; h++) if (this.err[h]! < this.err[best]!) best = h;
    let rival = -1;
    for (let h = 1; h < this.hyp.length; h++) {
      if (this.family[h] === this.family[best] || (rival >= 0 && this.err[h]! >= this.err[rival]!)) continue;
      if (this.err[h]! < this.o.distinct * this.err[best]! || (this.err[h]! < this.o.ratio * this.err[best]! && this.alike(best, h)))
        rival = h;
    }
    this.best = best;
    this.rival = rival;
  }

  /**
   * Hypothesis h explains the motion: it fits clearly better than the correct arm, and within minError
   * (the correct arm's misfit when it is clearly wrong; delayed or stale measurements fit none well).
   */
  private explains(h: number): boolean {
    return this.err[h]! * this.o.distinct < this.err[0]! && this.err[h]! < this.o.minError ** 2;
  }

  /** Hypotheses a and b predict nearly the same motion now. */
  private alike(a: number, b: number): boolean {
    const pa = this.pred[a]!;
    const pb = this.pred[b]!;
    let d2 = 0;
    let m2 = 0;
    for (let i = 0; i < this.n; i++) {
      d2 += (pa[i]! - pb[i]!) ** 2;
      m2 += pa[i]! ** 2 + pb[i]! ** 2;
    }
    return d2 < LIKENESS ** 2 * 0.5 * m2;
  }

  /** The correct wiring is clearly out: `h` fits far better, and the samples could tell them apart. */
  private rejects(h: number): boolean {
    const o = this.o;
    return (
      h !== 0 &&
      Math.sqrt(this.contrast[h]!) >= o.minContrast &&
      this.err[0]! >= o.ratio * this.err[h]! &&
      Math.sqrt(this.err[0]!) >= o.minError
    );
  }

  private judge(dt: number): WiringFault | undefined {
    // Let the filters fill before judging.
    if (this.samples * dt < this.o.evidenceS) return undefined;
    this.ranks();
    const best = this.best;
    const clear = this.rejects(best);
    if (!clear || this.family[best] !== this.leader) {
      this.leader = clear ? this.family[best]! : -1;
      this.heldS = 0;
      if (!clear) return undefined;
    }
    this.heldS += dt;
    return this.heldS >= this.o.holdS ? this.suspect() : undefined;
  }

  /**
   * What the motion says is wrong with `joint`, for the message of a stop another guard made (the
   * following error), or nothing when the evidence is not clear. A joint that turns is never jammed:
   * a dead motor if that fits, `back-driven` when it turns against its motor and the other joint's
   * motion pushes it so (`backDriven`), else nothing (gravity, a load, a weak driver). For a joint that
   * does not turn, in order: a jam when no acceleration
   * at all fits the joint clearly better than a dead motor's and the model's; then, when the joint has
   * stood still for JAM_HOLD_S while driven (the evidence about accelerations lags a fresh jam by
   * `evidenceS`), a jam if a dead motor would have let it fall, else `stuck` (a dead motor that hangs
   * still and a jam look the same); a dead motor when the arm moves as it would with that motor's
   * torque gone, clearly better than as the model says and better than any wiring mistake. A
   * hypothesis must explain the motion (`explains`) for TROUBLE_HOLD_S without a break.
   */
  trouble(joint: number): { cause?: JointTrouble } {
    const o = this.o;
    const dead = this.hyp.findIndex((h) => h.trouble?.kind === 'dead-motor' && h.trouble.joint === joint);
    const jam = this.hyp.findIndex((h) => h.trouble?.kind === 'jammed' && h.trouble.joint === joint);
    if (dead < 0 || jam < 0 || !this.started) return {};
    // A hypothesis that explains the motion, and has for TROUBLE_HOLD_S without a break.
    const fits = (h: number): boolean => this.fitS[h]! >= TROUBLE_HOLD_S;
    // A joint that turns (it left its band within JAM_HOLD_S, faster than JAM_SPEED: encoder flicker at a
    // jam gives a noisy velocity inside the band) is not jammed, whatever its acceleration: its motor is
    // dead, or it is overpowered. By the other
    // joint's motion (its inertia and Coriolis torque on this joint against this joint's motor), it is
    // back-driven; by gravity or a load, the cause is not named.
    const turning = this.stillS[joint]! < JAM_HOLD_S && Math.abs(this.vel[joint]!) > JAM_SPEED;
    const wiring = Math.min(...this.err.filter((_, h) => h > 0 && !this.hyp[h]!.trouble));
    const deadMotor = fits(dead) && this.err[dead]! < wiring;
    if (turning) return deadMotor ? { cause: 'dead-motor' } : this.backDriven(joint) ? { cause: 'back-driven' } : {};
    if (fits(jam) && this.err[jam]! * o.distinct < this.err[dead]!) return { cause: 'jammed' };
    // Standing still while driven: a jam if a dead motor would have let it fall, else either.
    if (this.stillS[joint]! >= JAM_HOLD_S) return { cause: Math.abs(this.pred[dead]![joint]!) >= JAM_ACCEL ? 'jammed' : 'stuck' };
    return deadMotor ? { cause: 'dead-motor' } : {};
  }

  /**
   * Joint `joint` turns against its own motor's torque, and the other joint's motion pushes it so: the
   * coupling torque on it, -(M_ji qdd_i + V_j) from the other joint's measured acceleration and the
   * velocity (Coriolis, centrifugal) terms, opposes its motor's torque with at least BACKDRIVE_SHARE of
   * it, and more than gravity does. Two joints only.
   */
  private backDriven(joint: number): boolean {
    if (this.n !== 2) return false;
    const j: Joint = joint === 0 ? 0 : 1;
    const i: Joint = j === 0 ? 1 : 0;
    const tau = asPair(computeActuatorTorques(this.model, this.data, this.vel, this.lastDuty))[j];
    if (!(this.vel[j]! * tau < 0)) return false;
    const M = asMat2(computeMassMatrix(this.model, this.data, this.qPrev));
    const V = asPair(computeVelocityTerms(this.model, this.data, this.qPrev, this.vel));
    const G = asPair(computeGravity(this.model, this.data, this.qPrev));
    const coupling = -(M[j][i] * this.acc[i]! + V[j]); // [N m] on joint j, from the other joint's motion
    const gravity = -G[j]; // [N m]
    const against = (x: number): number => Math.max(0, -Math.sign(tau) * x);
    // The coupling is of the motor's order (a push or a load the model does not know is not the other
    // joint's doing: the coupling is then small beside the motor), and the larger part against it. The
    // motor's torque here includes its back-EMF, which grows as the joint is pushed back: a joint carried
    // back by momentum once the coupling has passed its peak is still the other joint's doing.
    return against(coupling) >= BACKDRIVE_SHARE * Math.abs(tau) && against(coupling) >= against(gravity);
  }

  /**
   * The likely mistake now, or undefined while the correct wiring explains the motion. When another
   * mistake explains it about as well (a rival that fits nearly as well, or predicts nearly the same
   * motion), the message names both, the better first. For the loop's own verdict (`update`) and for
   * the message of a stop that another guard made first (a joint past its limit, too fast).
   */
  suspect(): WiringFault | undefined {
    this.ranks();
    const { best, rival } = this;
    if (!this.rejects(best) || this.hyp[best]!.trouble) return undefined;
    const first = describe(this.hyp[best]!, this.n);
    if (rival < 0 || !this.rejects(rival)) return first;
    // A joint trouble as the rival: the wiring mistake fits best, and is named alone.
    if (this.hyp[rival]!.trouble) return first;
    const second = describe(this.hyp[rival]!, this.n);
    return { ...first, message: `${first.message.replace(SETUP, '')}; or else ${second.message}` };
  }
}

const SETUP = '; or run twolink setup';
/** Two predictions closer than this fraction of their size are the same motion, given the model's errors. */
const LIKENESS = 0.4;
/**
 * A joint that stays within JAM_BAND (0.25 deg), or JAM_COUNTS of its encoder if they are coarser, for
 * JAM_HOLD_S is standing still, for `trouble` (encoder noise flickers a count or two; a joint turning
 * round moves more than that in 30 ms unless it turns round very slowly).
 */
const JAM_BAND = (0.25 * Math.PI) / 180;
const JAM_COUNTS = 2.5;
const JAM_HOLD_S = 0.04;
/** A joint faster than this is turning, not jammed [rad/s]: JAM_BAND in JAM_HOLD_S (6 deg/s). */
const JAM_SPEED = JAM_BAND / JAM_HOLD_S;
/**
 * A joint turning against its motor is back-driven by the other joint when the coupling torque against
 * the motor is at least this share of the motor's torque (a push of 1.5 N m on the mock's joint 2 on the
 * reach: coupling 0.15 N m against 1.34 N m, 0.11; joint 2 at 8 % duty pushed back by joint 1 at full
 * duty: 0.33 against 0.47 N m, 0.71; virtual time).
 */
const BACKDRIVE_SHARE = 0.5;
/** A joint standing still is jammed (not only dead) when its motor's torque gone would accelerate it faster than this [rad/s^2]. */
const JAM_ACCEL = 30;
/**
 * A joint trouble is named once it has explained the motion this long without a break [s]: stale
 * Firmata reports (asked every 1 ms at 57600 baud) make a dead motor fit for a few samples at a time
 * (named at 10 ms, not at 20 ms), a dead motor on the mock's reach fits for 20 ms before the
 * following error passes 5 deg (virtual time).
 */
const TROUBLE_HOLD_S = 0.02;
/** Low-pass of the velocity the monitor takes from the angles [Hz]. */
const VELOCITY_HZ = 30;

function describe(h: Hypothesis, n: number): WiringFault {
  const setup = SETUP;
  if (h.encSwap) {
    return {
      joint: 0,
      kind: 'swapped',
      message: `joint 1 reads joint 2's encoder and joint 2 joint 1's: the encoders (or the motors) are swapped (swap the two encoder cables at the board, or the two motor cables)${setup}`,
    };
  }
  if (h.encFlip) {
    const js = [...Array(n).keys()].filter((i) => h.encFlip & (1 << i));
    const j = js[0]! + 1;
    return {
      joint: js[0]!,
      kind: 'reversed',
      message:
        js.length > 1
          ? `joints 1 and 2 move against their commands: both encoders count backwards, or both motors are reversed (swap each encoder's A and B wires, or each motor's two wires)${setup}`
          : `joint ${j} moves against its command: its encoder counts backwards, or its motor is reversed (swap encoder ${j}'s A and B wires, or motor ${j}'s two wires)${setup}`,
    };
  }
  const flipped = [...Array(n).keys()].filter((i) => h.flip & (1 << i));
  const j = (flipped[0] ?? 0) + 1;
  const reversed =
    flipped.length > 1
      ? "joints 1 and 2 move against their commands: both motors are reversed, or both encoders count backwards (swap each motor's two wires, or each encoder's A and B)"
      : flipped.length === 1
        ? `joint ${j} moves against its command: its motor is reversed, or its encoder counts backwards (swap motor ${j}'s two wires, or encoder ${j}'s A and B)`
        : '';
  const swapped =
    'joint 1 follows motor 2 and joint 2 motor 1: the motors (or the encoders) are swapped (swap the two motor cables at the driver, or the two encoder cables)';
  if (!h.swap) return { joint: flipped[0] ?? 0, kind: 'reversed', message: `${reversed}${setup}` };
  if (flipped.length === 0) return { joint: 0, kind: 'swapped', message: `${swapped}${setup}` };
  return { joint: flipped[0]!, kind: 'swapped-reversed', message: `${swapped}; then ${reversed}${setup}` };
}
