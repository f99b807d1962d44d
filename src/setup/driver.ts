/**
 * The driver of `twolink setup`: it talks to the board through the Link (open, startSampling +
 * onSample, enable, writeDuty, stop), asks the person (or the mock's hand) to move the joints, and
 * hands the evidence to the steps of steps.ts, which decide. Motion stays small and bounded: motor
 * pulses ramp the duty slowly from zero and end at once when a joint has moved a few degrees, moves
 * too fast, or the ramp reaches its cap. The e-stop (the operator's signal) zeroes the motors at once;
 * on every way out the motors get zero and the board confirms the stop.
 */
import { describeStop, isStopReason, type StopReason } from '../control/stop.js';
import type { Rig } from '../config/load.js';
import type { Clock } from '../time/clock.js';
import type { Link, Reading } from '../transport/link.js';
import { checkLimits, type StopEvidence } from './limits.js';
import { checkMotorConstant, TEST_SPEEDS_DEG_S, WINDOW_DEG } from './motor-constant.js';
import { jointAngles, speedTest } from './speed-test.js';
import {
  believed,
  checkBoard,
  checkBreakaway,
  checkEncoder,
  checkMotor,
  checkMotorsDistinct,
  checkZero,
  responseDirections,
  type BoardEvidence,
  type Findings,
  type PulseEvidence,
  type RestEvidence,
  type StepResult,
} from './steps.js';

/** Whoever moves the joints by hand: a person (who is asked, and presses Enter), or the mock's hand. */
export interface Hand {
  /** Turns joint `joint` (0-based) `deg` counter-clockwise, the other joint held still; resolves once it is held there. */
  move(joint: number, deg: number): Promise<void>;
  /** Turns joint `joint` (0-based) the given way until it meets its mechanical stop, the other joint held; resolves once it is held against it. */
  toStop(joint: number, direction: 1 | -1): Promise<void>;
  /** Brings the arm back to hanging (from a stop, where it may rest against it) and holds it there. */
  lower(): Promise<void>;
  /** Lets go: the arm hangs freely again. */
  release(): Promise<void>;
}

/** The person at the arm. */
export interface Operator {
  /** A line of instructions or progress (stderr). */
  say(text: string): void;
  /** Before a step that moves the arm: waits until the person says go (Enter), or goes on at once when they said yes to everything (--yes). */
  confirm(prompt: string): Promise<void>;
  /** Waits for the person to do something with their hands and press Enter (--yes does not answer it). */
  ask(prompt: string): Promise<void>;
  /**
   * A yes/no question for a person at a terminal (n, the safe answer, by default); absent, or
   * resolving false without asking, where no one can answer (piped input, --yes, the mock).
   */
  yesNo?(prompt: string): Promise<boolean>;
  /** Aborts on the e-stop key (space, Esc), Ctrl-C or a signal; its reason says which. Every prompt rejects once it has. */
  readonly signal: AbortSignal;
}

/** Setup was stopped: the e-stop, a signal, or no one left to answer (stdin closed). */
export class SetupStopped extends Error {
  override readonly name = 'SetupStopped';
  /** The steps that had run when it stopped. */
  steps: StepResult[] = [];
  constructor(
    message: string,
    /** The operator's stop (the e-stop key, a signal), when it was one; absent when no one was left to answer (stdin closed). */
    readonly stop?: StopReason,
  ) {
    super(message);
  }

  /** Setup stopped by the operator's signal: its reason (a stop value, operator.ts), in words and as the value. */
  static of(reason: unknown): SetupStopped {
    const stop = operatorStop(reason);
    return new SetupStopped(describeStop(stop), stop);
  }
}

/** The operator's signal reason as a stop: a StopReason as TerminalOperator gives it, else a requested stop in its words. */
export function operatorStop(reason: unknown): StopReason {
  return isStopReason(reason)
    ? reason
    : {
        kind: 'requested',
        text:
          reason === undefined
            ? 'stopped'
            : reason instanceof Error
              ? reason.message
              : typeof reason === 'string'
                ? reason
                : JSON.stringify(reason),
      };
}

