// The live view trusts no client (issue 32): every client message is parsed with the schemas of the
// Foxglove WebSocket protocol v1's client operations (src/viz/live-protocol.ts); anything else closes
// that client with a reason and never reaches the run. Browser origins other than Foxglove's apps are
// refused and said; clients are capped; every reply (status, pong) is bounded per client. The
// property test sends random and malformed messages, ids, binary frames and sequences from several
// clients while a virtual-time run with the live view goes on: the run ends `done` every time, its
// recording complete.
import { readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import WebSocket from 'ws';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { loadRig } from '../src/config/load.js';
import { createRing, RingWriter } from '../src/control/ring.js';
import type { PathSpec } from '../src/model/builtins.js';
import { tickJsonSchema } from '../src/record/export.js';
import { F, TICK_WIDTH } from '../src/telemetry/tick.js';
import { checkOrigin, FOXGLOVE_APP_ORIGINS, parseClientBinary, parseClientText, utf8Cut } from '../src/viz/live-protocol.js';
import { MAX_BUFFERED_BYTES, type LiveAccess } from '../src/viz/live.js';
import { MainLiveView } from '../src/viz/live-view.js';
import { SCENE_TOPICS } from '../src/viz/scene.js';
import { sceneServer } from './helpers/scene-server.js';
import { hangGuardMs } from './helpers/hang-guard.js';
import { FoxgloveTestClient } from './helpers/foxglove-client.js';
import { virtualRun } from './helpers/virtual-run.js';

const rig = loadRig('rigs/mock-arm.json');
const dir = mkdtempSync(join(tmpdir(), 'twolink-live-hostile-'));
const closers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The four messages of issue 32 that each ended a run with a raw TypeError/RangeError. */
const KILLERS = {
  'JSON null': () => 'null',
  'subscriptions: [null]': () => JSON.stringify({ op: 'subscribe', subscriptions: [null] }),
  'id -1 on /robot_description': () => JSON.stringify({ op: 'subscribe', subscriptions: [{ id: -1, channelId: 1 }] }),
  'id 1e12 on /tf': () => JSON.stringify({ op: 'subscribe', subscriptions: [{ id: 1e12, channelId: 2 }] }),
};

describe('client messages, parsed (src/viz/live-protocol.ts)', () => {
  it('refuses the four messages of issue 32, naming the field', () => {
    expect(parseClientText(KILLERS['JSON null']())).toEqual({ ok: false, reason: 'not a JSON object (null)' });
    expect(parseClientText(KILLERS['subscriptions: [null]']())).toMatchObject({
      ok: false,
      reason: expect.stringContaining('subscriptions[0]'),
    });
    expect(parseClientText(KILLERS['id -1 on /robot_description']())).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/subscriptions\[0\]\.id: .*>=0/),
    });
    expect(parseClientText(KILLERS['id 1e12 on /tf']())).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/subscriptions\[0\]\.id: .*<=4294967295/),
    });
    for (const bad of [
      '{"op":"subscribe","subscriptions":[{"id":1.5,"channelId":1}]}',
      '{"op":"unsubscribe","subscriptionIds":["1"]}',
      '{"op":"nope"}',
      '[]',
      '{}',
      '7',
      'not json',
    ])
      expect(parseClientText(bad).ok, bad).toBe(false);
    // 2^32 - 1 is a uint32, 2^32 is not.
    expect(parseClientText(JSON.stringify({ op: 'subscribe', subscriptions: [{ id: 2 ** 32 - 1, channelId: 1 }] })).ok).toBe(true);
    expect(parseClientText(JSON.stringify({ op: 'subscribe', subscriptions: [{ id: 2 ** 32, channelId: 1 }] })).ok).toBe(false);
  });

  it('accepts every client operation of the spec (its examples), and its binary messages', () => {
    const examples = [
      {
        op: 'subscribe',
        subscriptions: [
          { id: 0, channelId: 3 },
          { id: 1, channelId: 5 },
        ],
      },
      { op: 'unsubscribe', subscriptionIds: [0, 1] },
      { op: 'advertise', channels: [{ id: 1, topic: 'foo', encoding: 'protobuf', schemaName: 'ExampleMsg' }] },
      { op: 'unadvertise', channelIds: [1, 2] },
      { op: 'getParameters', parameterNames: ['/int_param', '/float_param'], id: 'request-123' },
      {
        op: 'setParameters',
        parameters: [
          { name: '/int_param', value: 3 },
          { name: '/byte_array_param', value: 'QUJDRA==', type: 'byte_array' },
          { name: '/float_array_param', value: [1.1, 2, 3.3], type: 'float64_array' },
        ],
        id: 'request-456',
      },
      { op: 'subscribeParameterUpdates', parameterNames: ['/int_param'] },
      { op: 'unsubscribeParameterUpdates', parameterNames: [] },
      { op: 'subscribeConnectionGraph' },
      { op: 'unsubscribeConnectionGraph' },
      { op: 'fetchAsset', uri: 'package://foo/robot.urdf', requestId: 123 },
    ];
    for (const m of examples) expect(parseClientText(JSON.stringify(m)), m.op).toMatchObject({ ok: true, request: { op: m.op } });
    expect(parseClientBinary(Buffer.from([0x01, 7, 0, 0, 0, 0xaa]))).toEqual({
      ok: true,
      request: { op: 'clientMessageData', channelId: 7 },
    });
    const call = Buffer.concat([Buffer.from([0x02, 1, 0, 0, 0, 9, 0, 0, 0, 4, 0, 0, 0]), Buffer.from('json{}')]);
    expect(parseClientBinary(call)).toEqual({ ok: true, request: { op: 'serviceCallRequest', serviceId: 1, callId: 9, encoding: 'json' } });
    for (const bad of [[], [0x01, 1, 0], [0x02, 1, 0, 0, 0, 9, 0, 0, 0, 200, 0, 0, 0], [0x03], [0xff, 1, 2, 3, 4]])
      expect(parseClientBinary(Buffer.from(bad)).ok, String(bad)).toBe(false);
  });

  it('checks origins as browsers send them; never allows "null"', () => {
    expect(checkOrigin('http://localhost:8080')).toEqual({ ok: true, origin: 'http://localhost:8080' });
    expect(checkOrigin('HTTPS://Example.test')).toEqual({ ok: true, origin: 'https://example.test' });
    expect(checkOrigin('file://')).toEqual({ ok: true, origin: 'file://' });
    for (const bad of ['null', 'http://x/', 'http://x/path', 'ftp://x', 'example.test', '']) expect(checkOrigin(bad).ok, bad).toBe(false);
  });

  it('cuts a close reason to 123 bytes of UTF-8 on a character boundary', () => {
    const r = utf8Cut('é'.repeat(100), 123);
    expect(Buffer.byteLength(r)).toBeLessThanOrEqual(123);
    expect(r.endsWith('...')).toBe(true);
    expect(utf8Cut('short', 123)).toBe('short');
  });
});

