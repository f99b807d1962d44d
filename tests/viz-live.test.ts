// The live view (src/viz/live-view.ts) with a client speaking Foxglove's WebSocket protocol v1: server
// info, the advertised channels, a subscription, the description latched for late subscribers, and
// /tf at 60 Hz of the loop's clock, counted over the rows' board time (rows of a virtual-time run
// written to a shared ring as the loop writes them, 20 ms of loop time at a time), in its own thread
// and on the main thread. A channel nobody subscribed to costs nothing: the view reads no row of the
// ring. A client that stops reading loses frames and nobody else does; publish never waits for a client.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadRig } from '../src/config/load.js';
import { builtinPath } from '../src/model/builtins.js';
import { createRing, RingWriter } from '../src/control/ring.js';
import { tickJsonSchema } from '../src/record/export.js';
import { F } from '../src/telemetry/tick.js';
import { processThreads } from '../src/time/threads.js';
import { FoxgloveServer, LIVE_RATE_HZ, LIVE_TICK_TOPIC, MAX_BUFFERED_BYTES } from '../src/viz/live.js';
import { startLiveView, type LivePlacement, type LiveView } from '../src/viz/live-view.js';
import { readCdrString, SCENE_TOPICS, sceneChannels } from '../src/viz/scene.js';
import { armUrdf } from '../src/viz/urdf.js';
import { FoxgloveTestClient } from './helpers/foxglove-client.js';
import { virtualRun } from './helpers/virtual-run.js';
import { hangGuardMs } from './helpers/hang-guard.js';

const rig = loadRig('rigs/mock-arm.json');
let rows: Float64Array[] = [];
const closers: (() => Promise<void> | void)[] = [];

beforeAll(async () => {
  rows = (await virtualRun(rig, [builtinPath(rig.arm, 'reach')!], { maxSeconds: 30 })).rows;
}, hangGuardMs(30_000));

afterEach(async () => {
  for (const c of closers.splice(0)) await c();
});

async function startView(placement: LivePlacement = 'thread'): Promise<LiveView> {
  const live = await startLiveView({ ...rig, tickSchema: JSON.stringify(tickJsonSchema(rig.joints)) }, '127.0.0.1', 0, placement);
  closers.push(() => live.close());
  return live;
}

/** A ring the test writes rows to as the loop would, attached to the view. */
function feeder(live: LiveView): { write(upTo: number): Promise<void>; at: number } {
  const ring = createRing();
  const w = new RingWriter(ring);
  live.attach(ring);
  const f = {
    at: 0,
    /** Writes rows up to index `upTo` (20 ms of loop time), then waits until the view has read them (on the main thread: polls it, as the session's drain does). */
    async write(upTo: number): Promise<void> {
      const read0 = live.rowsRead;
      const n = upTo - f.at;
      while (f.at < upTo) w.write(rows[f.at++]!);
      live.poll();
      await live.until(() => live.rowsRead - read0 >= n);
    },
  };
  return f;
}

function connect(port: number, protocols: string[]): FoxgloveTestClient {
  const c = new FoxgloveTestClient(`ws://127.0.0.1:${port}`, protocols);
  closers.push(() => c.ws.terminate());
  return c;
}

