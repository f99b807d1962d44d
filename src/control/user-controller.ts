/**
 * Your own control law in twolink's loop (`--controller FILE`): the contract a controller module
 * implements, and the adapter the loop calls in place of its feedforward + PID.
 *
 * The module is ESM; its default export is a factory `createController(context)` that returns (or
 * resolves to) an object with `update(sample)` returning the joint torques [N m]. twolink keeps
 * everything around it: joint and torque limits, saturation, the soft ramps, the motor model, the
 * twin, safety and recording. The adapter never throws inside the loop: an exception, a wrong number
 * of torques, a non-finite torque or an `update` slower than the loop's period is a result naming the
 * file, and the loop stops the arm with it.
 */
import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Rig } from '../config/load.js';
import type { LoopPart } from '../config/parts.js';
import type { LawResult, LawSample } from './law.js';
import type { StopReason } from './stop.js';
import { controllerModel, type ControllerModel } from './controller-model.js';
import { stolenClockMs } from '../time/threads.js';

export type { ControllerModel, ControllerModelOptions } from './controller-model.js';

/** The rig file as a controller sees it. */
export type ControllerRig = LoopPart & Pick<Rig, 'name' | 'file'>;

/** What `createController(context)` gets once, before the run. */
export interface ControllerContext {
  /**
   * What the loop reads of the resolved rig file: nominal arm, friction, motors, encoders, limits (SI
   * units, radians), control and twin settings, the board's watchdog; and the file's name and path.
   */
  readonly rig: ControllerRig;
  /**
   * The nominal actuated arm's dynamics (M_a with the rotors' inertia, C, G, friction, inverse and
   * forward dynamics) and kinematics (endpoint, Jacobian, IK): a view of the model the built-in
   * controller uses, from the same rig data. `model.rigidView()` is the rigid arm alone.
   */
  readonly model: ControllerModel;
  /** The loop's rate [Hz]: `update` is called once per period 1/rateHz [s]. */
  readonly rateHz: number;
}

/**
 * What `update` gets every tick: the loop's sample (time, predicted state and plan, see `LawSample`)
 * and the endpoints. A new frozen object every tick: it cannot be written to.
 */
export interface ControllerSample extends LawSample {
  readonly t: number;
  /** The endpoint [x, y] at `q` [m]. */
  readonly endpoint: readonly number[];
  /** The plan's endpoint [x, y] [m]. */
  readonly endpointDesired: readonly number[];
}

/** A control law: one call per tick, in a thread of its own (src/run/controller-thread.ts) that the loop waits on with a deadline. */
export interface UserController {
  /**
   * The joint torques [N m] for this tick, one per joint (an array you may reuse). Must return within
   * the loop's period and must not throw; twolink limits and saturates what it returns.
   */
  update(sample: ControllerSample): ArrayLike<number>;
  /** Called when the loop starts a new trajectory (clear integrators, filters). */
  reset?(): void;
}

/** The default export of a controller module. */
export type ControllerFactory = (context: ControllerContext) => UserController | Promise<UserController>;

/** The outcome of one call into the control law: never an exception (law.ts). */
export type { LawResult } from './law.js';

/** A controller module that cannot be used (missing file, bad export): a user input error (exit code 2). */
export class ControllerError extends Error {
  override readonly name = 'ControllerError';
}

/**
 * A controller that misbehaved outside a tick of the loop (an endless loop or `process.exit` in
 * `createController`, a timer it started, an error from a promise): a fault of the run (exit code 1),
 * not an input error. `reason` starts with the file.
 */
export class ControllerFault extends Error {
  override readonly name = 'ControllerFault';
  constructor(readonly reason: string) {
    super(`controller: ${reason}`);
  }
  /** The run's stop. */
  get stop(): StopReason {
    return { kind: 'fault', fault: { kind: 'controller', message: this.reason } };
  }
}

/**
 * The context for a run of `rig` at `rateHz` [Hz]: a deep-frozen copy, so that nothing a controller
 * writes can reach the rig the loop reads (its limits, saturation and watchdog).
 */
