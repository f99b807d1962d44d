/**
 * The live view's Foxglove WebSocket server (protocol v1). It runs in a thread of its own at normal
 * priority (viz/live-worker.ts, started by viz/live-view.ts), which reads the loop's shared ring as the
 * main thread does for the dashboard: the loop never waits for it (the loop thread only writes the
 * ring), the main thread (dashboard, recording) does none of its work, the rows are decimated to
 * LIVE_RATE_HZ of the loop's clock, and a client that reads too slowly loses frames (never the run's ticks).
 *
 * The wire format, from foxglove/ws-protocol docs/spec.md (v1): the client offers subprotocols in
 * the handshake and the server picks one it speaks; the older clients offer `foxglove.websocket.v1`,
 * Foxglove's SDK servers answer `foxglove.sdk.v1` (seen in foxglove_bridge 3.x users' clients, which
 * offer both) with the same messages, so either is accepted. On connection the server sends a JSON
 * `serverInfo` {op, name, capabilities, metadata, sessionId}, then `advertise` {op, channels: [{id,
 * topic, encoding, schemaName, schema, schemaEncoding}]}. The client sends `subscribe`
 * {subscriptions: [{id, channelId}]} and `unsubscribe` {subscriptionIds}. Messages go out binary:
 * opcode 0x01, uint32 subscription id, uint64 receive timestamp [ns], the payload; integers
 * little-endian. There is no TypeScript server in Foxglove's current SDK and @foxglove/ws-protocol is
 * in maintenance mode, so this speaks the protocol itself on the `ws` package.
 */
import { WebSocketServer, type WebSocket } from 'ws';
import { VERSION } from '../version.js';
import { TICK_TOPIC, type SceneChannel } from './scene.js';

/** The subprotocols accepted, the SDK's name first. */
export const FOXGLOVE_SUBPROTOCOLS = ['foxglove.sdk.v1', 'foxglove.websocket.v1'] as const;
/** A client with more than this queued [bytes] gets no new frames until it has read them. */
export const MAX_BUFFERED_BYTES = 256 * 1024;
/** Bytes of the pool frames are cut from. */
const POOL_BYTES = 256 * 1024;
/**
 * Rate of the live view by the loop's clock [Hz]: what Foxglove draws (it renders at most ~60 frames
 * a second), at the least main-thread CPU; recordings keep SCENE_RATE_HZ.
 */
export const LIVE_RATE_HZ = 60;
/** The tick channel of the live view (decimated like the scene), for plots: the MCAP's tick topic. */
export const LIVE_TICK_TOPIC = TICK_TOPIC;

interface Client {
  ws: WebSocket;
  /** channel id -> subscription id */
  subs: Map<number, number>;
  /** The same per channel id (-1: none), rebuilt when subscriptions change: what a frame reads. */
  subIds: Float64Array;
}

/** What the server has done, for the bench and the tests. */
export interface LiveStats {
  clients: number;
  /** Messages sent to clients. */
  sent: number;
  /** Messages not sent because a client had not read the earlier ones. */
  dropped: number;
}

/** A Foxglove WebSocket server with fixed channels; `latched` messages go to every new subscriber. */
export class FoxgloveServer {
  private readonly clients = new Set<Client>();
  private readonly ids = new Map<string, number>();
  private readonly latched = new Map<number, { data: Uint8Array; ns: bigint }>();
  /** Subscribers per channel id (index 0 unused), counted when subscriptions change, not per frame. */
  private readonly counts: Int32Array;
  /** Subscriptions to channels that are not latched (those that need frames built). */
  private streaming = 0;
  readonly stats: LiveStats = { clients: 0, sent: 0, dropped: 0 };
  /** Called when a client subscribes, unsubscribes or goes (the live view starts or stops reading the ring). */
  onSubscriptions: () => void = () => undefined;
  /** Frames are written at the end of the event-loop turn (setImmediate), or when the owner calls flush() ('manual'). */
  flushing: 'turn' | 'manual' = 'turn';

  private constructor(
    private readonly wss: WebSocketServer,
    private readonly channels: readonly SceneChannel[],
  ) {
    channels.forEach((c, i) => this.ids.set(c.topic, i + 1));
    this.counts = new Int32Array(channels.length + 1);
    wss.on('connection', (ws) => this.connect(ws));
  }

  /** Listens on host:port (0: any free port); rejects if it cannot (the port is taken). */
  static start(host: string, port: number, channels: readonly SceneChannel[]): Promise<FoxgloveServer> {
    return new Promise((resolve, reject) => {
      const wss = new WebSocketServer({
        host,
        port,
        handleProtocols: (offered) => FOXGLOVE_SUBPROTOCOLS.find((p) => offered.has(p)) ?? false,
        // Frames are small JSON; compressing them costs CPU on the main thread for little.
        perMessageDeflate: false,
        // Clients send only small JSON requests: a larger frame closes their connection.
        maxPayload: 64 * 1024,
      });
      wss.once('error', reject);
      wss.once('listening', () => {
        wss.off('error', reject);
        // A failure after start (a client's broken socket) is that client's, never the run's.
        wss.on('error', () => undefined);
        resolve(new FoxgloveServer(wss, channels));
      });
    });
  }

