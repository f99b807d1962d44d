/**
 * The loop's worker thread: it owns the link (and starts the mock rig's own thread with --mock), and
 * runs the loop on the board's samples, away from the dashboard and the disk. Between samples it waits
 * in its event loop: nothing spins. Rows go to the main thread through the shared ring; events and the
 * result through typed messages (messages.ts).
 */
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import type { LoopCommand } from '../control/loop.js';
import type { Link } from '../transport/link.js';
import { RingWriter } from '../control/ring.js';
import { hostFault, internalFault, type StopReason } from '../control/stop.js';
import { armTestCrash, testCrashPlan } from './crash.js';
import { ControllerFault } from '../control/user-controller.js';
import type { InjectionSite } from '../mock/injections.js';
import { RealClock } from '../time/clock.js';
import { processCpuSeconds, requestRealtime, requestRealtimeProcess, taskCpuSeconds, threadId } from '../time/threads.js';
import { LinkError } from '../transport/link.js';
import { StallMonitor } from '../time/stalls.js';
import { composeRun, type Run, type RunSpec } from './compose.js';
import { modeOf, type ModeLaw } from './modes.js';
import type { WorkerCommand, WorkerInput, WorkerMessage } from './messages.js';
import { placeOf } from './target.js';
import { resumeGate } from './resume-gate.js';

/** The host's own part for injections: this thread (busy, throw). */
const HOST_SITE: InjectionSite = {
  name: 'the loop thread',
  host: {
    block: (seconds) => {
      const end = performance.now() + seconds * 1000;
      while (performance.now() < end) {
        // the machine is busy: nothing runs on this thread
      }
    },
    raise: (message) => {
      throw new Error(message);
    },
  },
};

/** Loop commands from the main thread, held until the loop is ready for them; the mode's keys (stiffness, tare, float) go to its law. */
function commandInbox(port: MessagePort, mode: () => ModeLaw | undefined): { ready(send: (c: LoopCommand) => void): void } {
  let send: ((c: LoopCommand) => void) | undefined;
  const early: LoopCommand[] = [];
  port.on('message', (m: WorkerCommand) => {
    if (m.type === 'stiffness') {
      const law = mode()?.impedance;
      if (law && Number.isFinite(m.factor) && m.factor > 0) law.scaleStiffness(m.factor);
      return;
    }
    if (m.type === 'tare') {
      mode()?.impedance?.tare();
      return;
    }
    if (m.type === 'float') {
      const law = mode()?.float;
      if (m.action === 'home') law?.home();
      else law?.setFloat(m.action === 'float');
      return;
    }
    if (m.type !== 'command') return;
    if (send) send(m.command);
    else early.push(m.command);
  });
  return {
    ready: (s) => {
      send = s;
      for (const cmd of early.splice(0)) s(cmd);
    },
  };
}

/** CPU time over the run: the process, this thread, the main thread and the mock's thread. */
function cpuMeter(mockTid: number): () => { hostPct: number; mockPct: number | null; loopPct: number; mainPct: number } {
  const clock = new RealClock();
  const loopTid = threadId();
  const cpu0 = processCpuSeconds();
  const loop0 = taskCpuSeconds(loopTid);
  const main0 = taskCpuSeconds(process.pid);
  const mock0 = mockTid > 0 ? taskCpuSeconds(mockTid) : NaN;
  const wall0 = clock.now();
  return () => {
    const wall = clock.now() - wall0;
    const mockCpu = mockTid > 0 ? taskCpuSeconds(mockTid) - mock0 : NaN;
    const procCpu = processCpuSeconds() - cpu0;
    const pct = (s: number): number => (wall > 0 ? (100 * s) / wall : NaN);
    return {
      hostPct: wall > 0 ? pct(procCpu - (Number.isFinite(mockCpu) ? mockCpu : 0)) : 0,
      mockPct: Number.isFinite(mockCpu) && wall > 0 ? pct(mockCpu) : null,
      loopPct: pct(taskCpuSeconds(loopTid) - loop0),
      mainPct: pct(taskCpuSeconds(process.pid) - main0),
    };
  };
}

/** --rt: every thread but the main one (the loop's, its I/O and GC helpers) and the mock's (`mockTid`, -1 for none), a board being another computer with a priority of its own. */
async function askRealtime(mockTid: number, post: (m: WorkerMessage) => void, normal: readonly number[] = []): Promise<void> {
  const prio = new Map<number, number>([[threadId(), 40]]);
  if (mockTid > 0) prio.set(mockTid, 45);
  post({ type: 'rt', result: await requestRealtimeProcess(39, prio, new Set(normal)) });
}