export function controllerContext(rig: ControllerRig, rateHz: number): ControllerContext {
  const own = deepFreeze(structuredClone(rig));
  const model = controllerModel(own);
  Object.freeze(model.params);
  return Object.freeze({ rig: own, model: Object.freeze(model), rateHz });
}

/** Freezes `v` and everything reachable from it (plain data: objects and arrays). */
export function deepFreeze<T>(v: T): T {
  if (v === null || typeof v !== 'object' || Object.isFrozen(v)) return v;
  Object.freeze(v);
  for (const k of Reflect.ownKeys(v)) deepFreeze((v as Record<PropertyKey, unknown>)[k]);
  return v;
}

/** Options of {@link PluggedController.load}. */
export interface PluggedOptions {
  /**
   * How many ticks in a row `update` may take longer than the period before it is a fault. One slow
   * call can be the operating system's doing (a preempted thread, a garbage collection), not the
   * controller's; a controller that is too slow is slow every tick. @default 3
   */
  slowTicks?: number;
  /**
   * The lateness rule for a controller late on a fraction of its ticks (slow on every other tick, say):
   * more than `late` of the last `ticks` ticks slower than the period is a fault (docs/safety.md).
   * @default { ticks: 100, late: 10 }
   */
  lateWindow?: { ticks: number; late: number };
  /** The clock that times `update` [ms] (injected in tests). @default performance.now */
  now?: () => number;
  /**
   * The time the operating system kept this thread waiting to run, cumulative [ms]: it is taken off
   * `update`'s time, so that a starved machine (no real-time priority, a busy CPU) is not blamed on the
   * controller. `null`: none taken off. @default the thread's run-queue delay (time/threads.ts
   * stolenClockMs), where Linux keeps it; with an injected `now`, none
   */
  stolenMs?: (() => number) | null;
}

const OK: LawResult = Object.freeze({ ok: true });

/** Default of {@link PluggedOptions.lateWindow}: more than 10 of the last 100 ticks late is a fault. */
export const LATE_WINDOW: Readonly<{ ticks: number; late: number }> = Object.freeze({ ticks: 100, late: 10 });

/** A loaded controller module, ready for the loop. */
export class PluggedController {
  private slow = 0;
  private readonly slowTicks: number;
  /** The last `lateWindow.ticks` ticks, 1 where update was slower than the period (a ring), and how many of them were. */
  private readonly lateRing: Uint8Array;
  private lateAt = 0;
  private lateCount = 0;
  private readonly lateLimit: number;
  private readonly now: () => number;
  private readonly stolen: (() => number) | undefined;

  private constructor(
    /** The file as the user gave it (named in every message). */
    readonly file: string,
    private readonly law: UserController,
    private readonly context: ControllerContext,
    opts: PluggedOptions,
  ) {
    this.slowTicks = Math.max(1, Math.floor(opts.slowTicks ?? 3));
    const w = opts.lateWindow ?? LATE_WINDOW;
    this.lateRing = new Uint8Array(Math.max(1, Math.floor(w.ticks)));
    this.lateLimit = Math.max(0, Math.floor(w.late));
    this.now = opts.now ?? (() => performance.now());
    this.stolen = opts.stolenMs === null ? undefined : (opts.stolenMs ?? (opts.now ? undefined : stolenClockMs()));
  }

