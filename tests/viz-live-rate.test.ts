// The live view's rate limits (issue 32): each client has a message budget (a token bucket,
// CLIENT_RATE: 200 at once, 100 a second, 1 more per KiB); a client over it is closed with 1008 and
// the rate named, said once on stderr, and nothing more it sends is read; the other clients are
// served. New connections are limited for all clients together (CONNECT_RATE): past it a handshake
// is refused with 503 and the reason. The run against a flooding client is
// tests/realtime/foxglove-flood.test.ts.
import WebSocket from 'ws';
import { afterEach, describe, expect, it } from 'vitest';
import { CLIENT_RATE, CONNECT_RATE, MAX_CLIENT_MESSAGE_BYTES, type LiveAccess } from '../src/viz/live.js';
import { SCENE_TOPICS } from '../src/viz/scene.js';
import { sceneServer } from './helpers/scene-server.js';
import { TokenBucket } from '../src/viz/token-bucket.js';
import { FoxgloveTestClient } from './helpers/foxglove-client.js';

const closers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
});

const server = (access: Omit<LiveAccess, 'say'> = {}): ReturnType<typeof sceneServer> => sceneServer(closers, access);

function client(port: number): FoxgloveTestClient {
  const c = new FoxgloveTestClient(`ws://127.0.0.1:${port}`, ['foxglove.sdk.v1']);
  closers.push(() => c.ws.terminate());
  return c;
}

describe('TokenBucket', () => {
  it('holds at most its burst, refills at its rate, and takes nothing when it refuses', () => {
    const b = new TokenBucket(200, 100, 0);
    for (let k = 0; k < 200; k++) expect(b.take(1, 0)).toBe(true);
    expect(b.take(1, 0)).toBe(false);
    expect(b.level).toBe(0);
    // 100 a second: 50 ms gives 5.
    expect(b.take(5, 50)).toBe(true);
    expect(b.take(1, 50)).toBe(false);
    // A long quiet spell refills to the burst, no further.
    expect(b.take(201, 60_000)).toBe(false);
    expect(b.level).toBe(200);
    // A clock that goes back adds nothing.
    expect(b.take(200, 10)).toBe(true);
    expect(b.take(1, 10)).toBe(false);
    expect(() => new TokenBucket(0, 1, 0)).toThrow(/positive finite/);
    expect(() => new TokenBucket(1, Number.NaN, 0)).toThrow(/positive finite/);
  });

  it('pins the documented numbers (docs/foxglove.md, docs/safety.md)', () => {
    expect(CLIENT_RATE).toEqual({ burst: 200, perSecond: 100, bytesPerToken: 1024 });
    expect(CONNECT_RATE).toEqual({ burst: 40, perSecond: 20 });
    // The largest message a client may send costs 65 tokens: three in a row fit a full budget.
    expect(1 + Math.floor(MAX_CLIENT_MESSAGE_BYTES / CLIENT_RATE.bytesPerToken)).toBe(65);
  });
});