const server = (access: Omit<LiveAccess, 'say'> = {}): ReturnType<typeof sceneServer> => sceneServer(closers, access);

/** A handshake's outcome: open (then closed by us), or refused with an HTTP status and its body. */
function handshake(port: number, origin?: string): Promise<{ open: true } | { open: false; status: number; body: string }> {
  const ws = new WebSocket(`ws://127.0.0.1:${port}`, ['foxglove.websocket.v1'], origin ? { origin } : {});
  ws.on('error', () => undefined);
  return new Promise((resolve) => {
    ws.on('open', () => {
      closers.push(() => ws.terminate());
      resolve({ open: true });
    });
    ws.on('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ open: false, status: res.statusCode ?? 0, body }));
    });
  });
}

function client(port: number): FoxgloveTestClient {
  const c = new FoxgloveTestClient(`ws://127.0.0.1:${port}`, ['foxglove.sdk.v1']);
  closers.push(() => c.ws.terminate());
  return c;
}

/** Resolves once `cond` holds, checked each turn of the event loop (the server's counters change on socket events). */
async function turnsUntil(cond: () => boolean): Promise<void> {
  while (!cond()) await new Promise((r) => setImmediate(r));
}

describe('the live view server against hostile clients', () => {
  it.each(Object.entries(KILLERS))(
    'closes a client that sends %s (1008, the reason, one line on stderr); the others are served',
    async (_name, msg) => {
      const { s, said } = await server();
      const good = client(s.port);
      const bad = client(s.port);
      for (const c of [good, bad]) await c.until(() => c.channels.length > 0);
      bad.ws.send(msg());
      await bad.until(() => bad.closed !== undefined);
      expect(bad.closed!.code).toBe(1008);
      expect(bad.closed!.reason.length).toBeGreaterThan(3);
      expect(said).toEqual([`twolink: Foxglove live view: closed a client (1008): ${bad.closed!.reason}`]);
      expect(s.stats.closed).toBe(1);
      good.subscribe([SCENE_TOPICS.description]);
      await good.until(() => good.on(SCENE_TOPICS.description).length === 1);
    },
  );

  it('answers a valid operation it does not offer with a status message and keeps the client', async () => {
    const { s } = await server();
    const c = client(s.port);
    const statuses: { level: number; message: string }[] = [];
    c.ws.on('message', (d: Buffer, binary: boolean) => {
      if (!binary && String(d).includes('"status"')) statuses.push(JSON.parse(String(d)) as { level: number; message: string });
    });
    await c.until(() => c.channels.length > 0);
    c.ws.send(JSON.stringify({ op: 'getParameters', parameterNames: [], id: 'q1' }));
    c.ws.send(Buffer.from([0x01, 1, 0, 0, 0, 42]));
    c.ws.send(JSON.stringify({ op: 'subscribe', subscriptions: [{ id: 5, channelId: 99 }] }));
    await c.until(() => statuses.length === 3);
    expect(statuses[0]).toEqual({
      op: 'status',
      level: 2,
      message: 'getParameters (id "q1"): needs the capability parameters, which this server does not declare (capabilities: [])',
    });
    expect(statuses[1]!.message).toContain('clientMessageData: needs the capability clientPublish');
    expect(statuses[2]!.message).toBe('subscribe: channel 99 is not advertised');
    // A reused id and a second subscription to a channel are refused as the spec says (a status), not taken.
    c.subscribe([SCENE_TOPICS.description]);
    await c.until(() => c.on(SCENE_TOPICS.description).length === 1);
    c.ws.send(
      JSON.stringify({
        op: 'subscribe',
        subscriptions: [
          { id: 100, channelId: 2 },
          { id: 7, channelId: 1 },
        ],
      }),
    );
    await c.until(() => statuses.length === 4);
    expect(statuses[3]!.message).toBe(
      'subscribe: subscription id 100 is in use; channel 1 is already subscribed (one subscription per channel)',
    );
    expect(c.closed).toBeUndefined();
    expect(s.stats.closed).toBe(0);
  });

  it("refuses a browser origin other than Foxglove's apps (403, said in one line); --foxglove-allow-origin adds one", async () => {
    const { s, said } = await server({ allowOrigins: ['http://localhost:3000'] });
    const refused = await handshake(s.port, 'http://example.test');
    expect(refused).toMatchObject({ open: false, status: 403, body: expect.stringContaining('"http://example.test" is not allowed') });
    expect(said).toEqual([
      expect.stringMatching(
        /^twolink: Foxglove live view: refused a connection from origin "http:\/\/example\.test" \(allowed: no Origin header, https:\/\/app\.foxglove\.dev, .*--foxglove-allow-origin\)$/,
      ),
    ]);
    for (const ok of [undefined, ...FOXGLOVE_APP_ORIGINS, 'http://localhost:3000'])
      expect(await handshake(s.port, ok), String(ok)).toEqual({ open: true });
    expect(s.stats.refused).toBe(1);
  });

  it('serves at most maxClients at once: the next is refused with 503 and the reason', async () => {
    const { s, said } = await server({ maxClients: 2 });
    expect(await handshake(s.port)).toEqual({ open: true });
    expect(await handshake(s.port)).toEqual({ open: true });
    await turnsUntil(() => s.stats.clients === 2);
    expect(await handshake(s.port)).toEqual({ open: false, status: 503, body: '2 clients are connected, the most at once' });
    expect(said).toEqual(['twolink: Foxglove live view: refused a connection: 2 clients are connected (the most at once)']);
  });

  it(
    'bounds what waits for a client that does not read, for every kind of reply (status messages, pongs)',
    async () => {
      // The rate limit off (tests/viz-live-rate.test.ts has it): this is the bound on memory alone.
      const { s } = await server({ rate: { burst: 1e9, perSecond: 1e9 } });
      const c = client(s.port);
      await c.until(() => c.channels.length > 0);
      // The client stops reading: the replies pile up in the kernel's buffers, then in the server's.
      (c.ws as unknown as { _socket: { pause(): void } })._socket.pause();
      const request = JSON.stringify({ op: 'fetchAsset', uri: 'x'.repeat(100), requestId: 1 });
      const ping = Buffer.alloc(125, 1);
      const n = 40_000;
      let worst = 0;
      for (let k = 0; k < n; k++) {
        if (k % 2 === 0) c.ws.send(request);
        else c.ws.ping(ping);
        if (k % 500 === 499) {
          await turnsUntil(() => s.stats.requests >= k + 1);
          worst = Math.max(worst, ...s.bufferedBytes());
        }
      }
      // Every request and ping was read and either answered or dropped; nothing queued past the cap (one reply over at most).
      expect(s.stats.dropped).toBeGreaterThan(0);
      expect(worst).toBeGreaterThan(0);
      expect(worst).toBeLessThanOrEqual(MAX_BUFFERED_BYTES + 256);
      expect(c.closed).toBeUndefined();
    },
    hangGuardMs(60_000),
  );
});