  /** The port it listens on. */
  get port(): number {
    const a = this.wss.address();
    return typeof a === 'object' && a ? a.port : 0;
  }

  /** Whether any client is subscribed to a channel that is not latched (else there is nothing to build). */
  get wanted(): boolean {
    return this.streaming > 0;
  }

  /** Whether any client is subscribed to `topic`. */
  subscribed(topic: string): boolean {
    const channel = this.ids.get(topic);
    return channel !== undefined && this.counts[channel]! > 0;
  }

  /** Recounts the subscriptions (on a change, never per frame) and tells the owner. */
  private recount(): void {
    this.counts.fill(0);
    this.streaming = 0;
    for (const c of this.clients) {
      c.subIds.fill(-1);
      for (const [ch, id] of c.subs) c.subIds[ch] = id;
      for (const ch of c.subs.keys()) {
        this.counts[ch]!++;
        if (!this.latched.has(ch)) this.streaming++;
      }
    }
    this.onSubscriptions();
  }

  private connect(ws: WebSocket): void {
    ws.on('error', () => undefined);
    if (!ws.protocol) {
      ws.close(1002, `offer the subprotocol ${FOXGLOVE_SUBPROTOCOLS.join(' or ')}`);
      return;
    }
    const client: Client = { ws, subs: new Map(), subIds: new Float64Array(this.channels.length + 1).fill(-1) };
    this.clients.add(client);
    this.stats.clients = this.clients.size;
    ws.on('close', () => {
      this.clients.delete(client);
      this.stats.clients = this.clients.size;
      this.recount();
    });
    ws.on('message', (data, isBinary) => {
      if (!isBinary) this.onText(client, String(data));
    });
    ws.send(JSON.stringify({ op: 'serverInfo', name: `twolink ${VERSION}`, capabilities: [], metadata: { rateHz: String(LIVE_RATE_HZ) }, sessionId: String(Date.now()) }));
    ws.send(
      JSON.stringify({
        op: 'advertise',
        channels: this.channels.map((c, i) => ({ id: i + 1, topic: c.topic, encoding: c.encoding, schemaName: c.schemaName, schema: c.schema, schemaEncoding: c.schemaEncoding })),
      }),
    );
  }

  private onText(client: Client, text: string): void {
    let m: { op?: unknown; subscriptions?: unknown; subscriptionIds?: unknown };
    try {
      m = JSON.parse(text) as typeof m;
    } catch {
      client.ws.send(JSON.stringify({ op: 'status', level: 2, message: 'not JSON' }));
      return;
    }
    if (m.op === 'subscribe' && Array.isArray(m.subscriptions)) {
      for (const s of m.subscriptions as { id?: unknown; channelId?: unknown }[]) {
        if (typeof s.id !== 'number' || typeof s.channelId !== 'number' || !(s.channelId >= 1 && s.channelId <= this.channels.length)) continue;
        client.subs.set(s.channelId, s.id);
        const l = this.latched.get(s.channelId);
        if (l) this.sendTo(client, s.channelId, l.data, l.ns);
      }
      this.recount();
    } else if (m.op === 'unsubscribe' && Array.isArray(m.subscriptionIds)) {
      for (const id of m.subscriptionIds) for (const [ch, sid] of client.subs) if (sid === id) client.subs.delete(ch);
      this.recount();
    }
  }

  private sendTo(client: Client, channel: number, data: Uint8Array, ns: bigint): void {
    const sub = client.subs.get(channel);
    if (sub === undefined) return;
    if (client.ws.readyState !== client.ws.OPEN || client.ws.bufferedAmount > MAX_BUFFERED_BYTES) {
      this.stats.dropped++;
      return;
    }
    const frame = Buffer.allocUnsafe(13 + data.length);
    frame[0] = 0x01;
    frame.writeUInt32LE(sub, 1);
    frame.writeBigUInt64LE(ns, 5);
    frame.set(data, 13);
    client.ws.send(frame);
    this.stats.sent++;
  }

  /** The id of `topic`'s channel (0: none). */
  channelId(topic: string): number {
    return this.ids.get(topic) ?? 0;
  }

  /** Whether any client is subscribed to the channel `id` (counted when subscriptions change). */
  subscribedId(id: number): boolean {
    return this.counts[id]! > 0;
  }

