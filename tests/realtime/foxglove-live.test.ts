// `twolink run --mock --foxglove 0` in real time with Foxglove clients (protocol v1): one reads
// everything, one subscribes and then stops reading (a frozen tab), one leaves abruptly mid-run. The run ends as it would
// without them (done, exit 0, no dropped rows), the reading client saw the description and the arm's
// transforms in order; a taken port is refused before anything moves; another address warns.
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { BIN, lastJson, ROOT, twolink, type CliResult, whyExit } from '../helpers/cli.js';
import { FoxgloveTestClient } from '../helpers/foxglove-client.js';
import { spawnLiveChild } from '../../src/bench/live-child.js';

function start(args: string[]): { port: Promise<number>; done: Promise<CliResult> } {
  const c = spawnLiveChild(BIN, args, ROOT, ['--single-threaded-gc']);
  return { port: c.port, done: c.done };
}

describe('twolink run --foxglove', () => {
  it('serves the arm live; a client that stalls changes nothing in the run', async () => {
    const run = start(['run', '--rig', 'rigs/mock-arm.json', '--mock', '--traj', 'reach', '--traj', 'circle', '--json', '--foxglove', '0']);
    const port = await run.port;
    const reader = new FoxgloveTestClient(`ws://127.0.0.1:${port}`, ['foxglove.sdk.v1', 'foxglove.websocket.v1']);
    const stalled = new FoxgloveTestClient(`ws://127.0.0.1:${port}`, ['foxglove.websocket.v1']);
    for (const c of [reader, stalled]) {
      await c.until(() => c.channels.length > 0 || c.closed !== undefined);
      c.subscribe();
      await c.until(() => c.on('/robot_description').length === 1 || c.closed !== undefined);
    }
    (stalled.ws as unknown as { _socket: { pause(): void } })._socket.pause();
    // A third one comes, takes a few frames and goes away abruptly (a closed tab).
    const quitter = new FoxgloveTestClient(`ws://127.0.0.1:${port}`, ['foxglove.sdk.v1']);
    await quitter.until(() => quitter.channels.length > 0 || quitter.closed !== undefined);
    quitter.subscribe(['/tf']);
    await quitter.until(() => quitter.on('/tf').length >= 5 || quitter.closed !== undefined);
    quitter.ws.terminate();
    const r = await run.done;
    expect(r.code, whyExit(r)).toBe(0);
    const s = lastJson(r);
    expect(s.stop).toEqual({ kind: 'done' });
    expect(s.droppedRows ?? 0).toBe(0);
    await reader.until(() => reader.closed !== undefined);
    expect(reader.ws.protocol).toBe('foxglove.sdk.v1');
    expect(String(reader.on('/robot_description')[0]!.data)).toContain('<robot name=');
    const tf = reader.on('/tf');
    expect(tf.length).toBeGreaterThan(10);
    for (let i = 1; i < tf.length; i++) expect(tf[i]!.ns).toBeGreaterThan(tf[i - 1]!.ns);
    stalled.ws.terminate();
  });

  it('refuses a taken port before anything moves (exit 2, the port named)', async () => {
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', () => r()));
    const port = (blocker.address() as { port: number }).port;
    try {
      const r = await twolink(['run', '--rig', 'rigs/mock-arm.json', '--mock', '--traj', 'reach', '--json', '--foxglove', String(port)]);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`--foxglove ${port}: cannot listen on 127.0.0.1:${port}`);
      expect(r.stdout).toBe('');
    } finally {
      blocker.close();
    }
  });

  it('warns when it listens on another address than loopback; --foxglove-host alone is a usage error', async () => {
    const r = await twolink([
      'run',
      '--rig',
      'rigs/mock-arm.json',
      '--mock',
      '--traj',
      'point',
      '--json',
      '--max-seconds',
      '0.5',
      '--foxglove',
      '0',
      '--foxglove-host',
      '0.0.0.0',
    ]);
    expect(r.stderr).toContain('WARNING: the Foxglove live view listens on 0.0.0.0, not loopback');
    const bad = await twolink(['run', '--rig', 'rigs/mock-arm.json', '--mock', '--foxglove-host', '0.0.0.0']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--foxglove-host goes with --foxglove');
  });
});