describe('the live view on the main thread', () => {
  it('stops itself, said in one line, when it fails while polled in the drain; the poll never throws into the run', async () => {
    const said: string[] = [];
    const live = await MainLiveView.start({ ...rig, tickSchema: JSON.stringify(tickJsonSchema(rig.joints)) }, '127.0.0.1', 0, {
      say: (l) => said.push(l),
    });
    closers.push(() => live.close());
    const ring = createRing();
    const w = new RingWriter(ring);
    live.attach(ring);
    const c = client(live.port);
    await c.until(() => c.channels.length > 0);
    c.subscribe([SCENE_TOPICS.tf]);
    await live.until(() => live.streaming);
    // A fault inside the view (here: its server's frame writer breaks).
    (live as unknown as { engine: { server: { publishEncoded(): void } } }).engine.server.publishEncoded = () => {
      throw new Error('broken writer');
    };
    const row = new Float64Array(TICK_WIDTH);
    for (let k = 0; k < 50; k++) {
      row[F.t] = k * 0.002;
      w.write(row);
    }
    expect(() => live.poll()).not.toThrow();
    expect(() => live.poll()).not.toThrow();
    expect(said).toEqual(['twolink: the Foxglove live view stopped: broken writer']);
  });
});

/** A path that holds the start for `s` seconds of loop time (the property test's run). */
function hold(s: number): PathSpec {
  return { name: 'hold', description: `hold ${s} s`, start: { q: [0, Math.PI / 2] }, steps: [{ kind: 'hold', duration: s }] };
}

