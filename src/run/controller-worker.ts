/**
 * The thread a user's controller runs in (controller-thread.ts starts it). It loads the module, then
 * waits on the shared buffer and answers each request of the loop: `update` with the tick's sample,
 * or `reset`. It waits in `Atomics.wait`; after each answer it lets its event loop turn once (off the
 * loop's path: the answer is out already), so that a promise the call left rejected without a handler
 * is seen (node reports those only from its event loop) and is a fault naming the file on the next
 * tick. Timers would still never run: starting one is refused (a fault naming the file), as are
 * `process.exit` and an error thrown outside a call.
 */
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { parentPort, workerData } from 'node:worker_threads';
import { controllerContext, ControllerFault, describe, PluggedController } from '../control/user-controller.js';
import { C, Channel, OP, type ControllerWorkerInput, type ControllerWorkerMessage } from './controller-thread.js';

const input = workerData as ControllerWorkerInput;
const ch = new Channel(input.shared, input.rig.joints);
const post = (m: ControllerWorkerMessage): void => parentPort!.postMessage(m);
let phase: 'loading' | 'serving' | 'ending' = 'loading';

/** What the controller did outside a call: said once, on the shared buffer (the loop) and as a message (the loader). */
function fault(what: string): void {
  if (phase === 'ending' || Atomics.load(ch.ctl, C.fault) !== 0) return;
  const reason = `${input.file}: ${what}`;
  ch.writeMessage(reason);
  Atomics.store(ch.ctl, C.fault, 1);
  Atomics.notify(ch.ctl, C.res);
  post({ type: 'fault', reason });
}

/** process.exit ends this thread only; it is said first. */
function guardExit(): void {
  const exit = process.exit.bind(process);
  process.exit = (code?: number | string | null) => {
    fault(`called process.exit(${code ?? ''}) (a controller must not end the process)`);
    phase = 'ending';
    return exit(code ?? undefined);
  };
  process.on('exit', (code) => {
    if (phase === 'loading')
      fault(`createController(context) returned a promise that never settles (its thread had nothing left to run, exit code ${code})`);
    else fault(`its thread ended (exit code ${code})`);
  });
  process.on('uncaughtException', (e) => fault(`threw outside update and createController (from a timer or a callback): ${describe(e)}`));
  process.on('unhandledRejection', (e) => fault(`a promise rejected and nothing caught it: ${describe(e)}`));
}

/** Timers would never run here: starting one is a fault that names it. */
function guardTimers(): void {
  const require = createRequire(import.meta.url);
  const timers = require('node:timers') as Record<string, unknown>;
  const promises = require('node:timers/promises') as Record<string, unknown>;
  const inert = {
    ref: () => inert,
    unref: () => inert,
    hasRef: () => false,
    refresh: () => inert,
    close: () => inert,
    [Symbol.toPrimitive]: () => 0,
  };
  const said = (name: string): void =>
    fault(
      `started a timer (${name}): a controller runs only when the loop calls createController(context), update(sample) and reset(); its timers and callbacks would never run`,
    );
  for (const name of ['setTimeout', 'setInterval', 'setImmediate']) {
    const refuse = (): typeof inert => {
      said(name);
      return inert;
    };
    (globalThis as Record<string, unknown>)[name] = refuse;
    timers[name] = refuse;
    promises[name] = () => {
      said(`timers/promises ${name}`);
      return new Promise(() => undefined);
    };
  }
  syncBuiltinESMExports();
}

/**
 * Answers the loop's requests until it ends. After each answer, one turn of the event loop (`turn`,
 * the real setImmediate): node reports an unhandled rejection only from there, and without the turn a
 * controller's `update` that leaves a rejected promise behind ran on, and its run ended `done`.
 */
async function serve(p: PluggedController): Promise<void> {
  const n = ch.joints;
  const num = ch.num;
  const ctl = ch.ctl;
  const out = new Array<number>(n).fill(0);
  const slice = (k: number): number[] => Array.from(num.subarray(2 + k * n, 2 + (k + 1) * n));
  let seen = 0;
  for (;;) {
    Atomics.wait(ctl, C.req, seen);
    const seq = Atomics.load(ctl, C.req);
    if (seq === seen) continue;
    seen = seq;
    const op = Atomics.load(ctl, C.op);
    if (op === OP.end) {
      phase = 'ending';
      return;
    }
    let r;
    if (op === OP.reset) r = p.reset();
    else {
      r = p.step(p.fill(num[0]!, slice(0), slice(1), { q: slice(2), qd: slice(3), qdd: slice(4) }), num[1]!, out);
      for (let i = 0; i < n; i++) num[ch.tau + i] = out[i]!;
    }
    if (!r.ok) ch.writeMessage(r.reason);
    Atomics.store(ctl, C.status, r.ok ? 0 : 1);
    Atomics.store(ctl, C.res, seq);
    Atomics.notify(ctl, C.res);
    await new Promise((resolve) => turn(resolve));
    if (Atomics.load(ctl, C.fault) !== 0) return;
  }
}

/** The real setImmediate, kept before guardTimers replaces it. */
const turn = setImmediate;

async function main(): Promise<void> {
  guardExit();
  guardTimers();
  let plugged: PluggedController;
  try {
    plugged = await PluggedController.load(input.file, controllerContext(input.rig, input.rateHz));
  } catch (e) {
    if (e instanceof ControllerFault) fault(e.reason.slice(input.file.length + 2));
    else if (Atomics.load(ch.ctl, C.fault) === 0) post({ type: 'error', message: e instanceof Error ? e.message : String(e) });
    phase = 'ending';
    return;
  }
  // One turn of the event loop, for what createController left behind (a rejected promise) to show.
  await new Promise((resolve) => turn(resolve));
  if (Atomics.load(ch.ctl, C.fault) !== 0) return;
  phase = 'serving';
  post({ type: 'loaded' });
  await serve(plugged);
}

void main();
