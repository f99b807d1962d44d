/**
 * The driver of `twolink tune`: on an open link, per joint, the relay test, the chirp and the
 * identified response, the gains for the target crossover at three elbow angles, and the
 * validation (a closed-loop step and chirp), each a step with pass / warn / fail, its evidence and
 * the fix, as `twolink setup` reports them (setup's Operator, its e-stop and StepResult). The other
 * joint is held at the pose; every experiment stays within MAX_DEV_DEG of it. On every way out
 * the motors get zero and the board confirms the stop.
 */
import { adapterFlushS, adapterName, cableAdvice, runCable, type AdapterKind } from '../config/cable.js';
import type { Rig } from '../config/load.js';
import { computeGravity, createActuatedArmData, motorTorque } from '../model/actuated.js';
import { SetupStopped, type Operator } from '../setup/driver.js';
import type { StepResult } from '../setup/steps.js';
import type { Link } from '../transport/link.js';
import { ACCEPT_GM_DB, DESIGN_PM_DEG, designChoices, MIN_GM_DB, type preflight, preflightOnModel, type PreflightJob } from './design.js';
import { type JointTune, jointSteps, nominalDelayPeriods, observerOn, rigModel } from './joint-steps.js';
import { TuneAbort, TuneLoop } from './loop.js';
import type { RealTimeCompute } from './realtime-compute.js';

/**
 * Without --bandwidth, a default beyond the model's bound (with the rig's velocity estimator) is lowered
 * to this fraction of it: the bound is where the design's kp falls to zero, and the coupling of the
 * joints is left out of it. 0.85 (was 0.7): on the mock behind the 16U2 model (bound 5.7 Hz) the
 * reach tracked better the higher the crossover up to 5 Hz, the mean of 5 plant seeds (virtual time):
 * rigs/mock-arm.json 0.054 / 0.127 deg RMS at 4.5 Hz, 0.048 / 0.114 at 5 Hz (the file's gains 0.056 /
 * 0.138); the perturbed rig 0.050 / 0.109 and 0.049 / 0.105 (the file's 0.052 / 0.147).
 */
export const DEFAULT_BOUND_FRACTION = 0.85;

/** The furthest any joint may stray from the pose during tune [deg]. */
export const MAX_DEV_DEG = 10;

export interface TuneOptions {
  /** Joints to tune, 0-based. */
  joints: number[];
  /** Target crossover [Hz] (default: the loop rate / 40). */
  bandwidthHz: number;
  /** The person asked for this bandwidth (refused when out of reach); otherwise the default is lowered to DEFAULT_BOUND_FRACTION of the model's bound when that is lower. */
  explicit: boolean;
  /** Loop (sample) rate [Hz]. */
  rateHz: number;
  /** The cable the samples come through (config/cable.ts runCable; default: the mock's when the rig file has a plant, else its own). */
  cable?: { kind: AdapterKind; latencyMs: number };
}

export interface TuneContext {
  rig: Rig;
  link: Link;
  operator: Operator;
  options: TuneOptions;
  /** Called with the pose [rad] once the first sample has given it. */
  onPose?: (q: readonly number[]) => void;
  /**
   * In real time (a board, or the mock in its own thread): the preflight, the spectra and the model's
   * fit in worker threads at normal priority, so that the samples go on being answered, the board's
   * watchdog does not cut the motors and the kernel does not stop the real-time threads
   * (realtime-compute.ts). Virtual time leaves it out: the clock stands still while tune computes.
   */
  compute?: RealTimeCompute;
}

export interface TuneOutcome {
  steps: StepResult[];
  joints: JointTune[];
  motionS: number;
  /** The velocity estimator's bandwidth the gains were designed with [Hz]. */
  velocityFilterHz: number;
  /** The highest crossover per joint the rig's model reaches at this rate and delay [Hz]. */
  boundHz: number[];
  /** The target crossover tuned for [Hz] (the default may have been lowered). */
  bandwidthHz: number;
  completed: boolean;
}

/** Runs tune's steps on the link (opened here); the caller closes it. */
/**
 * The plan at the bandwidth asked for (the default lowered, and said, when beyond what the rig's model
 * reaches with the loop's delay), with the estimator and the hold gains set; or, refused, the bounds (the step added).
 */
