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
import { FOXGLOVE_APP_ORIGINS, OP_CAPABILITY, parseClientBinary, parseClientText, utf8Cut, type ClientMessage } from './live-protocol.js';
import { TokenBucket } from './token-bucket.js';
import { cpuReadCost, threadCpuNs } from './thread-cpu.js';
import { wsHeaderBytes, writeWsHeader } from './ws-frame.js';

/** The subprotocols accepted, the SDK's name first. */
export const FOXGLOVE_SUBPROTOCOLS = ['foxglove.sdk.v1', 'foxglove.websocket.v1'] as const;
/** A client with more than this queued [bytes] gets no new frames, status replies or pongs until it has read them. */
export const MAX_BUFFERED_BYTES = 256 * 1024;
/** Clients connected at once, at most (a few Foxglove windows and tools, with room to spare); the next is refused with HTTP 503 and a reason. */
export const MAX_CLIENTS = 8;
/** The largest message a client may send [bytes]: its requests are small JSON; a larger one closes it (1009). */
export const MAX_CLIENT_MESSAGE_BYTES = 64 * 1024;
/**
 * Each client's message budget, a token bucket: `burst` tokens, refilled at `perSecond`; a message
 * (text, binary or ping) costs 1 token plus 1 per `bytesPerToken` bytes, so a client may send 100
 * small requests a second with bursts of 200 (Foxglove sends a handful when a layout opens or a panel
 * changes its topics), or about 100 KiB a second of JSON. A client over it is closed (1008, the rate
 * named) and said once on stderr. What it bounds: the main thread's time for one client's messages,
 * at most `burst` of them in a turn and `perSecond` a second (each a JSON parse and a schema check
 * of at most MAX_CLIENT_MESSAGE_BYTES; docs/foxglove.md, *A client's rate*).
 */
export const CLIENT_RATE = { burst: 200, perSecond: 100, bytesPerToken: 1024 } as const;
/**
 * New connections, all clients together (a token bucket): a client closed for its rate or its
 * messages could otherwise reconnect at once, each handshake costing an HTTP parse, a SHA-1 and the
 * server's info and channels. Past it a handshake is refused with HTTP 503 and the reason.
 */
export const CONNECT_RATE = { burst: 40, perSecond: 20 } as const;
/** A client closed by the server is cut off this long after its close frame if it has not closed by then [ms] (its socket is no longer read meanwhile). */
const CLOSE_GRACE_MS = 1000;
/** Messages a client closed by the server may still send (it had not read the close yet) before its socket is no longer read. */
const SENT_AFTER_CLOSE = 64;
/** Every this many client messages, the CPU time of handling one is sampled (LiveStats.cpuSampledNs). */
const CPU_SAMPLE_EVERY = 16;
/** Lines of each kind the server says on stderr (refused origins, closed clients); past that it counts them, and says so once. */
const NOTES_PER_KIND = 20;
/** WebSocket close codes (RFC 6455 7.4.1): a message that violates the policy (the protocol's schema); the server is full. */
const CLOSE_POLICY = 1008;
const CLOSE_INTERNAL = 1011;
const CLOSE_TRY_LATER = 1013;
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
  /** Closed by the server for a bad message (its later messages are not read). */
  closing: boolean;
  /** channel id -> subscription id */
  subs: Map<number, number>;
  /** The same per channel id (-1: none), rebuilt when subscriptions change: what a frame reads. */
  subIds: Float64Array;
  /** Its message budget (CLIENT_RATE). */
  budget: TokenBucket;
  /** Messages it sent after the server closed it (not read). */
  afterClose: number;
}