describe('Foxglove live view', () => {
  it.each(['thread', 'main'] as const)(
    'speaks v1 under foxglove.sdk.v1: server info, channels, subscription, /tf at >= 60 Hz of board time (view on the %s thread)',
    async (placement) => {
      const live = await startView(placement);
      const c = connect(live.port, ['foxglove.sdk.v1']);
      await c.until(() => c.channels.length > 0);
      expect(c.ws.protocol).toBe('foxglove.sdk.v1');
      expect(c.serverInfo).toMatchObject({ op: 'serverInfo', capabilities: [] });
      expect(c.channels.map((x) => x.topic)).toEqual([...sceneChannels().map((x) => x.topic), LIVE_TICK_TOPIC]);
      const desc = c.channels[0]!;
      expect([desc.topic, desc.encoding, desc.schemaName, desc.schemaEncoding, desc.schema]).toEqual([
        '/robot_description',
        'cdr',
        'std_msgs/msg/String',
        'ros2msg',
        'string data',
      ]);
      expect(JSON.parse(c.channels.find((x) => x.topic === '/tf')!.schema).title).toBe('foxglove.FrameTransforms');
      c.subscribe();
      // The description was published before anyone subscribed: it is latched.
      await c.until(() => c.on(SCENE_TOPICS.description).length === 1);
      expect(readCdrString(c.on(SCENE_TOPICS.description)[0]!.data)).toBe(armUrdf(rig));

      // The view reads from the first row written after the subscription: write rows as the loop does, 20 ms of loop time at a time; wait for the view, then the client.
      const feed = feeder(live);
      await live.until(() => live.streaming);
      const t0 = rows[0]![F.t]!;
      while (feed.at < rows.length) {
        const end = rows[feed.at]![F.t]! + 0.02;
        let upTo = feed.at;
        while (upTo < rows.length && rows[upTo]![F.t]! < end) upTo++;
        await feed.write(upTo);
        await c.until(() => c.received.length === live.stats.sent);
      }
      const board = rows.at(-1)![F.t]! - t0;
      expect(board).toBeGreaterThan(2);
      const tf = c.on(SCENE_TOPICS.tf);
      expect(live.stats.dropped).toBe(0);
      expect(tf.length / board).toBeGreaterThanOrEqual(60);
      // One per 1/60 s slot of the loop's clock.
      expect(tf.length).toBeGreaterThanOrEqual(Math.floor(board * LIVE_RATE_HZ));
      // Stamps follow the loop's clock, spanning the run's board time to within a slot.
      const spanS = Number(tf.at(-1)!.ns - tf[0]!.ns) / 1e9;
      expect(Math.abs(spanS - board)).toBeLessThan(1 / LIVE_RATE_HZ + 0.001);
      const q = JSON.parse(String(tf.at(-1)!.data)).transforms.find(
        (t: { child_frame_id: string }) => t.child_frame_id === 'measured/link1',
      ).rotation;
      const slot = (r: Float64Array): number => Math.floor(r[F.t]! * LIVE_RATE_HZ + 1e-6);
      const lastDrawn = rows.find((r) => slot(r) === slot(rows.at(-1)!))!;
      // The live view writes its numbers with 9 decimals (src/viz/json-bytes.ts): the angle to ~1e-9 rad.
      expect(2 * Math.atan2(q.z, q.w)).toBeCloseTo(lastDrawn[F.q0]!, 8);
      expect(c.on(LIVE_TICK_TOPIC).length).toBe(tf.length);
    },
  );

  it('builds and sends only the topics a client subscribed to (as Foxglove subscribes to what its panels show)', async () => {
    const live = await startView();
    const c = connect(live.port, ['foxglove.sdk.v1']);
    await c.until(() => c.channels.length > 0);
    c.subscribe([SCENE_TOPICS.description, SCENE_TOPICS.tf, LIVE_TICK_TOPIC]);
    // The latched description arriving shows the subscription is in place.
    await c.until(() => c.on(SCENE_TOPICS.description).length === 1);
    const feed = feeder(live);
    await live.until(() => live.streaming);
    const sent0 = live.stats.sent;
    while (feed.at < 2000) {
      const end = rows[feed.at]![F.t]! + 0.02;
      let upTo = feed.at;
      while (upTo < 2000 && rows[upTo]![F.t]! < end) upTo++;
      await feed.write(upTo);
      await c.until(() => c.received.length === 1 + live.stats.sent - sent0);
    }
    expect(c.on(SCENE_TOPICS.tf).length).toBeGreaterThanOrEqual(60);
    expect(c.on(LIVE_TICK_TOPIC).length).toBe(c.on(SCENE_TOPICS.tf).length);
    expect(new Set(c.received.map((m) => m.topic))).toEqual(new Set([SCENE_TOPICS.description, SCENE_TOPICS.tf, LIVE_TICK_TOPIC]));
  });

  it.each(['thread', 'main'] as const)(
    'reads no row of the ring while nobody is subscribed to a channel that changes; starts at the newest row when someone is (view on the %s thread)',
    async (placement) => {
      const live = await startView(placement);
      const ring = createRing();
      const w = new RingWriter(ring);
      live.attach(ring);
      const c = connect(live.port, ['foxglove.sdk.v1']);
      await c.until(() => c.channels.length > 0);
      // The description alone (latched, sent once): nothing to build per frame.
      c.subscribe([SCENE_TOPICS.description]);
      await c.until(() => c.on(SCENE_TOPICS.description).length === 1);
      await live.until(() => live.stats.clients === 1 && live.stats.sent === 1);
      for (let i = 0; i < 1000; i++) w.write(rows[i]!);
      live.poll();
      expect(live.streaming).toBe(false);
      expect(live.rowsRead).toBe(0);
      // Someone wants /tf: the rows written meanwhile are passed over, the view reads from the next one on.
      c.subscribe([SCENE_TOPICS.description, SCENE_TOPICS.tf]);
      await live.until(() => live.streaming);
      for (let i = 1000; i < 1100; i++) w.write(rows[i]!);
      live.poll();
      await live.until(() => live.rowsRead === 100);
      await c.until(() => c.on(SCENE_TOPICS.tf).length >= 5);
      const q = JSON.parse(String(c.on(SCENE_TOPICS.tf)[0]!.data)).transforms.find(
        (t: { child_frame_id: string }) => t.child_frame_id === 'measured/link1',
      ).rotation;
      expect(2 * Math.atan2(q.z, q.w)).toBeCloseTo(rows[1000]![F.q0]!, 8);
      // The client goes: nothing is read again.
      c.ws.close();
      await live.until(() => live.stats.clients === 0);
      expect(live.streaming).toBe(false);
      for (let i = 1100; i < 1500; i++) w.write(rows[i]!);
      live.poll();
      expect(live.rowsRead).toBe(100);
    },
  );

  it('runs the view in a thread of its own (not the main thread), with the task id the run leaves at normal priority', async () => {
    const live = await startView('thread');
    if (process.platform !== 'linux') return;
    expect(live.tid).toBeGreaterThan(0);
    expect(live.tid).not.toBe(process.pid);
    expect(processThreads()).toContain(live.tid);
  });

  it('accepts the older foxglove.websocket.v1 and refuses a client that offers neither', async () => {
    const live = await startView();
    const old = connect(live.port, ['foxglove.websocket.v1']);
    await old.until(() => old.channels.length > 0);
    expect(old.ws.protocol).toBe('foxglove.websocket.v1');
    const none = connect(live.port, ['something.else']);
    await none.until(() => none.closed !== undefined);
    expect(none.channels).toEqual([]);
  });

  it(
    'drops frames for a client that stops reading; the reading client gets every one; publish never waits',
    async () => {
      const server = await FoxgloveServer.start('127.0.0.1', 0, sceneChannels());
      closers.push(() => server.close());
      server.publish(SCENE_TOPICS.description, new Uint8Array(8), 0n, true);
      const good = connect(server.port, ['foxglove.sdk.v1']);
      const stalled = connect(server.port, ['foxglove.sdk.v1']);
      for (const c of [good, stalled]) {
        await c.until(() => c.channels.length > 0);
        c.subscribe([SCENE_TOPICS.description, SCENE_TOPICS.tf]);
        // The latched description arriving shows the subscription is in place.
        await c.until(() => c.on(SCENE_TOPICS.description).length === 1);
      }
      // The stalled client reads nothing more: its socket is paused (a frozen Foxglove tab).
      (stalled.ws as unknown as { _socket: { pause(): void } })._socket.pause();
      const sent0 = server.stats.sent;
      const big = new Uint8Array(MAX_BUFFERED_BYTES);
      const frames = 200;
      for (let k = 0; k < frames; k++) {
        // Sent or dropped, publish returns at once: it never waits for a socket.
        server.publish(SCENE_TOPICS.tf, big, BigInt(k));
        await good.until(() => good.on(SCENE_TOPICS.tf).length === k + 1);
      }
      expect(good.on(SCENE_TOPICS.tf).map((m) => m.ns)).toEqual(Array.from({ length: frames }, (_, k) => BigInt(k)));
      // 50 MB for the stalled client: more than the kernel's socket buffers hold, so frames were dropped.
      expect(server.stats.dropped).toBeGreaterThan(0);
      expect(server.stats.sent - sent0 + server.stats.dropped).toBe(2 * frames);
    },
    hangGuardMs(30_000),
  );
});