async function planBandwidth(
  { rig, options, operator, compute }: TuneContext,
  loop: TuneLoop,
  add: (r: StepResult) => StepResult,
): Promise<Exclude<ReturnType<typeof preflight>, { refused: unknown }> | { refused: number[] }> {
  let plan = await planTune(rig, loop, options, compute);
  const delayMs = (nominalDelayPeriods(rig, options) * 1000) / options.rateHz;
  const lower = Math.floor(DEFAULT_BOUND_FRACTION * Math.min(...plan.boundHz) * 10) / 10;
  if (!options.explicit && options.bandwidthHz > lower) {
    operator.say(
      `the default bandwidth ${r3(options.bandwidthHz)} Hz (the loop rate / 40) is beyond ${DEFAULT_BOUND_FRACTION * 100} % of what the rig's model reaches (${plan.boundHz.map(r3).join(', ')} Hz) with the loop's delay of ${r3(delayMs)} ms (${delayWhy(rig, options)}) and the rig's velocity estimator (${rig.control.velocityFilterHz} Hz: a wider one lets the encoder's steps into the torque): tuning for ${lower} Hz instead`,
    );
    options.bandwidthHz = lower;
    plan = await planTune(rig, loop, options, compute);
  }
  if ('refused' in plan) {
    const worst = Math.min(...plan.boundHz);
    add({
      name: 'bandwidth',
      status: 'fail',
      summary: `a ${r3(options.bandwidthHz)} Hz crossover is out of reach: at ${options.rateHz} Hz (delay ${r3(delayMs)} ms: ${delayWhy(rig, options)}) with the velocity estimator at up to ${plan.velocityFilterHz} Hz, the rig's model reaches at most ${plan.boundHz.map((b, i) => `${r3(b)} Hz on joint ${i + 1}`).join(', ')} with ${DESIGN_PM_DEG} deg of phase margin and ${ACCEPT_GM_DB} dB of gain margin on the model (${MIN_GM_DB} required of the measured loop)`,
      evidence: {
        targetHz: options.bandwidthHz,
        boundHz: plan.boundHz.map(r3),
        rateHz: options.rateHz,
        delayMs: r3(delayMs),
        velocityFilterHz: plan.velocityFilterHz,
      },
      fix: `ask for --bandwidth ${Math.floor(worst * 10) / 10} or less, or raise control.rateHz`,
      corrected: false,
    });
    return { refused: plan.boundHz };
  }
  if (plan.velocityFilterHz !== rig.control.velocityFilterHz)
    operator.say(
      `a ${r3(options.bandwidthHz)} Hz crossover needs the velocity estimator at ${plan.velocityFilterHz} Hz (the rig's ${rig.control.velocityFilterHz} Hz lags too much with this delay): the tuned file sets it, and the wider estimator lets more of the encoder's steps into the torque (the reach may track worse than with a lower --bandwidth)`,
    );
  loop.setVelocityFilter(plan.velocityFilterHz);
  loop.setHold(
    plan.nominal.map((g) => g.kp),
    plan.nominal.map((g) => g.kd),
  );
  return plan;
}

export async function runTune(ctx: TuneContext): Promise<TuneOutcome> {
  const { rig, link, operator, options } = ctx;
  const steps: StepResult[] = [];
  const joints: JointTune[] = [];
  const loop = new TuneLoop(rig, link, rig.control.velocityFilterHz, {
    maxDevDeg: MAX_DEV_DEG,
    holdKp: rig.control.pid.kp,
    holdKd: rig.control.pid.kd,
  });
  const { abort, off } = abortOnStop(ctx, loop);
  const add = reportStep(steps, operator);
  let completed = true;
  let boundHz: number[] = [];
  try {
    await Promise.race([link.open(), abort]);
    await Promise.race([link.startSampling(options.rateHz), abort]);
    await Promise.race([loop.posed(), abort]);
    ctx.onPose?.(loop.pose);
    const plan = await Promise.race([planBandwidth(ctx, loop, add), abort]);
    if ('refused' in plan)
      return {
        steps,
        joints,
        motionS: 0,
        velocityFilterHz: rig.control.velocityFilterHz,
        completed: false,
        boundHz: plan.refused,
        bandwidthHz: options.bandwidthHz,
      };
    boundHz = plan.boundHz;
    operator.say(
      `Tune: per joint a relay test, a chirp, the gains for a ${options.bandwidthHz.toFixed(2)} Hz crossover, a step and a chirp with them; within ${MAX_DEV_DEG} deg of where the arm is, the other joint held. Space or Esc stops.`,
    );
    await Promise.race([operator.confirm('the arm will move a little about its pose: clear it and press Enter'), abort]);
    await Promise.race([link.enable(true), abort]);
    loop.holding = true;
    for (const j of options.joints) {
      const r = await jointSteps({
        rig,
        loop,
        joint: j,
        options,
        plan,
        guard: (p) => Promise.race([p, abort]),
        add,
        lastStatus: () => steps[steps.length - 1]?.status ?? 'pass',
        ...(ctx.compute ? { compute: ctx.compute } : {}),
      });
      joints.push(r);
      // A joint that failed its steps leaves the other's safe to tune: go on (a safety stop throws).
      if (!r.ok) completed = false;
    }
  } catch (e0) {
    safetyStop(e0, operator.signal, steps, add);
    completed = false;
  } finally {
    loop.holding = false;
    off();
    link.writeDuty(new Array<number>(rig.joints).fill(0));
    await link.stop();
  }
  return {
    steps,
    joints,
    motionS: loop.motionS,
    velocityFilterHz: loop.velocityFilterHz,
    completed,
    boundHz,
    bandwidthHz: options.bandwidthHz,
  };
}

/** Adds a step's result to `steps` and says it to the operator (with its fix). */
function reportStep(steps: StepResult[], operator: TuneContext['operator']): (r: StepResult) => StepResult {
  return (r) => {
    steps.push(r);
    operator.say(`[${r.status.toUpperCase()}] ${r.name}: ${r.summary}`);
    if (r.fix) operator.say(`       fix: ${r.fix}`);
    return r;
  };
}

