/**
 * The live view as the main thread holds it: a thread of its own (viz/live-worker.ts) at normal
 * priority with the Foxglove server and the frames' encoding, fed from the loop's shared ring
 * (`attach`). The main thread sends it a message to start or stop reading and otherwise does nothing
 * for it: its counts are in shared memory.
 */
import { Worker } from 'node:worker_threads';
import { FoxgloveServer } from './live.js';
import type { RingBuffers } from '../control/ring.js';
import type { LiveAccess, LiveStats } from './live.js';
import {
  LIVE_STAT,
  LIVE_STAT_SLOTS,
  LiveEngine,
  liveChannels,
  threadCpuNs,
  type LiveCommand,
  type LiveReply,
  type LiveSource,
  type LiveWorkerInput,
} from './live-worker.js';

export type { LiveSource } from './live-worker.js';

/** Where the thread starts: the built file (from the TypeScript sources, as under vitest, dist/ holds it). */
function workerUrl(): URL {
  const here = import.meta.url;
  return here.endsWith('.ts') ? new URL('../../dist/viz/live-worker.js', here) : new URL('./live-worker.js', here);
}

type WaitAsync = (a: Int32Array, i: number, v: number) => { async: false; value: string } | { async: true; value: Promise<string> };

/**
 * Where the view runs: 'thread', a thread of its own polling the ring every POLL_MS; 'main', the main
 * thread, polled by the session's drain (no wake-up of its own: `poll` is called where the main
 * thread already wakes every 20 ms for the dashboard and the recording).
 */
export type LivePlacement = 'thread' | 'main';
/** Where `twolink run|demo --foxglove` runs the view (picked by the bench's figures: docs/foxglove.md, *Cost to the loop*). */
export const LIVE_PLACEMENT: LivePlacement = 'main';

/** The counts both placements share (in a SharedArrayBuffer, LIVE_STAT). */
abstract class LiveCounts {
  protected readonly stat: Int32Array;
  constructor(stats: SharedArrayBuffer) {
    this.stat = new Int32Array(stats);
  }

  /** Clients, messages sent and dropped, connections refused, clients closed and client messages read (as the view last counted them). */
  get stats(): LiveStats {
    const at = (k: keyof typeof LIVE_STAT): number => Atomics.load(this.stat, LIVE_STAT[k]);
    return {
      clients: at('clients'),
      sent: at('sent'),
      dropped: at('dropped'),
      refused: at('refused'),
      closed: at('closed'),
      requests: at('requests'),
      rateClosed: at('rateClosed'),
      handlingMs: at('handlingUs') / 1000,
      cpuSampledNs: at('cpuSampledUs') * 1000,
      cpuSamples: at('cpuSamples'),
    };
  }

  /** Rows the view has read from the ring (modulo 2^31). */
  get rowsRead(): number {
    return Atomics.load(this.stat, LIVE_STAT.rowsRead);
  }

  /** Whether the view is reading the ring (a ring attached and a client subscribed to a changing channel). */
  get streaming(): boolean {
    return Atomics.load(this.stat, LIVE_STAT.streaming) === 1;
  }

  /** Resolves once the view has counted again (after a poll or a change of subscriptions): for waiting on events. */
  changed(): Promise<void> {
    const polls = Atomics.load(this.stat, LIVE_STAT.polls);
    const r = (Atomics as unknown as { waitAsync: WaitAsync }).waitAsync(this.stat, LIVE_STAT.polls, polls);
    return r.async ? r.value.then(() => undefined) : Promise.resolve();
  }

  /** Resolves once `cond` holds, checked each time the view counts. */
  async until(cond: () => boolean): Promise<void> {
    while (!cond()) await this.changed();
  }
}

/** The view on the main thread: the session's drain calls `poll`. */
export class MainLiveView extends LiveCounts {
  readonly placement = 'main';
  /** No thread of its own. */
  readonly tid = -1;
  /** Set when the view failed: it reads and sends nothing more (the run goes on). */
  private failed = false;
  private constructor(
    private readonly engine: LiveEngine,
    stats: SharedArrayBuffer,
    private readonly say: (line: string) => void,
  ) {
    super(stats);
  }

  static async start(src: LiveSource, host: string, port: number, access: LiveAccess = {}): Promise<MainLiveView> {
    const stats = new SharedArrayBuffer(4 * LIVE_STAT_SLOTS);
    const server = await FoxgloveServer.start(host, port, liveChannels(src.tickSchema), access);
    const say = access.say ?? ((line: string) => void process.stderr.write(`${line}\n`));
    return new MainLiveView(new LiveEngine(server, src, new Int32Array(stats), false), stats, say);
  }

  get port(): number {
    return this.engine.server.port;
  }

  attach(ring: RingBuffers): void {
    this.engine.attach(ring);
  }

  detach(): void {
    this.engine.detach();
  }

  /**
   * Reads the rows written since the last poll (nothing unless someone watches), draws and sends. It
   * runs in the session's drain: a failure of the view stops the view, said in one line, never the
   * run (as the view's thread does in the other placement).
   */
  poll(): void {
    if (this.failed) return;
    try {
      this.engine.poll();
    } catch (e) {
      this.failed = true;
      this.say(`twolink: the Foxglove live view stopped: ${e instanceof Error ? e.message : String(e)}`);
      try {
        this.engine.detach();
      } catch {
        // it reads nothing more either way (failed)
      }
    }
  }