/** The worker's run (compose.ts): in real time on this thread, the mock in its own or the port; rows to the ring, events and the start to the main thread. */
function runSpec(
  input: WorkerInput,
  post: (m: WorkerMessage) => void,
  inbox: ReturnType<typeof commandInbox>,
  describe: () => string,
  port: MessagePort,
): RunSpec {
  const ring = new RingWriter(input.ring);
  const resume = input.resume;
  return {
    rig: input.rig,
    place: placeOf(input.target, input.rt),
    time: 'real',
    mode: modeOf(input),
    rateHz: input.rateHz,
    feedforward: input.feedforward,
    paths: input.paths,
    cycle: input.cycle,
    park: input.park,
    maxSeconds: input.maxSeconds,
    ...(input.predict !== undefined ? { predict: input.predict } : {}),
    injections: input.injections,
    host: HOST_SITE,
    // --reconnect: the handshake (and a reset board's zero) before the loop moves anything.
    ...(resume ? { gate: (link: Link) => resumeGate(link, input.rig, input.rateHz, resume.before, port, post) } : {}),
    sink: (row) => ring.write(row),
    onEvent: (event) => post({ type: 'event', event }),
    onReady: (c) => {
      inbox.ready(c.send);
      loopSend = c.send;
      post({ type: 'ready', identity: c.identity, describe: describe() });
      const plan = testCrashPlan();
      if (plan?.thread === 'loop') armTestCrash(plan);
    },
  };
}

async function main(): Promise<void> {
  const port = parentPort!;
  const input = workerData as WorkerInput;
  const post = (m: WorkerMessage): void => port.postMessage(m);
  let run: Run | undefined;
  const inbox = commandInbox(port, () => run?.law);
  post({ type: 'thread', tid: threadId() });
  // Proof to the main thread that this thread's event loop runs (a starved thread is not a blocked one).
  const beat = new Int32Array(input.beat);
  setInterval(() => Atomics.add(beat, 0, 1), 50).unref();
  try {
    // --rt from the start: the handshake on a busy machine is the loop's work too, and the mock's
    // thread, created below by this one, inherits its policy. The whole ask (askRealtime) follows.
    if (input.rt) await requestRealtime(threadId(), 40);
    run = await composeRun(runSpec(input, post, inbox, () => run?.composed.describe ?? '', port));
    const { link, end } = run.composed;
    openLink = { link, joints: input.rig.joints };
    const mockTid = end.remote?.tid ?? -1;
    if (input.rt) await askRealtime(mockTid, post, input.normalTids);
    const monitor = new StallMonitor();
    const cpu = cpuMeter(mockTid);
    const result = await run.run();
    loopSend = undefined;
    openLink = undefined;
    const cpuPct = cpu();
    const mockStats = await run.close();
    post({
      type: 'result',
      stop: result.stop,
      stopOutcome: result.stopOutcome,
      timing: result.timing,
      stalls: monitor.stop(),
      cpu: cpuPct,
      ...(mockStats ? { mock: mockStats } : {}),
      counters: { ...link.counters },
      unapplied: result.unapplied,
    });
  } catch (e) {
    const err = e instanceof Error ? e : new Error(String(e));
    post({
      type: 'error',
      name: err instanceof LinkError ? 'LinkError' : err.name,
      message: errorText(err),
      stop: err instanceof ControllerFault ? err.stop : hostFault(errorText(err)),
    });
  }
  await run?.close().catch(() => undefined);
  // The run is over: end the thread even if a timer or a port listener is still around.
  port.close();
  process.exit(0);
}

/** An error's text, whatever it is (a ZodError's message is its issues, which a thread boundary loses). */
function errorText(e: unknown): string {
  if (e instanceof Error) {
    const issues = (e as { issues?: { path?: unknown[]; message?: string }[] }).issues;
    if (Array.isArray(issues) && issues.length)
      return issues.map((i) => `${(i.path ?? []).join('.') || '(value)'}: ${i.message ?? ''}`).join('; ');
    return e.message || e.name;
  }
  return String(e);
}

/**
 * Anything that escapes on this thread (an exception from a timer or a callback, a rejection nobody
 * caught): a bug of twolink's. The loop e-stops with `fault:internal` (the motors zeroed, on Firmata
 * read back) and ends as it ends any run, its result to the main thread; before the loop runs, or if
 * it does not end within 2 s, the motors are zeroed here and the thread ends with the error.
 */
function crash(where: string, e: unknown): void {
  if (crashed) return;
  crashed = true;
  const stop = internalFault(where, e);
  if (loopSend) {
    loopSend({ kind: 'estop', reason: stop });
    setTimeout(() => void last(stop), 2000).unref();
  } else void last(stop);
}

/** The last resort: zeros to the board (and its confirmation, 200 ms at most), the error to the main thread, the thread's end. */
async function last(stop: StopReason): Promise<void> {
  const open = openLink;
  if (open) {
    try {
      open.link.writeDuty(new Array<number>(open.joints).fill(0));
      await Promise.race([open.link.stop(200), new Promise((r) => setTimeout(r, 250))]);
    } catch {
      // the link is gone: nothing more can reach the board
    }
  }
  const text = stop.kind === 'fault' && stop.fault.kind === 'internal' ? stop.fault.message : 'an internal error';
  parentPort?.postMessage({ type: 'error', name: 'Error', message: text, stop } satisfies WorkerMessage);
  process.exit(1);
}

let crashed = false;
/** The loop's command input while it runs (a crash e-stops through it). */
let loopSend: ((c: LoopCommand) => void) | undefined;
/** The link while it is open (a crash before or after the loop zeroes the motors through it). */
let openLink: { link: Link; joints: number } | undefined;
process.on('uncaughtException', (e) => crash('the loop thread', e));
process.on('unhandledRejection', (e) => crash('the loop thread (a promise rejection nobody caught)', e));

void main();