/** What the server has done, for the bench and the tests. */
export interface LiveStats {
  clients: number;
  /** Messages sent to clients. */
  sent: number;
  /** Messages not sent because a client had not read the earlier ones (frames, status replies, pongs). */
  dropped: number;
  /** Connections refused at the handshake (an origin not allowed, too many clients). */
  refused: number;
  /** Clients closed for a message that is not a client operation of the protocol. */
  closed: number;
  /** Client messages read (valid or not, pings included). */
  requests: number;
  /** Clients closed for their message rate (CLIENT_RATE; not in `closed`). */
  rateClosed: number;
  /** Wall time the server spent handling client messages and pings, from their arrival to their reply queued [ms] (the main thread's, with the view on it; preemption included). */
  handlingMs: number;
  /** The thread's CPU time handling the sampled messages (every CPU_SAMPLE_EVERY-th) [ns], and how many were sampled. */
  cpuSampledNs: number;
  cpuSamples: number;
}

/** Who may connect, and where the server says what it refused. */
export interface LiveAccess {
  /** Origins allowed beside FOXGLOVE_APP_ORIGINS and clients that send none (checked: viz/live-protocol.ts checkOrigin). */
  allowOrigins?: readonly string[];
  /** @default MAX_CLIENTS */
  maxClients?: number;
  /** One line for the operator (no newline). @default a line on stderr */
  say?: (line: string) => void;
  /** Each client's message budget. @default CLIENT_RATE */
  rate?: { burst: number; perSecond: number };
  /** New connections a second, all clients together. @default CONNECT_RATE */
  connectRate?: { burst: number; perSecond: number };
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
  readonly stats: LiveStats = {
    clients: 0,
    sent: 0,
    dropped: 0,
    refused: 0,
    closed: 0,
    requests: 0,
    rateClosed: 0,
    handlingMs: 0,
    cpuSampledNs: 0,
    cpuSamples: 0,
  };
  /** Lines said per kind (NOTES_PER_KIND each). */
  private readonly notes = new Map<string, number>();
  /** Called when a client subscribes, unsubscribes or goes (the live view starts or stops reading the ring). */
  onSubscriptions: () => void = () => undefined;
  /** Called when the counts of refusals, closures and client messages change (the owner publishes them). */
  onCounts: () => void = () => undefined;
  /** Frames are written at the end of the event-loop turn (setImmediate), or when the owner calls flush() ('manual'). */
  flushing: 'turn' | 'manual' = 'turn';

  private readonly origins: ReadonlySet<string>;
  private readonly maxClients: number;
  private readonly say: (line: string) => void;
  private readonly rate: { burst: number; perSecond: number };
  private readonly connects: TokenBucket;
  /** The server's first two messages, the same for every client but the session id (made once, not per handshake). */
  private readonly hello: { info: string; advertise: string };
  /** The CPU cost of reading the thread's CPU time [ns] (-1: not readable here), subtracted from the samples. */
  private readonly cpuReadNs = cpuReadCost();

  private constructor(
    private readonly wss: WebSocketServer,
    private readonly channels: readonly SceneChannel[],
    access: LiveAccess,
  ) {
    channels.forEach((c, i) => this.ids.set(c.topic, i + 1));
    this.counts = new Int32Array(channels.length + 1);
    this.origins = new Set([...FOXGLOVE_APP_ORIGINS, ...(access.allowOrigins ?? []).map((o) => o.toLowerCase())]);
    this.maxClients = access.maxClients ?? MAX_CLIENTS;
    this.say = access.say ?? ((line) => void process.stderr.write(`${line}\n`));
    this.rate = access.rate ?? CLIENT_RATE;
    const c = access.connectRate ?? CONNECT_RATE;
    this.connects = new TokenBucket(c.burst, c.perSecond, performance.now());
    this.hello = {
      info: JSON.stringify({
        op: 'serverInfo',
        name: `twolink ${VERSION}`,
        capabilities: [],
        metadata: { rateHz: String(LIVE_RATE_HZ) },
        sessionId: String(Date.now()),
      }),
      advertise: JSON.stringify({
        op: 'advertise',
        channels: channels.map((ch, i) => ({
          id: i + 1,
          topic: ch.topic,
          encoding: ch.encoding,
          schemaName: ch.schemaName,
          schema: ch.schema,
          schemaEncoding: ch.schemaEncoding,
        })),
      }),
    };
    wss.on('connection', (ws) => {
      try {
        this.connect(ws);
      } catch (e) {
        // Whatever goes wrong with one client is that client's, never the run's.
        this.note('internal', `closed a client: ${(e as Error).message}`);
        ws.terminate();
      }
    });
  }