/** What a hostile client sends: text (maybe not JSON), binary frames, pings. */
type Sent = { text: string } | { binary: Uint8Array } | { ping: Uint8Array };

const anyId = fc.oneof(
  fc.integer({ min: 0, max: 9 }),
  fc.constantFrom(-1, 1e12, 2 ** 32, 2 ** 32 - 1, 0.5, -0, Number.MAX_SAFE_INTEGER),
  fc.double(),
  fc.constant(null),
  fc.string({ maxLength: 4 }),
  fc.anything(),
);
/** Ids a client that nearly keeps to the protocol sends: mostly small, sometimes at or past the uint32 edges. */
const nearId = fc.oneof(
  { arbitrary: fc.integer({ min: 0, max: 12 }), weight: 3 },
  { arbitrary: fc.constantFrom(-1, 1e12, 2 ** 32, 2 ** 32 - 1, -0, 0.5, 1e300), weight: 2 },
);
/** Channel ids: mostly advertised ones (1-8), sometimes not. */
const nearChannel = fc.oneof(
  { arbitrary: fc.integer({ min: 1, max: 8 }), weight: 5 },
  { arbitrary: fc.constantFrom(0, 9, 99, -1, 2 ** 32), weight: 1 },
);
const specOps = [
  'subscribe',
  'unsubscribe',
  'advertise',
  'unadvertise',
  'getParameters',
  'setParameters',
  'subscribeParameterUpdates',
  'unsubscribeParameterUpdates',
  'subscribeConnectionGraph',
  'unsubscribeConnectionGraph',
  'fetchAsset',
];
/** Valid requests for what the server does not offer (the spec's examples): a status each. */
const unsupported = [
  { op: 'advertise', channels: [{ id: 1, topic: 'foo', encoding: 'json', schemaName: 'X' }] },
  { op: 'unadvertise', channelIds: [1] },
  { op: 'getParameters', parameterNames: [] },
  { op: 'setParameters', parameters: [{ name: '/p', value: [1, 2] }], id: 'x' },
  { op: 'subscribeParameterUpdates', parameterNames: ['/p'] },
  { op: 'unsubscribeParameterUpdates', parameterNames: [] },
  { op: 'subscribeConnectionGraph' },
  { op: 'unsubscribeConnectionGraph' },
  { op: 'fetchAsset', uri: 'package://x', requestId: 4 },
].map((m) => JSON.stringify(m));
const sent: fc.Arbitrary<Sent> = fc.oneof(
  // Nearly right: subscriptions and unsubscriptions with plausible ids (and now and then one past a uint32's edge), valid requests the server does not serve.
  {
    arbitrary: fc.record({
      text: fc
        .array(fc.record({ id: nearId, channelId: nearChannel }), { maxLength: 6 })
        .map((subscriptions) => JSON.stringify({ op: 'subscribe', subscriptions })),
    }),
    weight: 6,
  },
  {
    arbitrary: fc.record({
      text: fc.array(nearId, { maxLength: 6 }).map((subscriptionIds) => JSON.stringify({ op: 'unsubscribe', subscriptionIds })),
    }),
    weight: 3,
  },
  { arbitrary: fc.record({ text: fc.constantFrom(...unsupported) }), weight: 3 },
  {
    arbitrary: fc.record({
      binary: fc
        .tuple(fc.constantFrom(1, 2), fc.uint8Array({ minLength: 12, maxLength: 30 }))
        .map(([op, rest]) => Uint8Array.from([op, ...rest])),
    }),
    weight: 1,
  },
  { arbitrary: fc.record({ ping: fc.uint8Array({ maxLength: 125 }) }), weight: 2 },
  // Wrong: ids of every kind, any op (or another) with fields of any kind, any JSON, any text, the four messages of issue 32, any bytes.
  {
    arbitrary: fc.record({
      text: fc
        .array(fc.record({ id: anyId, channelId: anyId }), { maxLength: 6 })
        .map((subscriptions) => JSON.stringify({ op: 'subscribe', subscriptions })),
    }),
    weight: 1,
  },
  {
    arbitrary: fc.record({
      text: fc.array(anyId, { maxLength: 6 }).map((subscriptionIds) => JSON.stringify({ op: 'unsubscribe', subscriptionIds })),
    }),
    weight: 1,
  },
  {
    arbitrary: fc.record({
      text: fc
        .tuple(
          fc.oneof(fc.constantFrom(...specOps), fc.string({ maxLength: 12 })),
          fc.dictionary(fc.string({ maxLength: 12 }), fc.anything(), { maxKeys: 4 }),
        )
        .map(([op, rest]) => JSON.stringify({ ...rest, op })),
    }),
    weight: 1,
  },
  { arbitrary: fc.record({ text: fc.json({ maxDepth: 3 }) }), weight: 1 },
  { arbitrary: fc.record({ text: fc.string({ maxLength: 40 }) }), weight: 1 },
  { arbitrary: fc.record({ text: fc.constantFrom(...Object.values(KILLERS).map((f) => f())) }), weight: 1 },
  { arbitrary: fc.record({ binary: fc.uint8Array({ maxLength: 40 }) }), weight: 1 },
);
interface Hostile {
  origin: string | undefined;
  protocols: string[];
  stalls: boolean;
  vanishes: boolean;
  messages: Sent[];
}
const hostile: fc.Arbitrary<Hostile> = fc.record({
  // Most get in (so that what they send is read); some are refused at the door.
  origin: fc.constantFrom(undefined, undefined, 'https://app.foxglove.dev', 'file://', 'http://example.test', 'null'),
  protocols: fc.constantFrom(
    ['foxglove.sdk.v1'],
    ['foxglove.websocket.v1'],
    ['foxglove.sdk.v1', 'foxglove.websocket.v1'],
    ['something.else'],
  ),
  /** Stops reading while it sends (a frozen tab). */
  stalls: fc.boolean(),
  /** Goes away without a close handshake after sending. */
  vanishes: fc.constantFrom(false, false, false, true),
  messages: fc.array(sent, { maxLength: 16 }),
});

