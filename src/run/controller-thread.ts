/**
 * A user's controller in a thread of its own, where twolink can end it. The loop's thread (or, in
 * virtual time, the main thread) calls `step` once per tick; the call is a round trip through shared
 * memory: the sample goes into a SharedArrayBuffer, the controller's thread is woken with
 * `Atomics.notify`, and the loop waits for the torques with `Atomics.wait` and a deadline. No message
 * queue, no event loop and no allocation on the way (the cost is measured by `npm run bench`,
 * src/bench/controller.ts).
 *
 * What the controller does to its thread stays there: an endless loop is a missed deadline, a
 * `process.exit` ends only its thread, an error from a timer or a promise is caught there; each is a
 * fault naming the file, and the thread is ended.
 */
import { Worker } from 'node:worker_threads';
import type { ControlLaw, LawSample } from '../control/loop.js';
import { ControllerError, ControllerFault, type ControllerRig, type LawResult } from '../control/user-controller.js';

/** Indexes into the Int32 control words at the head of the shared buffer. */
export const C = {
  /** The loop's request number (it counts up; the controller waits on it). */
  req: 0,
  /** What the request is: OP.* */
  op: 1,
  /** The number of the request the controller has answered (the loop waits on it). */
  res: 2,
  /** 0: the answer is ok; 1: it failed, the message says why. */
  status: 3,
  /** 1: the controller did something outside a call (exit, a timer, an uncaught error); the message says what. */
  fault: 4,
  /** Bytes of the message. */
  msgLen: 5,
} as const;
export const OP = { step: 1, reset: 2, end: 3 } as const;
const CTL_BYTES = 64;
const MSG_BYTES = 1024;

/** The shared buffer's views: control words, the numbers of a tick, the message (UTF-8). */
export class Channel {
  readonly ctl: Int32Array;
  /** [t, periodS, q(n), qd(n), qDesired(n), qdDesired(n), qddDesired(n), tau(n)] */
  readonly num: Float64Array;
  readonly msg: Uint8Array;
  readonly tau: number;

  constructor(
    readonly shared: SharedArrayBuffer,
    readonly joints: number,
  ) {
    this.ctl = new Int32Array(shared, 0, CTL_BYTES / 4);
    this.num = new Float64Array(shared, CTL_BYTES, 2 + 6 * joints);
    this.msg = new Uint8Array(shared, CTL_BYTES + 8 * this.num.length, MSG_BYTES);
    this.tau = 2 + 5 * joints;
  }

  static create(joints: number): Channel {
    return new Channel(new SharedArrayBuffer(CTL_BYTES + 8 * (2 + 6 * joints) + MSG_BYTES), joints);
  }

  writeMessage(text: string): void {
    const { written } = new TextEncoder().encodeInto(text.length > 400 ? `${text.slice(0, 400)}...` : text, this.msg);
    Atomics.store(this.ctl, C.msgLen, written);
  }

  readMessage(): string {
    return new TextDecoder().decode(this.msg.slice(0, Atomics.load(this.ctl, C.msgLen)));
  }
}

/** What the controller's thread gets. */
export interface ControllerWorkerInput {
  file: string;
  rig: ControllerRig;
  rateHz: number;
  shared: SharedArrayBuffer;
}

/** Messages from the controller's thread while it loads (after that, only the shared buffer). */
export type ControllerWorkerMessage = { type: 'loaded' } | { type: 'error'; message: string } | { type: 'fault'; reason: string };

export interface ControllerThreadOptions {
  /**
   * How long one call (`update`, `reset`) may take before the controller is ended [ms, real time]. In
   * real time, the board's watchdog (link.watchdogMs): past it the board stops the motors anyway.
   */
  deadlineMs: number;
  /** How long the import and `createController(context)` may take [ms, real time]. @default 5000 */
  loadDeadlineMs?: number;
}

/** Default of {@link ControllerThreadOptions.loadDeadlineMs} [ms]. */
export const LOAD_DEADLINE_MS = 5000;

/** Where the controller's thread starts: the built file (from the TypeScript sources, as under vitest, dist/ holds it). */
function workerUrl(): URL {
  const here = import.meta.url;
  return here.endsWith('.ts') ? new URL('../../dist/run/controller-worker.js', here) : new URL('./controller-worker.js', here);
}

const OK: LawResult = Object.freeze({ ok: true });

/** A user's controller running in its own thread, as the loop's ControlLaw. */
export class ControllerThread implements ControlLaw {
  private seq = 0;
  private failure: LawResult | undefined;
  private ended = false;