/** Bounds of the motion and of the waiting. */
export interface SetupOptions {
  /** Board sample rate [Hz]. */
  sampleHz: number;
  /** How far each joint is turned by hand [deg]. */
  handDeg: number;
  /** Largest duty a motor pulse reaches (fraction of the supply). */
  pulseMaxDuty: number;
  /** How fast the pulse's duty rises [1/s]. */
  pulseRampPerS: number;
  /** A pulse ends when any joint has moved this far [deg]. */
  pulseStopDeg: number;
  /** ... or moves this fast [deg/s]. */
  pulseMaxSpeedDegS: number;
  /** The arm is at rest when no input moves more than this over `restS` [deg]. */
  restToleranceDeg: number;
  /** [s] */
  restS: number;
  /** Give up waiting for rest after this long [s]. */
  restTimeoutS: number;
  /** Write soft limits wider than the rig file's when the stops allow it (--widen-limits); else only the person's yes does. */
  widenLimits: boolean;
}

export const DEFAULT_SETUP_OPTIONS: SetupOptions = {
  sampleHz: 200,
  handDeg: 90,
  pulseMaxDuty: 0.3,
  pulseRampPerS: 0.1,
  pulseStopDeg: 5,
  pulseMaxSpeedDegS: 60,
  restToleranceDeg: 0.15,
  restS: 1,
  restTimeoutS: 20,
  widenLimits: false,
};

export interface SetupContext {
  rig: Rig;
  /** A link whose handshake accepts the board's counts per revolution (angles are made here from the raw counts). */
  link: Link;
  /** What the board said it is (the probe). */
  board: BoardEvidence;
  clock: Clock;
  operator: Operator;
  hand: Hand;
  options?: Partial<SetupOptions>;
}

export interface SetupOutcome {
  steps: StepResult[];
  findings: Findings;
  /** Every step ran (none failed in a way that made the next ones unsafe or pointless). */
  completed: boolean;
}

/** Samples from the board: the newest counts, rest detection, and a hook that answers each sample. */
class Samples {
  latest: Reading | undefined;
  private readonly window: { t: number; counts: number[] }[] = [];
  private waiters: (() => void)[] = [];
  /** Called on every sample (the pulse answers samples with duties). */
  hook: ((r: Reading) => void) | undefined;

  constructor(link: Link) {
    link.onSample((r) => this.add(r));
  }