/** A client that keeps to the protocol but subscribes to every channel (1-8), then probes on every frame it reads. */
const flooder: Hostile = {
  origin: undefined,
  protocols: ['foxglove.sdk.v1'],
  stalls: false,
  vanishes: false,
  messages: [{ text: JSON.stringify({ op: 'subscribe', subscriptions: [1, 2, 3, 4, 5, 6, 7, 8].map((c) => ({ id: c, channelId: c })) }) }],
};

/** How one hostile client ended: still served (it read the answer to its last probe), closed by the server, refused, or gone of itself. */
type Fate = { served: true } | { closed: number; reason: string } | { refused: number } | { vanished: true };

/**
 * Connects, sends, then (unless it vanishes) probes until the server answers it or closes it: by then the server has read everything it sent.
 * It goes on probing for every other message it reads (frames included), also after its answer: one subscribed to the streaming
 * channels sends a message per frame, which in virtual time (the run's 2 s in a fraction of a second) is over CLIENT_RATE, and the
 * server closes it for its rate (1008, said, counted in stats.rateClosed): a hostile client of its own kind, kept on purpose.
 */
function runHostile(port: number, h2: Hostile): Promise<Fate> {
  const ws = new WebSocket(`ws://127.0.0.1:${port}`, h2.protocols, h2.origin ? { origin: h2.origin } : {});
  ws.on('error', () => undefined);
  closers.push(() => ws.terminate());
  return new Promise<Fate>((resolve) => {
    let probing = false;
    const probe = (): void => {
      if (ws.readyState === ws.OPEN) ws.send(JSON.stringify({ op: 'getParameters', parameterNames: [], id: 'probe' }));
    };
    ws.on('unexpected-response', (_req, res) => {
      res.resume();
      resolve({ refused: res.statusCode ?? 0 });
    });
    ws.on('close', (code, reason) => resolve({ closed: code, reason: String(reason) }));
    ws.on('message', (d: Buffer, binary: boolean) => {
      if (!binary && String(d).includes('(id \\"probe\\")')) resolve({ served: true });
      // The answer to a probe sent while the server had more than the cap unread for this client was dropped: probe again as it reads.
      else if (probing) probe();
    });
    ws.on('open', () => {
      const socket = (ws as unknown as { _socket: { pause(): void; resume(): void } })._socket;
      if (h2.stalls) socket.pause();
      for (const m of h2.messages) {
        if (ws.readyState !== ws.OPEN) break;
        if ('text' in m) ws.send(m.text);
        else if ('binary' in m) ws.send(m.binary);
        else ws.ping(m.ping);
      }
      if (h2.vanishes) {
        ws.terminate();
        resolve({ vanished: true });
        return;
      }
      socket.resume();
      probing = true;
      probe();
    });
  });
}