  publish(topic: string, data: Uint8Array): void {
    this.engine.publishRaw(topic, data);
  }

  /** The main thread's CPU time [ns] (the view's is part of it). */
  threadCpuNs(): Promise<number> {
    return Promise.resolve(threadCpuNs());
  }

  warm(row: Float64Array, frames: number): Promise<number> {
    return this.engine.warm(row, frames);
  }

  close(): Promise<void> {
    return this.engine.close();
  }
}

/** The view in a thread of its own (viz/live-worker.ts). */
export class ThreadLiveView extends LiveCounts {
  readonly placement = 'thread';
  private asked = 0;
  private readonly answers = new Map<number, (ns: number) => void>();
  private closing: Promise<void> | undefined;
  /** Hears an error that ended the view's thread (the run stops the arm on it: run/crash.ts). */
  onFailure: ((e: Error) => void) | undefined;

  private constructor(
    private readonly worker: Worker,
    stats: SharedArrayBuffer,
    /** The port it listens on. */
    readonly port: number,
    /** The thread's Linux task id (-1 off Linux): it stays at normal priority when the run asks for SCHED_FIFO. */
    readonly tid: number,
  ) {
    super(stats);
    worker.on('message', (m: LiveReply) => {
      if (m.type === 'cpu' || m.type === 'warm') {
        this.answers.get(m.id)?.(m.ns);
        this.answers.delete(m.id);
      }
    });
  }

  /** Starts the thread and its server on host:port (0: any free port); rejects if it cannot listen. */
  static start(src: LiveSource, host: string, port: number, access: Omit<LiveAccess, 'say'> = {}): Promise<ThreadLiveView> {
    const stats = new SharedArrayBuffer(4 * LIVE_STAT_SLOTS);
    const input: LiveWorkerInput = {
      src,
      host,
      port,
      stats,
      access: {
        ...(access.allowOrigins ? { allowOrigins: [...access.allowOrigins] } : {}),
        ...(access.maxClients !== undefined ? { maxClients: access.maxClients } : {}),
        ...(access.rate ? { rate: { ...access.rate } } : {}),
        ...(access.connectRate ? { connectRate: { ...access.connectRate } } : {}),
      },
      liveView: true,
    };
    const worker = new Worker(workerUrl(), { workerData: input });
    return new Promise((resolve, reject) => {
      const fail = (e: Error): void => reject(e);
      worker.once('error', fail);
      worker.once('message', (m: LiveReply) => {
        worker.off('error', fail);
        if (m.type === 'listening') {
          // A failure of the view's thread later (a bug of twolink's): said, and handed to `onFailure`
          // (a run ends with fault:internal, docs/safety.md).
          const view = new ThreadLiveView(worker, stats, m.port, m.tid);
          worker.on('error', (e) => {
            process.stderr.write(`twolink: the Foxglove live view stopped: ${e.message}\n`);
            view.onFailure?.(e);
          });
          resolve(view);
        } else {
          void worker.terminate();
          reject(new Error(m.type === 'failed' ? m.message : `unexpected ${m.type}`));
        }
      });
    });
  }

  /** Reads the rows the loop writes to `ring` from now on (the session's: `session.ringBuffers`). */
  attach(ring: RingBuffers): void {
    this.send({ type: 'attach', ring });
  }

  /** Stops reading the ring. */
  detach(): void {
    this.send({ type: 'detach' });
  }

  /** Nothing: the thread polls on its own. */
  poll(): void {}

  /** Sends `data` on `topic` to its subscribers (the bench fills a stalled client's socket with it). */
  publish(topic: string, data: Uint8Array): void {
    this.send({ type: 'publish', topic, data });
  }

  /** The view thread's CPU time so far [ns] (Linux; NaN elsewhere). */
  threadCpuNs(): Promise<number> {
    const id = ++this.asked;
    return new Promise((resolve) => {
      this.answers.set(id, resolve);
      this.send({ type: 'cpu', id });
    });
  }

  /** The thread's CPU [ns] to draw and send `frames` copies of `row` back to back (the bench's warm figure). */
  warm(row: Float64Array, frames: number): Promise<number> {
    const id = ++this.asked;
    return new Promise((resolve) => {
      this.answers.set(id, resolve);
      this.send({ type: 'warm', id, row, frames });
    });
  }

  private send(m: LiveCommand): void {
    if (!this.closing) this.worker.postMessage(m);
  }

  /** Closes every connection, stops listening, ends the thread. */
  close(): Promise<void> {
    this.closing ??= new Promise<void>((resolve) => {
      this.worker.once('exit', () => resolve());
      this.worker.on('message', (m: LiveReply) => {
        if (m.type === 'closed') void this.worker.terminate();
      });
      this.worker.postMessage({ type: 'close' } satisfies LiveCommand);
    });
    return this.closing;
  }
}

export type LiveView = MainLiveView | ThreadLiveView;

/** Starts the live view where `placement` says. */
export function startLiveView(
  src: LiveSource,
  host: string,
  port: number,
  placement: LivePlacement,
  access: LiveAccess = {},
): Promise<LiveView> {
  return placement === 'main' ? MainLiveView.start(src, host, port, access) : ThreadLiveView.start(src, host, port, access);
}