  /**
   * Sends one drawn row's messages, encoded once for all clients (viz/live-frame.ts): message k is
   * `bytes` from the previous message's end to `ends[k]` (-1: not in this frame), on channel
   * `channels[k]`. For each client, its messages go in one buffer and one write to its socket, each
   * as its own WebSocket binary message (RFC 6455 5.2: FIN + opcode 2, an unmasked length of 7,
   * 7+16 or 7+64 bits) carrying the v1 message frame. Sent through ws, the 8 messages of a frame took
   * 16 stream writes and most of the live view's CPU at 60 Hz; this writes whole frames (no
   * compression: perMessageDeflate is off) beside ws's own control frames, which it also writes
   * whole, and the frames of one poll in one system call (queue). A client with more than
   * MAX_BUFFERED_BYTES unread loses the frame.
   */
  publishEncoded(bytes: Buffer, ends: Int32Array, channels: Int32Array, ns: bigint): void {
    if (this.clients.size === 0) return;
    // The stamp's two 32-bit halves, once per frame (writeBigUInt64LE makes BigInts per call).
    const nsLo = Number(ns & 0xffffffffn);
    const nsHi = Number(ns >> 32n);
    for (const c of this.clients) {
      const subIds = c.subIds;
      let size = 0;
      let count = 0;
      let start = 0;
      for (let i = 0; i < ends.length; i++) {
        const end = ends[i]!;
        if (end < 0) continue;
        if (subIds[channels[i]!]! >= 0) {
          const payload = 13 + end - start;
          size += wsHeaderBytes(payload) + payload;
          count++;
        }
        start = end;
      }
      if (count === 0) continue;
      if (c.ws.readyState !== c.ws.OPEN || c.ws.bufferedAmount > MAX_BUFFERED_BYTES) {
        this.stats.dropped += count;
        continue;
      }
      const buf = this.take(size);
      let at = 0;
      start = 0;
      for (let i = 0; i < ends.length; i++) {
        const end = ends[i]!;
        if (end < 0) continue;
        const sub = subIds[channels[i]!]!;
        if (sub >= 0) {
          at = writeWsHeader(buf, at, 13 + end - start);
          buf[at] = 0x01;
          buf.writeUInt32LE(sub, at + 1);
          buf.writeUInt32LE(nsLo, at + 5);
          buf.writeUInt32LE(nsHi, at + 9);
          at += 13;
          at += bytes.copy(buf, at, start, end);
        }
        start = end;
      }
      this.queue(c, buf);
      this.stats.sent += count;
    }
  }

  /** Frames waiting for the end of this event-loop turn, per client. */
  private pending = new Map<Client, Buffer[]>();
  private pool = Buffer.allocUnsafe(POOL_BYTES);
  private poolAt = 0;

  /** `size` bytes from a pool (as Buffer.allocUnsafe does for small ones): a frame is ~6 kB, one ArrayBuffer each was garbage at 60 Hz. */
  private take(size: number): Buffer {
    if (size > POOL_BYTES / 8) return Buffer.allocUnsafe(size);
    if (this.poolAt + size > POOL_BYTES) {
      this.pool = Buffer.allocUnsafe(POOL_BYTES);
      this.poolAt = 0;
    }
    const b = this.pool.subarray(this.poolAt, this.poolAt + size);
    this.poolAt += (size + 7) & ~7;
    return b;
  }

  /**
   * Writes `buf` to the client at the end of this event-loop turn, with the other frames of the turn
   * in one write: the session drains every 20 ms, one or two frames at 60 Hz, in one system call.
   */
  private queue(c: Client, buf: Buffer): void {
    const list = this.pending.get(c);
    if (list) return void list.push(buf);
    if (this.pending.size === 0 && this.flushing === 'turn') setImmediate(() => this.flush());
    this.pending.set(c, [buf]);
  }

  /** Writes the frames waiting, one write per client. */
  flush(): void {
    if (this.pending.size === 0) return;
    const pending = this.pending;
    this.pending = new Map();
    for (const [c, list] of pending) {
      const socket = (c.ws as unknown as { _socket?: { write(b: Uint8Array): boolean } })._socket;
      if (c.ws.readyState !== c.ws.OPEN || !socket) continue;
      socket.write(list.length === 1 ? list[0]! : Buffer.concat(list));
    }
  }

  /** Sends a message on `topic` to its subscribers (`latch`: and to every later one). */
  publish(topic: string, data: Uint8Array, ns: bigint, latch = false): void {
    const channel = this.ids.get(topic);
    if (channel === undefined) throw new Error(`no channel ${topic}`);
    if (latch) this.latched.set(channel, { data, ns });
    for (const c of this.clients) this.sendTo(c, channel, data, ns);
  }

  /** Closes every connection and stops listening. */
  close(): Promise<void> {
    for (const c of this.clients) c.ws.terminate();
    return new Promise((resolve) => this.wss.close(() => resolve()));
  }
}

/** Bytes of a server's (unmasked) WebSocket frame header for a payload of `n` bytes. */
function wsHeaderBytes(n: number): number {
  return n < 126 ? 2 : n < 65536 ? 4 : 10;
}

/** Writes the header of a final, unmasked binary WebSocket frame of `n` bytes at `at`; returns the offset after it. */
function writeWsHeader(buf: Buffer, at: number, n: number): number {
  buf[at] = 0x82;
  if (n < 126) {
    buf[at + 1] = n;
    return at + 2;
  }
  if (n < 65536) {
    buf[at + 1] = 126;
    buf.writeUInt16BE(n, at + 2);
    return at + 4;
  }
  buf[at + 1] = 127;
  buf.writeBigUInt64BE(BigInt(n), at + 2);
  return at + 10;
}