  /** Listens on host:port (0: any free port); rejects if it cannot (the port is taken). */
  static start(host: string, port: number, channels: readonly SceneChannel[], access: LiveAccess = {}): Promise<FoxgloveServer> {
    return new Promise((resolve, reject) => {
      let server: FoxgloveServer | undefined;
      const wss = new WebSocketServer({
        host,
        port,
        handleProtocols: (offered) => FOXGLOVE_SUBPROTOCOLS.find((p) => offered.has(p)) ?? false,
        // Frames are small JSON; compressing them costs CPU on the main thread for little.
        perMessageDeflate: false,
        // Clients send only small JSON requests: a larger frame closes their connection.
        maxPayload: MAX_CLIENT_MESSAGE_BYTES,
        // Pongs are replies too: answered only while the client reads (onPing), never queued without bound.
        autoPong: false,
        // Origin and the client cap, before the upgrade (refused with an HTTP status and a reason).
        verifyClient: (info, done) => {
          // (The server exists once listening: no handshake comes before.)
          const why = server ? server.refusal(info.origin) : { status: 503, reason: 'starting' };
          if (why === undefined) return done(true);
          done(false, why.status, why.reason);
        },
      });
      wss.once('error', reject);
      wss.once('listening', () => {
        wss.off('error', reject);
        // A failure after start (a client's broken socket) is that client's, never the run's.
        wss.on('error', () => undefined);
        server = new FoxgloveServer(wss, channels, access);
        resolve(server);
      });
    });
  }

  /** Why a handshake from `origin` (undefined: no Origin header) is refused now, or undefined. */
  private refusal(origin: string | undefined): { status: number; reason: string } | undefined {
    if (origin !== undefined && !this.origins.has(origin.toLowerCase())) {
      this.stats.refused++;
      this.onCounts();
      const shown = JSON.stringify(utf8Cut(origin, 100));
      this.note(
        'origin',
        `refused a connection from origin ${shown} (allowed: no Origin header, ${[...this.origins].join(', ')}; add one with --foxglove-allow-origin)`,
      );
      return { status: 403, reason: `origin ${shown} is not allowed (twolink --foxglove-allow-origin adds one)` };
    }
    if (this.clients.size >= this.maxClients) {
      this.stats.refused++;
      this.onCounts();
      this.note('full', `refused a connection: ${this.maxClients} clients are connected (the most at once)`);
      return { status: 503, reason: `${this.maxClients} clients are connected, the most at once` };
    }
    if (!this.connects.take(1, performance.now())) {
      this.stats.refused++;
      this.onCounts();
      const rate = `more than ${this.connects.perSecond} new connections a second (bursts of ${this.connects.burst})`;
      this.note('connect-rate', `refused a connection: ${rate}`);
      return { status: 503, reason: `${rate}: try again later` };
    }
    return undefined;
  }