/**
 * The operator's stop (Space or Esc: the signal) as a promise that rejects with SetupStopped, once it
 * has ended the running experiment and stopped the link; `off` takes the listener off.
 */
function abortOnStop(ctx: TuneContext, loop: TuneLoop): { abort: Promise<never>; off: () => void } {
  const { link, operator } = ctx;
  let stopped: (e: SetupStopped) => void = () => undefined;
  const abort = new Promise<never>((_, reject) => {
    stopped = reject;
  });
  abort.catch(() => undefined);
  const onAbort = (): void => {
    const e = SetupStopped.of(operator.signal.reason);
    loop.abort(`stopped: ${e.message}`);
    void link.stop();
    stopped(e);
  };
  if (operator.signal.aborted) onAbort();
  else operator.signal.addEventListener('abort', onAbort, { once: true });
  return { abort, off: () => operator.signal.removeEventListener('abort', onAbort) };
}

/**
 * What ended the tune early: a safety stop of the experiment (a TuneAbort) is a failed step and the tune
 * ends there; anything else is thrown, the operator's stop as a SetupStopped with the steps so far. The
 * e-stop ends the running experiment too (a TuneAbort): it is reported as the stop it is.
 */
function safetyStop(e0: unknown, signal: AbortSignal, steps: StepResult[], add: (r: StepResult) => StepResult): void {
  const e = signal.aborted && !(e0 instanceof SetupStopped) ? SetupStopped.of(signal.reason) : e0;
  if (!(e instanceof TuneAbort)) {
    if (e instanceof SetupStopped) e.steps = steps.slice();
    throw e;
  }
  add({
    name: 'safety',
    status: 'fail',
    summary: e.message,
    evidence: {},
    fix: 'start tune with the arm at rest in a pose with room around it, or lower --bandwidth',
    corrected: false,
  });
}

const r3 = (v: number): number => Number(v.toPrecision(3));

/** Where the loop's expected delay comes from, in words (joint-steps.ts nominalDelayPeriods). */
function delayWhy(rig: Rig, o: TuneOptions): string {
  const c = o.cable ?? runCable(rig, rig.plant !== undefined);
  const heldMs = Math.max(1 / o.rateHz, adapterFlushS(c.kind, c.latencyMs)) * 1000;
  return `the answer applied ${cableAdvice(c.kind, c.latencyMs, o.rateHz).answerDelaySamples} sample(s) after its sample through ${adapterName(c.kind, c.latencyMs)}, and held ${r3(heldMs)} ms, half of it counted`;
}

/**
 * The preflight on the rig's model at the pose (pure; before any motion). The default bandwidth is
 * planned with the rig's own velocity estimator; only a bandwidth asked for may widen it. On the mock
 * behind the 16U2 model the estimator widened to 60 Hz for the earlier 6.6 Hz default passes the
 * encoder's counts almost unfiltered (the alpha-beta filter's alpha reaches 1 at rate / 4 pi = 40 Hz),
 * and the run's prediction over the cable's 6 ms extrapolates that velocity: the reach with the rig
 * file's own gains tracked 1.52 / 0.62 deg RMS at 60 Hz against 0.052 / 0.147 at its 25 Hz (virtual time,
 * rigs/mock-arm.json).
 */
function planTune(rig: Rig, loop: TuneLoop, o: TuneOptions, compute: RealTimeCompute | undefined): Promise<ReturnType<typeof preflight>> {
  const dt = 1 / o.rateHz;
  const job: PreflightJob = {
    model: rigModel(loop, rig, loop.pose[1] ?? 0, nominalDelayPeriods(rig, o) * dt),
    targetHz: o.bandwidthHz,
    dt,
    floorHz: rig.control.velocityFilterHz,
    widen: o.explicit,
    // The preferred choice: designChoices's list is never empty.
    alpha: designChoices(observerOn(rig))[0]!.alpha,
  };
  return compute ? compute.preflight(job) : Promise.resolve(preflightOnModel(job));
}

/** The gravity stiffness dG_j/dq_j of the model at the pose [N m/rad] (a central difference). `j` indexes per-joint arrays of one or two entries (Rig.joints). */
export function gravityStiffness(loop: TuneLoop, j: number): number {
  const data = createActuatedArmData(loop.model);
  const h = 1e-4;
  const q = loop.pose.slice();
  q[j] = loop.pose[j]! + h;
  const a = computeGravity(loop.model, data, q)[j]!;
  q[j] = loop.pose[j]! - h;
  const b = computeGravity(loop.model, data, q)[j]!;
  return (a - b) / (2 * h);
}

/** The torque a joint's motor gives at rest at `fraction` of the duty cap [N m] (`j` as in gravityStiffness). */
export function torqueAtDuty(loop: TuneLoop, rig: Rig, j: number, fraction: number): number {
  return Math.min(rig.limits[j]!.maxTorque, motorTorque(loop.model, j, fraction * rig.maxDuty, 0));
}
