/**
 * The loop's worker thread: it owns the link (and, with --mock, the simulated rig) and runs the loop
 * with real-time pacing, away from the dashboard and the disk. Rows go to the main thread through the
 * shared ring; events and the result through messages.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { Rig } from '../config/load.js';
import type { PathSpec } from '../model/builtins.js';
import type { Plant } from '../rig/plant.js';
import { RealClock } from '../time/clock.js';
import { LinkError } from '../transport/link.js';
import { openTransport, type Target } from '../transport/open.js';
import type { FeedforwardMode } from './controller.js';
import type { FaultSpec } from './faults.js';
import type { LoopCommand } from './loop.js';
import { RingWriter, type RingBuffers } from './ring.js';
import { RealPacer, runLoop } from './runner.js';

/** What the main thread gives the worker. */
export interface WorkerInput {
  rig: Rig;
  target: Target;
  paths: PathSpec[];
  cycle: boolean;
  park: boolean;
  feedforward: FeedforwardMode;
  rateHz: number;
  ring: RingBuffers;
  faults: FaultSpec[];
  maxSeconds: number;
}

/** Messages from the worker. */
export type WorkerMessage =
  | { type: 'ready'; identity: unknown; describe: string }
  | { type: 'event'; event: unknown }
  | { type: 'result'; stopReason: string; stopOutcome: string; timing: { ticks: number; overruns: number; missed: number; cpu: number; seconds: number }; counters: import('../transport/link.js').LinkCounters }
  | { type: 'error'; name: string; message: string };

/** Messages to the worker. */
export type WorkerCommand = { type: 'command'; command: LoopCommand };

interface MockHandles {
  plant?: Plant;
  unplug?: () => void;
  board?: { faults?: { dropProbability: number; corruptProbability: number; extraLatency: number; silent: boolean }; reset?: () => void; injectRaw?: (b: Uint8Array) => void };
}

function applyFault(f: FaultSpec, mock: MockHandles | undefined): void {
  const plant = mock?.plant;
  const board = mock?.board;
  const joint = (): number => Math.max(0, Number(f.value?.split(':')[0] ?? '1') - 1);
  switch (f.kind) {
    case 'busy': {
      const end = Date.now() + Number(f.value ?? '1') * 1000;
      while (Date.now() < end) {
        // the machine is busy: nothing runs on this thread
      }
      return;
    }
    case 'throw':
      throw new Error(`injected fault (--fault throw@${f.at})`);
    case 'payload':
      plant?.setPayload(Number(f.value ?? '0.2'));
      return;
    case 'stall':
      if (plant) plant.faults.stalled[joint()] = true;
      return;
    case 'slip':
      if (plant) plant.faults.encoderOffset[joint()] += Number(f.value?.split(':')[1] ?? '100');
      return;
    case 'reverse':
      if (plant) plant.faults.encoderReversed[joint()] = true;
      return;
    case 'dead':
      if (plant) plant.faults.motorDead[joint()] = true;
      return;
    case 'sag':
      if (plant) plant.faults.supplyScale = Number(f.value ?? '0.6');
      return;
    case 'drop':
      if (board?.faults) board.faults.dropProbability = Number(f.value ?? '0.01');
      return;
    case 'corrupt':
      if (board?.faults) board.faults.corruptProbability = Number(f.value ?? '0.01');
      return;
    case 'latency':
      if (board?.faults) board.faults.extraLatency = Number(f.value ?? '5') / 1000;
      return;
    case 'unplug':
      mock?.unplug?.();
      return;
    case 'push':
      if (plant) plant.faults.extraTorque[joint()] = Number(f.value?.split(':')[1] ?? '1');
      return;
    case 'silent':
      if (board?.faults) board.faults.silent = true;
      return;
    case 'reset':
      board?.reset?.();
      return;
    case 'garbage': {
      const n = Number(f.value ?? '5000');
      const b = new Uint8Array(n);
      for (let i = 0; i < n; i++) b[i] = (i * 2654435761) >>> 24;
      board?.injectRaw?.(b);
      return;
    }
    case 'longline':
      board?.injectRaw?.(new Uint8Array(Number(f.value ?? '1000000')).fill(0x54));
      return;
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
  try {
    const opened = await openTransport(input.rig, input.target, clock);
    const mock = opened.mock as MockHandles | undefined;
    const ring = new RingWriter(input.ring);
    const pending = input.faults.slice().sort((a, b) => a.at - b.at);
    let loopT0 = -1;
    const result = await runLoop({
      rig: input.rig,
      link: opened.link,
      clock,
      pacer: new RealPacer(clock),
      rateHz: input.rateHz,
      feedforward: input.feedforward,
      paths: input.paths,
      cycle: input.cycle,
      park: input.park,
      maxSeconds: input.maxSeconds,
      sink: (row) => ring.write(row),
      onEvent: (event) => post({ type: 'event', event }),
      onReady: (c) => {
        send = c.send;
        for (const cmd of early.splice(0)) send(cmd);
        post({ type: 'ready', identity: c.identity, describe: opened.describe });
      },
      onTick: (core) => {
        if (loopT0 < 0) loopT0 = clock.now();
        const t = clock.now() - loopT0;
        while (pending.length && pending[0]!.at <= t) applyFault(pending.shift()!, mock);
        void core;
      },
    });
    post({ type: 'result', stopReason: result.stopReason, stopOutcome: result.stopOutcome, timing: result.timing, counters: { ...opened.link.counters } });
    (mock as { dispose?: () => void } | undefined)?.dispose?.();
  } catch (e) {
    const err = e instanceof Error ? e : new Error(String(e));
    post({ type: 'error', name: err instanceof LinkError ? 'LinkError' : err.name, message: err.message });
  }
  // The run is over: end the thread even if a timer or a port listener is still around.
  port.close();
  process.exit(0);
}

void main();