describe('the live view server against a flooding client', () => {
  it.each([
    [
      'valid requests it does not offer (getParameters)',
      (ws: WebSocket, k: number) => ws.send(JSON.stringify({ op: 'getParameters', parameterNames: [], id: String(k) })),
    ],
    [
      'subscribe/unsubscribe storms',
      (ws: WebSocket, k: number) =>
        ws.send(
          JSON.stringify(
            k % 2 === 0 ? { op: 'subscribe', subscriptions: [{ id: 7, channelId: 1 }] } : { op: 'unsubscribe', subscriptionIds: [7] },
          ),
        ),
    ],
    ['service call requests', (ws: WebSocket) => ws.send(Uint8Array.from([2, 1, 0, 0, 0, 2, 0, 0, 0, 4, 0, 0, 0, 106, 115, 111, 110]))],
    ['pings', (ws: WebSocket) => ws.ping(Buffer.alloc(16))],
  ])('closes a client flooding %s (1008, its rate named, said once); the others are served', async (_name, send) => {
    const { s, said } = await server();
    const good = client(s.port);
    const flood = client(s.port);
    for (const c of [good, flood]) await c.until(() => c.channels.length > 0);
    // Far more than the burst at once: the bucket refills 100 a second, these arrive within milliseconds.
    for (let k = 0; k < 5000 && flood.ws.readyState === WebSocket.OPEN; k++) send(flood.ws, k);
    await flood.until(() => flood.closed !== undefined);
    expect(flood.closed!.code).toBe(1008);
    expect(flood.closed!.reason).toMatch(/over its message rate: more than 100 messages a second \(bursts of 200/);
    expect(said).toEqual([`twolink: Foxglove live view: closed a client (1008): ${flood.closed!.reason}`]);
    expect(s.stats.rateClosed).toBe(1);
    expect(s.stats.closed).toBe(0);
    // It was read up to its budget and a little past (what arrived before its close), not its 5000.
    expect(s.stats.requests).toBeGreaterThan(CLIENT_RATE.burst);
    expect(s.stats.requests).toBeLessThan(5000);
    expect(s.stats.handlingMs).toBeGreaterThan(0);
    good.subscribe([SCENE_TOPICS.description]);
    await good.until(() => good.on(SCENE_TOPICS.description).length === 1);
    expect(good.closed).toBeUndefined();
  });

  it('keeps a client within its budget: a burst of 190 small requests', async () => {
    const { s } = await server();
    const c = client(s.port);
    await c.until(() => c.channels.length > 0);
    for (let k = 0; k < 190; k++) c.ws.send(JSON.stringify({ op: 'unsubscribe', subscriptionIds: [] }));
    c.subscribe([SCENE_TOPICS.description]);
    await c.until(() => c.on(SCENE_TOPICS.description).length === 1 || c.closed !== undefined);
    expect(c.closed).toBeUndefined();
    expect(s.stats.requests).toBe(191);
    expect(s.stats.rateClosed).toBe(0);
  });

  it('counts large messages by their size: four of 64 KiB at once are over the budget', async () => {
    const { s } = await server();
    const c = client(s.port);
    await c.until(() => c.channels.length > 0);
    const big = JSON.stringify({ op: 'getParameters', parameterNames: ['x'.repeat(MAX_CLIENT_MESSAGE_BYTES - 200)] });
    for (let k = 0; k < 4; k++) c.ws.send(big);
    await c.until(() => c.closed !== undefined);
    expect(c.closed!.code).toBe(1008);
    expect(s.stats.requests).toBe(4);
    expect(s.stats.rateClosed).toBe(1);
  });

  it('refuses new connections past its connection rate (503 and the reason, said)', async () => {
    const { s, said } = await server({ connectRate: { burst: 2, perSecond: 0.001 } });
    const statuses: number[] = [];
    for (let k = 0; k < 3; k++)
      statuses.push(
        await new Promise<number>((resolve) => {
          const ws = new WebSocket(`ws://127.0.0.1:${s.port}`, ['foxglove.sdk.v1']);
          ws.on('error', () => undefined);
          ws.on('open', () => {
            closers.push(() => ws.terminate());
            resolve(101);
          });
          ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
        }),
      );
    expect(statuses).toEqual([101, 101, 503]);
    expect(s.stats.refused).toBe(1);
    expect(said).toEqual(['twolink: Foxglove live view: refused a connection: more than 0.001 new connections a second (bursts of 2)']);
  });
});

describe('every reply the server sends', () => {
  it('is serverInfo and advertise once per connection, then status messages, pongs and message frames only (no serviceCallFailure, parameterValues or re-advertise)', async () => {
    const { s } = await server();
    const c = client(s.port);
    const ops: string[] = [];
    let advertiseBytes = 0;
    let frames = 0;
    c.ws.on('message', (d: Buffer, binary: boolean) => {
      if (binary) return void frames++;
      const op = (JSON.parse(String(d)) as { op: string }).op;
      ops.push(op);
      if (op === 'advertise') advertiseBytes = d.length;
    });
    await c.until(() => c.channels.length > 0);
    const requests = [
      { op: 'getParameters', parameterNames: ['/a'], id: 'g' },
      { op: 'setParameters', parameters: [{ name: '/a', value: 1 }], id: 's' },
      { op: 'subscribeParameterUpdates', parameterNames: ['/a'] },
      { op: 'subscribeConnectionGraph' },
      { op: 'fetchAsset', uri: 'package://x', requestId: 3 },
      { op: 'advertise', channels: [{ id: 1, topic: '/x', encoding: 'json', schemaName: 'X' }] },
      { op: 'subscribe', subscriptions: [{ id: 1, channelId: 1 }] },
      { op: 'subscribe', subscriptions: [{ id: 2, channelId: 99 }] },
      { op: 'unsubscribe', subscriptionIds: [1, 5] },
    ];
    for (const r of requests) c.ws.send(JSON.stringify(r));
    // A service call request (binary 0x02) and a ping.
    c.ws.send(Uint8Array.from([2, 1, 0, 0, 0, 2, 0, 0, 0, 4, 0, 0, 0, 106, 115, 111, 110]));
    let ponged = false;
    c.ws.on('pong', () => (ponged = true));
    c.ws.ping(Buffer.alloc(4));
    await c.until(() => ponged && ops.filter((o) => o === 'status').length === 9);
    expect(s.stats.requests).toBe(requests.length + 2);
    // One status per request but the subscribe that succeeded; the description came as a message frame.
    expect(ops).toEqual(['serverInfo', 'advertise', ...Array<string>(9).fill('status')]);
    expect(frames).toBe(1);
    // The fixed replies of a connection are small next to the cap on what may wait unread.
    expect(advertiseBytes).toBeGreaterThan(1000);
    expect(advertiseBytes).toBeLessThan(64 * 1024);
  });
});