  /** Says `line` on stderr (prefixed), at most NOTES_PER_KIND times per kind, then once that it stops saying them. */
  private note(kind: string, line: string): void {
    const n = (this.notes.get(kind) ?? 0) + 1;
    this.notes.set(kind, n);
    if (n <= NOTES_PER_KIND) this.say(`twolink: Foxglove live view: ${line}`);
    else if (n === NOTES_PER_KIND + 1) this.say(`twolink: Foxglove live view: more of these (${kind}) are counted, not said`);
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
    if (this.clients.size >= this.maxClients) {
      // Handshakes that passed the check together: the first ones in are served.
      this.stats.refused++;
      this.onCounts();
      this.note('full', `refused a connection: ${this.maxClients} clients are connected (the most at once)`);
      ws.close(CLOSE_TRY_LATER, `${this.maxClients} clients are connected, the most at once`);
      return;
    }
    const client: Client = {
      ws,
      closing: false,
      subs: new Map(),
      subIds: new Float64Array(this.channels.length + 1).fill(-1),
      budget: new TokenBucket(this.rate.burst, this.rate.perSecond, performance.now()),
      afterClose: 0,
    };
    this.clients.add(client);
    this.stats.clients = this.clients.size;
    ws.on('close', () => {
      this.clients.delete(client);
      this.stats.clients = this.clients.size;
      this.recount();
    });
    ws.on('message', (data, isBinary) => {
      if (this.closedFor(client)) return;
      const bytes = Array.isArray(data) ? Buffer.concat(data) : data instanceof ArrayBuffer ? Buffer.from(data) : data;
      this.timed(() => {
        try {
          if (this.withinRate(client, bytes.length))
            this.onMessage(client, isBinary ? parseClientBinary(bytes) : parseClientText(bytes.toString('utf8')));
        } catch (e) {
          // A fault of ours with one client's message closes that client, never the run.
          this.drop(client, CLOSE_INTERNAL, 'internal', `the server failed on its message: ${(e as Error).message}`);
        }
      });
      this.onCounts();
    });
    ws.on('ping', (data) => {
      if (this.closedFor(client)) return;
      this.timed(() => {
        if (this.withinRate(client, data.length)) this.pong(client, data);
      });
    });
    ws.send(this.hello.info);
    ws.send(this.hello.advertise);
  }

  /**
   * Whether `client` was closed by the server (what it sends is not read). A client that still sends
   * SENT_AFTER_CLOSE messages after its close frame is flooding: its socket is no longer read
   * (ws.pause) until it is cut off (CLOSE_GRACE_MS); one that stops (a few sent before it read the
   * close are not), as clients do, finishes its close handshake at once.
   */
  private closedFor(client: Client): boolean {
    if (client.closing && ++client.afterClose > SENT_AFTER_CLOSE) client.ws.pause();
    return client.closing;
  }

  /**
   * Runs `handle` (one client message or ping), counted: wall time in `handlingMs`, and on every
   * CPU_SAMPLE_EVERY-th message the main thread's CPU time around it (/proc/thread-self/schedstat,
   * Linux; the read's own cost subtracted), for the bench's figure of CPU per message.
   */
  private timed(handle: () => void): void {
    const t0 = performance.now();
    const sample = this.stats.requests++ % CPU_SAMPLE_EVERY === 0 && this.cpuReadNs >= 0;
    const c0 = sample ? threadCpuNs() : 0;
    handle();
    if (sample) {
      const ns = threadCpuNs() - c0 - this.cpuReadNs;
      if (Number.isFinite(ns)) {
        this.stats.cpuSampledNs += Math.max(0, ns);
        this.stats.cpuSamples++;
      }
    }
    this.stats.handlingMs += performance.now() - t0;
  }

  /** Answers a ping while the client has less than MAX_BUFFERED_BYTES unread (else the pong is dropped and counted). */
  private pong(client: Client, data: Buffer): void {
    const ws = client.ws;
    if (ws.bufferedAmount + data.length > MAX_BUFFERED_BYTES) this.stats.dropped++;
    else
      try {
        ws.pong(data);
      } catch (e) {
        this.drop(client, CLOSE_INTERNAL, 'internal', `the server failed on its ping: ${(e as Error).message}`);
      }
  }

  /** Takes a message's cost from the client's budget; closes the client (and returns false) when it has not that much. */
  private withinRate(client: Client, bytes: number): boolean {
    if (client.budget.take(1 + Math.floor(bytes / CLIENT_RATE.bytesPerToken), performance.now())) return true;
    const { burst, perSecond } = this.rate;
    this.drop(
      client,
      CLOSE_POLICY,
      'rate',
      `over its message rate: more than ${perSecond} messages a second (bursts of ${burst}; 1 more per KiB)`,
    );
    return false;
  }