  /**
   * Imports `file` (resolved against the current directory) and calls its default export with
   * `context`. Throws a {@link ControllerError} naming the file if it is missing, does not import,
   * has no factory, or the factory fails or returns no `update`.
   */
  static async load(file: string, context: ControllerContext, opts: PluggedOptions = {}): Promise<PluggedController> {
    const path = resolve(process.cwd(), file);
    let isFile: boolean;
    try {
      isFile = statSync(path).isFile();
    } catch {
      throw new ControllerError(`controller ${file}: no such file (looked for ${path})`);
    }
    if (!isFile) throw new ControllerError(`controller ${file}: not a file`);
    let mod: { default?: unknown };
    try {
      mod = (await import(pathToFileURL(path).href)) as { default?: unknown };
    } catch (e) {
      const hint = /\.[cm]?tsx?$/.test(file) ? ' (compile TypeScript to JavaScript first, e.g. with tsc)' : '';
      throw new ControllerError(`controller ${file}: cannot import it: ${describe(e)}${hint}`);
    }
    const factory = mod.default;
    if (typeof factory !== 'function') {
      throw new ControllerError(
        `controller ${file}: the default export must be a function createController(context), got ${typeName(factory)}`,
      );
    }
    let law: unknown;
    try {
      law = await (factory as ControllerFactory)(context);
    } catch (e) {
      if (isReadOnlyWrite(e))
        throw new ControllerFault(`${file}: createController(context) wrote to its context, which is read-only: ${describe(e)}`);
      throw new ControllerError(`controller ${file}: createController(context) threw: ${describe(e)}`);
    }
    if (law === null || typeof law !== 'object' || typeof (law as UserController).update !== 'function') {
      throw new ControllerError(
        `controller ${file}: createController(context) must return an object with an update(sample) method, got ${typeName(law)}`,
      );
    }
    const reset = (law as { reset?: unknown }).reset;
    if (reset !== undefined && typeof reset !== 'function') {
      throw new ControllerError(`controller ${file}: reset must be a function when present, got ${typeName(reset)}`);
    }
    return new PluggedController(file, law as UserController, context, opts);
  }

  /**
   * The sample of this tick, a new frozen object (nothing the controller writes reaches the loop): the
   * time `t` the torque applies [s, board time], the state then `q` [rad] and `qd` [rad/s], the plan
   * then (`desired.q` [rad], `.qd` [rad/s], `.qdd` [rad/s^2]), and the endpoints from the model.
   */
  fill(
    t: number,
    q: ArrayLike<number>,
    qd: ArrayLike<number>,
    desired: { q: ArrayLike<number>; qd: ArrayLike<number>; qdd: ArrayLike<number> },
  ): ControllerSample {
    const n = this.context.rig.joints;
    const copy = (a: ArrayLike<number>): readonly number[] => Object.freeze(Array.from({ length: n }, (_, i) => a[i]!));
    const s = { t, q: copy(q), qd: copy(qd), qDesired: copy(desired.q), qdDesired: copy(desired.qd), qddDesired: copy(desired.qdd) };
    return Object.freeze({
      ...s,
      endpoint: Object.freeze(this.context.model.endpoint(s.q)),
      endpointDesired: Object.freeze(this.context.model.endpoint(s.qDesired)),
    });
  }

  /**
   * One tick of the law: calls `update(sample)`, checks what it returned and how long it took against
   * `periodS` [s], and writes the torques [N m] into `out` (zeros when the result is not ok). Never
   * throws.
   */
  step(sample: ControllerSample, periodS: number, out: number[]): LawResult {
    const s0 = this.stolen?.() ?? 0;
    const t0 = this.now();
    let tau: unknown;
    try {
      tau = this.law.update(sample);
    } catch (e) {
      return this.fail(
        out,
        isReadOnlyWrite(e) ? `update wrote to its sample or context, which are read-only: ${describe(e)}` : `update threw: ${describe(e)}`,
      );
    }
    const wallMs = this.now() - t0;
    // What the OS took (the thread was runnable and not running) is not the controller's; an unreadable clock takes nothing off.
    const stolenMs = this.stolen ? this.stolen() - s0 : 0;
    const tookMs = Number.isFinite(stolenMs) && stolenMs > 0 ? Math.max(0, wallMs - stolenMs) : wallMs;
    try {
      return this.accept(tau, tookMs, periodS * 1000, out, wallMs - tookMs);
    } catch (e) {
      // A getter or a Proxy in what update returned threw while it was read.
      return this.fail(out, `update returned something that cannot be read: ${describe(e)}`);
    }
  }