  private add(r: Reading): void {
    this.latest = r;
    this.window.push({ t: r.boardTime, counts: r.raw.slice() });
    while (this.window.length > 0 && r.boardTime - this.window[0]!.t > 5) this.window.shift();
    this.hook?.(r);
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  /** Resolves at the next sample. */
  next(): Promise<void> {
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Largest change of each input over the last `s` seconds [counts], or undefined when there are not `s` seconds yet. */
  spread(s: number): number[] | undefined {
    const last = this.window[this.window.length - 1];
    if (!last || last.t - this.window[0]!.t < s) return undefined;
    const from = last.t - s;
    const n = last.counts.length;
    const lo = new Array<number>(n).fill(Infinity);
    const hi = new Array<number>(n).fill(-Infinity);
    for (const x of this.window) {
      if (x.t < from) continue;
      for (let i = 0; i < n; i++) {
        lo[i] = Math.min(lo[i]!, x.counts[i]!);
        hi[i] = Math.max(hi[i]!, x.counts[i]!);
      }
    }
    return hi.map((h, i) => h - lo[i]!);
  }
}

/** Runs the steps on an open-able link; the caller closes the link. */
export async function runSetup(ctx: SetupContext): Promise<SetupOutcome> {
  const run = new SetupRun(ctx);
  try {
    const ok =
      (await run.board()) &&
      (await run.encoders()) &&
      (await run.zero()) &&
      (await run.limits()) &&
      (await run.motors()) &&
      (await run.motorConstants());
    return { steps: run.steps, findings: run.f, completed: ok };
  } catch (e) {
    if (e instanceof SetupStopped) e.steps = run.steps.slice();
    throw e;
  } finally {
    run.samples.hook = undefined;
    ctx.link.writeDuty(run.zeros);
    await ctx.link.stop();
  }
}

/** One setup session: the evidence so far, and every wait raced against the e-stop. */
class SetupRun {
  readonly steps: StepResult[] = [];
  readonly f: Findings;
  readonly samples: Samples;
  readonly zeros: number[];
  private readonly o: SetupOptions;
  private readonly abort: Promise<never>;

  constructor(private readonly ctx: SetupContext) {
    this.o = { ...DEFAULT_SETUP_OPTIONS, ...ctx.options };
    this.f = believed(ctx.rig);
    this.zeros = new Array<number>(ctx.rig.joints).fill(0);
    this.samples = new Samples(ctx.link);
    const { link, operator } = ctx;
    this.abort = new Promise<never>((_, reject) => {
      const stop = (): void => {
        this.samples.hook = undefined;
        link.writeDuty(this.zeros);
        void link.stop();
        reject(SetupStopped.of(operator.signal.reason));
      };
      if (operator.signal.aborted) stop();
      else operator.signal.addEventListener('abort', stop, { once: true });
    });
    this.abort.catch(() => undefined);
  }

  private guard<T>(p: Promise<T>): Promise<T> {
    return Promise.race([p, this.abort]);
  }

  private add(r: StepResult): StepResult {
    this.steps.push(r);
    report(this.ctx.operator, r);
    return r;
  }

  private rest(): Promise<RestEvidence> {
    return this.guard(waitRest(this.samples, this.ctx.clock, this.o, this.ctx.board.countsPerRev));
  }

  /** 1. The board: identity, protocol, counts per revolution; then its sample clock. */
  async board(): Promise<boolean> {
    await this.guard(this.ctx.link.open());
    if (this.add(checkBoard(this.ctx.board, this.ctx.rig)).status === 'fail') return false;
    await this.guard(this.ctx.link.startSampling(this.o.sampleHz));
    return true;
  }

  /** 2. The encoders, by hand, motors off. */
  async encoders(): Promise<boolean> {
    const { operator, hand, rig } = this.ctx;
    const deg = this.o.handDeg;
    operator.say(
      `Encoders, by hand (motors off): for each joint, turn it ${deg} deg counter-clockwise (seen from the front) and hold it there.`,
    );
    for (let j = 0; j < rig.joints; j++) {
      const rest = await this.rest();
      operator.say(
        j === 0
          ? `  joint 1: raise the whole arm, elbow straight, from hanging to horizontal pointing right (+${deg} deg), hold it`
          : `  joint 2: keep link 1 hanging and raise link 2 from hanging to horizontal pointing right (+${deg} deg), hold it`,
      );
      await this.guard(hand.move(j, deg));
      const after = this.samples.latest!.raw.slice();
      await this.guard(hand.release());
      const r = this.add(checkEncoder({ joint: j, deg, before: rest.counts, after }, this.ctx.board.countsPerRev, rig, this.f));
      if (r.status === 'fail' && !r.corrected) return false;
    }
    return true;
  }

  /** 3. The zero, against gravity. */
  async zero(): Promise<boolean> {
    this.ctx.operator.say('Zero: let the arm hang freely (motors off).');
    this.add(checkZero(await this.rest(), this.ctx.rig, this.f));
    return true;
  }

  /** 3b. The soft limits: each joint to its two mechanical stops by hand, motors off. */
  async limits(): Promise<boolean> {
    const { operator, hand, rig } = this.ctx;
    operator.say(
      "Limits, by hand (motors off): turn each joint gently until it stops against its mechanical stop, one way then the other; setup puts the soft limits a little inside (never wider than the rig file's without your yes).",
    );
    const q = (): number[] =>
      jointAngles(this.samples.latest!.raw, this.f, new Array<number>(rig.joints).fill(0)).map((x) => (x * 180) / Math.PI);
    let ok = true;
    for (let j = 0; j < rig.joints; j++) {
      const read = { cw: 0, ccw: 0 };
      let startDeg = 0;
      for (const dir of [-1, 1] as const) {
        await this.rest();
        startDeg = dir < 0 ? q()[j]! : startDeg;
        operator.say(
          `  joint ${j + 1}: ${dir < 0 ? 'clockwise' : 'counter-clockwise'} to its stop${j === 1 ? ', link 1 held hanging' : ', the elbow held straight'}, and hold it`,
        );
        await this.guard(hand.toStop(j, dir));
        read[dir < 0 ? 'cw' : 'ccw'] = q()[j]!;
        // Past the top a released arm rests against its stop: it is lowered to hanging first.
        await this.guard(hand.lower());
        await this.guard(hand.release());
      }
      const r = this.add(await this.limitsOf({ joint: j, startDeg, cwDeg: read.cw, ccwDeg: read.ccw }));
      if (r.status === 'fail' && !r.corrected) ok = false;
    }
    await this.rest();
    return ok;
  }

  /** The verdict on one joint's stops; a limit wider than the file's only with --widen-limits or the person's yes. */
  private async limitsOf(e: StopEvidence): Promise<StepResult> {
    const { operator, rig } = this.ctx;
    const r = checkLimits(e, rig, this.f, this.o.widenLimits);
    const wider = r.evidence.widerDeg as number[] | undefined;
    if (!wider || this.o.widenLimits || !operator.yesNo) return r;
    const file = r.evidence.fileLimitsDeg as number[];
    const yes = await this.guard(
      operator.yesNo(
        `joint ${e.joint + 1}: the stops allow soft limits [${wider.join(', ')}] deg, wider than the rig file's [${file.join(', ')}]: widen them`,
      ),
    );
    return yes ? checkLimits(e, rig, this.f, true) : r;
  }

  /** 4. The motors, one small pulse each. */
  async motors(): Promise<boolean> {
    const { operator, link, rig } = this.ctx;
    const o = this.o;
    operator.say(
      `Motors: each output gets a slow ramp of duty up to ${o.pulseMaxDuty} that ends as soon as a joint moves ${o.pulseStopDeg} deg; the arm moves a little near hanging. Space or Esc stops.`,
    );
    await this.guard(operator.confirm('the arm will move: clear it and press Enter'));
    const dirs = responseDirections(rig);
    const results: StepResult[] = [];
    for (let m = 0; m < rig.joints; m++) {
      await this.rest();
      const ev = await this.guard(pulse(link, this.samples, m, rig.joints, this.f, o));
      await this.guard(link.enable(false));
      const r = this.add(checkMotor(ev, rig, this.f, dirs));
      results.push(r);
      // The same ramp the other way: the breakaway duty per direction (stiction and the driver's dead band are not symmetric).
      if (typeof r.evidence.joint !== 'number' || (r.status === 'fail' && !r.corrected)) continue;
      await this.rest();
      const back = await this.guard(pulse(link, this.samples, m, rig.joints, this.f, o, -1));
      await this.guard(link.enable(false));
      this.add(checkBreakaway(r.evidence.joint - 1, ev, back, this.f));
    }
    const distinct = checkMotorsDistinct(results);
    if (distinct) this.add(distinct);
    if (distinct || results.some((r) => r.status === 'fail' && !r.corrected)) return false;
    await this.rest();
    return true;
  }

  /** 4b. The motor constants: each joint servoed through a small window about hanging at four speeds, the other held. */
  async motorConstants(): Promise<boolean> {
    const { operator, link, rig } = this.ctx;
    const o = this.o;
    operator.say(
      `Motor constants: each joint in turn moves back and forth through +-${WINDOW_DEG} deg about hanging at ${TEST_SPEEDS_DEG_S.join(', ')} deg/s (duty at most ${o.pulseMaxDuty}), the other held by its motor. Space or Esc stops.`,
    );
    await this.guard(operator.confirm('the arm will move: clear it and press Enter'));
    for (let j = 0; j < rig.joints; j++) {
      await this.rest();
      await this.guard(link.enable(true));
      const ev = await this.guard(
        speedTest(link, this.samples, rig, this.f, j, {
          maxDuty: o.pulseMaxDuty,
          maxSpeedDegS: 1.5 * o.pulseMaxSpeedDegS,
          maxErrorDeg: 15,
        }),
      );
      await this.guard(link.enable(false));
      this.add(checkMotorConstant(ev, rig, this.f.ke));
    }
    await this.rest();
    return true;
  }
}

function report(op: Operator, r: StepResult): void {
  op.say(`[${r.status.toUpperCase()}] ${r.name}: ${r.summary}`);
  if (r.fix) op.say(`       fix: ${r.fix}`);
}

/** Waits until the arm is at rest (or the timeout), and returns the counts then. */
async function waitRest(samples: Samples, clock: Clock, o: SetupOptions, boardCpr: readonly number[]): Promise<RestEvidence> {
  const t0 = clock.now();
  for (;;) {
    await samples.next();
    const s = samples.spread(o.restS);
    const waited = clock.now() - t0;
    if (s && s.every((x, i) => x <= Math.max(2, (boardCpr[i]! * o.restToleranceDeg) / 360)))
      return { counts: samples.latest!.raw.slice(), settledS: waited };
    if (waited > o.restTimeoutS) return { counts: samples.latest!.raw.slice(), settledS: Infinity };
  }
}

/** One motor pulse on board output `m`: a slow ramp of duty (`direction`: its sign), ended by motion, speed or its cap. */
async function pulse(
  link: Link,
  samples: Samples,
  m: number,
  n: number,
  f: Findings,
  o: SetupOptions,
  direction: 1 | -1 = 1,
): Promise<PulseEvidence> {
  await link.enable(true);
  const ev: PulseEvidence = { output: m, t: [], duty: [], q: [] };
  const out = new Array<number>(n).fill(0);
  const zeros = new Array<number>(n).fill(0);
  const capS = o.pulseMaxDuty / o.pulseRampPerS + 0.25;
  // Speed over the last 50 ms, not between samples: one count of noise at 200 Hz would look like 30 deg/s.
  const SPEED_WINDOW_S = 0.05;
  return new Promise((resolve) => {
    let t0: number | undefined;
    let q0: number[] | undefined;
    let back = 0;
    samples.hook = (r) => {
      const q = jointAngles(r.raw, f, new Array<number>(n).fill(0));
      t0 ??= r.boardTime;
      q0 ??= q.slice();
      const t = r.boardTime - t0;
      while (back < ev.t.length - 1 && t - ev.t[back + 1]! >= SPEED_WINDOW_S) back++;
      const old = ev.q[back];
      const span = old ? t - ev.t[back]! : 0;
      const speed = old && span >= SPEED_WINDOW_S ? Math.max(...q.map((x, j) => Math.abs(x - old[j]!))) / span : 0;
      const moved = Math.max(...q.map((x, j) => Math.abs(x - q0![j]!)));
      if (moved * (180 / Math.PI) >= o.pulseStopDeg || speed * (180 / Math.PI) >= o.pulseMaxSpeedDegS || t >= capS) {
        link.writeDuty(zeros);
        samples.hook = undefined;
        ev.t.push(t);
        ev.duty.push(0);
        ev.q.push(q);
        resolve(ev);
        return;
      }
      const duty = direction * Math.min(o.pulseMaxDuty, o.pulseRampPerS * t);
      out[m] = duty;
      link.writeDuty(out);
      ev.t.push(t);
      ev.duty.push(duty);
      ev.q.push(q);
    };
  });
}
