/**
 * The loop's worker thread: it owns the link (and starts the mock rig's own thread with --mock), and
 * runs the loop on the board's samples, away from the dashboard and the disk. Between samples it waits
 * in its event loop: nothing spins. Rows go to the main thread through the shared ring; events and the
 * result through typed messages (messages.ts).
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { FaultSpec } from '../rig/faults.js';
import { F } from '../control/tick.js';
import type { LoopCommand } from '../control/loop.js';
import { RingWriter } from '../control/ring.js';
import { runLoop } from '../control/runner.js';
import { isHostFault } from '../rig/fault-effects.js';
import { RealClock } from '../time/clock.js';
import { processCpuSeconds, requestRealtimeProcess, taskCpuSeconds, threadId } from '../time/threads.js';
import { LinkError } from '../transport/link.js';
import { StallMonitor } from '../time/stalls.js';
import { loadControlLaw } from './law.js';
import type { WorkerCommand, WorkerInput, WorkerMessage } from './messages.js';
import { openTarget, type MockHandle } from './target.js';

/** A fault of the host itself, on this thread. */
function hostFault(f: FaultSpec): void {
  if (f.kind === 'busy') {
    const end = performance.now() + Number(f.value ?? '1') * 1000;
    while (performance.now() < end) {
      // the machine is busy: nothing runs on this thread
    }
  } else if (f.kind === 'throw') {
    throw new Error(`injected fault (--fault throw@${f.at})`);
  }
}

async function main(): Promise<void> {
  const port = parentPort!;
  const input = workerData as WorkerInput;
  const clock = new RealClock();
  const post = (m: WorkerMessage): void => port.postMessage(m);
  let send: ((c: LoopCommand) => void) | undefined;
  const early: LoopCommand[] = [];
  port.on('message', (m: WorkerCommand) => {
    if (m.type === 'command') {
      if (send) send(m.command);
      else early.push(m.command);
    }
  });
  let mock: MockHandle | undefined;
  try {
    const law = input.controller ? await loadControlLaw(input.controller, input.rig, input.rateHz) : undefined;
    const opened = await openTarget(input.rig, input.target, clock);
    mock = opened.mock;
    if (input.rt) {
      // Every thread but the main one: the loop's, its I/O and GC helpers, and (a board is another
      // computer, with a priority of its own) the mock's.
      const prio = new Map<number, number>([[threadId(), 40]]);
      if (mock && mock.tid > 0) prio.set(mock.tid, 45);
      const result = await requestRealtimeProcess(39, prio);
      post({ type: 'rt', result });
    }
    const ring = new RingWriter(input.ring);
    const pending = input.faults.slice().sort((a, b) => a.at - b.at);
    const monitor = new StallMonitor();
    const cpu0 = processCpuSeconds();
    const loopTid = threadId();
    const loopCpu0 = taskCpuSeconds(loopTid);
    const mainCpu0 = taskCpuSeconds(process.pid);
    const mockCpu0 = mock && mock.tid > 0 ? taskCpuSeconds(mock.tid) : NaN;
    const wall0 = clock.now();
    const result = await runLoop({
      rig: input.rig,
      link: opened.link,
      clock,
      rateHz: input.rateHz,
      feedforward: input.feedforward,
      paths: input.paths,
      cycle: input.cycle,
      park: input.park,
      maxSeconds: input.maxSeconds,
      boardWatchdog: opened.boardWatchdog, // asked after the handshake
      ...(mock?.silentS ? { boardSilentS: mock.silentS } : {}),
      ...(law ? { law } : {}),
      ...(input.predict !== undefined ? { predict: input.predict } : {}),
      sink: (row) => ring.write(row),
      onEvent: (event) => post({ type: 'event', event }),
      onReady: (c) => {
        send = c.send;
        for (const cmd of early.splice(0)) send(cmd);
        post({ type: 'ready', identity: c.identity, describe: opened.describe });
      },
      onTick: (core) => {
        // Scheduled faults, on the loop's (the board's) time.
        const t = core.row[F.t]!;
        while (pending.length && pending[0]!.at <= t) {
          const f = pending.shift()!;
          if (isHostFault(f.kind)) hostFault(f);
          else mock?.fault(f);
        }
      },
    });
    const wall = clock.now() - wall0;
    const mockCpu = mock && mock.tid > 0 ? taskCpuSeconds(mock.tid) - mockCpu0 : NaN;
    const procCpu = processCpuSeconds() - cpu0;
    const loopCpu = taskCpuSeconds(loopTid) - loopCpu0;
    const mainCpu = taskCpuSeconds(process.pid) - mainCpu0;
    const mockStats = await mock?.stop();
    mock = undefined;
    const hostPct = wall > 0 ? (100 * (procCpu - (Number.isFinite(mockCpu) ? mockCpu : 0))) / wall : 0;
    post({
      type: 'result',
      stopReason: result.stopReason,
      stopOutcome: result.stopOutcome,
      timing: result.timing,
      stalls: monitor.stop(),
      cpu: {
        hostPct,
        mockPct: Number.isFinite(mockCpu) && wall > 0 ? (100 * mockCpu) / wall : null,
        loopPct: wall > 0 ? (100 * loopCpu) / wall : NaN,
        mainPct: wall > 0 ? (100 * mainCpu) / wall : NaN,
      },
      ...(mockStats ? { mock: mockStats } : {}),
      counters: { ...opened.link.counters },
    });
  } catch (e) {
    const err = e instanceof Error ? e : new Error(String(e));
    post({ type: 'error', name: err instanceof LinkError ? 'LinkError' : err.name, message: errorText(err) });
  }
  await mock?.stop().catch(() => undefined);
  // The run is over: end the thread even if a timer or a port listener is still around.
  port.close();
  process.exit(0);
}

/** An error's text, whatever it is (a ZodError's message is its issues, which a thread boundary loses). */
function errorText(e: unknown): string {
  if (e instanceof Error) {
    const issues = (e as { issues?: { path?: unknown[]; message?: string }[] }).issues;
    if (Array.isArray(issues) && issues.length) return issues.map((i) => `${(i.path ?? []).join('.') || '(value)'}: ${i.message ?? ''}`).join('; ');
    return e.message || e.name;
  }
  return String(e);
}

// Anything that escapes: say what it was before the thread ends (the main thread reports it).
process.on('uncaughtException', (e) => {
  parentPort?.postMessage({ type: 'error', name: e instanceof Error ? e.name : 'Error', message: `the loop thread died: ${errorText(e)}` } satisfies WorkerMessage);
  process.exit(1);
});

void main();