  /**
   * Checks what `update` returned and how long it took [ms] (`stolenMs` taken off already); copies the
   * torques into `out` first, so each is read once.
   */
  private accept(tau: unknown, tookMs: number, periodMs: number, out: number[], stolenMs: number): LawResult {
    const n = this.context.rig.joints;
    if (typeof tau === 'object' && tau !== null && 'then' in tau && typeof tau.then === 'function') {
      return this.fail(out, 'update returned a Promise; it must return the torques synchronously (it runs inside the loop tick)');
    }
    if (tau === null || typeof tau !== 'object' || typeof (tau as ArrayLike<number>).length !== 'number') {
      return this.fail(out, `update returned ${typeName(tau)}; it must return ${n} joint torque${n > 1 ? 's' : ''} [N m]`);
    }
    const t = tau as ArrayLike<unknown>;
    if (t.length !== n) return this.fail(out, `update returned ${t.length} torque${t.length === 1 ? '' : 's'} for a ${n}-joint arm`);
    for (let i = 0; i < n; i++) {
      const v = t[i];
      if (typeof v !== 'number' || !Number.isFinite(v))
        return this.fail(out, `update returned ${typeof v === 'number' ? String(v) : typeName(v)} as the torque of joint ${i + 1}`);
      out[i] = v;
    }
    const late = tookMs > periodMs;
    // The window's count: the tick that leaves it out, this one in.
    this.lateCount += (late ? 1 : 0) - this.lateRing[this.lateAt]!;
    this.lateRing[this.lateAt] = late ? 1 : 0;
    this.lateAt = (this.lateAt + 1) % this.lateRing.length;
    const os = stolenMs > 0 ? ` (not counting ${stolenMs.toFixed(2)} ms the operating system kept its thread waiting)` : '';
    if (late) {
      this.slow++;
      if (this.slow >= this.slowTicks) {
        return this.fail(
          out,
          `update took ${tookMs.toFixed(2)} ms${os}, longer than the loop period of ${periodMs.toFixed(2)} ms, ${this.slow} ticks in a row`,
        );
      }
      if (this.lateCount > this.lateLimit) {
        const n = this.lateRing.length;
        return this.fail(
          out,
          `update was slower than the loop period of ${periodMs.toFixed(2)} ms on ${this.lateCount} of the last ${n} ticks (the rule: more than ${this.lateLimit} of ${n}; this one took ${tookMs.toFixed(2)} ms${os})`,
        );
      }
    } else {
      this.slow = 0;
    }
    return OK;
  }

  /** Calls the law's `reset()`, if it has one (a new trajectory). Never throws. */
  reset(): LawResult {
    this.slow = 0;
    if (!this.law.reset) return OK;
    try {
      this.law.reset();
      return OK;
    } catch (e) {
      return { ok: false, reason: `${this.file}: reset threw: ${describe(e)}` };
    }
  }

  private fail(out: number[], what: string): LawResult {
    for (let i = 0; i < out.length; i++) out[i] = 0;
    // The loop's stop is a controller fault with this reason: it starts with the file.
    return { ok: false, reason: `${this.file}: ${what}` };
  }
}

/** A TypeError from writing to a frozen object (strict mode: every ES module). */
function isReadOnlyWrite(e: unknown): boolean {
  return e instanceof TypeError && /read.only|not extensible|Cannot (assign|add|delete|define)/i.test(e.message);
}

/** An error (or anything thrown) as one line. */
export function describe(e: unknown): string {
  try {
    if (e instanceof Error) return `${e.name === 'Error' ? '' : `${e.name}: `}${String(e.message).split('\n')[0]}`;
    return String(e);
  } catch {
    return 'a value that cannot be printed';
  }
}

function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'object') return 'an object';
  if (typeof v === 'string') return `the string ${JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}...` : v)}`;
  return typeof v === 'undefined' ? 'undefined' : `a ${typeof v}`;
}