  private constructor(
    readonly file: string,
    private readonly worker: Worker,
    private readonly ch: Channel,
    private readonly deadlineMs: number,
  ) {}

  /**
   * Starts the thread, which imports `file` and calls its `createController(context)`. Rejects with a
   * ControllerError (an unusable module: exit code 2) or a ControllerFault (no answer within the load
   * deadline, the thread ended, a timer started, an error thrown outside the call).
   */
  static start(file: string, rig: ControllerRig, rateHz: number, opts: ControllerThreadOptions): Promise<ControllerThread> {
    const ch = Channel.create(rig.joints);
    const loadMs = opts.loadDeadlineMs ?? LOAD_DEADLINE_MS;
    const input: ControllerWorkerInput = { file, rig, rateHz, shared: ch.shared };
    const worker = new Worker(workerUrl(), { workerData: input });
    // Never what keeps the process alive (a controller that is stuck, or gone).
    worker.unref();
    return new Promise((resolve, reject) => {
      let settled = false;
      const settle = (e: Error | undefined): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        worker.removeAllListeners('message');
        if (e) {
          void worker.terminate();
          reject(e);
        } else resolve(new ControllerThread(file, worker, ch, opts.deadlineMs));
      };
      const timer = setTimeout(
        () =>
          settle(
            new ControllerFault(
              `${file}: no answer in ${loadMs} ms from the import and createController(context) (an endless loop?): twolink ended its thread`,
            ),
          ),
        loadMs,
      );
      worker.on('message', (m: ControllerWorkerMessage) => {
        if (m.type === 'loaded') settle(undefined);
        else if (m.type === 'error') settle(new ControllerError(m.message));
        else settle(new ControllerFault(m.reason));
      });
      worker.on('error', (e) => settle(new ControllerFault(`${file}: its thread failed: ${e.message}`)));
      worker.on('exit', (code) => settle(new ControllerFault(`${file}: its thread ended (exit code ${code}) while loading`)));
    });
  }

  /** One tick: the sample to the controller's thread, its torques [N m] into `out` (zeros when not ok). Never throws. */
  step(s: LawSample, periodS: number, out: number[]): LawResult {
    const n = this.ch.joints;
    const num = this.ch.num;
    num[0] = s.t;
    num[1] = periodS;
    for (let i = 0; i < n; i++) {
      num[2 + i] = s.q[i]!;
      num[2 + n + i] = s.qd[i]!;
      num[2 + 2 * n + i] = s.qDesired[i]!;
      num[2 + 3 * n + i] = s.qdDesired[i]!;
      num[2 + 4 * n + i] = s.qddDesired[i]!;
    }
    const r = this.call(OP.step, 'update(sample)');
    for (let i = 0; i < n; i++) out[i] = r.ok ? num[this.ch.tau + i]! : 0;
    return r;
  }

  /** The controller's `reset()`; a failure (it threw, no answer) is the result of the next `step`. */
  reset(): void {
    this.call(OP.reset, 'reset()');
  }

  /** Ends the controller's thread (the run is over); resolves once it is gone. */
  close(): Promise<void> {
    if (this.ended) return Promise.resolve();
    this.ended = true;
    const ctl = this.ch.ctl;
    Atomics.store(ctl, C.op, OP.end);
    Atomics.add(ctl, C.req, 1);
    Atomics.notify(ctl, C.req);
    return this.worker.terminate().then(() => undefined);
  }

  /** A request and its answer, within the deadline; a failure is final (the thread is ended). */
  private call(op: number, what: string): LawResult {
    if (this.failure) return this.failure;
    const ctl = this.ch.ctl;
    Atomics.store(ctl, C.op, op);
    const seq = (this.seq = (this.seq + 1) | 0);
    Atomics.store(ctl, C.req, seq);
    Atomics.notify(ctl, C.req);
    const end = performance.now() + this.deadlineMs;
    for (;;) {
      const res = Atomics.load(ctl, C.res);
      if (Atomics.load(ctl, C.fault) !== 0) return this.fail(this.ch.readMessage());
      if (res === seq) break;
      const left = end - performance.now();
      if (left <= 0)
        return this.fail(
          `${this.file}: no answer in ${this.deadlineMs} ms from ${what} (an endless loop?): twolink ended the controller's thread`,
        );
      Atomics.wait(ctl, C.res, res, left);
    }
    return Atomics.load(ctl, C.status) === 0 ? OK : this.fail(this.ch.readMessage());
  }

  private fail(reason: string): LawResult {
    this.failure = Object.freeze({ ok: false, reason });
    void this.close();
    return this.failure;
  }
}
