/**
 * The live view's thread (started by viz/live-view.ts): the Foxglove server (viz/live.ts) and the
 * frames' encoding, at normal priority, beside the loop's thread (SCHED_FIFO) and the main thread
 * (dashboard, recording), neither of which does any of this work. It reads the loop's shared ring
 * itself (a reader of its own: the main thread's drain is not touched), every POLL_MS while a client
 * is subscribed to a channel that changes (/tf, joint states, path, force, ticks); with none, its
 * timer is stopped and it reads nothing (the latched description costs nothing after it is sent).
 * Of the rows read, it looks at the loop time of each and draws the first of each 1/LIVE_RATE_HZ slot.
 *
 * What it has done is in a shared Int32Array (LIVE_STAT), bumped at the end of each poll and
 * Atomics.notify'd, so the main thread reads the counts without a message and a test can wait for
 * the next poll (an event, not a clock).
 */
import { readFileSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { RingReader, type RingBuffers } from '../control/ring.js';
import { F, TICK_WIDTH } from '../telemetry/tick.js';
import { threadId } from '../time/threads.js';
import { FoxgloveServer, LIVE_RATE_HZ, LIVE_TICK_TOPIC, type LiveAccess } from './live.js';
import { FRAME_MESSAGES, LiveFrame, type FrameMessage } from './live-frame.js';
import { ArmScene, cdrString, jointStatesTopic, sceneChannels, SCENE_TOPICS, type SceneChannel } from './scene.js';
import { armUrdf, type UrdfSource } from './urdf.js';

/** Slots of the shared statistics. */
export const LIVE_STAT = {
  clients: 0,
  sent: 1,
  dropped: 2,
  rowsRead: 3,
  polls: 4,
  streaming: 5,
  refused: 6,
  closed: 7,
  requests: 8,
  rateClosed: 9,
  handlingUs: 10,
  cpuSampledUs: 11,
  cpuSamples: 12,
} as const;
export const LIVE_STAT_SLOTS = 13;
/**
 * How often the thread reads the ring while someone watches [ms]: as often as the session drains it
 * for the dashboard, one or two frames per poll in one write per client.
 */
export const POLL_MS = 20;

/** What the view shows: the arm (URDF, scene) and the tick channel's JSON schema. */
export interface LiveSource extends UrdfSource {
  joints: number;
  /** JSON schema of a tick (record/export.ts tickJsonSchema), as text. */
  tickSchema: string;
}

export interface LiveWorkerInput {
  src: LiveSource;
  host: string;
  port: number;
  stats: SharedArrayBuffer;
  /** Who may connect (the thread says its refusals on stderr). */
  access: Omit<LiveAccess, 'say'>;
  /** Marks the thread's data (this module is also imported where it must not start a server). */
  liveView: true;
}

/** Messages to the thread. */
export type LiveCommand =
  | { type: 'attach'; ring: RingBuffers }
  | { type: 'detach' }
  | { type: 'publish'; topic: string; data: Uint8Array }
  | { type: 'cpu'; id: number }
  | { type: 'warm'; id: number; row: Float64Array; frames: number }
  | { type: 'close' };

/** Messages from the thread. */
export type LiveReply =
  | { type: 'listening'; port: number; tid: number }
  | { type: 'failed'; message: string }
  | { type: 'cpu'; id: number; ns: number }
  | { type: 'warm'; id: number; ns: number }
  | { type: 'closed' };

/** CPU time of the calling thread [ns] (Linux schedstat: time on a CPU, user and system), NaN elsewhere. */
export function threadCpuNs(): number {
  try {
    return Number(readFileSync('/proc/thread-self/schedstat', 'latin1').split(' ')[0]);
  } catch {
    return Number.NaN;
  }
}

/** The channels of the live view: the scene's and the decimated ticks. */
export function liveChannels(tickSchema: string): SceneChannel[] {
  return [
    ...sceneChannels(),
    { topic: LIVE_TICK_TOPIC, schemaName: 'twolink.Tick', schemaEncoding: 'jsonschema', schema: tickSchema, encoding: 'json' },
  ];
}

/** The view in its thread: reads the ring, draws the slots' first rows, sends them. */
export class LiveEngine {
  private readonly scene: ArmScene;
  /** The frame's messages as bytes, written once for all clients. */
  private readonly frame: LiveFrame;
  /** The channel of each of the frame's messages (FRAME_MESSAGES order). */
  private readonly channels: Int32Array;
  /** Per message of the frame, whether some client is subscribed to it (set when subscriptions change). */
  private readonly wanted = new Uint8Array(FRAME_MESSAGES.length);
  private reader: RingReader | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** Polled from outside and someone watches. */
  private polling = false;
  /** Wall-clock ns of loop time 0 (set at the first drawn row), so stamps follow the loop's clock. */
  private startNs: bigint | undefined;
  private readonly onRow = (data: Float64Array, at: number): void => {
    if (!this.scene.accept(data[at + F.t]!)) return;
    // The drawn row, copied out of the ring into the frame's values (one buffer, reused).
    const v = this.frame.v;
    for (let k = 0; k < TICK_WIDTH; k++) v[k] = data[at + k]!;
    this.drawFrame();
  };

  constructor(
    readonly server: FoxgloveServer,
    src: LiveSource,
    private readonly stats: Int32Array,
    /** Whether it polls the ring on its own timer (its thread), or is polled (the main thread's drain). */
    private readonly ownTimer = true,
  ) {
    this.scene = new ArmScene(src, LIVE_RATE_HZ);
    this.frame = new LiveFrame(src, this.scene, LIVE_RATE_HZ);
    const topics: Record<FrameMessage, string> = {
      tf: SCENE_TOPICS.tf,
      measured: jointStatesTopic('measured'),
      desired: jointStatesTopic('desired'),
      twin: jointStatesTopic('twin'),
      path: SCENE_TOPICS.path,
      force: SCENE_TOPICS.force,
      tick: LIVE_TICK_TOPIC,
    };
    this.channels = Int32Array.from(FRAME_MESSAGES, (m) => server.channelId(topics[m]));
    server.flushing = 'manual';
    server.onSubscriptions = () => {
      for (let k = 0; k < FRAME_MESSAGES.length; k++) this.wanted[k] = server.subscribedId(this.channels[k]!) ? 1 : 0;
      // A new subscriber to /tf gets the fixed transforms with the next frame.
      this.frame.resendFixed();
      this.update();
    };
    server.onCounts = () => this.publishStats();
    server.publish(SCENE_TOPICS.description, cdrString(armUrdf(src)), BigInt(Date.now()) * 1_000_000n, true);
  }

  /** Reads `ring` from its newest row on. */
  attach(ring: RingBuffers): void {
    this.reader = new RingReader(ring);
    this.reader.skip();
    this.update();
  }

  detach(): void {
    this.reader = undefined;
    this.update();
  }

  /** Polls the ring while someone is subscribed to a changing channel and a ring is attached; else nothing runs. */
  private update(): void {
    const on = this.reader !== undefined && this.server.wanted;
    if (!this.ownTimer) {
      // Polled from outside: `poll` reads nothing while `on` is false.
      if (on && !this.polling) {
        this.reader!.skip();
        this.scene.restartPath();
      }
      this.polling = on;
      Atomics.store(this.stats, LIVE_STAT.streaming, on ? 1 : 0);
      Atomics.store(this.stats, LIVE_STAT.clients, this.server.stats.clients);
      this.publishStats();
      return;
    }
    Atomics.store(this.stats, LIVE_STAT.streaming, on ? 1 : 0);
    Atomics.store(this.stats, LIVE_STAT.clients, this.server.stats.clients);
    if (on && !this.timer) {
      // What was written while nobody watched is passed over; the path starts again where the arm is.
      this.reader!.skip();
      this.scene.restartPath();
      this.timer = setInterval(() => this.poll(), POLL_MS);
    } else if (!on && this.timer) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
    this.publishStats();
  }

  /** Reads the rows written since the last poll, draws and sends the slots' first ones. */
  poll(): void {
    if (!this.ownTimer && !this.polling) return;
    const n = this.reader?.drainAt(this.onRow) ?? 0;
    this.server.flush();
    Atomics.add(this.stats, LIVE_STAT.rowsRead, n);
    this.publishStats();
  }

  /** Sends `data` on `topic` to its subscribers now (the bench fills a stalled client's socket with it). */
  publishRaw(topic: string, data: Uint8Array): void {
    this.server.publish(topic, data, 0n);
    this.publishStats();
  }

  /** Puts the server's counts in the shared statistics and wakes whoever waits for them. */
  publishStats(): void {
    const s = this.server.stats;
    Atomics.store(this.stats, LIVE_STAT.sent, s.sent);
    Atomics.store(this.stats, LIVE_STAT.dropped, s.dropped);
    Atomics.store(this.stats, LIVE_STAT.refused, s.refused);
    Atomics.store(this.stats, LIVE_STAT.closed, s.closed);
    Atomics.store(this.stats, LIVE_STAT.requests, s.requests);
    Atomics.store(this.stats, LIVE_STAT.rateClosed, s.rateClosed);
    Atomics.store(this.stats, LIVE_STAT.handlingUs, Math.min(2 ** 31 - 1, Math.round(s.handlingMs * 1000)));
    Atomics.store(this.stats, LIVE_STAT.cpuSampledUs, Math.min(2 ** 31 - 1, Math.round(s.cpuSampledNs / 1000)));
    Atomics.store(this.stats, LIVE_STAT.cpuSamples, s.cpuSamples);
    Atomics.add(this.stats, LIVE_STAT.polls, 1);
    Atomics.notify(this.stats, LIVE_STAT.polls);
  }

  /** One drawn row (in the frame's values): the subscribed topics' messages, in one write per client at the end of the poll. */
  private drawFrame(): void {
    const t = this.frame.v[F.t]!;
    this.startNs ??= BigInt(Date.now()) * 1_000_000n - BigInt(Math.round(t * 1e9));
    const ns = this.startNs + BigInt(Math.round(t * 1e9));
    // Only what someone reads is built: Foxglove subscribes to the topics its panels show.
    this.frame.write(Number(ns / 1_000_000_000n), Number(ns % 1_000_000_000n), this.wanted);
    this.server.publishEncoded(this.frame.out.buf, this.frame.ends, this.channels, ns);
  }

  /** `frames` rows drawn and sent back to back (the event loop turning between them), for the bench: this thread's CPU [ns]. */
  async warm(row: Float64Array, frames: number): Promise<number> {
    const r = Float64Array.from(row);
    const cpu0 = threadCpuNs();
    for (let k = 0; k < frames; k++) {
      r[F.t] = r[F.t]! + 1 / LIVE_RATE_HZ;
      this.scene.accept(r[F.t]!);
      this.frame.v.set(r);
      this.drawFrame();
      this.server.flush();
      await new Promise((resolve) => setImmediate(resolve));
    }
    this.publishStats();
    return threadCpuNs() - cpu0;
  }

  close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    return this.server.close();
  }
}

async function main(): Promise<void> {
  const port = parentPort!;
  const input = workerData as LiveWorkerInput;
  const post = (m: LiveReply): void => port.postMessage(m);
  let server: FoxgloveServer;
  try {
    server = await FoxgloveServer.start(input.host, input.port, liveChannels(input.src.tickSchema), input.access);
  } catch (e) {
    post({ type: 'failed', message: (e as Error).message });
    return;
  }
  const engine = new LiveEngine(server, input.src, new Int32Array(input.stats));
  port.on('message', (m: LiveCommand) => {
    if (m.type === 'attach') engine.attach(m.ring);
    else if (m.type === 'detach') engine.detach();
    else if (m.type === 'publish') engine.publishRaw(m.topic, m.data);
    else if (m.type === 'cpu') post({ type: 'cpu', id: m.id, ns: threadCpuNs() });
    else if (m.type === 'warm') void engine.warm(m.row, m.frames).then((ns) => post({ type: 'warm', id: m.id, ns }));
    else if (m.type === 'close') void engine.close().then(() => (post({ type: 'closed' }), port.close()));
  });
  post({ type: 'listening', port: server.port, tid: threadId() });
}

if (parentPort && (workerData as Partial<LiveWorkerInput> | undefined)?.liveView === true) void main();