describe('a run with the live view and hostile clients (virtual time)', () => {
  it(
    'ends done, its recording complete, whatever the clients send; a client that keeps to the protocol is served throughout',
    async () => {
      let runs = 0;
      await fc.assert(
        fc.asyncProperty(fc.array(hostile, { minLength: 1, maxLength: 5 }), async (clients) => {
          const file = join(dir, `run-${runs++}.ndjson`);
          const said: string[] = [];
          const live = await MainLiveView.start({ ...rig, tickSchema: JSON.stringify(tickJsonSchema(rig.joints)) }, '127.0.0.1', 0, {
            say: (l) => said.push(l),
          });
          closers.push(() => live.close());
          const ring = createRing();
          const w = new RingWriter(ring);
          live.attach(ring);
          // One client keeps to the protocol: subscribed to /tf from the start.
          const good = client(live.port);
          await good.until(() => good.channels.length > 0);
          good.subscribe([SCENE_TOPICS.description, SCENE_TOPICS.tf]);
          await good.until(() => good.on(SCENE_TOPICS.description).length === 1);
          let fates: Promise<Fate[]> | undefined;
          let finishedInRun = 0;
          let ended = false;
          let nextPollS = 0;
          const r = await virtualRun(rig, [hold(2)], {
            keepRows: false,
            record: file,
            onTick: (core) => {
              w.write(core.row);
              // The session's drain polls the view every 20 ms of its clock.
              if (core.row[F.t]! >= nextPollS) {
                live.poll();
                nextPollS = core.row[F.t]! + 0.02;
              }
              // The hostile clients come once the run is going.
              fates ??= Promise.all(
                clients.map((h) =>
                  runHostile(live.port, h).then((f) => {
                    if (!ended) finishedInRun++;
                    return f;
                  }),
                ),
              );
            },
          });
          ended = true;
          // The view's counts as of now (they are published when it polls).
          live.poll();
          const tfInRun = good.on(SCENE_TOPICS.tf).length;
          const done = await fates!;
          expect(r.summary.stop).toEqual({ kind: 'done' });
          // Every hostile client had its answer while the run went on.
          expect(finishedInRun).toBe(clients.length);
          // The recording is complete: every tick, then the summary.
          const lines = readFileSync(file, 'utf8')
            .trimEnd()
            .split('\n')
            .map((l) => JSON.parse(l) as { kind?: string; ticks?: number });
          const last = lines.at(-1)!;
          expect(last.kind).toBe('summary');
          expect(lines.filter((l) => l.kind === 'tick').length).toBe(last.ticks);
          expect(last.ticks).toBe(r.summary.ticks);
          // The client that keeps to the protocol was served: /tf at 60 Hz of the run's 2 s, and never closed.
          expect(tfInRun).toBeGreaterThan(60);
          expect(good.closed).toBeUndefined();
          // What the server did to each: closed with a policy or protocol code and a reason, refused, or served.
          for (const [k, f] of done.entries()) {
            const h = clients[k]!;
            if ('refused' in f) expect(f.refused).toBe(403);
            if ('refused' in f) expect(['http://example.test', 'null']).toContain(h.origin);
            if ('closed' in f && f.closed !== 1006) {
              expect([1002, 1008, 1009]).toContain(f.closed);
              expect(f.reason.length).toBeGreaterThan(0);
            }
            if (h.origin === 'http://example.test' || h.origin === 'null') expect(f).toEqual({ refused: 403 });
          }
          // Each closed client was said in one line (up to the server's limit of lines per kind), each for what it sent (1008), never for a fault of the server's (1011).
          // Clients closed for their message rate are said as closed too but counted apart (stats.rateClosed, not in stats.closed).
          const closedSaid = said.filter((l) => l.includes('closed a client')).length;
          const rateSaid = said.filter((l) => l.includes('closed a client (1008): over its message rate')).length;
          expect(rateSaid).toBe(Math.min(20, live.stats.rateClosed));
          expect(closedSaid - rateSaid).toBe(Math.min(20, live.stats.closed));
          expect(said.filter((l) => !/closed a client \(1008\)|refused a connection from origin/.test(l))).toEqual([]);
          await live.close();
        }),
        // Besides the random ones, a client that subscribes to every channel: it probes on every frame, over its rate in virtual time (runHostile).
        { numRuns: 12, examples: [[[flooder]]] },
      );
    },
    hangGuardMs(120_000),
  );
});