  /** Acts on one parsed client message; a message that is not a client operation closes the client. */
  private onMessage(client: Client, m: ClientMessage): void {
    if (!m.ok) return this.drop(client, CLOSE_POLICY, 'bad', m.reason);
    const r = m.request;
    if (r.op === 'subscribe') {
      const problems: string[] = [];
      const used = new Set(client.subs.values());
      for (const s of r.subscriptions) {
        if (!(s.channelId >= 1 && s.channelId <= this.channels.length)) problems.push(`channel ${s.channelId} is not advertised`);
        else if (client.subs.has(s.channelId)) problems.push(`channel ${s.channelId} is already subscribed (one subscription per channel)`);
        else if (used.has(s.id)) problems.push(`subscription id ${s.id} is in use`);
        else {
          client.subs.set(s.channelId, s.id);
          used.add(s.id);
          const l = this.latched.get(s.channelId);
          if (l) this.sendTo(client, s.channelId, l.data, l.ns);
        }
      }
      this.recount();
      if (problems.length > 0) this.status(client, 2, 'subscribe', problems);
    } else if (r.op === 'unsubscribe') {
      const problems: string[] = [];
      for (const id of r.subscriptionIds) {
        let found = false;
        for (const [ch, sid] of client.subs)
          if (sid === id) {
            client.subs.delete(ch);
            found = true;
          }
        if (!found) problems.push(`no subscription ${id}`);
      }
      this.recount();
      if (problems.length > 0) this.status(client, 1, 'unsubscribe', problems);
    } else {
      // A valid request for what this server does not offer (it declares no capability).
      // The request's own id, when it has one, names it in the reply (spec.md's status has no id field).
      const id =
        'id' in r && r.id !== undefined
          ? ` (id ${JSON.stringify(utf8Cut(r.id, 64))})`
          : 'requestId' in r
            ? ` (requestId ${r.requestId})`
            : '';
      this.status(client, 2, `${r.op}${id}`, [
        `needs the capability ${OP_CAPABILITY[r.op]}, which this server does not declare (capabilities: [])`,
      ]);
    }
  }

  /** A status message (0 info, 1 warning, 2 error) to `client` about its `op`, the first problems named; dropped while the client has not read MAX_BUFFERED_BYTES. */
  private status(client: Client, level: 0 | 1 | 2, op: string, problems: readonly string[]): void {
    const shown = problems.slice(0, 4).join('; ') + (problems.length > 4 ? `; and ${problems.length - 4} more` : '');
    const text = JSON.stringify({ op: 'status', level, message: `${op}: ${shown}` });
    const ws = client.ws;
    if (ws.readyState !== ws.OPEN || ws.bufferedAmount + text.length > MAX_BUFFERED_BYTES) {
      this.stats.dropped++;
      return;
    }
    ws.send(text);
  }

  /** Closes `client` for what it sent (`why`, cut to a close frame's 123 bytes), says so in one line, and reads nothing more from it. */
  private drop(client: Client, code: number, kind: string, why: string): void {
    if (client.closing) return;
    client.closing = true;
    if (kind === 'rate') this.stats.rateClosed++;
    else this.stats.closed++;
    this.note(kind, `closed a client (${code}): ${why}`);
    const ws = client.ws;
    ws.close(code, utf8Cut(why, 123));
    // If its close handshake has not ended within CLOSE_GRACE_MS it is cut off (its place is free
    // again); if it goes on sending meanwhile, its socket is no longer read (closedFor).
    setTimeout(() => ws.terminate(), CLOSE_GRACE_MS).unref();
    // Its subscriptions end now (the close handshake may take a while).
    client.subs.clear();
    this.recount();
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

  /** Bytes queued unread for each client (what MAX_BUFFERED_BYTES bounds), for the tests and the bench. */
  bufferedBytes(): number[] {
    return [...this.clients].map((c) => c.ws.bufferedAmount);
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
