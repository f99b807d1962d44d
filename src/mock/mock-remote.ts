/**
 * The host's handle on a mock rig running in its own thread (mock-thread.ts): a serialport stream over
 * the shared-memory cable, injections by message, and the thread's own account of its timing.
 */
import { Worker } from 'node:worker_threads';
import { SerialPortStream } from '@serialport/stream';
import type { MockPart } from '../config/parts.js';
import type { Injection } from './injections.js';
import type { MockThreadCommand, MockThreadInput, MockThreadMessage, MockThreadStats } from './mock-thread.js';
import { boardSilentS, createWire, wireBinding } from './wire.js';
import type { MockWiring } from './wiring.js';

export interface RemoteMock {
  readonly path: string;
  /** The mock thread's Linux task id (-1 if unknown). */
  readonly tid: number;
  openStream(baudRate?: number): Promise<SerialPortStream>;
  /** How long the mock's thread has not run [s] (a busy machine starving it). */
  silentS(): number;
  /** Applies an injection that acts on the rig now (the thread says if this mock cannot take it). */
  inject(i: Injection): void;
  /**
   * Schedules injections on the simulated arm's time, counted from the host's first handshake the board
   * answers (mock-thread.ts scheduleOnPlant); resolves once they are on there. `on.handshake` hears that
   * moment (the machine's monotonic clock [ms]), `on.applied` each injection applied, with the arm's time
   * and the wall's (as the thread saw it) since then [s].
   */
  schedule(injections: readonly Injection[], on: ScheduleListener): Promise<void>;
  /** Stops the mock's thread and resolves with how it fared. */
  stop(): Promise<MockThreadStats | undefined>;
}

/** What hears a schedule's zero (the host's handshake) and its injections as they are applied. */
export interface ScheduleListener {
  handshake(monoMs: number): void;
  applied(i: Injection, plantS: number, wallS: number): void;
}

/** Starts the line-protocol mock rig of `rig` in a thread of its own; `onStarved` hears when its board stood still (starvation.ts). */
export function startRemoteMock(rig: MockPart, wiring?: MockWiring, onStarved?: (ms: number, atS: number) => void): Promise<RemoteMock> {
  const wire = createWire();
  const path = `mock:${rig.name}`;
  const binding = wireBinding(path, wire);
  const worker = new Worker(new URL('./mock-thread.js', import.meta.url), {
    workerData: { rig, wire, ...(wiring ? { wiring } : {}) } satisfies MockThreadInput,
  });
  let stats: MockThreadStats | undefined;
  let listener: ScheduleListener | undefined;
  let onScheduled: (() => void) | undefined;
  let ended: Promise<void> | undefined;
  return new Promise((resolve, reject) => {
    const onEarly = (e: Error): void => reject(new Error(`the mock rig's thread failed to start: ${e.message}`));
    worker.once('error', onEarly);
    worker.on('message', (m: MockThreadMessage) => {
      if (m.type === 'stats') stats = m.stats;
      else if (m.type === 'starved') onStarved?.(m.ms, m.atS);
      else if (m.type === 'refused') process.stderr.write(`twolink: the mock rig refused an injection: ${m.why}\n`);
      else if (m.type === 'injected') listener?.applied(m.injection, m.plantS, m.wallS);
      else if (m.type === 'handshake') listener?.handshake(m.monoMs);
      else if (m.type === 'scheduled') onScheduled?.();
      else if (m.type === 'error') reject(new Error(`the mock rig's thread failed: ${m.message}`));
      else if (m.type === 'ready') {
        worker.off('error', onEarly);
        worker.on('error', () => undefined);
        ended = new Promise((r) => worker.once('exit', () => r()));
        resolve({
          path,
          tid: m.tid,
          openStream: (baudRate = rig.link.baudRate) =>
            new Promise((res, rej) => {
              const s = new SerialPortStream({ binding, path, baudRate, autoOpen: false });
              s.open((err) => (err ? rej(err) : res(s)));
            }),
          silentS: () => boardSilentS(wire),
          inject: (i) => worker.postMessage({ type: 'inject', injection: i } satisfies MockThreadCommand),
          schedule: (injections, l) =>
            new Promise<void>((on) => {
              listener = l;
              onScheduled = on;
              worker.postMessage({ type: 'schedule', injections: [...injections] } satisfies MockThreadCommand);
            }),
          stop: async () => {
            worker.postMessage({ type: 'stop' } satisfies MockThreadCommand);
            const t = setTimeout(() => void worker.terminate(), 2000);
            await ended;
            clearTimeout(t);
            return stats;
          },
        });
      }
    });
  });
}
